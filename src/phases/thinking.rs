//! Phase 4: thinking blocks of older assistant turns are removed, behind the
//! persisted boundary or, without one, all but the last K turns.

use super::{has_role, without_thinking, Stats};
use crate::config::ThinkingConfig;
use crate::error::Result;
use crate::frontier::js_max;
use crate::value::Val;

/// Which assistants lose their thinking.
enum Rule {
    /// `timestamp < B` with JS coercion; a missing timestamp never strips.
    Before(f64),
    /// Those before this array position; None strips every one (a
    /// non-integer K finds no K-th assistant, as in the reference).
    BeforePosition(Option<usize>),
}

impl Rule {
    fn strips(&self, i: usize, m: &Val<'_>) -> bool {
        match *self {
            Rule::Before(b) => m.view().get("timestamp").is_some_and(|t| t.to_number() < b),
            Rule::BeforePosition(cutoff) => cutoff.is_none_or(|c| i < c),
        }
    }
}

pub fn run(
    msgs: &mut [Val<'_>],
    cfg: &ThinkingConfig,
    boundary: Option<f64>,
    stats: &mut Stats,
) -> Result<bool> {
    let assistants: Vec<usize> = (0..msgs.len())
        .filter(|&i| has_role(msgs[i].view(), "assistant"))
        .collect();
    let rule = match boundary {
        Some(b) => Rule::Before(b),
        None => {
            let k = js_max(1.0, cfg.keep_last_turns);
            let n = assistants.len() as f64;
            if n <= k {
                return Ok(false);
            }
            // The K-th assistant from the end.
            let at = n - k;
            Rule::BeforePosition((at.fract() == 0.0 && at >= 0.0).then(|| assistants[at as usize]))
        }
    };
    let mut changed = false;
    for &i in &assistants {
        if !rule.strips(i, &msgs[i]) {
            continue;
        }
        if let Some(stripped) = without_thinking(&msgs[i], i)? {
            msgs[i] = stripped;
            stats.thinking_stripped += 1;
            changed = true;
        }
    }
    Ok(changed)
}
