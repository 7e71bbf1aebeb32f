//! One policy's calls priced as the provider bills them. Per call: the
//! rendered messages become the wire request (`wire.rs`, each distinct
//! message converted once per model), the request's positions and
//! breakpoints (`request.rs`) go through the model's cache (`cache.rs`),
//! and the outcome is classed, given a cause when it wrote more than the
//! appended tail, and priced (`bill.rs`). pi's cache warms since the
//! previous call re-send that call's request first.

use std::sync::{Arc, RwLock};

use super::bill::{price, BillTotals, CallBill, CallClass, Cause};
use super::cache::{Cache, Outcome};
use super::calibration::{Calibration, SizePoint};
use super::calls::CallMeta;
use super::catalog::{rules_for, Catalog, Family, Rules};
use super::digest::Digest;
use super::request::{Incremental, Preamble, Request, Update};
use super::wire::{convert_message, CallModel, Converted, Packed};
use crate::hash::HashMap;
use crate::json::parse_value;

/// What the walk knows about why this render differs from the previous.
#[derive(Debug, Clone, Default)]
pub struct Change {
    /// The context was rebuilt from the root (the leaf moved back).
    pub rewound: bool,
    /// pi's context changed other than by appending (compaction, edit,
    /// branch).
    pub context_rewritten: bool,
    /// Earlier output messages the policy changed: the phase, whether a
    /// flush came in between, and the message (the first few, in order).
    pub policy: Vec<(&'static str, bool, usize)>,
}

/// One priced call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Priced {
    pub bill: CallBill,
    pub class: CallClass,
    pub cause: Option<Cause>,
    /// Leading output messages the read covers.
    pub read_messages: u32,
}

/// What a call keeps of the previous request on its model.
struct Previous {
    time: f64,
    preamble: Preamble,
    total_chars: u64,
    /// Its last cacheable breakpoint: index and prefix hash.
    last_bp: Option<(usize, u64)>,
    /// Its last content position (an effort marker left out).
    last_content: Option<(usize, u64)>,
}

impl Previous {
    /// Whether `r` holds the same prefix at the position `at` had.
    fn holds(r: &Request, at: Option<(usize, u64)>) -> bool {
        at.is_some_and(|(i, h)| r.positions.get(i).is_some_and(|p| p.hash == h))
    }
}

/// Output messages converted to wire blocks, by digest and model key:
/// a conversion depends on the message's text and the model alone, so
/// every walk of a file (each policy, each tune configuration, on any
/// thread) converts a message once between them.
#[derive(Default)]
pub struct Conversions(RwLock<HashMap<(u64, u64), Shared>>);

/// One converted message, shared between walks.
type Shared = Arc<Converted<Packed>>;

impl Conversions {
    fn get(&self, key: (u64, u64)) -> Option<Shared> {
        let map = self.0.read().unwrap_or_else(|e| e.into_inner());
        map.get(&key).cloned()
    }

    fn insert(&self, key: (u64, u64), value: Shared) {
        let mut map = self.0.write().unwrap_or_else(|e| e.into_inner());
        map.insert(key, value);
    }
}

pub struct Pricer<'a> {
    meta: &'a [CallMeta],
    catalog: &'a Catalog,
    calibration: &'a Calibration,
    long: bool,
    shared: &'a Conversions,
    /// The conversions this walk has used, without the shared map's lock.
    converted: HashMap<(u64, u64), Shared>,
    caches: HashMap<u64, Cache>,
    previous: HashMap<u64, Previous>,
    last_model: Option<u64>,
    /// The latest request (kept in `incremental`), for pi's warms: its
    /// model key, rules and time.
    latest: Option<(u64, Rules, f64)>,
    incremental: Incremental,
    /// The previous call's output and its converted messages, by index.
    out: Vec<Digest>,
    messages: Vec<Shared>,
    messages_model: Option<u64>,
    /// `first_new` of the current call: (call, index).
    first_of: Option<(usize, usize)>,
    pub totals: BillTotals,
    /// Size points for the calibration (measure mode).
    pub points: Vec<SizePoint>,
}

impl<'a> Pricer<'a> {
    pub fn new(
        meta: &'a [CallMeta],
        catalog: &'a Catalog,
        calibration: &'a Calibration,
        long: bool,
        shared: &'a Conversions,
    ) -> Self {
        Pricer {
            meta,
            catalog,
            calibration,
            long,
            shared,
            converted: HashMap::default(),
            caches: HashMap::default(),
            previous: HashMap::default(),
            last_model: None,
            latest: None,
            incremental: Incremental::default(),
            out: Vec::new(),
            messages: Vec::new(),
            messages_model: None,
            first_of: None,
            totals: BillTotals::default(),
            points: Vec::new(),
        }
    }

    /// The first output message of call `k` that differs from the
    /// previous call's (0 after a model switch): only those from there on
    /// need converting and assembling again.
    pub fn first_new(&mut self, k: usize, out: &[Digest]) -> usize {
        if let Some((at, first)) = self.first_of {
            if at == k {
                return first;
            }
        }
        let first = if self.messages_model != Some(self.meta[k].model_key) {
            0
        } else {
            let common = self.out.len().min(out.len());
            (0..common)
                .find(|&i| out[i] != self.out[i])
                .unwrap_or(common)
        };
        // The walk asks before converting, `request` again after: the
        // output is the same in between.
        self.first_of = Some((k, first));
        first
    }

