//! The entry for a messages array: its brackets and commas around the
//! elements `scan.rs` reads one at a time, and the errors that name an
//! element by its index. A large array is read by two threads. One thread
//! reads a messages array at about the speed of its string scanning; with
//! two cores, the second half can be read at the same time. The second
//! thread starts at a guess (the first `},{"role":"` after the middle, which
//! is where a message starts in `JSON.stringify` output) into a log of its
//! own; the first thread reads from the start and stops when an element
//! starts exactly there. Only then is the guess taken (the second log's
//! strings interned into the first's and its records appended); a wrong
//! guess, or an error in the second half, costs a sequential read of that
//! half, which names elements by their true index.

use memchr::memmem;

use super::scan::scan_element_as;
use super::Log;
use crate::error::{PruneError, Result};
use crate::json::lex::skip_ws;
use crate::json::Json;

/// Where the bytes of a scan come from, which decides what is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `JSON.stringify` output made in this process (the native side
    /// converted it from UTF-16): canonical JSON, valid UTF-8.
    Stringify,
    /// Anything else (a Buffer, a file): every message is checked and a
    /// non-canonical one re-serialized.
    Bytes,
}

/// Appends a record for every element of the JSON array in `input`; errors
/// name elements by their index plus `first_index`.
pub fn scan_array(input: &[u8], log: &mut Log, first_index: usize, source: Source) -> Result<()> {
    match source {
        Source::Stringify => scan_array_as::<true>(input, log, first_index),
        Source::Bytes => scan_array_as::<false>(input, log, first_index),
    }
}

/// How far a scan of the array's elements got.
enum Reached {
    /// The closing bracket (and nothing after it).
    End,
    /// The element at byte `at`, the `index`-th, where it was told to stop.
    Stop { at: usize, index: usize },
}

/// Reads the array's opening bracket and its elements, up to the end or to
/// the element starting at byte `stop`.
fn scan_prefix<const TRUSTED: bool>(
    input: &[u8],
    log: &mut Log,
    first_index: usize,
    stop: Option<usize>,
) -> Result<Reached> {
    let mut at = skip_ws(input, 0);
    match input.get(at) {
        Some(b'[') => {}
        None => {
            return Err(PruneError::invalid_json(format!(
                "the input holds no JSON value (it ends at byte {at})"
            )))
        }
        Some(_) => {
            return Err(match crate::json::parse_value(input) {
                Ok(v) => PruneError::not_array(type_name(&v)),
                Err(e) => PruneError::invalid_json(e.to_string()),
            })
        }
    }
    at = skip_ws(input, at + 1);
    if input.get(at) == Some(&b']') {
        return close(input, at).map(|()| Reached::End);
    }
    scan_elements::<TRUSTED>(input, at, log, first_index, stop)
}

/// Reads elements from the one starting at byte `at` (the `index`-th) to
/// the end of the array, or up to the element starting at byte `stop`.
fn scan_elements<const TRUSTED: bool>(
    input: &[u8],
    mut at: usize,
    log: &mut Log,
    mut index: usize,
    stop: Option<usize>,
) -> Result<Reached> {
    loop {
        if stop == Some(at) {
            return Ok(Reached::Stop { at, index });
        }
        at = scan_element_as::<TRUSTED>(input, at, index, log)?;
        at = skip_ws(input, at);
        match input.get(at) {
            Some(b',') => at = skip_ws(input, at + 1),
            Some(b']') => return close(input, at).map(|()| Reached::End),
            Some(&c) => {
                return Err(PruneError::invalid_json(format!(
                    "expected ',' or ']' after message {index}, found {} at byte {at}",
                    describe_byte(c)
                )))
            }
            None => {
                return Err(PruneError::invalid_json(format!(
                    "the array is not closed (the input ends at byte {at})"
                )))
            }
        }
        index += 1;
    }
}

fn close(input: &[u8], bracket: usize) -> Result<()> {
    let end = skip_ws(input, bracket + 1);
    if end < input.len() {
        return Err(PruneError::invalid_json(format!(
            "unexpected text after the array at byte {end}"
        )));
    }
    Ok(())
}

fn describe_byte(c: u8) -> String {
    if c.is_ascii_graphic() {
        format!("'{}'", c as char)
    } else {
        format!("byte 0x{c:02x}")
    }
}

fn type_name(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Num(_) => "a number",
        Json::Str(_) => "a string",
        Json::Arr(_) => "an array",
        Json::Obj(_) => "an object",
    }
}

/// Below this, one thread reads faster than two start.
const SPLIT_MIN_BYTES: usize = 1 << 20;

const MESSAGE_START: &[u8] = b"},{\"role\":\"";

