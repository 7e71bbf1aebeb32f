//! What the recommendation changes from yours, in pi's settings (issue
//! 46): the settings that do not matter on these sessions, what each
//! change saves, and the block to paste.
//!
//! - **What each change saves**: a walk from today's configuration to the
//!   recommendation, one part at a time in [`PARTS`] order (pi-condense's
//!   master switch first when it flips), each step a configuration the tune
//!   already priced. A part whose step lands on no priced configuration
//!   (yours lies outside the grid) goes with the next one. The steps add up
//!   to the recommendation's saving over today.
//! - **Does not matter**: a part such that every configuration differing
//!   from the recommendation in that part alone ties with it.
//! - **The block**: the `contextPrune` keys whose value differs from yours
//!   (each a whole section: pi-condense merges the block over its defaults
//!   one key deep), `enabled: true` when pruning is off today,
//!   `condenseNative.gate` when the gate is part of it, and the release
//!   when it is not yours.

use super::choose::Choice;
use super::grid::block_distance;
use super::Candidate;
use crate::gate::rule::GateSettings;
use crate::json::Json;

/// The parts of a configuration the grid varies, in the order a walk from
/// yours changes them.
pub const PARTS: [&str; 6] = [
    "release",
    "thinkingStrip",
    "purgeErrors",
    "chainCompression",
    "recoveryGraceTurns",
    "gate",
];

/// The part that is pi-condense's master switch, `contextPrune.enabled`.
pub const SWITCH: &str = "enabled";

/// One step of the walk: the parts it changes, the priced configuration
/// it lands on, and what it saves over the step before (USD, all files).
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeStep {
    pub parts: Vec<&'static str>,
    pub to: usize,
    pub saving_usd: f64,
}

/// What to put in pi's settings.json for the recommendation.
#[derive(Debug, Clone, PartialEq)]
pub struct Paste {
    /// The `contextPrune` keys to set: those that change, `enabled` first
    /// when it switches.
    pub context_prune: Vec<(Box<[u8]>, Json)>,
    /// `condenseNative.gate` (turned on), when the gate is part of it.
    pub gate: Option<GateSettings>,
    /// The pi-condense release to run, when it is not yours.
    pub release: Option<&'static str>,
    /// Some(true): it turns pruning on; Some(false): off.
    pub switches: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Explained {
    /// Parts that do not matter on these sessions, in [`PARTS`] order.
    pub free: Vec<&'static str>,
    pub steps: Vec<ChangeStep>,
    /// None: nothing to change.
    pub paste: Option<Paste>,
}

/// A configuration as the walk holds it.
#[derive(Clone)]
struct WalkedConfig {
    release: &'static str,
    block: Json,
    gated: bool,
}

fn same_value(a: Option<&Json>, b: Option<&Json>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => block_distance(x, y) == 0,
        _ => false,
    }
}

impl WalkedConfig {
    fn of(c: &Candidate) -> WalkedConfig {
        WalkedConfig {
            release: c.release,
            block: c.block.clone(),
            gated: c.gate.is_some(),
        }
    }

    fn same(&self, other: &WalkedConfig, part: &str) -> bool {
        match part {
            "release" => self.release == other.release,
            "gate" => self.gated == other.gated,
            key => same_value(self.block.get(key), other.block.get(key)),
        }
    }

    /// Takes `part` from `target`; the release brings its thinking strip
    /// along (2.9.1 has none).
    fn take(&mut self, target: &WalkedConfig, part: &str) {
        match part {
            "release" => {
                self.release = target.release;
                self.take(target, "thinkingStrip");
            }
            "gate" => self.gated = target.gated,
            key => {
                self.block = match target.block.get(key) {
                    Some(v) => self.block.with(key, v.clone()),
                    None => self.block.without(key),
                }
            }
        }
    }

    fn is(&self, c: &Candidate) -> bool {
        c.release == self.release
            && c.gate.is_some() == self.gated
            && block_distance(&c.block, &self.block) == 0
    }
}

/// The walk from today to the recommendation.
fn steps(candidates: &[Candidate], ch: &Choice, current: usize) -> Vec<ChangeStep> {
    let mut out = Vec::new();
    let mut from = ch.today;
    let mut step = |parts: Vec<&'static str>, to: usize, from: &mut usize| {
        out.push(ChangeStep {
            parts,
            to,
            saving_usd: ch.cost[*from] - ch.cost[to],
        });
        *from = to;
    };
    if candidates[ch.recommended].release == "none" {
        if ch.today != ch.recommended {
            step(vec![SWITCH], ch.recommended, &mut from);
        }
        return out;
    }
    if ch.today != current {
        step(vec![SWITCH], current, &mut from);
    }
    let target = WalkedConfig::of(&candidates[ch.recommended]);
    let mut state = WalkedConfig::of(&candidates[current]);
    let mut pending = Vec::new();
    for part in PARTS {
        if state.same(&target, part) {
            continue;
        }
        state.take(&target, part);
        pending.push(part);
        if let Some(to) = candidates.iter().position(|c| state.is(c)) {
            step(std::mem::take(&mut pending), to, &mut from);
        }
    }
    if !pending.is_empty() {
        step(pending, ch.recommended, &mut from);
    }
    out
}

