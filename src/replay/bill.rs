//! What each model call costs as the provider bills it: tokens read from,
//! written to and sent past the prompt cache, in USD at the model's
//! catalog rates, with the call's class and, for a call that wrote more
//! than its appended tail, the cause. The cache itself is `cache.rs`; the
//! characters-to-tokens factor per model is `calibration.rs`.

use super::catalog::{ModelEntry, Rates, DEFAULT_RATES};

/// Which cache rule prices the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheModel {
    /// The provider's own rules (`cache.rs`).
    Provider,
    /// Every message before the first changed one is read (the replay's
    /// first model, kept for comparison: no provider works this way).
    Prefix,
}

/// How a call met the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallClass {
    /// The file's first call, or the first on its model.
    First,
    /// The read reached the previous call's last breakpoint.
    Append,
    /// The read stopped at an older breakpoint within the lookback.
    Partial,
    /// History changed: the read fell back to tools and system, or nothing.
    Rewrite,
    /// The previous call's entries had outlived their lifetime.
    Expired,
}

impl CallClass {
    pub fn name(self) -> &'static str {
        match self {
            CallClass::First => "first",
            CallClass::Append => "append",
            CallClass::Partial => "partial",
            CallClass::Rewrite => "rewrite",
            CallClass::Expired => "expired",
        }
    }
}

/// What broke the cached prefix of a call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cause {
    /// `stub`, `errorPurge`, `chainCompression`, `thinkingStrip`,
    /// `orphanSweep` (the policy changed history), `compaction`,
    /// `contextEdit` (pi's `context_edit` rewrote a message), `branch`,
    /// `expired`, `modelSwitch`, `systemPrompt`, `thinkingDropped` (the
    /// provider dropped closed-turn thinking), `lookback` (the previous
    /// breakpoint lies beyond the lookback), or `unknown`.
    pub kind: &'static str,
    /// The policy's change came with a flush (new state in force).
    pub flush: bool,
    /// For `expired`: the time since the entries were last used, ms.
    pub gap_ms: Option<f64>,
}

impl Cause {
    pub fn plain(kind: &'static str) -> Cause {
        Cause {
            kind,
            flush: false,
            gap_ms: None,
        }
    }

    /// The line of the causes table this cause adds to.
    pub fn label(&self) -> String {
        if self.flush {
            format!("{} at a flush", self.kind)
        } else {
            self.kind.to_string()
        }
    }
}

/// One call's bill.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CallBill {
    pub input_tokens: f64,
    pub cache_read_tokens: f64,
    pub cache_write_tokens: f64,
    pub cost_usd: f64,
}

impl CallBill {}

/// Prices a call of `tokens` (input, read, write) at `entry`'s rates (or
/// the defaults). `long`: writes are 1 h writes (2x input); `premium`:
/// writes cost the write rate, else the input rate.
pub fn price(
    entry: Option<&ModelEntry>,
    input: f64,
    read: f64,
    write: f64,
    long: bool,
    premium: bool,
) -> f64 {
    let rates: Rates = match entry {
        Some(e) => e.rates_for(input + read + write),
        None => DEFAULT_RATES,
    };
    let write_rate = if !premium {
        rates.input
    } else if long {
        rates.input * 2.0
    } else {
        rates.cache_write
    };
    (input * rates.input + read * rates.cache_read + write * write_rate) / 1e6
}

/// One line of a policy's causes table.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CauseLine {
    pub label: String,
    pub calls: u64,
    /// Tokens written beyond the appended tail.
    pub tokens_written: f64,
    /// What those tokens cost beyond reading them.
    pub cost_usd: f64,
}

/// A policy's sums.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BillTotals {
    pub input_tokens: f64,
    pub cache_read_tokens: f64,
    pub cache_write_tokens: f64,
    pub cost_usd: f64,
    /// pi's cache warms: count and cost (included in `cost_usd`).
    pub warms: u64,
    pub warm_cost_usd: f64,
    pub causes: Vec<CauseLine>,
    /// Calls per class, in `CallClass` order.
    pub classes: [u64; 5],
}

impl BillTotals {
    pub fn add(&mut self, b: &CallBill) {
        self.input_tokens += b.input_tokens;
        self.cache_read_tokens += b.cache_read_tokens;
        self.cache_write_tokens += b.cache_write_tokens;
        self.cost_usd += b.cost_usd;
    }

    pub fn add_cause(&mut self, cause: &Cause, tokens: f64, cost: f64) {
        let label = cause.label();
        match self.causes.iter_mut().find(|l| l.label == label) {
            Some(l) => {
                l.calls += 1;
                l.tokens_written += tokens;
                l.cost_usd += cost;
            }
            None => self.causes.push(CauseLine {
                label,
                calls: 1,
                tokens_written: tokens,
                cost_usd: cost,
            }),
        }
    }

    pub fn count(&mut self, class: CallClass) {
        self.classes[class as usize] += 1;
    }
}
