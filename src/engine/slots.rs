//! The kept engine's render as its edit script, for readers that need the
//! output slot by slot rather than the JS applier's edit ids: the replay
//! (`crate::replay`) hashes and measures every slot of every render,
//! compares it with the previous render's, and reads what a slot shows
//! (`Shown`) to build the message as a value for its wire conversion. A
//! child of `engine` so it can run the phases over the kept records without
//! widening the engine's API beyond these methods.

use std::borrow::Cow;

use super::Engine;
use crate::apply::write_slot;
use crate::config::ThinkingConfig;
use crate::error::Result;
use crate::phases::{Inputs, Memo};
use crate::record::{Interner, MessageRecord};
use crate::script::{EditScript, Inserted, Op, Slot, Stats};

/// One render's script, with what is needed to measure and write its slots.
pub struct RenderedScript<'e> {
    inputs: Inputs<'e>,
    memo: &'e Memo,
    script: Cow<'e, EditScript>,
}

impl Engine {
    /// Renders the kept messages like `render` does, and hands back the
    /// script itself (the JS applier's bookkeeping is left untouched).
    #[cfg(test)]
    pub(crate) fn render_script(&mut self) -> Result<RenderedScript<'_>> {
        let script = self.run_phases_upto(super::Upto::All)?;
        Ok(RenderedScript {
            inputs: self.view(),
            memo: &self.memo,
            script: Cow::Owned(script),
        })
    }

    /// Renders the kept messages with every phase but 2.4.3's thinking
    /// strip (the engine's config's own strip is not applied): the part
    /// that configs differing in the strip alone share. `with_strip` then
    /// finishes a copy per strip.
    pub fn render_before_thinking(&mut self) -> Result<EditScript> {
        self.run_phases_upto(super::Upto::BeforeThinking)
    }

    /// Finishes `script` (from `render_before_thinking`) with the thinking
    /// strip `thinking` at `boundary`, as a render with that strip and
    /// boundary gives it.
    pub fn with_strip(
        &self,
        mut script: EditScript,
        thinking: Option<&ThinkingConfig>,
        boundary: Option<f64>,
    ) -> Result<RenderedScript<'_>> {
        let mut inputs = self.view();
        inputs.boundary = boundary;
        if let Some(t) = thinking {
            crate::phases::strip_thinking(&inputs, t, &mut script)?;
        }
        Ok(RenderedScript {
            inputs,
            memo: &self.memo,
            script: Cow::Owned(script),
        })
    }

    /// The last `render` as a script, while the messages and decisions it
    /// read are unchanged (None after a sync, a new state, config or
    /// chains, or before any render): what pi's gate reads of the
    /// release's render (`crate::replay::live`).
    pub fn last_rendered(&self) -> Option<RenderedScript<'_>> {
        let script = self.last.as_ref()?;
        Some(RenderedScript {
            inputs: self.view(),
            memo: &self.memo,
            script: Cow::Borrowed(script),
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
        self.script.into_owned().slots
    }

    pub fn stats(&self) -> Stats {
        self.script.stats
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

    /// Appends the slot's JSON text.
    pub fn write_slot(&self, slot: &Slot, out: &mut Vec<u8>) {
        write_slot(out, &self.inputs, self.memo, &self.script, slot);
    }

    /// The JSON text of input message `i`, if the render read one.
    pub fn input_text(&self, i: usize) -> Option<&[u8]> {
        (i < self.inputs.log.len()).then(|| self.inputs.message_text(i))
    }

    /// What the slot shows, for a reader that builds the message as a
    /// value rather than write its text (the replay's wire conversion).
    pub fn shown<'s>(&'s self, slot: &'s Slot) -> Shown<'s> {
        let i = slot.input as usize;
        let log = self.inputs.log;
        match slot.op {
            Op::Keep | Op::Edit => Shown::Message {
                text: self.inputs.message_text(i),
                slot,
            },
            Op::Stub => Shown::Stub {
                record: &log.records[i],
                text: self.memo.text(slot.text),
                syms: &log.syms,
            },
            Op::Insert => Shown::Inserted(self.block(slot)),
        }
    }
}

/// What an output slot shows (`RenderedScript::shown`).
pub enum Shown<'s> {
    /// The input message's text, edited as `slot` says (thinking removed,
    /// arguments purged; a `Keep` slot leaves it as it is).
    Message { text: &'s [u8], slot: &'s Slot },
    /// The stub of tool result `record`, with its text.
    Stub {
        record: &'s MessageRecord,
        text: &'s [u8],
        syms: &'s Interner,
    },
    /// A synthetic chain block.
    Inserted(&'s Inserted),
}
