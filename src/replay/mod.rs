//! Replaying a pi session file: every model call of the active branch
//! rendered as pi-condense would have rendered it, under several pruning
//! policies side by side, each call priced as its provider would bill it
//! (issue 15; the tune, `crate::tune`, runs the same walk over a grid of
//! configurations).
//!
//! A file is parsed and prepared once ([`Prepared`]): its model calls
//! (SESSIONS.md C.3: the assistant entry and the leaf its request saw),
//! what the file says of each (`calls.rs`: model, recorded usage, tools and
//! system, compactions, edits, branches and cache warms since the previous
//! call), and the characters-to-tokens factor per model (`calibration.rs`,
//! fitted on a measure pass of the recorded policy). Then each policy walks
//! the calls on its own kept engine (`walk.rs`; the state per call is
//! `timeline.rs`'s rebuild, the indexer's answers `indexer.rs`'s), one
//! engine's copy of the conversation alive at a time. Per render the walk
//! measures the output against the previous one (`digest.rs`: per-message
//! digests, the break index, `prefixHash` and `outputHash`, docs/REPLAY.md),
//! checks the flush-gated invariant (`invariant.rs`) and names the phases
//! behind what changed (`cause.rs`).
//!
//! One pricing path prices every call (`pricer.rs`, summed in `bill.rs`)
//! under the cache model asked for: the provider's (the default: the wire
//! request of `wire.rs`, `assemble.rs` and `request.rs`, kept up to date
//! by `requests.rs`, sent through `cache.rs` at `catalog.rs`'s rules and
//! prices) or the prefix rule (`prefix.rs`, kept for comparison). Both give
//! each call its tokens, USD, class and cause, and a policy its sums;
//! `report.rs` writes the result as JSON. The recorded policy's bill is
//! compared with the usage pi recorded ([`Reconciliation`]).

mod assemble;
mod bill;
mod cache;
mod calibration;
mod calls;
mod catalog;
mod cause;
mod digest;
pub mod gate;
mod indexer;
mod invariant;
pub mod live;
mod options;
// Reached only from the binding's test export (`replayWirePayload`).
#[cfg(feature = "napi")]
pub(crate) mod payload;
mod policy;
mod prefix;
mod pricer;
pub(crate) mod report;
mod request;
mod requests;
mod settings;
mod slot_value;
mod timeline;
mod walk;
pub(crate) mod wire;

use std::sync::atomic::{AtomicU64, Ordering};

pub use bill::{BillTotals, CacheModel, CallClass};
pub use calibration::Calibration;
pub use catalog::Catalog;
#[cfg(test)]
use digest::{prefix_hash, Digest};
pub use invariant::Violation;
pub use policy::Policy;
pub use prefix::PrefixRule;
pub use pricer::Priced;
pub use report::to_json;
pub use settings::Settings;

use crate::error::Result;
use crate::json::text::to_string_lossy;
use crate::json::Json;
use crate::script::Stats;
use crate::sessionfile::date::{date_of, DateValue};
use crate::sessionfile::file::describe_key;
use crate::sessionfile::key::JsKey;
use crate::sessionfile::{model_calls, path_to, Entry, Leaf, SessionFile};

/// The first index where two renders differ, as digests (the replay) or
/// slots (pi's gate): the shorter one's length when one is a prefix of the
/// other.
fn first_difference<T: PartialEq>(before: &[T], after: &[T]) -> usize {
    before.iter().zip(after).take_while(|(a, b)| a == b).count()
}

/// A session-file error as the replay reports it: the code, the message
/// without a line prefix, and the line as a field.
fn located(e: crate::sessionfile::SessionError) -> crate::error::PruneError {
    let mut err = crate::error::PruneError::new(e.code(), e.message);
    err.line = e.line.map(|l| l as usize);
    err
}

/// An entry's id as plain text (lone surrogates as U+FFFD).
fn id_string(entry: &Entry<'_>) -> String {
    match entry.id() {
        JsKey::String(s) => to_string_lossy(&s),
        other => describe_key(&other),
    }
}

/// Skipped line numbers a result lists (all are counted).
pub const SKIPPED_LINES_LISTED: usize = 5;

