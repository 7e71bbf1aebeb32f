//! Phase 3: compressed tool-call chains. Dropped calls, their results and
//! their batch summaries leave the array; a synthetic user block carrying the
//! chain's summary goes in right after the chain's opening user message.

use crate::hash::{HashMap, HashSet};
use std::borrow::Cow;

use super::{without_thinking, Edit, Msg, Role, Stats};
use crate::config::ChainConfig;
use crate::error::{PruneError, Result};
use crate::state::State;
use crate::value::{join_elements, Key, Ty, Val, V};

const BLOCK_PREFIX: &str = "<compressed-chain id=\"";

enum Action {
    Keep,
    Drop,
    StripThinking,
}

pub fn run<'t>(
    msgs: Vec<Msg<'t>>,
    state: &State,
    cfg: &ChainConfig,
    stats: &mut Stats,
) -> Result<Vec<Msg<'t>>> {
    let entries: Vec<V<'_, 'static>> = state.chain_entries().collect();

    let existing = existing_block_ids(&msgs);
    let mut dropped: HashSet<Key<'_>> = HashSet::default();
    let mut protected: HashMap<Key<'_>, String> = HashMap::default();
    let mut finals: HashSet<Key<'_>> = HashSet::default();
    for (n, e) in entries.iter().enumerate() {
        let block_id = e
            .get("blockId")
            .map_or_else(|| "undefined".into(), |b| b.to_js_string());
        for id in id_list(*e, "droppedToolCallIds", n)? {
            dropped.insert(id.key());
        }
        if let Some(p) = e.get("protectedToolCallIds").filter(|p| p.ty() != Ty::Null) {
            for id in id_list_of(p, "protectedToolCallIds", n)? {
                protected.insert(id.key(), block_id.to_string());
            }
        }
        if cfg.strip_final_assistant_thinking {
            match e.get("finalAssistantTimestamp") {
                None => {
                    finals.insert(Key::Undefined);
                }
                Some(t) if t.ty() == Ty::Null => {}
                Some(t) => {
                    finals.insert(t.key());
                }
            }
        }
    }

    let outputs = protected_outputs(&msgs, &protected)?;
    let mut by_start: HashMap<Key<'_>, Val<'t>> = HashMap::default();
    // Only a string blockId can equal a pre-scanned id (a Set of strings).
    let mut block_of_start: HashMap<Key<'_>, Option<&str>> = HashMap::default();
    for (n, e) in entries.iter().enumerate() {
        let key = Key::of(e.get("startUserTimestamp"));
        let block_id = e
            .get("blockId")
            .map_or_else(|| "undefined".into(), |b| b.to_js_string())
            .into_owned();
        by_start.insert(
            key.clone(),
            synthetic(state, *e, &block_id, outputs.get(&block_id), n)?,
        );
        block_of_start.insert(key, e.get("blockId").and_then(|b| b.as_str()));
    }

    let mut actions = Vec::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        actions.push(decide(m, i, &dropped, &finals)?);
    }
    let inserts: Vec<Option<Val<'t>>> = msgs
        .iter()
        .map(|m| {
            let v = m.view();
            if m.role != Role::User {
                return None;
            }
            let key = Key::of(v.get("timestamp"));
            let block = block_of_start.get(&key)?;
            let seen = block.is_some_and(|b| existing.contains(b));
            (!seen).then(|| by_start[&key].clone())
        })
        .collect();

    let mut out = Vec::with_capacity(msgs.len() + by_start.len());
    for (i, ((m, action), insert)) in msgs.into_iter().zip(actions).zip(inserts).enumerate() {
        match action {
            Action::Drop => stats.chain_dropped += 1,
            Action::Keep => out.push(m),
            Action::StripThinking => match without_thinking(&m.val, i)? {
                Some(stripped) => {
                    stats.final_thinking_stripped += 1;
                    out.push(Msg {
                        val: stripped,
                        edit: Edit {
                            final_thinking_stripped: true,
                            ..m.edit
                        },
                        src: m.src,
                        role: m.role,
                    });
                }
                None => out.push(m),
            },
        }
        if let Some(block) = insert {
            stats.chain_inserted += 1;
            out.push(Msg {
                val: block,
                src: None,
                edit: Edit::default(),
                role: Role::User,
            });
        }
    }
    Ok(out)
}

