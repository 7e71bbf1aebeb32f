//! From every configuration's cost over every session to one answer, the
//! same for any order of the files (issue 46):
//!
//! - **Totals** over files are summed from the smallest per-file figure
//!   up, so the order the files were given cannot move a total by a
//!   rounding.
//! - **The ranking**: cheaper first; on an exact tie fewer chars sent, then
//!   fewer changes from yours, then grid order. The front: no other
//!   configuration is both cheaper and smaller (a smaller context also
//!   postpones compaction, so a dearer one that sends less can be worth it).
//! - **Ties**: every configuration within a cent of the first, or within
//!   0.1% of its USD when that is more ([`tolerance`]), costs the same for
//!   a user's purposes: one group, a prefix of the ranking.
//! - **The recommendation** is the group's choice: the member that changes
//!   least from yours (then fewer chars, then cheaper), so the block to
//!   paste sets only what differs and matters.
//! - **Today** is what the user pays now: their settings when pruning is
//!   on, no pruning when pi-condense's master switch is off. Savings are
//!   against it.
//! - **Held out**, with two files or more: leave one file out. For each
//!   file the configuration chosen the same way on the others is priced on
//!   it. Summed over the files (a large file weighs as much as it costs),
//!   that cross-validated saving keeps yours when it is not above zero, or
//!   when the data is too small to tell: the saving is within the tie
//!   tolerance of zero, or some file's others cannot tell today's
//!   configuration from their cheapest (it ties there, so that file could
//!   not be priced with a choice they made).
//!   It reuses the prices the tune already has: nothing is replayed again.

use super::grid::distance;
use super::{Candidate, FileRun};

/// How far above the cheapest a configuration still ties with it: a cent,
/// or 0.1% of the cheapest's USD when that is more.
pub fn tolerance(usd: f64) -> f64 {
    (0.001 * usd).max(0.01)
}

/// A sum that does not depend on the order of its terms: smallest first.
pub fn sum(mut terms: Vec<f64>) -> f64 {
    terms.sort_by(f64::total_cmp);
    terms.iter().sum()
}

/// Why the held-out check keeps the user's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The cross-validated saving is zero or a loss.
    NotAboveZero,
    /// Too small to tell: the saving is within the tie tolerance, or some
    /// file's others tie today's configuration with their cheapest.
    TooSmall,
}

impl Keep {
    /// Whether a cross-validated saving of `saving_usd` on `today_usd`
    /// keeps the user's settings (`undecided`: some fold's others tie
    /// today's configuration with their cheapest).
    fn verdict(saving_usd: f64, today_usd: f64, undecided: bool) -> Option<Keep> {
        if saving_usd > tolerance(today_usd) {
            None
        } else if undecided {
            Some(Keep::TooSmall)
        } else if saving_usd <= 0.0 {
            Some(Keep::NotAboveZero)
        } else {
            Some(Keep::TooSmall)
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Keep::NotAboveZero => "not above zero",
            Keep::TooSmall => "too small to tell",
        }
    }
}

/// One file held out: the configuration chosen on the others, and what it
/// and today's settings cost on this file.
#[derive(Debug, Clone, PartialEq)]
pub struct Fold {
    pub chosen: usize,
    pub cost_usd: f64,
    pub today_usd: f64,
    /// Today's configuration ties with the cheapest on the other files:
    /// they cannot tell it apart.
    pub today_tied: bool,
}

impl Fold {
    pub fn saving(&self) -> f64 {
        fraction(self.today_usd - self.cost_usd, self.today_usd)
    }
}

/// The leave-one-file-out check of the recommendation.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldOut {
    /// Per file, in the order given.
    pub folds: Vec<Fold>,
    /// Over the files: today's USD and what the held-out choices save on it.
    pub today_usd: f64,
    pub saving_usd: f64,
    /// Some: the check keeps the user's settings, and why.
    pub keep: Option<Keep>,
}

