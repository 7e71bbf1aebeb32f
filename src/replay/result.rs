//! What a replay answers: per model call its ids and time, per policy its
//! renders (measured, priced, gated) and sums, and how the recorded
//! policy's bill compares with the usage pi recorded. `report.rs` writes
//! it as JSON.

use super::invariant::Violation;
use super::policy::Policy;
use super::pricer::Priced;
use crate::cost::bill::{BillTotals, CacheModel};
use crate::cost::calibration::{self, Calibration};
use crate::gate::rule as gate;
use crate::json::Json;
use crate::script::Stats;

/// One model call of the session.
#[derive(Debug, Clone, PartialEq)]
pub struct CallInfo {
    /// The assistant entry's id, as text.
    pub entry_id: String,
    /// The leaf the request saw (None: nothing was written before it).
    pub leaf_id: Option<String>,
    /// When the request started (the assistant message's `timestamp`, else
    /// the entry's), ms since the epoch.
    pub time: Option<f64>,
}

/// One render's measurements (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Render {
    pub call: usize,
    pub chars_before: usize,
    pub chars_after: usize,
    pub messages_before: usize,
    pub messages_after: usize,
    pub break_index: usize,
    pub prefix_hash: u64,
    pub output_hash: u64,
    /// What each phase changed.
    pub stats: Stats,
    /// The call as the cache model bills it (None in the calibration
    /// pass).
    pub priced: Option<Priced>,
    /// A gated policy's choice and why (`gate.rs`).
    pub gate: Option<gate::Reason>,
    /// pi's compactions made just before this call.
    pub compactions: usize,
    /// pi's warms of the previous request before this call (ms).
    pub warms: Vec<f64>,
    /// The sent messages as one JSON array (with `Contexts::InRenders`).
    pub messages: Option<Vec<u8>>,
}

/// A gated policy's settings and how often each reason decided.
#[derive(Debug, Clone, PartialEq)]
pub struct GateTotals {
    pub settings: gate::GateSettings,
    /// Calls per reason, in `Reason::ALL`'s order.
    pub counts: [u64; 5],
}

impl GateTotals {
    pub(super) fn new(settings: gate::GateSettings) -> Self {
        GateTotals {
            settings,
            counts: [0; 5],
        }
    }

    pub(super) fn add(&mut self, reason: gate::Reason) {
        self.counts[reason as usize] += 1;
    }

    /// Calls decided for `reason`.
    pub fn count(&self, reason: gate::Reason) -> u64 {
        self.counts[reason as usize]
    }
}

/// One policy over the whole session.
#[derive(Debug, Clone)]
pub struct PolicyReplay {
    pub policy: Policy,
    /// The render config it ran with (None for `none`).
    pub config: Option<Json>,
    /// `JSON.stringify(output).length` summed over the renders.
    pub chars_sent: u64,
    pub renders: Vec<Render>,
    /// Renders the flush-gated invariant applied to.
    pub checked: usize,
    pub violation_count: usize,
    /// The first violations, in order.
    pub violations: Vec<Violation>,
    /// USD, tokens, classes and causes over the calls (and the prefix
    /// rule's own sums under that model).
    pub bill: BillTotals,
    /// Per call, as billed.
    pub priced: Vec<Priced>,
    /// Size points (the calibration pass only).
    pub points: Vec<calibration::SizePoint>,
    /// The thinking boundary rule (None: the policy does not read one).
    pub boundary: Option<BoundaryUsed>,
    /// A gated policy's decisions.
    pub gate: Option<GateTotals>,
    /// When pi's warmer re-sent this policy's requests (ms).
    pub warm_times: Vec<f64>,
    /// Its saving against `none` in parts (`parts.rs`; empty for `none`).
    pub parts: Vec<(SavingPart, f64)>,
}

/// A model the calls used.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelUsed {
    /// XXH3 of `provider/id` (`CallMeta::model_key`).
    pub key: u64,
    /// `provider/id`.
    pub name: String,
    pub in_catalog: bool,
    /// Whether the provider keeps earlier turns' thinking in the prompt it
    /// bills (`Rules::keeps_thinking`): what the thinking strip's saving,
    /// and the gate's holds of it, rest on.
    pub keeps_thinking: bool,
    /// Whether its API runs preserved thinking's prefix check
    /// (`Rules::prefix_check`): a rewrite drops the thinking after it.
    pub prefix_check: bool,
}

/// One part of a policy's saving against `none` (`parts.rs` measures
/// them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavingPart {
    /// The release's stubs, purged arguments and compressed chains.
    Pruning,
    /// 2.4.3's thinking strip.
    ThinkingStrip,
    /// The cache-aware gate's holds.
    Gate,
    /// pi's compactions.
    Compactions,
    /// pi's cache warms.
    Warms,
}

impl SavingPart {
    /// The JSON spelling (`parts[].part`).
    pub fn name(self) -> &'static str {
        match self {
            SavingPart::Pruning => "pruning",
            SavingPart::ThinkingStrip => "thinkingStrip",
            SavingPart::Gate => "gate",
            SavingPart::Compactions => "compactions",
            SavingPart::Warms => "warms",
        }
    }
}

/// How well the model matched the usage pi recorded, under the policy in
/// force when the session was recorded.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reconciliation {
    pub recorded_policy: &'static str,
    /// Calls with recorded usage compared.
    pub calls: usize,
    /// Share of those whose class matches the recorded one.
    pub class_match: f64,
    pub recorded_cost_usd: f64,
    pub predicted_cost_usd: f64,
    /// `matched`, `unreconciled` or `noUsage`.
    pub status: &'static str,
    pub reason: Option<String>,
    /// pi's warms the file recorded, those the replay's warmer sent for
    /// the recorded policy, and how many of the recorded ones it sent
    /// within the warmer's slack (`warmer::SLACK_MS`).
    pub warms: (usize, usize, usize),
}

#[derive(Debug, Clone)]
pub struct Replay {
    pub calls: Vec<CallInfo>,
    pub policies: Vec<PolicyReplay>,
    pub cache_model: CacheModel,
    pub long_retention: bool,
    /// pi's `cacheWarming` mode the warms were simulated in.
    pub cache_warming: super::warmer::WarmingMode,
    pub calibration: Calibration,
    /// The models the calls used, in order of first use.
    pub models: Vec<ModelUsed>,
    pub reconciliation: Reconciliation,
    /// Lines pi skips: how many, and the first line numbers.
    pub skipped_lines: (usize, Vec<u32>),
}

impl Replay {
    /// `figure` of a policy over `none`'s (NaN when `none`'s is not
    /// positive).
    pub fn vs_none(&self, p: &PolicyReplay, figure: impl Fn(&PolicyReplay) -> f64) -> f64 {
        match self.policies.iter().find(|q| q.policy == Policy::None) {
            Some(n) if figure(n) > 0.0 => figure(p) / figure(n),
            _ => f64::NAN,
        }
    }
}

/// The boundary rule a policy's renders followed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundaryUsed {
    /// `recorded` or `config`.
    pub rule: &'static str,
    pub reason: String,
}
