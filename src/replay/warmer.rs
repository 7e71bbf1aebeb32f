//! pi's cache warmer, as pi 1.6.0 runs it after each request of a
//! session (pi-coding-agent `core/cache-warmer.js`, its numbers pi-ai's
//! `cache-warming.js`): shortly before the cache entry a request wrote
//! expires, pi sends that request again with a one-token output cap, as
//! long as the conversation still extends it and a warm is expected to
//! pay. Each policy sends its own context, so each warms its own prefix
//! at its own cost: the replay simulates the warmer per policy
//! (`pricer.rs` sends the warms through the policy's cache) instead of
//! charging every policy the warms the file recorded.
//!
//! The rules, each with its place in pi:
//! - mode (`cacheWarming` in pi's settings, default `idle`): `off` never
//!   warms; `streaming` warms while the agent runs and stops when its run
//!   settles; `idle` goes on after the run settles, with a shorter horizon
//!   and a lower chance that the user comes back in time.
//! - a request is warmed only when it can be sent again as it was: not a
//!   thinking request to Anthropic's API on a model without adaptive
//!   thinking (`isCacheWarmingReplayable`), and only when the model's
//!   catalog entry gives the lifetime of its retention
//!   (`getPromptCacheTtlMs`).
//! - when: `max(1, floor(min(0.9 ttl, ttl - 10 s)))` after the request,
//!   then as long again after each warm (`getCacheWarmingDelayMs`); never
//!   past 60 minutes after the request while the agent runs, 30 once it
//!   has settled.
//! - whether: expected savings `p x (miss - hit) - warm >= $0.05`, the
//!   prompt priced as a cache read (`hit`), a write (`miss`) and a read
//!   plus one output token (`warm`); `p` is 1 while the agent runs and
//!   0.15 once it has settled (`evaluateCacheWarming`).
//! - it stops when the conversation stops extending the request: the next
//!   request (which starts its own warming), another model, a compaction,
//!   a branch (`cacheContextIsCurrent`).
//!
//! A warm's time here is when pi's timer fires; pi records its entry when
//! the answer arrives (a second or two later), and may fire late by up to
//! half the margin before expiry ([`SLACK_MS`]).

use crate::cost::catalog::ModelEntry;

/// pi's `cacheWarming` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WarmingMode {
    Off,
    Streaming,
    #[default]
    Idle,
}

impl WarmingMode {
    pub fn name(self) -> &'static str {
        match self {
            WarmingMode::Off => "off",
            WarmingMode::Streaming => "streaming",
            WarmingMode::Idle => "idle",
        }
    }
}

/// Streaming warming never goes on past this long after the request.
const MAX_AGE_MS: f64 = 60.0 * 60_000.0;
/// Idle warming's shorter horizon.
const MAX_IDLE_AGE_MS: f64 = 30.0 * 60_000.0;
/// A warm is sent only when expected to save at least this many dollars.
const MINIMUM_EXPECTED_SAVINGS: f64 = 0.05;
/// The chance pi gives a real request arriving while the agent sits idle.
const IDLE_CONTINUATION_PROBABILITY: f64 = 0.15;
/// How late after its planned time a warm of a 5-minute entry may still
/// be sent (half the 30 s margin before expiry): the times the replay
/// gives a warm and those pi recorded agree within it, plus the warm's
/// own answer time.
pub const SLACK_MS: f64 = 15_000.0;

/// When pi sends a warm after the request (or the warm) before it, for a
/// cache entry living `ttl_ms`; None below ten seconds.
pub fn delay_ms(ttl_ms: f64) -> Option<f64> {
    if ttl_ms <= 10_000.0 {
        return None;
    }
    Some((ttl_ms * 0.9).min(ttl_ms - 10_000.0).floor().max(1.0))
}

