//! One pass over the raw bytes before simd-json sees them. It finds each
//! top-level element's byte span, tells whether that span is already exactly
//! what `JSON.stringify` would write (so it can be copied and measured as is),
//! bounds the nesting depth, and lists what the private scratch copy must
//! spell differently for simd-json: lone surrogate escapes (simd-json would
//! turn them into U+0000) and numbers that overflow to Infinity (`null` is
//! what JS writes for them). On malformed input it stops quietly and leaves
//! the diagnosis to simd-json.

use crate::error::PruneError;
use crate::jsjson::lone::{INFINITY_SENTINEL, STAND_IN_HIGH};
use crate::jsjson::write_json_number;

/// Deepest nesting accepted inside one message; the serializer recurses.
pub const MAX_DEPTH: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    /// The bytes are JSON.stringify's own spelling of the value, except for
    /// object key order and duplicate keys, which the tape check covers.
    pub canonical: bool,
}

/// A byte range of the input that the scratch copy spells differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewrite {
    /// A number that overflows: JS reads ±Infinity (and writes `null`).
    Infinity { negative: bool },
    /// A lone surrogate escape, kept as its stand-in character.
    LoneSurrogate(u32),
}

#[derive(Debug, Default)]
pub struct Scan {
    pub spans: Vec<Span>,
    /// True when the array closed and only white space follows; false when
    /// the scanner gave up (not an array, or malformed), and the parser then
    /// reports what is wrong.
    pub complete: bool,
    pub rewrites: Vec<(usize, usize, Rewrite)>,
    /// An escaped surrogate pair spells a character of the stand-in range.
    pub escaped_stand_in: bool,
    /// A number token reads as the Infinity sentinel itself.
    pub holds_infinity_sentinel: bool,
}

pub fn scan(buf: &[u8]) -> Result<Scan, PruneError> {
    let mut out = Scan::default();
    let mut s = Scanner {
        b: buf,
        i: 0,
        rewrites: Vec::new(),
        escaped_stand_in: false,
        holds_infinity_sentinel: false,
    };
    let result = scan_array(&mut s, &mut out);
    out.rewrites = s.rewrites;
    out.escaped_stand_in = s.escaped_stand_in;
    out.holds_infinity_sentinel = s.holds_infinity_sentinel;
    result.map(|()| out)
}

