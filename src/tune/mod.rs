//! Which pi-condense settings a user should run (issue 23): every session
//! file is read and prepared once (parsed, its calls and their metadata
//! found, the tokens calibrated on its recorded usage), then replayed under
//! each configuration of the grid (`grid.rs`), the configurations spread
//! over rayon's pool, and priced with the replay's provider cache model.
//! `choose.rs` ranks them, finds the cost/size front, the ties and the
//! recommendation with its held-out check, the same for any order of the
//! files; `explain.rs` says what the recommendation changes from yours and
//! what each change saves; `report.rs` writes the result as JSON.

mod choose;
mod explain;
mod grid;
mod report;

use std::sync::atomic::Ordering;

use rayon::prelude::*;

use crate::error::{guarded, read_file, Code, PruneError, Result};
use crate::json::text::utf8_string;
use crate::json::{parse_value, Json};
use crate::replay::result::BoundaryUsed;
use crate::replay::{Policy, Prepared, Progress, ReplayOptions, Settings};

pub use choose::{choose, Choice, Fold, HeldOut, Keep};
pub use explain::{explain, Explained, Paste};
pub use grid::{Candidate, HELD};
pub use report::to_json;

/// One configuration over one session file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileRun {
    pub cost_usd: f64,
    pub chars_sent: u64,
    /// Calls that rewrote the cache (rewrite, partial or expired).
    pub rewrites: u64,
    /// Per cause label: calls and USD.
    pub causes: Vec<(String, u64, f64)>,
    /// The thinking boundary rule its renders followed.
    pub boundary: Option<BoundaryUsed>,
    /// Thinking the API dropped under preserved thinking's prefix check.
    pub thinking_dropped: crate::cost::bill::ThinkingDropped,
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
    /// The files tuned (those left out are in `errors`).
    pub files: Vec<String>,
    /// Per file tuned: its model calls and skipped lines.
    pub infos: Vec<FileInfo>,
    /// The files left out, in order.
    pub errors: Vec<FileError>,
    pub model_calls: usize,
    pub candidates: Vec<Candidate>,
    /// `outcomes[c][f]`: candidate `c` over file `f`.
    pub outcomes: Vec<Vec<FileRun>>,
    /// The index of the user's current configuration in `candidates`.
    pub current: usize,
    /// The thinking boundary rule of the current configuration (None: its
    /// release reads none).
    pub boundary: Option<BoundaryUsed>,
    /// Whether the user's pi-condense prunes today (its master switch).
    pub pruning_on: bool,
    pub choice: Choice,
    pub explained: Explained,
}

fn outcome(p: &crate::replay::PolicyReplay) -> FileRun {
    let c = &p.bill.classes;
    FileRun {
        cost_usd: p.bill.cost_usd,
        chars_sent: p.chars_sent,
        rewrites: c[2] + c[3] + c[4],
        causes: p
            .bill
            .causes
            .iter()
            .map(|l| (l.label.clone(), l.calls, l.cost_usd))
            .collect(),
        boundary: p.boundary.clone(),
        thinking_dropped: p.bill.thinking_dropped,
    }
}

/// The candidates as families of one release, gated or not, that differ
/// only in 2.4.3's thinking strip (indices into `candidates`): a family is
/// replayed in one walk that shares every phase before the strip.
fn families(candidates: &[Candidate]) -> Vec<Vec<usize>> {
    let mut out: Vec<((Policy, Json), Vec<usize>)> = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let base = c.policy.base();
        let rest = match (&c.block, base) {
            (Json::Obj(_), Policy::Config) => c.block.without("thinkingStrip"),
            (Json::Obj(_), Policy::V2_9) => c.block.clone(),
            _ => {
                out.push(((base, Json::Null), vec![i]));
                continue;
            }
        };
        let key = (base, rest);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, family)) => family.push(i),
            None => out.push((key, vec![i])),
        }
    }
    // The largest first, so the last ones to run on the pool are short.
    let mut families: Vec<Vec<usize>> = out.into_iter().map(|(_, f)| f).collect();
    families.sort_by_key(|f| std::cmp::Reverse(f.len()));
    families
}

