//! Phase 1 (SPEC 3; SPEC-2.9 3): a summarized tool result becomes a stub
//! that points at its summary. The dialects differ in the key: 2.4.3 looks
//! the bare `toolCallId` up, 2.9.1 the occurrence key first and the bare id
//! only for a legacy-only record. The stub text is spelled here once for
//! Rust; `stubText` in js/pure/rules.js is the JS oracle's copy.

use super::keys::{message_key, MessageKey};
use super::text::{write_or, write_scalar, write_value};
use super::Inputs;
use crate::dialect::Dialect;
use crate::error::{PruneError, Result};
use crate::hash::HashMap;
use crate::json::Json;
use crate::record::{Role, Scalar};
use crate::script::{EditScript, Stats};

const GRACE_TOOL: &[u8] = b"context_tree_query";

pub fn run(inputs: &Inputs<'_>, script: &mut EditScript, stats: &mut Stats) -> Result<bool> {
    let log = inputs.log;
    let grace = recovery_grace(inputs);
    let mut changed = false;
    // One stub text per look-up key and message id: renders of long
    // conversations meet the same records again and again.
    let mut texts: HashMap<(Vec<u8>, Vec<u8>), Vec<u8>> = HashMap::default();
    for (i, rec) in log.records.iter().enumerate() {
        if rec.role != Role::ToolResult {
            continue;
        }
        let (key, lookup) = match inputs.dialect {
            Dialect::V2_4 => {
                let Scalar::Str(id) = rec.tool_call_id else {
                    continue;
                };
                let id = log.syms.text(id);
                if !inputs.state.is_summarized(id) {
                    continue;
                }
                (MessageKey::Text(id.to_vec()), id.to_vec())
            }
            Dialect::V2_9 => {
                let key = message_key(rec, &log.syms);
                let lookup = match (key.text(), rec.tool_call_id) {
                    (Some(k), _) if inputs.state.is_summarized(k) => k.to_vec(),
                    (_, Scalar::Str(id))
                        if inputs.state.has_legacy_bare_record(log.syms.text(id)) =>
                    {
                        log.syms.text(id).to_vec()
                    }
                    _ => continue,
                };
                (key, lookup)
            }
        };
        let record = inputs.state.record(&lookup);
        if let (Some(p), Some(r)) = (&inputs.config.protection, record) {
            match p.protects(r.get("toolName"), r.get("args")) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(what) => {
                    return Err(PruneError::bad_config(format!(
                        "{what} (the reference throws checking message {i})"
                    )))
                }
            }
        }
        if key.text().is_some_and(|k| grace.iter().any(|g| g == k)) {
            continue;
        }
        let mut reference = Vec::new();
        match inputs.state.short_ref(&lookup) {
            Some(r) if !r.is_null() => r.write_js_string(&mut reference),
            _ => write_scalar(&mut reference, &rec.tool_call_id, &log.syms),
        }
        let text = texts
            .entry((lookup, reference))
            .or_insert_with_key(|(_, reference)| stub_text(record, reference))
            .clone();
        script.stub(i, text);
        stats.stubbed += 1;
        changed = true;
    }
    Ok(changed)
}

/// Keys of `context_tree_query` results within the last
/// `recoveryGraceTurns` user turns (2.4.3: their ids; 2.9.1: `K(m)`).
fn recovery_grace(inputs: &Inputs<'_>) -> Vec<Vec<u8>> {
    let log = inputs.log;
    let Some(grace) = inputs.config.grace_turns() else {
        return Vec::new();
    };
    let users = log.records.iter().filter(|r| r.role == Role::User).count();
    let mut seen = 0usize;
    let mut keys = Vec::new();
    for rec in &log.records {
        if rec.role == Role::User {
            seen += 1;
            continue;
        }
        let query = rec.role == Role::ToolResult
            && rec
                .tool_name
                .as_str()
                .is_some_and(|n| log.syms.text(n) == GRACE_TOOL);
        let Scalar::Str(id) = rec.tool_call_id else {
            continue;
        };
        if query && ((users - seen) as f64) <= grace {
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