/// The parts no single change of which leaves the tie.
fn free(candidates: &[Candidate], ch: &Choice) -> Vec<&'static str> {
    let rec = WalkedConfig::of(&candidates[ch.recommended]);
    if rec.release == "none" {
        return Vec::new();
    }
    let tied = &ch.ranked[..ch.tied];
    PARTS
        .into_iter()
        .filter(|&part| {
            let mut neighbours = candidates.iter().enumerate().filter(|(i, c)| {
                let other = WalkedConfig::of(c);
                *i != ch.recommended
                    && c.release != "none"
                    && !other.same(&rec, part)
                    && PARTS.iter().all(|&q| {
                        q == part
                            || (part == "release" && q == "thinkingStrip")
                            || other.same(&rec, q)
                    })
            });
            let mut any = false;
            let all = neighbours.all(|(i, _)| {
                any = true;
                tied.contains(&i)
            });
            any && all
        })
        .collect()
}

/// What to paste for the recommendation (None: nothing changes).
fn paste(candidates: &[Candidate], ch: &Choice, current: usize, pruning_on: bool) -> Option<Paste> {
    let rec = &candidates[ch.recommended];
    let yours = &candidates[current];
    let switch = |on: bool| -> (Box<[u8]>, Json) { (SWITCH.as_bytes().into(), Json::Bool(on)) };
    if rec.release == "none" {
        return pruning_on.then(|| Paste {
            context_prune: vec![switch(false)],
            gate: None,
            release: None,
            switches: Some(false),
        });
    }
    let mut keys = Vec::new();
    if !pruning_on {
        keys.push(switch(true));
    }
    if let Json::Obj(entries) = &rec.block {
        for (k, v) in entries {
            let name = String::from_utf8_lossy(k);
            if name != SWITCH && !same_value(yours.block.get(&name), Some(v)) {
                keys.push((k.clone(), v.clone()));
            }
        }
    }
    let release = (rec.release != yours.release).then_some(rec.release);
    if keys.is_empty() && rec.gate.is_none() && release.is_none() {
        return None;
    }
    Some(Paste {
        context_prune: keys,
        gate: rec.gate,
        release,
        switches: (!pruning_on).then_some(true),
    })
}

/// Explains the recommendation of `ch` (`current`: yours; `pruning_on`:
/// whether your pi-condense prunes today).
pub fn explain(
    candidates: &[Candidate],
    ch: &Choice,
    current: usize,
    pruning_on: bool,
) -> Explained {
    Explained {
        free: free(candidates, ch),
        steps: steps(candidates, ch, current),
        paste: paste(candidates, ch, current, pruning_on),
    }
}

#[cfg(test)]
mod tests {
    use super::super::choose::choose;
    use super::super::grid::{current, grid};
    use super::super::FileRun;
    use super::*;
    use crate::json::parse_value;

    /// Prices every candidate of the real grid by a rule: what each part's
    /// value adds.
    fn priced(candidates: &[Candidate], rule: impl Fn(&Candidate) -> f64) -> Vec<Vec<FileRun>> {
        candidates
            .iter()
            .map(|c| {
                vec![FileRun {
                    cost_usd: rule(c),
                    chars_sent: 1000,
                    ..FileRun::default()
                }]
            })
            .collect()
    }

