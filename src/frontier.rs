//! The flush-gated thinking boundary (SPEC 6): the rule a flush applies,
//! and the frontier a render reports (the boundary in force, and what a
//! flush would store now). 2.9.1 has no boundary. The JS oracle's copy of
//! the rule is `computeThinkingBoundary` in js/pure/v2.4.js.

use crate::config::Config;
use crate::dialect::Dialect;
use crate::record::{Log, Role, Scalar};

/// The frontier snapshot of a render.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Frontier {
    /// The boundary the render used.
    pub thinking_strip_boundary_timestamp: Option<f64>,
    /// What a flush would store now (None when the thinking strip is off).
    pub next_thinking_strip_boundary_timestamp: Option<f64>,
}

/// The numeric timestamps of the assistants in `log`, in order.
pub fn assistant_timestamps(log: &Log) -> Vec<f64> {
    log.records
        .iter()
        .filter(|r| r.role == Role::Assistant)
        .filter_map(|r| match r.timestamp {
            Scalar::Num(n) => Some(n),
            _ => None,
        })
        .collect()
}

pub fn frontier_of(
    log: &Log,
    config: &Config,
    boundary: Option<f64>,
    dialect: Dialect,
) -> Frontier {
    if dialect == Dialect::V2_9 {
        return Frontier::default();
    }
    let next = config.thinking.as_ref().and_then(|t| {
        compute_thinking_boundary(&assistant_timestamps(log), t.keep_last_turns, boundary)
            .filter(|b| !b.is_nan())
    });
    Frontier {
        thinking_strip_boundary_timestamp: boundary,
        next_thinking_strip_boundary_timestamp: next,
    }
}

/// `Math.max` of two numbers: NaN if either is NaN.
pub fn js_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// `computeThinkingBoundary(assistantTimestamps, keepLastTurns, prev?)`.
/// None stands for `undefined`.
pub fn compute_thinking_boundary(
    timestamps: &[f64],
    keep_last_turns: f64,
    prev: Option<f64>,
) -> Option<f64> {
    let k = js_max(1.0, keep_last_turns);
    let n = timestamps.len() as f64;
    if n <= k {
        return prev;
    }
    let at = n - k;
    let candidate = (at.fract() == 0.0 && at >= 0.0).then(|| timestamps[at as usize]);
    match (prev, candidate) {
        (Some(p), Some(c)) => Some(js_max(p, c)),
        (Some(_), None) => Some(f64::NAN),
        (None, c) => c,
    }
}

#[cfg(test)]
mod tests {
    use super::compute_thinking_boundary as b;

    #[test]
    fn boundary_cases() {
        let ts = [10.0, 20.0, 30.0, 40.0];
        assert_eq!(b(&ts, 2.0, None), Some(30.0));
        assert_eq!(b(&ts, 4.0, None), None);
        assert_eq!(b(&ts, 4.0, Some(5.0)), Some(5.0));
        assert_eq!(b(&ts, 0.0, None), Some(40.0));
        assert_eq!(b(&ts, -3.0, Some(50.0)), Some(50.0));
        assert_eq!(b(&ts, 1.0, Some(35.0)), Some(40.0));
        assert_eq!(b(&[], 1.0, None), None);
    }
}
