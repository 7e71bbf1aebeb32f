//! The prefix rule (`cacheModel: 'prefix'`, the replay's first model, kept
//! for comparison: no provider works this way), a cache model beside the
//! provider's (`cache.rs`): every output message before the first one that
//! changed since the previous call is read, counted in characters of the
//! rendered array's JSON text (the `[` and each message with the `,` after
//! it; nothing when the first message changed), the rest is written. The
//! cache holds a prefix for `cacheTtl` (default 300 s) after its last use:
//! a call more than that after the previous one (message timestamps) finds
//! nothing and writes everything. Tokens are `chars / charsPerToken`
//! (default 4), priced at the model's catalog rates like the provider
//! model's, and also in units of `inputPrice` (default 1) times 1.25 for
//! the part written and 0.1 for the part read (Anthropic's multipliers;
//! both are options). Output tokens are left out: pruning does not change
//! them.

use super::digest::Digest;
use crate::record::array_len;

/// The rule's prices and cache lifetime.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrefixRule {
    pub chars_per_token: f64,
    pub input_price: f64,
    pub cache_write_multiplier: f64,
    pub cache_read_multiplier: f64,
    /// Milliseconds.
    pub cache_ttl_ms: f64,
}

impl Default for PrefixRule {
    fn default() -> Self {
        PrefixRule {
            chars_per_token: 4.0,
            input_price: 1.0,
            cache_write_multiplier: 1.25,
            cache_read_multiplier: 0.1,
            cache_ttl_ms: 300_000.0,
        }
    }
}

/// What the rule made of one call, in characters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PrefixCall {
    pub read_chars: u64,
    pub write_chars: u64,
    /// The cache had expired since the previous call.
    pub expired: bool,
}

/// A policy's sums under the rule.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PrefixSums {
    pub read_chars: u64,
    pub write_chars: u64,
}

impl PrefixSums {
    pub fn add(&mut self, call: &PrefixCall) {
        self.read_chars += call.read_chars;
        self.write_chars += call.write_chars;
    }
}

impl PrefixRule {
    /// Whether the cache has expired between two calls made at these times
    /// (ms; a missing time counts as no gap).
    pub fn expired(&self, previous: Option<f64>, now: Option<f64>) -> bool {
        match (previous, now) {
            (Some(a), Some(b)) => b - a > self.cache_ttl_ms,
            _ => false,
        }
    }

    pub fn tokens(&self, chars: u64) -> f64 {
        chars as f64 / self.chars_per_token
    }

    /// The sums' cost in units of `input_price`.
    pub fn cost(&self, s: &PrefixSums) -> f64 {
        self.input_price
            * (self.tokens(s.write_chars) * self.cache_write_multiplier
                + self.tokens(s.read_chars) * self.cache_read_multiplier)
    }

    /// Sending `out` (which first differs from the previous call's output
    /// at `break_index`) at `now`, the previous call made at `previous`
    /// (None: there was none, or it had no time).
    pub fn send(
        &self,
        out: &[Digest],
        break_index: usize,
        first: bool,
        previous: Option<f64>,
        now: Option<f64>,
    ) -> PrefixCall {
        // One pass over the output for both sums.
        let head: usize = out[..break_index].iter().map(|d| d.len as usize).sum();
        let tail: usize = out[break_index..].iter().map(|d| d.len as usize).sum();
        let chars = array_len(out.len(), head + tail) as u64;
        let expired = !first && self.expired(previous, now);
        let read = if expired || break_index == 0 {
            0
        } else {
            (1 + head + break_index) as u64
        };
        PrefixCall {
            read_chars: read,
            write_chars: chars - read,
            expired,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_and_expiry() {
        let m = PrefixRule::default();
        let s = PrefixSums {
            read_chars: 600,
            write_chars: 400,
        };
        // 100 tokens written at 1.25, 150 read at 0.1.
        assert!((m.cost(&s) - (125.0 + 15.0)).abs() < 1e-9);
        assert!(!m.expired(Some(0.0), Some(300_000.0)));
        assert!(m.expired(Some(0.0), Some(300_001.0)));
        assert!(!m.expired(None, Some(1e12)));
    }

    #[test]
    fn reads_the_unchanged_prefix() {
        let m = PrefixRule::default();
        let d = |len| Digest { hash: 0, len };
        let out = [d(10), d(20), d(30)];
        // `[`, 10 and `,`, 20 and `,` are read; 30 and `]` written.
        let call = m.send(&out, 2, false, Some(0.0), Some(1.0));
        assert_eq!((call.read_chars, call.write_chars), (33, 31));
        let late = m.send(&out, 2, false, Some(0.0), Some(400_000.0));
        assert_eq!(
            (late.read_chars, late.write_chars, late.expired),
            (0, 64, true)
        );
    }
}
