//! The oracle: src/json/parse.rs as it was at 42cc795, kept verbatim but
//! for imports. `JSON.parse` as JavaScript does it, into `Json`: the same grammar, the
//! same numbers (correctly rounded doubles, overflow to ±Infinity), the same
//! objects (a repeated key keeps its first place and takes the last value;
//! array-index keys first, ascending) and lone-surrogate escapes kept exactly.
//! It reads the state, the config, and any message whose bytes are not
//! already `JSON.stringify`'s own spelling. simd-json and serde_json cannot
//! stand in here: the first turns lone surrogates into U+0000, the second
//! rejects them.

use std::fmt;

use super::text::{array_index, escape_unit_or_char, hex4, UnitOrChar};
use condense_native::Json;
use std::collections::HashMap;

/// Deepest nesting accepted inside one value (the writers recurse).
pub const MAX_DEPTH: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    End,
    Unexpected(u8),
    InvalidUtf8,
    ControlInString,
    BadEscape,
    BadNumber,
    TooDeep,
    Trailing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset of the problem.
    pub at: usize,
    pub problem: Problem,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.at;
        match self.problem {
            Problem::End => write!(f, "the JSON text ends early (byte {at})"),
            Problem::Unexpected(b) if b.is_ascii_graphic() => {
                write!(f, "unexpected '{}' at byte {at}", b as char)
            }
            Problem::Unexpected(b) => write!(f, "unexpected byte 0x{b:02x} at byte {at}"),
            Problem::InvalidUtf8 => write!(f, "invalid UTF-8 at byte {at}"),
            Problem::ControlInString => {
                write!(f, "unescaped control character in a string at byte {at}")
            }
            Problem::BadEscape => write!(f, "invalid escape in a string at byte {at}"),
            Problem::BadNumber => write!(f, "malformed number at byte {at}"),
            Problem::TooDeep => {
                write!(f, "nesting deeper than {MAX_DEPTH} levels at byte {at}")
            }
            Problem::Trailing => write!(f, "unexpected text after the JSON value at byte {at}"),
        }
    }
}

pub type ParseResult<T> = std::result::Result<T, ParseError>;

/// Parses a whole JSON text (white space around it allowed).
pub fn parse_value(bytes: &[u8]) -> ParseResult<Json> {
    let mut p = Parser::new(bytes, MAX_DEPTH);
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.at < bytes.len() {
        return Err(p.err(Problem::Trailing));
    }
    Ok(v)
}

pub struct Parser<'a> {
    b: &'a [u8],
    pub at: usize,
    max_depth: usize,
}

impl<'a> Parser<'a> {
    pub fn new(b: &'a [u8], max_depth: usize) -> Self {
        Self {
            b,
            at: 0,
            max_depth,
        }
    }

    fn err(&self, problem: Problem) -> ParseError {
        ParseError {
            at: self.at,
            problem,
        }
    }

    fn unexpected(&self) -> ParseError {
        match self.b.get(self.at) {
            Some(&c) => self.err(Problem::Unexpected(c)),
            None => self.err(Problem::End),
        }
    }

