//! Phase 4 of 2.4.3 (SPEC 3): old thinking is stripped. With the
//! flush-gated boundary every assistant older than it (JS `<`) loses its
//! thinking blocks; without one, the live count keeps the last
//! `keepLastTurns` assistants' thinking. 2.9.1 has no such phase. The JS
//! oracle's copy is `thinkingStrip` in js/pure/v2.4.js.

use super::text::to_number;
use super::{no_null_block, Inputs};
use crate::config::ThinkingConfig;
use crate::error::Result;
use crate::frontier::js_max;
use crate::record::{Content, Role};
use crate::script::{EditScript, Op, Stats};

pub fn run(
    inputs: &Inputs<'_>,
    thinking: &ThinkingConfig,
    script: &mut EditScript,
    stats: &mut Stats,
) -> Result<bool> {
    let log = inputs.log;
    let is_assistant = |slot: &crate::script::Slot| {
        slot.op != Op::Insert && log.records[slot.input as usize].role == Role::Assistant
    };
    // The slots before this one keep their thinking.
    let first_kept = match inputs.boundary {
        Some(_) => None,
        None => {
            let keep = js_max(1.0, thinking.keep_last_turns);
            let assistants: Vec<usize> = (0..script.slots.len())
                .filter(|&k| is_assistant(&script.slots[k]))
                .collect();
            let n = assistants.len() as f64;
            if n <= keep {
                return Ok(false);
            }
            // `assistantIdx[n - keep]`: undefined unless a whole index, and
            // `i >= undefined` is false, so then every assistant is old.
            let at = n - keep;
            Some((at.fract() == 0.0 && at >= 0.0).then(|| assistants[at as usize]))
        }
    };
    let mut changed = false;
    for k in 0..script.slots.len() {
        if !is_assistant(&script.slots[k]) {
            continue;
        }
        let i = script.slots[k].input as usize;
        let rec = &log.records[i];
        let old = match (inputs.boundary, first_kept) {
            (Some(b), _) => to_number(&rec.timestamp, &log.syms) < b,
            (None, Some(Some(first))) => k < first,
            (None, _) => true,
        };
        if !old || rec.content != Content::Array || script.slots[k].strip_thinking {
            continue;
        }
        // `content.some(c => c.type === "thinking")`, then the filter that
        // reads every block: a null block throws either way. The record
        // says whether its blocks hold either (`record::scan`).
        if rec.has_null_block {
            no_null_block(log, i)?;
        }
        if rec.has_thinking {
            script.slots[k].strip_thinking();
            stats.thinking_stripped += 1;
            changed = true;
        }
    }
    Ok(changed)
}
