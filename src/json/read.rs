//! `JSON.parse`'s grammar, read once for every caller: the state, the
//! config, the options, a message the render path cannot take as it stands,
//! and every session line. It records a tape (`tape.rs`) of spans, judges on
//! the way whether the text is `JSON.stringify`'s own spelling, and names
//! what is wrong and at which byte. The lexical rules are `lex.rs`'s.
//!
//! What is known about the input is a parameter ([`Input`]), not a second
//! reader (serde_json's split of one grammar over its `Read` trait is the
//! model): a session line is already valid UTF-8, and the loader asks of a
//! too-deep line whether it is JSON at all. The reader is iterative: no
//! input can exhaust the stack.

use std::fmt;

use super::lex::{self, BadEscape, MAX_DEPTH};
use super::tape::{Kind, Node, Tape};

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
    /// Longer than the tape's 32-bit offsets reach.
    TooLong,
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
            Problem::TooLong => write!(f, "the JSON text is longer than 4 GiB"),
        }
    }
}

pub type ParseResult<T> = std::result::Result<T, ParseError>;

/// What is known about the bytes, and what the caller asks at the depth
/// limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Input {
    /// Valid UTF-8 already (a decoded session line): strings skip the check.
    pub utf8: bool,
    /// The deepest level accepted (`lex::MAX_DEPTH`'s base).
    pub max_depth: usize,
    /// Past the limit, read on (recording nothing) so that a malformed text
    /// reports its syntax error and only a well-formed one `TooDeep`: pi's
    /// `JSON.parse` has no limit, so the loader must tell the two apart.
    /// Otherwise the first container past the limit is the error.
    pub read_past_limit: bool,
}

impl Input {
    /// Bytes from anywhere, held to the render path's limit.
    pub const BYTES: Input = Input {
        utf8: false,
        max_depth: MAX_DEPTH,
        read_past_limit: false,
    };
}

/// Reads a whole JSON text (white space around the value allowed).
pub fn read(b: &[u8], input: Input) -> ParseResult<Tape> {
    let mut nodes = Vec::new();
    let verdicts = Reader::new(b, input, &mut nodes).run(true)?.1;
    Ok(tape(nodes, verdicts))
}

fn tape(nodes: Vec<Node>, (canonical, depth): (bool, u32)) -> Tape {
    Tape {
        nodes,
        canonical,
        depth,
        ordinal: 0,
    }
}

/// [`read`] growing its nodes in `scratch` (left empty after), so that a
/// thread reading many lines reuses one buffer and each tape is allocated
/// once, at its exact size.
pub fn read_reusing(b: &[u8], input: Input, scratch: &mut Vec<Node>) -> ParseResult<Tape> {
    scratch.clear();
    let out = Reader::new(b, input, scratch).run(true);
    let read = out.map(|(_, verdicts)| tape(scratch.as_slice().to_vec(), verdicts));
    scratch.clear();
    read
}

/// Reads one value at the start of `b` (no white space before it) and says
/// where it ends; what follows is not looked at.
pub fn read_value(b: &[u8], input: Input) -> ParseResult<(Tape, usize)> {
    let mut nodes = Vec::new();
    let (end, verdicts) = Reader::new(b, input, &mut nodes).run(false)?;
    Ok((tape(nodes, verdicts), end))
}

struct Reader<'t> {
    b: &'t [u8],
    i: usize,
    input: Input,
    nodes: &'t mut Vec<Node>,
    canonical: bool,
    /// Open containers: whether each is an object.
    kinds: Vec<bool>,
    /// Node index and key-stack base of each open container, while nodes
    /// are recorded.
    open: Vec<(u32, u32)>,
    /// Key spans of the open objects, for the key rule.
    keys: Vec<(u32, u32)>,
    depth: u32,
    /// Where the first container past the limit opened; nothing is
    /// recorded from there on.
    too_deep: Option<usize>,
}

