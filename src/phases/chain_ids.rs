//! Phase 3 of 2.4.3 (SPEC 3): chain range prune by id sets. Every tool
//! result and tool call whose id an entry dropped goes, with the per-batch
//! summaries that cite one; the chain's final assistant loses its thinking;
//! a synthetic block follows the user message that started the chain. The
//! reference rebuilds the array whenever this phase runs, so the call
//! counts as changed even when no message differs.

use super::synthetic::{
    existing_blocks, has_thinking, is_existing, iterate, protected_output, synthetic_text,
    BlockKey, Pools, ValueMap, ValueSet,
};
use super::Inputs;
use crate::config::ChainConfig;
use crate::error::{PruneError, Result};
use crate::json::Json;
use crate::record::{BlockType, Content, Kind, Refs, Role};
use crate::script::{EditScript, Inserted, Op, Slot, Stats};

pub fn run(
    inputs: &Inputs<'_>,
    chain: &ChainConfig,
    script: &mut EditScript,
    stats: &mut Stats,
) -> Result<bool> {
    let log = inputs.log;
    let syms = &log.syms;
    let entries = inputs.state.chain_entries();
    let existing = existing_blocks(inputs);

    let mut dropped = ValueSet::default();
    let mut protected_ids: ValueMap<BlockKey> = ValueMap::default();
    let mut finals = ValueSet::default();
    for (n, e) in entries.iter().enumerate() {
        for id in iterate(e.get("droppedToolCallIds"), "droppedToolCallIds")? {
            dropped.insert(Some(&id), syms);
        }
        let protected = match e.get("protectedToolCallIds") {
            None | Some(Json::Null) => Vec::new(),
            v => iterate(v, "protectedToolCallIds")?,
        };
        for id in protected {
            protected_ids.set(Some(&id), BlockKey::of(e, n), syms);
        }
        if chain.strip_final_assistant_thinking {
            match e.get("finalAssistantTimestamp") {
                Some(Json::Null) => {}
                v => finals.insert(v, syms),
            }
        }
    }

    // Protected outputs, by blockId, in message order.
    let mut outputs = Pools::default();
    if !protected_ids.is_empty() {
        for slot in &script.slots {
            let rec = &log.records[slot.input as usize];
            if rec.role != Role::ToolResult {
                continue;
            }
            if let Some(block) = protected_ids.get(&rec.tool_call_id) {
                outputs.add(block, protected_output(inputs, script, slot)?);
            }
        }
    }

    // One synthetic block per entry, by start timestamp (a later entry
    // with the same start replaces an earlier one).
    let mut blocks: Vec<Inserted> = Vec::new();
    let mut after_user: ValueMap<(usize, Option<Json>)> = ValueMap::default();
    for (n, e) in entries.iter().enumerate() {
        let summary = inputs.state.entry_summary(n)?;
        let block_id = e.get("blockId");
        let text = synthetic_text(inputs, e, &summary, outputs.get(&BlockKey::of(e, n)))?;
        blocks.push(Inserted {
            text: text.into_boxed_slice(),
            timestamp: e.get("compressedAt").cloned(),
        });
        after_user.set(
            e.get("startUserTimestamp"),
            (blocks.len() - 1, block_id.cloned()),
            syms,
        );
    }

    let mut out: Vec<Slot> = Vec::with_capacity(script.slots.len());
    let mut used: Vec<Inserted> = Vec::new();
    for mut slot in std::mem::take(&mut script.slots) {
        let i = slot.input as usize;
        let rec = &log.records[i];
        match rec.role {
            Role::ToolResult if dropped.contains(&rec.tool_call_id) => {
                stats.chain_dropped += 1;
                continue;
            }
            Role::Assistant => {
                let mut drop = false;
                match rec.content {
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
                                    drop |= dropped.contains(&b.id);
                                }
                                _ => {}
                            }
                        }
                    }
                    Content::Absent | Content::Null => {}
                    _ => {
                        return Err(PruneError::bad_message(
                            i,
                            "content",
                            "is not an array (the reference filters it)",
                        ))
                    }
                }
                if drop {
                    stats.chain_dropped += 1;
                    continue;
                }
                if finals.contains(&rec.timestamp) {
                    if rec.content != Content::Array {
                        return Err(PruneError::bad_message(
                            i,
                            "content",
                            "is not an array (the reference filters out its thinking)",
                        ));
                    }
                    // Without thinking the copy equals the message: keep
                    // the caller's own.
                    if has_thinking(log.blocks(i)) {
                        slot.strip_thinking();
                        stats.final_thinking_stripped += 1;
                    }
                    out.push(slot);
                    continue;
                }
            }
            _ if rec.summary && cites_dropped(inputs, i, &dropped)? => {
                stats.chain_dropped += 1;
                continue;
            }
            _ => {}
        }
        let user_ts = (rec.role == Role::User).then_some(rec.timestamp);
        out.push(slot);
        if let Some(ts) = user_ts {
            if let Some((b, block_id)) = after_user.get(&ts) {
                if !is_existing(&existing, block_id.as_ref(), syms) {
                    used.push(blocks[*b].clone());
                    out.push(Slot {
                        op: Op::Insert,
                        input: (script.blocks.len() + used.len() - 1) as u32,
                        ..Slot::keep(0)
                    });
                    stats.chain_inserted += 1;
                }
            }
        }
    }
    script.blocks.extend(used);
    script.slots = out;
    Ok(true)
}

/// Whether a per-batch summary message cites a dropped id
/// (`details?.toolCallRefs ?? []` tested with `.some`).
fn cites_dropped(inputs: &Inputs<'_>, i: usize, dropped: &ValueSet) -> Result<bool> {
    let rec = &inputs.log.records[i];
    match rec.refs_kind {
        Refs::None => Ok(false),
        Refs::Invalid => Err(PruneError::bad_message(
            i,
            "details.toolCallRefs",
            "is not an array (the reference calls .some on it)",
        )),
        Refs::Array => {
            for (j, r) in inputs.log.refs(i).iter().enumerate() {
                if r.kind == Kind::Null {
                    return Err(PruneError::bad_message(
                        i,
                        &format!("details.toolCallRefs[{j}]"),
                        "is null",
                    ));
                }
                if dropped.contains(&r.tool_call_id) {
                    return Ok(true);
                }
            }
            Ok(false)
        }
    }
}
