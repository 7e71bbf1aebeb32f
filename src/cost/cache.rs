//! The provider's prompt cache, simulated one request at a time
//! (CACHE-MODEL.md 2 and 3). An entry is a prefix of an earlier request
//! that ended at one of its breakpoints; it lives `ttl` from the start of
//! the last request that wrote or read it. A request reads the longest
//! live entry found by looking back from each of its breakpoints, writes
//! from there up to its last cacheable breakpoint, and pays plain input
//! for the rest. Automatic prefix caching (OpenAI up to GPT-5.5, Google)
//! reads the prefix shared with the previous request instead, in steps.
//! `look` answers what a request would read and write without changing
//! the cache; `send` looks and keeps the entries.

use crate::hash::HashMap;

use super::catalog::{Family, Rules};
use super::request::Request;

#[derive(Debug, Clone, Copy, PartialEq)]
struct CacheEntry {
    expires: f64,
}

/// What one request read, wrote and paid as plain input, in characters
/// of the prompt (tokens are a per-model multiple of them).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Outcome {
    /// The position the read ends at (None: nothing read).
    pub read_at: Option<usize>,
    pub read_chars: u64,
    pub write_chars: u64,
    pub input_chars: u64,
}

impl Outcome {
    /// A request of `total_chars` that read `read_chars` (ending at
    /// `read_at`) and wrote `write_chars`: the rest is plain input.
    fn of(total_chars: u64, read_at: Option<usize>, read_chars: u64, write_chars: u64) -> Self {
        Outcome {
            read_at,
            read_chars,
            write_chars,
            input_chars: total_chars - read_chars - write_chars,
        }
    }

    /// The read covers nothing past the tools and system (`preamble`
    /// positions), or nothing at all.
    pub fn within_preamble(&self, preamble: usize) -> bool {
        self.read_at.is_none_or(|at| at < preamble)
    }
}

/// One model's cache.
#[derive(Debug, Clone, Default)]
pub struct Cache {
    entries: HashMap<u64, CacheEntry>,
    /// Implicit breakpoints, newest last: (position index, hash).
    recent: Vec<(usize, u64, f64)>,
    /// Automatic prefix caching: the previous request and when it lapses.
    previous: Option<(Request, f64)>,
}

impl Cache {
    fn live(&self, hash: u64, now: f64) -> bool {
        self.entries.get(&hash).is_some_and(|e| e.expires >= now)
    }

    /// Whether the entry at `hash` had lapsed by `now` (false when there
    /// was never one).
    pub fn lapsed(&self, hash: u64, now: f64) -> bool {
        self.entries.get(&hash).is_some_and(|e| e.expires < now)
    }

    /// Sends `request` at `now` (ms); `tokens_per_char` converts sizes for
    /// the minimum cacheable length and the hit steps.
    pub fn send(
        &mut self,
        request: &Request,
        rules: &Rules,
        tokens_per_char: f64,
        now: f64,
    ) -> Outcome {
        let o = self.look(request, rules, tokens_per_char, now);
        self.keep(request, rules, tokens_per_char, now, &o);
        o
    }

    /// What sending `request` at `now` would read, write and pay as plain
    /// input, the cache left as it is.
    pub fn look(&self, request: &Request, rules: &Rules, tpc: f64, now: f64) -> Outcome {
        match rules.family {
            Family::OpenAiPrefix | Family::Google => self.automatic(request, rules, tpc, now),
            Family::OpenAiImplicit => self.implicit(request, rules, tpc, now),
            _ => self.explicit(request, rules, tpc, now),
        }
    }

    /// The entries a request sent at `now` (whose outcome `o` was looked
    /// up) reads, refreshes and writes.
    pub fn keep(&mut self, request: &Request, rules: &Rules, tpc: f64, now: f64, o: &Outcome) {
        let ttl = now + rules.ttl_ms;
        match rules.family {
            Family::OpenAiPrefix | Family::Google => {
                self.previous = Some((request.clone(), ttl));
            }
            Family::OpenAiImplicit => {
                self.recent.retain(|&(_, _, expires)| expires >= now);
                if let Some(q) = o.read_at {
                    for e in &mut self.recent {
                        if e.0 == q {
                            e.2 = ttl;
                        }
                    }
                }
                if let Some(&bp) = request.breakpoints.last() {
                    let hash = request.positions[bp].hash;
                    if Self::cacheable(request, bp, rules, tpc)
                        && !self.recent.iter().any(|e| e.1 == hash)
                    {
                        self.recent.push((bp, hash, ttl));
                        if self.recent.len() > rules.recent {
                            self.recent.remove(0);
                        }
                    }
                }
            }
            _ => {
                if let Some(q) = o.read_at {
                    self.entries
                        .insert(request.positions[q].hash, CacheEntry { expires: ttl });
                }
                for &bp in &request.breakpoints {
                    if Self::cacheable(request, bp, rules, tpc) {
                        self.entries
                            .insert(request.positions[bp].hash, CacheEntry { expires: ttl });
                    }
                }
            }
        }
    }

