//! Phase 3: compressed tool-call chains. Dropped calls, their results and
//! their batch summaries leave the array; a synthetic user block carrying the
//! chain's summary goes in right after the chain's opening user message.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::{has_role, without_thinking, Stats};
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
    msgs: Vec<Val<'t>>,
    state: &State,
    cfg: &ChainConfig,
    stats: &mut Stats,
) -> Result<Vec<Val<'t>>> {
    let entries: Vec<V<'_, 'static>> = state.chain_entries().collect();

    let existing = existing_block_ids(&msgs);
    let mut dropped: HashSet<Key<'_>> = HashSet::new();
    let mut protected: HashMap<Key<'_>, String> = HashMap::new();
    let mut finals: HashSet<Key<'_>> = HashSet::new();
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
    let mut by_start: HashMap<Key<'_>, Val<'t>> = HashMap::new();
    let mut block_of_start: HashMap<Key<'_>, String> = HashMap::new();
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
        block_of_start.insert(key, block_id);
    }

    let mut actions = Vec::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        actions.push(decide(m.view(), i, &dropped, &finals)?);
    }
    let inserts: Vec<Option<Val<'t>>> = msgs
        .iter()
        .map(|m| {
            let v = m.view();
            if !has_role(v, "user") {
                return None;
            }
            let key = Key::of(v.get("timestamp"));
            let block = block_of_start.get(&key)?;
            (!existing.contains(block)).then(|| by_start[&key].clone())
        })
        .collect();

    let mut out = Vec::with_capacity(msgs.len() + by_start.len());
    for (i, ((m, action), insert)) in msgs.into_iter().zip(actions).zip(inserts).enumerate() {
        match action {
            Action::Drop => stats.chain_dropped += 1,
            Action::Keep => out.push(m),
            Action::StripThinking => match without_thinking(&m, i)? {
                Some(stripped) => {
                    stats.final_thinking_stripped += 1;
                    out.push(stripped);
                }
                None => out.push(m),
            },
        }
        if let Some(block) = insert {
            stats.chain_inserted += 1;
            out.push(block);
        }
    }
    Ok(out)
}

fn decide(
    v: V<'_, '_>,
    i: usize,
    dropped: &HashSet<Key<'_>>,
    finals: &HashSet<Key<'_>>,
) -> Result<Action> {
    if has_role(v, "toolResult") {
        if dropped.contains(&Key::of(v.get("toolCallId"))) {
            return Ok(Action::Drop);
        }
    } else if has_role(v, "assistant") {
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
    } else if has_role(v, "custom")
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
fn existing_block_ids(msgs: &[Val<'_>]) -> HashSet<String> {
    let mut ids = HashSet::new();
    for m in msgs {
        let v = m.view();
        if !has_role(v, "user") {
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
    msgs: &[Val<'_>],
    protected: &HashMap<Key<'_>, String>,
) -> Result<HashMap<String, Vec<(String, String)>>> {
    let mut out: HashMap<String, Vec<(String, String)>> = HashMap::new();
    if protected.is_empty() {
        return Ok(out);
    }
    for (i, m) in msgs.iter().enumerate() {
        let v = m.view();
        if !has_role(v, "toolResult") {
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
    let summary = substitute_block_refs(state, &state.entry_summary(entry), block_id);
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
fn substitute_block_refs(state: &State, summary: &str, own: &str) -> String {
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
                state.block_lookup(id)
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
    out
}
