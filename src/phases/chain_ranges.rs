//! Phase 3 of 2.9.1 (SPEC-2.9 3): chains are resolved to positions. An
//! entry applies only when exactly one user message carries its start
//! timestamp and exactly one later assistant its final one; then everything
//! between them that is an assistant, a tool result or a per-batch summary
//! goes. Ranges that nest inside another are refused. Every refusal, and
//! every range whose ids differ from the ones recorded, is reported. The JS
//! oracle's copy is `chainRangePrune` in js/pure/v2.9.js.

use super::keys::{bare, message_key, occurrence_key, MessageKey};
use super::log_index::LogIndex;
use super::synthetic::{has_thinking, iterate, protected_output, BlockKey, ChainCaches, Pools};
use super::text::{same, write_scalar};
use super::Inputs;
use super::{no_null_block, put};
use crate::config::ChainConfig;
use crate::error::{PruneError, Result};
use crate::hash::HashSet;
use crate::json::value::write_value;
use crate::json::Json;
use crate::record::{BlockType, Content, Role, Scalar};
use crate::script::{Diagnostic, EditScript, Inserted, Op, Slot, Stats};

/// An accepted range: entry `n` of `chainEntries()` keeps its start
/// `start` and final assistant `end` and drops what lies between.
struct Accepted {
    n: usize,
    start: usize,
    end: usize,
    /// The tool results inside whose outputs the entry protects (their
    /// slots are read at every render: phase 1 may stub them later).
    protected: Vec<usize>,
}

/// What steps 2 to 4 derive from one state and one resolution of its
/// entries. A message appended without moving any entry's resolution
/// leaves it as it is, so a kept engine only emits (step 5) again.
pub struct RangePlan {
    /// Per entry, the (start, final) positions it resolved to.
    resolution: Vec<Option<(usize, usize)>>,
    diagnostics: Vec<Diagnostic>,
    accepted: Vec<Accepted>,
    /// Whether the message at each position lies strictly inside a range.
    inside: Vec<bool>,
    dropped_ids: HashSet<Box<[u8]>>,
    dropped_keys: HashSet<Box<[u8]>>,
    /// Per message, whether a per-batch summary cites a dropped result
    /// (decided once per plan).
    cites: Vec<Option<bool>>,
}

/// `String(value)` (absent: `undefined`) as canonical text, after `prefix`.
fn js_string(prefix: &[u8], v: Option<&Json>) -> Vec<u8> {
    let mut out = prefix.to_vec();
    write_value(&mut out, v);
    out
}

/// Step 2: each entry's range, where exactly one user message carries its
/// start timestamp and exactly one later assistant its final one.
fn resolve(inputs: &Inputs<'_>, index: &LogIndex) -> Vec<Option<(usize, usize)>> {
    let syms = &inputs.log.syms;
    inputs
        .state
        .chain_entries()
        .iter()
        .map(|e| {
            let final_ts = e.get("finalAssistantTimestamp");
            if matches!(final_ts, Some(Json::Null)) {
                return None;
            }
            let s = index.only_user(e.get("startUserTimestamp"), syms)?;
            let f = index.only_assistant(final_ts, syms)?;
            (s < f).then_some((s, f))
        })
        .collect()
}

