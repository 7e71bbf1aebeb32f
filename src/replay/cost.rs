//! What a render costs at the provider, estimated from characters: tokens
//! are `chars / charsPerToken` (default 4, the usual rough figure for
//! English and code), priced per input token as `inputPrice` (default 1,
//! so costs read in input tokens) times 1.25 for the part written to the
//! prompt cache and 0.1 for the part read from it (Anthropic's multipliers;
//! both are options). Output tokens are left out: pruning does not change
//! them. The cache holds a prefix for `cacheTtl` (default 300 s) after its
//! last use: a model call more than that after the previous one (message
//! timestamps) finds nothing cached and writes everything.

/// The prices and the cache lifetime.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    pub chars_per_token: f64,
    pub input_price: f64,
    pub cache_write_multiplier: f64,
    pub cache_read_multiplier: f64,
    /// Milliseconds.
    pub cache_ttl_ms: f64,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            chars_per_token: 4.0,
            input_price: 1.0,
            cache_write_multiplier: 1.25,
            cache_read_multiplier: 0.1,
            cache_ttl_ms: 300_000.0,
        }
    }
}

/// A policy's sums over its renders.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    pub chars_sent: u64,
    pub cache_read_chars: u64,
    pub cache_write_chars: u64,
}

impl Totals {
    pub fn add(&mut self, sent: usize, read: usize, write: usize) {
        self.chars_sent += sent as u64;
        self.cache_read_chars += read as u64;
        self.cache_write_chars += write as u64;
    }
}

impl CostModel {
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

    pub fn cost(&self, t: &Totals) -> f64 {
        self.input_price
            * (self.tokens(t.cache_write_chars) * self.cache_write_multiplier
                + self.tokens(t.cache_read_chars) * self.cache_read_multiplier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_and_expiry() {
        let m = CostModel::default();
        let t = Totals {
            chars_sent: 1000,
            cache_read_chars: 600,
            cache_write_chars: 400,
        };
        // 100 tokens written at 1.25, 150 read at 0.1.
        assert!((m.cost(&t) - (125.0 + 15.0)).abs() < 1e-9);
        assert!(!m.expired(Some(0.0), Some(300_000.0)));
        assert!(m.expired(Some(0.0), Some(300_001.0)));
        assert!(!m.expired(None, Some(1e12)));
    }
}
