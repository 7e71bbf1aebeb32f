//! Phase 2 (SPEC 3), the same in both dialects: the arguments of a tool
//! call whose result failed long enough ago, and that are long enough,
//! become a short marker (`script::purge_marker`). It reads phase 1's
//! output, so a stubbed result (whose `isError` is false) hides its error.
//! The JS oracle's copy of the rule is `errorPurge` in js/pure/purge.js.

use super::Inputs;
use crate::config::PurgeConfig;
use crate::error::{PruneError, Result};
use crate::hash::HashMap;
use crate::record::{BlockType, Content, ElementKind, Role, Scalar, Sym};
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

/// What the phase reads of the messages, kept between renders (it depends
/// on the messages alone): the failed tool results, each message's count
/// of assistants before it, and where each tool call id's blocks are. A
/// render then visits the failed calls rather than every assistant block.
#[derive(Default)]
pub struct PurgeIndex {
    /// Messages indexed.
    len: usize,
    assistants: u32,
    /// Per message, the assistants before it.
    before: Vec<u32>,
    /// Tool results with `isError === true`.
    failed: Vec<u32>,
    /// Tool call blocks by id: (message, block).
    calls: HashMap<Sym, Vec<(u32, u32)>>,
    /// An assistant whose content is not an array or holds a null block, a
    /// tool call or failed result whose id is not a string: the phase reads
    /// every message, as the reference does, to fail or match where it does.
    irregular: bool,
    /// A render has run with this memo since it was last reset: the index
    /// is built from the second render on, so a stateless call (a fresh
    /// memo each time) reads the messages once, without building it.
    warm: bool,
}

impl PurgeIndex {
    /// Forgets messages `from` and after (about to be re-sent; `log` still
    /// holds them): what they added is taken back, newest first, so a
    /// re-sent tail costs its own length.
    pub fn truncate(&mut self, from: usize, log: &crate::record::Log) {
        if from >= self.len {
            return;
        }
        for i in (from..self.len).rev() {
            if log.records[i].role != Role::Assistant {
                continue;
            }
            for (j, b) in log.blocks(i).iter().enumerate().rev() {
                let Scalar::Str(s) = b.id else { continue };
                if b.kind != ElementKind::Object || b.ty != BlockType::ToolCall {
                    continue;
                }
                if let Some(v) = self.calls.get_mut(&s) {
                    if v.last() == Some(&(i as u32, j as u32)) {
                        v.pop();
                    }
                    if v.is_empty() {
                        self.calls.remove(&s);
                    }
                }
            }
        }
        let kept = self.failed.partition_point(|&i| (i as usize) < from);
        self.failed.truncate(kept);
        self.assistants = self.before[from];
        self.before.truncate(from);
        self.len = from;
        // `irregular` stays: at worst the renders read every message.
        if from == 0 {
            self.irregular = false;
        }
    }

    fn catch_up(&mut self, log: &crate::record::Log) {
        for (i, rec) in log.records.iter().enumerate().skip(self.len) {
            self.before.push(self.assistants);
            match rec.role {
                Role::Assistant => {
                    self.assistants += 1;
                    if rec.content != Content::Array || rec.has_null_block {
                        self.irregular = true;
                    }
                    for (j, b) in log.blocks(i).iter().enumerate() {
                        if b.kind != ElementKind::Object || b.ty != BlockType::ToolCall {
                            continue;
                        }
                        match b.id {
                            Scalar::Str(s) => {
                                self.calls.entry(s).or_default().push((i as u32, j as u32))
                            }
                            _ => self.irregular = true,
                        }
                    }
                }
                Role::ToolResult if rec.is_error => {
                    if !matches!(rec.tool_call_id, Scalar::Str(_)) {
                        self.irregular = true;
                    }
                    self.failed.push(i as u32);
                }
                _ => {}
            }
        }
        self.len = log.records.len();
    }
}

pub fn run(
    inputs: &Inputs<'_>,
    purge: &PurgeConfig,
    index: &mut PurgeIndex,
    script: &mut EditScript,
    stats: &mut Stats,
) -> Result<bool> {
    if !index.warm {
        index.warm = true;
        return run_every_message(inputs, purge, script, stats);
    }
    index.catch_up(inputs.log);
    if index.irregular {
        return run_every_message(inputs, purge, script, stats);
    }
    let log = inputs.log;
    // Phase 1 left every slot at its message: slot i shows message i.
    let mut errored: HashMap<Sym, f64> = HashMap::default();
    for &i in &index.failed {
        let i = i as usize;
        if script.slots[i].op == Op::Stub {
            continue;
        }
        if let Scalar::Str(s) = log.records[i].tool_call_id {
            errored.insert(s, f64::from(index.before[i]));
        }
    }
    if errored.is_empty() {
        return Ok(false);
    }
    let current = f64::from(index.assistants);
    // (message, block, argument length), or None for missing arguments.
    let mut hits: Vec<(u32, u32, Option<u32>)> = Vec::new();
    for (id, &at) in &errored {
        if current - at < purge.cooldown_turns {
            continue;
        }
        for &(i, j) in index.calls.get(id).into_iter().flatten() {
            let block = &log.blocks(i as usize)[j as usize];
            hits.push((i, j, block.args.map(|a| a.len)));
        }
    }
    hits.sort_unstable();
    let mut changed = false;
    for (i, j, len) in hits {
        let Some(len) = len else {
            return Err(missing_arguments(i as usize, j as usize));
        };
        if f64::from(len) < purge.min_arg_chars {
            continue;
        }
        script.slots[i as usize].purge(j as usize, len);
        stats.purged_args += 1;
        changed = true;
    }
    Ok(changed)
}

fn missing_arguments(i: usize, j: usize) -> PruneError {
    PruneError::bad_message(
        i,
        &format!("content[{j}].arguments"),
        "is missing (the reference measures JSON.stringify of it)",
    )
}

/// The phase over every message, in order (what `run` does through its
/// index, for the messages the index does not vouch for).
fn run_every_message(
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
        for block in inputs.object_blocks(i) {
            let (j, block) = block?;
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
                return Err(missing_arguments(i, j));
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