fn scan_array(s: &mut Scanner<'_>, out: &mut Scan) -> Result<(), PruneError> {
    s.skip_ws();
    if s.peek() != Some(b'[') {
        return Ok(());
    }
    s.i += 1;
    s.skip_ws();
    if s.peek() == Some(b']') {
        out.complete = s.closes_document();
        return Ok(());
    }
    loop {
        let index = out.spans.len();
        let start = s.i;
        let Some((end, canonical)) = s.element(index)? else {
            return Ok(());
        };
        out.spans.push(Span {
            start,
            end,
            canonical,
        });
        s.skip_ws();
        match s.peek() {
            Some(b',') => {
                s.i += 1;
                s.skip_ws();
            }
            Some(b']') => {
                out.complete = s.closes_document();
                return Ok(());
            }
            _ => return Ok(()),
        }
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    rewrites: Vec<(usize, usize, Rewrite)>,
    escaped_stand_in: bool,
    holds_infinity_sentinel: bool,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// At the array's closing bracket: whether only white space follows.
    fn closes_document(&mut self) -> bool {
        self.i += 1;
        self.skip_ws();
        self.i == self.b.len()
    }

    fn skip_ws(&mut self) -> bool {
        let from = self.i;
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
        self.i != from
    }

    /// Scans one value; returns its end and whether it is canonical, or None
    /// on malformed input.
    fn element(&mut self, index: usize) -> Result<Option<(usize, bool)>, PruneError> {
        let mut depth = 0usize;
        let mut canonical = true;
        loop {
            let Some(c) = self.peek() else {
                return Ok(None);
            };
            match c {
                b'"' => {
                    self.i += 1;
                    match self.string() {
                        Some(ok) => canonical &= ok,
                        None => return Ok(None),
                    }
                }
                b'{' | b'[' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(PruneError::too_deep(index, MAX_DEPTH));
                    }
                    self.i += 1;
                }
                b'}' | b']' => {
                    if depth == 0 {
                        return Ok(None);
                    }
                    depth -= 1;
                    self.i += 1;
                }
                b',' | b':' => {
                    if depth == 0 {
                        return Ok(None);
                    }
                    self.i += 1;
                }
                b' ' | b'\t' | b'\n' | b'\r' => {
                    canonical = false;
                    self.skip_ws();
                }
                b'-' | b'0'..=b'9' => canonical &= self.number(index)?,
                b't' | b'f' | b'n' => {
                    while matches!(self.peek(), Some(b'a'..=b'z')) {
                        self.i += 1;
                    }
                }
                _ => return Ok(None),
            }
            if depth == 0 {
                // Trailing whitespace inside the element is not part of it.
                return Ok(Some((self.i, canonical)));
            }
        }
    }

    /// Scans a string body after its opening quote. Returns whether every
    /// escape is one JSON.stringify writes, or None when unterminated.
    fn string(&mut self) -> Option<bool> {
        let mut canonical = true;
        loop {
            let off = memchr::memchr2(b'"', b'\\', &self.b[self.i..])?;
            self.i += off;
            if self.b[self.i] == b'"' {
                self.i += 1;
                return Some(canonical);
            }
            let e = *self.b.get(self.i + 1)?;
            match e {
                b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
                b'u' => {
                    let unit = self.hex4(self.i + 2)?;
                    let lower = self.b[self.i + 2..self.i + 6]
                        .iter()
                        .all(|h| !h.is_ascii_uppercase());
                    let low_follows = self.b.get(self.i + 6) == Some(&b'\\')
                        && self.b.get(self.i + 7) == Some(&b'u')
                        && self
                            .hex4(self.i + 8)
                            .is_some_and(|lo| (0xDC00..0xE000).contains(&lo));
                    if (0xD800..0xDC00).contains(&unit) && low_follows {
                        // A pair: JSON.stringify writes the character itself.
                        self.escaped_stand_in |= STAND_IN_HIGH.contains(&unit);
                        canonical = false;
                        self.i += 12;
                    } else if (0xD800..0xE000).contains(&unit) {
                        // JSON.stringify writes a lone surrogate as `\udxxx`.
                        self.rewrites
                            .push((self.i, self.i + 6, Rewrite::LoneSurrogate(unit)));
                        canonical &= lower;
                        self.i += 6;
                    } else {
                        let short = matches!(unit, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d);
                        canonical &= unit < 0x20 && !short && lower;
                        self.i += 6;
                    }
                }
                _ => {
                    canonical = false;
                    self.i += 2;
                }
            }
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.b.get(at..at + 4)?;
        let mut v = 0u32;
        for &d in digits {
            v = v * 16 + (d as char).to_digit(16)?;
        }
        Some(v)
    }

    /// Scans a number token; returns whether JS would spell it the same way.
    /// A token that overflows to Infinity is listed for rewriting as `null`,
    /// which is how JS serializes Infinity.
    ///
    /// A number must end at a delimiter: simd-json 0.17 does not check what
    /// follows a number of 19 or more significant digits and would accept
    /// `1234567890123456789null` (found by fuzzing), so that is rejected
    /// here.
    fn number(&mut self, index: usize) -> Result<bool, PruneError> {
        let start = self.i;
        while matches!(
            self.peek(),
            Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
        ) {
            self.i += 1;
        }
        if let Some(next) = self.peek() {
            if !matches!(next, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                return Err(PruneError::invalid_json(format!(
                    "invalid JSON at byte {} (message {index}): a number is followed by {:?}",
                    self.i,
                    char::from(next)
                )));
            }
        }
        Ok(self.number_token(start))
    }

    fn number_token(&mut self, start: usize) -> bool {
        let tok = &self.b[start..self.i];
        let digits = tok.strip_prefix(b"-").unwrap_or(tok);
        let plain_int = !digits.is_empty()
            && digits.iter().all(u8::is_ascii_digit)
            && (digits[0] != b'0' || digits.len() == 1);
        if plain_int && digits.len() <= 15 {
            return tok != b"-0";
        }
        let Some(value) = std::str::from_utf8(tok)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
        else {
            return false;
        };
        if value.is_infinite() {
            self.rewrites.push((
                start,
                self.i,
                Rewrite::Infinity {
                    negative: value < 0.0,
                },
            ));
            return false;
        }
        self.holds_infinity_sentinel |= value.abs() == INFINITY_SENTINEL;
        let mut spelled = Vec::with_capacity(24);
        write_json_number(&mut spelled, value);
        spelled == tok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(s: &str) -> Result<Scan, PruneError> {
        scan(s.as_bytes())
    }

    #[test]
    fn finds_top_level_spans() {
        let text = r#"[{"a":[1,2]},"x,]",3]"#;
        let sc = spans(text).unwrap();
        assert!(sc.complete);
        let parts: Vec<&str> = sc.spans.iter().map(|s| &text[s.start..s.end]).collect();
        assert_eq!(parts, [r#"{"a":[1,2]}"#, r#""x,]""#, "3"]);
        assert!(sc.spans.iter().all(|s| s.canonical));
        assert!(spans("[]").unwrap().complete);
        assert!(spans(" [ ] ").unwrap().spans.is_empty());
        assert!(!spans("{}").unwrap().complete);
        assert!(!spans("[1,").unwrap().complete);
        assert!(!spans(r#"["abc"#).unwrap().complete);
    }

    #[test]
    fn flags_spellings_json_stringify_never_writes() {
        for (text, canonical) in [
            (r#"[{"a":1}]"#, true),
            (r#"[{"a": 1}]"#, false),
            (r#"["\u00e9"]"#, false),
            (r#"["\/"]"#, false),
            (r#"["\u001f\u0000\n"]"#, true),
            (r#"["\u001F"]"#, false),
            (r#"["\u0008"]"#, false),
            (r#"["\ud83d\ude00"]"#, false),
            ("[1.0]", false),
            ("[-0]", false),
            ("[1E21]", false),
            ("[1e+21]", true),
            ("[1.5e-7]", true),
            ("[0.1]", true),
            ("[9007199254740993]", false),
            ("[9007199254740992]", true),
            ("[123456789012345]", true),
        ] {
            let sc = spans(text).unwrap();
            assert_eq!(sc.spans[0].canonical, canonical, "{text}");
        }
    }

    #[test]
    fn lists_lone_surrogates_and_keeps_their_spelling_canonical() {
        let sc = spans(r#"[1,"\ud800x\udc00","\ud83d\ude00"]"#).unwrap();
        assert_eq!(
            sc.rewrites,
            [
                (4, 10, Rewrite::LoneSurrogate(0xd800)),
                (11, 17, Rewrite::LoneSurrogate(0xdc00))
            ]
        );
        assert!(sc.spans[1].canonical);
        assert!(!sc.spans[2].canonical);
        assert!(!spans(r#"["\uD800"]"#).unwrap().spans[0].canonical);
        assert!(spans(r#"["\udbf6\udc34"]"#).unwrap().escaped_stand_in);
        assert!(!spans(r#"["\udbff\udfff"]"#).unwrap().escaped_stand_in);
        // An escaped backslash followed by "ud800" is plain text.
        let plain = spans(r#"["\\ud800"]"#).unwrap();
        assert!(plain.rewrites.is_empty() && plain.spans[0].canonical);
    }

    #[test]
    fn lists_overflowing_numbers() {
        let sc = spans(r#"[{"a":1E400,"b":-1e999,"c":1e308}]"#).unwrap();
        assert!(!sc.spans[0].canonical);
        assert_eq!(
            sc.rewrites,
            [
                (6, 11, Rewrite::Infinity { negative: false }),
                (16, 22, Rewrite::Infinity { negative: true })
            ]
        );
    }

    #[test]
    fn a_number_must_end_at_a_delimiter() {
        for text in [
            "[1234567890123456789null]",
            "[1.23456789012345678901true]",
            "[1x]",
            r#"[{"a":12345678901234567890"b"}]"#,
        ] {
            let e = spans(text).unwrap_err();
            assert_eq!(e.code, "ERR_CONDENSE_INVALID_JSON", "{text}");
            assert!(e.message.contains("message 0"), "{}", e.message);
        }
        for text in ["[1,2]", "[1 ]", "[1\n]", r#"[{"a":1}]"#, "[-0.5e+3]"] {
            assert!(spans(text).unwrap().complete, "{text}");
        }
    }

    #[test]
    fn bounds_depth() {
        let deep = format!(
            "[{}{}]",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(spans(&deep).unwrap_err().code, "ERR_CONDENSE_TOO_DEEP");
        let ok = format!("[{}{}]", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(spans(&ok).unwrap().complete);
    }
}
