//! The four phases (SPEC 3; SPEC-2.9 3), run in order over the records of a
//! conversation. They never touch message text: each phase reads records
//! and the previous phase's `Slots`, and says what the output is, slot by
//! slot, as an `EditScript` (`script.rs`). One file per phase; where the
//! dialects differ inside a phase (phase 1's keys) the dialect is a
//! parameter, where they differ in kind (phase 3's ids against ranges;
//! phase 4's thinking strip against the orphan sweep) each has its file.
//! A phase that remembers decisions between renders owns its cache's type;
//! `memo.rs` holds one of each, and `run` hands each phase its own.

mod chain_ids;
mod chain_ranges;
mod chain_sets;
mod id_index;
mod keys;
mod log_index;
mod memo;
mod purge;
mod stub;
mod sweep;
mod synthetic;
mod text;
mod thinking;
mod value_key;

use crate::config::Config;
use crate::dialect::Dialect;
use crate::error::{PruneError, Result};
use crate::indexer_methods::IndexerMethod;
use crate::record::{Block, Content, ElementKind, Log, Refs, SummaryRef};
use crate::script::{Diagnostic, EditScript, Stats};
use crate::state::State;

pub use memo::Memo;
use synthetic::ChainCaches;

/// Everything a render reads.
pub struct Inputs<'a> {
    pub log: &'a Log,
    /// The bytes the log's borrowed text spans point into.
    pub text: &'a [u8],
    pub state: &'a State,
    pub config: &'a Config,
    /// 2.4.3's `thinkingBoundaryTimestamp`.
    pub boundary: Option<f64>,
    pub dialect: Dialect,
}

impl<'a> Inputs<'a> {
    /// The canonical text of message `i`.
    pub fn message_text(&self, i: usize) -> &[u8] {
        self.log.text(self.text, i)
    }

    /// The object blocks of message `i`'s content with their index, in
    /// order. A null block is the error the reference throws reading a
    /// property of it (`content[j] is null`); other non-objects are passed
    /// over.
    pub fn object_blocks(&self, i: usize) -> impl Iterator<Item = Result<(usize, &'a Block)>> {
        objects(i, self.log.blocks(i))
    }

    /// `object_blocks` of a message whose content the reference walks when
    /// it is there: none for absent or null content; for content of another
    /// kind, the error `content is not an array (why)`.
    pub fn walked_blocks(
        &self,
        i: usize,
        why: &str,
    ) -> Result<impl Iterator<Item = Result<(usize, &'a Block)>>> {
        let blocks = match self.log.records[i].content {
            Content::Array => self.log.blocks(i),
            Content::Absent | Content::Null => &[],
            _ => {
                return Err(PruneError::bad_message(
                    i,
                    "content",
                    &format!("is not an array ({why})"),
                ))
            }
        };
        Ok(objects(i, blocks))
    }

    /// The refs a per-batch summary message `i` cites with their index, in
    /// order (`details?.toolCallRefs ?? []`, read with `.some`): none when
    /// absent; an error when they are not an array, and at a null ref.
    pub fn summary_refs(
        &self,
        i: usize,
    ) -> Result<impl Iterator<Item = Result<(usize, &'a SummaryRef)>>> {
        let refs = match self.log.records[i].refs_kind {
            Refs::None => &[],
            Refs::Invalid => {
                return Err(PruneError::bad_message(
                    i,
                    "details.toolCallRefs",
                    "is not an array (the reference calls .some on it)",
                ))
            }
            Refs::Array => self.log.refs(i),
        };
        Ok(refs.iter().enumerate().map(move |(j, r)| {
            if r.kind == ElementKind::Null {
                Err(null_at(i, &format!("details.toolCallRefs[{j}]")))
            } else {
                Ok((j, r))
            }
        }))
    }
}

/// `field is null` in message `i`: the reference throws reading a property
/// of it.
fn null_at(i: usize, field: &str) -> PruneError {
    PruneError::bad_message(i, field, "is null")
}

/// The error at message `i`'s first null content block, if it has one.
pub fn no_null_block(log: &Log, i: usize) -> Result<()> {
    match log
        .blocks(i)
        .iter()
        .position(|b| b.kind == ElementKind::Null)
    {
        Some(j) => Err(null_at(i, &format!("content[{j}]"))),
        None => Ok(()),
    }
}