impl<'t> Reader<'t> {
    fn new(b: &'t [u8], input: Input, nodes: &'t mut Vec<Node>) -> Self {
        Reader {
            b,
            i: 0,
            input,
            nodes,
            canonical: true,
            kinds: Vec::new(),
            open: Vec::new(),
            keys: Vec::new(),
            depth: 0,
            too_deep: None,
        }
    }

    fn err(&self, problem: Problem) -> ParseError {
        ParseError {
            at: self.i,
            problem,
        }
    }

    fn unexpected(&self) -> ParseError {
        match self.peek() {
            Some(c) => self.err(Problem::Unexpected(c)),
            None => self.err(Problem::End),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// White space between tokens: the text is then not canonical.
    fn ws_inside(&mut self) {
        let from = self.i;
        self.i = lex::skip_ws(self.b, self.i);
        if self.i != from {
            self.canonical = false;
        }
    }

    fn push(&mut self, kind: Kind, escaped: bool, start: usize, end: usize) {
        if self.too_deep.is_none() {
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

    /// The value (a whole text when `whole`), then where it ends and the
    /// verdicts.
    fn run(mut self, whole: bool) -> ParseResult<(usize, (bool, u32))> {
        if self.b.len() > u32::MAX as usize {
            return Err(ParseError {
                at: 0,
                problem: Problem::TooLong,
            });
        }
        if whole {
            self.i = lex::skip_ws(self.b, 0);
        }
        self.value()?;
        if whole {
            self.i = lex::skip_ws(self.b, self.i);
            if self.i < self.b.len() {
                return Err(self.err(Problem::Trailing));
            }
        }
        if let Some(at) = self.too_deep {
            return Err(ParseError {
                at,
                problem: Problem::TooDeep,
            });
        }
        Ok((self.i, (self.canonical, self.depth)))
    }

    fn value(&mut self) -> ParseResult<()> {
        'value: loop {
            match self.peek() {
                None => return Err(self.err(Problem::End)),
                Some(c @ (b'{' | b'[')) => {
                    let object = c == b'{';
                    let level = self.kinds.len() + 1;
                    if level > self.input.max_depth && self.too_deep.is_none() {
                        if !self.input.read_past_limit {
                            return Err(self.err(Problem::TooDeep));
                        }
                        self.too_deep = Some(self.i);
                    }
                    if self.too_deep.is_none() {
                        self.depth = self.depth.max(level as u32);
                        self.open
                            .push((self.nodes.len() as u32, self.keys.len() as u32));
                        let kind = if object { Kind::Object } else { Kind::Array };
                        self.push(kind, false, self.i, self.i);
                    }
                    self.kinds.push(object);
                    self.i += 1;
                    self.ws_inside();
                    if self.peek() == Some(if object { b'}' } else { b']' }) {
                        self.close();
                    } else {
                        if object {
                            self.key()?;
                        }
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    self.string()?;
                }
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b't') => self.literal(b"true", Kind::True)?,
                Some(b'f') => self.literal(b"false", Kind::False)?,
                Some(b'n') => self.literal(b"null", Kind::Null)?,
                Some(c) => return Err(self.err(Problem::Unexpected(c))),
            }
            // After a value: commas and closing brackets.
            loop {
                let Some(&object) = self.kinds.last() else {
                    return Ok(());
                };
                self.ws_inside();
                match self.peek() {
                    Some(b',') => {
                        self.i += 1;
                        self.ws_inside();
                        if object {
                            self.key()?;
                        }
                        continue 'value;
                    }
                    Some(b'}') if object => self.close(),
                    Some(b']') if !object => self.close(),
                    _ => return Err(self.unexpected()),
                }
            }
        }
    }

    /// A member's key, the colon and the white space before the value.
    fn key(&mut self) -> ParseResult<()> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected());
        }
        let (start, end) = self.string()?;
        if self.too_deep.is_none() {
            self.keys.push((start as u32, end as u32));
        }
        self.ws_inside();
        if self.peek() != Some(b':') {
            return Err(self.unexpected());
        }
        self.i += 1;
        self.ws_inside();
        Ok(())
    }