/// The request a warming run keeps warm, and what ends it.
#[derive(Debug, Clone, Copy)]
pub struct WarmRun<'c> {
    /// When the request went out (ms).
    pub start: f64,
    /// When the conversation stopped extending it: the next request, or a
    /// model change, compaction or branch before it.
    pub until: f64,
    /// When the agent's run settled, if it did before `until`.
    pub settled: Option<f64>,
    /// The request's prompt tokens (what pi reads of its answer's usage).
    pub prompt_tokens: f64,
    /// Its model's catalog entry (None: pi's catalog would have to know
    /// the model; the replay does not warm it).
    pub entry: Option<&'c ModelEntry>,
    /// pi's long cache retention.
    pub long: bool,
    /// The request thinks (pi-ai sends `reasoning`).
    pub reasoning: bool,
    /// The request goes to Anthropic's Messages API.
    pub anthropic_messages: bool,
    pub mode: WarmingMode,
}

impl WarmRun<'_> {
    /// The times pi's warmer would send a warm (ms), in order.
    pub fn warms(&self) -> Vec<f64> {
        let mut out = Vec::new();
        let Some(entry) = self.entry else {
            return out;
        };
        if self.mode == WarmingMode::Off
            || (self.reasoning && self.anthropic_messages && !entry.adaptive_thinking)
        {
            return out;
        }
        let Some(delay) = entry.lifetime_ms[usize::from(self.long)].and_then(delay_ms) else {
            return out;
        };
        let mut idle = false;
        let mut next = self.start + delay;
        loop {
            // The agent settles before the warm is due.
            if let Some(s) = self
                .settled
                .filter(|&s| !idle && s <= next && s < self.until)
            {
                if self.mode == WarmingMode::Streaming {
                    break;
                }
                idle = true;
                if s >= self.start + MAX_IDLE_AGE_MS {
                    break;
                }
            }
            let horizon = if idle { MAX_IDLE_AGE_MS } else { MAX_AGE_MS };
            if next > self.start + horizon || next >= self.until {
                break;
            }
            if expected_savings(entry, self.prompt_tokens, idle) < MINIMUM_EXPECTED_SAVINGS {
                break;
            }
            out.push(next);
            next += delay;
        }
        out
    }
}