fn decide(
    m: &Msg<'_>,
    i: usize,
    dropped: &HashSet<Key<'_>>,
    finals: &HashSet<Key<'_>>,
) -> Result<Action> {
    let v = m.view();
    if m.role == Role::ToolResult {
        if dropped.contains(&Key::of(v.get("toolCallId"))) {
            return Ok(Action::Drop);
        }
    } else if m.role == Role::Assistant {
        if let Some(content) = v.get("content").filter(|c| c.ty() != Ty::Null) {
            if content.ty() != Ty::Arr {
                return Err(PruneError::bad_message(i, "content", "is not an array"));
            }
            // The reference filters every block, so a null block throws even
            // after a dropped call was found.
            let mut hit = false;
            for (j, b) in content.elements().enumerate() {
                if b.ty() == Ty::Null {
                    return Err(PruneError::bad_message(
                        i,
                        &format!("content[{j}]"),
                        "is null",
                    ));
                }
                hit |= b.get("type").is_some_and(|t| t.is_str("toolCall"))
                    && dropped.contains(&Key::of(b.get("id")));
            }
            if hit {
                return Ok(Action::Drop);
            }
        }
        if finals.contains(&Key::of(v.get("timestamp"))) {
            return Ok(Action::StripThinking);
        }
    } else if m.role == Role::Custom
        && v.get("customType")
            .is_some_and(|t| t.is_str("context-prune-summary"))
    {
        let refs = v.get("details").and_then(|d| d.get("toolCallRefs"));
        if let Some(refs) = refs.filter(|r| r.ty() != Ty::Null) {
            if refs.ty() != Ty::Arr {
                return Err(PruneError::bad_message(
                    i,
                    "details.toolCallRefs",
                    "is not an array",
                ));
            }
            for (j, r) in refs.elements().enumerate() {
                if r.ty() == Ty::Null {
                    return Err(PruneError::bad_message(
                        i,
                        &format!("details.toolCallRefs[{j}]"),
                        "is null",
                    ));
                }
                if dropped.contains(&Key::of(r.get("toolCallId"))) {
                    return Ok(Action::Drop);
                }
            }
        }
    }
    Ok(Action::Keep)
}

fn id_list<'v>(entry: V<'v, 'static>, field: &str, n: usize) -> Result<Vec<V<'v, 'static>>> {
    match entry.get(field) {
        None => Err(PruneError::bad_state(format!(
            "chain entry {n}: {field} is missing"
        ))),
        Some(v) => id_list_of(v, field, n),
    }
}

fn id_list_of<'v>(v: V<'v, 'static>, field: &str, n: usize) -> Result<Vec<V<'v, 'static>>> {
    if v.ty() != Ty::Arr {
        return Err(PruneError::bad_state(format!(
            "chain entry {n}: {field} must be an array"
        )));
    }
    Ok(v.elements().collect())
}