    fn cacheable(request: &Request, at: usize, rules: &Rules, tpc: f64) -> bool {
        request.positions[at].chars as f64 * tpc >= rules.min_tokens
    }

    fn explicit(&self, request: &Request, rules: &Rules, tpc: f64, now: f64) -> Outcome {
        let lookback = rules.lookback.unwrap_or(usize::MAX);
        let mut read_at: Option<usize> = None;
        for &bp in &request.breakpoints {
            for back in 0..lookback {
                let Some(q) = bp.checked_sub(back) else { break };
                if self.live(request.positions[q].hash, now) {
                    read_at = read_at.max(Some(q));
                    break;
                }
            }
        }
        let last = request
            .breakpoints
            .iter()
            .rev()
            .copied()
            .find(|&bp| Self::cacheable(request, bp, rules, tpc));
        let read_chars = read_at.map_or(0, |q| request.positions[q].chars);
        let cached_end = last.map_or(0, |bp| request.positions[bp].chars);
        let write_chars = cached_end.saturating_sub(read_chars);
        Outcome::of(request.total_chars, read_at, read_chars, write_chars)
    }

    fn implicit(&self, request: &Request, rules: &Rules, tpc: f64, now: f64) -> Outcome {
        let mut read_at = None;
        for &(at, hash, expires) in &self.recent {
            if expires >= now && request.positions.get(at).is_some_and(|p| p.hash == hash) {
                read_at = read_at.max(Some(at));
            }
        }
        let mut write_chars = 0;
        let read_chars = read_at.map_or(0, |q| request.positions[q].chars);
        if let Some(&bp) = request.breakpoints.last() {
            if Self::cacheable(request, bp, rules, tpc) {
                write_chars = request.positions[bp].chars.saturating_sub(read_chars);
            }
        }
        Outcome::of(request.total_chars, read_at, read_chars, write_chars)
    }