    fn num(c: &Candidate, path: &[&str]) -> Option<f64> {
        let mut v = &c.block;
        for p in path {
            v = v.get(p)?;
        }
        match v {
            Json::Num(n) => Some(*n),
            Json::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    /// On sessions where only the thinking strip and the gate matter: the
    /// purge and the grace are said not to matter, the block sets the strip
    /// (and `enabled` when pruning is off), the gate rides along, and the
    /// steps add up to the saving.
    #[test]
    fn only_what_matters_is_pasted_and_the_steps_add_up() {
        let base = crate::replay::Settings::new(None).unwrap().context_prune();
        let mut candidates = grid(&base, Some(GateSettings::default()));
        let yours = current("2.4.3", &base);
        let at = candidates
            .iter()
            .position(|c| super::super::grid::same(c, &yours))
            .unwrap_or_else(|| {
                candidates.push(yours);
                candidates.len() - 1
            });
        let rule = |c: &Candidate| -> f64 {
            if c.release == "none" {
                return 10.0;
            }
            let strip = match num(c, &["thinkingStrip", "enabled"]) {
                Some(1.0) => match num(c, &["thinkingStrip", "keepLastTurns"]) {
                    Some(8.0) => 1.0,
                    _ => 2.0,
                },
                _ => 3.0,
            };
            let release = if c.release == "2.9.1" { 1.5 } else { 0.0 };
            let gate = if c.gate.is_some() { 0.0 } else { 0.5 };
            5.0 + strip + release + gate
        };
        let o = priced(&candidates, rule);
        for pruning_on in [true, false] {
            let ch = choose(&candidates, &o, at, pruning_on);
            let e = explain(&candidates, &ch, at, pruning_on);
            let rec = &candidates[ch.recommended];
            assert_eq!((rec.release, rec.gate.is_some()), ("2.4.3", true));
            assert_eq!(num(rec, &["thinkingStrip", "keepLastTurns"]), Some(8.0));
            // Yours' purge, chains and grace: 24 configurations tie.
            assert_eq!(ch.tied, 24);
            assert_eq!(
                e.free,
                ["purgeErrors", "chainCompression", "recoveryGraceTurns"]
            );
            let p = e.paste.clone().unwrap();
            let keys: Vec<String> = p
                .context_prune
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}={}",
                        String::from_utf8_lossy(k),
                        String::from_utf8(v.to_json()).unwrap()
                    )
                })
                .collect();
            let strip = r#"thinkingStrip={"enabled":true,"keepLastTurns":8}"#.to_string();
            if pruning_on {
                assert_eq!(keys, [strip]);
                assert_eq!(p.switches, None);
            } else {
                assert_eq!(keys, ["enabled=true".to_string(), strip]);
                assert_eq!(p.switches, Some(true));
            }
            assert_eq!((p.gate, p.release), (Some(GateSettings::default()), None));
            let parts: Vec<Vec<&str>> = e.steps.iter().map(|s| s.parts.clone()).collect();
            let mut want = vec![vec!["thinkingStrip"], vec!["gate"]];
            if !pruning_on {
                want.insert(0, vec![SWITCH]);
            }
            assert_eq!(parts, want);
            let total: f64 = e.steps.iter().map(|s| s.saving_usd).sum();
            assert!((total - (ch.cost[ch.today] - ch.cost[ch.recommended])).abs() < 1e-12);
            assert_eq!(e.steps.last().unwrap().to, ch.recommended);
            // The strip saves $1 (keep 16 -> keep 8), the gate $0.5.
            let savings: Vec<f64> = e.steps.iter().map(|s| s.saving_usd).collect();
            assert_eq!(&savings[savings.len() - 2..], [1.0, 0.5]);
        }
    }

    /// Yours outside the grid (purge cooldown 3): the strip's step lands on
    /// no priced configuration and goes with the purge's.
    #[test]
    fn a_part_outside_the_grid_goes_with_the_next() {
        let mine = parse_value(
            br#"{"contextPrune":{"enabled":true,"purgeErrors":{"enabled":true,"cooldownTurns":3,"minArgChars":700}}}"#,
        )
        .unwrap();
        let base = crate::replay::Settings::new(Some(mine))
            .unwrap()
            .context_prune();
        let mut candidates = grid(&base, None);
        candidates.push(current("2.4.3", &base));
        let at = candidates.len() - 1;
        let rule = |c: &Candidate| -> f64 {
            if c.release == "none" {
                return 10.0;
            }
            let strip = if num(c, &["thinkingStrip", "keepLastTurns"]) == Some(8.0) {
                1.0
            } else {
                2.0
            };
            let purge = if num(c, &["purgeErrors", "enabled"]) == Some(0.0) {
                0.0
            } else {
                0.25
            };
            5.0 + strip + purge + if c.release == "2.9.1" { 1.0 } else { 0.0 }
        };
        let o = priced(&candidates, rule);
        let ch = choose(&candidates, &o, at, true);
        let e = explain(&candidates, &ch, at, true);
        let parts: Vec<Vec<&str>> = e.steps.iter().map(|s| s.parts.clone()).collect();
        assert_eq!(parts, [vec!["thinkingStrip", "purgeErrors"]]);
        assert!((e.steps[0].saving_usd - 1.25).abs() < 1e-12);
        assert_eq!(e.paste.unwrap().switches, None);
    }

    /// No pruning cheapest: with pruning on today the block turns it off;
    /// with it off, nothing changes.
    #[test]
    fn no_pruning_cheapest() {
        let base = crate::replay::Settings::new(None).unwrap().context_prune();
        let candidates = grid(&base, None);
        let at = candidates
            .iter()
            .position(|c| super::super::grid::same(c, &current("2.4.3", &base)))
            .unwrap();
        let o = priced(&candidates, |c| if c.release == "none" { 1.0 } else { 2.0 });
        let on = choose(&candidates, &o, at, true);
        let e = explain(&candidates, &on, at, true);
        assert_eq!(e.paste.unwrap().switches, Some(false));
        assert_eq!(e.steps.len(), 1);
        assert_eq!(
            (e.steps[0].parts.clone(), e.steps[0].saving_usd),
            (vec![SWITCH], 1.0)
        );
        let off = choose(&candidates, &o, at, false);
        let e = explain(&candidates, &off, at, false);
        assert_eq!((e.paste, e.steps), (None, vec![]));
    }
}