/// A session file a tune left out, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct FileError {
    pub file: String,
    /// The message names no file; `line` is the file's line, when known.
    pub error: PruneError,
}

/// What one file of a tune is.
#[derive(Debug, Clone, PartialEq)]
pub struct FileInfo {
    pub file: String,
    pub model_calls: usize,
    /// Lines pi skips: how many, and the first line numbers.
    pub skipped_lines: (usize, Vec<u32>),
}

/// One file's outcomes under every candidate.
fn tune_file(
    bytes: &[u8],
    replay_options: &ReplayOptions,
    candidates: &[Candidate],
    families: &[Vec<usize>],
    progress: Option<&Progress>,
) -> Result<(FileInfo, Vec<FileRun>)> {
    let prepared = Prepared::new_for_pool(bytes, replay_options, progress, candidates.len())?;
    let results: Vec<Result<Vec<(usize, FileRun)>>> = families
        .par_iter()
        .map(|family| {
            let members: Vec<(Policy, &Settings)> = family
                .iter()
                .map(|&c| (candidates[c].policy, &candidates[c].settings))
                .collect();
            let replays = prepared.run_family(&members, progress)?;
            Ok(family
                .iter()
                .zip(&replays)
                .map(|(&c, p)| (c, outcome(p)))
                .collect())
        })
        .collect();
    let mut outcomes = vec![FileRun::default(); candidates.len()];
    for family in results {
        for (c, o) in family? {
            outcomes[c] = o;
        }
    }
    let info = FileInfo {
        file: String::new(),
        model_calls: prepared.model_calls(),
        skipped_lines: prepared.skipped_lines().clone(),
    };
    Ok((info, outcomes))
}

/// The error of a tune that has no file left: a single file's own error,
/// or one naming every file and why.
fn no_file_left(errors: &[FileError]) -> PruneError {
    if let [only] = errors {
        return only.error.clone();
    }
    let code = errors
        .iter()
        .map(|e| e.error.code)
        .reduce(|a, b| if a == b { a } else { Code::InvalidSession })
        .unwrap_or(Code::InvalidArgument);
    let each: Vec<String> = errors
        .iter()
        .map(|e| match e.error.line {
            Some(l) => format!("{}:{l}: {}", e.file, e.error.message),
            None => format!("{}: {}", e.file, e.error.message),
        })
        .collect();
    PruneError::new(
        code,
        format!(
            "none of the {} session files could be tuned: {}",
            errors.len(),
            each.join("; ")
        ),
    )
}

/// The current configuration's boundary rule over the files tuned (None:
/// its release reads no boundary).
fn current_boundary(per_file: &[Option<BoundaryUsed>], files: &[FileInfo]) -> Option<BoundaryUsed> {
    let first = per_file.first()?.clone()?;
    if per_file.len() == 1 || per_file.iter().all(|b| b.as_ref() == Some(&first)) {
        return Some(first);
    }
    let recorded: Vec<&str> = per_file
        .iter()
        .zip(files)
        .filter(|(b, _)| b.as_ref().is_some_and(|b| b.rule == "recorded"))
        .map(|(_, f)| f.file.as_str())
        .collect();
    if recorded.len() == per_file.len() {
        return Some(BoundaryUsed {
            rule: "recorded",
            reason: first.reason,
        });
    }
    Some(BoundaryUsed {
        rule: "config",
        reason: format!(
            "the frontier entries of {} of {} files are not this config's (the config's boundary is used for every file)",
            per_file.len() - recorded.len(),
            per_file.len()
        ),
    })
}

