//! One policy's pass over a session's model calls, in order, on one kept
//! engine: at each call the context view moves to the call's leaf
//! ([`Context`]) and the state is the rebuild up to it (SESSIONS.md C.3;
//! `timeline.rs`, shared by every walk of the dialect); the engine re-syncs
//! only the messages from the first one that changed, hears only the
//! indexer answers a flush changed, takes the 2.4.3 boundary of the
//! frontier in force or its own config's ([`OwnBoundary`]), and renders
//! every phase but the thinking strip. Each lane (one per settings of a
//! family that differs only in that strip) finishes its own copy of the
//! render, measures it against its previous one (break, hashes), checks it
//! against the flush-gated invariant (`invariant.rs`), names the phases
//! behind what it changed (`cause.rs`) and prices it (`pricer.rs`, under
//! either cache model).

use xxhash_rust::xxh3::xxh3_64;

use super::cause::{policy_changes, Change, Current, Previous};
use super::compaction::{messages_json, summary_message, Check, Compaction, Compactions, Made};
use super::digest::Digests;
use super::invariant::{self, Violation};
use super::options::ReplayOptions;
use super::options::{BoundaryMode, Contexts};
use super::policy::Policy;
use super::prepared::{id_string, FrontierEntries, Prepared};
use super::pricer::{Pricer, Sent};
use super::progress::Progress;
use super::result::{BoundaryUsed, GateTotals, PolicyReplay, Render};
use super::settings::Settings;
use crate::cost::bill::CacheModel;
use crate::cost::calibration::Calibration;
use crate::cost::digest::first_difference;
use crate::cost::digest::Digest;
use crate::cost::kept::MessageValues;
use crate::cost::slot_value;
use crate::engine::{Engine, RenderedScript};
use crate::error::{PruneError, Result};
use crate::gate::hold::{self, Appended};
use crate::gate::rule::{decide, Carried, GateSettings, Reason};
use crate::json::value::write_list;
use crate::json::Json;
use crate::record::{array_len, Source};
use crate::script::{EditScript, Slot, Stats};
use crate::sessionfile::{ContextView, ModelCall, SessionError, SessionFile};

impl<'a> Prepared<'a> {
    /// Parses `bytes` and calibrates. `walks`: how many policy passes the
    /// caller will run (for the progress total).
    pub fn new(
        bytes: &'a [u8],
        options: &ReplayOptions,
        progress: Option<&Progress>,
        walks: usize,
    ) -> Result<Self> {
        Self::calibrated(bytes, options, progress, walks, false)
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
        Self::calibrated(bytes, options, progress, walks, true)
    }

    fn calibrated(
        bytes: &'a [u8],
        options: &ReplayOptions,
        progress: Option<&Progress>,
        walks: usize,
        pool: bool,
    ) -> Result<Self> {
        let mut prepared = Prepared::uncalibrated(bytes, options, progress, walks)?;
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
            for m in &self.models {
                c.by_model.insert(m.key, c.factor(m.key));
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
                    .run(options.recorded_policy, Pass::Measure)
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

    fn walk<'w>(&'w self, settings: &'w Settings, progress: Option<&'w Progress>) -> Walk<'w, 'a> {
        Walk {
            prepared: self,
            settings,
            progress,
        }
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
            .run_family(family, Pass::Price)
    }
}

/// Violations kept in full per policy (all are counted).
const KEPT_VIOLATIONS: usize = 1000;

/// What a lane keeps of its previous render.
#[derive(Default)]
struct Last {
    digests: Vec<Digest>,
    slots: Vec<Slot>,
    stats: Stats,
    inputs: usize,
}

/// The appended part of a hold (the previous request comes before it):
/// its slots and digests.
struct HeldSlots {
    slots: Vec<Slot>,
    out: Vec<Digest>,
}

/// The messages of a call's context, by output position (a policy that
/// sends the context as it is).
struct ContextValues<'c, 'v, 'f> {
    at: &'c Call<'v, 'f>,
}

impl MessageValues<Digest> for ContextValues<'_, '_, '_> {
    fn value(&self, _: &Digest, at: Option<usize>) -> Result<Json> {
        let id = at.and_then(|i| self.at.ids.get(i)).ok_or_else(unplaced)?;
        Ok(slot_value::message(&self.at.view.message(*id).json))
    }
}

/// The messages of a render's slots, the first at output position
/// `offset` (a hold's appended slots follow the previous request's).
struct SlotValues<'s> {
    script: &'s RenderedScript<'s>,
    slots: &'s [Slot],
    offset: usize,
}

impl MessageValues<Digest> for SlotValues<'_> {
    fn value(&self, _: &Digest, at: Option<usize>) -> Result<Json> {
        let slot = at
            .and_then(|i| i.checked_sub(self.offset))
            .and_then(|i| self.slots.get(i))
            .ok_or_else(unplaced)?;
        Ok(slot_value::shown(&self.script.shown(slot)))
    }
}

fn unplaced() -> PruneError {
    PruneError::new(
        crate::error::Code::InvalidArgument,
        "replay: a request asked for a message outside the render",
    )
}

