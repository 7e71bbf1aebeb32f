//! From the file's bytes to its kept values, as pi's reader (A.2) does it:
//! decode UTF-8 with U+FFFD for invalid sequences, split on LF only (a CR
//! stays and JSON.parse skips it), `JSON.parse` each line, drop a line that
//! throws or whose value is falsy, keep every other value.
//!
//! Splitting the bytes before decoding gives the same lines as decoding
//! first: LF is never part of a multi-byte sequence, and a sequence it cuts
//! short decodes to U+FFFD either way (Node's StringDecoder, which pi uses,
//! agrees with whole-text decoding at any chunk boundary). pi's `trim()` test
//! for blank lines needs no code: a blank line fails JSON.parse anyway and
//! is dropped the same way. Lines are parsed on rayon's pool when the file is
//! large; text stays in the input unless a line held invalid UTF-8.
//!
//! Depth: a message entry holds its message one level below the entry, and
//! the render path counts the message itself as level 1 (`json::lex`), so a
//! line may nest one level past `MAX_DEPTH` when only its `message` does;
//! any other member is measured from the entry, as the projections
//! (`project.rs`) keep those members at their level.

use std::borrow::Cow;

use rayon::prelude::*;

use super::error::{Result, SessionError};
use crate::error::Code;
use crate::json::lex::MAX_DEPTH;
use crate::json::read::{read_reusing, Input, Problem};
use crate::json::tape::{Kind, Node, Tape};
use crate::json::view::Value;

/// Files at least this large are parsed in parallel.
pub const PARALLEL_MIN_BYTES: usize = 1 << 20;

/// Where a line's text lives.
#[derive(Debug)]
pub enum LineText {
    /// `start..end` of the file's bytes.
    Input(usize, usize),
    /// The line after replacing invalid UTF-8 (rare).
    Decoded(Box<[u8]>),
}

/// An entry's `type`, read once per line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EntryKind {
    Session,
    Message,
    CustomMessage,
    Custom,
    Compaction,
    BranchSummary,
    ContextEdit,
    #[default]
    Other,
}

impl EntryKind {
    pub fn of_name(name: &str) -> Option<Self> {
        Some(match name {
            "session" => EntryKind::Session,
            "message" => EntryKind::Message,
            "custom_message" => EntryKind::CustomMessage,
            "custom" => EntryKind::Custom,
            "compaction" => EntryKind::Compaction,
            "branch_summary" => EntryKind::BranchSummary,
            "context_edit" => EntryKind::ContextEdit,
            _ => return None,
        })
    }
}

/// No such member.
pub const ABSENT: u32 = u32::MAX;

/// The members every reader asks for, found once per line (node indices,
/// [`ABSENT`] when missing): entries are read many times over (paths,
/// context, state, model calls), their members looked up once.
#[derive(Clone, Copy, Debug)]
pub struct Head {
    pub kind: EntryKind,
    pub id: u32,
    pub parent_id: u32,
    pub timestamp: u32,
    pub message: u32,
    pub custom_type: u32,
    pub data: u32,
}

impl Head {
    fn of(v: Value<'_>) -> Self {
        let mut head = Head {
            kind: EntryKind::Other,
            id: ABSENT,
            parent_id: ABSENT,
            timestamp: ABSENT,
            message: ABSENT,
            custom_type: ABSENT,
            data: ABSENT,
        };
        for (k, value) in v.members() {
            let Some(name) = k.string() else { continue };
            let slot = match &*name {
                b"type" => {
                    head.kind = std::str::from_utf8(&value.string().unwrap_or_default())
                        .ok()
                        .filter(|_| value.kind() == Kind::String)
                        .and_then(EntryKind::of_name)
                        .unwrap_or(EntryKind::Other);
                    continue;
                }
                b"id" => &mut head.id,
                b"parentId" => &mut head.parent_id,
                b"timestamp" => &mut head.timestamp,
                b"message" => &mut head.message,
                b"customType" => &mut head.custom_type,
                b"data" => &mut head.data,
                _ => continue,
            };
            // A repeated key: the last one wins, as in JSON.parse.
            *slot = value.index();
        }
        head
    }
}

