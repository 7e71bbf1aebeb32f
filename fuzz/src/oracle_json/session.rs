//! The oracle: src/sessionfile/json/parse.rs as it was at 42cc795, kept
//! verbatim but for imports. `JSON.parse` for one session line, as V8 runs it: RFC 8259 grammar,
//! whitespace limited to space, tab, CR and LF, no comments, numbers read as
//! doubles, `\uXXXX` escapes that may leave lone surrogates. The result is a
//! tape of spans (no text is copied) plus the answer to "is this line exactly
//! what JSON.stringify would write for its value?" (no whitespace inside,
//! only the escapes JSON.stringify writes, numbers in ECMAScript form, keys
//! unique and in JS property order). Nesting deeper than [`MAX_DEPTH`] is
//! reported apart from syntax errors: pi parses such a line, the render path
//! refuses it, so the loader names the line instead of dropping it.
//! The parser is iterative: no input can exhaust the stack.

use super::tape::{Kind, Node, Tape};
use super::text::array_index;
use super::wtf8::{decode, hex4};

/// The render path's nesting limit (the entry object is level 1).
pub const MAX_DEPTH: usize = 1000;

/// What `JSON.parse` makes of a line.
#[derive(Debug)]
pub enum Parsed {
    Value(Tape),
    /// JSON.parse throws: pi drops the line.
    Invalid,
    /// Valid JSON nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

struct Parser<'t> {
    text: &'t [u8],
    i: usize,
    nodes: &'t mut Vec<Node>,
    canonical: bool,
    /// Open containers: whether each is an object.
    kinds: Vec<bool>,
    /// Node index of each open container, while nodes are recorded.
    open: Vec<u32>,
    /// Set once the depth limit is passed; the rest is only validated.
    too_deep: bool,
}

/// Parses one line (its bytes are valid UTF-8).
pub fn parse(text: &[u8]) -> Parsed {
    parse_with(text, &mut Vec::new())
}

/// [`parse`] growing its nodes in `scratch` (left empty after), so that a
/// thread parsing many lines reuses one buffer and each tape is allocated
/// once, at its exact size.
pub fn parse_with(text: &[u8], scratch: &mut Vec<Node>) -> Parsed {
    if text.len() > u32::MAX as usize {
        return Parsed::Invalid;
    }
    scratch.clear();
    let mut p = Parser {
        text,
        i: 0,
        nodes: scratch,
        canonical: true,
        kinds: Vec::new(),
        open: Vec::new(),
        too_deep: false,
    };
    let outcome = p.run();
    let (too_deep, canonical) = (p.too_deep, p.canonical);
    let parsed = match outcome {
        Some(()) if too_deep => Parsed::TooDeep,
        Some(()) => Parsed::Value(Tape {
            nodes: scratch.as_slice().to_vec(),
            canonical,
            ordinal: 0,
        }),
        None => Parsed::Invalid,
    };
    scratch.clear();
    parsed
}