/// Tunes over the session files `files` (name, bytes or the error reading
/// them). A file that cannot be read, parsed or replayed is left out and
/// reported in `errors`; only when none is left is the tune an error.
pub fn tune(
    files: &[(String, Result<Vec<u8>>)],
    options: &TuneOptions,
    progress: Option<&Progress>,
) -> Result<Tuned> {
    let base = options.replay.settings.context_prune();
    // The gate decides on the provider's cache model: under the prefix
    // rule, or with the gate switched off (`enabled: false`), the grid has
    // no gated twins.
    let gate = (options.replay.cache_model.is_provider() && options.replay.gate.enabled)
        .then_some(options.replay.gate);
    let mut candidates = grid::grid(&base, gate);
    let current = grid::current(options.release, &base);
    let current_at = match candidates.iter().position(|c| grid::same(c, &current)) {
        Some(i) => i,
        None => {
            candidates.push(current);
            candidates.len() - 1
        }
    };
    // Every configuration's boundary follows its own keepLastTurns (the
    // default `auto`, and `config`), or the recorded frontier.
    let mut replay_options = options.replay.clone();
    replay_options.keep_renders = false;
    replay_options.contexts = crate::replay::Contexts::None;
    let families = families(&candidates);
    let mut per_file: Vec<Vec<FileRun>> = Vec::with_capacity(files.len());
    let mut infos: Vec<FileInfo> = Vec::with_capacity(files.len());
    let mut errors: Vec<FileError> = Vec::new();
    let mut model_calls = 0;
    for (name, bytes) in files {
        let done = bytes
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|bytes| tune_file(bytes, &replay_options, &candidates, &families, progress));
        match done {
            Ok((info, outcomes)) => {
                model_calls += info.model_calls;
                infos.push(FileInfo {
                    file: name.clone(),
                    ..info
                });
                per_file.push(outcomes);
            }
            Err(error) => errors.push(FileError {
                file: name.clone(),
                error,
            }),
        }
    }
    if per_file.is_empty() {
        return Err(no_file_left(&errors));
    }
    let boundary = current_boundary(
        &per_file
            .iter()
            .map(|f| f[current_at].boundary.clone())
            .collect::<Vec<_>>(),
        &infos,
    );
    // outcomes[c][f]
    let outcomes: Vec<Vec<FileRun>> = (0..candidates.len())
        .map(|c| per_file.iter().map(|f| f[c].clone()).collect())
        .collect();
    let pruning_on = options.replay.settings.pruning_on();
    let choice = choose(&candidates, &outcomes, current_at, pruning_on);
    let explained = explain(&candidates, &choice, current_at, pruning_on);
    if let Some(p) = progress {
        let total = p.total.load(Ordering::Relaxed);
        p.done.store(total, Ordering::Relaxed);
    }
    Ok(Tuned {
        files: infos.iter().map(|f| f.file.clone()).collect(),
        infos,
        errors,
        model_calls,
        candidates,
        outcomes,
        current: current_at,
        boundary,
        pruning_on,
        choice,
        explained,
    })
}

