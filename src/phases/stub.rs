//! Phase 1 (SPEC 3; SPEC-2.9 3): a summarized tool result becomes a stub
//! that points at its summary. The dialects differ in the key: 2.4.3 looks
//! the bare `toolCallId` up, 2.9.1 the occurrence key first and the bare id
//! only for a legacy-only record. The stub text is spelled here once for
//! Rust; `stubText` in js/pure/rules.js is the JS oracle's copy.

use super::keys::{message_key, MessageKey};
use super::memo::{Memo, StubDecision};
use super::text::{write_or, write_scalar, write_value};
use super::Inputs;
use crate::dialect::Dialect;
use crate::error::{PruneError, Result};
use crate::json::Json;
use crate::record::{Role, Scalar};
use crate::script::{EditScript, Stats};

const GRACE_TOOL: &[u8] = b"context_tree_query";

pub fn run(
    inputs: &Inputs<'_>,
    memo: &mut Memo,
    script: &mut EditScript,
    stats: &mut Stats,
) -> Result<bool> {
    let log = inputs.log;
    let grace = recovery_grace(inputs);
    let mut changed = false;
    for (i, rec) in log.records.iter().enumerate() {
        if rec.role != Role::ToolResult {
            continue;
        }
        let decision = match memo.stub(i) {
            Some(d) => d,
            None => {
                let d = decide(inputs, memo, i)?;
                memo.set_stub(i, d);
                d
            }
        };
        let StubDecision::Stub(text) = decision else {
            continue;
        };
        if !grace.is_empty() && in_grace(inputs, i, &grace) {
            continue;
        }
        script.stub(i, text);
        stats.stubbed += 1;
        changed = true;
    }
    Ok(changed)
}

/// Whether tool result `i`'s key is among the `grace` keys: 2.4.3 compares
/// the id, 2.9.1 `K(m)`.
fn in_grace(inputs: &Inputs<'_>, i: usize, grace: &[Vec<u8>]) -> bool {
    let log = inputs.log;
    let rec = &log.records[i];
    match inputs.dialect {
        Dialect::V2_4 => rec
            .tool_call_id
            .as_str()
            .is_some_and(|s| grace.iter().any(|g| g.as_slice() == log.syms.text(s))),
        Dialect::V2_9 => match message_key(rec, &log.syms) {
            MessageKey::Text(k) => grace.contains(&k),
            MessageKey::Value(_) => false,
        },
    }
}

/// Phase 1 for tool result `i`, recovery grace aside: whether it is
/// summarized and not protected, and its stub text.
fn decide(inputs: &Inputs<'_>, memo: &mut Memo, i: usize) -> Result<StubDecision> {
    let log = inputs.log;
    let rec = &log.records[i];
    let lookup = match inputs.dialect {
        Dialect::V2_4 => {
            let Scalar::Str(id) = rec.tool_call_id else {
                return Ok(StubDecision::Keep);
            };
            let id = log.syms.text(id);
            if !inputs.state.is_summarized(id) {
                return Ok(StubDecision::Keep);
            }
            id.to_vec()
        }
        Dialect::V2_9 => {
            let key = message_key(rec, &log.syms);
            match (key.text(), rec.tool_call_id) {
                (Some(k), _) if inputs.state.is_summarized(k) => k.to_vec(),
                (_, Scalar::Str(id)) if inputs.state.has_legacy_bare_record(log.syms.text(id)) => {
                    log.syms.text(id).to_vec()
                }
                _ => return Ok(StubDecision::Keep),
            }
        }
    };
    let record = inputs.state.record(&lookup);
    if let (Some(p), Some(r)) = (&inputs.config.protection, record) {
        match p.protects(r.get("toolName"), r.get("args")) {
            Ok(true) => return Ok(StubDecision::Keep),
            Ok(false) => {}
            Err(what) => {
                return Err(PruneError::bad_config(format!(
                    "{what} (the reference throws checking message {i})"
                )))
            }
        }
    }
    let mut reference = Vec::new();
    match inputs.state.short_ref(&lookup) {
        Some(r) if !r.is_null() => r.write_js_string(&mut reference),
        _ => write_scalar(&mut reference, &rec.tool_call_id, &log.syms),
    }
    Ok(StubDecision::Stub(
        memo.text_id(stub_text(record, &reference)),
    ))
}

/// Keys of `context_tree_query` results within the last
/// `recoveryGraceTurns` user turns (2.4.3: their ids; 2.9.1: `K(m)`).
fn recovery_grace(inputs: &Inputs<'_>) -> Vec<Vec<u8>> {
    let log = inputs.log;
    let Some(grace) = inputs.config.grace_turns() else {
        return Vec::new();
    };
    // A result's turn distance is the number of user messages after it:
    // walked from the end, it only grows, so the walk stops at the first
    // message beyond the grace (a number above 0, never NaN).
    let mut users_after = 0usize;
    let mut keys = Vec::new();
    for rec in log.records.iter().rev() {
        if rec.role == Role::User {
            users_after += 1;
            continue;
        }
        if users_after as f64 > grace {
            break;
        }
        let query = rec.role == Role::ToolResult
            && rec
                .tool_name
                .as_str()
                .is_some_and(|n| log.syms.text(n) == GRACE_TOOL);
        let Scalar::Str(id) = rec.tool_call_id else {
            continue;
        };
        if query {
            keys.push(match inputs.dialect {
                Dialect::V2_4 => log.syms.text(id).to_vec(),
                Dialect::V2_9 => match message_key(rec, &log.syms) {
                    MessageKey::Text(k) => k,
                    MessageKey::Value(_) => continue,
                },
            });
        }
    }
    keys
}

/// The stub's text (canonical): the spilled form when the record has a
/// truthy `spillPath`, the plain form otherwise.
fn stub_text(record: Option<&Json>, reference: &[u8]) -> Vec<u8> {
    let mut t = Vec::new();
    let spill = record
        .and_then(|r| r.get("spillPath"))
        .filter(|p| p.truthy());
    match (record, spill) {
        (Some(r), Some(path)) => {
            t.extend_from_slice("[Oversized output spilled to file \u{2014} ".as_bytes());
            write_or(&mut t, r.get("spillBytes"), b"?");
            t.extend_from_slice(b" bytes.]\\nTool: ");
            write_value(&mut t, r.get("toolName"));
            t.extend_from_slice(b"\\nPreview (head):\\n");
            write_or(&mut t, r.get("resultPreview"), b"");
            t.extend_from_slice(
                "\\nFull output \u{2014} read this file (offset/limit supported): ".as_bytes(),
            );
            path.write_js_string(&mut t);
            t.extend_from_slice(b"\\nOr use context_tree_query with ref `");
            t.extend_from_slice(reference);
            t.extend_from_slice(b"`.");
        }
        _ => {
            t.extend_from_slice(b"[Summarized in pruner summary, ref `");
            t.extend_from_slice(reference);
            t.extend_from_slice(b"`. Use context_tree_query to retrieve full output.]");
        }
    }
    t
}
