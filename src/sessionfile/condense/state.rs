//! pi-condense's state rebuilt from its entries on a branch (SESSIONS.md
//! B.3 for 2.4.3, B.4 for 2.9.1, B.5 for the frontier), applied one entry at
//! a time in branch order so a replay can advance it with the path. The
//! dedup-alias pass, which the reference runs after the whole branch, is
//! applied when the state is read, over the aliases seen so far: that is
//! what a rebuild at that point of the branch gives. Where the reference
//! throws, `apply` returns a typed error naming the line.

use std::borrow::Cow;

use super::map::JsMap;
use super::Dialect;
use crate::json::tape::Kind;
use crate::json::view::Value;
use crate::sessionfile::error::{Result, SessionError};
use crate::sessionfile::file::Entry;
use crate::sessionfile::key::JsVal;

pub const CUSTOM_SUMMARY: &str = "context-prune-summary";
pub const CUSTOM_INDEX: &str = "context-prune-index";
pub const CUSTOM_DEDUP_ALIAS: &str = "context-prune-dedup-alias";
pub const CUSTOM_CHAIN: &str = "context-prune-chain";
pub const CUSTOM_FRONTIER: &str = "context-prune-frontier";

/// A summary body: the keys of its refs and its text (canonical text).
#[derive(Clone, Debug)]
pub struct SummaryBody<'s> {
    pub tool_call_ids: Vec<JsVal<'s>>,
    pub text: Box<[u8]>,
}

/// The state in force after the entries applied so far.
#[derive(Clone)]
pub struct CondenseState<'s> {
    dialect: Dialect,
    records: JsMap<'s, Value<'s>>,
    /// `shortId -> key`, as summaries registered them.
    ref_aliases: JsMap<'s, JsVal<'s>>,
    /// `key -> shortId`, before the alias pass.
    short_refs: JsMap<'s, JsVal<'s>>,
    bodies: Vec<SummaryBody<'s>>,
    /// Keyed by `startUserTimestamp`.
    chains: JsMap<'s, Value<'s>>,
    /// Dedup-alias pairs `(new key, original key)` in branch order.
    aliases: Vec<(JsVal<'s>, JsVal<'s>)>,
    /// The `data` of the frontier entry in force.
    frontier: Option<Value<'s>>,
    next_short_ref: f64,
    version: u64,
}

/// `occKey(id, ts)` of 2.9.1: the id itself when `ts` is undefined, else
/// the template string `${id}@${ts}`.
pub fn occurrence_key<'s>(id: JsVal<'s>, ts: JsVal<'s>) -> JsVal<'s> {
    if ts.is_undefined() {
        return id;
    }
    let mut s = Vec::new();
    id.write_to_string(&mut s);
    s.push(b'@');
    ts.write_to_string(&mut s);
    JsVal::Text(s.into_boxed_slice())
}

fn field<'s>(v: Value<'s>, key: &str) -> JsVal<'s> {
    JsVal::of(v.get(key))
}

/// A ref as the reference holds it: `{shortId, toolCallId, resultTimestamp?}`.
struct Ref<'s> {
    short_id: JsVal<'s>,
    tool_call_id: JsVal<'s>,
    result_timestamp: JsVal<'s>,
}

