//! Builds a structurally valid pi session from fuzzer bytes: a message array
//! in pi's shapes (user, assistant with text/thinking/toolCall blocks,
//! toolResult, per-batch summary custom messages, synthetic compressed-chain
//! users), an indexer state and a config that refer to the same ids and
//! timestamps, and a boundary, in the shapes of either dialect (2.9.1 keys
//! records by occurrence, `id@timestamp`, and has no thinking strip). A small
//! share of fields get odd values (numbers or null as ids, strings as
//! contents, lone surrogates, ...), the way the hostile vectors do.

use arbitrary::{Result, Unstructured};
use condense_native::Dialect;

/// A JSON value as the generator writes it.
#[derive(Debug, Clone)]
pub enum J {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    /// A token written as it is: odd number spellings, escapes.
    Raw(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    pub fn s(s: impl Into<String>) -> J {
        J::Str(s.into())
    }

    pub fn write(&self, out: &mut String, spaced: bool) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Num(n) => {
                if n.is_finite() && n.fract() == 0.0 && n.abs() < 1e15 {
                    // As JSON.stringify writes it (-0 as 0).
                    out.push_str(&format!("{}", *n as i64));
                } else if n.is_finite() {
                    // Rust's shortest round-trip spelling: valid JSON, and
                    // the same as JavaScript's except for exponents.
                    out.push_str(&format!("{n:?}"));
                } else {
                    out.push_str("null");
                }
            }
            J::Str(s) => write_str(out, s),
            J::Raw(r) => out.push_str(r),
            J::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(if spaced { ", " } else { "," });
                    }
                    v.write(out, spaced);
                }
                out.push(']');
            }
            J::Obj(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(if spaced { ", " } else { "," });
                    }
                    write_str(out, k);
                    out.push_str(if spaced { ": " } else { ":" });
                    v.write(out, spaced);
                }
                out.push('}');
            }
        }
    }

    pub fn to_json(&self, spaced: bool) -> String {
        let mut out = String::new();
        self.write(&mut out, spaced);
        out
    }
}

fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

const TOOLS: &[&str] = &[
    "read",
    "bash",
    "edit",
    "write",
    "context_tree_query",
    "Task",
    "grep",
];
const PATHS: &[&str] = &[
    "src/a.ts",
    "src/lib/b.rs",
    "docs\\notes.md",
    "a/b/c/d.md",
    "x{a,b}.ts",
    "src/\u{1F600}.ts",
    "",
    "README.md",
];
const GLOBS: &[&str] = &[
    "**/*.md",
    "src/?.rs",
    "src/**",
    "*.ts",
    "x{a,b}.ts",
    "**/*\u{1F600}.ts",
    "",
    "***",
    "^$.ts",
];
const WORDS: &[&str] = &[
    "Read the file",
    "Running tests",
    "caf\u{e9}",
    "emoji \u{1F600}",
    "line\nbreak",
    "quote \" and \\ backslash",
    "tab\tcontrol\u{1}",
    "<compressed-chain id=\"b1\" tools=\"t1\">",
    "see {b1} and {b2} and {b01} and $& $1",
    "\u{2028}sep",
    "",
];
/// Odd tokens: spellings JSON.stringify would not write and lone surrogates.
const RAW_TOKENS: &[&str] = &[
    "1.0",
    "-0",
    "1E400",
    "1e21",
    "5e-324",
    "0.000001",
    "1.5e-7",
    "\"\\ud800\"",
    "\"a\\udc00b\"",
    "\"\\ud83d\\ude00\"",
    "\"\\u00e9\\/\"",
    "\"\\ud800\\ud800\"",
    "\"\\udbf6\\udc00\"",
    "\"\\u0000\"",
];

pub struct Gen<'a, 'b> {
    pub u: &'a mut Unstructured<'b>,
    /// Whether this case gets odd values at all (most cases are clean, so
    /// that most calls reach every phase instead of a throw site).
    hostile: bool,
    dialect: Dialect,
}

impl<'a, 'b> Gen<'a, 'b> {
    pub fn new(u: &'a mut Unstructured<'b>, hostile: bool, dialect: Dialect) -> Self {
        Gen {
            u,
            hostile,
            dialect,
        }
    }

