//! What each model call costs, whichever cache model prices it: tokens
//! read from, written to and sent past the prompt cache, in USD at the
//! model's catalog rates ([`price`]), and the call's class ([`classify`],
//! the one class rule: the pricer's and the recorded usage's). The cache
//! models are the provider's (`cache.rs`, the default) and the prefix rule
//! (`prefix.rs`); `pricer.rs` runs either over a policy's calls, and a
//! call's cause is `cause.rs`'s.

use super::cache::Outcome;
use super::catalog::{ModelEntry, Rates, DEFAULT_RATES};
use super::prefix::{PrefixRule, PrefixSums};

/// Which cache rule prices the calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CacheModel {
    /// The provider's own rules (`cache.rs`).
    Provider,
    /// Every message before the first changed one is read (the replay's
    /// first model, kept for comparison: no provider works this way).
    Prefix(PrefixRule),
}

impl CacheModel {
    /// The JSON spelling (`cacheModel`).
    pub fn name(&self) -> &'static str {
        match self {
            CacheModel::Provider => "provider",
            CacheModel::Prefix(_) => "prefix",
        }
    }

    pub fn is_provider(&self) -> bool {
        matches!(self, CacheModel::Provider)
    }
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

/// What a class is judged on, however it was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// A previous call on the model exists.
    pub previous: bool,
    /// Its cache entries had lapsed.
    pub lapsed: bool,
    /// The read reached the end of what the previous call cached.
    pub reached_previous: bool,
    /// The read stopped within tools and system (or read nothing).
    pub within_preamble: bool,
}

/// The class rule.
pub fn classify(r: Reads) -> CallClass {
    if !r.previous {
        CallClass::First
    } else if r.lapsed {
        CallClass::Expired
    } else if r.reached_previous {
        CallClass::Append
    } else if r.within_preamble {
        CallClass::Rewrite
    } else {
        CallClass::Partial
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

/// A request without the prompt cache (`cacheRetention: "none"`, as pi's
/// compaction sends its summaries): `input` tokens in and `output` out, at
/// `entry`'s rates (or the defaults).
pub fn price_uncached(entry: Option<&ModelEntry>, input: f64, output: f64) -> f64 {
    let rates: Rates = match entry {
        Some(e) => e.rates_for(input),
        None => DEFAULT_RATES,
    };
    (input * rates.input + output * rates.output) / 1e6
}

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

/// A model's prices as one call reads them: its catalog entry (None: the
/// defaults), tokens per character, pi's long retention and whether writes
/// cost the write rate. The replay's pricer and pi's live gate bill
/// through it.
#[derive(Debug, Clone, Copy)]
pub struct Tariff<'a> {
    pub entry: Option<&'a ModelEntry>,
    pub tokens_per_char: f64,
    pub long: bool,
    pub premium: bool,
}

impl Tariff<'_> {
    /// The bill of `tokens` (input, read, write).
    pub fn bill(&self, tokens: (f64, f64, f64)) -> CallBill {
        let (input, read, write) = tokens;
        CallBill {
            input_tokens: input,
            cache_read_tokens: read,
            cache_write_tokens: write,
            cost_usd: price(self.entry, input, read, write, self.long, self.premium),
        }
    }

    /// The price of `tokens` of output on a `prompt`-token request.
    pub fn output(&self, prompt: f64, tokens: f64) -> f64 {
        let rates = self.entry.map_or(DEFAULT_RATES, |e| e.rates_for(prompt));
        tokens * rates.output / 1e6
    }

    /// The bill of a provider cache outcome (characters).
    pub fn outcome(&self, o: &Outcome) -> CallBill {
        let tpc = self.tokens_per_char;
        self.bill((
            o.input_chars as f64 * tpc,
            o.read_chars as f64 * tpc,
            o.write_chars as f64 * tpc,
        ))
    }
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

/// Thinking the API dropped, over a policy's requests.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ThinkingDropped {
    pub blocks: u64,
    pub tokens: f64,
    pub calls: u64,
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
    /// pi's compactions: count and the cost of their summarization
    /// requests (included in `cost_usd`).
    pub compactions: u64,
    pub compaction_cost_usd: f64,
    /// Requests above the model's context window: the provider refuses
    /// them, so they are counted and not priced.
    pub over_window: u64,
    /// Thinking the API dropped under preserved thinking's prefix check:
    /// blocks and tokens summed over the requests, and the requests that
    /// dropped any (reasoning the model no longer saw; not billed).
    pub thinking_dropped: ThinkingDropped,
    pub causes: Vec<CauseLine>,
    /// Calls per class, in `CallClass` order.
    pub classes: [u64; 5],
    /// The prefix rule's own sums (under that model only).
    pub prefix: Option<(PrefixRule, PrefixSums)>,
}

impl BillTotals {
    pub fn add(&mut self, b: &CallBill, class: CallClass) {
        self.input_tokens += b.input_tokens;
        self.cache_read_tokens += b.cache_read_tokens;
        self.cache_write_tokens += b.cache_write_tokens;
        self.cost_usd += b.cost_usd;
        self.classes[class as usize] += 1;
    }

    pub fn add_compaction(&mut self, cost_usd: f64) {
        self.compactions += 1;
        self.compaction_cost_usd += cost_usd;
        self.cost_usd += cost_usd;
    }

    /// A request from which the API dropped `(blocks, tokens)` of thinking.
    pub fn add_thinking_dropped(&mut self, (blocks, tokens): (u32, f64)) {
        if blocks > 0 {
            let d = &mut self.thinking_dropped;
            d.blocks += u64::from(blocks);
            d.tokens += tokens;
            d.calls += 1;
        }
    }

    pub fn add_warm(&mut self, cost_usd: f64) {
        self.warms += 1;
        self.warm_cost_usd += cost_usd;
        self.cost_usd += cost_usd;
    }

    /// Adds a call to its line of the causes table (`label`: `cause.rs`'s
    /// `Rewrite::label`).
    pub fn add_cause(&mut self, label: String, tokens: f64, cost: f64) {
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
}