/// A kept value: its 1-based line number, text, tape and head.
#[derive(Debug)]
pub struct Line {
    pub number: u32,
    pub text: LineText,
    pub tape: Tape,
    pub head: Head,
}

impl Line {
    pub fn text<'s>(&'s self, input: &'s [u8]) -> &'s [u8] {
        match &self.text {
            LineText::Input(start, end) => &input[*start..*end],
            LineText::Decoded(text) => text,
        }
    }

    pub fn root<'s>(&'s self, input: &'s [u8]) -> Value<'s> {
        Value::root(self.text(input), &self.tape)
    }
}

/// How a line is read: its UTF-8 is checked (or replaced) before, and one
/// level more is read so that a message at the render path's limit passes.
const LINE: Input = Input {
    utf8: true,
    max_depth: MAX_DEPTH + 1,
    read_past_limit: true,
};

/// Whether a line nested one level past `MAX_DEPTH` is within the limit
/// the render path would hold its values to: only a message entry's
/// `message` may reach that level.
fn depth_allowed(v: Value<'_>, head: &Head) -> bool {
    head.kind == EntryKind::Message
        && v.members()
            .all(|(_, m)| m.index() == head.message || m.depth() < MAX_DEPTH)
}

fn too_deep(number: u32) -> SessionError {
    SessionError {
        kind: Code::TooDeep,
        line: Some(number),
        message: format!("nesting deeper than {MAX_DEPTH} levels"),
    }
}

fn read_line(
    input: &[u8],
    number: u32,
    (start, end): (usize, usize),
    check_utf8: bool,
    scratch: &mut Vec<Node>,
) -> Result<Option<Line>> {
    let raw = &input[start..end];
    let text: Cow<'_, [u8]> = if check_utf8 && simdutf8::basic::from_utf8(raw).is_err() {
        Cow::Owned(String::from_utf8_lossy(raw).into_owned().into_bytes())
    } else {
        Cow::Borrowed(raw)
    };
    match read_reusing(&text, LINE, scratch) {
        Err(e) if e.problem == Problem::TooDeep => Err(too_deep(number)),
        Err(_) => Ok(None),
        Ok(tape) => {
            let root = Value::root(&text, &tape);
            if !root.truthy() {
                return Ok(None);
            }
            let head = Head::of(root);
            if tape.depth as usize > MAX_DEPTH && !depth_allowed(root, &head) {
                return Err(too_deep(number));
            }
            let text = match text {
                Cow::Borrowed(_) => LineText::Input(start, end),
                Cow::Owned(owned) => LineText::Decoded(owned.into_boxed_slice()),
            };
            Ok(Some(Line {
                number,
                text,
                tape,
                head,
            }))
        }
    }
}