/// What to replay and how to price it.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub policies: Vec<Policy>,
    pub settings: Settings,
    /// Keep every render's measurements (else only the totals).
    pub keep_renders: bool,
    /// The provider's cache, or the prefix rule with its prices.
    pub cache_model: CacheModel,
    /// 1 h retention (`PI_CACHE_RETENTION=long`).
    pub long_retention: bool,
    /// The model of every call (`provider/id`), instead of the session's.
    pub model: Option<wire::CallModel>,
    /// The policy in force when the session was recorded.
    pub recorded_policy: Policy,
    /// pi-ai's catalog, as js/catalog.js reads it.
    pub catalog: Catalog,
    /// A fixed chars-per-token (no calibration).
    pub chars_per_token: Option<f64>,
    /// Which 2.4.3 thinking boundary a policy that reads it renders with.
    pub thinking_boundary: BoundaryMode,
    /// The gate's settings, for the `+gate` policies.
    pub gate: gate::GateSettings,
    /// Where each call's sent messages go.
    pub contexts: Contexts,
}

/// What was sent, exported (`contexts`, `--contexts DIR`): per call the
/// array the context handler hands back to pi.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Contexts {
    #[default]
    None,
    /// In each render's row (`renders[k].messages`).
    InRenders,
    /// Streamed to `DIR/<policy>.jsonl`, a line per call: `{k, timestamp,
    /// model, gate?, messages}`.
    Dir(std::path::PathBuf),
}

/// `thinkingBoundary`: the 2.4.3 boundary a render uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoundaryMode {
    /// The config's own boundary (as `Config`), reported as the recorded
    /// rule when the file's 2.4 frontier entries hold that same boundary at
    /// every render.
    #[default]
    Auto,
    /// The boundary of the frontier in force, as recorded.
    Recorded,
    /// 2.4.3's rule computed at each flush from the config's keepLastTurns.
    Config,
}

impl BoundaryMode {
    /// Whether renders take the config's own boundary.
    pub fn takes_config_boundary(self) -> bool {
        self != BoundaryMode::Recorded
    }
}

/// The frontier entries a branch holds, for `BoundaryMode::Auto`'s verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrontierEntries {
    None,
    /// Only entries without `thinkingStripBoundaryTimestamp` (2.9.1's, or
    /// 2.4.3's before its first boundary).
    WithoutBoundary,
    /// At least one with it: pi-condense 2.4's.
    WithBoundary,
}

/// The boundary rule a policy's renders followed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundaryUsed {
    /// `recorded` or `config`.
    pub rule: &'static str,
    pub reason: String,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            policies: Policy::ALL.to_vec(),
            settings: Settings::default(),
            keep_renders: false,
            cache_model: CacheModel::Provider,
            long_retention: false,
            model: None,
            recorded_policy: Policy::None,
            catalog: Catalog::default(),
            chars_per_token: None,
            thinking_boundary: BoundaryMode::Auto,
            gate: gate::GateSettings::default(),
            contexts: Contexts::None,
        }
    }
}

/// Renders done out of renders to do, readable from another thread.
#[derive(Debug, Default)]
pub struct Progress {
    pub total: AtomicU64,
    pub done: AtomicU64,
}

impl Progress {
    fn advance(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }
}

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
    fn new(settings: gate::GateSettings) -> Self {
        GateTotals {
            settings,
            counts: [0; 5],
        }
    }

    fn add(&mut self, reason: gate::Reason) {
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
}

#[derive(Debug, Clone)]
pub struct Replay {
    pub calls: Vec<CallInfo>,
    pub policies: Vec<PolicyReplay>,
    pub cache_model: CacheModel,
    pub long_retention: bool,
    pub calibration: Calibration,
    /// Per calibrated model key: its `provider/id` and whether the catalog
    /// knows it.
    pub models: Vec<(u64, String, bool)>,
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

/// A session file parsed once, with its model calls, what the file says
/// about each, and the calibration: what every configuration a replay or
/// a tune renders shares.
pub struct Prepared<'a> {
    file: SessionFile<'a>,
    path: Vec<u32>,
    calls: Vec<crate::sessionfile::ModelCall>,
    infos: Vec<CallInfo>,
    meta: Vec<calls::CallMeta>,
    /// Per model key: `provider/id` and whether the catalog knows it.
    models: Vec<(u64, String, bool)>,
    calibration: Calibration,
    options: ReplayOptions,
    /// The state per call, per dialect, built when a walk first needs it.
    timelines: timeline::Timelines,
    conversions: requests::Conversions,
    /// What frontier entries the branch holds.
    frontier_entries: FrontierEntries,
    /// Lines pi skips: how many, and the first line numbers.
    skipped: (usize, Vec<u32>),
}

