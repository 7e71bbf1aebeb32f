//! What a kept engine remembers between renders so that a render after an
//! append costs what changed. The phases decide per message from the state
//! and the config (is this result stubbed, and with which text; is this
//! message inside a compressed chain); those decisions hold until the state
//! or the config change (a new `generation`) or the message itself is
//! re-sent (`truncate`). The thinking boundary is not among them: phase 4
//! decides afresh at every render. A stateless call uses a fresh memo, so
//! both paths run the same phase code.

use crate::hash::HashMap;

/// Phase 1's decision for one tool result, before recovery grace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StubDecision {
    Keep,
    /// Stub it with the text `TextId`.
    Stub(TextId),
}

/// A stub text's number, stable within a generation (so an edit already
/// sent to JS can be named by it).
pub type TextId = u32;

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

/// A synthetic text and the protected outputs it quotes.
type Quoting = (Vec<super::synthetic::ProtectedOutput>, std::rc::Rc<[u8]>);

#[derive(Default)]
pub struct Memo {
    generation: u64,
    stubs: Vec<Option<StubDecision>>,
    texts: Vec<Box<[u8]>>,
    text_ids: HashMap<Box<[u8]>, TextId>,
    chain: Vec<Option<ChainFact>>,
    /// 2.4.3 phase 3's sets, derived from the state alone.
    pub(crate) chain_sets: Option<super::chain_ids::ChainSets>,
    /// Each chain entry's summary, derived from the state alone.
    pub(crate) summaries: Option<Vec<crate::error::Result<crate::json::Json>>>,
    /// Each chain entry's synthetic block head (`synthetic_head`).
    heads: Vec<Option<std::rc::Rc<[u8]>>>,
    /// Each chain entry's whole synthetic text, with the protected outputs
    /// it quotes (as message and stub text), to build it again only when
    /// they change.
    synthetic: Vec<Option<Quoting>>,
    /// Timestamps and existing blocks of the messages (they outlive a new
    /// state: they depend on the messages alone).
    pub(crate) log_index: super::log_index::LogIndex,
    /// 2.9.1 phase 3's ranges for the current resolution of the entries.
    pub(crate) range_plan: Option<super::chain_ranges::RangePlan>,
    /// The keys a tool result is looked up by (its id; in 2.9.1 also its
    /// occurrence key) to the messages `0..keyed` that carry them, so a
    /// flush forgets the decisions its answers touched without reading
    /// every message. It depends on the messages alone.
    result_keys: HashMap<Box<[u8]>, Vec<u32>>,
    keyed: usize,
    /// The dialect `result_keys` was built for (a memo serves one engine).
    keyed_dialect: crate::dialect::Dialect,
    /// Buffers 2.4.3's phase 3 reuses from one render to the next (a long
    /// conversation's would otherwise be allocated, and zeroed by the
    /// system, at every render): the facts per slot and a slot array.
    pub(crate) facts: Vec<ChainFact>,
    pub(crate) spare_slots: Vec<crate::script::Slot>,
    /// Phase 2's index of the messages (`purge::PurgeIndex`).
    pub(crate) purge_index: super::purge::PurgeIndex,
}

impl Memo {
    /// Forgets every decision: the state or the config changed.
    pub fn invalidate(&mut self) {
        self.generation += 1;
        self.stubs.clear();
        self.texts.clear();
        self.text_ids.clear();
        self.chain.clear();
        self.chain_sets = None;
        self.summaries = None;
        self.heads.clear();
        self.synthetic.clear();
        self.range_plan = None;
    }