/// Block ids of `<compressed-chain>` messages already in the array, read
/// the way the reference does: `String(content?.[0]?.text)`.
fn existing_block_ids(msgs: &[Msg<'_>]) -> HashSet<String> {
    let mut ids = HashSet::default();
    for m in msgs {
        let v = m.view();
        if m.role != Role::User {
            continue;
        }
        let Some(content) = v.get("content") else {
            continue;
        };
        let first = match content.ty() {
            Ty::Arr => content.elements().next(),
            Ty::Obj => content.get("0"),
            _ => None,
        };
        let Some(text) = first.and_then(|f| f.get("text")) else {
            continue;
        };
        let text = text.to_js_string();
        if let Some(rest) = text.strip_prefix(BLOCK_PREFIX) {
            if let Some(end) = rest.find('"') {
                if end > 0 {
                    ids.insert(rest[..end].to_owned());
                }
            }
        }
    }
    ids
}

/// Outputs of protected calls, by block id, in array order.
fn protected_outputs(
    msgs: &[Msg<'_>],
    protected: &HashMap<Key<'_>, String>,
) -> Result<HashMap<String, Vec<(String, String)>>> {
    let mut out: HashMap<String, Vec<(String, String)>> = HashMap::default();
    if protected.is_empty() {
        return Ok(out);
    }
    for (i, m) in msgs.iter().enumerate() {
        let v = m.view();
        if m.role != Role::ToolResult {
            continue;
        }
        let Some(block) = protected.get(&Key::of(v.get("toolCallId"))) else {
            continue;
        };
        let tool = v
            .get("toolName")
            .map_or_else(|| "undefined".into(), |t| t.to_js_string())
            .into_owned();
        let mut texts = Vec::new();
        if let Some(content) = v.get("content").filter(|c| c.ty() == Ty::Arr) {
            for (j, b) in content.elements().enumerate() {
                if b.ty() == Ty::Null {
                    return Err(PruneError::bad_message(
                        i,
                        &format!("content[{j}]"),
                        "is null",
                    ));
                }
                if b.get("type").is_some_and(|t| t.is_str("text")) {
                    texts.push(match b.get("text") {
                        Some(t) if t.ty() != Ty::Null => t.to_js_string().into_owned(),
                        _ => String::new(),
                    });
                }
            }
        }
        out.entry(block.clone())
            .or_default()
            .push((tool, texts.join("\n")));
    }
    Ok(out)
}

fn synthetic<'t>(
    state: &State,
    entry: V<'_, 'static>,
    block_id: &str,
    outputs: Option<&Vec<(String, String)>>,
    n: usize,
) -> Result<Val<'t>> {
    let refs = match entry.get("toolRefs") {
        Some(r) if r.ty() == Ty::Arr => join_elements(r.elements()),
        _ => {
            return Err(PruneError::bad_state(format!(
                "chain entry {n}: toolRefs must be an array"
            )))
        }
    };
    let summary = substitute_block_refs(state, &state.entry_summary(entry)?, block_id)?;
    let mut text = format!("<compressed-chain id=\"{block_id}\" tools=\"{refs}\">\n{summary}");
    for (tool, body) in outputs.into_iter().flatten() {
        text.push_str(&format!(
            "\n\n<protected-output tool=\"{tool}\">\n{body}\n</protected-output>"
        ));
    }
    text.push_str("\n</compressed-chain>");
    let field = |k: &'static str, v: Val<'t>| (Cow::Borrowed(k), v);
    let block = Val::Obj(vec![
        field("type", Val::str("text")),
        field("text", Val::str(text)),
    ]);
    let mut msg = vec![
        field("role", Val::str("user")),
        field("content", Val::Arr(vec![block])),
    ];
    if let Some(at) = entry.get("compressedAt") {
        msg.push(field("timestamp", at.to_val()));
    }
    Ok(Val::Obj(msg))
}