impl<'a> Prepared<'a> {
    /// Parses `bytes` and calibrates. `walks`: how many policy passes the
    /// caller will run (for the progress total).
    pub fn new(
        bytes: &'a [u8],
        options: &ReplayOptions,
        progress: Option<&Progress>,
        walks: usize,
    ) -> Result<Self> {
        Self::build(bytes, options, progress, walks, false)
    }

    /// As `new`, for walks that will run on several threads (a tune): the
    /// state of the dialect the calibration pass does not rebuild is
    /// rebuilt on the pool meanwhile, so no walk waits for it later. It
    /// costs the memory of both rebuilds at once.
    pub fn new_for_pool(
        bytes: &'a [u8],
        options: &ReplayOptions,
        progress: Option<&Progress>,
        walks: usize,
    ) -> Result<Self> {
        Self::build(bytes, options, progress, walks, true)
    }

    fn build(
        bytes: &'a [u8],
        options: &ReplayOptions,
        progress: Option<&Progress>,
        walks: usize,
        pool: bool,
    ) -> Result<Self> {
        if bytes
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c))
        {
            return Err(crate::error::PruneError::new(
                crate::error::Code::InvalidSession,
                "empty file: not a pi session",
            ));
        }
        let file = SessionFile::parse(bytes).map_err(located)?;
        let skipped = file.skipped_lines(SKIPPED_LINES_LISTED);
        let path = path_to(&file, &Leaf::Active).map_err(located)?.entries;
        let calls = model_calls(&file, &path);
        let infos = call_infos(&file, &path, &calls);
        if let Some(p) = progress {
            // The provider model measures the recorded policy once first
            // (the calibration pass).
            let passes = walks + usize::from(options.cache_model.is_provider());
            p.total
                .fetch_add((calls.len() * passes) as u64, Ordering::Relaxed);
        }
        let meta = calls::call_meta(
            &file,
            &path,
            &calls,
            options.model.as_ref(),
            &options.catalog,
        );
        let models = models_of(&meta, &options.catalog);
        let frontier_entries = frontier_entries(&file, &path);
        let mut prepared = Prepared {
            frontier_entries,
            skipped,
            file,
            path,
            calls,
            infos,
            meta,
            models,
            calibration: Calibration::fit(&[], options.chars_per_token),
            options: options.clone(),
            timelines: Default::default(),
            conversions: Default::default(),
        };
        prepared.calibration = prepared.calibrate(progress, pool)?;
        Ok(prepared)
    }

    /// The tokens per character per model: under the provider model fitted
    /// on the recorded policy's measure pass (with the other dialect's
    /// state rebuilt meanwhile for a pool); under the prefix rule fixed.
    fn calibrate(&self, progress: Option<&Progress>, pool: bool) -> Result<Calibration> {
        let options = &self.options;
        Ok(if let CacheModel::Prefix(rule) = &options.cache_model {
            let mut c = Calibration::fit(&[], Some(rule.chars_per_token));
            for (k, _, _) in &self.models {
                c.by_model.insert(*k, c.factor(*k));
            }
            c
        } else {
            // For a pool, the other dialect's state is rebuilt meanwhile,
            // when a policy will need it.
            let recorded = options.recorded_policy.dialect();
            let other = options
                .policies
                .iter()
                .map(|p| p.dialect())
                .find(|&d| d != recorded)
                .filter(|_| pool);
            let measure = || {
                self.walk(&options.settings, progress)
                    .run(options.recorded_policy, walk::Pass::Measure)
            };
            // rayon::join from outside the pool would move the pass to a
            // worker thread, whose allocator heap then holds its freed
            // memory for the rest of the replay: without a rebuild beside
            // it, the pass stays on this thread.
            let measured = match other {
                Some(d) => {
                    let rebuild = || {
                        self.timelines.get(&self.file, &self.path, &self.calls, d);
                    };
                    rayon::join(measure, rebuild).0
                }
                None => measure(),
            };
            Calibration::fit(&measured?.points, options.chars_per_token)
        })
    }

    fn walk<'w>(
        &'w self,
        settings: &'w Settings,
        progress: Option<&'w Progress>,
    ) -> walk::Walk<'w, 'a> {
        walk::Walk {
            prepared: self,
            settings,
            progress,
        }
    }

    /// One policy over every call, rendered with `settings`.
    pub fn run(
        &self,
        policy: Policy,
        settings: &Settings,
        progress: Option<&Progress>,
    ) -> Result<PolicyReplay> {
        self.walk(settings, progress).run(policy, walk::Pass::Price)
    }

    /// One release over every call, once per member of `family` (the
    /// release gated or not, with settings that differ at most in their
    /// thinking strip: they share every phase before it).
    pub fn run_family(
        &self,
        family: &[(Policy, &Settings)],
        progress: Option<&Progress>,
    ) -> Result<Vec<PolicyReplay>> {
        let settings = family.first().map_or(&self.options.settings, |m| m.1);
        self.walk(settings, progress)
            .run_family(family, walk::Pass::Price)
    }

    pub fn model_calls(&self) -> usize {
        self.calls.len()
    }

    /// Lines pi skips (`SessionFile::skipped_lines`): how many, and the
    /// first line numbers.
    pub fn skipped_lines(&self) -> &(usize, Vec<u32>) {
        &self.skipped
    }
}

