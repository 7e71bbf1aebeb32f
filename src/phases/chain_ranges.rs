//! Phase 3 of 2.9.1 (SPEC-2.9 3): chains are resolved to positions. An
//! entry applies only when exactly one user message carries its start
//! timestamp and exactly one later assistant its final one; then everything
//! between them that is an assistant, a tool result or a per-batch summary
//! goes. Ranges that nest inside another are refused. Every refusal, and
//! every range whose ids differ from the ones recorded, is reported.

use super::keys::{bare, message_key, occurrence_key, MessageKey};
use super::synthetic::{
    existing_blocks, has_thinking, is_existing, iterate, protected_output, synthetic_text,
    BlockKey, Pools,
};
use super::text::{same, write_scalar};
use super::Inputs;
use crate::config::ChainConfig;
use crate::error::{PruneError, Result};
use crate::hash::HashSet;
use crate::json::Json;
use crate::record::{BlockType, Content, Kind, Refs, Role, Scalar};
use crate::script::{Diagnostic, EditScript, Inserted, Op, Slot, Stats};

struct Range<'e> {
    /// Position in `chainEntries()`.
    n: usize,
    entry: &'e Json,
    start: usize,
    end: usize,
}

/// `String(value)` (absent: `undefined`) as canonical text.
fn js_string(v: Option<&Json>) -> Vec<u8> {
    v.map_or_else(|| b"undefined".to_vec(), Json::js_string)
}