impl HeldOut {
    pub fn saving(&self) -> f64 {
        fraction(self.saving_usd, self.today_usd)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// Per candidate over every file: USD (an order-free sum) and chars.
    pub cost: Vec<f64>,
    pub chars: Vec<u64>,
    /// Candidate indices, cheapest first.
    pub ranked: Vec<usize>,
    /// How many lead the ranking tied with its first.
    pub tied: usize,
    /// Per candidate: on the front of total cost against chars sent.
    pub front: Vec<bool>,
    /// The tied group's choice.
    pub recommended: usize,
    /// What the user runs today: the current configuration, or no
    /// pruning when their pruning is off.
    pub today: usize,
    /// Per file: the recommendation's saving over today's settings.
    pub savings: Vec<f64>,
    /// With two files or more.
    pub held_out: Option<HeldOut>,
}

/// `part / whole`, or 0 when there is nothing to take a part of (a
/// saving of free settings); the report writes its fractions with it too.
pub(super) fn fraction(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
}

/// Each candidate's per-file USD, smallest first with its file, so that a
/// total over any set of files is an order-free sum.
struct Prices {
    sorted: Vec<Vec<(f64, usize)>>,
    chars: Vec<Vec<u64>>,
}

impl Prices {
    fn new(outcomes: &[Vec<FileRun>]) -> Prices {
        let sorted = outcomes
            .iter()
            .map(|per_file| {
                let mut v: Vec<(f64, usize)> = per_file
                    .iter()
                    .enumerate()
                    .map(|(f, o)| (o.cost_usd, f))
                    .collect();
                v.sort_by(|a, b| a.0.total_cmp(&b.0));
                v
            })
            .collect();
        let chars = outcomes
            .iter()
            .map(|per_file| per_file.iter().map(|o| o.chars_sent).collect())
            .collect();
        Prices { sorted, chars }
    }

