//! Phase 1: summarized tool results become stubs pointing at the summary.

use std::borrow::Cow;
use std::collections::HashSet;

use super::{has_role, Stats};
use crate::config::Config;
use crate::error::Result;
use crate::state::State;
use crate::value::{Ty, Val, V};

pub fn run(
    msgs: &mut [Val<'_>],
    state: &State,
    config: &Config,
    stats: &mut Stats,
) -> Result<bool> {
    let grace = recovery_grace_ids(msgs, config.recovery_grace_turns);
    let mut changed = false;
    for m in msgs.iter_mut() {
        let v = m.view();
        if !has_role(v, "toolResult") || !state.is_summarized(v.get("toolCallId")) {
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
        *m = stub_message(v, text);
        stats.stubbed += 1;
        changed = true;
    }
    Ok(changed)
}

/// Ids of `context_tree_query` results within the last `grace` user turns.
fn recovery_grace_ids(msgs: &[Val<'_>], grace: f64) -> HashSet<String> {
    let mut ids = HashSet::new();
    // `recoveryGraceTurns > 0` is false for NaN too.
    if grace.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return ids;
    }
    let users = msgs.iter().filter(|m| has_role(m.view(), "user")).count();
    let mut seen = 0usize;
    for m in msgs {
        let v = m.view();
        if has_role(v, "user") {
            seen += 1;
        }
        if has_role(v, "toolResult")
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