impl<'s> CondenseState<'s> {
    pub fn new(dialect: Dialect) -> Self {
        CondenseState {
            dialect,
            records: JsMap::default(),
            ref_aliases: JsMap::default(),
            short_refs: JsMap::default(),
            bodies: Vec::new(),
            chains: JsMap::default(),
            aliases: Vec::new(),
            frontier: None,
            next_short_ref: 1.0,
            version: 0,
        }
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Changes whenever an applied entry changed the state or the frontier.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Applies one branch entry (entries of other kinds change nothing).
    pub fn apply(&mut self, entry: Entry<'s>) -> Result<()> {
        if entry.is("custom") {
            if entry.custom_type_is(CUSTOM_INDEX) {
                self.index_entry(entry)?;
            } else if entry.custom_type_is(CUSTOM_CHAIN) {
                if let Some(data) = entry.data() {
                    let start = data.get("startUserTimestamp");
                    if data.get("blockId").is_some_and(|b| b.truthy())
                        && start.is_some_and(|s| s.kind() == Kind::Number)
                    {
                        self.chains.set(JsVal::of(start), data);
                        self.version += 1;
                    }
                }
            } else if entry.custom_type_is(CUSTOM_DEDUP_ALIAS) {
                if let Some(data) = entry.data() {
                    let new = field(data, "newToolCallId");
                    let original = field(data, "originalToolCallId");
                    if new.truthy() && original.truthy() {
                        self.aliases.push((
                            self.key(new, field(data, "newResultTimestamp")),
                            self.key(original, field(data, "originalResultTimestamp")),
                        ));
                        self.version += 1;
                    }
                }
            } else if entry.custom_type_is(CUSTOM_FRONTIER) {
                if let Some(data) = entry.data() {
                    if data.truthy()
                        && data
                            .get("lastAttemptedToolCallId")
                            .is_some_and(|v| v.truthy())
                    {
                        self.frontier = Some(data);
                        self.version += 1;
                    }
                }
            }
        } else if entry.is("custom_message") && entry.custom_type_is(CUSTOM_SUMMARY) {
            self.summary_entry(entry)?;
        }
        Ok(())
    }

    fn index_entry(&mut self, entry: Entry<'s>) -> Result<()> {
        let data = entry.data();
        let backfilled = match self.dialect {
            Dialect::V2_4 => false,
            Dialect::V2_9 => {
                let Some(d) = data.filter(|d| !d.is_null()) else {
                    return Err(SessionError::at(
                        entry.line,
                        "context-prune-index entry without data: pi-condense 2.9.1 throws rebuilding its state",
                    ));
                };
                d.get("backfilled").is_some_and(|b| b.kind() == Kind::True)
            }
        };
        let Some(data) = data else {
            return Ok(());
        };
        if let Some(calls) = data
            .get("toolCalls")
            .filter(|c| data.truthy() && c.is_array())
        {
            for (i, call) in calls.elements().enumerate() {
                if call.is_null() {
                    return Err(SessionError::at(
                        entry.line,
                        format!("context-prune-index toolCalls[{i}] is null: pi-condense throws rebuilding its state"),
                    ));
                }
                let key = self.key(field(call, "toolCallId"), field(call, "resultTimestamp"));
                self.records.set(key, call);
                if !backfilled {
                    let hashed = call.get("contentHash").is_some_and(|h| !h.is_null());
                    let strings = call
                        .get("toolName")
                        .is_some_and(|t| t.kind() == Kind::String)
                        && call
                            .get("resultText")
                            .is_some_and(|t| t.kind() == Kind::String);
                    if !hashed && !strings {
                        return Err(SessionError::at(
                            entry.line,
                            format!(
                                "context-prune-index toolCalls[{i}] has no contentHash and no string toolName and resultText: pi-condense throws hashing it"
                            ),
                        ));
                    }
                }
            }
            self.version += 1;
        }
        if backfilled {
            if let Some(refs) = data.get("refs").filter(|r| r.is_array()) {
                let mut raw = Vec::new();
                for (i, r) in refs.elements().enumerate() {
                    if r.is_null() {
                        return Err(SessionError::at(
                            entry.line,
                            format!("backfilled context-prune-index refs[{i}] is null: pi-condense 2.9.1 throws rebuilding its state"),
                        ));
                    }
                    raw.push(Ref {
                        short_id: field(r, "shortId"),
                        tool_call_id: field(r, "toolCallId"),
                        result_timestamp: field(r, "resultTimestamp"),
                    });
                }
                self.register(&raw);
                self.version += 1;
            }
        }
        Ok(())
    }

    /// `registerSummaryRefs`.
    fn register(&mut self, refs: &[Ref<'s>]) {
        for r in refs {
            if !r.short_id.truthy() || !r.tool_call_id.truthy() {
                continue;
            }
            let key = self.key_of(r);
            if r.short_id.key() != key.key() {
                self.ref_aliases.set(r.short_id.clone(), key.clone());
                self.short_refs.set(key, r.short_id.clone());
            }
            let s = r.short_id.to_js_string();
            if s.len() > 1 && s[0] == b't' && s[1..].iter().all(u8::is_ascii_digit) {
                let n: f64 = std::str::from_utf8(&s[1..])
                    .ok()
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(0.0);
                self.next_short_ref = self.next_short_ref.max(n + 1.0);
            }
        }
    }

    fn key_of(&self, r: &Ref<'s>) -> JsVal<'s> {
        self.key(r.tool_call_id.clone(), r.result_timestamp.clone())
    }

    /// The key of a tool call in this dialect: its id (2.4.3), or
    /// [`occurrence_key`] with its result's timestamp (2.9.1).
    fn key(&self, id: JsVal<'s>, ts: JsVal<'s>) -> JsVal<'s> {
        match self.dialect {
            Dialect::V2_4 => id,
            Dialect::V2_9 => occurrence_key(id, ts),
        }
    }

    /// `normalizeSummaryToolCallRefs(details)`.
    fn summary_refs(&self, details: Option<Value<'s>>) -> Vec<Ref<'s>> {
        let Some(d) = details.filter(|d| d.truthy() && d.is_typeof_object()) else {
            return Vec::new();
        };
        if let Some(list) = d.get("toolCallRefs").filter(|l| l.is_array()) {
            return list
                .elements()
                .filter(|r| {
                    r.truthy()
                        && r.get("shortId").is_some_and(|s| s.kind() == Kind::String)
                        && r.get("toolCallId")
                            .is_some_and(|s| s.kind() == Kind::String)
                })
                .map(|r| Ref {
                    short_id: field(r, "shortId"),
                    tool_call_id: field(r, "toolCallId"),
                    result_timestamp: match (self.dialect, r.get("resultTimestamp")) {
                        (Dialect::V2_9, Some(ts)) if ts.kind() == Kind::Number => JsVal::Value(ts),
                        _ => JsVal::Undefined,
                    },
                })
                .collect();
        }
        if let Some(list) = d.get("toolCallIds").filter(|l| l.is_array()) {
            return list
                .elements()
                .filter(|id| id.kind() == Kind::String)
                .map(|id| Ref {
                    short_id: JsVal::Value(id),
                    tool_call_id: JsVal::Value(id),
                    result_timestamp: JsVal::Undefined,
                })
                .collect();
        }
        Vec::new()
    }

    fn summary_entry(&mut self, entry: Entry<'s>) -> Result<()> {
        let refs = self.summary_refs(entry.get("details"));
        self.register(&refs);
        let text: Cow<'s, [u8]> = match entry.get("content") {
            Some(c) if c.kind() == Kind::String => c.string().unwrap_or_default(),
            Some(c) if c.is_array() => {
                let mut out = Vec::new();
                let mut first = true;
                for (i, block) in c.elements().enumerate() {
                    if block.is_null() {
                        return Err(SessionError::at(
                            entry.line,
                            format!("context-prune-summary content[{i}] is null: pi-condense throws rebuilding its state"),
                        ));
                    }
                    if !block.get("type").is_some_and(|t| t.is_str("text")) {
                        continue;
                    }
                    if !first {
                        // "\n" as canonical text.
                        out.extend_from_slice(b"\\n");
                    }
                    first = false;
                    if let Some(t) = block.get("text").filter(|t| !t.is_null()) {
                        t.write_to_string(&mut out);
                    }
                }
                Cow::Owned(out)
            }
            _ => Cow::Borrowed(&b""[..]),
        };
        if !text.is_empty() {
            self.bodies.push(SummaryBody {
                tool_call_ids: refs.iter().map(|r| self.key_of(r)).collect(),
                text: text.into_owned().into_boxed_slice(),
            });
        }
        self.version += 1;
        Ok(())
    }

    /// Records: key to the stored record (any JSON value).
    pub fn records(&self) -> &JsMap<'s, Value<'s>> {
        &self.records
    }

    pub fn ref_aliases(&self) -> &JsMap<'s, JsVal<'s>> {
        &self.ref_aliases
    }

    pub fn summary_bodies(&self) -> &[SummaryBody<'s>] {
        &self.bodies
    }

    /// The chain registry (first position, last value per
    /// `startUserTimestamp`).
    pub fn chains(&self) -> &JsMap<'s, Value<'s>> {
        &self.chains
    }

    /// `key -> shortId` as the summaries registered them, before the alias
    /// pass (a replay evaluates the pass per key).
    pub fn short_refs_before_aliases(&self) -> &JsMap<'s, JsVal<'s>> {
        &self.short_refs
    }

    /// The dedup-alias pairs `(new key, original key)` seen so far, in
    /// branch order: the input of the alias pass.
    pub fn dedup_alias_pairs(&self) -> &[(JsVal<'s>, JsVal<'s>)] {
        &self.aliases
    }

    /// `dedupAliases` and `shortRefs` after the alias pass.
    pub fn aliases_and_short_refs(&self) -> (JsMap<'s, JsVal<'s>>, JsMap<'s, JsVal<'s>>) {
        let mut short = self.short_refs.clone();
        let mut dedup = JsMap::default();
        for (new, original) in &self.aliases {
            dedup.set(new.clone(), original.clone());
            let reference = short.get(&original.key()).filter(|r| r.truthy()).cloned();
            if let Some(r) = reference {
                short.set(new.clone(), r);
            }
        }
        (dedup, short)
    }

    /// The frontier entry's `data` in force (B.5), if any.
    pub fn frontier_data(&self) -> Option<Value<'s>> {
        self.frontier
    }

    /// The renderer's boundary (2.4.3): the frontier's
    /// `thinkingStripBoundaryTimestamp` when it is a number.
    pub fn thinking_boundary(&self) -> Option<f64> {
        match self.dialect {
            Dialect::V2_4 => self
                .frontier?
                .get("thinkingStripBoundaryTimestamp")?
                .number(),
            Dialect::V2_9 => None,
        }
    }
}
