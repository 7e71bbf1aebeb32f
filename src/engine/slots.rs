//! The kept engine's render as its edit script, for readers that need the
//! output slot by slot rather than the JS applier's edit ids: the replay
//! (`crate::replay`) hashes and measures every slot of every render and
//! compares it with the previous render's. A child of `engine` so it can
//! run the phases over the kept records without widening the engine's API
//! beyond this one method.

use super::Engine;
use crate::apply::{slot_len, write_slot};
use crate::error::Result;
use crate::phases::{Inputs, Memo};
use crate::script::{EditScript, Inserted, Slot, Stats};

/// One render's script, with what is needed to measure and write its slots.
pub struct RenderedScript<'e> {
    inputs: Inputs<'e>,
    memo: &'e Memo,
    script: EditScript,
}

impl Engine {
    /// Renders the kept messages like `render` does, and hands back the
    /// script itself (the JS applier's bookkeeping is left untouched).
    pub fn render_script(&mut self) -> Result<RenderedScript<'_>> {
        let script = self.run_phases()?;
        Ok(RenderedScript {
            inputs: self.view(),
            memo: &self.memo,
            script,
        })
    }

    /// Hands back the slots of an earlier script, for the next render to
    /// fill instead of allocating (a replay renders thousands of times).
    pub fn recycle_slots(&mut self, slots: Vec<Slot>) {
        self.spare_slots = slots;
    }
}

impl RenderedScript<'_> {
    pub fn slots(&self) -> &[Slot] {
        &self.script.slots
    }

    /// The synthetic block an `Insert` slot shows.
    pub fn block(&self, slot: &Slot) -> &Inserted {
        &self.script.blocks[slot.input as usize]
    }

    /// The slots, for keeping past the render (the engine may be given
    /// them back with `Engine::recycle_slots`).
    pub fn into_slots(self) -> Vec<Slot> {
        self.script.slots
    }

    pub fn stats(&self) -> Stats {
        self.script.stats
    }

    /// Some phase changed something (else the output is the input).
    pub fn changed(&self) -> bool {
        self.script.changed
    }

    /// Changes whenever the kept decisions were dropped (new state or
    /// config): stub text ids are stable only within one generation.
    pub fn generation(&self) -> u64 {
        self.memo.generation()
    }

    /// Whether 2.4.3's phase 3 strips message `input`'s thinking as a
    /// chain's final answer (as opposed to phase 4's keep-window).
    pub fn final_answer_strip(&self, input: usize) -> bool {
        self.memo.chain_fact(input).is_some_and(|f| f.final_strip)
    }

    /// `JSON.stringify(slot).length`.
    pub fn slot_len(&self, slot: &Slot) -> usize {
        slot_len(&self.inputs, self.memo, &self.script, slot)
    }

    /// Appends the slot's JSON text.
    pub fn write_slot(&self, slot: &Slot, out: &mut Vec<u8>) {
        write_slot(out, &self.inputs, self.memo, &self.script, slot);
    }
}
