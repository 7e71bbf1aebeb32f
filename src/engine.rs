//! The kept engine behind `PruneSession`, the pi-condense drop-ins and the
//! stateless array path: the conversation as records that outlive a render,
//! the state (a state object's, or a host indexer's answers), the config and
//! the boundary. The JS side re-sends only messages from the first one that
//! changed (`sync`); a render runs the phases over the kept records and
//! answers with an edit script in which edits already sent by an earlier
//! render are named by id (`SentEdits`), so the JS applier rebuilds them from
//! the caller's objects without their descriptions crossing again.

use crate::apply::slot_len;
use crate::config::Config;
use crate::dialect::Dialect;
use crate::error::{PruneError, Result};
use crate::frontier::{assistant_timestamps, compute_thinking_boundary, frontier_of, Frontier};
use crate::hash::{HashMap, HashSet};
use crate::indexer_methods::AbsentMethods;
use crate::json::Json;
use crate::phases::{self, Inputs, Memo};
use crate::record::{array_len, Log};
use crate::record::{scan_array, Source};
use crate::script::{Diagnostic, EditScript, Op, SharedText, Slot, Stats};
use crate::state::{Chains, State};

pub mod background;
mod protocol;
mod slots;
#[cfg(test)]
mod tests;
pub use slots::{RenderedScript, Shown};

pub struct Engine {
    dialect: Dialect,
    config: Config,
    state: State,
    boundary: Option<f64>,
    log: Log,
    /// The phases' per-message decisions, kept between renders.
    memo: Memo,
    /// Keys whose indexer answers changed since the last render.
    answered: HashSet<Box<[u8]>>,
    sent: SentEdits,
    /// An earlier script's slots, for the next render to fill.
    spare_slots: Vec<crate::script::Slot>,
    /// The last `render`'s script while the log and the memo it reads are
    /// unchanged (`last_rendered`, for pi's gate); None once they change.
    last: Option<EditScript>,
}

/// How far a render goes: every phase, or all but 2.4.3's thinking strip
/// (for the replay, which strips per configuration: `engine/slots.rs`).
#[derive(Clone, Copy)]
enum Upto {
    All,
    BeforeThinking,
}

/// A render's answer for the JS applier.
#[derive(Debug, Default)]
pub struct Rendered {
    pub pruned: bool,
    pub before_chars: usize,
    pub after_chars: usize,
    pub frontier: Frontier,
    pub stats: Stats,
    pub diagnostics: Vec<Diagnostic>,
    /// Per output slot: `>= 0` the caller's message at that index, `< 0`
    /// the edit with id `-v - 1`.
    pub order: Vec<i32>,
    /// Ids of the edits this render describes for the first time, and their
    /// descriptions as one JSON array (`describe`).
    pub fresh: Vec<u32>,
    pub fresh_edits: Vec<u8>,
    /// Ids the JS side may forget.
    pub evicted: Vec<u32>,
}