/// One settings' pass through a family walk.
struct Lane<'p> {
    /// Its 2.4.3 thinking strip (the engine's config has none).
    thinking: Option<crate::config::ThinkingConfig>,
    /// Its own keepLastTurns, when the boundary comes from the config.
    keep: Option<f64>,
    own_boundary: Option<f64>,
    /// Renders whose recorded boundary differs from the config's own one
    /// (counted under `Auto`, where the strip reads a boundary).
    differs: usize,
    digests: Digests,
    last: Last,
    /// This call's output.
    out: Vec<Digest>,
    /// The cache-aware gate's settings, on a gated policy's lane.
    gate: Option<GateSettings>,
    /// What the gate carries from call to call (the horizon it learns from
    /// the release's rewrites), and the release's previous render (what the
    /// gate did not necessarily send).
    carried: Carried,
    release_last: Vec<Digest>,
    /// Its previous request's tokens, and the answer's (pi's compaction
    /// reads their sum).
    last_usage: Option<(f64, f64)>,
    /// What it sent, exported (`Contexts`).
    sent: Option<SentTexts>,
    /// pi's warms of its previous request before this call.
    warms: Vec<f64>,
    pricer: Pricer<'p>,
    result: PolicyReplay,
    /// The output's hashes as bytes, for the render's hashes.
    scratch: Vec<u8>,
}

/// What a lane exports of what it sent: the sent messages' JSON texts,
/// kept from one call to the next (rewritten from the first that changed),
/// and the policy's file under `Contexts::Dir`.
struct SentTexts {
    texts: Vec<Box<[u8]>>,
    file: Option<std::io::BufWriter<std::fs::File>>,
}

impl SentTexts {
    fn new(contexts: &Contexts, policy: Policy) -> Result<Option<Self>> {
        let file = match contexts {
            Contexts::None => return Ok(None),
            Contexts::InRenders => None,
            Contexts::Dir(dir) => {
                let path = dir.join(format!("{}.jsonl", policy.name()));
                let open = std::fs::create_dir_all(dir).and_then(|()| std::fs::File::create(&path));
                Some(std::io::BufWriter::new(open.map_err(|e| {
                    PruneError::new(
                        crate::error::Code::Io,
                        format!("contexts: cannot write {}: {e}", path.display()),
                    )
                })?))
            }
        };
        Ok(Some(SentTexts {
            texts: Vec::new(),
            file,
        }))
    }

    /// The sent array as JSON text.
    fn array(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(2 + self.texts.iter().map(|t| t.len() + 1).sum::<usize>());
        write_list(&mut out, b"[]", &self.texts, |out, t| {
            out.extend_from_slice(t)
        });
        out
    }
}

/// A lane's render, between finding its output and pricing it.
struct Found {
    stats: Stats,
    change: Change,
    violation: Option<Violation>,
    break_index: usize,
    /// Why a gated lane sent what it sent.
    gate: Option<Reason>,
}

/// The call every lane renders.
struct Call<'v, 'f> {
    k: usize,
    policy: Policy,
    pass: Pass,
    seek: Seek,
    flushed: bool,
    /// The 2.4.3 boundary of the frontier in force.
    recorded_boundary: Option<f64>,
    /// pi's compactions before this call under the walk's policy.
    compactions: &'v [Compaction],
    ids: &'v [u32],
    view: &'v ContextView<'f>,
}

/// Where a call's context stands.
#[derive(Debug, Clone, Copy)]
struct Seek {
    /// The leaf lay before the previous one: the view was rebuilt from the
    /// root.
    rewound: bool,
    /// The first context message that changed since the previous call.
    from: usize,
    /// `JSON.stringify(context).length`.
    chars_before: usize,
}

/// The context view, moved from call to call, with the context's size
/// kept per message and summed again only from the first that changed.
struct Context<'f> {
    view: ContextView<'f>,
    /// The compactions the walk's policy made (`compaction.rs`).
    compactions: Compactions,
    /// Digests by the view's message ids (a new view hands them out
    /// afresh).
    sizes: Digests,
    lens: Vec<u32>,
    sum: usize,
    /// Path entries the view has applied.
    applied: usize,
}

impl<'f> Context<'f> {
    fn new(file: &'f SessionFile<'f>, path: &[u32]) -> Self {
        Context {
            view: ContextView::planned(file, path),
            compactions: Compactions::default(),
            sizes: Digests::default(),
            lens: Vec::new(),
            sum: 0,
            applied: 0,
        }
    }

    /// Moves to `call`'s leaf.
    fn seek(&mut self, file: &'f SessionFile<'f>, path: &[u32], call: &ModelCall) -> Result<Seek> {
        let wanted = call.leaf.map_or(0, |l| l + 1);
        let rewound = wanted < self.applied;
        if rewound {
            // Clocks disagree: rebuild from the root.
            *self = Context::new(file, path);
        }
        let from = match call.leaf {
            Some(l) => {
                self.view.seek(l).map_err(SessionError::located)?;
                self.view.take_changed_from()
            }
            None => 0,
        };
        self.applied = wanted;
        let ids = call_ids(&self.view, call);
        let kept = from.min(self.lens.len()).min(ids.len());
        self.sum -= self.lens.drain(kept..).map(|l| l as usize).sum::<usize>();
        for &id in &ids[kept..] {
            let len = self.sizes.kept(&self.view, id).len;
            self.lens.push(len);
            self.sum += len as usize;
        }
        Ok(Seek {
            rewound,
            from,
            chars_before: array_len(ids.len(), self.sum),
        })
    }
}

