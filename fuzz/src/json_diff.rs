//! The differential checks of the JSON layer. `tree_reader`: the one reader
//! (src/json/read.rs, through `parse_value` and the session-line input)
//! against the two readers it replaced (`oracle_json`): the same value or the
//! same error (message and byte) as the old `JSON.parse` into `Json`, and for
//! valid UTF-8 the same verdict (value, invalid, too deep), nodes, string
//! values and canonical flag as the old session-line reader. `scan_verdict`:
//! the render path's fast scan (src/record/scan.rs) takes a message as it
//! stands exactly when the tree reader calls it canonical.

use condense_native::{
    parse_value, read, scan_array, Input, Json, Kind, Log, Problem, Source, Value,
};

use crate::oracle_json::session::{parse as old_line, Parsed};
use crate::oracle_json::{parse as old_json, tape, wtf8};

fn same_json(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Num(x), Json::Num(y)) => x.to_bits() == y.to_bits(),
        (Json::Arr(x), Json::Arr(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Json::Obj(x), Json::Obj(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k, p), (l, q))| k == l && same_json(p, q))
        }
        _ => a == b,
    }
}

fn old_kind(k: tape::Kind) -> Kind {
    match k {
        tape::Kind::Null => Kind::Null,
        tape::Kind::False => Kind::False,
        tape::Kind::True => Kind::True,
        tape::Kind::Number => Kind::Number,
        tape::Kind::String => Kind::String,
        tape::Kind::Array => Kind::Array,
        tape::Kind::Object => Kind::Object,
    }
}

/// The old session reader's limit and answers, asked of the new reader.
const OLD_LINE: Input = Input {
    utf8: true,
    max_depth: 1000,
    read_past_limit: true,
};

/// New reader against old readers on one text.
pub fn tree_reader(text: &[u8]) {
    match (old_json::parse_value(text), parse_value(text)) {
        (Ok(a), Ok(b)) => assert!(same_json(&a, &b), "values differ: {a:?} / {b:?}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "errors differ"),
        (a, b) => panic!("old {a:?}, new {b:?}"),
    }
    if std::str::from_utf8(text).is_err() {
        return;
    }
    match (old_line(text), read(text, OLD_LINE)) {
        (Parsed::Value(old), Ok(new)) => {
            assert_eq!(old.canonical, new.canonical, "canonical verdicts differ");
            assert_eq!(old.nodes.len(), new.nodes.len(), "node counts differ");
            let root = Value::root(text, &new);
            for (i, (o, n)) in old.nodes.iter().zip(&new.nodes).enumerate() {
                assert_eq!(old_kind(o.kind), n.kind, "node {i}");
                assert_eq!(
                    (o.start, o.end, o.next),
                    (n.start, n.end, n.next),
                    "node {i}"
                );
                if n.kind == Kind::String {
                    // The old WTF-8 value, as canonical text.
                    let raw = &text[o.start as usize..o.end as usize];
                    let mut quoted = Vec::new();
                    wtf8::write_json(&mut quoted, &wtf8::decode(raw, o.escaped));
                    let want = &quoted[1..quoted.len() - 1];
                    let got = root.node_value(i as u32).string().unwrap();
                    assert_eq!(want, &*got, "string node {i}");
                }
            }
        }
        (Parsed::TooDeep, Err(e)) => assert_eq!(e.problem, Problem::TooDeep),
        (Parsed::Invalid, Err(e)) => assert_ne!(e.problem, Problem::TooDeep),
        (old, new) => panic!("old {old:?}, new {new:?}"),
    }
}

/// The fast scan's verdict against the tree reader's, for a text read as
/// the one message of an array.
pub fn scan_verdict(text: &[u8]) {
    let mut input = b"[".to_vec();
    input.extend_from_slice(text);
    input.push(b']');
    let mut log = Log::default();
    let scanned = scan_array(&input, &mut log, 0, Source::Bytes);
    match read(text, Input::BYTES) {
        Ok(tape) => {
            assert!(
                scanned.is_ok(),
                "the tree reads it, the scan refuses: {scanned:?}"
            );
            assert_eq!(log.len(), 1);
            assert_eq!(
                log.records[0].text.owned, !tape.canonical,
                "the scan's canonical verdict differs from the reader's"
            );
            let stored = log.text(&input, 0).to_vec();
            // What the scan keeps is JSON.stringify's text of the value.
            let again = read(&stored, Input::BYTES).expect("the kept text reads");
            assert!(again.canonical, "the kept text is not canonical");
            if tape.canonical {
                let mut trusted = Log::default();
                scan_array(&input, &mut trusted, 0, Source::Stringify)
                    .expect("canonical text scans trusted");
                assert_eq!(trusted.len(), 1);
                assert_eq!(trusted.records[0].len, log.records[0].len);
                assert!(!trusted.records[0].text.owned);
            }
        }
        Err(e) if e.problem != Problem::Trailing && !text.iter().all(u8::is_ascii_whitespace) => {
            assert!(
                scanned.is_err(),
                "the scan reads what the tree refuses ({e})"
            );
        }
        Err(_) => {}
    }
}
