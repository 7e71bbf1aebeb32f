//! A session file parsed and prepared once for every walk a replay or a
//! tune runs over it: the active branch and its model calls, what the
//! file says of each (`calls.rs`), the models they use, and the
//! characters-to-tokens factor per model, fitted on a measure pass of the
//! recorded policy (`crate::cost::calibration`).

use std::sync::atomic::Ordering;

use super::calls;
use super::compaction::{path_facts, PathFacts};
use super::options::ReplayOptions;
use super::progress::Progress;
use super::requests;
use super::result::{CallInfo, ModelUsed};
use super::timeline;
use crate::cost::calibration::Calibration;
use crate::cost::catalog::Catalog;
use crate::error::Result;
use crate::json::text::to_string_lossy;
use crate::sessionfile::date::{date_of, DateValue};
use crate::sessionfile::file::describe_key;
use crate::sessionfile::key::JsKey;
use crate::sessionfile::{model_calls, path_to, Entry, Leaf, SessionError, SessionFile};

/// Skipped line numbers a result lists (all are counted).
pub const SKIPPED_LINES_LISTED: usize = 5;

/// An entry's id as plain text (lone surrogates as U+FFFD).
pub(super) fn id_string(entry: &Entry<'_>) -> String {
    match entry.id() {
        JsKey::String(s) => to_string_lossy(&s),
        other => describe_key(&other),
    }
}

/// The frontier entries a branch holds, for `BoundaryMode::Auto`'s verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FrontierEntries {
    None,
    /// Only entries without `thinkingStripBoundaryTimestamp` (2.9.1's, or
    /// 2.4.3's before its first boundary).
    WithoutBoundary,
    /// At least one with it: pi-condense 2.4's.
    WithBoundary,
}

/// A session file parsed once, with its model calls, what the file says
/// about each, and the calibration: what every configuration a replay or
/// a tune renders shares.
pub struct Prepared<'a> {
    pub(super) file: SessionFile<'a>,
    pub(super) path: Vec<u32>,
    pub(super) calls: Vec<crate::sessionfile::ModelCall>,
    pub(super) infos: Vec<CallInfo>,
    pub(super) meta: Vec<calls::CallMeta>,
    /// The models the calls use.
    pub(super) models: Vec<ModelUsed>,
    pub(super) calibration: Calibration,
    pub(super) options: ReplayOptions,
    /// The state per call, per dialect, built when a walk first needs it.
    pub(super) timelines: timeline::Timelines,
    pub(super) conversions: requests::Conversions,
    /// What frontier entries the branch holds.
    pub(super) frontier_entries: FrontierEntries,
    /// Lines pi skips: how many, and the first line numbers.
    pub(super) skipped: (usize, Vec<u32>),
    /// What pi's compaction reads of the path (`compaction.rs`).
    pub(super) compaction_facts: PathFacts,
    /// Policies a replay walks only for its figures (the stages of a
    /// saving's parts, the recorded policy): no renders kept, no contexts
    /// written.
    pub(super) hidden: Vec<super::policy::Policy>,
}

impl<'a> Prepared<'a> {
    /// Parses `bytes`, with the fixed calibration of `options` (the walks
    /// calibrate: `walk.rs` `Prepared::new`).
    pub(super) fn uncalibrated(
        bytes: &'a [u8],
        options: &ReplayOptions,
        progress: Option<&Progress>,
        walks: usize,
    ) -> Result<Self> {
        if bytes
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c))
        {
            return Err(crate::error::PruneError::new(
                crate::error::Code::InvalidSession,
                "empty file: not a pi session",
            ));
        }
        let file = SessionFile::parse(bytes).map_err(SessionError::located)?;
        let skipped = file.skipped_lines(SKIPPED_LINES_LISTED);
        let path = path_to(&file, &Leaf::Active)
            .map_err(SessionError::located)?
            .entries;
        let calls = model_calls(&file, &path);
        let infos = call_infos(&file, &path, &calls);
        if let Some(p) = progress {
            // The provider model measures the recorded policy once first
            // (the calibration pass).
            let passes = walks + usize::from(options.cache_model.is_provider());
            p.total
                .fetch_add((calls.len() * passes) as u64, Ordering::Relaxed);
        }
        let meta = calls::call_meta(
            &file,
            &path,
            &calls,
            options.model.as_ref(),
            &options.catalog,
        );
        let models = models_of(&meta, &options.catalog, options.long_retention);
        let frontier_entries = frontier_entries(&file, &path);
        let compaction_facts = path_facts(&file, &path, options.compaction.summary_chars);
        Ok(Prepared {
            compaction_facts,
            frontier_entries,
            skipped,
            file,
            path,
            calls,
            infos,
            meta,
            models,
            calibration: Calibration::fit(&[], options.chars_per_token),
            options: options.clone(),
            timelines: Default::default(),
            conversions: Default::default(),
            hidden: Vec::new(),
        })
    }

    pub fn model_calls(&self) -> usize {
        self.calls.len()
    }

    /// Lines pi skips (`SessionFile::skipped_lines`): how many, and the
    /// first line numbers.
    pub fn skipped_lines(&self) -> &(usize, Vec<u32>) {
        &self.skipped
    }
}

/// What the file says of each model call: ids and time.
fn call_infos(
    file: &SessionFile<'_>,
    path: &[u32],
    calls: &[crate::sessionfile::ModelCall],
) -> Vec<CallInfo> {
    calls
        .iter()
        .map(|c| {
            let entry = file.entry(path[c.assistant] as usize);
            let stamped = entry
                .message()
                .and_then(|m| m.get("timestamp"))
                .and_then(|t| t.number())
                .filter(|t| t.is_finite());
            let time = stamped.or(match date_of(entry.timestamp()) {
                DateValue::Time(t) if t.is_finite() => Some(t),
                _ => None,
            });
            CallInfo {
                entry_id: id_string(&entry),
                leaf_id: c.leaf.map(|l| id_string(&file.entry(path[l] as usize))),
                time,
            }
        })
        .collect()
}

/// The models of the calls, in order of first use.
fn models_of(meta: &[calls::CallMeta], catalog: &Catalog, long: bool) -> Vec<ModelUsed> {
    let mut models: Vec<ModelUsed> = Vec::new();
    for m in meta {
        if !models.iter().any(|u| u.key == m.model_key) {
            let rules = crate::cost::catalog::rules_for(&m.model, long);
            models.push(ModelUsed {
                key: m.model_key,
                name: m.model.name(),
                in_catalog: catalog.get(&m.model.provider, &m.model.id).is_some(),
                keeps_thinking: rules.keeps_thinking,
                prefix_check: rules.prefix_check,
            });
        }
    }
    models
}

/// What frontier entries the branch holds.
fn frontier_entries(file: &SessionFile<'_>, path: &[u32]) -> FrontierEntries {
    let mut found = FrontierEntries::None;
    for &e in path {
        let entry = file.entry(e as usize);
        if entry.is("custom") && entry.custom_type_is(crate::sessionfile::condense::CUSTOM_FRONTIER)
        {
            if entry
                .data()
                .is_some_and(|d| d.get("thinkingStripBoundaryTimestamp").is_some())
            {
                return FrontierEntries::WithBoundary;
            }
            found = FrontierEntries::WithoutBoundary;
        }
    }
    found
}