/// The context messages of a call (none before its first entry).
fn call_ids<'v>(view: &'v ContextView<'_>, call: &ModelCall) -> &'v [u32] {
    if call.leaf.is_some() {
        view.messages()
    } else {
        &[]
    }
}

/// 2.4.3's rule for a config's own thinking boundary, run at each flush
/// that moved the frontier over the branch's assistant timestamps up to
/// the leaf (SESSIONS.md C.2).
#[derive(Default)]
struct OwnBoundary {
    assistant_times: Vec<f64>,
    /// Path entries read so far.
    timed: usize,
}

impl OwnBoundary {
    fn advance(
        &mut self,
        file: &SessionFile<'_>,
        path: &[u32],
        applied: usize,
        lanes: &mut [Lane<'_>],
    ) {
        for &e in &path[self.timed..applied] {
            let entry = file.entry(e as usize);
            if entry.is("message") && entry.message_role_is("assistant") {
                let t = entry
                    .message()
                    .and_then(|m| m.get("timestamp"))
                    .and_then(|t| t.number())
                    .unwrap_or(f64::NAN);
                self.assistant_times.push(t);
            }
        }
        self.timed = applied;
        for lane in lanes {
            if let Some(keep) = lane.keep {
                lane.own_boundary = crate::frontier::compute_thinking_boundary(
                    &self.assistant_times,
                    keep,
                    lane.own_boundary,
                );
            }
        }
    }
}

/// Two boundaries are the same (NaN equal to NaN, as a render sees them).
fn same_boundary(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => false,
    }
}

/// The thinking strip of a 2.4.3 render config: enabled, keepLastTurns.
fn strip_of(config: Option<&crate::json::Json>) -> Option<f64> {
    let strip = config?.get("thinkingStrip")?;
    if !strip.get("enabled").is_some_and(crate::json::Json::truthy) {
        return None;
    }
    Some(
        strip
            .get("keepLastTurns")
            .map_or(16.0, crate::json::Json::to_number),
    )
}

/// Whether a pass prices the calls or only measures them for the
/// calibration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Price,
    Measure,
}

/// One policy's walk over a prepared file, with one settings (or a family).
pub struct Walk<'w, 'f> {
    pub prepared: &'w Prepared<'f>,
    pub settings: &'w Settings,
    pub progress: Option<&'w Progress>,
}

impl<'w, 'f> Walk<'w, 'f> {
    /// Names the model call and policy in a render error, and the file
    /// line of the message it concerns.
    fn at_call(&self, mut e: PruneError, at: &Call<'_, '_>) -> PruneError {
        let file = &self.prepared.file;
        if let Some(&id) = e.message_index.and_then(|i| at.ids.get(i)) {
            e.line = Some(file.entry(at.view.message(id).entry as usize).line as usize);
        }
        e.message = format!(
            "model call {} (entry {}), policy {}: {}",
            at.k,
            self.prepared.infos[at.k].entry_id,
            at.policy.name(),
            e.message
        );
        e
    }

    pub fn run(&self, policy: Policy, pass: Pass) -> Result<PolicyReplay> {
        self.run_family(&[(policy, self.settings)], pass)
            .map(|mut results| results.remove(0))
    }

    /// One pass per member of `family` (see `walk_family`), each member
    /// walking alone when they would compact at different calls.
    pub fn run_family(
        &self,
        family: &[(Policy, &Settings)],
        pass: Pass,
    ) -> Result<Vec<PolicyReplay>> {
        if let Some(results) = self.walk_family(family, pass)? {
            return Ok(results);
        }
        if let Some(p) = self.progress {
            let calls = self.prepared.calls.len() * family.len();
            p.total
                .fetch_add(calls as u64, std::sync::atomic::Ordering::Relaxed);
        }
        let mut results = Vec::with_capacity(family.len());
        for &member in family {
            let walked = self.walk_family(&[member], pass)?;
            results.extend(walked.expect("a walk alone never disagrees with itself"));
        }
        Ok(results)
    }

