//! Phase 3 of 2.4.3 (SPEC 3): chain range prune by id sets. Every tool
//! result and tool call whose id an entry dropped goes, with the per-batch
//! summaries that cite one; the chain's final assistant loses its thinking;
//! a synthetic block follows the user message that started the chain. The
//! reference rebuilds the array whenever this phase runs, so the call
//! counts as changed even when no message differs. The JS oracle's copy is
//! `chainRangePrune` in js/pure/v2.4.js.
//!
//! What a message is to this phase depends on the chain entries alone, so
//! the sets are kept (`chain_sets.rs`) and each message's `ChainFact` too
//! (`ChainIdsCache`); a render then walks the facts. When the host replaces
//! the entries from one on (a flush adds a chain), the sets take back and
//! read only those, and only the facts of the messages that read a key they
//! touched are decided again (`id_index.rs`).

use super::chain_sets::ChainSets;
use super::id_index::IdIndex;
use super::put;
use super::synthetic::{protected_output, BlockKey, ChainCaches, Pools};
use super::Inputs;
use crate::config::ChainConfig;
use crate::error::{PruneError, Result};
use crate::record::{BlockType, Content, Log, Role};
use crate::script::{EditScript, Inserted, Op, Slot, Stats};

/// 2.4.3 phase 3's facts about one message, for one state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChainFact {
    /// Dropped: a tool result or tool call with a dropped id, or a summary
    /// citing one.
    pub dropped: bool,
    /// An assistant at a chain's final timestamp.
    pub final_strip: bool,
    /// A user at a chain's start: the entry (in `chainEntries()` order).
    pub starts: Option<u32>,
    /// A tool result whose output an entry protects: that entry.
    pub protected_by: Option<u32>,
}

/// What this phase keeps between renders.
#[derive(Default)]
pub struct ChainIdsCache {
    /// The sets, as of the entries they read.
    sets: ChainSets,
    /// The first entry that changed since the sets read them, if any.
    changed_from: Option<usize>,
    /// Each message's fact, for the sets.
    facts: Vec<Option<ChainFact>>,
    /// The messages reading each id and timestamp, built from the second
    /// render on (a stateless call renders once).
    index: IdIndex,
    warm: bool,
    /// Buffers reused from one render to the next (a long conversation's
    /// would otherwise be allocated, and zeroed by the system, at every
    /// render): the facts per slot and a slot array.
    slot_facts: Vec<ChainFact>,
    spare_slots: Vec<Slot>,
    /// How many facts were decided so far (the tests' measure of what a
    /// render after new chains costs).
    #[cfg(test)]
    pub(crate) decided: usize,
}

impl ChainIdsCache {
    /// Forgets the sets and the facts: the state or the config changed.
    pub fn clear(&mut self) {
        self.facts.clear();
        self.sets = ChainSets::default();
        self.changed_from = None;
    }

    /// The chain entries from `from` on changed (and nothing else of the
    /// state): the next render brings the sets up to them and decides
    /// again the facts their keys reach.
    pub fn entries_changed(&mut self, from: usize) {
        if from == 0 {
            self.clear();
        } else {
            self.changed_from = Some(self.changed_from.map_or(from, |f| f.min(from)));
        }
    }

    /// Forgets the facts about messages `from` and after of `log` (about to
    /// be re-sent).
    pub fn truncate(&mut self, from: usize, log: &Log) {
        self.facts.truncate(from);
        self.index.truncate(from, log);
    }

    pub fn fact(&self, i: usize) -> Option<ChainFact> {
        self.facts.get(i).copied().flatten()
    }

    /// Brings the sets up to the state's entries, forgetting the facts of
    /// the messages that read a key they took back or added.
    fn bring_sets(&mut self, inputs: &Inputs<'_>, chain: &ChainConfig) -> Result<()> {
        let log = inputs.log;
        let mut touched = Vec::new();
        let entries = inputs.state.chain_entries();
        let brought = self
            .sets
            .bring(&entries, self.changed_from.take(), chain, &mut touched);
        let refresh = !touched.is_empty() && !self.facts.is_empty();
        if self.warm || refresh {
            self.index.catch_up(log);
        }
        if refresh {
            for key in &touched {
                for &i in self.index.readers(key, &log.syms) {
                    if let Some(f) = self.facts.get_mut(i as usize) {
                        *f = None;
                    }
                }
            }
        }
        self.warm = true;
        brought
    }
}