    /// Per candidate: USD and chars over every file but `without`.
    fn totals(&self, without: Option<usize>) -> (Vec<f64>, Vec<u64>) {
        let kept = |f: &usize| Some(*f) != without;
        let cost = self
            .sorted
            .iter()
            .map(|v| v.iter().filter(|(_, f)| kept(f)).map(|(c, _)| c).sum())
            .collect();
        let chars = self
            .chars
            .iter()
            .map(|v| {
                v.iter()
                    .enumerate()
                    .filter(|(f, _)| kept(f))
                    .map(|(_, c)| c)
                    .sum()
            })
            .collect();
        (cost, chars)
    }
}

/// The ranking, how many lead it tied, and the tied group's choice.
fn rank(cost: &[f64], chars: &[u64], near: &[usize]) -> (Vec<usize>, usize, usize) {
    let mut ranked: Vec<usize> = (0..cost.len()).collect();
    ranked.sort_by(|&a, &b| {
        cost[a]
            .total_cmp(&cost[b])
            .then(chars[a].cmp(&chars[b]))
            .then(near[a].cmp(&near[b]))
            .then(a.cmp(&b))
    });
    let first = cost[ranked[0]];
    let tied = ranked
        .iter()
        .take_while(|&&c| cost[c] - first <= tolerance(first))
        .count();
    let choice = ranked[..tied]
        .iter()
        .copied()
        .min_by(|&a, &b| {
            near[a]
                .cmp(&near[b])
                .then(chars[a].cmp(&chars[b]))
                .then(cost[a].total_cmp(&cost[b]))
                .then(a.cmp(&b))
        })
        .unwrap_or(ranked[0]);
    (ranked, tied, choice)
}

/// Ranks, groups the ties, recommends and checks the recommendation held
/// out (`current`: the user's configuration's index; `pruning_on`: whether
/// their pi-condense prunes today).
pub fn choose(
    candidates: &[Candidate],
    outcomes: &[Vec<FileRun>],
    current: usize,
    pruning_on: bool,
) -> Choice {
    let files = outcomes.first().map_or(0, Vec::len);
    let near: Vec<usize> = candidates
        .iter()
        .map(|c| distance(c, &candidates[current]))
        .collect();
    let today = if pruning_on {
        current
    } else {
        candidates
            .iter()
            .position(|c| c.release == "none")
            .unwrap_or(current)
    };
    let prices = Prices::new(outcomes);
    let (cost, chars) = prices.totals(None);
    let (ranked, tied, recommended) = rank(&cost, &chars, &near);
    let front = (0..candidates.len())
        .map(|c| {
            !(0..candidates.len()).any(|d| {
                cost[d] <= cost[c]
                    && chars[d] <= chars[c]
                    && (cost[d] < cost[c] || chars[d] < chars[c])
            })
        })
        .collect();
    let held_out = (files >= 2).then(|| {
        let folds: Vec<Fold> = (0..files)
            .map(|f| {
                let (cost, chars) = prices.totals(Some(f));
                let (ranked, _, chosen) = rank(&cost, &chars, &near);
                let cheapest = cost[ranked[0]];
                Fold {
                    chosen,
                    cost_usd: outcomes[chosen][f].cost_usd,
                    today_usd: outcomes[today][f].cost_usd,
                    today_tied: cost[today] - cheapest <= tolerance(cheapest),
                }
            })
            .collect();
        let today_usd = sum(folds.iter().map(|f| f.today_usd).collect());
        let saving_usd = sum(folds.iter().map(|f| f.today_usd - f.cost_usd).collect());
        let undecided = folds.iter().any(|f| f.today_tied);
        HeldOut {
            folds,
            today_usd,
            saving_usd,
            keep: Keep::verdict(saving_usd, today_usd, undecided),
        }
    });
    let savings = (0..files)
        .map(|f| {
            let base = outcomes[today][f].cost_usd;
            fraction(base - outcomes[recommended][f].cost_usd, base)
        })
        .collect();
    Choice {
        cost,
        chars,
        ranked,
        tied,
        front,
        recommended,
        today,
        savings,
        held_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_value;

    fn block(text: &str) -> crate::json::Json {
        parse_value(text.as_bytes()).unwrap()
    }

    /// none, yours (2.4.3 defaults) and three variants of it.
    fn candidates() -> Vec<Candidate> {
        let base = block(r#"{"recoveryGraceTurns":3,"purgeErrors":{"enabled":true}}"#);
        let mut out = vec![super::super::grid::current("none", &base)];
        out[0].block = crate::json::Json::Null;
        for b in [
            r#"{"recoveryGraceTurns":3,"purgeErrors":{"enabled":true}}"#,
            r#"{"recoveryGraceTurns":1,"purgeErrors":{"enabled":true}}"#,
            r#"{"recoveryGraceTurns":1,"purgeErrors":{"enabled":false}}"#,
            r#"{"recoveryGraceTurns":3,"purgeErrors":{"enabled":false}}"#,
        ] {
            out.push(super::super::grid::current("2.4.3", &block(b)));
        }
        out
    }

    fn outcomes(costs: &[&[f64]]) -> Vec<Vec<FileRun>> {
        costs
            .iter()
            .map(|per_file| {
                per_file
                    .iter()
                    .map(|&c| FileRun {
                        cost_usd: c,
                        chars_sent: 1000,
                        ..FileRun::default()
                    })
                    .collect()
            })
            .collect()
    }

    /// Within a cent of the cheapest, the one that changes least from yours
    /// is recommended; a cent and a tenth more is not a tie.
    #[test]
    fn ties_within_a_cent_recommend_the_nearest() {
        let c = candidates();
        // none, yours, grace 1, grace 1 + purge off, purge off
        let o = outcomes(&[&[2.0], &[1.5], &[1.203], &[1.2], &[1.209]]);
        let ch = choose(&c, &o, 1, true);
        assert_eq!(ch.ranked, [3, 2, 4, 1, 0]);
        assert_eq!(ch.tied, 3);
        // grace 1 and purge off are one change each; grace 1 sends as many
        // chars, and is cheaper.
        assert_eq!(ch.recommended, 2);
        assert_eq!(ch.today, 1);
        let o = outcomes(&[&[2.0], &[1.5], &[1.2111], &[1.2], &[1.2101]]);
        let ch = choose(&c, &o, 1, true);
        assert_eq!((ch.tied, ch.recommended), (1, 3));
        // 0.1% of $100 is more than a cent: $100.09 ties with $100.
        let o = outcomes(&[&[200.0], &[150.0], &[100.09], &[100.0], &[100.2]]);
        let ch = choose(&c, &o, 1, true);
        assert_eq!((ch.tied, ch.recommended), (2, 2));
    }

    /// Pruning off today: savings are against no pruning.
    #[test]
    fn pruning_off_today_is_priced_as_none() {
        let c = candidates();
        let o = outcomes(&[&[2.0], &[1.5], &[1.6], &[1.7], &[1.8]]);
        let ch = choose(&c, &o, 1, false);
        assert_eq!((ch.today, ch.recommended), (0, 1));
        assert_eq!(ch.savings, [0.25]);
    }

    /// Leave one file out: each file priced with the choice on the others;
    /// any order of the files gives the same choice and checks.
    #[test]
    fn held_out_by_leaving_one_file_out_in_any_order() {
        let c = candidates();
        // Files: a, b, c. Grace 1 wins on a and b, purge off on c.
        let per_file: [[f64; 3]; 5] = [
            [3.0, 3.0, 3.0],
            [2.0, 2.0, 2.0],
            [1.0, 1.1, 1.9],
            [1.5, 1.5, 1.5],
            [1.9, 1.9, 1.0],
        ];
        let orders = [[0, 1, 2], [2, 0, 1], [1, 2, 0], [2, 1, 0]];
        let mut seen = Vec::new();
        for order in orders {
            let rows: Vec<Vec<f64>> = per_file
                .iter()
                .map(|r| order.iter().map(|&f| r[f]).collect())
                .collect();
            let refs: Vec<&[f64]> = rows.iter().map(Vec::as_slice).collect();
            let ch = choose(&c, &outcomes(&refs), 1, true);
            let h = ch.held_out.clone().unwrap();
            // Back in file order a, b, c.
            let mut folds = vec![None; 3];
            for (at, &f) in order.iter().enumerate() {
                folds[f] = Some(h.folds[at].clone());
            }
            seen.push((
                ch.ranked.clone(),
                ch.recommended,
                folds,
                h.saving_usd,
                h.keep,
            ));
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
        let (_, rec, folds, saving_usd, keep) = &seen[0];
        // Over all: grace 1 ($4.0) against purge off ($4.8).
        assert_eq!(*rec, 2);
        let chosen: Vec<usize> = folds.iter().map(|f| f.as_ref().unwrap().chosen).collect();
        // Without a: purge off ($2.9) beats grace 1 ($3.0). Without b: they
        // tie at $2.9, each one change from yours with as many chars: the
        // first in grid order, grace 1. Without c: grace 1.
        assert_eq!(chosen, [4, 2, 2]);
        // On a: purge off $1.9 (saves 0.1); on b: grace 1 $1.1 (0.9); on
        // c: grace 1 $1.9 (0.1).
        assert!((saving_usd - 1.1).abs() < 1e-12, "{saving_usd}");
        assert_eq!(*keep, None);
    }

    /// A cross-validated loss keeps yours as not above zero; a saving
    /// within a cent (or 0.1%), or a file whose others cannot tell yours
    /// from their cheapest, as too small to tell.
    #[test]
    fn held_out_keeps_yours_when_not_above_zero_or_too_small() {
        let c = candidates();
        // Grace 1 wins on a, purge off on b; each loses on the other.
        let o = outcomes(&[
            &[3.0, 3.0],
            &[1.0, 1.0],
            &[0.5, 1.6],
            &[2.0, 2.0],
            &[1.6, 0.5],
        ]);
        let h = choose(&c, &o, 1, true).held_out.unwrap();
        assert_eq!(h.keep, Some(Keep::NotAboveZero));
        assert!((h.saving_usd - -1.2).abs() < 1e-12);
        assert!(h.folds.iter().all(|f| !f.today_tied));
        // File b is too small to tell the configurations apart (all within
        // a cent): holding a out, yours is chosen there, and a's large
        // saving cannot be checked; grace 1, chosen on a, loses half a cent
        // on b. Not a loss: too small to tell.
        let o = outcomes(&[
            &[3.0, 0.03],
            &[1.0, 0.02],
            &[0.5, 0.025],
            &[2.0, 0.03],
            &[2.0, 0.03],
        ]);
        let ch = choose(&c, &o, 1, true);
        assert_eq!(ch.recommended, 2);
        let h = ch.held_out.unwrap();
        assert_eq!(
            h.folds
                .iter()
                .map(|f| (f.chosen, f.today_tied))
                .collect::<Vec<_>>(),
            [(1, true), (2, false)]
        );
        assert!(h.saving_usd < 0.0, "{}", h.saving_usd);
        assert_eq!(h.keep, Some(Keep::TooSmall));
        for (saving, today, undecided, keep) in [
            (-0.5, 3.0, false, Some(Keep::NotAboveZero)),
            (0.0, 3.0, false, Some(Keep::NotAboveZero)),
            (0.0, 3.0, true, Some(Keep::TooSmall)),
            (0.006, 3.0, false, Some(Keep::TooSmall)),
            (0.011, 3.0, false, None),
            (0.011, 3.0, true, None),
            (0.29, 300.0, false, Some(Keep::TooSmall)),
            (0.31, 300.0, false, None),
        ] {
            assert_eq!(
                Keep::verdict(saving, today, undecided),
                keep,
                "{saving} of {today}, {undecided}"
            );
        }
    }
}