    /// A lane for `settings`.
    fn lane(&self, policy: Policy, settings: &Settings) -> Result<Lane<'w>> {
        let p = self.prepared;
        let config_json = policy.config_json(settings);
        let thinking = policy.config(settings)?.and_then(|c| c.thinking);
        let keep = strip_of(config_json.as_ref())
            .filter(|_| p.options.thinking_boundary.takes_config_boundary());
        let mut pricer = Pricer::new(
            &p.options.cache_model,
            &p.meta,
            &p.options.catalog,
            &p.calibration,
            (p.options.long_retention, p.options.cache_warming),
            &p.conversions,
        );
        if policy.gated() {
            pricer.track_gate();
        }
        Ok(Lane {
            thinking,
            keep,
            own_boundary: None,
            differs: 0,
            digests: Digests::default(),
            last: Last::default(),
            out: Vec::new(),
            gate: policy.gated().then_some(p.options.gate),
            carried: Carried::default(),
            release_last: Vec::new(),
            last_usage: None,
            sent: match p.hidden.contains(&policy) {
                true => None,
                false => SentTexts::new(&p.options.contexts, policy)?,
            },
            warms: Vec::new(),
            pricer,
            result: PolicyReplay {
                policy,
                config: config_json,
                chars_sent: 0,
                renders: Vec::new(),
                checked: 0,
                violation_count: 0,
                violations: Vec::new(),
                bill: Default::default(),
                points: Vec::new(),
                priced: Vec::new(),
                boundary: None,
                gate: policy.gated().then(|| GateTotals::new(p.options.gate)),
                warm_times: Vec::new(),
                parts: Vec::new(),
            },
            scratch: Vec::new(),
        })
    }

    /// One pass per member of `family`: policies of one release, gated or
    /// not, with or without 2.4.3's thinking strip (`Policy::family` the
    /// same), whose settings differ at most in that strip. The view, the state, the engine and
    /// every phase before the strip are shared, and each member's lane
    /// strips, gates, measures and prices its own copy of the render.
    /// None when the members would compact at different calls.
    fn walk_family(
        &self,
        family: &[(Policy, &Settings)],
        pass: Pass,
    ) -> Result<Option<Vec<PolicyReplay>>> {
        let p = self.prepared;
        let policy = family[0].0.family();
        debug_assert!(family.iter().all(|(q, _)| q.family() == policy));
        let mut lanes = family
            .iter()
            .map(|&(q, s)| self.lane(q, s))
            .collect::<Result<Vec<_>>>()?;
        // The engine renders every phase but the strip, which each lane
        // applies with its own config and boundary.
        let config = policy.config(family[0].1)?.map(|mut c| {
            c.thinking = None;
            c
        });
        let fresh_engine = || {
            config.clone().map(|c| {
                let mut e = Engine::new(policy.dialect());
                e.set_config(c);
                e
            })
        };
        let timeline = p
            .timelines
            .get(&p.file, &p.path, &p.calls, policy.dialect());
        let mut context = Context::new(&p.file, &p.path);
        let mut engine = fresh_engine();
        let mut own = OwnBoundary::default();
        let mut bytes: Vec<u8> = Vec::new();
        for (k, call) in p.calls.iter().enumerate() {
            let Some(made) = self.compact(&mut context, &mut lanes, (k, call), pass)? else {
                return Ok(None);
            };
            let seek = context.seek(&p.file, &p.path, call)?;
            if seek.rewound {
                engine = fresh_engine();
                own = OwnBoundary::default();
                for lane in &mut lanes {
                    lane.digests = Digests::default();
                    lane.own_boundary = None;
                }
            }
            let step = timeline.step(k)?;
            let ids = call_ids(&context.view, call);
            let at = Call {
                k,
                policy,
                pass,
                seek,
                flushed: step.flushed,
                recorded_boundary: step.boundary,
                compactions: &made,
                ids,
                view: &context.view,
            };
            let base = match &mut engine {
                Some(engine) => {
                    if step.flushed {
                        timeline.answer(k, engine)?;
                    }
                    if self.computes_boundary(policy, step.frontier_moved, &lanes) {
                        own.advance(&p.file, &p.path, context.applied, &mut lanes);
                    }
                    Some(self.render_base(engine, &at, &mut bytes)?)
                }
                None => None,
            };
            self.lanes(&mut lanes, engine.as_mut(), base, &at)?;
        }
        Ok(Some(
            lanes.into_iter().map(|lane| self.finish(lane)).collect(),
        ))
    }

    /// pi's `compaction.reserveTokens` for call `k`'s model, when its
    /// compaction is on (the gate's budget never passes the threshold).
    fn compaction_reserve(&self, k: usize) -> Option<f64> {
        let p = self.prepared;
        let settings = &p.options.compaction;
        settings
            .enabled
            .then(|| settings.for_model(&p.meta[k].model.name()).0)
    }

    /// pi's compactions before call `k` (`compaction.rs`), which every lane
    /// makes alike: made in the context's view, billed to each lane. None
    /// when the lanes would compact differently (each then walks alone).
    fn compact(
        &self,
        context: &mut Context<'_>,
        lanes: &mut [Lane<'_>],
        (k, call): (usize, &ModelCall),
        pass: Pass,
    ) -> Result<Option<Vec<Compaction>>> {
        let p = self.prepared;
        let meta = &p.meta[k];
        let model = meta.model.name();
        let window = lanes.first().map_or(0.0, |l| l.pricer.window(k));
        let appended = context.view.applied()..call.leaf.map_or(0, |l| l + 1);
        // The policy the session was recorded under made the file's
        // compactions, and only those, when its usage says the file is its
        // (the calibration reconciled it: the measure pass walks it so).
        let file_is_recorded = pass == Pass::Measure || p.calibration.unreconciled.is_none();
        let appended_chars: f64 = appended
            .clone()
            .map(|i| p.compaction_facts.entries[i].chars)
            .sum();
        let tpc = p.calibration.factor(meta.model_key).tokens_per_char;
        let mut decided: Option<Vec<Compaction>> = None;
        for lane in lanes.iter() {
            let made = context.compactions.decide(&Check {
                facts: &p.compaction_facts,
                settings: &p.options.compaction,
                model: &model,
                window,
                appended: appended.clone(),
                usage: lane.last_usage.map(|(prompt, output)| prompt + output),
                next_tokens: lane
                    .last_usage
                    .map(|(prompt, _)| prompt + appended_chars * tpc),
                recorded: file_is_recorded && lane.result.policy == p.options.recorded_policy,
            });
            match &decided {
                Some(d) if *d != made => return Ok(None),
                Some(_) => {}
                None => decided = Some(made),
            }
        }
        let made = decided.unwrap_or_default();
        for c in &made {
            match c.made {
                Made::File { at } => context.view.make_file_compaction(at),
                Made::Simulated {
                    after,
                    first_kept,
                    tokens_before,
                } => {
                    let summary = summary_message(c.summary_chars, tokens_before, p.infos[k].time);
                    context
                        .view
                        .make_compaction(after, first_kept, summary)
                        .map_err(SessionError::located)?;
                }
            }
            for lane in lanes.iter_mut() {
                lane.pricer.compaction(k, c);
                if let Some(file) = lane.sent.as_mut().and_then(|s| s.file.as_mut()) {
                    self.write_compaction(file, k, c)?;
                }
            }
        }
        context.compactions.settle(&p.compaction_facts, &made);
        Ok(Some(made))
    }

    /// Whether the lanes' own boundaries move at this call: 2.4.3 computes
    /// its boundary at a flush that processed something, the one that
    /// writes a frontier entry.
    fn computes_boundary(&self, policy: Policy, frontier_moved: bool, lanes: &[Lane<'_>]) -> bool {
        policy.uses_boundary()
            && self
                .prepared
                .options
                .thinking_boundary
                .takes_config_boundary()
            && frontier_moved
            && lanes.iter().any(|l| l.keep.is_some())
    }

    /// The engine synced to the call's context (from the first message that
    /// changed) and rendered up to the thinking strip.
    fn render_base(
        &self,
        engine: &mut Engine,
        at: &Call<'_, '_>,
        bytes: &mut Vec<u8>,
    ) -> Result<EditScript> {
        let fail = |e| self.at_call(e, at);
        let from = at.seek.from.min(engine.len());
        if from < engine.len() || at.ids.len() != engine.len() {
            bytes.clear();
            write_list(bytes, b"[]", &at.ids[from..], |out, &id| {
                out.extend_from_slice(&at.view.message(id).json)
            });
            engine.sync(from, bytes, Source::Bytes).map_err(fail)?;
        }
        engine.render_before_thinking().map_err(fail)
    }

    /// Every lane's render of the call: the shared render finished with the
    /// lane's strip (or, without an engine, the context itself), measured
    /// and priced.
    fn lanes(
        &self,
        lanes: &mut [Lane<'w>],
        mut engine: Option<&mut Engine>,
        mut base: Option<EditScript>,
        at: &Call<'_, '_>,
    ) -> Result<()> {
        let policy = at.policy;
        if at.pass == Pass::Price {
            for lane in lanes.iter_mut() {
                self.lane_warms(lane, at)?;
            }
        }
        let mode = self.prepared.options.thinking_boundary;
        let boundary_of = |lane: &Lane<'_>| {
            if !policy.uses_boundary() {
                None
            } else if mode.takes_config_boundary() {
                lane.own_boundary
            } else {
                at.recorded_boundary
            }
        };
        for lane in lanes.iter_mut() {
            if policy.uses_boundary()
                && mode == BoundaryMode::Auto
                && lane.thinking.is_some()
                && !same_boundary(at.recorded_boundary, lane.own_boundary)
            {
                lane.differs += 1;
            }
        }
        let count = lanes.len();
        let mut n = 0;
        while n < count {
            // Lanes next to each other with the same strip and boundary (a
            // configuration and its gated twin) share one render.
            let boundary = boundary_of(&lanes[n]);
            let mut end = n + 1;
            while end < count
                && lanes[end].thinking == lanes[n].thinking
                && same_boundary(boundary_of(&lanes[end]), boundary)
            {
                end += 1;
            }
            // The last group takes the shared render itself.
            let script = match (&mut base, end == count) {
                (Some(b), true) => Some(std::mem::take(b)),
                (Some(b), false) => Some(b.clone()),
                (None, _) => None,
            };
            match (engine.as_deref_mut(), script) {
                (Some(engine), Some(script)) => {
                    let rendered = engine
                        .with_strip(script, lanes[n].thinking.as_ref(), boundary)
                        .map_err(|e| self.at_call(e, at))?;
                    let mut shared = None;
                    let share = end - n > 1;
                    let mut spent = Vec::new();
                    // Whether the group's last lane keeps the render's slots.
                    let mut last_keeps = false;
                    for (m, lane) in lanes[n..end].iter_mut().enumerate() {
                        let (found, appended) =
                            self.lane_rendered(lane, at, &rendered, share.then_some(&mut shared))?;
                        // A hold sends its appended slots after the
                        // previous request's messages.
                        let values = SlotValues {
                            script: &rendered,
                            slots: appended.as_deref().unwrap_or(rendered.slots()),
                            offset: appended.as_ref().map_or(0, |_| lane.last.digests.len()),
                        };
                        self.lane_measure(lane, at, found, &values)?;
                        match appended {
                            // A hold: the render's slots were not sent.
                            Some(appended) => lane.last.slots.extend(appended),
                            None if n + m + 1 == end => last_keeps = true,
                            None => {
                                let slots = rendered.slots().to_vec();
                                spent.push(std::mem::replace(&mut lane.last.slots, slots));
                            }
                        }
                    }
                    let slots = rendered.into_slots();
                    if last_keeps {
                        spent.push(std::mem::replace(&mut lanes[end - 1].last.slots, slots));
                    } else {
                        spent.push(slots);
                    }
                    for slots in spent {
                        engine.recycle_slots(slots);
                    }
                }
                _ => {
                    for lane in &mut lanes[n..end] {
                        let found = self.lane_kept(lane, at);
                        self.lane_measure(lane, at, found, &ContextValues { at })?;
                    }
                }
            }
            n = end;
        }
        Ok(())
    }

    /// pi's warms of the lane's previous request before this call
    /// (`warmer.rs`, sent through the lane's cache by its pricer), written
    /// to its contexts file as lines of kind `warm`.
    fn lane_warms(&self, lane: &mut Lane<'_>, at: &Call<'_, '_>) -> Result<()> {
        let time = self.prepared.infos[at.k].time;
        lane.warms = lane.pricer.warm(at.k, time, !at.compactions.is_empty());
        if let Some(sent) = lane.sent.as_mut().filter(|_| !lane.warms.is_empty()) {
            let array = sent.array();
            if let Some(file) = sent.file.as_mut() {
                for &t in &lane.warms {
                    self.write_line(file, at.k, "warm", Some(t), |o| {
                        o.raw("messages", |out| out.extend_from_slice(&array));
                    })?;
                }
            }
        }
        lane.result.warm_times.extend_from_slice(&lane.warms);
        Ok(())
    }

    /// A lane's result once every call is done.
    fn finish(&self, lane: Lane<'_>) -> PolicyReplay {
        let mut result = lane.result;
        (result.bill, result.points) = lane.pricer.finish();
        result.boundary = result
            .policy
            .uses_boundary()
            .then(|| self.boundary_used(lane.differs));
        result
    }

    /// The rule a lane's renders followed (`differs`: renders where the
    /// recorded boundary differed from the config's own).
    fn boundary_used(&self, differs: usize) -> BoundaryUsed {
        let frontier_entries = self.prepared.frontier_entries;
        let (rule, reason) = match self.prepared.options.thinking_boundary {
            BoundaryMode::Recorded => ("recorded", "as asked".to_string()),
            BoundaryMode::Config => ("config", "as asked".to_string()),
            BoundaryMode::Auto if frontier_entries == FrontierEntries::None => (
                "config",
                "the session holds no pi-condense 2.4 frontier entries".to_string(),
            ),
            BoundaryMode::Auto
                if differs > 0 && frontier_entries == FrontierEntries::WithoutBoundary =>
            {
                (
                    "config",
                    "the session holds no pi-condense 2.4 frontier entries (its frontier entries carry no thinking boundary)".to_string(),
                )
            }
            BoundaryMode::Auto if differs > 0 => (
                "config",
                format!(
                    "the session's frontier entries differ from this config's keepLastTurns at {differs} of {} renders",
                    self.prepared.calls.len()
                ),
            ),
            BoundaryMode::Auto => (
                "recorded",
                "the session's frontier entries, written under this config".to_string(),
            ),
        };
        BoundaryUsed { rule, reason }
    }

    /// A lane's output under an engine: digests (those of `shared`, when
    /// another lane of its group has digested the same render), the wire
    /// conversions the pricer needs, the gate's choice, the invariant's
    /// check and the phase behind each earlier message it changed. Hands
    /// back the appended slots of a hold (else the render's slots are what
    /// was sent).
    fn lane_rendered(
        &self,
        lane: &mut Lane<'_>,
        at: &Call<'_, '_>,
        script: &RenderedScript<'_>,
        shared: Option<&mut Option<Vec<Digest>>>,
    ) -> Result<(Found, Option<Vec<Slot>>)> {
        let k = at.k;
        lane.out.clear();
        match shared {
            // Another lane of the group has digested this render.
            Some(Some(out)) => lane.out.extend_from_slice(out),
            share => {
                for slot in script.slots() {
                    let d = lane.digests.slot(at.view, at.ids, script, slot);
                    lane.out.push(d);
                }
                if let Some(shared) = share {
                    *shared = Some(lane.out.clone());
                }
            }
        }
        let (gate, held) = match lane.gate {
            Some(settings) if at.pass == Pass::Price => {
                let (reason, held) = self.gate(lane, at, script, &settings)?;
                (Some(reason), held)
            }
            _ => (None, None),
        };
        let last = &lane.last;
        let break_index = first_difference(&last.digests, &lane.out);
        if let Some(sent) = lane.sent.as_mut() {
            // A hold sends the appended slots after the previous request's
            // (its break), which the release's script shows.
            let slots = match held.as_deref() {
                Some(appended) => appended,
                None => &script.slots()[break_index..],
            };
            sent.texts.truncate(break_index);
            for slot in slots {
                let mut text = Vec::new();
                script.write_slot(slot, &mut text);
                sent.texts.push(text.into());
            }
        }
        let stats = script.stats();
        let strip = |i: usize| script.final_answer_strip(i);
        let previous = Previous {
            slots: &last.slots,
            stats: last.stats,
        };
        // On a hold the policy's changes are not looked for (the hold
        // changed nothing sent) nor the invariant checked (gated).
        let current = Current {
            slots: script.slots(),
            stats,
            dialect: lane.result.policy.dialect(),
            final_answer_strip: &strip,
        };
        let mut change = self.change(at, last);
        if held.is_none()
            && k > 0
            && !at.seek.rewound
            && at.seek.from >= last.inputs
            && !last.digests.is_empty()
        {
            // The phase behind each earlier output message the policy
            // changed (the first few), for the pricer's causes.
            change.policy = policy_changes(
                &last.digests,
                &lane.out,
                break_index,
                at.flushed,
                &previous,
                &current,
            );
        }
        let mut violation = None;
        if lane.gate.is_none()
            && invariant::applies(k, at.flushed, at.seek.rewound, at.seek.from, last.inputs)
        {
            lane.result.checked += 1;
            violation = invariant::check(k, break_index, last.digests.len(), &previous, &current);
        }
        let found = Found {
            stats,
            change,
            violation,
            break_index,
            gate,
        };
        // The caller keeps the sent slots: the render's, or on a hold the
        // previous ones and the appended.
        Ok((found, held))
    }

    /// A gated lane's choice at this call between the release's render
    /// (`lane.out`) and the hold: the previous request's messages followed
    /// by those appended since, each as the release renders it, or as it
    /// is where the release folds it into a chain block further back (a
    /// hold never loses a message: `gate::hold`, which pi's live gate
    /// builds its holds with too). On a hold `lane.out` becomes the hold
    /// and the appended slots are returned.
    fn gate(
        &self,
        lane: &mut Lane<'_>,
        at: &Call<'_, '_>,
        script: &RenderedScript<'_>,
        settings: &GateSettings,
    ) -> Result<(Reason, Option<Vec<Slot>>)> {
        let k = at.k;
        let meta = &self.prepared.meta;
        let since = &meta[k].since;
        let last = &lane.last;
        let cold_context = k == 0
            || (last.inputs == 0 && last.digests.is_empty())
            || meta[k - 1].model_key != meta[k].model_key
            || at.seek.rewound
            || at.seek.from < last.inputs
            || !at.compactions.is_empty()
            || since.branch
            || since.edit;
        let rewrote = first_difference(&lane.release_last, &lane.out) < lane.release_last.len();
        lane.release_last.clone_from(&lane.out);
        if cold_context {
            lane.carried.cold();
            lane.pricer.forget_draft();
            return Ok((Reason::Cold, None));
        }
        lane.carried.horizon.observe(rewrote);
        let mut held = HeldSlots {
            slots: Vec::new(),
            out: Vec::new(),
        };
        let slots = script.slots();
        let input_of = |i: usize| slots[i].input();
        for part in hold::appended(slots.len(), &input_of, last.inputs, at.ids.len()) {
            let (slot, digest) = match part {
                Appended::Render(i) => (script.slots()[i].clone(), lane.out[i]),
                Appended::Input(j) => (Slot::keep(j), lane.digests.kept(at.view, at.ids[j])),
            };
            held.slots.push(slot);
            held.out.push(digest);
        }
        let time = self.prepared.infos[k].time;
        let apply = SlotValues {
            script,
            slots: script.slots(),
            offset: 0,
        };
        let hold = SlotValues {
            script,
            slots: &held.slots,
            offset: lane.last.digests.len(),
        };
        let inputs = lane.pricer.gate(
            k,
            (&lane.out, &apply),
            (&lane.last.digests, &held.out, &hold),
            time,
            (&lane.carried, self.compaction_reserve(k)),
        )?;
        let reason = decide(&inputs, settings);
        lane.pricer.settle(reason.applies());
        lane.carried.settle(reason, &inputs);
        if reason.applies() {
            Ok((reason, None))
        } else {
            lane.out.clear();
            lane.out.extend_from_slice(&lane.last.digests);
            lane.out.extend_from_slice(&held.out);
            Ok((reason, Some(held.slots)))
        }
    }

    /// What changed in pi's context since the lane's previous render.
    fn change(&self, at: &Call<'_, '_>, last: &Last) -> Change {
        Change {
            rewound: at.seek.rewound,
            context_rewritten: at.k > 0 && at.seek.from < last.inputs,
            compacted: !at.compactions.is_empty(),
            policy: Vec::new(),
        }
    }

    /// A lane's output without an engine (`none`): the context itself.
    fn lane_kept(&self, lane: &mut Lane<'_>, at: &Call<'_, '_>) -> Found {
        lane.out.clear();
        let digests = &mut lane.digests;
        lane.out
            .extend(at.ids.iter().map(|&id| digests.kept(at.view, id)));
        let break_index = first_difference(&lane.last.digests, &lane.out);
        if let Some(sent) = lane.sent.as_mut() {
            sent.texts.truncate(break_index);
            for &id in &at.ids[break_index..] {
                sent.texts.push(at.view.message(id).json.to_vec().into());
            }
        }
        Found {
            stats: Stats::default(),
            change: self.change(at, &lane.last),
            violation: None,
            break_index,
            gate: None,
        }
    }

    /// A lane's render measured, priced and kept as the previous one.
    fn lane_measure(
        &self,
        lane: &mut Lane<'_>,
        at: &Call<'_, '_>,
        found: Found,
        values: &dyn MessageValues<Digest>,
    ) -> Result<()> {
        let k = at.k;
        let Found {
            stats,
            change,
            violation,
            break_index,
            gate,
        } = found;
        let result = &mut lane.result;
        if let (Some(totals), Some(reason)) = (result.gate.as_mut(), gate) {
            totals.add(reason);
        }
        if let Some(v) = violation {
            self.keep_violation(result, at, v);
        }
        let out = &lane.out;
        let chars_after = array_len(out.len(), out.iter().map(|d| d.len as usize).sum());
        result.chars_sent += chars_after as u64;
        let time = self.prepared.infos[k].time;
        let priced = match at.pass {
            Pass::Measure => {
                lane.pricer.measure(k, out, values)?;
                None
            }
            Pass::Price => Some(lane.pricer.price(
                k,
                Sent {
                    out,
                    values,
                    break_index,
                    time,
                    change,
                },
            )?),
        };
        if let Some(p) = priced {
            // What the answer records of the context: the request as this
            // policy sent it, and the answer itself.
            let output = self.prepared.meta[k].usage.map_or(0.0, |u| u.output);
            lane.last_usage = Some((p.prompt_tokens, output));
            result.priced.push(p);
        }
        let mut messages = None;
        if let Some(sent) = lane.sent.as_mut() {
            let array = sent.array();
            match sent.file.as_mut() {
                Some(file) => self.write_context(file, at, gate, &array)?,
                None => messages = Some(array),
            }
        }
        if self.prepared.options.keep_renders && !self.prepared.hidden.contains(&result.policy) {
            let scratch = &mut lane.scratch;
            scratch.clear();
            for d in out {
                scratch.extend_from_slice(&d.hash.to_le_bytes());
            }
            result.renders.push(Render {
                call: k,
                chars_before: at.seek.chars_before,
                chars_after,
                messages_before: at.ids.len(),
                messages_after: out.len(),
                break_index,
                prefix_hash: xxh3_64(&scratch[..break_index * 8]),
                output_hash: xxh3_64(scratch),
                stats,
                priced,
                gate,
                compactions: at.compactions.len(),
                warms: std::mem::take(&mut lane.warms),
                messages,
            });
        }
        // The output becomes the previous one (the next call refills `out`).
        let last = &mut lane.last;
        std::mem::swap(&mut last.digests, &mut lane.out);
        last.stats = stats;
        last.inputs = at.ids.len();
        if let Some(p) = self.progress {
            p.advance();
        }
        Ok(())
    }

    /// One line of a `Contexts::Dir` file for a model call: `{k, kind:
    /// "call", timestamp, model, gate?, messages}`.
    fn write_context(
        &self,
        file: &mut std::io::BufWriter<std::fs::File>,
        at: &Call<'_, '_>,
        gate: Option<Reason>,
        messages: &[u8],
    ) -> Result<()> {
        let time = self.prepared.infos[at.k].time;
        self.write_line(file, at.k, "call", time, |o| {
            if let Some(reason) = gate {
                o.str("gate", reason.sent());
            }
            o.raw("messages", |out| out.extend_from_slice(messages));
        })
    }

    /// The lines of pi's compaction before call `k`, one per summarization
    /// request: `{k, kind: "compaction", timestamp, model, inputChars,
    /// outputChars, messages}`, the messages it summarizes as pi holds them
    /// (its system prompt and instructions are `inputChars` less their
    /// serialized text: docs/REPLAY.md).
    fn write_compaction(
        &self,
        file: &mut std::io::BufWriter<std::fs::File>,
        k: usize,
        c: &Compaction,
    ) -> Result<()> {
        let p = self.prepared;
        for (range, chars) in c.requests.each() {
            let messages = messages_json(&p.file, &p.path, range.clone());
            self.write_line(file, k, "compaction", p.infos[k].time, |o| {
                o.num("inputChars", *chars)
                    .num("outputChars", c.summary_chars)
                    .raw("messages", |out| out.extend_from_slice(&messages));
            })?;
        }
        Ok(())
    }

    /// A line `{k, kind, timestamp, model, ...}` of a `Contexts::Dir` file
    /// (flushed after the last call's).
    fn write_line(
        &self,
        file: &mut std::io::BufWriter<std::fs::File>,
        k: usize,
        kind: &str,
        time: Option<f64>,
        rest: impl FnOnce(&mut crate::json::members::Members),
    ) -> Result<()> {
        use std::io::Write;
        let key = self.prepared.meta[k].model_key;
        let model = self.prepared.models.iter().find(|m| m.key == key);
        let mut line = Vec::with_capacity(256);
        crate::json::members::object(&mut line, |o| {
            o.num("k", k as f64)
                .str("kind", kind)
                .opt_num("timestamp", time)
                .str("model", model.map_or("", |m| m.name.as_str()));
            rest(o);
        });
        line.push(b'\n');
        file.write_all(&line)
            .and_then(|()| {
                if k + 1 == self.prepared.calls.len() && kind == "call" {
                    file.flush()
                } else {
                    Ok(())
                }
            })
            .map_err(|e| PruneError::new(crate::error::Code::Io, format!("contexts: {e}")))
    }

    /// Counts a violation and keeps the first ones, naming the entry.
    fn keep_violation(&self, result: &mut PolicyReplay, at: &Call<'_, '_>, mut v: Violation) {
        result.violation_count += 1;
        if result.violations.len() < KEPT_VIOLATIONS {
            if let Some(i) = v.input_index {
                let entry = self
                    .prepared
                    .file
                    .entry(at.view.message(at.ids[i]).entry as usize);
                v.detail = format!("{} (entry {})", v.detail, id_string(&entry));
            }
            result.violations.push(v);
        }
    }
}