fn objects(i: usize, blocks: &[Block]) -> impl Iterator<Item = Result<(usize, &Block)>> {
    blocks
        .iter()
        .enumerate()
        .filter_map(move |(j, b)| match b.kind {
            ElementKind::Null => Some(Err(null_at(i, &format!("content[{j}]")))),
            ElementKind::NonObject => None,
            ElementKind::Object => Some(Ok((j, b))),
        })
}

/// Sets entry `i` of a per-message (or per-entry) cache, growing it.
pub(crate) fn put<T: Clone>(cache: &mut Vec<Option<T>>, i: usize, value: T) {
    if cache.len() <= i {
        cache.resize(i + 1, None);
    }
    cache[i] = Some(value);
}

/// Runs the phases of `inputs.dialect` and returns the output as a script;
/// `memo` keeps per-message decisions for the next render (a fresh one for
/// a stateless call).
pub fn run(inputs: &Inputs<'_>, memo: &mut Memo) -> Result<EditScript> {
    run_reusing(inputs, memo, Vec::new())
}

/// As `run`, filling `spare` (an earlier script's slots) for the output
/// instead of a new allocation.
pub fn run_reusing(
    inputs: &Inputs<'_>,
    memo: &mut Memo,
    spare: Vec<crate::script::Slot>,
) -> Result<EditScript> {
    let mut script = run_before_thinking(inputs, memo, spare)?;
    if let Some(thinking) = &inputs.config.thinking {
        strip_thinking(inputs, thinking, &mut script)?;
    }
    Ok(script)
}

/// 2.4.3's phase 4 over the script of the phases before it, with
/// `inputs.boundary`: what `run` adds for a config with a thinking strip.
/// Configs that differ in the strip alone share everything before it.
pub fn strip_thinking(
    inputs: &Inputs<'_>,
    thinking: &crate::config::ThinkingConfig,
    script: &mut EditScript,
) -> Result<()> {
    if inputs.dialect == Dialect::V2_4 {
        let mut stats = script.stats;
        script.changed |= thinking::run(inputs, thinking, script, &mut stats)?;
        script.stats = stats;
    }
    Ok(())
}

/// Every phase but 2.4.3's thinking strip (`inputs.config.thinking` is not
/// read): 2.9.1's whole render.
pub fn run_before_thinking(
    inputs: &Inputs<'_>,
    memo: &mut Memo,
    spare: Vec<crate::script::Slot>,
) -> Result<EditScript> {
    let mut script = EditScript::identity_in(inputs.log.len(), spare);
    let mut stats = Stats::default();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut changed = stub::run(inputs, &mut memo.stubs, &mut script, &mut stats)?;
    if let Some(purge) = &inputs.config.purge {
        changed |= purge::run(
            inputs,
            purge,
            &mut memo.purge_index,
            &mut script,
            &mut stats,
        )?;
    }
    if let Some(chain) = &inputs.config.chain {
        inputs.state.require(IndexerMethod::GetChainEntries)?;
        if inputs.state.has_chain_entries() {
            // Each chain phase takes its own cache and those both share.
            let Memo {
                stubs,
                chain_ids: ids_cache,
                range_plan,
                synthetic,
                log_index,
                ..
            } = memo;
            let shared = ChainCaches {
                synthetic,
                stubs,
                log_index,
            };
            changed |= match inputs.dialect {
                Dialect::V2_4 => {
                    chain_ids::run(inputs, ids_cache, shared, chain, &mut script, &mut stats)?
                }
                Dialect::V2_9 => chain_ranges::run(
                    inputs,
                    range_plan,
                    shared,
                    chain,
                    &mut script,
                    &mut stats,
                    &mut diagnostics,
                )?,
            };
        }
    }
    if inputs.dialect == Dialect::V2_9 {
        changed |= sweep::run(inputs, &mut script, &mut stats, &mut diagnostics)?;
    }
    script.changed = changed;
    script.stats = stats;
    script.diagnostics = diagnostics;
    Ok(script)
}