/// One pass of `{b<digits>}` substitution; inserted text is not re-scanned.
fn substitute_block_refs(state: &State, summary: &str, own: &str) -> Result<String> {
    let mut out = String::with_capacity(summary.len());
    let mut rest = summary;
    while let Some(at) = rest.find("{b") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 2..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail.as_bytes().get(digits) == Some(&b'}') {
            let id = &rest[at + 1..at + 2 + digits];
            let found = if id == own {
                None
            } else {
                state.block_lookup(id)?
            };
            match found {
                Some(text) => out.push_str(&text),
                None => out.push_str(&rest[at..at + 3 + digits]),
            }
            rest = &tail[digits + 1..];
        } else {
            out.push_str("{b");
            rest = tail;
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{expect_error, expect_pruned, expect_unchanged, plain_stub};
    use super::super::Stats;

    const INVALID: &str = "ERR_CONDENSE_INVALID_MESSAGE";

    const USER_100: &str = r#"{"role":"user","content":"start","timestamp":100}"#;
    const CALL_D1: &str = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"plan"},{"type":"toolCall","id":"d1","name":"read","arguments":{"path":"a"}}],"timestamp":101}"#;
    const RESULT_D1: &str = r#"{"role":"toolResult","toolCallId":"d1","toolName":"read","content":[{"type":"text","text":"A"}],"isError":false,"timestamp":102}"#;
    const SUMMARY_D1: &str = r#"{"role":"custom","customType":"context-prune-summary","content":"s","display":false,"details":{"toolCallRefs":[{"toolCallId":"d1","shortId":"t1"}]},"timestamp":103}"#;
    const FINAL: &str = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"wrap","thinkingSignature":"sig"},{"type":"text","text":"done"}],"timestamp":104}"#;
    const FINAL_STRIPPED: &str =
        r#"{"role":"assistant","content":[{"type":"text","text":"done"}],"timestamp":104}"#;
    const OTHER_CUSTOM: &str = r#"{"role":"custom","customType":"note","content":"keep","details":{"toolCallRefs":[{"toolCallId":"d1"}]},"timestamp":105}"#;
    const USER_200: &str = r#"{"role":"user","content":"next","timestamp":200}"#;
    const CALL_K1: &str = r#"{"role":"assistant","content":[{"type":"toolCall","id":"k1","name":"read","arguments":{}}],"timestamp":201}"#;
    const RESULT_K1: &str = r#"{"role":"toolResult","toolCallId":"k1","toolName":"read","content":[{"type":"text","text":"line1"},{"type":"image","data":"..."},{"type":"text","text":"line2"}],"isError":false,"timestamp":202}"#;

    /// b1 drops d1 and has a range summary naming itself, b2 and a missing
    /// b9; b2 drops nothing present, protects k1, and its per-batch summary
    /// names b1.
    const STATE: &str = concat!(
        r#"{"chains":[{"blockId":"b1","startUserTimestamp":100,"droppedToolCallIds":["d1"],"finalAssistantTimestamp":104,"#,
        r#""toolRefs":["t1"],"compressedAt":150,"rangeSummaryText":"Read files. See {b1} and {b2} and {b9}."},"#,
        r#"{"blockId":"b2","startUserTimestamp":200,"droppedToolCallIds":["k0"],"protectedToolCallIds":["k1"],"#,
        r#""finalAssistantTimestamp":null,"toolRefs":["t2","t3"],"compressedAt":250}],"#,
        r#""summaryBodies":[{"toolCallIds":["k0"],"text":"batch k0 {b1}"}]}"#
    );

    // {b1} is this block's own id and {b9} finds nothing: both stay. {b2}
    // becomes b2's per-batch text, whose {b1} is not re-scanned.
    const BLOCK_B1: &str = r#"{"role":"user","content":[{"type":"text","text":"<compressed-chain id=\"b1\" tools=\"t1\">\nRead files. See {b1} and batch k0 {b1} and {b9}.\n</compressed-chain>"}],"timestamp":150}"#;
    const BLOCK_B2: &str = r#"{"role":"user","content":[{"type":"text","text":"<compressed-chain id=\"b2\" tools=\"t2,t3\">\nbatch k0 Read files. See {b1} and {b2} and {b9}.\n\n<protected-output tool=\"read\">\nline1\nline2\n</protected-output>\n</compressed-chain>"}],"timestamp":250}"#;

    fn array(items: &[&str]) -> String {
        format!("[{}]", items.join(","))
    }

    fn input() -> String {
        array(&[
            USER_100,
            CALL_D1,
            RESULT_D1,
            SUMMARY_D1,
            FINAL,
            OTHER_CUSTOM,
            USER_200,
            CALL_K1,
            RESULT_K1,
        ])
    }

    fn chain_config(strip: bool) -> String {
        format!(
            r#"{{"chainCompression":{{"enabled":true,"stripFinalAssistantThinking":{strip}}}}}"#
        )
    }

    #[test]
    fn drops_chain_and_inserts_synthetic_blocks() {
        let expected = array(&[
            USER_100,
            BLOCK_B1,
            FINAL_STRIPPED,
            OTHER_CUSTOM,
            USER_200,
            BLOCK_B2,
            CALL_K1,
            RESULT_K1,
        ]);
        let p = expect_pruned(
            &input(),
            STATE,
            &chain_config(true),
            None,
            &expected,
            Stats {
                chain_dropped: 3,
                chain_inserted: 2,
                final_thinking_stripped: 1,
                ..Stats::default()
            },
        );
        assert_eq!((p.before_chars, p.after_chars), (1115, 1039));
    }

    #[test]
    fn final_assistant_keeps_thinking_without_the_strip_option() {
        let expected = array(&[
            USER_100,
            BLOCK_B1,
            FINAL,
            OTHER_CUSTOM,
            USER_200,
            BLOCK_B2,
            CALL_K1,
            RESULT_K1,
        ]);
        let p = expect_pruned(
            &input(),
            STATE,
            &chain_config(false),
            None,
            &expected,
            Stats {
                chain_dropped: 3,
                chain_inserted: 2,
                ..Stats::default()
            },
        );
        assert_eq!((p.before_chars, p.after_chars), (1115, 1103));
    }

    #[test]
    fn existing_blocks_are_not_reinserted_and_duplicate_user_timestamps_each_get_one() {
        let existing = r#"{"role":"user","content":[{"type":"text","text":"<compressed-chain id=\"b1\" tools=\"t1\">\nold\n</compressed-chain>"}],"timestamp":150}"#;
        let a = r#"{"role":"user","content":"a","timestamp":100}"#;
        let again = r#"{"role":"user","content":"again","timestamp":100}"#;
        let b = r#"{"role":"user","content":"b","timestamp":200}"#;
        let asst = r#"{"role":"assistant","content":[{"type":"text","text":"x"}],"timestamp":201}"#;
        let c = r#"{"role":"user","content":[{"type":"text","text":"c"}],"timestamp":200}"#;
        // An empty range summary is used as it is.
        let b2 = r#"{"role":"user","content":[{"type":"text","text":"<compressed-chain id=\"b2\" tools=\"t5\">\n\n</compressed-chain>"}],"timestamp":250}"#;
        let state = concat!(
            r#"{"chains":[{"blockId":"b1","startUserTimestamp":100,"droppedToolCallIds":[],"finalAssistantTimestamp":null,"toolRefs":[],"compressedAt":150,"rangeSummaryText":"one"},"#,
            r#"{"blockId":"b2","startUserTimestamp":200,"droppedToolCallIds":[],"finalAssistantTimestamp":null,"toolRefs":["t5"],"compressedAt":250,"rangeSummaryText":""}]}"#
        );
        let p = expect_pruned(
            &array(&[existing, a, again, b, asst, c]),
            state,
            &chain_config(false),
            None,
            &array(&[existing, a, again, b, b2, asst, c, b2]),
            Stats {
                chain_inserted: 2,
                ..Stats::default()
            },
        );
        assert_eq!((p.before_chars, p.after_chars), (427, 695));
    }

    #[test]
    fn reports_pruned_even_when_nothing_differs() {
        let msgs = array(&[
            r#"{"role":"user","content":"a","timestamp":1}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"x"}],"timestamp":2}"#,
        ]);
        let state = r#"{"chains":[{"blockId":"b1","startUserTimestamp":999,"droppedToolCallIds":["nope"],"finalAssistantTimestamp":null,"toolRefs":[],"compressedAt":1000}]}"#;
        let p = expect_pruned(
            &msgs,
            state,
            &chain_config(true),
            None,
            &msgs,
            Stats::default(),
        );
        assert_eq!((p.before_chars, p.after_chars), (119, 119));

        // Empty messages: sizes 2 and 2.
        let p = expect_pruned(
            "[]",
            state,
            r#"{"chainCompression":{"enabled":true}}"#,
            None,
            "[]",
            Stats::default(),
        );
        assert_eq!((p.before_chars, p.after_chars), (2, 2));

        // Disabled, or no chain entries: the phase does not run.
        let one = r#"[{"role":"user","content":"a","timestamp":1}]"#;
        expect_unchanged(
            one,
            state,
            r#"{"chainCompression":{"enabled":false}}"#,
            None,
        );
        expect_unchanged(one, "{}", r#"{"chainCompression":{"enabled":true}}"#, None);
    }

    #[test]
    fn protected_output_carries_the_phase_one_stub() {
        let user = r#"{"role":"user","content":"go","timestamp":1}"#;
        let input = array(&[
            user,
            r#"{"role":"toolResult","toolCallId":"k","content":[{"type":"text","text":"raw"}],"isError":false,"timestamp":2}"#,
        ]);
        let state = concat!(
            r#"{"records":{"k":{"toolName":"read","args":{}}},"shortRefs":{"k":"t7"},"#,
            r#""chains":[{"blockId":"b3","startUserTimestamp":1,"droppedToolCallIds":[],"protectedToolCallIds":["k"],"#,
            r#""finalAssistantTimestamp":null,"toolRefs":["t7"],"compressedAt":3,"rangeSummaryText":"S"}]}"#
        );
        // The message has no toolName: the label reads "undefined", and the
        // stub has no toolName key.
        let stub = plain_stub("k", "", "2", "t7").replace(r#""toolName":"","#, "");
        let block = concat!(
            r#"{"role":"user","content":[{"type":"text","text":"<compressed-chain id=\"b3\" tools=\"t7\">\nS\n\n"#,
            r#"<protected-output tool=\"undefined\">\n[Summarized in pruner summary, ref `t7`. Use context_tree_query to retrieve full output.]\n"#,
            r#"</protected-output>\n</compressed-chain>"}],"timestamp":3}"#
        );
        let p = expect_pruned(
            &input,
            state,
            r#"{"chainCompression":{"enabled":true}}"#,
            None,
            &array(&[user, block, &stub]),
            Stats {
                stubbed: 1,
                chain_inserted: 1,
                ..Stats::default()
            },
        );
        assert_eq!((p.before_chars, p.after_chars), (156, 528));
    }

    #[test]
    fn bad_message_shapes_are_typed_errors() {
        let state = r#"{"chains":[{"blockId":"b1","startUserTimestamp":1,"droppedToolCallIds":["x"],"finalAssistantTimestamp":null,"toolRefs":[],"compressedAt":2}]}"#;
        let config = r#"{"chainCompression":{"enabled":true}}"#;
        let err = expect_error(
            r#"[{"role":"custom","customType":"context-prune-summary","details":{"toolCallRefs":[null]},"timestamp":1}]"#,
            state,
            config,
            None,
            INVALID,
            "message 0",
        );
        assert!(err.message.contains("details.toolCallRefs[0]"), "{err}");
        let err = expect_error(
            r#"[{"role":"user","content":"u","timestamp":0},{"role":"assistant","content":"hi","timestamp":1}]"#,
            state,
            config,
            None,
            INVALID,
            "message 1",
        );
        assert!(err.message.contains("content"), "{err}");
    }

    #[test]
    fn odd_refs_tool_lists_and_missing_final_timestamp() {
        let user = r#"{"role":"user","content":"go","timestamp":1}"#;
        let untimed = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"x"}]}"#;
        let timed =
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t"}],"timestamp":2}"#;
        // b1 has no finalAssistantTimestamp at all: undefined joins F, so
        // the assistant without a timestamp loses its thinking.
        let state = concat!(
            r#"{"chains":[{"blockId":"b1","startUserTimestamp":1,"droppedToolCallIds":[],"#,
            r#""toolRefs":[null,5,"t1",["a","b"],true,""],"compressedAt":3,"#,
            r#""rangeSummaryText":"{b01} {b١} {b2}{b2} {b} {b3 $& $1"},"#,
            r#"{"blockId":"b01","startUserTimestamp":7,"droppedToolCallIds":[],"finalAssistantTimestamp":null,"#,
            r#""toolRefs":[],"compressedAt":8,"rangeSummaryText":"<$&>"},"#,
            r#"{"blockId":"b2","startUserTimestamp":9,"droppedToolCallIds":[],"finalAssistantTimestamp":null,"#,
            r#""toolRefs":[],"compressedAt":10,"rangeSummaryText":"B2"}]}"#
        );
        // {b01} looks up "b01"; Arabic-Indic digits are not \d; `$&` is
        // inserted literally; toolRefs join like Array#join.
        let block = concat!(
            r#"{"role":"user","content":[{"type":"text","text":"<compressed-chain id=\"b1\" tools=\",5,t1,a,b,true,\">\n"#,
            r#"<$&> {b١} B2B2 {b} {b3 $& $1\n</compressed-chain>"}],"timestamp":3}"#
        );
        let p = expect_pruned(
            &array(&[user, untimed, timed]),
            state,
            &chain_config(true),
            None,
            &array(&[
                user,
                block,
                r#"{"role":"assistant","content":[{"type":"text","text":"x"}]}"#,
                timed,
            ]),
            Stats {
                chain_inserted: 1,
                final_thinking_stripped: 1,
                ..Stats::default()
            },
        );
        assert_eq!((p.before_chars, p.after_chars), (223, 361));
    }

    #[test]
    fn numeric_block_id_is_not_a_prescanned_string_id() {
        // The pre-scan collects the string "5"; `existing.has(5)` is false
        // in JS, so the block for blockId 5 is still inserted.
        let user = r#"{"role":"user","content":"a","timestamp":1}"#;
        let old = r#"{"role":"user","content":[{"type":"text","text":"<compressed-chain id=\"5\""}],"timestamp":2}"#;
        let state = r#"{"chains":[{"blockId":5,"startUserTimestamp":1,"droppedToolCallIds":[],"toolRefs":[],"compressedAt":3,"rangeSummaryText":"S"}]}"#;
        let block = r#"{"role":"user","content":[{"type":"text","text":"<compressed-chain id=\"5\" tools=\"\">\nS\n</compressed-chain>"}],"timestamp":3}"#;
        let p = expect_pruned(
            &array(&[user, old]),
            state,
            r#"{"chainCompression":{"enabled":true}}"#,
            None,
            &array(&[user, block, old]),
            Stats {
                chain_inserted: 1,
                ..Stats::default()
            },
        );
        assert_eq!((p.before_chars, p.after_chars), (139, 269));
    }

    #[test]
    fn per_batch_texts_join_like_array_join() {
        // Texts [null, undefined, "null"] are three distinct values;
        // Array#join writes null and undefined as "".
        let state = concat!(
            r#"{"chains":[{"blockId":"b1","startUserTimestamp":1,"droppedToolCallIds":["a"],"toolRefs":[],"compressedAt":2}],"#,
            r#""summaryBodies":[{"toolCallIds":["a"],"text":null},{"toolCallIds":["a"]},{"toolCallIds":["a"],"text":"null"}]}"#
        );
        let user = r#"{"role":"user","content":"x","timestamp":1}"#;
        let block = r#"{"role":"user","content":[{"type":"text","text":"<compressed-chain id=\"b1\" tools=\"\">\n\n\n\n\nnull\n</compressed-chain>"}],"timestamp":2}"#;
        let p = expect_pruned(
            &array(&[user]),
            state,
            r#"{"chainCompression":{"enabled":true}}"#,
            None,
            &array(&[user, block]),
            Stats {
                chain_inserted: 1,
                ..Stats::default()
            },
        );
        assert_eq!((p.before_chars, p.after_chars), (45, 187));
    }
}
