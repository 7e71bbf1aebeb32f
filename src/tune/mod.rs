//! Which pi-condense settings a user should run (issue 23): every session
//! file is read and prepared once (parsed, its calls and their metadata
//! found, the tokens calibrated on its recorded usage), then replayed under
//! each configuration of the grid (`grid.rs`), the configurations spread
//! over rayon's pool, and priced with the replay's provider cache model.
//! `choose.rs` ranks them, finds the cost/size front and the recommendation
//! with its held-out check; `report.rs` writes the result as JSON.

mod choose;
mod grid;
mod report;

use std::sync::atomic::Ordering;

use rayon::prelude::*;

use crate::error::Result;
use crate::json::Json;
use crate::replay::{Policy, Prepared, Progress, ReplayOptions, Settings};

pub use choose::{choose, Choice, HeldOut};
pub use grid::{Candidate, HELD};
pub use report::to_json;

/// One configuration over one session file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    pub cost_usd: f64,
    pub chars_sent: u64,
    /// Calls that rewrote the cache (rewrite, partial or expired).
    pub rewrites: u64,
    /// Per cause label: calls and USD.
    pub causes: Vec<(String, u64, f64)>,
}

/// A tune's inputs besides the files.
#[derive(Debug, Clone)]
pub struct TuneOptions {
    /// Model, retention, recorded policy, catalog, calibration: as a replay
    /// takes them; `settings` is the user's current config.
    pub replay: ReplayOptions,
    /// The release the user runs now (`2.4.3` or `2.9.1`).
    pub release: &'static str,
}

/// Every configuration over every file.
#[derive(Debug, Clone)]
pub struct Tuned {
    pub files: Vec<String>,
    pub model_calls: usize,
    pub candidates: Vec<Candidate>,
    /// `outcomes[c][f]`: candidate `c` over file `f`.
    pub outcomes: Vec<Vec<Outcome>>,
    /// The index of the user's current configuration in `candidates`.
    pub current: usize,
    pub choice: Choice,
}

fn outcome(p: &crate::replay::PolicyReplay) -> Outcome {
    let c = &p.bill.classes;
    Outcome {
        cost_usd: p.bill.cost_usd,
        chars_sent: p.totals.chars_sent,
        rewrites: c[2] + c[3] + c[4],
        causes: p
            .bill
            .causes
            .iter()
            .map(|l| (l.label.clone(), l.calls, l.cost_usd))
            .collect(),
    }
}

/// The candidates as families that differ only in 2.4.3's thinking strip
/// (indices into `candidates`): a family is replayed in one walk that
/// shares every phase before the strip.
fn families(candidates: &[Candidate]) -> Vec<Vec<usize>> {
    let mut out: Vec<(Json, Vec<usize>)> = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let rest = match (&c.block, c.policy) {
            (Json::Obj(entries), Policy::Config) => Json::Obj(
                entries
                    .iter()
                    .filter(|(k, _)| &**k != b"thinkingStrip")
                    .cloned()
                    .collect(),
            ),
            _ => {
                out.push((Json::Null, vec![i]));
                continue;
            }
        };
        match out
            .iter_mut()
            .find(|(r, f)| *r == rest && candidates[f[0]].policy == Policy::Config && !r.is_null())
        {
            Some((_, family)) => family.push(i),
            None => out.push((rest, vec![i])),
        }
    }
    // The largest first, so the last ones to run on the pool are short.
    let mut families: Vec<Vec<usize>> = out.into_iter().map(|(_, f)| f).collect();
    families.sort_by_key(|f| std::cmp::Reverse(f.len()));
    families
}

/// Tunes over the session files `files` (name, bytes).
pub fn tune(
    files: &[(String, Vec<u8>)],
    options: &TuneOptions,
    progress: Option<&Progress>,
) -> Result<Tuned> {
    let base = options.replay.settings.context_prune();
    let mut candidates = grid::grid(&base);
    let current = grid::current(options.release, &base);
    let current_at = match candidates.iter().position(|c| grid::same(c, &current)) {
        Some(i) => i,
        None => {
            candidates.push(current);
            candidates.len() - 1
        }
    };
    // Every configuration's boundary follows its own keepLastTurns.
    let mut replay_options = options.replay.clone();
    replay_options.boundary_from_config = true;
    replay_options.keep_renders = false;
    let families = families(&candidates);
    let mut per_file: Vec<Vec<Outcome>> = Vec::with_capacity(files.len());
    let mut model_calls = 0;
    for (_, bytes) in files {
        let prepared = Prepared::new_for_pool(bytes, &replay_options, progress, candidates.len())?;
        model_calls += prepared.model_calls();
        let results: Vec<Result<Vec<(usize, Outcome)>>> = families
            .par_iter()
            .map(|family| {
                let settings: Vec<&Settings> =
                    family.iter().map(|&c| &candidates[c].settings).collect();
                let policy = candidates[family[0]].policy;
                let replays = prepared.run_family(policy, &settings, progress)?;
                Ok(family
                    .iter()
                    .zip(&replays)
                    .map(|(&c, p)| (c, outcome(p)))
                    .collect())
            })
            .collect();
        let mut outcomes = vec![Outcome::default(); candidates.len()];
        for family in results {
            for (c, o) in family? {
                outcomes[c] = o;
            }
        }
        per_file.push(outcomes);
    }
    // outcomes[c][f]
    let outcomes: Vec<Vec<Outcome>> = (0..candidates.len())
        .map(|c| per_file.iter().map(|f| f[c].clone()).collect())
        .collect();
    let choice = choose(&candidates, &outcomes, current_at);
    if let Some(p) = progress {
        let total = p.total.load(Ordering::Relaxed);
        p.done.store(total, Ordering::Relaxed);
    }
    Ok(Tuned {
        files: files.iter().map(|(n, _)| n.clone()).collect(),
        model_calls,
        candidates,
        outcomes,
        current: current_at,
        choice,
    })
}

/// The settings a tune was given, for `TuneOptions`: the user's config
/// (pi's settings file, its `contextPrune` block or a render config).
pub fn settings_of(config: Option<Json>) -> Result<Settings> {
    Settings::new(config)
}
