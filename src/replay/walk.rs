//! One policy's pass over a session's model calls, in order, on one kept
//! engine: at each call the context view moves to the call's leaf and the
//! state is the rebuild up to it (SESSIONS.md C.3; `timeline.rs`, shared by
//! every walk of the dialect); the engine re-syncs only the messages from
//! the first one that changed, hears only the indexer answers a flush
//! changed, takes the 2.4.3 boundary of the frontier in force (or its own
//! config's), and renders. The render is measured against the
//! previous one (break, cache read and write, hashes) and checked against
//! the flush-gated invariant.

use xxhash_rust::xxh3::xxh3_64;

use super::bill::{price, CacheModel, CallBill, CallClass};
use super::calibration::Calibration;
use super::calls::CallMeta;
use super::catalog::Catalog;
use super::cost::{CostModel, Totals};
use super::digest::{Digest, Digests};
use super::invariant::{attribute, Current, Previous};
use super::policy::Policy;
use super::pricer::{Change, Conversions, Priced, Pricer};
use super::settings::Settings;
use super::timeline::Timelines;
use super::{
    BoundaryMode, BoundaryUsed, CallInfo, FrontierEntries, PolicyReplay, Progress, Render,
};
use crate::engine::Engine;
use crate::error::{PruneError, Result};
use crate::record::array_len;
use crate::record::Source;
use crate::script::{Slot, Stats};
use crate::sessionfile::{ContextView, ModelCall, SessionFile};

/// Violations kept in full per policy (all are counted).
const KEPT_VIOLATIONS: usize = 1000;

/// Changed output messages of a render whose phase is named for the
/// pricer (the first ones; a render changes few).
const CHANGES_NAMED: usize = 16;

/// What the walk keeps of the previous render.
#[derive(Default)]
struct Last {
    digests: Vec<Digest>,
    slots: Vec<Slot>,
    stats: Stats,
    inputs: usize,
    time: Option<f64>,
}

/// The first index where two renders differ (the shorter one's length
/// when one is a prefix of the other).
fn first_difference(before: &[Digest], after: &[Digest]) -> usize {
    before
        .iter()
        .zip(after)
        .position(|(a, b)| a != b)
        .unwrap_or(before.len().min(after.len()))
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
    pricer: Pricer<'p>,
    result: PolicyReplay,
    /// What the render found, for the measure that follows it.
    pending: Pending,
}

/// A lane's render, between finding its output and pricing it.
#[derive(Default)]
struct Pending {
    stats: Stats,
    change: Change,
    violation: Option<super::invariant::Violation>,
    break_index: usize,
}

/// The call every lane renders.
struct Call<'v, 'f> {
    k: usize,
    dialect: crate::dialect::Dialect,
    pass: Pass,
    rewound: bool,
    flushed: bool,
    /// The first context message that changed since the previous call.
    from: usize,
    chars_before: usize,
    ids: &'v [u32],
    view: &'v ContextView<'f>,
}

pub(super) struct Walk<'a, 's> {
    pub file: &'s SessionFile<'s>,
    pub path: &'a [u32],
    pub calls: &'a [ModelCall],
    pub infos: &'a [CallInfo],
    pub settings: &'a Settings,
    pub cost: &'a CostModel,
    pub keep_renders: bool,
    pub progress: Option<&'a Progress>,
    pub meta: &'a [CallMeta],
    pub catalog: &'a Catalog,
    pub calibration: &'a Calibration,
    pub long: bool,
    pub cache_model: CacheModel,
    /// Which 2.4.3 boundary renders take: under `Auto` and `Config` it is
    /// computed at each flush from the config's `keepLastTurns`, under
    /// `Recorded` the frontier in force gives it.
    pub boundary_mode: BoundaryMode,
    /// The frontier entries the branch holds (for `Auto`'s verdict).
    pub frontier_entries: FrontierEntries,
    /// The rebuilt state per call, shared by every walk of the file.
    pub timelines: &'a Timelines,
    /// Wire conversions, shared by every walk of the file.
    pub conversions: &'a Conversions,
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
pub(super) enum Pass {
    Price,
    Measure,
}

impl Walk<'_, '_> {
    /// Names the model call and policy in a render error, and the file
    /// line of the message it concerns.
    fn at_call(
        &self,
        mut e: PruneError,
        k: usize,
        policy: Policy,
        view: &ContextView<'_>,
        ids: &[u32],
    ) -> PruneError {
        if let Some(&id) = e.message_index.and_then(|i| ids.get(i)) {
            e.line = Some(self.file.entry(view.message(id).entry as usize).line as usize);
        }
        e.message = format!(
            "model call {k} (entry {}), policy {}: {}",
            self.infos[k].entry_id,
            policy.name(),
            e.message
        );
        e
    }