    /// Closes the innermost container at its closing bracket.
    fn close(&mut self) {
        self.i += 1;
        let object = self.kinds.pop() == Some(true);
        if self.too_deep.is_some() {
            return;
        }
        if let Some((at, keys)) = self.open.pop() {
            let next = self.nodes.len() as u32;
            let node = &mut self.nodes[at as usize];
            node.end = self.i as u32;
            node.next = next;
            if object {
                if self.canonical {
                    self.canonical = lex::keys_canonical(self.b, &self.keys[keys as usize..]);
                }
                self.keys.truncate(keys as usize);
            }
        }
    }

    /// A string at `self.i` (the quote); its body's span.
    fn string(&mut self) -> ParseResult<(usize, usize)> {
        self.i += 1;
        let start = self.i;
        let mut escaped = false;
        loop {
            let rest = &self.b[self.i..];
            let stop = memchr::memchr2(b'"', b'\\', rest);
            let segment = &rest[..stop.unwrap_or(rest.len())];
            let control = lex::first_control(segment);
            let run = &segment[..control.unwrap_or(segment.len())];
            if !self.input.utf8 {
                if let Err(e) = simdutf8::compat::from_utf8(run) {
                    self.i += e.valid_up_to();
                    return Err(self.err(Problem::InvalidUtf8));
                }
            }
            if let Some(c) = control {
                self.i += c;
                return Err(self.err(Problem::ControlInString));
            }
            self.i += segment.len();
            match self.peek() {
                None => return Err(self.err(Problem::End)),
                Some(b'"') => {
                    let end = self.i;
                    self.push(Kind::String, escaped, start, end);
                    self.i += 1;
                    return Ok((start, end));
                }
                _ => match lex::escape(self.b, self.i) {
                    Ok(e) => {
                        if !e.canonical {
                            escaped = true;
                            self.canonical = false;
                        }
                        self.i += e.len;
                    }
                    Err(BadEscape::End) => return Err(self.err(Problem::End)),
                    Err(BadEscape::Invalid) => return Err(self.err(Problem::BadEscape)),
                },
            }
        }
    }