    pub fn pct(&mut self, p: u8) -> Result<bool> {
        Ok(self.u.int_in_range(0u8..=99)? < p)
    }

    pub fn small(&mut self, max: u32) -> Result<u32> {
        self.u.int_in_range(0..=max)
    }

    /// An odd value here, `p` percent of the time in hostile cases.
    fn odd(&mut self, p: u8) -> Result<bool> {
        Ok(self.hostile && self.pct(p)?)
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> Result<T> {
        Ok(*self.u.choose(xs)?)
    }

    /// Any JSON value, shallow.
    pub fn any(&mut self, depth: u32) -> Result<J> {
        let pick = self.small(if depth == 0 { 5 } else { 7 })?;
        Ok(match pick {
            0 => J::Null,
            1 => J::Bool(self.u.arbitrary()?),
            2 => J::Num(self.number()?),
            3 => J::Str(self.text()?),
            4 => J::Raw(self.pick(RAW_TOKENS)?.to_string()),
            5 => J::Str(self.u.arbitrary()?),
            6 => {
                let n = self.small(4)?;
                J::Arr((0..n).map(|_| self.any(depth - 1)).collect::<Result<_>>()?)
            }
            _ => {
                let n = self.small(4)?;
                let mut entries = Vec::new();
                for _ in 0..n {
                    let k = self.key()?;
                    entries.push((k, self.any(depth - 1)?));
                }
                J::Obj(entries)
            }
        })
    }

    fn key(&mut self) -> Result<String> {
        Ok(match self.small(9)? {
            0 => "__proto__".into(),
            1 => "10".into(),
            2 => "2".into(),
            3 => "role".into(),
            4 => "content".into(),
            5 => "type".into(),
            6 => self.u.arbitrary()?,
            _ => format!("k{}", self.small(5)?),
        })
    }

    fn number(&mut self) -> Result<f64> {
        Ok(match self.small(5)? {
            0 => self.small(40)? as f64,
            1 => -(self.small(5)? as f64),
            2 => self.small(40)? as f64 + 0.5,
            3 => 1e21,
            4 => 1760153610465.0 + self.small(1000)? as f64,
            _ => {
                let f: f64 = self.u.arbitrary()?;
                if f.is_finite() {
                    f
                } else {
                    0.0
                }
            }
        })
    }

    fn text(&mut self) -> Result<String> {
        let mut s = String::new();
        for _ in 0..self.small(3)? {
            s.push_str(self.pick(WORDS)?);
        }
        Ok(s)
    }

    /// A string value, sometimes spelled oddly (escapes, lone surrogates).
    fn text_j(&mut self) -> Result<J> {
        Ok(if self.odd(8)? {
            J::Raw(self.pick(&RAW_TOKENS[7..])?.to_string())
        } else {
            J::Str(self.text()?)
        })
    }

    /// A long string, to reach errorPurge.minArgChars.
    fn long(&mut self) -> Result<String> {
        let n = self.small(700)? as usize;
        let c = self.pick(&['x', '\u{e9}', '\u{1F600}', '"', '\n'])?;
        Ok(std::iter::repeat_n(c, n).collect())
    }

    /// A tool-call id: mostly from a small pool so that messages and state
    /// meet, sometimes a number, null or an odd string.
    fn id(&mut self) -> Result<J> {
        if !self.odd(25)? {
            return Ok(J::s(format!("call_{}", self.small(7)?)));
        }
        Ok(match self.small(19)? {
            0..=14 => J::s(format!("call_{}", self.small(7)?)),
            15 => J::Num(self.small(7)? as f64),
            16 => J::Null,
            17 => J::s(self.pick(&["__proto__", "constructor", "", "t1", "toString"])?),
            18 => J::Raw(self.pick(&RAW_TOKENS[7..])?.to_string()),
            _ => self.any(1)?,
        })
    }

    /// A state key: a bare id, or under 2.9.1 often an occurrence key
    /// `call_N@T` whose timestamp the generated messages can carry.
    pub fn id_key(&mut self) -> Result<String> {
        Ok(match self.small(9)? {
            0 if self.hostile => self
                .pick(&["__proto__", "constructor", "", "5", "t1"])?
                .to_string(),
            1..=5 if self.dialect == Dialect::V2_9 => {
                format!("call_{}@{}", self.small(7)?, self.small(30)?)
            }
            _ => format!("call_{}", self.small(7)?),
        })
    }

    /// An indexer record for `key`; under 2.9.1 it names its id (and the
    /// result timestamp of an occurrence key), as `keysOf` reads them.
    pub fn record(&mut self, key: &str) -> Result<J> {
        let mut r = Vec::new();
        if self.dialect == Dialect::V2_9 {
            let (id, ts) = match key.rsplit_once('@') {
                Some((id, ts)) => (id, ts.parse::<f64>().ok()),
                None => (key, None),
            };
            r.push(("toolCallId".into(), J::s(id)));
            if let Some(ts) = ts {
                r.push(("resultTimestamp".into(), J::Num(ts)));
            }
        }
        let name = J::s(self.pick(TOOLS)?);
        self.field(&mut r, "toolName", name, 3)?;
        let args = self.args()?;
        self.field(&mut r, "args", args, 0)?;
        if self.pct(30)? {
            r.push((
                "spillPath".into(),
                J::s(format!("/tmp/spill/{}.txt", self.small(9)?)),
            ));
            if self.u.arbitrary()? {
                let b = if self.pct(20)? {
                    J::Null
                } else {
                    J::Num(self.number()?)
                };
                r.push(("spillBytes".into(), b));
            }
            if self.u.arbitrary()? {
                let p = self.text_j()?;
                r.push(("resultPreview".into(), p));
            }
        }
        Ok(if self.odd(3)? {
            self.any(1)?
        } else {
            J::Obj(r)
        })
    }

    fn ts(&mut self) -> Result<J> {
        if !self.odd(20)? {
            return Ok(J::Num(self.small(30)? as f64));
        }
        Ok(match self.small(19)? {
            0..=15 => J::Num(self.small(30)? as f64),
            16 => J::Null,
            17 => J::s(self.small(30)?.to_string()),
            18 => J::Num(self.small(30)? as f64 + 0.5),
            _ => self.any(1)?,
        })
    }

    /// Pushes `key: value` unless the field is left out (one time in `skip`).
    fn field(
        &mut self,
        obj: &mut Vec<(String, J)>,
        key: &str,
        value: J,
        odd_pct: u8,
    ) -> Result<()> {
        if self.odd(3)? {
            return Ok(());
        }
        let v = if self.odd(odd_pct)? {
            self.any(2)?
        } else {
            value
        };
        obj.push((key.to_string(), v));
        if self.odd(2)? {
            // A duplicate key: JSON.parse keeps the last value.
            obj.push((key.to_string(), self.any(1)?));
        }
        Ok(())
    }

    fn text_block(&mut self) -> Result<J> {
        let mut o = vec![("type".into(), J::s("text"))];
        let t = self.text_j()?;
        self.field(&mut o, "text", t, 3)?;
        Ok(J::Obj(o))
    }

    fn args(&mut self) -> Result<J> {
        if self.odd(5)? {
            return self.any(2);
        }
        let mut o = Vec::new();
        if self.u.arbitrary()? {
            let p = if self.odd(10)? {
                self.any(1)?
            } else {
                J::s(self.pick(PATHS)?)
            };
            o.push(("path".into(), p));
        }
        if self.u.arbitrary()? {
            o.push(("command".into(), J::s(self.long()?)));
        }
        if self.pct(10)? {
            o.push(("_purged".into(), J::s("<purged-errored-args size=\"48\"/>")));
        }
        Ok(J::Obj(o))
    }

    fn assistant_block(&mut self) -> Result<J> {
        let kinds = if self.hostile { 9 } else { 8 };
        Ok(match self.small(kinds)? {
            0..=2 => self.text_block()?,
            3..=5 => {
                let mut o = vec![("type".into(), J::s("thinking"))];
                let t = self.text_j()?;
                self.field(&mut o, "thinking", t, 2)?;
                if self.u.arbitrary()? {
                    o.push(("thinkingSignature".into(), J::s("c2lnbmF0dXJl==")));
                }
                if self.pct(10)? {
                    o.push(("redacted".into(), J::Bool(true)));
                }
                J::Obj(o)
            }
            6..=8 => {
                let mut o = vec![("type".into(), J::s("toolCall"))];
                let id = self.id()?;
                self.field(&mut o, "id", id, 0)?;
                let name = J::s(self.pick(TOOLS)?);
                self.field(&mut o, "name", name, 2)?;
                let a = self.args()?;
                self.field(&mut o, "arguments", a, 0)?;
                J::Obj(o)
            }
            _ => match self.small(3)? {
                0 => J::Null,
                1 => J::Obj(vec![("type".into(), J::s("Thinking"))]),
                _ => self.any(2)?,
            },
        })
    }

    fn blocks(&mut self, max: u32, mut block: impl FnMut(&mut Self) -> Result<J>) -> Result<J> {
        let n = self.small(max)?;
        Ok(J::Arr((0..n).map(|_| block(self)).collect::<Result<_>>()?))
    }

    pub fn message(&mut self) -> Result<J> {
        let mut o: Vec<(String, J)> = Vec::new();
        match self.small(19)? {
            0..=3 => {
                o.push(("role".into(), J::s("user")));
                let content = match self.small(5)? {
                    0 | 1 => self.text_j()?,
                    2 => J::Arr(vec![J::Obj(vec![
                        ("type".into(), J::s("text")),
                        (
                            "text".into(),
                            J::s(format!(
                                "<compressed-chain id=\"b{}\" tools=\"t1\">\nold\n</compressed-chain>",
                                self.small(3)?
                            )),
                        ),
                    ])]),
                    _ => self.blocks(3, |g| g.text_block())?,
                };
                self.field(&mut o, "content", content, 4)?;
                let ts = self.ts()?;
                self.field(&mut o, "timestamp", ts, 0)?;
            }
            4..=9 => {
                o.push(("role".into(), J::s("assistant")));
                let content = self.blocks(4, |g| g.assistant_block())?;
                self.field(&mut o, "content", content, 3)?;
                o.push(("api".into(), J::s("anthropic-messages")));
                o.push(("provider".into(), J::s("anthropic")));
                o.push(("model".into(), J::s("claude-sonnet-4-5")));
                o.push((
                    "usage".into(),
                    J::Obj(vec![
                        ("input".into(), J::Num(self.small(90000)? as f64)),
                        ("output".into(), J::Num(self.small(4000)? as f64)),
                        (
                            "cost".into(),
                            J::Obj(vec![("total".into(), J::Num(0.10121775))]),
                        ),
                    ]),
                ));
                let stop = J::s(self.pick(&["stop", "toolUse", "error"])?);
                o.push(("stopReason".into(), stop));
                let ts = self.ts()?;
                self.field(&mut o, "timestamp", ts, 0)?;
            }
            10..=15 => {
                o.push(("role".into(), J::s("toolResult")));
                let id = self.id()?;
                self.field(&mut o, "toolCallId", id, 0)?;
                let name = J::s(self.pick(TOOLS)?);
                self.field(&mut o, "toolName", name, 3)?;
                let content = self.blocks(3, |g| {
                    if g.pct(15)? {
                        Ok(J::Obj(vec![
                            ("type".into(), J::s("image")),
                            ("data".into(), J::s("iVBORw0KGgo=")),
                            ("mimeType".into(), J::s("image/png")),
                        ]))
                    } else {
                        g.text_block()
                    }
                })?;
                self.field(&mut o, "content", content, 3)?;
                if self.pct(20)? {
                    o.push((
                        "details".into(),
                        J::Obj(vec![("diff".into(), J::s(self.text()?))]),
                    ));
                }
                let err = J::Bool(self.pct(40)?);
                self.field(&mut o, "isError", err, 5)?;
                let ts = self.ts()?;
                self.field(&mut o, "timestamp", ts, 0)?;
            }
            16 | 17 => {
                o.push(("role".into(), J::s("custom")));
                let ct = J::s(if self.pct(85)? {
                    "context-prune-summary"
                } else {
                    "other"
                });
                o.push(("customType".into(), ct));
                o.push(("content".into(), J::s(self.text()?)));
                o.push(("display".into(), J::Bool(self.u.arbitrary()?)));
                let refs = self.blocks(3, |g| {
                    let mut r = Vec::new();
                    let id = g.id()?;
                    g.field(&mut r, "toolCallId", id, 0)?;
                    r.push(("shortId".into(), J::s(format!("t{}", g.small(5)?))));
                    Ok(J::Obj(r))
                })?;
                let details = J::Obj(vec![("toolCallRefs".into(), refs)]);
                self.field(&mut o, "details", details, 6)?;
                let ts = self.ts()?;
                self.field(&mut o, "timestamp", ts, 0)?;
            }
            18 if self.hostile => return self.any(2),
            _ => {
                o.push((
                    "role".into(),
                    J::s(self.pick(&["system", "bashExecution", "User", ""])?),
                ));
                o.push(("content".into(), self.any(2)?));
            }
        }
        if self.odd(10)? {
            // Unknown fields, integer-like keys included (they sort first).
            let k = self.key()?;
            let v = self.any(2)?;
            o.push((k, v));
        }
        Ok(J::Obj(o))
    }

    fn id_list(&mut self, max: u32) -> Result<J> {
        self.blocks(max, |g| g.id())
    }

    pub fn state(&mut self) -> Result<J> {
        if self.odd(3)? {
            return self.any(3);
        }
        let mut o = Vec::new();
        let n = self.small(6)?;
        let mut records = Vec::new();
        for _ in 0..n {
            let key = self.id_key()?;
            let rec = self.record(&key)?;
            records.push((key, rec));
        }
        self.field(&mut o, "records", J::Obj(records), 2)?;
        let mut dedup = Vec::new();
        for _ in 0..self.small(2)? {
            let k = self.id_key()?;
            let v = if self.pct(20)? {
                J::s("")
            } else {
                J::s(self.id_key()?)
            };
            dedup.push((k, v));
        }
        self.field(&mut o, "dedupAliases", J::Obj(dedup), 2)?;
        let mut short = Vec::new();
        let mut aliases = Vec::new();
        for _ in 0..self.small(4)? {
            let k = self.id_key()?;
            let t = format!("t{}", self.small(5)?);
            if self.u.arbitrary()? {
                aliases.push((t.clone(), J::s(k.clone())));
            }
            short.push((k, if self.pct(5)? { J::s("") } else { J::s(t) }));
        }
        self.field(&mut o, "shortRefs", J::Obj(short), 2)?;
        self.field(&mut o, "refAliases", J::Obj(aliases), 2)?;
        let chains = self.blocks(3, |g| {
            let mut c = Vec::new();
            let block = J::s(format!("b{}", g.small(3)?));
            g.field(&mut c, "blockId", block, 3)?;
            let start = g.ts()?;
            g.field(&mut c, "startUserTimestamp", start, 0)?;
            let dropped = g.id_list(4)?;
            g.field(&mut c, "droppedToolCallIds", dropped, 2)?;
            if g.dialect == Dialect::V2_9 && g.u.arbitrary()? {
                let keys = g.blocks(3, |g| Ok(J::s(g.id_key()?)))?;
                c.push(("droppedOccurrenceKeys".into(), keys));
            }
            if g.u.arbitrary()? {
                let p = g.id_list(2)?;
                c.push(("protectedToolCallIds".into(), p));
            }
            let fin = if g.pct(30)? { J::Null } else { g.ts()? };
            g.field(&mut c, "finalAssistantTimestamp", fin, 0)?;
            let refs = g.blocks(3, |g| {
                Ok(if g.odd(10)? {
                    g.any(1)?
                } else {
                    J::s(format!("t{}", g.small(5)?))
                })
            })?;
            g.field(&mut c, "toolRefs", refs, 2)?;
            let at = g.ts()?;
            g.field(&mut c, "compressedAt", at, 0)?;
            if g.u.arbitrary()? {
                let t = if g.pct(15)? { J::Null } else { g.text_j()? };
                c.push(("rangeSummaryText".into(), t));
            }
            Ok(J::Obj(c))
        })?;
        self.field(&mut o, "chains", chains, 2)?;
        let bodies = self.blocks(3, |g| {
            let ids = if g.dialect == Dialect::V2_9 && g.u.arbitrary()? {
                g.blocks(3, |g| Ok(J::s(g.id_key()?)))?
            } else {
                g.id_list(3)?
            };
            let text = g.text_j()?;
            Ok(J::Obj(vec![
                ("toolCallIds".into(), ids),
                ("text".into(), text),
            ]))
        })?;
        self.field(&mut o, "summaryBodies", bodies, 2)?;
        Ok(J::Obj(o))
    }

    fn num_like(&mut self) -> Result<J> {
        if !self.odd(30)? {
            return Ok(J::Num(self.small(6)? as f64));
        }
        Ok(match self.small(9)? {
            0..=6 => J::Num(self.small(6)? as f64),
            7 => J::s(self.small(6)?.to_string()),
            8 => J::Num(self.small(6)? as f64 + 0.5),
            _ => self.any(1)?,
        })
    }

    fn truthy(&mut self) -> Result<J> {
        Ok(if !self.odd(10)? {
            J::Bool(self.pct(80)?)
        } else {
            self.any(1)?
        })
    }

    pub fn config(&mut self) -> Result<J> {
        if self.odd(3)? {
            return self.any(3);
        }
        let mut o = Vec::new();
        if self.pct(80)? {
            let mut s = vec![("enabled".into(), self.truthy()?)];
            let f = self.truthy()?;
            self.field(&mut s, "stripFinalAssistantThinking", f, 0)?;
            o.push(("chainCompression".into(), J::Obj(s)));
        }
        if self.pct(80)? {
            let mut s = vec![("enabled".into(), self.truthy()?)];
            let c = self.num_like()?;
            self.field(&mut s, "cooldownTurns", c, 0)?;
            let m = if self.u.arbitrary()? {
                J::Num(self.small(600)? as f64)
            } else {
                self.num_like()?
            };
            self.field(&mut s, "minArgChars", m, 0)?;
            o.push(("errorPurge".into(), J::Obj(s)));
        }
        // 2.9.1 has no thinking strip; a hostile case may pass one anyway
        // (a typed error).
        let thinking = match self.dialect {
            Dialect::V2_4 => self.pct(80)?,
            Dialect::V2_9 => self.odd(5)?,
        };
        if thinking {
            let mut s = vec![("enabled".into(), self.truthy()?)];
            let k = self.num_like()?;
            self.field(&mut s, "keepLastTurns", k, 0)?;
            o.push(("thinkingStrip".into(), J::Obj(s)));
        }
        if self.pct(70)? {
            let tools = self.blocks(2, |g| Ok(J::s(g.pick(TOOLS)?)))?;
            let globs = self.blocks(3, |g| Ok(J::s(g.pick(GLOBS)?)))?;
            let mut s = Vec::new();
            self.field(&mut s, "protectedTools", tools, 2)?;
            self.field(&mut s, "protectedPaths", globs, 2)?;
            o.push(("protection".into(), J::Obj(s)));
        }
        let g = self.num_like()?;
        self.field(&mut o, "recoveryGraceTurns", g, 0)?;
        Ok(J::Obj(o))
    }

    /// A boundary argument (2.4.3's `thinkingBoundaryTimestamp`), odd
    /// numbers included.
    pub fn boundary(&mut self) -> Result<Option<f64>> {
        Ok(match self.small(9)? {
            0..=4 => None,
            5..=7 => Some(self.small(30)? as f64),
            8 => Some(self.number()?),
            _ => Some(self.pick(&[f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -0.0])?),
        })
    }
}

/// One generated call.
#[derive(Debug)]
pub struct Case {
    pub dialect: Dialect,
    pub messages: String,
    pub state: String,
    pub config: String,
    pub boundary: Option<f64>,
}

impl Case {
    pub fn build(data: &[u8]) -> Result<Case> {
        let mut u = Unstructured::new(data);
        let hostile = u.int_in_range(0u8..=99)? < 40;
        let dialect = if u.arbitrary()? {
            Dialect::V2_9
        } else {
            Dialect::V2_4
        };
        let mut g = Gen::new(&mut u, hostile, dialect);
        let spaced = g.pct(10)?;
        let n = g.small(40)?;
        let messages = J::Arr((0..n).map(|_| g.message()).collect::<Result<_>>()?);
        let state = g.state()?;
        let config = g.config()?;
        let boundary = g.boundary()?;
        Ok(Case {
            dialect,
            messages: messages.to_json(spaced),
            state: state.to_json(false),
            config: config.to_json(false),
            boundary,
        })
    }
}