    pub fn run(&self, policy: Policy, pass: Pass) -> Result<PolicyReplay> {
        let mut results = self.run_family(policy, &[self.settings], pass)?;
        Ok(results.remove(0))
    }

    /// One pass per settings of `family`, which differ at most in their
    /// 2.4.3 thinking strip: the view, the state, the engine and every
    /// phase before the strip are shared, and each settings' lane strips,
    /// measures and prices its own copy of the render.
    pub fn run_family(
        &self,
        policy: Policy,
        family: &[&Settings],
        pass: Pass,
    ) -> Result<Vec<PolicyReplay>> {
        let dialect = policy.dialect();
        let mut lanes: Vec<Lane<'_>> = Vec::with_capacity(family.len());
        for settings in family {
            let config_json = policy.config_json(settings);
            let thinking = policy.config(settings)?.and_then(|c| c.thinking);
            // The config's own boundary: pi-condense's rule at every flush,
            // over the branch's assistant timestamps up to the leaf
            // (SESSIONS.md C.2).
            let keep = strip_of(config_json.as_ref())
                .filter(|_| self.boundary_mode.takes_config_boundary());
            lanes.push(Lane {
                thinking,
                keep,
                own_boundary: None,
                differs: 0,
                digests: Digests::default(),
                last: Last::default(),
                out: Vec::new(),
                pricer: Pricer::new(
                    self.meta,
                    self.catalog,
                    self.calibration,
                    self.long,
                    self.conversions,
                ),
                result: PolicyReplay {
                    policy,
                    config: config_json,
                    totals: Totals::default(),
                    renders: Vec::new(),
                    checked: 0,
                    violation_count: 0,
                    violations: Vec::new(),
                    bill: Default::default(),
                    points: Vec::new(),
                    priced: Vec::new(),
                    boundary: None,
                },
                pending: Pending::default(),
            });
        }
        // The engine renders every phase but the strip, which each lane
        // applies with its own config and boundary.
        let config = policy.config(family[0])?.map(|mut c| {
            c.thinking = None;
            c
        });
        let fresh_engine = || {
            config.clone().map(|c| {
                let mut e = Engine::new(dialect);
                e.set_config(c);
                e
            })
        };
        let timeline = self
            .timelines
            .get(self.file, self.path, self.calls, dialect);
        let mut view = ContextView::new(self.file, self.path);
        let mut engine = fresh_engine();
        let mut applied = 0usize;
        let mut sizes = Digests::default();
        let mut before: Vec<u32> = Vec::new();
        let mut before_sum = 0usize;
        let mut scratch: Vec<u8> = Vec::new();
        let mut bytes: Vec<u8> = Vec::new();
        let mut assistant_times: Vec<f64> = Vec::new();
        let mut timed = 0usize;
        let any_keep = lanes.iter().any(|l| l.keep.is_some());
        for (k, call) in self.calls.iter().enumerate() {
            let wanted = call.leaf.map_or(0, |l| l + 1);
            let mut rewound = false;
            if wanted < applied {
                // The leaf lies before the previous one (clocks disagree):
                // rebuild from the root.
                view = ContextView::new(self.file, self.path);
                // Digests are kept by the view's message ids, which a new
                // view hands out afresh.
                sizes = Digests::default();
                before.clear();
                before_sum = 0;
                engine = fresh_engine();
                for lane in &mut lanes {
                    lane.digests = Digests::default();
                    lane.own_boundary = None;
                }
                assistant_times.clear();
                timed = 0;
                rewound = true;
            }
            let from = match call.leaf {
                Some(l) => {
                    view.seek(l).map_err(super::located)?;
                    view.take_changed_from()
                }
                None => 0,
            };
            let ids: &[u32] = if call.leaf.is_some() {
                view.messages()
            } else {
                &[]
            };
            let step = timeline.step(k)?;
            applied = wanted;
            let flushed = step.flushed;
            // The context's size, kept per message and summed again only
            // from the first message that changed.
            let kept = from.min(before.len()).min(ids.len());
            before_sum -= before.drain(kept..).map(|l| l as usize).sum::<usize>();
            for &id in &ids[kept..] {
                let len = sizes.kept(&view, id).len;
                before.push(len);
                before_sum += len as usize;
            }
            let chars_before = array_len(ids.len(), before_sum);
            let mut base = None;
            if let Some(engine) = &mut engine {
                if flushed {
                    timeline.answer(k, engine)?;
                }
                // 2.4.3 computes its boundary at a flush that processed
                // something, the one that writes a frontier entry.
                if policy.uses_boundary()
                    && self.boundary_mode.takes_config_boundary()
                    && step.frontier_moved
                    && any_keep
                {
                    for &e in &self.path[timed..applied] {
                        let entry = self.file.entry(e as usize);
                        if entry.is("message") && entry.message_role_is("assistant") {
                            let t = entry
                                .message()
                                .and_then(|m| m.get("timestamp"))
                                .and_then(|t| t.number())
                                .unwrap_or(f64::NAN);
                            assistant_times.push(t);
                        }
                    }
                    timed = applied;
                    for lane in &mut lanes {
                        if let Some(keep) = lane.keep {
                            lane.own_boundary = crate::frontier::compute_thinking_boundary(
                                &assistant_times,
                                keep,
                                lane.own_boundary,
                            );
                        }
                    }
                }
                let from = from.min(engine.len());
                if from < engine.len() || ids.len() != engine.len() {
                    bytes.clear();
                    bytes.push(b'[');
                    for (n, &id) in ids[from..].iter().enumerate() {
                        if n > 0 {
                            bytes.push(b',');
                        }
                        bytes.extend_from_slice(&view.message(id).json);
                    }
                    bytes.push(b']');
                    engine
                        .sync(from, &bytes, Source::Bytes)
                        .map_err(|e| self.at_call(e, k, policy, &view, ids))?;
                }
                base = Some(
                    engine
                        .render_before_thinking()
                        .map_err(|e| self.at_call(e, k, policy, &view, ids))?,
                );
            }
            let count = lanes.len();
            for (n, lane) in lanes.iter_mut().enumerate() {
                let boundary = if !policy.uses_boundary() {
                    None
                } else if self.boundary_mode.takes_config_boundary() {
                    lane.own_boundary
                } else {
                    step.boundary
                };
                if policy.uses_boundary()
                    && self.boundary_mode == BoundaryMode::Auto
                    && lane.thinking.is_some()
                    && !same_boundary(step.boundary, lane.own_boundary)
                {
                    lane.differs += 1;
                }
                // The last lane takes the shared render itself.
                let script = match (&mut base, n + 1 == count) {
                    (Some(b), true) => Some(std::mem::take(b)),
                    (Some(b), false) => Some(b.clone()),
                    (None, _) => None,
                };
                let at = Call {
                    k,
                    dialect,
                    pass,
                    rewound,
                    flushed,
                    from,
                    chars_before,
                    ids,
                    view: &view,
                };
                match (&mut engine, script) {
                    (Some(engine), Some(script)) => {
                        let rendered = engine
                            .with_strip(script, lane.thinking.as_ref(), boundary)
                            .map_err(|e| self.at_call(e, k, policy, &view, ids))?;
                        let slots = self.lane_rendered(lane, &at, rendered, &mut bytes);
                        engine.recycle_slots(slots);
                    }
                    _ => self.lane_kept(lane, &at),
                }
                self.lane_measure(lane, &at, &mut scratch);
            }
        }
        Ok(lanes
            .into_iter()
            .map(|mut lane| {
                lane.result.bill = lane.pricer.totals;
                lane.result.points = lane.pricer.points;
                lane.result.boundary = policy
                    .uses_boundary()
                    .then(|| self.boundary_used(lane.differs));
                lane.result
            })
            .collect())
    }