    /// Forgets the decisions about messages `from` and after of `log`
    /// (about to be re-sent).
    pub fn truncate(&mut self, from: usize, log: &crate::record::Log) {
        self.stubs.truncate(from);
        self.chain.truncate(from);
        // A synthetic text quoting a re-sent message is built again.
        for quoting in &mut self.synthetic {
            if quoting
                .as_ref()
                .is_some_and(|(outputs, _)| outputs.iter().any(|o| o.input as usize >= from))
            {
                *quoting = None;
            }
        }
        self.log_index.truncate(from, log);
        self.purge_index.truncate(from, log);
        // The keys the re-sent messages added are taken back, newest first.
        for i in (from..self.keyed).rev() {
            for key in result_keys_of(log, i, self.keyed_dialect).into_iter().rev() {
                if let Some(v) = self.result_keys.get_mut(key.as_slice()) {
                    if v.last() == Some(&(i as u32)) {
                        v.pop();
                    }
                    if v.is_empty() {
                        self.result_keys.remove(key.as_slice());
                    }
                }
            }
        }
        self.keyed = self.keyed.min(from);
        if self.range_plan.as_mut().is_some_and(|p| !p.truncate(from)) {
            self.range_plan = None;
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn stub(&self, i: usize) -> Option<StubDecision> {
        self.stubs.get(i).copied().flatten()
    }

    /// Forgets phase 1's decisions about the tool results that look `keys`
    /// up (their indexer answers changed; nothing else did).
    pub fn forget_stubs_for(
        &mut self,
        keys: &crate::hash::HashSet<Box<[u8]>>,
        log: &crate::record::Log,
        dialect: crate::dialect::Dialect,
    ) {
        self.keyed_dialect = dialect;
        for i in self.keyed..log.records.len() {
            for key in result_keys_of(log, i, dialect) {
                self.result_keys
                    .entry(key.into_boxed_slice())
                    .or_default()
                    .push(i as u32);
            }
        }
        self.keyed = log.records.len();
        for key in keys {
            for &i in self.result_keys.get(key).into_iter().flatten() {
                if let Some(d) = self.stubs.get_mut(i as usize) {
                    *d = None;
                }
            }
        }
    }

    pub fn set_stub(&mut self, i: usize, d: StubDecision) {
        if self.stubs.len() <= i {
            self.stubs.resize(i + 1, None);
        }
        self.stubs[i] = Some(d);
    }

    /// The id of a stub text, the same for the same text.
    pub fn text_id(&mut self, text: Vec<u8>) -> TextId {
        if let Some(&id) = self.text_ids.get(text.as_slice()) {
            return id;
        }
        let id = self.texts.len() as TextId;
        let text: Box<[u8]> = text.into_boxed_slice();
        self.texts.push(text.clone());
        self.text_ids.insert(text, id);
        id
    }

    pub fn text(&self, id: TextId) -> &[u8] {
        &self.texts[id as usize]
    }

    /// The summary of the `n`-th chain entry (`State::entry_summary`), once
    /// per generation.
    pub fn entry_summary(
        &mut self,
        state: &crate::state::State,
        n: usize,
    ) -> crate::error::Result<crate::json::Json> {
        let summaries = self.summaries.get_or_insert_with(|| {
            (0..state.chain_entries().len())
                .map(|n| state.entry_summary(n))
                .collect()
        });
        summaries[n].clone()
    }

    /// The synthetic block head of the `n`-th chain entry, once per
    /// generation (built only when asked: 2.9.1 builds accepted entries'
    /// only, and a bad entry throws only then).
    pub fn synthetic_head(
        &mut self,
        inputs: &super::Inputs<'_>,
        n: usize,
    ) -> crate::error::Result<std::rc::Rc<[u8]>> {
        if let Some(Some(h)) = self.heads.get(n) {
            return Ok(h.clone());
        }
        let summary = self.entry_summary(inputs.state, n)?;
        let entries = inputs.state.chain_entries();
        let head: std::rc::Rc<[u8]> =
            super::synthetic::synthetic_head(inputs, entries[n], &summary)?.into();
        if self.heads.len() <= n {
            self.heads.resize(n + 1, None);
        }
        self.heads[n] = Some(head.clone());
        Ok(head)
    }

    /// The synthetic text of the `n`-th chain entry quoting `outputs`,
    /// built again only when they differ from last time.
    pub fn synthetic_text(
        &mut self,
        inputs: &super::Inputs<'_>,
        n: usize,
        outputs: &[super::synthetic::ProtectedOutput],
    ) -> crate::error::Result<std::rc::Rc<[u8]>> {
        if let Some(Some((quoted, text))) = self.synthetic.get(n) {
            if quoted.as_slice() == outputs {
                return Ok(text.clone());
            }
        }
        let head = self.synthetic_head(inputs, n)?;
        let text: std::rc::Rc<[u8]> =
            super::synthetic::synthetic_text(inputs, self, &head, outputs)?.into();
        if self.synthetic.len() <= n {
            self.synthetic.resize(n + 1, None);
        }
        self.synthetic[n] = Some((outputs.to_vec(), text.clone()));
        Ok(text)
    }

    pub fn chain_fact(&self, i: usize) -> Option<ChainFact> {
        self.chain.get(i).copied().flatten()
    }

    pub fn set_chain_fact(&mut self, i: usize, f: ChainFact) {
        if self.chain.len() <= i {
            self.chain.resize(i + 1, None);
        }
        self.chain[i] = Some(f);
    }
}

/// The keys tool result `i` is looked up by, in the order they are indexed:
/// its id, and in 2.9.1 its `K(m)` (none for another message).
fn result_keys_of(
    log: &crate::record::Log,
    i: usize,
    dialect: crate::dialect::Dialect,
) -> Vec<Vec<u8>> {
    use crate::record::{Role, Scalar};
    let rec = &log.records[i];
    let mut keys = Vec::new();
    if rec.role != Role::ToolResult {
        return keys;
    }
    if let Scalar::Str(s) = rec.tool_call_id {
        keys.push(log.syms.text(s).to_vec());
    }
    if dialect == crate::dialect::Dialect::V2_9 {
        if let super::keys::MessageKey::Text(k) = super::keys::message_key(rec, &log.syms) {
            keys.push(k);
        }
    }
    keys
}
