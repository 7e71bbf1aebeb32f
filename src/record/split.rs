//! A large array read by two threads. One thread reads a messages array at
//! about the speed of its string scanning; with two cores, the second half
//! can be read at the same time. The second thread starts at a guess (the
//! first `},{"role":"` after the middle, which is where a message starts in
//! `JSON.stringify` output) into a log of its own; the first thread reads
//! from the start and stops when an element starts exactly there. Only then
//! is the guess taken (the second log's strings interned into the first's
//! and its records appended); a wrong guess, or an error in the second half,
//! costs a sequential read of that half, which names elements by their true
//! index.

use memchr::memmem;

use super::scan::{scan_elements, scan_prefix, Reached};
use super::Log;
use crate::error::Result;

/// Below this, one thread reads faster than two start.
const SPLIT_MIN_BYTES: usize = 1 << 20;

const MESSAGE_START: &[u8] = b"},{\"role\":\"";

pub(super) fn scan_array_as<const TRUSTED: bool>(
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
    use super::super::scan::{scan_array, Source};
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