/// What the file says of each model call: ids and time.
fn call_infos(
    file: &SessionFile<'_>,
    path: &[u32],
    calls: &[crate::sessionfile::ModelCall],
) -> Vec<CallInfo> {
    calls
        .iter()
        .map(|c| {
            let entry = file.entry(path[c.assistant] as usize);
            let stamped = entry
                .message()
                .and_then(|m| m.get("timestamp"))
                .and_then(|t| t.number())
                .filter(|t| t.is_finite());
            let time = stamped.or(match date_of(entry.timestamp()) {
                DateValue::Time(t) if t.is_finite() => Some(t),
                _ => None,
            });
            CallInfo {
                entry_id: id_string(&entry),
                leaf_id: c.leaf.map(|l| id_string(&file.entry(path[l] as usize))),
                time,
            }
        })
        .collect()
}

/// Per model key of the calls: `provider/id` and whether the catalog
/// knows it, in order of first use.
fn models_of(meta: &[calls::CallMeta], catalog: &Catalog) -> Vec<(u64, String, bool)> {
    let mut models: Vec<(u64, String, bool)> = Vec::new();
    for m in meta {
        if !models.iter().any(|(k, _, _)| *k == m.model_key) {
            let name = m.model.name();
            let known = catalog.get(&m.model.provider, &m.model.id).is_some();
            models.push((m.model_key, name, known));
        }
    }
    models
}

/// What frontier entries the branch holds.
fn frontier_entries(file: &SessionFile<'_>, path: &[u32]) -> FrontierEntries {
    let mut found = FrontierEntries::None;
    for &e in path {
        let entry = file.entry(e as usize);
        if entry.is("custom") && entry.custom_type_is(crate::sessionfile::condense::CUSTOM_FRONTIER)
        {
            if entry
                .data()
                .is_some_and(|d| d.get("thinkingStripBoundaryTimestamp").is_some())
            {
                return FrontierEntries::WithBoundary;
            }
            found = FrontierEntries::WithoutBoundary;
        }
    }
    found
}

