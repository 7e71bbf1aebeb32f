//! Tokens from characters, per session and model. Every assistant message
//! pi records carries its call's true prompt size (`input + cacheRead +
//! cacheWrite`); the replay measures the same prompt in characters under
//! the policy that was in force when the session was recorded. Where pi
//! wrote a system message, the preamble (tools and system) is measured too
//! and one factor fits: tokens = factor x chars. Without one, a line fits:
//! tokens = factor x message chars + preamble tokens. `charsPerToken`
//! fixes the factor instead, and a session whose recorded sizes do not
//! follow the prompt (synthetic numbers, a proxy in between) is reported
//! as such and priced at the default 4 chars a token.

use std::collections::VecDeque;

use super::request::Preamble;
use crate::hash::HashMap;

/// Characters per token when nothing better is known.
pub const DEFAULT_CHARS_PER_TOKEN: f64 = 4.0;

/// Median relative error above which recorded sizes are not trusted.
const MAX_FIT_ERROR: f64 = 0.25;

/// Characters per token a tokenizer gives, from dense code and non-Latin
/// text to long runs of spaces: a fit outside says the recorded usage does
/// not describe these contexts.
const PLAUSIBLE_CHARS_PER_TOKEN: (f64, f64) = (1.5, 12.0);

/// One call's sizes under the recorded policy.
#[derive(Debug, Clone, PartialEq)]
pub struct SizePoint {
    pub model_key: u64,
    pub message_chars: f64,
    pub preamble_chars: f64,
    /// The true prompt size pi recorded.
    pub recorded: Option<f64>,
}