    fn number(&mut self) -> ParseResult<()> {
        let start = self.i;
        let end = lex::number_end(self.b, start).map_err(|at| ParseError {
            at,
            problem: Problem::BadNumber,
        })?;
        if self.canonical && !lex::number_is_canonical(&self.b[start..end]) {
            self.canonical = false;
        }
        self.push(Kind::Number, false, start, end);
        self.i = end;
        Ok(())
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> ParseResult<()> {
        if !self.b[self.i..].starts_with(word) {
            return Err(self.unexpected());
        }
        self.push(kind, false, self.i, self.i + word.len());
        self.i += word.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(s: &str) -> Option<bool> {
        read(s.as_bytes(), Input::BYTES).ok().map(|t| t.canonical)
    }

    fn problem(s: &[u8]) -> ParseError {
        read(s, Input::BYTES).unwrap_err()
    }

    #[test]
    fn accepts_what_json_parse_accepts() {
        for ok in [
            "0",
            "-0",
            "1.5e-7",
            "1E400",
            "\"\"",
            " {\"a\" : [1, 2, {}], \"b\":null}\r",
            "[true,false,null]",
            "\"\\ud800\"",
            "\"\u{7f}\u{2028}\"",
        ] {
            assert!(canonical(ok).is_some(), "{ok}");
        }
        for bad in [
            "",
            "01",
            "1.",
            ".5",
            "+1",
            "[1,]",
            "{\"a\":1,}",
            "{a:1}",
            "\"\t\"",
            "\"\\x\"",
            "\"\\u12\"",
            "nul",
            "[1] x",
            "\u{feff}{}",
            "{\"a\" 1}",
            "[",
            "\"abc",
            "NaN",
            "'a'",
            "-",
            "{\"a\"}",
        ] {
            assert!(canonical(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn tells_canonical_texts() {
        for yes in [
            r#"{"a":1,"b":[1.5,-2,"x\n\u0001"],"c":{}}"#,
            r#"{"0":1,"2":2,"a":3}"#,
            r#""\ud800x\udc00""#,
            "1e+21",
            "1.5e-7",
            "123456789012345",
        ] {
            assert_eq!(canonical(yes), Some(true), "{yes}");
        }
        for no in [
            r#"{"a": 1}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"b":1,"0":2}"#,
            r#"{"1":1,"0":2}"#,
            r#""\u00e9""#,
            r#""\/""#,
            r#""\u000a""#,
            r#""\u001F""#,
            r#""\ud83d\ude00""#,
            "1.0",
            "-0",
            "1E3",
            "1e400",
            "12345678901234567",
            "[1 ]",
        ] {
            assert_eq!(canonical(no), Some(false), "{no}");
        }
    }

    #[test]
    fn says_what_and_where() {
        assert_eq!(problem(b"[1, NaN]").to_string(), "unexpected 'N' at byte 4");
        assert_eq!(problem(b"\"\xff\"").problem, Problem::InvalidUtf8);
        assert_eq!(problem(b"\"ab\xe2\x82\"").at, 3);
        assert_eq!(problem(b"\"a\x01\xff\"").problem, Problem::ControlInString);
        assert_eq!(problem(b"\"a\\").problem, Problem::End);
        assert_eq!(problem(b"\"a\\u12\"").at, 2);
        assert_eq!(problem(b"-").at, 1);
        assert_eq!(problem(b"[1] 2").problem, Problem::Trailing);
        assert_eq!(problem(b"[tru]").problem, Problem::Unexpected(b't'));
    }

    #[test]
    fn bounds_nesting_without_recursion() {
        let nest = |n: usize| "[".repeat(n) + &"]".repeat(n);
        let t = read(nest(MAX_DEPTH).as_bytes(), Input::BYTES).unwrap();
        assert_eq!(t.depth as usize, MAX_DEPTH);
        let e = problem(nest(MAX_DEPTH + 1).as_bytes());
        assert_eq!((e.problem, e.at), (Problem::TooDeep, MAX_DEPTH));
        // Read past the limit: well-formed is TooDeep, malformed is not.
        let on = Input {
            utf8: true,
            read_past_limit: true,
            ..Input::BYTES
        };
        let broken = "[".repeat(MAX_DEPTH + 5) + &"]".repeat(MAX_DEPTH + 4);
        assert_eq!(
            read(broken.as_bytes(), on).unwrap_err().problem,
            Problem::End
        );
        assert_eq!(
            read(nest(MAX_DEPTH + 1).as_bytes(), on)
                .unwrap_err()
                .problem,
            Problem::TooDeep
        );
        // Objects past the limit: keys whose values went unrecorded (the
        // old session reader indexed past its nodes here).
        let objects = r#"{"a":"#.repeat(MAX_DEPTH + 1) + "1" + &"}".repeat(MAX_DEPTH + 1);
        assert_eq!(
            read(objects.as_bytes(), on).unwrap_err().problem,
            Problem::TooDeep
        );
        let huge = "[".repeat(2_000_000);
        assert_eq!(read(huge.as_bytes(), on).unwrap_err().problem, Problem::End);
    }

    #[test]
    fn records_spans() {
        let t = read(br#"{"k":["v",2]}"#, Input::BYTES).unwrap();
        let kinds: Vec<Kind> = t.nodes.iter().map(|n| n.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Object,
                Kind::String,
                Kind::Array,
                Kind::String,
                Kind::Number
            ]
        );
        assert_eq!(t.nodes[0].next, 5);
        assert_eq!(t.nodes[2].next, 5);
        assert_eq!((t.nodes[3].start, t.nodes[3].end), (7, 8));
        assert_eq!((t.nodes[0].start, t.nodes[0].end), (0, 13));
        let (t, end) = read_value(br#"[1,{"a":2}] tail"#, Input::BYTES).unwrap();
        assert_eq!((end, t.nodes.len(), t.depth), (11, 5, 2));
    }
}