    fn automatic(&self, request: &Request, rules: &Rules, tpc: f64, now: f64) -> Outcome {
        let mut read_at = None;
        let mut read_chars = 0;
        if let Some((prev, expires)) = &self.previous {
            if *expires >= now {
                if let Some(q) = request.common_prefix(prev) {
                    let tokens = request.positions[q].chars as f64 * tpc;
                    if tokens >= rules.min_tokens {
                        let stepped = (tokens / rules.step).floor() * rules.step;
                        read_at = Some(q);
                        read_chars = (stepped / tpc) as u64;
                    }
                }
            }
        }
        // No write premium: what is not read is plain input.
        Outcome::of(request.total_chars, read_at, read_chars, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::catalog::{rules_for, Family};
    use crate::cost::request::Position;
    use crate::cost::wire::CallModel;

    fn request(sizes: &[u64], hashes: &[u64], bps: &[usize]) -> Request {
        let mut chars = 0;
        let positions = sizes
            .iter()
            .zip(hashes)
            .map(|(&s, &h)| {
                chars += s;
                Position {
                    chars,
                    hash: h,
                    messages: 0,
                    source: 0,
                }
            })
            .collect();
        Request {
            positions,
            breakpoints: bps.to_vec(),
            preamble: 1,
            total_chars: chars,
            message_chars: chars - sizes[0],
            trailing_effort: false,
            ..Request::default()
        }
    }

    fn sonnet() -> Rules {
        rules_for(
            &CallModel {
                provider: b"anthropic"[..].into(),
                id: b"claude-sonnet-4-5"[..].into(),
                ..CallModel::default()
            },
            false,
        )
    }

    #[test]
    fn append_reads_what_the_previous_call_wrote() {
        let rules = sonnet();
        assert_eq!(rules.family, Family::Anthropic);
        let mut c = Cache::default();
        // 4 chars a token: system 8,000 chars (2,000 tokens).
        let a = request(&[8000, 4000, 4000], &[1, 2, 3], &[0, 2]);
        let o = c.send(&a, &rules, 0.25, 0.0);
        assert_eq!((o.read_chars, o.write_chars, o.input_chars), (0, 16000, 0));
        let b = request(&[8000, 4000, 4000, 400, 400], &[1, 2, 3, 4, 5], &[0, 4]);
        let o = c.send(&b, &rules, 0.25, 60_000.0);
        assert_eq!((o.read_chars, o.write_chars), (16000, 800));
        // History changed at position 1: the read falls back to the system.
        let d = request(
            &[8000, 3000, 4000, 400, 400, 40],
            &[1, 9, 10, 11, 12, 13],
            &[0, 5],
        );
        let o = c.send(&d, &rules, 0.25, 120_000.0);
        assert_eq!(
            (o.read_at, o.read_chars, o.write_chars),
            (Some(0), 8000, 7840)
        );
        // More than 5 minutes later nothing is left.
        let o = c.send(&d, &rules, 0.25, 421_000.0);
        assert_eq!((o.read_chars, o.write_chars), (0, 15840));
    }

    #[test]
    fn look_answers_as_send_and_changes_nothing() {
        let b = request(&[8000, 4000, 4000, 400], &[1, 2, 3, 4], &[0, 3]);
        for rules in [
            sonnet(),
            rules_for(&model("openai", "gpt-5.5"), false),
            rules_for(&model("openai", "gpt-5.6-sol"), false),
        ] {
            let mut c = Cache::default();
            c.send(
                &request(&[8000, 4000, 4000], &[1, 2, 3], &[0, 2]),
                &rules,
                0.25,
                0.0,
            );
            let looked = c.look(&b, &rules, 0.25, 1_000.0);
            assert_eq!(c.look(&b, &rules, 0.25, 1_000.0), looked);
            assert_eq!(c.send(&b, &rules, 0.25, 1_000.0), looked);
            // Sent, the request's own breakpoint is read next time.
            assert!(c.look(&b, &rules, 0.25, 2_000.0).read_chars >= looked.read_chars);
        }
    }

    #[test]
    fn lookback_is_twenty_positions() {
        let rules = sonnet();
        let mut c = Cache::default();
        let sizes = vec![8000u64; 30];
        let hashes: Vec<u64> = (1..=30).collect();
        c.send(
            &request(&sizes[..5], &hashes[..5], &[0, 4]),
            &rules,
            0.25,
            0.0,
        );
        // The old breakpoint (position 4) is 21 positions back: missed.
        let far = request(&sizes[..26], &hashes[..26], &[0, 25]);
        assert_eq!(c.clone().send(&far, &rules, 0.25, 1.0).read_at, Some(0));
        let near = request(&sizes[..24], &hashes[..24], &[0, 23]);
        assert_eq!(c.send(&near, &rules, 0.25, 1.0).read_at, Some(4));
    }

    #[test]
    fn short_prefixes_are_not_cached() {
        let rules = sonnet();
        let mut c = Cache::default();
        let a = request(&[400, 400], &[1, 2], &[0, 1]);
        let o = c.send(&a, &rules, 0.25, 0.0);
        assert_eq!((o.read_chars, o.write_chars, o.input_chars), (0, 0, 800));
    }

    fn model(provider: &str, id: &str) -> CallModel {
        CallModel {
            provider: provider.as_bytes().into(),
            id: id.as_bytes().into(),
            api: b"openai-responses"[..].into(),
            ..CallModel::default()
        }
    }

    #[test]
    fn automatic_prefix_reads_shared_prefix_in_steps() {
        let rules = rules_for(&model("openai", "gpt-5.5"), false);
        assert_eq!(rules.family, Family::OpenAiPrefix);
        let mut c = Cache::default();
        // 1 token a char: 2,000 + 500 tokens, then the same plus 300.
        let a = request(&[2000, 500], &[1, 2], &[]);
        let o = c.send(&a, &rules, 1.0, 0.0);
        assert_eq!((o.read_chars, o.write_chars, o.input_chars), (0, 0, 2500));
        let b = request(&[2000, 500, 300], &[1, 2, 3], &[]);
        let o = c.send(&b, &rules, 1.0, 1_000.0);
        // 2,500 shared tokens, in 128-token steps: 2,432.
        assert_eq!((o.read_chars, o.write_chars, o.input_chars), (2432, 0, 368));
        // After the lifetime nothing is shared.
        let o = c.send(&b, &rules, 1.0, 400_000.0);
        assert_eq!(o.read_chars, 0);
    }

    #[test]
    fn implicit_breakpoints_have_no_lookback_limit() {
        let rules = rules_for(&model("openai", "gpt-5.6-sol"), false);
        assert_eq!(rules.family, Family::OpenAiImplicit);
        let mut c = Cache::default();
        let sizes = vec![100u64; 40];
        let hashes: Vec<u64> = (1..=40).collect();
        c.send(
            &request(&sizes[..12], &hashes[..12], &[11]),
            &rules,
            1.0,
            0.0,
        );
        // 28 positions later the old breakpoint is still found.
        let o = c.send(&request(&sizes, &hashes, &[39]), &rules, 1.0, 60_000.0);
        assert_eq!(
            (o.read_at, o.read_chars, o.write_chars),
            (Some(11), 1200, 2800)
        );
        // 30 minutes of lifetime.
        let o = c.send(
            &request(&sizes, &hashes, &[39]),
            &rules,
            1.0,
            60_000.0 + 1_800_001.0,
        );
        assert_eq!(o.read_chars, 0);
    }
}
