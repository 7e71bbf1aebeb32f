//! The state side of a replay, computed once per dialect: pi-condense's
//! state rebuilt over the branch up to each model call's leaf (SESSIONS.md
//! C.3), whether a flush changed it since the previous call, the thinking
//! boundary it recorded, and what a kept engine must hear at each flush
//! (the indexer's answers, `indexer.rs`). None of it depends on the render
//! config, so every policy and every tune configuration of a dialect plays
//! the same timeline into its own engine instead of rebuilding the state.

use std::ops::Range;

use super::indexer::{Answer, Indexer};
use crate::dialect::Dialect;
use crate::engine::Engine;
use crate::error::{PruneError, Result};
use crate::sessionfile::{CondenseState, ModelCall, SessionError, SessionFile};

/// The state at one model call.
pub(super) struct Step {
    /// A flush changed the state since the previous call (or the state was
    /// rebuilt from the root for this call).
    pub flushed: bool,
    /// A new frontier came into force since the previous call (a flush that
    /// processed something: where 2.4.3 computes its boundary).
    pub frontier_moved: bool,
    /// The 2.4.3 boundary the rebuilt frontier holds.
    pub boundary: Option<f64>,
    answers: Range<usize>,
}

/// Every model call's state, for one dialect.
pub(super) struct Timeline {
    steps: Vec<Step>,
    answers: Vec<Answer>,
    /// The rebuild failed at this call: every policy stops there.
    state_error: Option<(usize, PruneError)>,
    /// The indexer's answers failed at this call: the policies that render
    /// stop there (`none` asks nothing of the indexer).
    answer_error: Option<(usize, PruneError)>,
}

impl Timeline {
    /// Rebuilds the state call by call, as a walk over `calls` meets them:
    /// a leaf before the previous one (clocks disagree) starts again from
    /// the root, and the answers that follow are those a fresh engine hears.
    pub fn build(
        file: &SessionFile<'_>,
        path: &[u32],
        calls: &[ModelCall],
        dialect: Dialect,
    ) -> Timeline {
        let mut timeline = Timeline {
            steps: Vec::with_capacity(calls.len()),
            answers: Vec::new(),
            state_error: None,
            answer_error: None,
        };
        let mut condense = CondenseState::new(dialect);
        let mut indexer = Indexer::new(dialect);
        let mut applied = 0usize;
        let mut version = condense.version();
        let frontier_at = |c: &CondenseState<'_>| c.frontier_data().map(|v| v.span().as_ptr());
        let mut frontier = None;
        for (k, call) in calls.iter().enumerate() {
            let wanted = call.leaf.map_or(0, |l| l + 1);
            if wanted < applied {
                condense = CondenseState::new(dialect);
                indexer = Indexer::new(dialect);
                applied = 0;
                version = condense.version();
                frontier = None;
            }
            for &e in &path[applied..wanted] {
                let entry = file.entry(e as usize);
                if let Err(e) = condense.apply(entry) {
                    timeline.state_error = Some((k, SessionError::located(e)));
                    return timeline;
                }
                indexer.note(entry);
            }
            applied = wanted;
            let flushed = condense.version() != version;
            version = condense.version();
            let moved = frontier_at(&condense) != frontier;
            frontier = frontier_at(&condense);
            let start = timeline.answers.len();
            if flushed && timeline.answer_error.is_none() {
                if let Err(e) = indexer.answer(&condense, &mut timeline.answers) {
                    timeline.answer_error = Some((k, e));
                }
            }
            timeline.steps.push(Step {
                flushed,
                frontier_moved: moved,
                boundary: condense.thinking_boundary(),
                answers: start..timeline.answers.len(),
            });
        }
        timeline
    }

    /// The state at call `k`, or the error that stopped the rebuild there.
    pub fn step(&self, k: usize) -> Result<&Step> {
        match &self.state_error {
            Some((at, e)) if *at == k => Err(e.clone()),
            _ => Ok(&self.steps[k]),
        }
    }

    /// Tells `engine` what the indexer answered at call `k`'s flush.
    pub fn answer(&self, k: usize, engine: &mut Engine) -> Result<()> {
        if let Some((at, e)) = &self.answer_error {
            if *at == k {
                return Err(e.clone());
            }
        }
        for a in &self.answers[self.steps[k].answers.clone()] {
            match a {
                Answer::Key {
                    key,
                    summarized,
                    record,
                    short_ref,
                } => engine.answer(key, *summarized, record.clone(), short_ref.clone()),
                Answer::Legacy { id, legacy } => engine.answer_legacy(id, *legacy),
                Answer::Chains(chains) => engine.set_chains(chains.clone()),
            }
        }
        Ok(())
    }
}

/// A file's timelines, each built the first time a walk of its dialect
/// needs it (walks of one file may run on several threads).
#[derive(Default)]
pub(super) struct Timelines([std::sync::OnceLock<Timeline>; 2]);

impl Timelines {
    pub fn get(
        &self,
        file: &SessionFile<'_>,
        path: &[u32],
        calls: &[ModelCall],
        dialect: Dialect,
    ) -> &Timeline {
        self.0[Self::slot(dialect)].get_or_init(|| Timeline::build(file, path, calls, dialect))
    }

    /// Drops a dialect's timeline (built again if a walk asks for it).
    pub fn release(&mut self, dialect: Dialect) {
        self.0[Self::slot(dialect)].take();
    }

    fn slot(dialect: Dialect) -> usize {
        match dialect {
            Dialect::V2_4 => 0,
            Dialect::V2_9 => 1,
        }
    }
}
