//! Which context and state each model call of a session saw (SESSIONS.md
//! C.3). For an assistant entry A, the request saw the leaf L: the nearest
//! ancestor written no later than the request started. Entries between L and
//! A were written during A's `message_end` (a flush) or its render. The file
//! tells when lines were written, so the walk goes back from A while an
//! entry's ISO time is later than A's `message.timestamp`; a 2.9.1
//! `context-prune-flush-metrics` entry with `trigger: "message-end"` also
//! marks the flush group before it (its summaries, index, frontier, stats,
//! chain and alias entries) as written after the request began.
//!
//! An entry whose time is unreadable (NaN, or a local time) counts as
//! written before the request; so does every entry when A's own timestamp is
//! not a finite number.

use super::date::{date_of, DateValue};
use super::file::{Entry, SessionFile};

/// One model call: path positions of its assistant entry and of its leaf
/// (None when nothing on the path was written before the request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelCall {
    pub assistant: usize,
    pub leaf: Option<usize>,
}

const FLUSH_GROUP: [&str; 7] = [
    "context-prune-dedup-alias",
    "context-prune-index",
    "context-prune-frontier",
    "context-prune-stats",
    "context-prune-chain",
    "context-prune-diagnostic",
    "context-prune-flush-metrics",
];

fn is_message_end_marker(e: &Entry<'_>) -> bool {
    e.is("custom")
        && e.custom_type_is("context-prune-flush-metrics")
        && e.data()
            .and_then(|d| d.get("trigger"))
            .is_some_and(|t| t.is_str("message-end"))
}

fn in_flush_group(e: &Entry<'_>) -> bool {
    (e.is("custom") && FLUSH_GROUP[..6].iter().any(|t| e.custom_type_is(t)))
        || (e.is("custom_message") && e.custom_type_is("context-prune-summary"))
}

fn written_after(e: &Entry<'_>, request_start: Option<f64>) -> bool {
    let Some(start) = request_start else {
        return false;
    };
    matches!(date_of(e.timestamp()), DateValue::Time(t) if t > start)
}

/// Every model call on `path` (entry indices, root first), in order.
pub fn model_calls(file: &SessionFile<'_>, path: &[u32]) -> Vec<ModelCall> {
    let mut calls = Vec::new();
    for (i, &index) in path.iter().enumerate() {
        let a = file.entry(index as usize);
        if !(a.is("message") && a.message_role_is("assistant")) {
            continue;
        }
        let request_start = a
            .message()
            .and_then(|m| m.get("timestamp"))
            .and_then(|t| t.number())
            .filter(|t| t.is_finite());
        let mut leaf = None;
        let mut in_group = false;
        for j in (0..i).rev() {
            let e = file.entry(path[j] as usize);
            if is_message_end_marker(&e) {
                in_group = true;
                continue;
            }
            if (in_group && in_flush_group(&e)) || written_after(&e, request_start) {
                continue;
            }
            leaf = Some(j);
            break;
        }
        calls.push(ModelCall { assistant: i, leaf });
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessionfile::path::{path_to, Leaf};

    #[test]
    fn leaves_skip_what_message_end_wrote() {
        let lines = [
            r#"{"type":"session","version":3,"id":"s"}"#,
            r#"{"type":"message","id":"u","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"user","timestamp":1704067200000}}"#,
            r#"{"type":"custom_message","customType":"context-prune-summary","id":"s1","parentId":"u","timestamp":"2024-01-01T00:00:05.000Z"}"#,
            r#"{"type":"custom","customType":"context-prune-index","id":"i1","parentId":"s1","timestamp":"2024-01-01T00:00:05.000Z"}"#,
            r#"{"type":"message","id":"a1","parentId":"i1","timestamp":"2024-01-01T00:00:05.001Z","message":{"role":"assistant","timestamp":1704067201000}}"#,
            // Same millisecond as the request: only the marker tells.
            r#"{"type":"custom","customType":"context-prune-frontier","id":"f","parentId":"a1","timestamp":"2024-01-01T00:00:06.000Z"}"#,
            r#"{"type":"custom","customType":"context-prune-flush-metrics","id":"m","parentId":"f","timestamp":"2024-01-01T00:00:06.000Z","data":{"trigger":"message-end"}}"#,
            r#"{"type":"message","id":"a2","parentId":"m","timestamp":"2024-01-01T00:00:06.000Z","message":{"role":"assistant","timestamp":1704067206000}}"#,
        ];
        let f = SessionFile::parse(lines.join("\n").into_bytes()).unwrap();
        let p = path_to(&f, &Leaf::Active).unwrap();
        assert_eq!(
            model_calls(&f, &p.entries),
            [
                ModelCall {
                    assistant: 3,
                    leaf: Some(0)
                },
                ModelCall {
                    assistant: 6,
                    leaf: Some(3)
                }
            ]
        );
    }
}
