//! Phase 2 (SPEC 3), the same in both dialects: the arguments of a tool
//! call whose result failed long enough ago, and that are long enough,
//! become a short marker (`script::purge_marker`). It reads phase 1's
//! output, so a stubbed result (whose `isError` is false) hides its error.
//! The JS oracle's copy of the rule is `errorPurge` in js/pure/purge.js.

use super::Inputs;
use crate::config::PurgeConfig;
use crate::error::{PruneError, Result};
use crate::hash::HashMap;
use crate::record::{BlockType, Content, Kind, Role, Scalar, Sym};
use crate::script::{EditScript, Op, Stats};

/// `erroredAt`, a Map keyed by SameValueZero: string ids by symbol, the
/// rare others in a list.
#[derive(Default)]
struct Errored {
    by_sym: HashMap<Sym, f64>,
    others: Vec<(Scalar, f64)>,
}

impl Errored {
    fn set(&mut self, id: Scalar, turn: f64) {
        match id {
            Scalar::Str(s) => {
                self.by_sym.insert(s, turn);
            }
            _ => match self.others.iter_mut().find(|(k, _)| k.same(&id)) {
                Some(e) => e.1 = turn,
                None => self.others.push((id, turn)),
            },
        }
    }

    fn get(&self, id: &Scalar) -> Option<f64> {
        match id {
            Scalar::Str(s) => self.by_sym.get(s).copied(),
            _ => self.others.iter().find(|(k, _)| k.same(id)).map(|e| e.1),
        }
    }

    fn is_empty(&self) -> bool {
        self.by_sym.is_empty() && self.others.is_empty()
    }
}

pub fn run(
    inputs: &Inputs<'_>,
    purge: &PurgeConfig,
    script: &mut EditScript,
    stats: &mut Stats,
) -> Result<bool> {
    let log = inputs.log;
    // erroredAt: the assistant count at each failed result, by id (a later
    // failure of the same id overwrites).
    let mut errored = Errored::default();
    let mut turn = 0f64;
    for slot in &script.slots {
        let rec = &log.records[slot.input as usize];
        match rec.role {
            Role::Assistant => turn += 1.0,
            Role::ToolResult if rec.is_error && slot.op != Op::Stub => {
                errored.set(rec.tool_call_id, turn);
            }
            _ => {}
        }
    }
    if errored.is_empty() {
        return Ok(false);
    }
    let current = turn;
    let mut changed = false;
    for slot in &mut script.slots {
        let i = slot.input as usize;
        let rec = &log.records[i];
        if rec.role != Role::Assistant {
            continue;
        }
        if rec.content != Content::Array {
            return Err(PruneError::bad_message(
                i,
                "content",
                "is not an array (the reference maps over it)",
            ));
        }
        for (j, block) in log.blocks(i).iter().enumerate() {
            match block.kind {
                Kind::Null => {
                    return Err(PruneError::bad_message(
                        i,
                        &format!("content[{j}]"),
                        "is null",
                    ))
                }
                Kind::NonObject => continue,
                Kind::Object => {}
            }
            if block.ty != BlockType::ToolCall {
                continue;
            }
            let Some(at) = errored.get(&block.id) else {
                continue;
            };
            if current - at < purge.cooldown_turns {
                continue;
            }
            let Some(args) = block.args else {
                return Err(PruneError::bad_message(
                    i,
                    &format!("content[{j}].arguments"),
                    "is missing (the reference measures JSON.stringify of it)",
                ));
            };
            if f64::from(args.len) < purge.min_arg_chars {
                continue;
            }
            slot.purge(j, args.len);
            stats.purged_args += 1;
            changed = true;
        }
    }
    Ok(changed)
}
