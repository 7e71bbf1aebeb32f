//! A kept engine's render turned back into bytes, the way `js/applier.js`
//! turns it into objects: the engine answers with an order (the caller's
//! message `i`, or edit id `n`) and describes each edit only the first time
//! it sends it, so the receiver keeps the descriptions it was sent until the
//! engine evicts them. `Receiver` is that receiver; `Receiver::output`
//! writes the pruned array with the crate's byte applier, so that a
//! differential target can put a kept render's bytes beside a stateless
//! `prune_bytes` of the same messages.

use std::collections::HashMap;

use condense_native::parse_value;
use condense_native::Config;
use condense_native::Dialect;
use condense_native::Json;
use condense_native::Log;
use condense_native::Rendered;
use condense_native::State;
use condense_native::{output_len, write_output};
use condense_native::{scan_array, Source};
use condense_native::{EditScript, Inserted, Op, Slot};
use condense_native::{Inputs, Memo};

/// The edit descriptions a render's receiver holds, by id.
#[derive(Default)]
pub struct Receiver {
    edits: HashMap<u32, Json>,
}

/// `[1, input, text]`, `[2, input, strip, [[block, size], ...]]` or
/// `[3, text, timestamp?]` (`engine.rs`, `write_description`).
fn slot_of(desc: &Json, memo: &mut Memo, script: &mut EditScript) -> Slot {
    let items = desc.as_array().expect("an edit description is an array");
    let int = |j: &Json| match j {
        Json::Num(n) if n.fract() == 0.0 && *n >= 0.0 => *n as u32,
        other => panic!("not an index in an edit description: {other:?}"),
    };
    let op = int(&items[0]);
    let mut slot = Slot::keep(0);
    match op {
        1 => {
            slot.op = Op::Stub;
            slot.input = int(&items[1]);
            let text = items[2].as_text().expect("a stub text is a string");
            slot.text = memo.text_id(text.to_vec());
        }
        2 => {
            slot.op = Op::Edit;
            slot.input = int(&items[1]);
            slot.strip_thinking = int(&items[2]) == 1;
            for pair in items[3].as_array().expect("purged blocks") {
                let pair = pair.as_array().expect("a purged block is a pair");
                slot.purged.push((int(&pair[0]), int(&pair[1])));
            }
        }
        3 => {
            slot.op = Op::Insert;
            slot.input = script.blocks.len() as u32;
            script.blocks.push(Inserted {
                text: items[1]
                    .as_text()
                    .expect("a synthetic text is a string")
                    .into(),
                timestamp: items.get(2).cloned(),
            });
        }
        other => panic!("unknown edit op {other} in {desc:?}"),
    }
    slot
}

impl Receiver {
    /// Takes in a render's evictions and new descriptions.
    pub fn receive(&mut self, r: &Rendered) {
        for id in &r.evicted {
            self.edits.remove(id);
        }
        if r.fresh.is_empty() {
            return;
        }
        let fresh = parse_value(&r.fresh_edits).expect("fresh edits are JSON");
        let descs = fresh.as_array().expect("fresh edits are an array");
        assert_eq!(descs.len(), r.fresh.len(), "one description per fresh id");
        for (id, desc) in r.fresh.iter().zip(descs) {
            self.edits.insert(*id, desc.clone());
        }
    }

    /// How many descriptions are held.
    pub fn held(&self) -> usize {
        self.edits.len()
    }

    /// The pruned array of a render over `messages` (the JSON array the
    /// engine holds) and its `JSON.stringify` length. Panics when the order
    /// names an edit that was never sent or was evicted.
    pub fn output(&self, r: &Rendered, messages: &[u8], dialect: Dialect) -> (Vec<u8>, usize) {
        let mut log = Log::default();
        scan_array(messages, &mut log, 0, Source::Bytes).expect("the engine's messages scan");
        let mut memo = Memo::default();
        let mut script = EditScript::default();
        for &v in &r.order {
            let slot = if v >= 0 {
                assert!(
                    (v as usize) < log.len(),
                    "order names message {v} of {}",
                    log.len()
                );
                Slot::keep(v as usize)
            } else {
                let id = (-(v as i64) - 1) as u32;
                let desc = self.edits.get(&id).unwrap_or_else(|| {
                    panic!("order names edit {id}, which the receiver does not hold")
                });
                slot_of(desc, &mut memo, &mut script)
            };
            script.slots.push(slot);
        }
        // The byte applier reads only the log, the memo's texts and the
        // script; the state and config are there to complete the inputs.
        let (state, config) = (State::answers(dialect), Config::default());
        let inputs = Inputs {
            log: &log,
            text: messages,
            state: &state,
            config: &config,
            boundary: None,
            dialect,
        };
        let mut out = Vec::with_capacity(messages.len());
        write_output(&mut out, &inputs, &memo, &script);
        let len = output_len(&inputs, &memo, &script);
        (out, len)
    }
}