/// The kept values of a file, in order. The first too-deep line (in file
/// order) is an error.
pub fn read_lines(input: &[u8]) -> Result<Vec<Line>> {
    let check_utf8 = simdutf8::basic::from_utf8(input).is_err();
    let mut spans = Vec::new();
    let mut start = 0;
    for lf in memchr::memchr_iter(b'\n', input) {
        spans.push((start, lf));
        start = lf + 1;
    }
    spans.push((start, input.len()));
    if spans.len() > u32::MAX as usize {
        return Err(SessionError::new(Code::InvalidSession, "too many lines"));
    }
    let read = |scratch: &mut Vec<Node>, (i, &span): (usize, &(usize, usize))| {
        read_line(input, i as u32 + 1, span, check_utf8, scratch)
    };
    let results: Vec<Result<Option<Line>>> = if input.len() >= PARALLEL_MIN_BYTES {
        spans
            .par_iter()
            .enumerate()
            .with_min_len(64)
            .map_init(Vec::new, read)
            .collect()
    } else {
        let mut scratch = Vec::new();
        spans
            .iter()
            .enumerate()
            .map(|item| read(&mut scratch, item))
            .collect()
    };
    let mut lines = Vec::with_capacity(results.len());
    for r in results {
        if let Some(mut line) = r? {
            line.tape.ordinal = lines.len() as u32;
            lines.push(line);
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(input: &[u8]) -> Vec<(u32, String)> {
        read_lines(input)
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l.number,
                    String::from_utf8_lossy(l.root(input).span()).into_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn keeps_truthy_values_drops_the_rest() {
        let input =
            b"{\"a\":1}\r\n\n  \nnull\nfalse\n0\n-0\n\"\"\n42\n[1]\n\"s\"\n{broken\n{\"b\":2}";
        assert_eq!(
            kept(input),
            [
                (1, "{\"a\":1}".to_string()),
                (9, "42".to_string()),
                (10, "[1]".to_string()),
                (11, "\"s\"".to_string()),
                (13, "{\"b\":2}".to_string()),
            ]
        );
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let input = b"{\"a\":\"x\xff\xe2\x82y\"}\n{\"b\":1}";
        let lines = read_lines(input).unwrap();
        let v = lines[0].root(input).get("a").unwrap();
        assert_eq!(&*v.string().unwrap(), "x\u{fffd}\u{fffd}y".as_bytes());
        assert!(matches!(lines[1].text, LineText::Input(..)));
    }

    #[test]
    fn a_byte_order_mark_makes_the_line_invalid() {
        assert!(kept(b"\xef\xbb\xbf{\"type\":\"session\"}\n{\"x\":1}")
            .iter()
            .all(|(n, _)| *n == 2));
    }

    #[test]
    fn too_deep_lines_are_errors_naming_the_line() {
        let deep = format!(
            "{{}}\n{}{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        let e = read_lines(deep.as_bytes()).unwrap_err();
        assert_eq!((e.kind, e.line), (Code::TooDeep, Some(2)));
        // Deep but malformed: JSON.parse throws, so pi drops it.
        let broken = format!("{}{}", "[".repeat(MAX_DEPTH + 5), "]".repeat(MAX_DEPTH + 4));
        assert!(read_lines(broken.as_bytes()).unwrap().is_empty());
    }

    /// A message `levels` deep (the message object is level 1), alone and as
    /// the `message` of an entry, and the same depth under another member.
    fn nested(levels: usize) -> (String, String, String) {
        let inner = "[".repeat(levels - 1) + &"]".repeat(levels - 1);
        let message = format!(r#"{{"role":"user","content":{inner}}}"#);
        let entry = format!(r#"{{"type":"message","id":"a","message":{message}}}"#);
        let custom = format!(r#"{{"type":"custom","id":"a","data":{message}}}"#);
        (message, entry, custom)
    }

    #[test]
    fn a_message_at_the_limit_is_read_as_the_render_path_reads_it() {
        use crate::record::{scan_array, Log, Source};
        let render = |m: &str| {
            scan_array(
                format!("[{m}]").as_bytes(),
                &mut Log::default(),
                0,
                Source::Bytes,
            )
            .map_err(|e| e.code)
        };
        let (message, entry, custom) = nested(MAX_DEPTH);
        assert!(render(&message).is_ok());
        assert_eq!(read_lines(entry.as_bytes()).unwrap().len(), 1);
        // Measured from the entry, `data` at that depth is one level over.
        let e = read_lines(custom.as_bytes()).unwrap_err();
        assert_eq!(e.kind, Code::TooDeep);
        let (message, entry, _) = nested(MAX_DEPTH + 1);
        assert_eq!(render(&message), Err(crate::error::Code::TooDeep));
        let e = read_lines(entry.as_bytes()).unwrap_err();
        assert_eq!((e.kind, e.line), (Code::TooDeep, Some(1)));
    }

    #[test]
    fn parallel_and_sequential_agree() {
        let mut big = Vec::new();
        for i in 0..40_000 {
            big.extend_from_slice(
                format!("{{\"i\":{i},\"pad\":\"{}\"}}\n", "x".repeat(20)).as_bytes(),
            );
            if i % 7 == 0 {
                big.extend_from_slice(b"garbage\n");
            }
        }
        assert!(big.len() >= PARALLEL_MIN_BYTES);
        let lines = read_lines(&big).unwrap();
        assert_eq!(lines.len(), 40_000);
        assert!(lines.windows(2).all(|w| w[0].number < w[1].number));
        assert_eq!(
            lines[39_999].root(&big).get("i").unwrap().number(),
            Some(39_999.0)
        );
    }
}