/// pi's expected savings of one warm of a `prompt`-token request
/// (`evaluateCacheWarming`): the cache miss it avoids, weighed by the
/// chance a request comes in time, less the warm's own price.
fn expected_savings(entry: &ModelEntry, prompt: f64, idle: bool) -> f64 {
    if prompt <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let r = entry.rates_for(prompt);
    let per = |rate: f64, tokens: f64| rate * tokens / 1e6;
    let hit = per(r.cache_read, prompt);
    let miss = if r.cache_write > 0.0 {
        per(r.cache_write, prompt)
    } else {
        per(r.input, prompt)
    };
    if hit <= 0.0 && miss <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let warm = hit + per(r.output, 1.0);
    let p = if idle {
        IDLE_CONTINUATION_PROBABILITY
    } else {
        1.0
    };
    p * (miss - hit).max(0.0) - warm
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::catalog::{Rates, DEFAULT_RATES};

    fn opus() -> ModelEntry {
        ModelEntry {
            rates: Rates {
                input: 5.0,
                output: 25.0,
                cache_read: 0.5,
                cache_write: 6.25,
            },
            tiers: Vec::new(),
            images: true,
            effort: false,
            api: b"anthropic-messages"[..].into(),
            context_window: Some(1e6),
            lifetime_ms: [Some(300_000.0), Some(3_600_000.0)],
            reasoning: true,
            adaptive_thinking: true,
        }
    }

    fn run(entry: &ModelEntry, prompt: f64) -> WarmRun<'_> {
        WarmRun {
            start: 0.0,
            until: 7_200_000.0,
            settled: None,
            prompt_tokens: prompt,
            entry: Some(entry),
            long: false,
            reasoning: true,
            anthropic_messages: true,
            mode: WarmingMode::Idle,
        }
    }

    #[test]
    fn delays_are_pis() {
        assert_eq!(delay_ms(300_000.0), Some(270_000.0));
        assert_eq!(delay_ms(3_600_000.0), Some(3_240_000.0));
        assert_eq!(delay_ms(60_000.0), Some(50_000.0));
        assert_eq!(delay_ms(10_000.0), None);
    }

    #[test]
    fn economics_are_pis() {
        let e = opus();
        // The sample's warm: 11,743 tokens of Opus 4.6 while the agent
        // runs: 11,743 x (6.25 - 0.5) / 1e6 - (11,743 x 0.5 + 25) / 1e6.
        let s = expected_savings(&e, 11_743.0, false);
        assert!((s - (11_743.0 * 5.75 - 11_743.0 * 0.5 - 25.0) / 1e6).abs() < 1e-12);
        assert!(s >= MINIMUM_EXPECTED_SAVINGS);
        // Idle: 0.15 x 5.75 - 0.5 per token: 0.3625 / 1e6, so a warm pays
        // from 137,932 tokens on.
        assert!(expected_savings(&e, 137_000.0, true) < MINIMUM_EXPECTED_SAVINGS);
        assert!(expected_savings(&e, 138_000.0, true) >= MINIMUM_EXPECTED_SAVINGS);
        let none = ModelEntry {
            rates: Rates {
                cache_write: 0.0,
                ..DEFAULT_RATES
            },
            ..opus()
        };
        // Without a write price a miss costs the input price.
        assert!((expected_savings(&none, 1e6, false) - (3.0 - 0.3 - 0.3 - 15e-6)).abs() < 1e-9);
    }

    #[test]
    fn a_run_warms_until_the_next_request_or_a_horizon() {
        let e = opus();
        // While the agent runs: every 270 s, up to the next request.
        let r = WarmRun {
            until: 900_000.0,
            ..run(&e, 20_000.0)
        };
        assert_eq!(r.warms(), vec![270_000.0, 540_000.0, 810_000.0]);
        // Never past 60 minutes while it runs.
        assert_eq!(run(&e, 20_000.0).warms().len(), 13);
        // Settled at 100 s: idle odds, which 20,000 tokens do not pay.
        let settled = WarmRun {
            settled: Some(100_000.0),
            ..run(&e, 20_000.0)
        };
        assert!(settled.warms().is_empty());
        // A large prompt pays while idle, for 30 minutes.
        let large = WarmRun {
            settled: Some(100_000.0),
            ..run(&e, 200_000.0)
        };
        assert_eq!(large.warms().len(), 6);
        assert_eq!(large.warms().last(), Some(&1_620_000.0));
        // `streaming` stops when the run settles; `off` never warms.
        for mode in [WarmingMode::Streaming, WarmingMode::Off] {
            let r = WarmRun { mode, ..large };
            assert!(r.warms().is_empty(), "{mode:?}");
        }
        // Settled after the first warm: that one was sent while running.
        let later = WarmRun {
            settled: Some(300_000.0),
            mode: WarmingMode::Streaming,
            ..run(&e, 20_000.0)
        };
        assert_eq!(later.warms(), vec![270_000.0]);
    }

    #[test]
    fn only_requests_pi_can_send_again() {
        let mut e = opus();
        e.adaptive_thinking = false;
        // Budget thinking on Anthropic's API: the replay would change the
        // thinking budget, so pi does not warm.
        assert!(run(&e, 20_000.0).warms().is_empty());
        let plain = WarmRun {
            reasoning: false,
            ..run(&e, 20_000.0)
        };
        assert!(!plain.warms().is_empty());
        // Long retention: one warm at 54 minutes within the hour.
        let long = WarmRun {
            long: true,
            reasoning: false,
            ..run(&e, 20_000.0)
        };
        assert_eq!(long.warms(), vec![3_240_000.0]);
        e.lifetime_ms = [None, None];
        assert!(WarmRun {
            reasoning: false,
            ..run(&e, 20_000.0)
        }
        .warms()
        .is_empty());
        let unknown = WarmRun {
            entry: None,
            ..run(&e, 20_000.0)
        };
        assert!(unknown.warms().is_empty());
    }
}