/// Replays a session file's bytes.
pub fn replay(
    bytes: &[u8],
    options: &ReplayOptions,
    progress: Option<&Progress>,
) -> Result<Replay> {
    // `none` is always replayed: the other costs are given relative to it.
    let mut policies = options.policies.clone();
    if !policies.contains(&Policy::None) {
        policies.insert(0, Policy::None);
    }
    let mut prepared = Prepared::new(bytes, options, progress, policies.len())?;
    let settings = &options.settings;
    let mut results = Vec::with_capacity(policies.len());
    for (n, &p) in policies.iter().enumerate() {
        results.push(prepared.run(p, settings, progress)?);
        // A dialect's rebuilt state goes once no later pass needs it.
        let later = policies[n + 1..]
            .iter()
            .chain(std::iter::once(&options.recorded_policy).filter(|r| !policies.contains(r)))
            .any(|q| q.dialect() == p.dialect());
        if !later {
            prepared.timelines.release(p.dialect());
        }
    }
    if !policies.contains(&options.recorded_policy) {
        let r = prepared.run(options.recorded_policy, settings, None)?;
        results.push(r);
    }
    let recorded = results
        .iter()
        .find(|r| r.policy == options.recorded_policy)
        .map(|r| {
            // The prefix rule prices at a fixed size, and its check against
            // the bill is judged by the same fit on its JSON sizes.
            let (verdict, priced_at) = match options.cache_model {
                CacheModel::Provider => (
                    prepared.calibration.unreconciled.clone(),
                    calibration::DEFAULT_CHARS_PER_TOKEN,
                ),
                CacheModel::Prefix(rule) => (
                    Calibration::fit(&r.points, None).unreconciled,
                    rule.chars_per_token,
                ),
            };
            reconcile(
                r,
                &prepared.meta,
                &options.catalog,
                options.long_retention,
                &prepared.calibration,
                verdict.map(|why| format!("{why}; priced at {priced_at} chars a token")),
            )
        })
        .unwrap_or_default();
    if !policies.contains(&options.recorded_policy) {
        results.pop();
    }
    let Prepared {
        infos,
        models,
        calibration,
        skipped,
        ..
    } = prepared;
    Ok(Replay {
        calls: infos,
        policies: results,
        cache_model: options.cache_model,
        long_retention: options.long_retention,
        calibration,
        models,
        reconciliation: recorded,
        skipped_lines: skipped,
    })
}

/// The class a call's recorded usage shows, given the previous recorded
/// call on the same model: `bill.rs`'s rule, on what the usage says.
fn recorded_class(
    usage: &calls::Usage,
    previous: Option<&calls::Usage>,
    preamble_tokens: f64,
) -> CallClass {
    let reads = match previous {
        None => bill::Reads {
            previous: false,
            lapsed: false,
            reached_previous: false,
            within_preamble: false,
        },
        Some(p) => {
            // The previous call's prompt, within a tolerance.
            let tail = p.cache_read + p.cache_write;
            let tolerance = 0.02 * tail + 16.0;
            bill::Reads {
                previous: true,
                lapsed: false,
                reached_previous: usage.cache_read + tolerance >= tail && usage.cache_read > 0.0,
                within_preamble: usage.cache_read <= preamble_tokens * 1.002 + 8.0,
            }
        }
    };
    bill::classify(reads)
}