#[inline]
fn has_control(bytes: &[u8]) -> bool {
    let mut chunks = bytes.chunks_exact(32);
    for chunk in &mut chunks {
        if chunk.iter().fold(0u8, |acc, &b| acc | u8::from(b < 0x20)) != 0 {
            return true;
        }
    }
    chunks.remainder().iter().any(|&b| b < 0x20)
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.i).copied()
    }

    /// Skips JSON whitespace; says whether there was any.
    fn skip_ws(&mut self) -> bool {
        let from = self.i;
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
        self.i != from
    }

    fn ws_inside(&mut self) {
        if self.skip_ws() {
            self.canonical = false;
        }
    }

    fn push(&mut self, kind: Kind, escaped: bool, start: usize, end: usize) {
        if !self.too_deep {
            let next = self.nodes.len() as u32 + 1;
            self.nodes.push(Node {
                kind,
                escaped,
                start: start as u32,
                end: end as u32,
                next,
            });
        }
    }

    fn run(&mut self) -> Option<()> {
        self.skip_ws();
        'value: loop {
            match self.peek()? {
                c @ (b'{' | b'[') => {
                    let object = c == b'{';
                    if self.kinds.len() >= MAX_DEPTH {
                        self.too_deep = true;
                    }
                    if !self.too_deep {
                        self.open.push(self.nodes.len() as u32);
                        let kind = if object { Kind::Object } else { Kind::Array };
                        self.push(kind, false, self.i, self.i);
                    }
                    self.kinds.push(object);
                    self.i += 1;
                    self.ws_inside();
                    let close = if object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.close();
                    } else {
                        if object {
                            self.key()?;
                        }
                        continue 'value;
                    }
                }
                b'"' => self.string()?,
                b'-' | b'0'..=b'9' => self.number()?,
                b't' => self.literal(b"true", Kind::True)?,
                b'f' => self.literal(b"false", Kind::False)?,
                b'n' => self.literal(b"null", Kind::Null)?,
                _ => return None,
            }
            // After a value: commas and closing brackets.
            loop {
                let Some(&object) = self.kinds.last() else {
                    self.skip_ws();
                    return (self.i == self.text.len()).then_some(());
                };
                self.ws_inside();
                match self.peek()? {
                    b',' => {
                        self.i += 1;
                        self.ws_inside();
                        if object {
                            self.key()?;
                        }
                        continue 'value;
                    }
                    b'}' if object => self.close(),
                    b']' if !object => self.close(),
                    _ => return None,
                }
            }
        }
    }

    /// A member's key, the colon and the whitespace before the value.
    fn key(&mut self) -> Option<()> {
        if self.peek() != Some(b'"') {
            return None;
        }
        self.string()?;
        self.ws_inside();
        if self.peek() != Some(b':') {
            return None;
        }
        self.i += 1;
        self.ws_inside();
        Some(())
    }

    /// Closes the innermost container at its closing bracket.
    fn close(&mut self) {
        self.i += 1;
        let object = self.kinds.pop() == Some(true);
        if self.too_deep && self.kinds.len() >= self.open.len() {
            return;
        }
        if let Some(at) = self.open.pop() {
            let next = self.nodes.len() as u32;
            let node = &mut self.nodes[at as usize];
            node.end = self.i as u32;
            node.next = next;
            // The one change to the old code: past the depth limit the keys'
            // values were not recorded, and the old check indexed past the
            // nodes (a panic on `{"a":` nested 1001 deep, found by the
            // json_reader target); the line is TooDeep whatever its keys.
            if object && self.canonical && !self.too_deep {
                self.canonical = self.keys_canonical(at as usize);
            }
        }
    }

    /// Keys unique and in JS property order: array indices first,
    /// ascending, then the others (as JSON.stringify writes a parsed object).
    fn keys_canonical(&self, at: usize) -> bool {
        let end = self.nodes[at].next as usize;
        // Most objects are small and their keys plain: compare them in
        // place, without allocating.
        let mut plain: [&[u8]; 16] = [&[]; 16];
        let mut count = 0;
        let mut j = at + 1;
        while j < end {
            let k = self.nodes[j];
            if k.escaped || count == plain.len() {
                return self.keys_canonical_slow(at);
            }
            plain[count] = &self.text[k.start as usize..k.end as usize];
            count += 1;
            j = self.nodes[j + 1].next as usize;
        }
        order_and_uniqueness(&plain[..count])
    }

    fn keys_canonical_slow(&self, at: usize) -> bool {
        let end = self.nodes[at].next as usize;
        let mut keys = Vec::new();
        let mut j = at + 1;
        while j < end {
            let k = self.nodes[j];
            keys.push(decode(
                &self.text[k.start as usize..k.end as usize],
                k.escaped,
            ));
            j = self.nodes[j + 1].next as usize;
        }
        let refs: Vec<&[u8]> = keys.iter().map(|k| &**k).collect();
        order_and_uniqueness(&refs)
    }

    fn string(&mut self) -> Option<()> {
        self.i += 1;
        let start = self.i;
        let mut escaped = false;
        loop {
            let rest = &self.text[self.i..];
            let off = memchr::memchr2(b'"', b'\\', rest)?;
            if has_control(&rest[..off]) {
                return None;
            }
            self.i += off;
            if self.text[self.i] == b'"' {
                self.push(Kind::String, escaped, start, self.i);
                self.i += 1;
                return Some(());
            }
            escaped = true;
            self.escape()?;
        }
    }

    /// One escape at `self.i` (the backslash).
    fn escape(&mut self) -> Option<()> {
        let c = *self.text.get(self.i + 1)?;
        match c {
            b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => {
                self.i += 2;
                Some(())
            }
            b'/' => {
                self.canonical = false;
                self.i += 2;
                Some(())
            }
            b'u' => {
                let digits = self.text.get(self.i + 2..self.i + 6)?;
                if !digits.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                if self.canonical {
                    self.canonical = self.escape_is_canonical(digits);
                }
                self.i += 6;
                Some(())
            }
            _ => None,
        }
    }

    /// JSON.stringify escapes only controls without a short form (as
    /// `\u00xx`) and lone surrogates (as `\udxxx`), in lowercase hex.
    fn escape_is_canonical(&self, digits: &[u8]) -> bool {
        if digits.iter().any(u8::is_ascii_uppercase) {
            return false;
        }
        let unit = hex4(digits);
        match unit {
            0x08 | 0x09 | 0x0A | 0x0C | 0x0D => false,
            0..=0x1F => true,
            0xD800..=0xDBFF => {
                // A high surrogate followed by a low one is a pair, which
                // JSON.stringify writes as the character itself.
                let after = &self.text[self.i + 6..];
                !(after.len() >= 6
                    && after[0] == b'\\'
                    && after[1] == b'u'
                    && after[2..6].iter().all(u8::is_ascii_hexdigit)
                    && (0xDC00..0xE000).contains(&hex4(&after[2..6])))
            }
            0xDC00..=0xDFFF => true,
            _ => false,
        }
    }

    fn number(&mut self) -> Option<()> {
        let start = self.i;
        let t = self.text;
        let mut i = self.i;
        if t.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        match t.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => {
                while t.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return None,
        }
        let int_digits = i - int_start;
        let mut plain = true;
        if t.get(i) == Some(&b'.') {
            plain = false;
            i += 1;
            let from = i;
            while t.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == from {
                return None;
            }
        }
        if matches!(t.get(i), Some(b'e' | b'E')) {
            plain = false;
            i += 1;
            if matches!(t.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let from = i;
            while t.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == from {
                return None;
            }
        }
        self.i = i;
        let token = &t[start..i];
        if self.canonical && !(plain && int_digits <= 15 && token != b"-0") {
            self.canonical = number_is_canonical(token);
        }
        self.push(Kind::Number, false, start, i);
        Some(())
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Option<()> {
        if !self.text[self.i..].starts_with(word) {
            return None;
        }
        self.push(kind, false, self.i, self.i + word.len());
        self.i += word.len();
        Some(())
    }
}

/// The value of a number token, as JSON.parse reads it (overflow is
/// ±Infinity).
pub fn number_value(token: &[u8]) -> f64 {
    std::str::from_utf8(token)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
}

fn number_is_canonical(token: &[u8]) -> bool {
    let v = number_value(token);
    v.is_finite() && ryu_js::Buffer::new().format_finite(v).as_bytes() == token
}

fn order_and_uniqueness(keys: &[&[u8]]) -> bool {
    let mut seen_plain = false;
    let mut last_index: Option<u32> = None;
    for k in keys {
        match array_index(k) {
            Some(n) => {
                if seen_plain || last_index.is_some_and(|l| l >= n) {
                    return false;
                }
                last_index = Some(n);
            }
            None => seen_plain = true,
        }
    }
    if keys.len() <= 16 {
        let same = |a: &[u8], b: &[u8]| a.len() == b.len() && a.first() == b.first() && a == b;
        keys.iter()
            .enumerate()
            .all(|(i, a)| !keys[..i].iter().any(|b| same(a, b)))
    } else {
        let mut set = std::collections::HashSet::new();
        keys.iter().all(|k| set.insert(*k))
    }
}