    /// The rule a lane's renders followed (`differs`: renders where the
    /// recorded boundary differed from the config's own).
    fn boundary_used(&self, differs: usize) -> BoundaryUsed {
        let (rule, reason) = match self.boundary_mode {
            BoundaryMode::Recorded => ("recorded", "as asked".to_string()),
            BoundaryMode::Config => ("config", "as asked".to_string()),
            BoundaryMode::Auto if self.frontier_entries == FrontierEntries::None => (
                "config",
                "the session holds no pi-condense 2.4 frontier entries".to_string(),
            ),
            BoundaryMode::Auto
                if differs > 0 && self.frontier_entries == FrontierEntries::WithoutBoundary =>
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
                    self.calls.len()
                ),
            ),
            BoundaryMode::Auto => (
                "recorded",
                "the session's frontier entries, written under this config".to_string(),
            ),
        };
        BoundaryUsed { rule, reason }
    }

    /// A lane's output under an engine: digests, wire conversions, and the
    /// phase behind each earlier message it changed. Hands back the
    /// previous render's slots, for the engine to fill next time.
    fn lane_rendered(
        &self,
        lane: &mut Lane<'_>,
        at: &Call<'_, '_>,
        script: crate::engine::RenderedScript<'_>,
        bytes: &mut Vec<u8>,
    ) -> Vec<crate::script::Slot> {
        let k = at.k;
        let last = &lane.last;
        lane.out.clear();
        for slot in script.slots() {
            let d = lane.digests.slot(at.view, at.ids, &script, slot);
            lane.out.push(d);
        }
        let out = &lane.out;
        let break_index = first_difference(&last.digests, out);
        if self.cache_model == CacheModel::Provider {
            let first = lane.pricer.first_new(k, out);
            for (i, slot) in script.slots().iter().enumerate().skip(first) {
                if lane.pricer.needs(k, &out[i]) {
                    bytes.clear();
                    script.write_slot(slot, bytes);
                    lane.pricer.convert(k, &out[i], bytes);
                }
            }
        }
        let stats = script.stats();
        let mut change = Change {
            rewound: at.rewound,
            context_rewritten: k > 0 && at.from < last.inputs,
            policy: Vec::new(),
        };
        let strip = |i: usize| script.final_answer_strip(i);
        let previous = Previous {
            slots: &last.slots,
            stats: last.stats,
        };
        let current = Current {
            slots: script.slots(),
            stats,
            dialect: at.dialect,
            final_answer_strip: &strip,
        };
        if k > 0 && !at.rewound && at.from >= last.inputs && !last.digests.is_empty() {
            // The phase behind each earlier output message the policy
            // changed (the first few), for the pricer's causes.
            let common = last.digests.len().min(out.len());
            let changed = (break_index..common).filter(|&i| out[i] != last.digests[i]);
            for i in changed.take(CHANGES_NAMED) {
                let v = attribute(k, i, &previous, &current);
                change.policy.push((v.phase, at.flushed, i));
            }
            if change.policy.is_empty() && common < last.digests.len() {
                let v = attribute(k, common, &previous, &current);
                change.policy.push((v.phase, at.flushed, common));
            }
        }
        let same_history = k > 0 && !at.flushed && !at.rewound && at.from >= last.inputs;
        let mut violation = None;
        if same_history {
            lane.result.checked += 1;
            if break_index < last.digests.len() {
                violation = Some(attribute(k, break_index, &previous, &current));
            }
        }
        lane.pending = Pending {
            stats,
            change,
            violation,
            break_index,
        };
        let slots = script.into_slots();
        std::mem::replace(&mut lane.last.slots, slots)
    }

    /// A lane's output without an engine (`none`): the context itself.
    fn lane_kept(&self, lane: &mut Lane<'_>, at: &Call<'_, '_>) {
        let k = at.k;
        lane.out.clear();
        let digests = &mut lane.digests;
        lane.out
            .extend(at.ids.iter().map(|&id| digests.kept(at.view, id)));
        if self.cache_model == CacheModel::Provider {
            let first = lane.pricer.first_new(k, &lane.out);
            for (i, &id) in at.ids.iter().enumerate().skip(first) {
                if lane.pricer.needs(k, &lane.out[i]) {
                    lane.pricer
                        .convert(k, &lane.out[i], &at.view.message(id).json);
                }
            }
        }
        lane.pending = Pending {
            stats: Stats::default(),
            change: Change {
                rewound: at.rewound,
                context_rewritten: k > 0 && at.from < lane.last.inputs,
                policy: Vec::new(),
            },
            violation: None,
            break_index: first_difference(&lane.last.digests, &lane.out),
        };
    }

    /// A lane's render measured, priced and kept as the previous one.
    fn lane_measure(&self, lane: &mut Lane<'_>, at: &Call<'_, '_>, scratch: &mut Vec<u8>) {
        let k = at.k;
        let Pending {
            stats,
            change,
            violation,
            break_index,
        } = std::mem::take(&mut lane.pending);
        let result = &mut lane.result;
        if let Some(mut v) = violation {
            result.violation_count += 1;
            if result.violations.len() < KEPT_VIOLATIONS {
                if let Some(i) = v.input_index {
                    let entry = self.file.entry(at.view.message(at.ids[i]).entry as usize);
                    v.detail = format!("{} (entry {})", v.detail, super::id_string(&entry));
                }
                result.violations.push(v);
            }
        }
        let out = &lane.out;
        let last = &mut lane.last;
        // One pass over the output for both sums.
        let head: usize = out[..break_index].iter().map(|d| d.len as usize).sum();
        let tail: usize = out[break_index..].iter().map(|d| d.len as usize).sum();
        let chars_after = array_len(out.len(), head + tail);
        let time = self.infos[k].time;
        let expired = k > 0 && self.cost.expired(last.time, time);
        let (read, write) = if expired {
            (0, chars_after)
        } else {
            // `[` and each message with its `,` (0 for an empty prefix).
            let read = if break_index == 0 {
                0
            } else {
                1 + head + break_index
            };
            (read, chars_after - read)
        };
        result.totals.add(chars_after, read, write);
        let priced = match (self.cache_model, at.pass) {
            (CacheModel::Provider, Pass::Measure) => {
                lane.pricer.measure(k, out);
                None
            }
            (CacheModel::Provider, Pass::Price) => Some(lane.pricer.price(k, out, time, change)),
            (CacheModel::Prefix, _) => Some(self.prefix_priced(
                k,
                expired,
                break_index,
                last.digests.len(),
                read,
                write,
                chars_after,
            )),
        };
        if let (CacheModel::Prefix, Some(p)) = (self.cache_model, &priced) {
            lane.pricer.totals.add(&p.bill);
            lane.pricer.totals.count(p.class);
            lane.pricer.note_size(k, chars_after as u64);
        }
        if let Some(p) = priced {
            result.priced.push(p);
        }
        if self.keep_renders {
            scratch.clear();
            for d in out {
                scratch.extend_from_slice(&d.hash.to_le_bytes());
            }
            result.renders.push(Render {
                call: k,
                chars_before: at.chars_before,
                chars_after,
                messages_before: at.ids.len(),
                messages_after: out.len(),
                break_index,
                cache_read_chars: read,
                cache_write_chars: write,
                cache_expired: expired,
                prefix_hash: xxh3_64(&scratch[..break_index * 8]),
                output_hash: xxh3_64(scratch),
                stats,
                priced,
            });
        }
        // The output becomes the previous one (the next call refills `out`).
        std::mem::swap(&mut last.digests, &mut lane.out);
        last.stats = stats;
        last.inputs = at.ids.len();
        last.time = time;
        if let Some(p) = self.progress {
            p.advance();
        }
    }

    /// A call under the prefix rule (`cacheModel: 'prefix'`): what was
    /// measured in chars, in tokens at the model's factor and priced at its
    /// rates.
    #[allow(clippy::too_many_arguments)]
    fn prefix_priced(
        &self,
        k: usize,
        expired: bool,
        break_index: usize,
        previous_len: usize,
        read: usize,
        write: usize,
        _chars: usize,
    ) -> Priced {
        let meta = &self.meta[k];
        let tpc = 1.0 / self.cost.chars_per_token;
        let (r, w) = (read as f64 * tpc, write as f64 * tpc);
        let class = if k == 0 {
            CallClass::First
        } else if expired {
            CallClass::Expired
        } else if break_index >= previous_len {
            CallClass::Append
        } else {
            CallClass::Rewrite
        };
        Priced {
            bill: CallBill {
                input_tokens: 0.0,
                cache_read_tokens: r,
                cache_write_tokens: w,
                cost_usd: price(
                    self.catalog.get(&meta.model.provider, &meta.model.id),
                    0.0,
                    r,
                    w,
                    self.long,
                    true,
                ),
            },
            class,
            cause: None,
            read_messages: break_index as u32,
        }
    }
}