impl Engine {
    pub fn new(dialect: Dialect) -> Self {
        Engine {
            dialect,
            config: Config::from_value(&Json::Null, dialect).unwrap_or_default(),
            state: State::answers(dialect),
            boundary: None,
            log: Log::keeping_text(),
            memo: Memo::default(),
            answered: HashSet::default(),
            sent: SentEdits::default(),
            spare_slots: Vec::new(),
            last: None,
        }
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The state or the config changed: every kept decision and
    /// every edit the JS side holds goes.
    fn changed(&mut self) {
        self.last = None;
        self.memo.invalidate();
        self.answered.clear();
        self.sent.clear();
    }

    pub fn set_config(&mut self, config: Config) {
        self.config = config;
        self.changed();
    }

    pub fn set_state(&mut self, state: State) {
        self.state = state;
        self.changed();
    }

    /// The host indexer's methods that are not functions (a drop-in's
    /// indexer); the phases raise where the release would call one. A
    /// change makes every kept decision again, as the ones kept were made
    /// with other methods.
    pub fn set_absent_methods(&mut self, absent: AbsentMethods) {
        if self.state.absent != absent {
            self.state.absent = absent;
            self.changed();
        }
    }

    /// Only phase 4 of 2.4.3 reads the boundary, and it keeps no decision
    /// in the memo: the stub and chain decisions, their text ids and the
    /// edits the JS side holds (keyed by whether thinking is stripped) all
    /// stay valid when it moves.
    pub fn set_boundary(&mut self, boundary: Option<f64>) {
        self.boundary = boundary;
    }

    /// Records what a host indexer answered for one key (see
    /// `State::answer`). Only the decisions about tool results that look
    /// that key up are made again, and only when the answer changed.
    pub fn answer(
        &mut self,
        key: &[u8],
        summarized: bool,
        record: Option<Json>,
        short_ref: Option<Json>,
    ) {
        if self.state.answer(key, summarized, record, short_ref) {
            self.answered.insert(key.into());
        }
    }

    pub fn answer_legacy(&mut self, id: &[u8], legacy: bool) {
        if self.state.answer_legacy(id, legacy) {
            self.answered.insert(id.into());
        }
    }

    /// New chain entries: only phase 3's decisions that read the entries
    /// from the first one that differs from those kept go
    /// (`Memo::chains_changed`). The edits the JS side holds stay named: a
    /// stub or a purge is keyed by what it shows, and a synthetic block
    /// built again with the same text keeps its id (`SentEdits::describe`),
    /// so a flush that adds one chain re-sends one block, not every edit.
    pub fn set_chains(&mut self, chains: Chains) {
        self.last = None;
        let (from, same_lookups) = self.state.set_given_chains(chains);
        self.memo.chains_changed(from, same_lookups);
    }

    /// As `set_chains`, for the entries and summaries from `from` on (those
    /// before are kept) and every lookup: `chains` holds only those. Only
    /// what reads the entries from `from` on is decided again
    /// (`Memo::chains_changed`).
    pub fn update_chains(&mut self, from: usize, chains: Chains) -> Result<()> {
        let same_lookups = self.state.update_given_chains(from, chains)?;
        self.last = None;
        self.memo.chains_changed(from, same_lookups);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.log.len()
    }

    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// Replaces the kept messages from `from` on with the elements of the
    /// JSON array `messages` (from `source`). All of them are read, or
    /// nothing changes.
    pub fn sync(&mut self, from: usize, messages: &[u8], source: Source) -> Result<()> {
        self.check_from(from)?;
        let mut fresh = Log::keeping_text();
        std::mem::swap(&mut fresh.syms, &mut self.log.syms);
        let scanned = scan_array(messages, &mut fresh, from, source);
        std::mem::swap(&mut fresh.syms, &mut self.log.syms);
        scanned?;
        self.replace_from(from);
        self.log.append(fresh);
        Ok(())
    }

    /// As `sync`, with messages already read into a log of their own (on
    /// another thread: see `scan_messages`).
    pub fn sync_scanned(&mut self, from: usize, fresh: Log) -> Result<()> {
        self.check_from(from)?;
        self.replace_from(from);
        self.log.absorb(fresh);
        Ok(())
    }

    fn check_from(&self, from: usize) -> Result<()> {
        if from > self.log.len() {
            return Err(PruneError::bad_argument(format!(
                "sync from {from}, but only {} messages are kept",
                self.log.len()
            )));
        }
        Ok(())
    }

    fn replace_from(&mut self, from: usize) {
        self.last = None;
        self.memo.truncate(from, &self.log);
        self.log.truncate(from);
        self.sent.forget_from(from);
    }

    /// What a render reads.
    fn view(&self) -> Inputs<'_> {
        Inputs {
            log: &self.log,
            text: &[],
            state: &self.state,
            config: &self.config,
            boundary: self.boundary,
            dialect: self.dialect,
        }
    }

    /// The phases up to `upto` over the kept messages, after dropping the
    /// decisions that changed indexer answers made stale.
    fn run_phases_upto(&mut self, upto: Upto) -> Result<EditScript> {
        self.forget_answered();
        let inputs = Inputs {
            log: &self.log,
            text: &[],
            state: &self.state,
            config: &self.config,
            boundary: self.boundary,
            dialect: self.dialect,
        };
        let spare = match self.last.take() {
            Some(last) => last.slots,
            None => std::mem::take(&mut self.spare_slots),
        };
        match upto {
            Upto::All => phases::run_reusing(&inputs, &mut self.memo, spare),
            Upto::BeforeThinking => phases::run_before_thinking(&inputs, &mut self.memo, spare),
        }
    }

    /// Drops the decisions that changed indexer answers made stale.
    fn forget_answered(&mut self) {
        if !self.answered.is_empty() {
            self.memo
                .forget_stubs_for(&self.answered, &self.log, self.dialect);
            self.answered.clear();
        }
    }

    /// Prunes the kept messages.
    pub fn render(&mut self) -> Result<Rendered> {
        let script = self.run_phases_upto(Upto::All)?;
        let mut out = Rendered {
            frontier: frontier_of(&self.log, &self.config, self.boundary, self.dialect),
            stats: script.stats,
            diagnostics: script.diagnostics.clone(),
            ..Rendered::default()
        };
        if !script.changed {
            out.evicted = self.sent.take_forgotten();
        } else {
            out.pruned = true;
            out.before_chars = self.log.array_len();
            let mut sent = std::mem::take(&mut self.sent);
            sent.describe(&self.view(), &self.memo, &script, &mut out);
            self.sent = sent;
        }
        self.last = Some(script);
        Ok(out)
    }