pub fn run(
    inputs: &Inputs<'_>,
    chain: &ChainConfig,
    script: &mut EditScript,
    stats: &mut Stats,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<bool> {
    let log = inputs.log;
    let syms = &log.syms;
    let entries = inputs.state.chain_entries();
    let existing = existing_blocks(inputs);

    // Step 2: resolve.
    let mut resolved: Vec<Range<'_>> = Vec::new();
    for (n, e) in entries.iter().enumerate() {
        let start_ts = e.get("startUserTimestamp");
        let final_ts = e.get("finalAssistantTimestamp");
        let range = if matches!(final_ts, Some(Json::Null)) {
            None
        } else {
            let (mut s, mut s_count, mut f, mut f_count) = (0, 0, 0, 0);
            for (k, slot) in script.slots.iter().enumerate() {
                let rec = &log.records[slot.input as usize];
                if rec.role == Role::User && same(&rec.timestamp, start_ts, syms) {
                    if s_count == 0 {
                        s = k;
                    }
                    s_count += 1;
                } else if rec.role == Role::Assistant && same(&rec.timestamp, final_ts, syms) {
                    if f_count == 0 {
                        f = k;
                    }
                    f_count += 1;
                }
            }
            (s_count == 1 && f_count == 1 && s < f).then_some((s, f))
        };
        match range {
            Some((start, end)) => resolved.push(Range {
                n,
                entry: e,
                start,
                end,
            }),
            None => {
                let mut detail = b"blockId=".to_vec();
                detail.extend(js_string(e.get("blockId")));
                detail.extend_from_slice(b" start=");
                detail.extend(js_string(start_ts));
                detail.extend_from_slice(b" final=");
                detail.extend(js_string(final_ts));
                diagnostics.push(Diagnostic {
                    kind: "unresolved-range",
                    key: e.get("blockId").cloned(),
                    detail,
                });
            }
        }
    }

    // Step 3: accept the ranges that do not start inside another.
    let mut accepted: Vec<&Range<'_>> = Vec::new();
    let mut claimed: HashSet<usize> = HashSet::default();
    for cand in &resolved {
        let loser = resolved
            .iter()
            .find(|o| !std::ptr::eq(*o, cand) && cand.start > o.start && cand.start < o.end);
        if loser.is_some() || claimed.contains(&cand.start) {
            let block = js_string(cand.entry.get("blockId"));
            let mut key = b"overlap:".to_vec();
            key.extend_from_slice(&block);
            let mut detail = b"blockId=".to_vec();
            detail.extend_from_slice(&block);
            match loser {
                Some(o) => {
                    detail.extend_from_slice(b" skipped: range nests inside blockId=");
                    detail.extend(js_string(o.entry.get("blockId")));
                }
                None => {
                    detail.extend_from_slice(b" skipped: range duplicates startIndex=");
                    detail.extend_from_slice(cand.start.to_string().as_bytes());
                    detail.extend_from_slice(b" already claimed");
                }
            }
            diagnostics.push(Diagnostic {
                kind: "unresolved-range",
                key: Some(Json::Str(key.into_boxed_slice())),
                detail,
            });
            continue;
        }
        claimed.insert(cand.start);
        accepted.push(cand);
    }
    if accepted.is_empty() {
        return Ok(false);
    }

    // Step 4: collect, per accepted entry.
    let n_slots = script.slots.len();
    let mut drop_at = vec![false; n_slots];
    let mut strip_at = vec![false; n_slots];
    let mut insert_after: Vec<Option<(usize, Option<Json>)>> = vec![None; n_slots];
    let mut dropped_ids: HashSet<Vec<u8>> = HashSet::default();
    let mut dropped_keys: HashSet<Vec<u8>> = HashSet::default();
    let mut pooled = Pools::default();
    let mut blocks: Vec<Inserted> = Vec::new();
    for r in &accepted {
        let e = r.entry;
        let block_id = e.get("blockId");
        let protected_ids = match e.get("protectedToolCallIds") {
            None | Some(Json::Null) => Vec::new(),
            v => iterate(v, "protectedToolCallIds")?,
        };
        let mut in_range: Vec<Scalar> = Vec::new();
        for k in r.start + 1..r.end {
            drop_at[k] = true;
            let slot = &script.slots[k];
            let i = slot.input as usize;
            let rec = &log.records[i];
            match rec.role {
                Role::ToolResult => {
                    in_range.push(rec.tool_call_id);
                    if let Scalar::Str(s) = rec.tool_call_id {
                        dropped_ids.insert(syms.text(s).to_vec());
                    }
                    if let MessageKey::Text(key) = message_key(rec, syms) {
                        dropped_keys.insert(key);
                    }
                    if protected_ids
                        .iter()
                        .any(|p| same(&rec.tool_call_id, Some(p), syms))
                    {
                        pooled.add(
                            &BlockKey::of(e, r.n),
                            protected_output(inputs, script, slot)?,
                        );
                    }
                }
                Role::Assistant => match rec.content {
                    Content::Array => {
                        for (j, b) in log.blocks(i).iter().enumerate() {
                            match b.kind {
                                Kind::Null => {
                                    return Err(PruneError::bad_message(
                                        i,
                                        &format!("content[{j}]"),
                                        "is null",
                                    ))
                                }
                                Kind::Object if b.ty == BlockType::ToolCall => {
                                    in_range.push(b.id);
                                    if let Scalar::Str(s) = b.id {
                                        dropped_ids.insert(syms.text(s).to_vec());
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    // A string iterates as characters, which have no type.
                    Content::Absent | Content::Null | Content::Str => {}
                    Content::Primitive | Content::Object => {
                        return Err(PruneError::bad_message(
                            i,
                            "content",
                            "is not iterable (the reference walks its blocks)",
                        ))
                    }
                },
                _ => {}
            }
        }
        // The cross-check: recorded bare ids against what the range holds.
        let recorded: Vec<Vec<u8>> = match e.get("droppedToolCallIds") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Arr(ids)) => {
                let mut set: Vec<Vec<u8>> = Vec::new();
                for id in ids {
                    let Some(t) = id.as_text() else {
                        return Err(PruneError::bad_state(
                            "a chain entry's droppedToolCallIds holds a non-string (the reference calls a string method on it)",
                        ));
                    };
                    let b = bare(t).to_vec();
                    if !set.contains(&b) {
                        set.push(b);
                    }
                }
                set
            }
            Some(_) => return Err(PruneError::bad_state(
                "a chain entry's droppedToolCallIds is not an array (the reference maps over it)",
            )),
        };
        let mut actual: Vec<Scalar> = Vec::new();
        for id in &in_range {
            if !actual.iter().any(|a| a.same(id)) {
                actual.push(*id);
            }
        }
        let in_actual = |b: &[u8]| {
            actual
                .iter()
                .any(|a| matches!(a, Scalar::Str(s) if syms.text(*s) == b))
        };
        if recorded.len() != actual.len() || recorded.iter().any(|b| !in_actual(b)) {
            let mut detail = b"blockId=".to_vec();
            detail.extend(js_string(block_id));
            detail.extend_from_slice(
                format!(" recorded={} actual={}", recorded.len(), actual.len()).as_bytes(),
            );
            diagnostics.push(Diagnostic {
                kind: "range-id-mismatch",
                key: block_id.cloned(),
                detail,
            });
        }
        if chain.strip_final_assistant_thinking {
            strip_at[r.end] = true;
        }
        let summary = inputs.state.entry_summary(r.n)?;
        let text = synthetic_text(inputs, e, &summary, pooled.get(&BlockKey::of(e, r.n)))?;
        blocks.push(Inserted {
            text: text.into_boxed_slice(),
            timestamp: e.get("compressedAt").cloned(),
        });
        insert_after[r.start] = Some((blocks.len() - 1, block_id.cloned()));
    }

    // Step 5: emit.
    let mut out: Vec<Slot> = Vec::with_capacity(n_slots);
    let mut used = 0usize;
    let first_block = script.blocks.len();
    for (k, mut slot) in std::mem::take(&mut script.slots).into_iter().enumerate() {
        let i = slot.input as usize;
        let rec = &log.records[i];
        let droppable = matches!(rec.role, Role::Assistant | Role::ToolResult) || rec.summary;
        if (drop_at[k] && droppable)
            || (rec.summary && cites_dropped(inputs, i, &dropped_keys, &dropped_ids)?)
        {
            stats.chain_dropped += 1;
            continue;
        }
        if rec.role == Role::Assistant && strip_at[k] {
            if rec.content != Content::Array {
                return Err(PruneError::bad_message(
                    i,
                    "content",
                    "is not an array (the reference filters out its thinking)",
                ));
            }
            if let Some(j) = log.blocks(i).iter().position(|b| b.kind == Kind::Null) {
                return Err(PruneError::bad_message(
                    i,
                    &format!("content[{j}]"),
                    "is null",
                ));
            }
            // Without thinking the copy equals the message: keep the
            // caller's own.
            if has_thinking(log.blocks(i)) {
                slot.strip_thinking();
                stats.final_thinking_stripped += 1;
            }
        }
        out.push(slot);
        if let Some((b, block_id)) = &insert_after[k] {
            if !is_existing(&existing, block_id.as_ref(), syms) {
                script.blocks.push(blocks[*b].clone());
                out.push(Slot {
                    op: Op::Insert,
                    input: (first_block + used) as u32,
                    ..Slot::keep(0)
                });
                used += 1;
                stats.chain_inserted += 1;
            }
        }
    }
    script.slots = out;
    Ok(true)
}

/// Whether a per-batch summary outside the ranges cites what they dropped:
/// a ref with a `resultTimestamp` by its occurrence key, any other by its
/// bare id; the first hit decides.
fn cites_dropped(
    inputs: &Inputs<'_>,
    i: usize,
    keys: &HashSet<Vec<u8>>,
    ids: &HashSet<Vec<u8>>,
) -> Result<bool> {
    let log = inputs.log;
    let rec = &log.records[i];
    match rec.refs_kind {
        Refs::None => Ok(false),
        Refs::Invalid => Err(PruneError::bad_message(
            i,
            "details.toolCallRefs",
            "is not an array (the reference calls .some on it)",
        )),
        Refs::Array => {
            for (j, r) in log.refs(i).iter().enumerate() {
                let field = format!("details.toolCallRefs[{j}]");
                if r.kind == Kind::Null {
                    return Err(PruneError::bad_message(i, &field, "is null"));
                }
                let hit = if r.result_timestamp.is_absent() {
                    let Scalar::Str(s) = r.tool_call_id else {
                        return Err(PruneError::bad_message(
                            i,
                            &format!("{field}.toolCallId"),
                            "is not a string (the reference calls a string method on it)",
                        ));
                    };
                    ids.contains(bare(log.syms.text(s)))
                } else {
                    let key = match r.result_timestamp {
                        Scalar::Num(ts) => occurrence_key(&r.tool_call_id, ts, &log.syms),
                        other => {
                            let mut k = Vec::new();
                            write_scalar(&mut k, &r.tool_call_id, &log.syms);
                            k.push(b'@');
                            write_scalar(&mut k, &other, &log.syms);
                            k
                        }
                    };
                    keys.contains(&key)
                };
                if hit {
                    return Ok(true);
                }
            }
            Ok(false)
        }
    }
}