fn scan_array_as<const TRUSTED: bool>(
    input: &[u8],
    log: &mut Log,
    first_index: usize,
) -> Result<()> {
    if input.len() < SPLIT_MIN_BYTES || rayon::current_num_threads() < 2 {
        return scan_prefix::<TRUSTED>(input, log, first_index, None).map(|_| ());
    }
    let mid = input.len() / 2;
    let Some(found) = memmem::find(&input[mid..], MESSAGE_START) else {
        return scan_prefix::<TRUSTED>(input, log, first_index, None).map(|_| ());
    };
    // The `{` of the guessed message.
    let split = mid + found + 2;
    let mut tail = Log {
        keeps_text: log.keeps_text,
        ..Log::default()
    };
    let (head, rest) = rayon::join(
        || scan_prefix::<TRUSTED>(input, log, first_index, Some(split)),
        || scan_elements::<TRUSTED>(input, split, &mut tail, 0, None),
    );
    match head? {
        Reached::End => Ok(()),
        Reached::Stop { at, index } => match rest {
            Ok(Reached::End) => {
                log.absorb(tail);
                Ok(())
            }
            _ => scan_elements::<TRUSTED>(input, at, log, index, None).map(|_| ()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs of messages; with `decoys`, each tool call's arguments hold
    /// the text the split looks for, so the guess lands inside a message.
    fn big_array(messages: usize, decoys: bool) -> String {
        let mut out = String::from("[");
        for i in 0..messages {
            if i > 0 {
                out.push(',');
            }
            let pad = "x".repeat(200 + i % 17);
            let args = if decoys {
                format!(r#"{{"p":[{{"a":1}},{{"role":"{pad}"}}]}}"#)
            } else {
                format!(r#"{{"p":"{pad}"}}"#)
            };
            out.push_str(&format!(
                r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"c{i}","arguments":{args}}},{{"type":"text","text":"}},{{\"role\":\"quoted"}}],"timestamp":{i}}},{{"role":"toolResult","toolCallId":"c{i}","toolName":"read","content":[{{"type":"text","text":"{pad}é"}}],"isError":false,"timestamp":{i}}}"#
            ));
        }
        out.push(']');
        out
    }

    fn sequential(input: &[u8], source: Source) -> Log {
        let mut log = Log::keeping_text();
        match source {
            Source::Stringify => scan_prefix::<true>(input, &mut log, 0, None),
            Source::Bytes => scan_prefix::<false>(input, &mut log, 0, None),
        }
        .unwrap();
        log
    }

    #[test]
    fn two_halves_read_as_one_thread_does() {
        for (json, source) in [
            (big_array(4000, false), Source::Stringify),
            (big_array(4000, false), Source::Bytes),
            (big_array(4000, true), Source::Stringify),
        ] {
            assert!(json.len() > SPLIT_MIN_BYTES);
            let one = sequential(json.as_bytes(), source);
            let mut two = Log::keeping_text();
            // The interner already holds strings, as a kept log's does.
            two.syms.intern(b"c3999");
            two.syms.intern(b"unrelated");
            scan_array(json.as_bytes(), &mut two, 0, source).unwrap();
            assert_eq!(two.len(), one.len());
            for i in 0..one.len() {
                let (a, b) = (&one.records[i], &two.records[i]);
                assert_eq!(two.text(&[], i), one.text(&[], i), "text of {i}");
                assert_eq!((a.len, a.role, a.content), (b.len, b.role, b.content));
                let text = |log: &Log, s: &super::super::Scalar| match s {
                    super::super::Scalar::Str(t) => log.syms.text(*t).to_vec(),
                    other => format!("{other:?}").into_bytes(),
                };
                assert_eq!(text(&one, &a.tool_call_id), text(&two, &b.tool_call_id));
                assert_eq!(text(&one, &a.timestamp), text(&two, &b.timestamp));
                let ids = |log: &Log, i: usize| {
                    log.blocks(i)
                        .iter()
                        .map(|blk| (blk.ty, text(log, &blk.id), blk.span, blk.args, blk.text))
                        .collect::<Vec<_>>()
                };
                assert_eq!(ids(&one, i), ids(&two, i), "blocks of {i}");
            }
        }
    }

    #[test]
    fn errors_in_the_second_half_name_the_true_index() {
        let json = big_array(4000, false);
        // Break a message past the middle.
        let at = json.len() * 3 / 4;
        let brace = at + json[at..].find(r#""isError":false"#).unwrap();
        let broken = format!("{}\"isError\":fals{}", &json[..brace], &json[brace + 15..]);
        let mut one = Log::default();
        let want = scan_prefix::<false>(broken.as_bytes(), &mut one, 0, None)
            .err()
            .unwrap()
            .to_string();
        let mut two = Log::default();
        let got = scan_array(broken.as_bytes(), &mut two, 0, Source::Bytes)
            .unwrap_err()
            .to_string();
        assert_eq!(got, want);
        assert!(got.contains("message "), "{got}");
    }
}