pub fn run(
    inputs: &Inputs<'_>,
    range_plan: &mut Option<RangePlan>,
    mut shared: ChainCaches<'_>,
    chain: &ChainConfig,
    script: &mut EditScript,
    stats: &mut Stats,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<bool> {
    shared.log_index.catch_up(inputs.log);
    let resolution = resolve(inputs, shared.log_index);
    let mut plan = match range_plan.take() {
        Some(p) if p.resolution == resolution => p,
        _ => plan(inputs, script, resolution)?,
    };
    diagnostics.extend(plan.diagnostics.iter().cloned());
    if plan.accepted.is_empty() {
        *range_plan = Some(plan);
        return Ok(false);
    }
    let entries = inputs.state.chain_entries();

    // Step 4's synthetic blocks: the protected outputs pool per blockId in
    // acceptance order, each block quoting what its key pooled so far.
    let n_slots = script.slots.len();
    let mut pooled = Pools::default();
    let mut insert_after: Vec<Option<usize>> = vec![None; n_slots];
    let mut blocks: Vec<Inserted> = Vec::with_capacity(plan.accepted.len());
    for (a, r) in plan.accepted.iter().enumerate() {
        let e = entries[r.n];
        let key = BlockKey::of(e, r.n);
        for &k in &r.protected {
            pooled.add(&key, protected_output(&script.slots[k]));
        }
        let text = match shared.synthetic_text(inputs, r.n, pooled.get(&key)) {
            Ok(t) => t,
            Err(err) => {
                *range_plan = Some(plan);
                return Err(err);
            }
        };
        blocks.push(Inserted {
            text,
            timestamp: e.get("compressedAt").cloned(),
        });
        insert_after[r.start] = Some(a);
    }
    let strip_at: HashSet<usize> = if chain.strip_final_assistant_thinking {
        plan.accepted.iter().map(|r| r.end).collect()
    } else {
        HashSet::default()
    };

    // Step 5: emit.
    let result = emit(
        inputs,
        &mut plan,
        script,
        stats,
        &insert_after,
        &strip_at,
        blocks,
        shared.log_index,
    );
    *range_plan = Some(plan);
    result.map(|()| true)
}

/// Steps 3 and 4 for one resolution: which ranges are accepted, what they
/// drop, and the diagnostics of every refusal and id mismatch.
fn plan(
    inputs: &Inputs<'_>,
    script: &EditScript,
    resolution: Vec<Option<(usize, usize)>>,
) -> Result<RangePlan> {
    let log = inputs.log;
    let syms = &log.syms;
    let entries = inputs.state.chain_entries();
    let mut diagnostics = Vec::new();
    for (e, r) in entries.iter().zip(&resolution) {
        if r.is_none() {
            let mut detail = js_string(b"blockId=", e.get("blockId"));
            detail.extend(js_string(b" start=", e.get("startUserTimestamp")));
            detail.extend(js_string(b" final=", e.get("finalAssistantTimestamp")));
            diagnostics.push(Diagnostic {
                kind: "unresolved-range",
                key: e.get("blockId").cloned(),
                detail,
            });
        }
    }
    let resolved: Vec<(usize, usize, usize)> = resolution
        .iter()
        .enumerate()
        .filter_map(|(n, r)| r.map(|(s, f)| (n, s, f)))
        .collect();

    // Step 3: accept the ranges that do not start inside another.
    let mut accepted: Vec<Accepted> = Vec::new();
    let mut claimed: HashSet<usize> = HashSet::default();
    for &(n, start, end) in &resolved {
        let loser = resolved
            .iter()
            .find(|&&(o, s, f)| o != n && start > s && start < f);
        if loser.is_some() || claimed.contains(&start) {
            let key = js_string(b"overlap:", entries[n].get("blockId"));
            let mut detail = js_string(b"blockId=", entries[n].get("blockId"));
            match loser {
                Some(&(o, _, _)) => detail.extend(js_string(
                    b" skipped: range nests inside blockId=",
                    entries[o].get("blockId"),
                )),
                None => detail.extend_from_slice(
                    format!(" skipped: range duplicates startIndex={start} already claimed")
                        .as_bytes(),
                ),
            }
            diagnostics.push(Diagnostic {
                kind: "unresolved-range",
                key: Some(Json::Str(key.into_boxed_slice())),
                detail,
            });
            continue;
        }
        claimed.insert(start);
        accepted.push(Accepted {
            n,
            start,
            end,
            protected: Vec::new(),
        });
    }

    // Step 4: collect, per accepted entry.
    let mut inside = vec![false; accepted.iter().map(|r| r.end).max().unwrap_or(0)];
    let mut dropped_ids: HashSet<Box<[u8]>> = HashSet::default();
    let mut dropped_keys: HashSet<Box<[u8]>> = HashSet::default();
    for r in &mut accepted {
        let e = entries[r.n];
        let block_id = e.get("blockId");
        let protected_ids = match e.get("protectedToolCallIds") {
            None | Some(Json::Null) => Vec::new(),
            v => iterate(v, "protectedToolCallIds")?,
        };
        let mut in_range: Vec<Scalar> = Vec::new();
        for (k, dropped) in inside.iter_mut().enumerate().take(r.end).skip(r.start + 1) {
            *dropped = true;
            let i = script.slots[k].input as usize;
            let rec = &log.records[i];
            match rec.role {
                Role::ToolResult => {
                    in_range.push(rec.tool_call_id);
                    if let Scalar::Str(s) = rec.tool_call_id {
                        dropped_ids.insert(syms.text(s).into());
                    }
                    if let MessageKey::Text(key) = message_key(rec, syms) {
                        dropped_keys.insert(key.into());
                    }
                    if protected_ids
                        .iter()
                        .any(|p| same(&rec.tool_call_id, Some(p), syms))
                    {
                        r.protected.push(k);
                    }
                }
                Role::Assistant => match rec.content {
                    Content::Array => {
                        for b in inputs.object_blocks(i) {
                            let (_, b) = b?;
                            if b.ty == BlockType::ToolCall {
                                in_range.push(b.id);
                                if let Scalar::Str(s) = b.id {
                                    dropped_ids.insert(syms.text(s).into());
                                }
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
            let mut detail = js_string(b"blockId=", block_id);
            detail.extend_from_slice(
                format!(" recorded={} actual={}", recorded.len(), actual.len()).as_bytes(),
            );
            diagnostics.push(Diagnostic {
                kind: "range-id-mismatch",
                key: block_id.cloned(),
                detail,
            });
        }
    }
    Ok(RangePlan {
        resolution,
        diagnostics,
        accepted,
        inside,
        dropped_ids,
        dropped_keys,
        cites: Vec::new(),
    })
}

/// Step 5: the output slots. Assistants, tool results and per-batch
/// summaries inside a range go, as do summaries elsewhere citing what a
/// range dropped; final assistants lose their thinking; each range's block
/// follows its start unless the conversation already holds it.
#[allow(clippy::too_many_arguments)]
fn emit(
    inputs: &Inputs<'_>,
    plan: &mut RangePlan,
    script: &mut EditScript,
    stats: &mut Stats,
    insert_after: &[Option<usize>],
    strip_at: &HashSet<usize>,
    blocks: Vec<Inserted>,
    index: &LogIndex,
) -> Result<()> {
    let log = inputs.log;
    let syms = &log.syms;
    let entries = inputs.state.chain_entries();
    let n_slots = script.slots.len();
    let mut out: Vec<Slot> = Vec::with_capacity(n_slots + blocks.len());
    let mut used = 0usize;
    let first_block = script.blocks.len();
    let slots = std::mem::take(&mut script.slots);
    for (k, mut slot) in slots.into_iter().enumerate() {
        let i = slot.input as usize;
        let rec = &log.records[i];
        let droppable = matches!(rec.role, Role::Assistant | Role::ToolResult) || rec.summary;
        let inside = plan.inside.get(k).copied().unwrap_or(false);
        if (inside && droppable) || (rec.summary && plan.cites(inputs, i)?) {
            stats.chain_dropped += 1;
            continue;
        }
        if rec.role == Role::Assistant && strip_at.contains(&k) {
            if rec.content != Content::Array {
                return Err(PruneError::bad_message(
                    i,
                    "content",
                    "is not an array (the reference filters out its thinking)",
                ));
            }
            no_null_block(log, i)?;
            // Without thinking the copy equals the message: keep the
            // caller's own.
            if has_thinking(log.blocks(i)) {
                slot.strip_thinking();
                stats.final_thinking_stripped += 1;
            }
        }
        out.push(slot);
        if let Some(a) = insert_after[k] {
            let block_id = entries[plan.accepted[a].n].get("blockId");
            if !index.has_block(block_id, syms) {
                script.blocks.push(blocks[a].clone());
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
    Ok(())
}

impl RangePlan {
    /// Keeps the plan over a re-send of messages `from` and after when
    /// none of them lies inside a range (the resolution is checked again at
    /// the next render); false when it must go.
    pub fn truncate(&mut self, from: usize) -> bool {
        self.cites.truncate(from);
        from >= self.inside.len()
    }

    /// Whether the per-batch summary at `i` cites what the ranges dropped.
    fn cites(&mut self, inputs: &Inputs<'_>, i: usize) -> Result<bool> {
        if let Some(Some(hit)) = self.cites.get(i) {
            return Ok(*hit);
        }
        let hit = cites_dropped(inputs, i, &self.dropped_keys, &self.dropped_ids)?;
        put(&mut self.cites, i, hit);
        Ok(hit)
    }
}

/// Whether a per-batch summary outside the ranges cites what they dropped:
/// a ref with a `resultTimestamp` by its occurrence key, any other by its
/// bare id; the first hit decides.
fn cites_dropped(
    inputs: &Inputs<'_>,
    i: usize,
    keys: &HashSet<Box<[u8]>>,
    ids: &HashSet<Box<[u8]>>,
) -> Result<bool> {
    let log = inputs.log;
    for r in inputs.summary_refs(i)? {
        let (j, r) = r?;
        let hit = if r.result_timestamp.is_absent() {
            let Scalar::Str(s) = r.tool_call_id else {
                return Err(PruneError::bad_message(
                    i,
                    &format!("details.toolCallRefs[{j}].toolCallId"),
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
            keys.contains(key.as_slice())
        };
        if hit {
            return Ok(true);
        }
    }
    Ok(false)
}
