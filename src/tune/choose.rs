//! From every configuration's cost over every session to one answer: the
//! ranking by USD, the front of cost against context size (a smaller
//! context also postpones compaction, so a dearer configuration that sends
//! less can still be worth it), and the recommendation. With one session
//! the recommendation is the cheapest configuration. With several it is
//! chosen on half of them (the even-numbered files) and its saving over
//! the current settings is measured on the other half too; when that
//! held-out saving is no larger than the gap between the two halves'
//! savings (the noise of the split), the current settings are kept.

use super::{Candidate, FileRun};

/// The held-out check of a recommendation.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldOut {
    /// File indices the choice was made on, and those it was tested on.
    pub fit: Vec<usize>,
    pub test: Vec<usize>,
    /// The configuration cheapest on the fit half.
    pub chosen: usize,
    /// Its saving over the current settings on each half (fractions).
    pub saving_fit: f64,
    pub saving_test: f64,
    /// |saving_fit - saving_test|.
    pub noise: f64,
    /// Whether the held-out saving beat the noise (else the current
    /// settings are recommended).
    pub beats_noise: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// Candidate indices, cheapest first (fewer chars first on a tie).
    pub ranked: Vec<usize>,
    /// Per candidate: on the front of total cost against chars sent.
    pub front: Vec<bool>,
    pub recommended: usize,
    /// Per file: the recommendation's saving over the current settings.
    pub savings: Vec<f64>,
    pub held_out: Option<HeldOut>,
}

fn total(outcomes: &[FileRun], files: &[usize]) -> f64 {
    files.iter().map(|&f| outcomes[f].cost_usd).sum()
}

fn saving(outcomes: &[Vec<FileRun>], chosen: usize, current: usize, files: &[usize]) -> f64 {
    let base = total(&outcomes[current], files);
    if base > 0.0 {
        1.0 - total(&outcomes[chosen], files) / base
    } else {
        0.0
    }
}

/// The cheapest candidate over `files` (fewer chars, then fewer changes
/// from the current one, on a tie).
fn cheapest(
    candidates: &[Candidate],
    outcomes: &[Vec<FileRun>],
    files: &[usize],
    current: usize,
) -> usize {
    let chars = |c: usize| -> u64 { files.iter().map(|&f| outcomes[c][f].chars_sent).sum() };
    let near = |c: usize| super::grid::distance(&candidates[c], &candidates[current]);
    (0..outcomes.len())
        .min_by(|&a, &b| {
            total(&outcomes[a], files)
                .total_cmp(&total(&outcomes[b], files))
                .then(chars(a).cmp(&chars(b)))
                .then(near(a).cmp(&near(b)))
        })
        .unwrap_or(0)
}

/// Ranks, finds the front, and recommends (`current`: the user's
/// configuration's index).
pub fn choose(candidates: &[Candidate], outcomes: &[Vec<FileRun>], current: usize) -> Choice {
    let files: Vec<usize> = (0..outcomes.first().map_or(0, Vec::len)).collect();
    let cost: Vec<f64> = outcomes.iter().map(|o| total(o, &files)).collect();
    let chars: Vec<u64> = outcomes
        .iter()
        .map(|o| o.iter().map(|x| x.chars_sent).sum())
        .collect();
    let near = |c: usize| super::grid::distance(&candidates[c], &candidates[current]);
    let mut ranked: Vec<usize> = (0..candidates.len()).collect();
    ranked.sort_by(|&a, &b| {
        cost[a]
            .total_cmp(&cost[b])
            .then(chars[a].cmp(&chars[b]))
            .then(near(a).cmp(&near(b)))
    });
    let front = (0..candidates.len())
        .map(|c| {
            !(0..candidates.len()).any(|d| {
                cost[d] <= cost[c]
                    && chars[d] <= chars[c]
                    && (cost[d] < cost[c] || chars[d] < chars[c])
            })
        })
        .collect();
    let (recommended, held_out) = if files.len() >= 2 {
        let fit: Vec<usize> = files.iter().copied().filter(|f| f % 2 == 0).collect();
        let test: Vec<usize> = files.iter().copied().filter(|f| f % 2 == 1).collect();
        let chosen = cheapest(candidates, outcomes, &fit, current);
        let saving_fit = saving(outcomes, chosen, current, &fit);
        let saving_test = saving(outcomes, chosen, current, &test);
        let noise = (saving_fit - saving_test).abs();
        let beats_noise = chosen != current && saving_test > 0.0 && saving_test > noise;
        let recommended = if beats_noise { chosen } else { current };
        (
            recommended,
            Some(HeldOut {
                fit,
                test,
                chosen,
                saving_fit,
                saving_test,
                noise,
                beats_noise,
            }),
        )
    } else {
        (ranked.first().copied().unwrap_or(current), None)
    };
    let savings = files
        .iter()
        .map(|&f| saving(outcomes, recommended, current, &[f]))
        .collect();
    Choice {
        ranked,
        front,
        recommended,
        savings,
        held_out,
    }
}