/// The tune as the JS API asks for it: session file paths and the options
/// as JSON text (`release` among them), the result as JSON text; a panic
/// is an error.
pub fn report(paths: &[String], options_json: &str, progress: Option<&Progress>) -> Result<String> {
    guarded(
        "internal error while tuning (a bug: please report it with the files)",
        || {
            let replay = ReplayOptions::from_json(options_json.as_bytes())?;
            let release = match parse_value(options_json.as_bytes())
                .ok()
                .and_then(|o| o.get("release").cloned())
            {
                None | Some(Json::Null) => "2.4.3",
                Some(r) if r.is_str("2.4.3") => "2.4.3",
                Some(r) if r.is_str("2.9.1") => "2.9.1",
                Some(_) => {
                    return Err(PruneError::bad_argument(
                        "release must be '2.4.3' or '2.9.1'",
                    ))
                }
            };
            // A file that cannot be read is left out of the tune, as one that
            // cannot be parsed (`tune` lists both in `errors`).
            let files: Vec<(String, Result<Vec<u8>>)> =
                paths.iter().map(|p| (p.clone(), read_file(p))).collect();
            let t = tune(&files, &TuneOptions { replay, release }, progress)?;
            Ok(utf8_string(to_json(&t)))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> TuneOptions {
        TuneOptions {
            replay: ReplayOptions::default(),
            release: "2.4.3",
        }
    }

    /// A file that cannot be read, an empty one and a garbage one are left
    /// out and listed in order; the rest is tuned as alone.
    #[test]
    fn bad_files_are_left_out_and_listed() {
        let good = include_bytes!("../../__test__/fixtures/sessionfile/flushes.jsonl").to_vec();
        let files = vec![
            (
                "gone".to_string(),
                Err(PruneError::new(Code::Io, "cannot read the file: gone")),
            ),
            ("good".to_string(), Ok(good.clone())),
            ("empty".to_string(), Ok(b" \n".to_vec())),
            (
                "garbage".to_string(),
                Ok(b"x\n{\"type\":\"message\"}\n".to_vec()),
            ),
        ];
        let t = tune(&files, &options(), None).unwrap();
        let alone = tune(&[("good".to_string(), Ok(good))], &options(), None).unwrap();
        assert_eq!(t.files, ["good"]);
        assert_eq!(t.infos, alone.infos);
        assert_eq!(t.outcomes, alone.outcomes);
        let errors: Vec<(&str, Code, &str, Option<usize>)> = t
            .errors
            .iter()
            .map(|e| {
                (
                    e.file.as_str(),
                    e.error.code,
                    e.error.message.as_str(),
                    e.error.line,
                )
            })
            .collect();
        assert_eq!(
            errors,
            [
                ("gone", Code::Io, "cannot read the file: gone", None),
                (
                    "empty",
                    Code::InvalidSession,
                    "empty file: not a pi session",
                    None
                ),
                (
                    "garbage",
                    Code::InvalidSession,
                    "not a pi session: the first entry is not a header {type:\"session\", id:<string>}",
                    Some(2)
                ),
            ]
        );
        let json = String::from_utf8(to_json(&t)).unwrap();
        assert!(json.contains(r#""errors":[{"file":"gone","error":{"code":"ERR_CONDENSE_IO","message":"cannot read the file: gone","line":null}}"#), "{json}");
        // No file left: one error naming each file, or a single file's own.
        let e = tune(&files[2..], &options(), None).unwrap_err();
        assert_eq!(e.code, Code::InvalidSession);
        assert_eq!(e.message, "none of the 2 session files could be tuned: empty: empty file: not a pi session; garbage:2: not a pi session: the first entry is not a header {type:\"session\", id:<string>}");
        let e = tune(&files[..1], &options(), None).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (Code::Io, "cannot read the file: gone")
        );
        let mixed = tune(&[files[0].clone(), files[2].clone()], &options(), None).unwrap_err();
        assert_eq!(mixed.code, Code::InvalidSession);
    }

    /// The gate switched off (`gate.enabled: false`) leaves every gated
    /// twin out, and only them.
    #[test]
    fn a_gate_switched_off_has_no_twins() {
        let good = include_bytes!("../../__test__/fixtures/sessionfile/flushes.jsonl").to_vec();
        let files = [("good".to_string(), Ok(good))];
        let on = tune(&files, &options(), None).unwrap();
        let mut off_options = options();
        off_options.replay.gate.enabled = false;
        let off = tune(&files, &off_options, None).unwrap();
        let plain = |t: &Tuned| t.candidates.iter().filter(|c| c.gate.is_none()).count();
        assert!(plain(&on) < on.candidates.len());
        assert_eq!(off.candidates.len(), plain(&on));
        assert_eq!(plain(&off), off.candidates.len());
    }
}