    /// Advances the thinking boundary over the kept assistant timestamps
    /// plus the not-yet-kept closing message (SPEC 6) and returns it.
    pub fn flush(&mut self, closing: Option<&[u8]>) -> Result<Option<f64>> {
        let Some(thinking) = &self.config.thinking else {
            return Ok(self.boundary);
        };
        let mut stamps = assistant_timestamps(&self.log);
        if let Some(c) = closing {
            let mut one = Log::default();
            scan_array(&[b"[", c, b"]"].concat(), &mut one, 0, Source::Bytes)?;
            stamps.extend(assistant_timestamps(&one));
        }
        let next = compute_thinking_boundary(&stamps, thinking.keep_last_turns, self.boundary);
        if next.is_some_and(|b| !b.is_nan()) {
            self.boundary = next;
        }
        Ok(self.boundary)
    }
}

/// Reads `messages` (elements `from` on of a conversation) into a log of
/// their own, for `Engine::sync_scanned`; it needs no engine, so it can run
/// on another thread.
pub fn scan_messages(from: usize, messages: &[u8], source: Source) -> Result<Log> {
    let mut log = Log::keeping_text();
    scan_array(messages, &mut log, from, source)?;
    Ok(log)
}

/// What an edit looks like to the JS side, so a later render that makes the
/// same edit can name it by id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum EditKey {
    Stub {
        input: u32,
        text: u32,
    },
    Edit {
        input: u32,
        strip: bool,
        purged: Vec<(u32, u32)>,
    },
    Insert {
        text: SharedText,
        timestamp: Option<Vec<u8>>,
    },
}

#[derive(Clone, Copy)]
struct SentEdit {
    id: u32,
    len: usize,
    /// The last render that used it.
    used: u64,
}

/// The edits the JS side holds.
#[derive(Default)]
struct SentEdits {
    by_key: HashMap<EditKey, SentEdit>,
    next_id: u32,
    /// Renders described so far.
    renders: u64,
    /// Ids forgotten between renders, reported with the next one.
    forgotten: Vec<u32>,
    /// The synthetic blocks among `by_key` by a hash of their text and
    /// timestamp: a block the memo built again (new chains) with the same
    /// text is found here and keeps its id.
    inserts_by_content: HashMap<u64, Vec<EditKey>>,
}

/// The hash `SentEdits::inserts_by_content` files a synthetic block under.
fn insert_hash(text: &[u8], timestamp: &Option<Vec<u8>>) -> u64 {
    let h = xxhash_rust::xxh3::xxh3_64(text);
    match timestamp {
        Some(t) => xxhash_rust::xxh3::xxh3_64_with_seed(t, h),
        None => h,
    }
}

impl SentEdits {
    fn clear(&mut self) {
        self.forgotten.extend(self.by_key.values().map(|s| s.id));
        self.by_key.clear();
        self.inserts_by_content.clear();
    }

    /// A synthetic block sent before with the same text and timestamp as
    /// `key` (whose text is a new allocation), re-filed under `key`.
    fn adopt_same_insert(&mut self, key: &EditKey, render: u64) -> Option<SentEdit> {
        let EditKey::Insert { text, timestamp } = key else {
            return None;
        };
        let same = self
            .inserts_by_content
            .get_mut(&insert_hash(&text.0, timestamp))?;
        // One not yet shown by this render (two slots showing the same text
        // from two allocations each keep their own id).
        let by_key = &self.by_key;
        let at = same.iter().position(|k| match k {
            EditKey::Insert {
                text: t,
                timestamp: ts,
            } => {
                t.0[..] == text.0[..]
                    && ts == timestamp
                    && by_key.get(k).is_some_and(|s| s.used != render)
            }
            _ => false,
        })?;
        let old = std::mem::replace(&mut same[at], key.clone());
        let mut s = self.by_key.remove(&old)?;
        s.used = render;
        self.by_key.insert(key.clone(), s);
        Some(s)
    }

    /// Forgets edits of input messages at `from` and after (they changed).
    fn forget_from(&mut self, from: usize) {
        let forgotten = &mut self.forgotten;
        self.by_key.retain(|k, s| {
            let input = match k {
                EditKey::Stub { input, .. } | EditKey::Edit { input, .. } => Some(*input),
                EditKey::Insert { .. } => None,
            };
            let keep = input.is_none_or(|i| (i as usize) < from);
            if !keep {
                forgotten.push(s.id);
            }
            keep
        });
    }