    pub fn ws(&mut self) {
        while matches!(self.b.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn literal(&mut self, word: &[u8], v: Json) -> ParseResult<Json> {
        if self.b[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(v)
        } else {
            Err(self.unexpected())
        }
    }

    /// One value; `depth` counts the arrays and objects around it.
    pub fn value(&mut self, depth: usize) -> ParseResult<Json> {
        match self.b.get(self.at) {
            None => Err(self.err(Problem::End)),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Json::Str(self.string()?.into_boxed_slice())),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number().map(Json::Num),
            Some(_) => Err(self.unexpected()),
        }
    }

    fn array(&mut self, depth: usize) -> ParseResult<Json> {
        if depth > self.max_depth {
            return Err(self.err(Problem::TooDeep));
        }
        self.at += 1;
        let mut items = Vec::new();
        self.ws();
        if self.b.get(self.at) == Some(&b']') {
            self.at += 1;
            return Ok(Json::Arr(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth)?);
            self.ws();
            match self.b.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Json::Arr(items));
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    fn object(&mut self, depth: usize) -> ParseResult<Json> {
        if depth > self.max_depth {
            return Err(self.err(Problem::TooDeep));
        }
        self.at += 1;
        let mut entries: Vec<(Box<[u8]>, Json)> = Vec::new();
        // Positions by key, once an object grows past a few keys.
        let mut slots: Option<HashMap<Box<[u8]>, usize>> = None;
        self.ws();
        if self.b.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(Json::Obj(entries));
        }
        loop {
            self.ws();
            if self.b.get(self.at) != Some(&b'"') {
                return Err(self.unexpected());
            }
            let key = self.string()?.into_boxed_slice();
            self.ws();
            if self.b.get(self.at) != Some(&b':') {
                return Err(self.unexpected());
            }
            self.at += 1;
            self.ws();
            let value = self.value(depth)?;
            let existing = match &slots {
                Some(map) => map.get(&key).copied(),
                None => entries.iter().position(|(k, _)| *k == key),
            };
            match existing {
                Some(i) => entries[i].1 = value,
                None => {
                    if let Some(map) = &mut slots {
                        map.insert(key.clone(), entries.len());
                    } else if entries.len() >= 16 {
                        let mut map: HashMap<Box<[u8]>, usize> = entries
                            .iter()
                            .enumerate()
                            .map(|(i, (k, _))| (k.clone(), i))
                            .collect();
                        map.insert(key.clone(), entries.len());
                        slots = Some(map);
                    }
                    entries.push((key, value));
                }
            }
            self.ws();
            match self.b.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    order_index_keys_first(&mut entries);
                    return Ok(Json::Obj(entries));
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    /// A string literal at `self.at`, returned as canonical text.
    pub fn string(&mut self) -> ParseResult<Vec<u8>> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let run = self.at;
            while let Some(&c) = self.b.get(self.at) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.at += 1;
            }
            let raw = &self.b[run..self.at];
            if std::str::from_utf8(raw).is_err() {
                let valid = std::str::from_utf8(raw)
                    .err()
                    .map_or(0, |e| e.valid_up_to());
                self.at = run + valid;
                return Err(self.err(Problem::InvalidUtf8));
            }
            out.extend_from_slice(raw);
            match self.b.get(self.at) {
                None => return Err(self.err(Problem::End)),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(_) => return Err(self.err(Problem::ControlInString)),
            }
        }
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> ParseResult<()> {
        let c = match self.b.get(self.at + 1) {
            Some(&c) => c,
            None => return Err(self.err(Problem::End)),
        };
        let simple = match c {
            b'"' => Some('"'),
            b'\\' => Some('\\'),
            b'/' => Some('/'),
            b'b' => Some('\u{8}'),
            b'f' => Some('\u{c}'),
            b'n' => Some('\n'),
            b'r' => Some('\r'),
            b't' => Some('\t'),
            _ => None,
        };
        if let Some(ch) = simple {
            escape_unit_or_char(out, UnitOrChar::Char(ch));
            self.at += 2;
            return Ok(());
        }
        if c != b'u' {
            return Err(self.err(Problem::BadEscape));
        }
        let Some(unit) = hex4(self.b, self.at + 2) else {
            return Err(self.err(Problem::BadEscape));
        };
        self.at += 6;
        if (0xd800..0xdc00).contains(&unit)
            && self.b.get(self.at) == Some(&b'\\')
            && self.b.get(self.at + 1) == Some(&b'u')
        {
            if let Some(low) = hex4(self.b, self.at + 2).filter(|l| (0xdc00..0xe000).contains(l)) {
                let cp = 0x10000 + ((u32::from(unit) - 0xd800) << 10) + (u32::from(low) - 0xdc00);
                let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                escape_unit_or_char(out, UnitOrChar::Char(ch));
                self.at += 6;
                return Ok(());
            }
        }
        match char::from_u32(u32::from(unit)) {
            Some(ch) => escape_unit_or_char(out, UnitOrChar::Char(ch)),
            None => escape_unit_or_char(out, UnitOrChar::Lone(unit)),
        }
        Ok(())
    }

    /// A number literal with JSON's grammar, as a correctly rounded double.
    pub fn number(&mut self) -> ParseResult<f64> {
        let start = self.at;
        let b = self.b;
        let mut i = self.at;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => {
                self.at = i;
                return Err(self.err(Problem::BadNumber));
            }
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            if !b.get(i).is_some_and(u8::is_ascii_digit) {
                self.at = i;
                return Err(self.err(Problem::BadNumber));
            }
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !b.get(i).is_some_and(u8::is_ascii_digit) {
                self.at = i;
                return Err(self.err(Problem::BadNumber));
            }
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        self.at = i;
        // The grammar above only admits ASCII, which Rust parses exactly.
        let text = std::str::from_utf8(&b[start..i]).unwrap_or("0");
        Ok(text.parse::<f64>().unwrap_or(f64::NAN))
    }
}

/// JS objects list array-index keys first, in numeric order, then the
/// others in insertion order.
fn order_index_keys_first(entries: &mut [(Box<[u8]>, Json)]) {
    if !entries.iter().any(|(k, _)| array_index(k).is_some()) {
        return;
    }
    entries.sort_by_key(|(k, _)| match array_index(k) {
        Some(i) => (0u8, i),
        None => (1u8, 0),
    });
}