/// What message `i` is to this phase (errors where the reference throws
/// reading it).
fn fact(inputs: &Inputs<'_>, sets: &ChainSets, i: usize) -> Result<ChainFact> {
    let log = inputs.log;
    let syms = &log.syms;
    let rec = &log.records[i];
    let mut f = ChainFact::default();
    match rec.role {
        Role::ToolResult => {
            f.dropped = sets.dropped(&rec.tool_call_id, syms);
            f.protected_by = sets.protected_by(&rec.tool_call_id, syms);
        }
        Role::Assistant => {
            for b in inputs.walked_blocks(i, "the reference filters it")? {
                let (_, b) = b?;
                if b.ty == BlockType::ToolCall {
                    f.dropped |= sets.dropped(&b.id, syms);
                }
            }
            if !f.dropped && sets.is_final(&rec.timestamp, syms) {
                if rec.content != Content::Array {
                    return Err(PruneError::bad_message(
                        i,
                        "content",
                        "is not an array (the reference filters out its thinking)",
                    ));
                }
                f.final_strip = true;
            }
        }
        Role::User => f.starts = sets.starting(&rec.timestamp, syms),
        _ => {}
    }
    if rec.summary && !f.dropped {
        f.dropped = cites_dropped(inputs, i, sets)?;
    }
    Ok(f)
}

pub fn run(
    inputs: &Inputs<'_>,
    cache: &mut ChainIdsCache,
    mut shared: ChainCaches<'_>,
    chain: &ChainConfig,
    script: &mut EditScript,
    stats: &mut Stats,
) -> Result<bool> {
    let log = inputs.log;
    cache.bring_sets(inputs, chain)?;
    let mut facts = std::mem::take(&mut cache.slot_facts);
    facts.clear();
    // The reference builds every synthetic block before it walks the
    // messages, so a message it cannot read fails only after them: the
    // first such error waits until the blocks are built.
    let mut unreadable = None;
    for slot in &script.slots {
        let i = slot.input as usize;
        let f = match cache.fact(i) {
            Some(f) => f,
            None => {
                #[cfg(test)]
                {
                    cache.decided += 1;
                }
                match fact(inputs, &cache.sets, i) {
                    Ok(f) => {
                        put(&mut cache.facts, i, f);
                        f
                    }
                    Err(e) => {
                        unreadable.get_or_insert(e);
                        ChainFact::default()
                    }
                }
            }
        };
        facts.push(f);
    }

    // Protected outputs, by blockId, in message order (a stubbed result's
    // text is its stub).
    let entries = inputs.state.chain_entries();
    let mut outputs = Pools::default();
    for (slot, f) in script.slots.iter().zip(&facts) {
        if let Some(n) = f.protected_by {
            let key = BlockKey::of(entries[n as usize], n as usize);
            outputs.add(&key, protected_output(slot));
        }
    }

    // One synthetic block per entry, built whether or not it is inserted
    // (the reference builds them all, and throws on a bad one).
    let mut blocks: Vec<Inserted> = Vec::with_capacity(entries.len());
    for (n, e) in entries.iter().enumerate() {
        let text = shared.synthetic_text(inputs, n, outputs.get(&BlockKey::of(e, n)))?;
        blocks.push(Inserted {
            text,
            timestamp: e.get("compressedAt").cloned(),
        });
    }
    if let Some(e) = unreadable {
        cache.slot_facts = facts;
        return Err(e);
    }

    shared.log_index.catch_up(log);
    let existing = &*shared.log_index;
    // The output goes into the spare allocation, and the input's becomes
    // the next render's spare.
    let mut out: Vec<Slot> = std::mem::take(&mut cache.spare_slots);
    out.clear();
    let mut input = std::mem::take(&mut script.slots);
    for (mut slot, &f) in input.drain(..).zip(&facts) {
        if f.dropped {
            stats.chain_dropped += 1;
            continue;
        }
        let i = slot.input as usize;
        // Without thinking the copy equals the message: keep the caller's own.
        if f.final_strip && log.records[i].has_thinking {
            slot.strip_thinking();
            stats.final_thinking_stripped += 1;
        }
        out.push(slot);
        if let Some(n) = f.starts {
            let e = entries[n as usize];
            if !existing.has_block(e.get("blockId"), &log.syms) {
                script.blocks.push(blocks[n as usize].clone());
                out.push(Slot {
                    op: Op::Insert,
                    input: (script.blocks.len() - 1) as u32,
                    ..Slot::keep(0)
                });
                stats.chain_inserted += 1;
            }
        }
    }
    script.slots = out;
    cache.spare_slots = input;
    cache.slot_facts = facts;
    Ok(true)
}

/// Whether a per-batch summary message cites a dropped id
/// (`details?.toolCallRefs ?? []` tested with `.some`).
fn cites_dropped(inputs: &Inputs<'_>, i: usize, sets: &ChainSets) -> Result<bool> {
    for r in inputs.summary_refs(i)? {
        let (_, r) = r?;
        if sets.dropped(&r.tool_call_id, &inputs.log.syms) {
            return Ok(true);
        }
    }
    Ok(false)
}
