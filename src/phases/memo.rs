//! What a kept engine remembers between renders so that a render after an
//! append costs what changed. The phases decide per message from the state
//! and the config (is this result stubbed, and with which text; is this
//! message inside a compressed chain); those decisions hold until the state
//! or the config change (a new `generation`) or the message itself is
//! re-sent (`truncate`); new chain entries drop only what reads them
//! (`chains_changed`). The thinking boundary is not among them: phase 4
//! decides afresh at every render. A stateless call uses a fresh memo, so
//! both paths run the same phase code. Each phase owns its cache's type;
//! the memo holds one of each, and `phases::run` hands them out.

use super::chain_ids::{ChainFact, ChainIdsCache};
use super::chain_ranges::RangePlan;
use super::log_index::LogIndex;
use super::purge::PurgeIndex;
use super::stub::{StubCache, TextId};
use super::synthetic::SyntheticCache;
use crate::dialect::Dialect;
use crate::hash::HashSet;
use crate::record::Log;

#[derive(Default)]
pub struct Memo {
    generation: u64,
    /// Phase 1's decisions and stub texts.
    pub(crate) stubs: StubCache,
    /// 2.4.3 phase 3's sets and facts.
    pub(crate) chain_ids: ChainIdsCache,
    /// 2.9.1 phase 3's ranges for the current resolution of the entries.
    pub(crate) range_plan: Option<RangePlan>,
    /// Both phase 3s' synthetic blocks.
    pub(crate) synthetic: SyntheticCache,
    /// Timestamps and existing blocks of the messages (they outlive a new
    /// state: they depend on the messages alone).
    pub(crate) log_index: LogIndex,
    /// Phase 2's index of the messages (`purge::PurgeIndex`).
    pub(crate) purge_index: PurgeIndex,
}

impl Memo {
    /// Forgets every decision: the state or the config changed.
    pub fn invalidate(&mut self) {
        self.generation += 1;
        self.stubs.clear();
        self.chain_ids.clear();
        self.synthetic.clear();
        self.range_plan = None;
    }

    /// Forgets the decisions that read the chain entries from `from` on:
    /// the host sent new chains (those before `from`, and their summaries,
    /// are the ones kept), and nothing else changed. Phase 1's stubs and
    /// their text ids stand (a stub does not read the chains), so the
    /// generation does too. 2.4.3's sets take back and read only the
    /// entries from `from` on, and its facts are decided again only where
    /// their keys reach; the synthetic blocks of the entries before `from`
    /// stand when `lookups_kept` (the `{bN}` lookups are the ones kept: a
    /// block reads nothing else of the chains). 2.9.1's ranges are planned
    /// again.
    pub fn chains_changed(&mut self, from: usize, lookups_kept: bool) {
        self.chain_ids.entries_changed(from);
        if lookups_kept {
            self.synthetic.keep_entries(from);
        } else {
            self.synthetic.clear();
        }
        self.range_plan = None;
    }

    /// Forgets the decisions about messages `from` and after of `log`
    /// (about to be re-sent).
    pub fn truncate(&mut self, from: usize, log: &Log) {
        self.stubs.truncate(from, log);
        self.chain_ids.truncate(from, log);
        // A synthetic text quoting a re-sent message is built again.
        self.synthetic.truncate(from);
        self.log_index.truncate(from, log);
        self.purge_index.truncate(from, log);
        if self.range_plan.as_mut().is_some_and(|p| !p.truncate(from)) {
            self.range_plan = None;
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Forgets phase 1's decisions about the tool results that look `keys`
    /// up (their indexer answers changed; nothing else did).
    pub fn forget_stubs_for(&mut self, keys: &HashSet<Box<[u8]>>, log: &Log, dialect: Dialect) {
        self.stubs.forget_for(keys, log, dialect);
    }

    /// The id of a stub text, the same for the same text (the fuzz
    /// targets' receiver names texts as the engine does).
    pub fn text_id(&mut self, text: Vec<u8>) -> TextId {
        self.stubs.text_id(text)
    }

    /// A stub text by its id.
    pub fn text(&self, id: TextId) -> &[u8] {
        self.stubs.text(id)
    }

    /// How many of 2.4.3 phase 3's facts were decided so far.
    #[cfg(test)]
    pub fn facts_decided(&self) -> usize {
        self.chain_ids.decided
    }

    /// 2.4.3 phase 3's fact about message `i`, if decided.
    pub fn chain_fact(&self, i: usize) -> Option<ChainFact> {
        self.chain_ids.fact(i)
    }
}