    /// Whether output message `digest` still needs converting for call `k`.
    pub fn needs(&mut self, k: usize, digest: &Digest) -> bool {
        let key = (digest.hash, self.meta[k].model_key);
        if self.converted.contains_key(&key) {
            return false;
        }
        match self.shared.get(key) {
            Some(c) => {
                self.converted.insert(key, c);
                false
            }
            None => true,
        }
    }

    /// Converts one output message (its `JSON.stringify` text) for call k.
    pub fn convert(&mut self, k: usize, digest: &Digest, json: &[u8]) {
        let meta = &self.meta[k];
        let value = parse_value(json).unwrap_or_default();
        let packed = Arc::new(convert_message(&value, &meta.model, false).pack());
        let key = (digest.hash, meta.model_key);
        self.shared.insert(key, packed.clone());
        self.converted.insert(key, packed);
    }

    fn factor(&self, key: u64) -> (f64, Option<f64>) {
        let f = self.calibration.factor(key);
        (f.tokens_per_char, f.preamble_tokens)
    }

    /// Brings the request of call `k` (output `out`) up to date in
    /// `incremental`.
    fn request(&mut self, k: usize, out: &[Digest], rules: &Rules) -> Update {
        let meta = &self.meta[k];
        let key = meta.model_key;
        let first = self.first_new(k, out);
        self.messages.truncate(first);
        for d in &out[first..] {
            self.messages.push(self.converted[&(d.hash, key)].clone());
        }
        self.out.truncate(first);
        self.out.extend_from_slice(&out[first..]);
        self.messages_model = Some(key);
        self.first_of = None;
        let mut preamble = meta.preamble;
        if let (tpc, Some(tokens)) = self.factor(key) {
            preamble.tools_chars = 0;
            preamble.system_chars = (tokens / tpc).round() as u64;
        }
        let update =
            self.incremental
                .update(key, &preamble, &self.messages, first, &meta.model, rules);
        #[cfg(test)]
        {
            let refs: Vec<&Converted<Packed>> = self.messages.iter().map(|m| &**m).collect();
            let fresh = Request::build(&preamble, &refs, &meta.model, rules);
            assert_eq!(fresh, self.incremental.request, "call {k}");
        }
        update
    }

    fn model_rules(&self, model: &CallModel) -> Rules {
        rules_for(model, self.long)
    }

    fn bill(&self, model: &CallModel, tpc: f64, o: &Outcome, rules: &Rules) -> CallBill {
        let (input, read, write) = (
            o.input_chars as f64 * tpc,
            o.read_chars as f64 * tpc,
            o.write_chars as f64 * tpc,
        );
        CallBill {
            input_tokens: input,
            cache_read_tokens: read,
            cache_write_tokens: write,
            cost_usd: price(
                self.catalog.get(&model.provider, &model.id),
                input,
                read,
                write,
                self.long,
                rules.write_premium,
            ),
        }
    }

    /// pi's warms before call `k`: the latest request sent again.
    fn warm(&mut self, k: usize) {
        for &t in &self.meta[k].since.warms {
            let Some((key, rules, at)) = self.latest else {
                return;
            };
            if t < at {
                continue;
            }
            let (tpc, _) = self.factor(key);
            let o =
                self.caches
                    .entry(key)
                    .or_default()
                    .send(&self.incremental.request, &rules, tpc, t);
            let model = self
                .meta
                .iter()
                .find(|m| m.model_key == key)
                .map(|m| m.model.clone())
                .unwrap_or_default();
            let bill = self.bill(&model, tpc, &o, &rules);
            self.totals.warms += 1;
            self.totals.warm_cost_usd += bill.cost_usd;
            self.totals.cost_usd += bill.cost_usd;
            self.latest = Some((key, rules, t));
        }
    }

    /// Measure mode: the size point of call `k` (for the calibration).
    pub fn measure(&mut self, k: usize, out: &[Digest]) {
        let meta = &self.meta[k];
        let rules = self.model_rules(&meta.model);
        self.request(k, out, &rules);
        let chars = self.incremental.request.message_chars;
        self.note_size(k, chars);
    }

    /// The size point of call `k` whose messages take `message_chars`:
    /// wire chars when measured, the rendered JSON's under the prefix rule
    /// (there only to judge whether the recorded usage describes the file).
    pub fn note_size(&mut self, k: usize, message_chars: u64) {
        let meta = &self.meta[k];
        let preamble = (meta.preamble.tools_chars + meta.preamble.system_chars) as f64;
        self.points.push(SizePoint {
            model_key: meta.model_key,
            message_chars: message_chars as f64,
            preamble_chars: preamble,
            recorded: meta.usage.map(|u| u.total()),
        });
    }