/// Compares the recorded policy's priced calls with the usage pi recorded.
fn reconcile(
    r: &PolicyReplay,
    meta: &[calls::CallMeta],
    catalog: &Catalog,
    long: bool,
    calibration: &Calibration,
    unreconciled: Option<String>,
) -> Reconciliation {
    let mut out = Reconciliation {
        recorded_policy: r.policy.name(),
        status: "noUsage",
        ..Reconciliation::default()
    };
    let mut matched = 0usize;
    let mut any_cache = false;
    let mut previous: crate::hash::HashMap<u64, calls::Usage> = Default::default();
    for (k, p) in r.priced.iter().enumerate() {
        let m = &meta[k];
        let Some(u) = m.usage else { continue };
        any_cache |= u.cache_read > 0.0 || u.cache_write > 0.0;
        let f = calibration.factor(m.model_key);
        let preamble = f.preamble_tokens.unwrap_or(
            (m.preamble.tools_chars + m.preamble.system_chars) as f64 * f.tokens_per_char,
        );
        let mut class = recorded_class(&u, previous.get(&m.model_key), preamble);
        if p.class == CallClass::Expired && class == CallClass::Rewrite {
            class = CallClass::Expired;
        }
        previous.insert(m.model_key, u);
        out.calls += 1;
        if class == p.class {
            matched += 1;
        }
        let rules = catalog::rules_for(&m.model, long);
        out.recorded_cost_usd += bill::price(
            catalog.get(&m.model.provider, &m.model.id),
            u.input,
            u.cache_read,
            u.cache_write,
            long,
            rules.write_premium,
        );
        out.predicted_cost_usd += p.bill.cost_usd;
    }
    if out.calls == 0 {
        return out;
    }
    out.class_match = matched as f64 / out.calls as f64;
    out.status = "matched";
    if let Some(why) = unreconciled {
        out.status = "unreconciled";
        out.reason = Some(why);
    } else if !any_cache {
        out.status = "unreconciled";
        out.reason = Some(
            "the recorded usage shows no cache reads or writes at all: a proxy or a provider without prompt caching".into(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::record::Source;
    use crate::sessionfile::condense::state_json;
    use crate::sessionfile::{CondenseState, ContextView};
    use crate::state::State;

    /// The context at call `call` of a session file (its messages' JSON
    /// texts) and, for a pruning policy, a new engine holding them with the
    /// state of a fresh rebuild.
    fn engine_at(
        bytes: &[u8],
        call: usize,
        policy: Policy,
        settings: &Settings,
    ) -> (Vec<Vec<u8>>, Option<Engine>) {
        let file = SessionFile::parse(bytes).unwrap();
        let path = path_to(&file, &Leaf::Active).unwrap();
        let c = model_calls(&file, &path.entries)[call];
        let mut view = ContextView::new(&file, &path.entries);
        let mut state = CondenseState::new(policy.dialect());
        let mut texts: Vec<Vec<u8>> = Vec::new();
        if let Some(leaf) = c.leaf {
            view.seek(leaf).unwrap();
            for &e in &path.entries[..=leaf] {
                state.apply(file.entry(e as usize)).unwrap();
            }
            texts = view
                .messages()
                .iter()
                .map(|&id| view.message(id).json.to_vec())
                .collect();
        }
        let engine = policy.config(settings).unwrap().map(|config| {
            let mut engine = Engine::new(policy.dialect());
            engine.set_config(config);
            engine.set_state(State::from_json(&state_json(&state), policy.dialect()).unwrap());
            if policy.uses_boundary() {
                engine.set_boundary(state.thinking_boundary());
            }
            engine.sync(0, &json_array(&texts), Source::Bytes).unwrap();
            engine
        });
        (texts, engine)
    }

    fn json_array(texts: &[Vec<u8>]) -> Vec<u8> {
        let mut array = b"[".to_vec();
        array.extend_from_slice(&texts.join(&b","[..]));
        array.push(b']');
        array
    }

    /// The output hash of a render made from scratch: a fresh context view
    /// at the call's leaf, the state object of a fresh rebuild, a new engine.
    fn fresh_output_hash(bytes: &[u8], call: usize, policy: Policy, settings: &Settings) -> u64 {
        let (mut texts, engine) = engine_at(bytes, call, policy, settings);
        if let Some(mut engine) = engine {
            let script = engine.render_script().unwrap();
            texts = script
                .slots()
                .iter()
                .map(|s| {
                    let mut out = Vec::new();
                    script.write_slot(s, &mut out);
                    out
                })
                .collect();
        }
        let digests: Vec<Digest> = texts.iter().map(|t| Digest::of(t)).collect();
        prefix_hash(&digests, &mut Vec::new())
    }

    /// pi's gate reads a slot's message from the engine's last render: the
    /// value is the message the render sends there (an input's, an edit's),
    /// found by its position or by search, and once the engine syncs
    /// again the last render is gone.
    #[test]
    fn the_gate_reads_the_engines_last_render() {
        use live::{RenderedSlots, SlotValues};
        let bytes = include_bytes!("../../sample/session.jsonl");
        let settings = Settings::default();
        let calls = {
            let file = SessionFile::parse(bytes).unwrap();
            let path = path_to(&file, &Leaf::Active).unwrap();
            model_calls(&file, &path.entries).len()
        };
        let (texts, engine) = engine_at(bytes, calls - 1, Policy::Config, &settings);
        let mut engine = engine.unwrap();
        let rendered = engine.render().unwrap();
        assert!(rendered.pruned, "the sample's last call has edits");
        let release = rendered.order;
        assert!(release.iter().any(|&s| s < 0));
        let script = engine.last_rendered().unwrap();
        let values = RenderedSlots {
            script: &script,
            release: &release,
        };
        for (p, slot) in script.slots().iter().enumerate() {
            let mut text = Vec::new();
            script.write_slot(slot, &mut text);
            let want = crate::json::parse_value(&text).unwrap();
            assert_eq!(values.value(release[p], Some(p)).unwrap(), want, "slot {p}");
            assert_eq!(values.value(release[p], None).unwrap(), want, "slot {p}");
        }
        for (i, text) in texts.iter().enumerate() {
            let want = crate::json::parse_value(text).unwrap();
            assert_eq!(values.value(i as i32, None).unwrap(), want, "input {i}");
        }
        let past = values.value(texts.len() as i32, None).unwrap_err();
        assert!(
            past.message.contains("past the engine's messages"),
            "{}",
            past.message
        );
        let unknown = values.value(i32::MIN, None).unwrap_err();
        assert!(
            unknown.message.contains("in neither"),
            "{}",
            unknown.message
        );
        drop(script);
        let last = texts.len() - 1;
        engine
            .sync(last, &json_array(&texts[last..]), Source::Bytes)
            .unwrap();
        assert!(engine.last_rendered().is_none());
    }

    /// Every render of the incremental replay (engine kept, indexer answers
    /// per flush) equals a render made from scratch, for every policy.
    #[test]
    fn incremental_renders_equal_fresh_ones() {
        let purge_soon = crate::json::parse_value(
            br#"{"contextPrune":{"purgeErrors":{"enabled":true,"cooldownTurns":1,"minArgChars":10},"recoveryGraceTurns":1}}"#,
        )
        .unwrap();
        for (bytes, settings) in [
            (
                &include_bytes!("../../sample/session.jsonl")[..],
                Settings::default(),
            ),
            (
                &include_bytes!("../../__test__/fixtures/sessionfile/flushes.jsonl")[..],
                Settings::new(Some(purge_soon)).unwrap(),
            ),
        ] {
            // The fresh render reads the recorded frontier's boundary.
            let options = ReplayOptions {
                settings: settings.clone(),
                keep_renders: true,
                thinking_boundary: BoundaryMode::Recorded,
                ..ReplayOptions::default()
            };
            let r = replay(bytes, &options, None).unwrap();
            assert!(!r.calls.is_empty());
            for p in &r.policies {
                assert_eq!(p.renders.len(), r.calls.len());
                for (k, render) in p.renders.iter().enumerate() {
                    assert_eq!(
                        render.output_hash,
                        fresh_output_hash(bytes, k, p.policy, &settings),
                        "policy {} call {k}",
                        p.policy.name()
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod gate_tests {
    use super::*;

    /// Behind the gate every request the pricer builds step by step equals
    /// one built afresh (`Requests::update` checks it under test), through
    /// holds, drafts carried from call to call and adoptions; an applied
    /// render is the release's own and a held one starts with the previous
    /// request.
    #[test]
    fn gated_requests_equal_fresh_ones() {
        let bytes = &include_bytes!("../../sample/session.jsonl")[..];
        for horizon in [None, Some(0.0), Some(1e9)] {
            let options = ReplayOptions {
                policies: vec![
                    Policy::Config,
                    Policy::ConfigGate,
                    Policy::V2_9,
                    Policy::V2_9Gate,
                ],
                keep_renders: true,
                gate: gate::GateSettings {
                    horizon,
                    ..Default::default()
                },
                ..ReplayOptions::default()
            };
            let r = replay(bytes, &options, None).unwrap();
            let by = |p: Policy| r.policies.iter().find(|q| q.policy == p).unwrap();
            for (plain, gated) in [
                (Policy::Config, Policy::ConfigGate),
                (Policy::V2_9, Policy::V2_9Gate),
            ] {
                let (a, g) = (by(plain), by(gated));
                for (k, x) in g.renders.iter().enumerate() {
                    let reason = x.gate.expect("a gated render has a reason");
                    if reason.applies() {
                        assert_eq!(
                            x.output_hash, a.renders[k].output_hash,
                            "{horizon:?} call {k}"
                        );
                    } else {
                        let prev = &g.renders[k - 1];
                        assert_eq!(x.break_index, prev.messages_after, "{horizon:?} call {k}");
                        assert_eq!(x.prefix_hash, prev.output_hash, "{horizon:?} call {k}");
                    }
                }
                let holds = g.gate.as_ref().unwrap().count(gate::Reason::Waits);
                if horizon == Some(1e9) {
                    assert_eq!(holds, 0);
                    assert_eq!(g.bill.cost_usd, a.bill.cost_usd);
                } else {
                    // The sample holds: drafts are carried and adopted.
                    assert!(holds > 0, "{horizon:?}");
                }
            }
        }
    }
}