    fn take_forgotten(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.forgotten)
    }

    fn key(script: &EditScript, slot: &Slot) -> EditKey {
        match slot.op {
            Op::Stub => EditKey::Stub {
                input: slot.input,
                text: slot.text,
            },
            Op::Edit => EditKey::Edit {
                input: slot.input,
                strip: slot.strip_thinking,
                purged: slot.purged.clone(),
            },
            Op::Insert => {
                let b = &script.blocks[slot.input as usize];
                EditKey::Insert {
                    text: SharedText(b.text.clone()),
                    timestamp: b.timestamp.as_ref().map(Json::to_json),
                }
            }
            Op::Keep => unreachable!("kept slots are not edits"),
        }
    }

    /// Fills the order, the fresh descriptions and the evictions of `out`,
    /// and its `after_chars`.
    fn describe(
        &mut self,
        inputs: &Inputs<'_>,
        memo: &Memo,
        script: &EditScript,
        out: &mut Rendered,
    ) {
        let records = &inputs.log.records;
        self.renders += 1;
        let render = self.renders;
        let mut body = 0usize;
        out.order.reserve(script.slots.len());
        out.fresh_edits.push(b'[');
        for slot in &script.slots {
            if slot.op == Op::Keep {
                out.order.push(slot.input as i32);
                body += records[slot.input as usize].len as usize;
                continue;
            }
            let key = Self::key(script, slot);
            let known = match self.by_key.get_mut(&key) {
                Some(s) => {
                    s.used = render;
                    Some(*s)
                }
                None => self.adopt_same_insert(&key, render),
            };
            let sent = match known {
                Some(s) => s,
                None => {
                    let s = SentEdit {
                        id: self.next_id,
                        len: slot_len(inputs, memo, script, slot),
                        used: render,
                    };
                    self.next_id = (self.next_id + 1) & 0x7fff_ffff;
                    if !out.fresh.is_empty() {
                        out.fresh_edits.push(b',');
                    }
                    write_description(&mut out.fresh_edits, memo, script, slot);
                    out.fresh.push(s.id);
                    if let EditKey::Insert { text, timestamp } = &key {
                        self.inserts_by_content
                            .entry(insert_hash(&text.0, timestamp))
                            .or_default()
                            .push(key.clone());
                    }
                    self.by_key.insert(key, s);
                    s
                }
            };
            out.order.push(-(sent.id as i32) - 1);
            body += sent.len;
        }
        out.fresh_edits.push(b']');
        out.after_chars = array_len(script.slots.len(), body);
        let mut evicted = std::mem::take(&mut self.forgotten);
        let before = evicted.len();
        self.by_key.retain(|_, s| {
            let keep = s.used == render;
            if !keep {
                evicted.push(s.id);
            }
            keep
        });
        if evicted.len() > before {
            let by_key = &self.by_key;
            self.inserts_by_content.retain(|_, keys| {
                keys.retain(|k| by_key.contains_key(k));
                !keys.is_empty()
            });
        }
        out.evicted = evicted;
    }
}

/// The description of an edit for the JS applier (`js/applier.js`): an
/// array whose first element is the `Op`:
/// - `[1, input, text]`: a stub for message `input`;
/// - `[2, input, strip, [[block, size], ...]]`: message `input` with those
///   blocks' arguments purged, then its thinking removed when `strip` is 1;
/// - `[3, text]` or `[3, text, timestamp]`: a synthetic chain block.
fn write_description(out: &mut Vec<u8>, memo: &Memo, script: &EditScript, slot: &Slot) {
    use crate::json::text::write_quoted;
    use crate::json::value::write_list;
    out.push(b'[');
    out.extend_from_slice((slot.op as u8).to_string().as_bytes());
    match slot.op {
        Op::Stub => {
            out.extend_from_slice(format!(",{},", slot.input).as_bytes());
            write_quoted(out, memo.text(slot.text));
        }
        Op::Edit => {
            out.extend_from_slice(
                format!(",{},{},", slot.input, u8::from(slot.strip_thinking)).as_bytes(),
            );
            write_list(out, b"[]", &slot.purged, |out, (j, size)| {
                out.extend_from_slice(format!("[{j},{size}]").as_bytes())
            });
        }
        Op::Insert => {
            let b = &script.blocks[slot.input as usize];
            out.push(b',');
            write_quoted(out, &b.text);
            if let Some(t) = &b.timestamp {
                out.push(b',');
                t.write_json(out);
            }
        }
        Op::Keep => {}
    }
    out.push(b']');
}