    /// Prices call `k`, made at `now` (ms; None: no time known).
    pub fn price(&mut self, k: usize, out: &[Digest], now: Option<f64>, change: Change) -> Priced {
        self.warm(k);
        let meta = &self.meta[k];
        let key = meta.model_key;
        let rules = self.model_rules(&meta.model);
        let (tpc, _) = self.factor(key);
        let update = self.request(k, out, &rules);
        let request = &self.incremental.request;
        let now = now.unwrap_or_else(|| self.latest.as_ref().map_or(0.0, |l| l.2));
        let cache = self.caches.entry(key).or_default();
        let prev = self.previous.get(&key);
        let lapsed = prev.is_some_and(|p| {
            p.last_bp.is_some_and(|(_, h)| cache.lapsed(h, now))
                || (matches!(rules.family, Family::OpenAiPrefix | Family::Google)
                    && now - p.time > rules.ttl_ms)
        });
        let o = cache.send(request, &rules, tpc, now);
        let bill = self.bill(&meta.model, tpc, &o, &rules);
        let class = match prev {
            None => CallClass::First,
            Some(_) if lapsed => CallClass::Expired,
            Some(p) => {
                let reached = match (o.read_at, p.last_bp) {
                    (Some(q), Some((bp, _))) => q >= bp && Previous::holds(request, p.last_bp),
                    // The previous call cached nothing (too short): an
                    // unchanged history still counts as appended to.
                    (_, None) => {
                        p.last_content.is_none() || Previous::holds(request, p.last_content)
                    }
                    _ => false,
                };
                if reached {
                    CallClass::Append
                } else if o.read_at.is_none_or(|q| q < request.preamble) {
                    CallClass::Rewrite
                } else {
                    CallClass::Partial
                }
            }
        };
        let switched = self.last_model.is_some_and(|m| m != key);
        let tail = match prev {
            Some(p) => request.total_chars.saturating_sub(p.total_chars),
            None => request.total_chars,
        };
        let excess_chars = o.write_chars.saturating_sub(tail);
        let cause = match class {
            CallClass::Append => None,
            CallClass::First if !switched => None,
            CallClass::First => Some(Cause::plain("modelSwitch")),
            CallClass::Expired => Some(Cause {
                kind: "expired",
                flush: false,
                gap_ms: prev.map(|p| now - p.time),
            }),
            CallClass::Partial | CallClass::Rewrite => {
                let p = prev.expect("a partial or rewrite has a previous call");
                Some(if switched {
                    Cause::plain("modelSwitch")
                } else if p.preamble != meta.preamble {
                    Cause::plain("systemPrompt")
                } else if meta.since.compaction {
                    Cause::plain("compaction")
                } else if meta.since.edit {
                    Cause::plain("contextEdit")
                } else if meta.since.branch || change.rewound || change.context_rewritten {
                    Cause::plain("branch")
                } else {
                    // The output message holding the first position whose
                    // billed prefix changed: [first, end).
                    let diverged = update
                        .divergence
                        .and_then(|d| request.positions.get(d))
                        .map(|p| (p.source as usize, (p.messages.max(p.source + 1)) as usize));
                    let named = match diverged {
                        Some((first, end)) => change
                            .policy
                            .iter()
                            .find(|&&(_, _, at)| at >= first && at < end),
                        None => change.policy.first(),
                    };
                    match named {
                        Some(&(phase, flush, _)) => Cause {
                            kind: phase,
                            flush,
                            gap_ms: None,
                        },
                        _ if update.turn_closed && !rules.keeps_thinking => {
                            Cause::plain("thinkingDropped")
                        }
                        _ if Previous::holds(request, p.last_bp) => Cause::plain("lookback"),
                        _ if !rules.keeps_thinking => Cause::plain("thinkingDropped"),
                        _ => Cause::plain("unknown"),
                    }
                })
            }
        };
        self.totals.add(&bill);
        self.totals.count(class);
        if let Some(c) = &cause {
            let tokens = excess_chars as f64 * tpc;
            let extra = price(
                self.catalog.get(&meta.model.provider, &meta.model.id),
                0.0,
                0.0,
                tokens,
                self.long,
                rules.write_premium,
            );
            self.totals.add_cause(c, tokens, extra);
        }
        let read_messages = match o.read_at {
            Some(q) if q >= request.preamble => request.positions[q].messages,
            _ => 0,
        };
        let last_bp = request
            .breakpoints
            .last()
            .copied()
            .filter(|&bp| request.positions[bp].chars as f64 * tpc >= rules.min_tokens);
        let last_bp = match rules.family {
            Family::OpenAiPrefix | Family::Google => request.positions.len().checked_sub(1),
            _ => last_bp,
        };
        let at = |i: usize| (i, request.positions[i].hash);
        let previous = Previous {
            time: now,
            preamble: meta.preamble,
            total_chars: request.total_chars,
            last_bp: last_bp.map(at),
            last_content: request.content_len().checked_sub(1).map(at),
        };
        self.previous.insert(key, previous);
        self.last_model = Some(key);
        self.latest = Some((key, rules, now));
        Priced {
            bill,
            class,
            cause,
            read_messages,
        }
    }
}
