//! Phase 1: summarized tool results become stubs pointing at the summary.

use crate::hash::HashSet;
use std::borrow::Cow;

use super::{Msg, Role, Stats};
use crate::config::Config;
use crate::error::Result;
use crate::state::State;
use crate::value::{Ty, Val, V};

pub fn run(
    msgs: &mut [Msg<'_>],
    state: &State,
    config: &Config,
    stats: &mut Stats,
) -> Result<bool> {
    let grace = recovery_grace_ids(msgs, config.recovery_grace_turns);
    let mut changed = false;
    for m in msgs.iter_mut() {
        let v = m.view();
        if m.role != Role::ToolResult || !state.is_summarized(v.get("toolCallId")) {
            continue;
        }
        let Some(id) = v.get("toolCallId").and_then(|i| i.as_str()) else {
            continue;
        };
        let record = state.record(id);
        if record.is_some_and(|r| config.protection.protects(r.get("toolName"), r.get("args"))) {
            continue;
        }
        if grace.contains(id) {
            continue;
        }
        let text = stub_text(state, id, record);
        m.val = stub_message(v, text);
        m.edit.stubbed = true;
        stats.stubbed += 1;
        changed = true;
    }
    Ok(changed)
}

/// Ids of `context_tree_query` results within the last `grace` user turns.
fn recovery_grace_ids(msgs: &[Msg<'_>], grace: f64) -> HashSet<String> {
    let mut ids = HashSet::default();
    // `recoveryGraceTurns > 0` is false for NaN too.
    if grace.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return ids;
    }
    let users = msgs.iter().filter(|m| m.role == Role::User).count();
    let mut seen = 0usize;
    for m in msgs {
        let v = m.view();
        if m.role == Role::User {
            seen += 1;
        }
        if m.role == Role::ToolResult
            && v.get("toolName")
                .is_some_and(|n| n.is_str("context_tree_query"))
        {
            if let Some(id) = v.get("toolCallId").and_then(|i| i.as_str()) {
                if ((users - seen) as f64) <= grace {
                    ids.insert(id.to_owned());
                }
            }
        }
    }
    ids
}

fn text_or(v: Option<V<'_, '_>>, missing: &str) -> String {
    v.map_or_else(|| missing.to_owned(), |v| v.to_js_string().into_owned())
}

/// `x ?? fallback` rendered with `String()`.
fn text_or_nullish(v: Option<V<'_, '_>>, fallback: &str) -> String {
    match v {
        Some(v) if v.ty() != Ty::Null => v.to_js_string().into_owned(),
        _ => fallback.to_owned(),
    }
}

fn stub_text(state: &State, id: &str, record: Option<V<'_, 'static>>) -> String {
    let reference = state.short_ref_or_id(id);
    let spill = record
        .and_then(|r| r.get("spillPath"))
        .filter(|p| p.truthy());
    match (record, spill) {
        (Some(r), Some(path)) => [
            format!(
                "[Oversized output spilled to file \u{2014} {} bytes.]",
                text_or_nullish(r.get("spillBytes"), "?")
            ),
            format!("Tool: {}", text_or(r.get("toolName"), "undefined")),
            "Preview (head):".to_owned(),
            text_or_nullish(r.get("resultPreview"), ""),
            format!("Full output \u{2014} read this file (offset/limit supported): {}", path.to_js_string()),
            format!("Or use context_tree_query with ref `{reference}`."),
        ]
        .join("\n"),
        _ => format!("[Summarized in pruner summary, ref `{reference}`. Use context_tree_query to retrieve full output.]"),
    }
}

fn stub_message<'t>(original: V<'_, 't>, text: String) -> Val<'t> {
    let field = |k: &'static str, v: Val<'t>| (Cow::Borrowed(k), v);
    let mut entries = vec![field("role", Val::str("toolResult"))];
    if let Some(id) = original.get("toolCallId") {
        entries.push(field("toolCallId", id.to_val()));
    }
    if let Some(name) = original.get("toolName") {
        entries.push(field("toolName", name.to_val()));
    }
    let block = Val::Obj(vec![
        field("type", Val::str("text")),
        field("text", Val::str(text)),
    ]);
    entries.push(field("content", Val::Arr(vec![block])));
    entries.push(field("isError", Val::Bool(false)));
    if let Some(ts) = original.get("timestamp") {
        entries.push(field("timestamp", ts.to_val()));
    }
    Val::Obj(entries)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{expect_pruned, expect_unchanged, plain_stub, run, text};
    use super::super::Stats;

    fn stubbed(n: u32) -> Stats {
        Stats {
            stubbed: n,
            ..Stats::default()
        }
    }

    #[test]
    fn plain_stub_keeps_id_name_and_timestamp_only() {
        let input = concat!(
            r#"[{"role":"user","content":"go","timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","isError":true,"#,
            r#""content":[{"type":"text","text":"raw output"}],"details":{"n":1},"timestamp":2}]"#
        );
        let expected = concat!(
            r#"[{"role":"user","content":"go","timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","#,
            r#""text":"[Summarized in pruner summary, ref `t1`. Use context_tree_query to retrieve full output.]"}],"#,
            r#""isError":false,"timestamp":2}]"#
        );
        let p = expect_pruned(
            input,
            r#"{"records":{"c1":{"toolName":"read","args":{"path":"a.ts"}}},"shortRefs":{"c1":"t1"}}"#,
            "{}",
            None,
            expected,
            stubbed(1),
        );
        // JSON.stringify(...).length as the reference reports them.
        assert_eq!((p.before_chars, p.after_chars), (199, 261));
    }

    #[test]
    fn spilled_stubs_format_bytes_and_preview_like_js() {
        let input = concat!(
            "[",
            r#"{"role":"toolResult","toolCallId":"s1","toolName":"bash","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"s2","toolName":"bash","content":[],"isError":false,"timestamp":2},"#,
            r#"{"role":"toolResult","toolCallId":"s3","toolName":"bash","content":[],"isError":false,"timestamp":3},"#,
            r#"{"role":"toolResult","toolCallId":"s4","content":[],"isError":false},"#,
            r#"{"role":"toolResult","toolCallId":"s5","toolName":"bash","content":[],"isError":false,"timestamp":null}"#,
            "]"
        );
        let state = concat!(
            r#"{"records":{"#,
            r#""s1":{"toolName":"bash","args":{},"spillPath":"/tmp/s1.txt","spillBytes":2048,"resultPreview":"head line"},"#,
            r#""s2":{"toolName":"bash","args":{},"spillPath":"/tmp/s2.txt","spillBytes":null,"resultPreview":null},"#,
            r#""s3":{"toolName":"bash","args":{},"spillPath":"/tmp/s3.txt","spillBytes":1e21,"resultPreview":"p"},"#,
            r#""s4":{"spillPath":"/tmp/s4.txt"},"#,
            r#""s5":{"toolName":"bash","spillPath":"","spillBytes":5}},"#,
            r#""shortRefs":{"s1":"t1","s2":"t2","s3":"t3","s4":"t4"}}"#
        );
        let expected = concat!(
            "[",
            r#"{"role":"toolResult","toolCallId":"s1","toolName":"bash","content":[{"type":"text","text":"[Oversized output spilled to file — 2048 bytes.]\nTool: bash\nPreview (head):\nhead line\nFull output — read this file (offset/limit supported): /tmp/s1.txt\nOr use context_tree_query with ref `t1`."}],"isError":false,"timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"s2","toolName":"bash","content":[{"type":"text","text":"[Oversized output spilled to file — ? bytes.]\nTool: bash\nPreview (head):\n\nFull output — read this file (offset/limit supported): /tmp/s2.txt\nOr use context_tree_query with ref `t2`."}],"isError":false,"timestamp":2},"#,
            r#"{"role":"toolResult","toolCallId":"s3","toolName":"bash","content":[{"type":"text","text":"[Oversized output spilled to file — 1e+21 bytes.]\nTool: bash\nPreview (head):\np\nFull output — read this file (offset/limit supported): /tmp/s3.txt\nOr use context_tree_query with ref `t3`."}],"isError":false,"timestamp":3},"#,
            r#"{"role":"toolResult","toolCallId":"s4","content":[{"type":"text","text":"[Oversized output spilled to file — ? bytes.]\nTool: undefined\nPreview (head):\n\nFull output — read this file (offset/limit supported): /tmp/s4.txt\nOr use context_tree_query with ref `t4`."}],"isError":false},"#,
            r#"{"role":"toolResult","toolCallId":"s5","toolName":"bash","content":[{"type":"text","text":"[Summarized in pruner summary, ref `s5`. Use context_tree_query to retrieve full output.]"}],"isError":false,"timestamp":null}"#,
            "]"
        );
        let p = expect_pruned(input, state, "{}", None, expected, stubbed(5));
        // The em dashes are one unit each, three bytes each in UTF-8.
        assert_eq!((p.before_chars, p.after_chars), (503, 1457));
        assert_eq!(p.messages.unwrap().len(), 1457 + 2 * 8);
    }

    #[test]
    fn aliases_resolve_records_and_refs() {
        let tr = |id: &str, ts: u32| {
            format!(
                r#"{{"role":"toolResult","toolCallId":{id},"toolName":"grep","content":[],"isError":false,"timestamp":{ts}}}"#
            )
        };
        let spilled = |id: &str, ts: u32, reference: &str| {
            format!(
                concat!(
                    r#"{{"role":"toolResult","toolCallId":"{}","toolName":"grep","content":[{{"type":"text","text":"#,
                    r#""[Oversized output spilled to file — 0 bytes.]\nTool: grep\nPreview (head):\nx\n"#,
                    r#"Full output — read this file (offset/limit supported): /s/c1\n"#,
                    r#"Or use context_tree_query with ref `{}`."}}],"isError":false,"timestamp":{}}}"#
                ),
                id, reference, ts
            )
        };
        let input = format!(
            "[{}]",
            [
                tr(r#""c1""#, 1),
                tr(r#""d1""#, 2),
                tr(r#""e1""#, 3),
                tr(r#""m1""#, 4),
                tr(r#""zz""#, 5),
                tr("5", 6),
            ]
            .join(",")
        );
        // d1: dedup alias of c1 (shares its ref); e1: an empty dedup target,
        // found through refAliases, no short ref of its own; m1: a dedup
        // target missing from records, so a plain stub; zz: not summarized;
        // 5: a numeric id is never summarized, even with a "5" record.
        let state = concat!(
            r#"{"records":{"c1":{"toolName":"grep","args":{},"spillPath":"/s/c1","spillBytes":0,"resultPreview":"x"},"#,
            r#""5":{"toolName":"grep","args":{}}},"#,
            r#""dedupAliases":{"d1":"c1","e1":"","m1":"missing"},"refAliases":{"e1":"c1"},"#,
            r#""shortRefs":{"c1":"t1","d1":"t1"}}"#
        );
        let expected = format!(
            "[{}]",
            [
                spilled("c1", 1, "t1"),
                spilled("d1", 2, "t1"),
                spilled("e1", 3, "e1"),
                plain_stub("m1", "grep", "4", "m1"),
                tr(r#""zz""#, 5),
                tr("5", 6),
            ]
            .join(",")
        );
        let p = expect_pruned(&input, state, "{}", None, &expected, stubbed(4));
        assert_eq!((p.before_chars, p.after_chars), (604, 1336));
    }

    #[test]
    fn protection_by_record_tool_and_backslash_path() {
        let tr = |id: &str, tool: &str, ts: u32| {
            format!(
                r#"{{"role":"toolResult","toolCallId":"{id}","toolName":"{tool}","content":[],"isError":false,"timestamp":{ts}}}"#
            )
        };
        let input = format!(
            "[{}]",
            [
                tr("p1", "other", 1),
                tr("p2", "read", 2),
                tr("p3", "read", 3),
                tr("p4", "read", 4),
                tr("p5", "read", 5),
                tr("p6", "bash", 6),
            ]
            .join(",")
        );
        // p1: the record's tool (not the message's) is protected; p2, p3:
        // Windows paths under src/ match `src/**/*.rs` (`**/` may be empty);
        // p4: outside src/; p5: a non-string path; p6: alias of p1.
        let state = concat!(
            r#"{"records":{"p1":{"toolName":"bash","args":{"command":"ls"}},"#,
            r#""p2":{"toolName":"read","args":{"path":"src\\a\\b.rs"}},"#,
            r#""p3":{"toolName":"read","args":{"path":"src\\main.rs"}},"#,
            r#""p4":{"toolName":"read","args":{"path":"docs\\x.rs"}},"#,
            r#""p5":{"toolName":"read","args":{"path":42}}},"dedupAliases":{"p6":"p1"}}"#
        );
        let config =
            r#"{"protection":{"protectedTools":["bash"],"protectedPaths":["src/**/*.rs"]}}"#;
        let expected = format!(
            "[{}]",
            [
                tr("p1", "other", 1),
                tr("p2", "read", 2),
                tr("p3", "read", 3),
                plain_stub("p4", "read", "4", "p4"),
                plain_stub("p5", "read", "5", "p5"),
                tr("p6", "bash", 6),
            ]
            .join(",")
        );
        let p = expect_pruned(&input, state, config, None, &expected, stubbed(2));
        assert_eq!((p.before_chars, p.after_chars), (608, 836));

        // Without the protection section every summarized result is stubbed.
        let p = run(&input, state, "{}", None).unwrap();
        assert_eq!(p.stats.stubbed, 6);
        assert!(text(&p).contains(&plain_stub("p1", "other", "1", "p1")));
    }

    #[test]
    fn protection_alone_never_changes_unsummarized_results() {
        expect_unchanged(
            r#"[{"role":"toolResult","toolCallId":"a","toolName":"read","content":[],"isError":false,"timestamp":1}]"#,
            r#"{"records":{"b":{"toolName":"read","args":{}}}}"#,
            r#"{"protection":{"protectedTools":["read"],"protectedPaths":[]}}"#,
            None,
        );
    }

    #[test]
    fn recovery_grace_counts_user_turns_from_the_end() {
        let user =
            |n: u32, ts: u32| format!(r#"{{"role":"user","content":"u{n}","timestamp":{ts}}}"#);
        let tr = |id: &str, tool: &str, ts: u32| {
            format!(
                r#"{{"role":"toolResult","toolCallId":"{id}","toolName":"{tool}","content":[],"isError":false,"timestamp":{ts}}}"#
            )
        };
        const CTQ: &str = "context_tree_query";
        // Three users; q1 is 2 user turns back, q2 1, q3 0; r2 is not a
        // context_tree_query result and never gets grace.
        let results = [
            ("q1", CTQ, 2),
            ("q2", CTQ, 4),
            ("r2", "read", 5),
            ("q3", CTQ, 7),
        ];
        let build = |stub: &dyn Fn(&str) -> bool| {
            let r = |k: usize| {
                let (id, tool, ts) = results[k];
                if stub(id) {
                    plain_stub(id, tool, &ts.to_string(), id)
                } else {
                    tr(id, tool, ts)
                }
            };
            format!(
                "[{}]",
                [user(1, 1), r(0), user(2, 3), r(1), r(2), user(3, 6), r(3)].join(",")
            )
        };
        let input = build(&|_| false);
        assert_eq!(input.encode_utf16().count(), 582);
        let state = concat!(
            r#"{"records":{"q1":{"toolName":"context_tree_query","args":{}},"#,
            r#""q2":{"toolName":"context_tree_query","args":{}},"#,
            r#""q3":{"toolName":"context_tree_query","args":{}},"r2":{"toolName":"read","args":{}}}}"#
        );
        for (grace, stubs, after) in [
            ("0", &["q1", "q2", "r2", "q3"][..], 1038),
            ("-1", &["q1", "q2", "r2", "q3"][..], 1038),
            ("null", &["q1", "q2", "r2", "q3"][..], 1038),
            ("1", &["q1", "r2"][..], 810),
            ("1.5", &["q1", "r2"][..], 810),
            ("2", &["r2"][..], 696),
            ("\"2\"", &["r2"][..], 696),
            ("100", &["r2"][..], 696),
        ] {
            let config = format!(r#"{{"recoveryGraceTurns":{grace}}}"#);
            let expected = build(&|id| stubs.contains(&id));
            let p = expect_pruned(
                &input,
                state,
                &config,
                None,
                &expected,
                stubbed(stubs.len() as u32),
            );
            assert_eq!(p.after_chars, after, "grace {grace}");
        }
        // Without the field grace is off (NaN > 0 is false).
        let p = run(&input, state, "{}", None).unwrap();
        assert_eq!(p.stats.stubbed, 4);
    }

    #[test]
    fn numeric_short_ref_is_printed_and_non_string_id_is_skipped() {
        expect_pruned(
            r#"[{"role":"toolResult","toolCallId":"a","toolName":"read","content":[],"isError":false,"timestamp":1}]"#,
            r#"{"records":{"a":{"toolName":"read","args":{}}},"shortRefs":{"a":1e21}}"#,
            "{}",
            None,
            &format!("[{}]", plain_stub("a", "read", "1", "1e+21")),
            stubbed(1),
        );
        expect_unchanged(
            r#"[{"role":"toolResult","toolCallId":null,"toolName":"read","content":[],"isError":false,"timestamp":1}]"#,
            r#"{"records":{"null":{"toolName":"read","args":{}}}}"#,
            "{}",
            None,
        );
    }
}