/// One model's factor.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFactor {
    pub tokens_per_char: f64,
    /// Tokens of tools + system when inferred by the fit (else None: the
    /// preamble's own characters times the factor).
    pub preamble_tokens: Option<f64>,
    /// `systemMessage`, `inferred`, `fixed` or `default`.
    pub source: &'static str,
    pub calls: usize,
    /// Median of |recorded - predicted| / recorded over the calls.
    pub fit_error: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Calibration {
    pub by_model: HashMap<u64, ModelFactor>,
    /// Why the recorded sizes were not used, when they were not.
    pub unreconciled: Option<String>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

fn fixed(tpc: f64, source: &'static str, calls: usize) -> ModelFactor {
    ModelFactor {
        tokens_per_char: tpc,
        preamble_tokens: None,
        source,
        calls,
        fit_error: None,
    }
}

impl ModelFactor {
    /// A call's tools and system sized as this factor found them: the
    /// inferred preamble tokens replace the counted characters when the
    /// fit found them (the replay's pricer and pi's live gate both size
    /// the preamble here).
    pub fn sized(&self, mut preamble: Preamble) -> Preamble {
        if let Some(tokens) = self.preamble_tokens {
            preamble.tools_chars = 0;
            preamble.system_chars = (tokens / self.tokens_per_char).round() as u64;
        }
        preamble
    }
}

impl Calibration {
    /// The factor of `model_key` (the default when unknown).
    pub fn factor(&self, model_key: u64) -> ModelFactor {
        self.by_model
            .get(&model_key)
            .cloned()
            .unwrap_or_else(|| fixed(1.0 / DEFAULT_CHARS_PER_TOKEN, "default", 0))
    }

    /// Fits each model's factor from `points`; `chars_per_token` fixes it.
    pub fn fit(points: &[SizePoint], chars_per_token: Option<f64>) -> Calibration {
        let mut groups: HashMap<u64, Vec<&SizePoint>> = HashMap::default();
        for p in points {
            groups.entry(p.model_key).or_default().push(p);
        }
        let mut out = Calibration::default();
        for (key, group) in groups {
            let factor = match chars_per_token {
                Some(c) => fixed(1.0 / c, "fixed", group.len()),
                None => fit_model(&group),
            };
            out.by_model.insert(key, factor);
        }
        if chars_per_token.is_none() {
            let bad = out
                .by_model
                .values()
                .find(|f| f.fit_error.is_some_and(|e| e > MAX_FIT_ERROR));
            let implausible = out.by_model.values().find(|f| {
                let c = 1.0 / f.tokens_per_char;
                f.source != "default"
                    && !(PLAUSIBLE_CHARS_PER_TOKEN.0..=PLAUSIBLE_CHARS_PER_TOKEN.1).contains(&c)
            });
            if let Some(f) = bad {
                out.unreconciled = Some(format!(
                    "the recorded prompt sizes do not follow the context (median error {:.0}%): synthetic usage or a proxy in between",
                    f.fit_error.unwrap_or(0.0) * 100.0
                ));
            } else if let Some(f) = implausible {
                out.unreconciled = Some(format!(
                    "the recorded prompt sizes fit only at {:.0} chars a token, outside what tokenizers give ({}-{}): the recorded usage does not describe these contexts (another client's requests, or contexts pi did not send)",
                    1.0 / f.tokens_per_char,
                    PLAUSIBLE_CHARS_PER_TOKEN.0,
                    PLAUSIBLE_CHARS_PER_TOKEN.1
                ));
            }
            if out.unreconciled.is_some() {
                for f in out.by_model.values_mut() {
                    f.tokens_per_char = 1.0 / DEFAULT_CHARS_PER_TOKEN;
                    f.preamble_tokens = None;
                    f.source = "default";
                }
            }
        }
        out
    }
}

/// Calls whose recorded usage a [`Rolling`] calibration fits (the latest).
const ROLLING_CALLS: usize = 32;
/// Past this many points, a [`Rolling`] calibration is refitted every this
/// many calls.
const REFIT_EVERY: usize = 8;

/// Tokens per character as a conversation goes, fitted on the answers
/// before each call only: the one calibration the gate decides on, in pi
/// (`gate/live.rs`, with the usage of each answer pi hands it) and in the
/// replay's gated walks (`replay/pricer.rs`, with the usage the file
/// recorded), so both decide alike at every call. The replay bills with
/// the whole file's fit ([`Calibration::fit`]), which only hindsight has.
#[derive(Debug, Clone)]
pub struct Rolling {
    model_key: u64,
    points: VecDeque<SizePoint>,
    /// Points observed since the model was set.
    observed: usize,
    factor: ModelFactor,
}

impl Default for Rolling {
    fn default() -> Self {
        Rolling {
            model_key: 0,
            points: VecDeque::new(),
            observed: 0,
            factor: fixed(1.0 / DEFAULT_CHARS_PER_TOKEN, "default", 0),
        }
    }
}

impl Rolling {
    /// The factor the answers so far give (the default before any).
    pub fn factor(&self) -> &ModelFactor {
        &self.factor
    }

    /// Another model: its answers so far are none.
    pub fn switch_to(&mut self, model_key: u64) {
        *self = Rolling {
            model_key,
            ..Rolling::default()
        };
    }

    /// The model whose answers the points are.
    pub fn model_key(&self) -> u64 {
        self.model_key
    }

    /// The answer to a request of `message_chars` and `preamble_chars`
    /// recorded `tokens` of prompt. Each point moves the factor less as
    /// they add up: refitted at every answer while there are few, then at
    /// every eighth, on the latest 32.
    pub fn observe(&mut self, message_chars: f64, preamble_chars: f64, tokens: f64) {
        if tokens <= 0.0 {
            return;
        }
        if self.points.len() == ROLLING_CALLS {
            self.points.pop_front();
        }
        self.points.push_back(SizePoint {
            model_key: self.model_key,
            message_chars,
            preamble_chars,
            recorded: Some(tokens),
        });
        self.observed += 1;
        if self.observed < REFIT_EVERY || self.observed.is_multiple_of(REFIT_EVERY) {
            let points = self.points.make_contiguous();
            self.factor = Calibration::fit(points, None).factor(self.model_key);
        }
    }
}

fn fit_model(group: &[&SizePoint]) -> ModelFactor {
    let known: Vec<&&SizePoint> = group
        .iter()
        .filter(|p| p.recorded.is_some_and(|r| r > 0.0))
        .collect();
    if known.is_empty() {
        return fixed(1.0 / DEFAULT_CHARS_PER_TOKEN, "default", group.len());
    }
    let y = |p: &SizePoint| p.recorded.unwrap_or(0.0);
    let with_preamble = known.iter().all(|p| p.preamble_chars > 0.0);
    let (a, b, source) = if with_preamble {
        let sy: f64 = known.iter().map(|p| y(p)).sum();
        let sx: f64 = known
            .iter()
            .map(|p| p.message_chars + p.preamble_chars)
            .sum();
        (sy / sx, None, "systemMessage")
    } else {
        // Least squares y = a x + b, b >= 0.
        let n = known.len() as f64;
        let mx = known.iter().map(|p| p.message_chars).sum::<f64>() / n;
        let my = known.iter().map(|p| y(p)).sum::<f64>() / n;
        let sxx: f64 = known.iter().map(|p| (p.message_chars - mx).powi(2)).sum();
        let sxy: f64 = known
            .iter()
            .map(|p| (p.message_chars - mx) * (y(p) - my))
            .sum();
        let mut a = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        let mut b = my - a * mx;
        if b < 0.0 || a <= 0.0 {
            b = b.max(0.0);
            let sx: f64 = known.iter().map(|p| p.message_chars).sum();
            a = (known.iter().map(|p| y(p)).sum::<f64>() - b * n) / sx.max(1.0);
        }
        (a, Some(b), "inferred")
    };
    let predicted = |p: &SizePoint| match b {
        Some(b) => a * p.message_chars + b,
        None => a * (p.message_chars + p.preamble_chars),
    };
    let fit_error = median(
        known
            .iter()
            .map(|p| (y(p) - predicted(p)).abs() / y(p))
            .collect(),
    );
    if !(a.is_finite() && a > 0.0) {
        return ModelFactor {
            fit_error: Some(f64::INFINITY),
            ..fixed(1.0 / DEFAULT_CHARS_PER_TOKEN, "default", group.len())
        };
    }
    ModelFactor {
        tokens_per_char: a,
        preamble_tokens: b,
        source,
        calls: group.len(),
        fit_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: f64, p: f64, y: f64) -> SizePoint {
        SizePoint {
            model_key: 1,
            message_chars: x,
            preamble_chars: p,
            recorded: Some(y),
        }
    }

    #[test]
    fn fits_with_and_without_a_system_message() {
        let c = Calibration::fit(
            &[point(1000.0, 3000.0, 1200.0), point(5000.0, 3000.0, 2400.0)],
            None,
        );
        let f = c.factor(1);
        assert!((f.tokens_per_char - 0.3).abs() < 1e-9);
        assert_eq!(f.source, "systemMessage");
        let c = Calibration::fit(
            &[point(1000.0, 0.0, 1250.0), point(5000.0, 0.0, 2250.0)],
            None,
        );
        let f = c.factor(1);
        assert!((f.tokens_per_char - 0.25).abs() < 1e-9);
        assert!((f.preamble_tokens.unwrap() - 1000.0).abs() < 1e-6);
        assert!(c.unreconciled.is_none());
        let c = Calibration::fit(
            &[
                point(1000.0, 0.0, 50.0),
                point(5000.0, 0.0, 9000.0),
                point(3000.0, 0.0, 100.0),
            ],
            None,
        );
        assert!(c.unreconciled.is_some());
        // A fit at 100 chars a token describes other contexts.
        let c = Calibration::fit(
            &[point(100_000.0, 0.0, 1000.0), point(500_000.0, 0.0, 5000.0)],
            None,
        );
        assert!(c
            .unreconciled
            .as_deref()
            .is_some_and(|r| r.contains("100 chars a token")));
        assert_eq!(c.factor(1).tokens_per_char, 0.25);
        assert_eq!(
            Calibration::fit(&[point(1.0, 0.0, 1.0)], Some(2.0))
                .factor(1)
                .tokens_per_char,
            0.5
        );
    }

    /// The gate's calibration fits the answers so far: at every answer
    /// while there are fewer than eight, then at every eighth, on the
    /// latest 32; another model starts afresh.
    #[test]
    fn rolling_fits_the_answers_so_far() {
        let mut r = Rolling::default();
        assert_eq!(r.factor().tokens_per_char, 0.25);
        r.switch_to(7);
        r.observe(1000.0, 1000.0, 0.0);
        assert_eq!(r.factor().source, "default", "no usage, no point");
        for n in 1..=7 {
            r.observe(1000.0 * f64::from(n), 1000.0, 500.0 * f64::from(n + 1));
            assert!((r.factor().tokens_per_char - 0.5).abs() < 1e-12, "{n}");
        }
        // The eighth refits; the ninth waits for the sixteenth.
        r.observe(1000.0, 1000.0, 1000.0 * 2.0 / 3.0 * 3.0);
        let eighth = r.factor().tokens_per_char;
        assert!(eighth > 0.5);
        r.observe(1000.0, 1000.0, 5000.0);
        assert_eq!(r.factor().tokens_per_char, eighth);
        assert_eq!(r.model_key(), 7);
        r.switch_to(8);
        assert_eq!(r.factor().tokens_per_char, 0.25);
    }
}
