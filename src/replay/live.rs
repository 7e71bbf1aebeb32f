//! The gate as pi's extension runs it (issue 31): one live conversation's
//! sent request, provider cache, calibration and horizon, fed call by call
//! with what the release rendered and what a hold would send. The replay
//! walks a session file whose calls it knows in advance; here the calls
//! arrive one at a time from pi, so the same pieces (the wire conversion,
//! the incremental request, the cache, the bill and `gate::decide`) are
//! driven from the messages pi hands the extension.
//!
//! A message is named by a slot number the JS side chooses and keeps while
//! the conversation only grows (pi-condense's drop-in: an input index, or
//! an edit's id); each is converted once, when it is first sent with its
//! JSON. A cold call forgets them all.

use std::collections::VecDeque;

use super::bill::price;
use super::cache::Cache;
use super::calibration::{Calibration, SizePoint};
use super::catalog::{rules_for, Catalog, ModelEntry, Rules, DEFAULT_CONTEXT_WINDOW};
use super::gate::{decide, warm_inputs, GateInputs, GateSettings, Horizon, Quoted, Reason};
use super::request::{Incremental, Preamble};
use super::wire::{convert_message, CallModel, Converted, Packed};
use crate::error::{PruneError, Result};
use crate::hash::HashMap;
use crate::json::{utf16_len, Json};
use xxhash_rust::xxh3::xxh3_64;

/// Calls whose recorded usage calibrate tokens per character.
const CALIBRATION_CALLS: usize = 32;

/// One model call as the extension sees it.
pub struct LiveCall<'a> {
    /// When the request goes out (ms).
    pub now: f64,
    /// Cold by what pi says: the first call, a session opened, a branch, a
    /// compaction, a context that is not an append of the previous one.
    pub cold: bool,
    /// pi-ai's model object (`ctx.model`: provider, api, id, input,
    /// compat, cost, contextWindow).
    pub model: &'a Json,
    /// The system prompt and the active tools' definitions, as text.
    pub system: &'a str,
    pub tools: &'a str,
    /// Prompt tokens pi recorded for the previous request (input, cache
    /// read and write), when its answer is known.
    pub usage: Option<f64>,
    /// The release's render, slot by slot.
    pub release: &'a [i64],
    /// The slots a hold appends after the previous request's.
    pub tail: &'a [i64],
    /// Slots first seen at this call, with their messages.
    pub fresh: Vec<(i64, Json)>,
}

/// What the gate sent at a call, and what it read to decide.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiveDecision {
    pub reason: Reason,
    /// None at a cold call (nothing quoted).
    pub inputs: Option<GateInputs>,
    /// The horizon the rule used.
    pub horizon: f64,
}

/// Applies, holds and their reasons so far, and the estimate of what the
/// holds saved: the writes they put off, less their extra reads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveTotals {
    pub reasons: [u32; Reason::ALL.len()],
    pub deferred_usd: f64,
    pub extra_read_usd: f64,
}

/// The model of the latest call.
struct LiveModel {
    model: CallModel,
    key: u64,
    rules: Rules,
    entry: Option<ModelEntry>,
}

/// The gate of one live conversation.
pub struct LiveGate {
    settings: GateSettings,
    /// pi's long cache retention (`PI_CACHE_RETENTION=long`).
    long: bool,
    horizon: Horizon,
    held_usd: f64,
    model: Option<LiveModel>,
    cache: Cache,
    converted: Vec<Converted<Packed>>,
    slot_of: HashMap<i64, u32>,
    /// The slots of the last request sent, and the request.
    sent: Vec<i64>,
    request: Incremental,
    /// The release's previous render (its rewrites teach the horizon).
    release_last: Vec<i64>,
    points: VecDeque<SizePoint>,
    /// The last request's message and preamble characters, for the usage
    /// its answer records.
    last_sizes: Option<(f64, f64)>,
    pub totals: LiveTotals,
}

impl LiveGate {
    pub fn new(settings: GateSettings, long: bool) -> Self {
        LiveGate {
            settings,
            long,
            horizon: Horizon::default(),
            held_usd: 0.0,
            model: None,
            cache: Cache::default(),
            converted: Vec::new(),
            slot_of: HashMap::default(),
            sent: Vec::new(),
            request: Incremental::default(),
            release_last: Vec::new(),
            points: VecDeque::new(),
            last_sizes: None,
            totals: LiveTotals::default(),
        }
    }

    /// Whether slot `slot` has its message here (the JS side sends each
    /// slot's JSON once).
    pub fn knows(&self, slot: i64) -> bool {
        self.slot_of.contains_key(&slot)
    }

    /// The gate's choice at one call: the release's render (apply) or the
    /// previous request followed by `call.tail` (hold). The request sent
    /// is kept, and goes through the cache at `call.now`.
    pub fn decide(&mut self, call: LiveCall<'_>) -> Result<LiveDecision> {
        let model = CallModel::from_json(call.model);
        let key = xxh3_64(&[&model.provider[..], b"/", &model.id[..]].concat());
        let switched = self.model.as_ref().is_none_or(|m| m.key != key);
        let cold = call.cold || switched || self.sent.is_empty();
        if cold {
            self.forget(switched);
        }
        if let (Some(tokens), Some((messages, preamble))) = (call.usage, self.last_sizes) {
            if tokens > 0.0 && !switched {
                if self.points.len() == CALIBRATION_CALLS {
                    self.points.pop_front();
                }
                self.points.push_back(SizePoint {
                    model_key: key,
                    message_chars: messages,
                    preamble_chars: preamble,
                    recorded: Some(tokens),
                });
            }
        }
        if switched {
            self.model = Some(LiveModel {
                rules: rules_for(&model, self.long),
                entry: entry_of(call.model),
                model,
                key,
            });
        }
        for (slot, message) in &call.fresh {
            let packed = convert_message(message, &self.live().model, false).pack();
            self.slot_of.insert(*slot, self.converted.len() as u32);
            self.converted.push(packed);
        }
        let hold: Vec<i64> = if cold {
            Vec::new()
        } else {
            self.sent.iter().chain(call.tail).copied().collect()
        };
        for slot in call.release.iter().chain(&hold) {
            if !self.knows(*slot) {
                return Err(PruneError::bad_argument(format!(
                    "gate: slot {slot} was never sent with its message"
                )));
            }
        }
        let points: Vec<SizePoint> = self.points.iter().cloned().collect();
        let factor = Calibration::fit(&points, None).factor(key);
        let tpc = factor.tokens_per_char;
        let counted = Preamble {
            tools_chars: utf16_len(call.tools.as_bytes()) as u64,
            tools_hash: xxh3_64(call.tools.as_bytes()),
            system_chars: utf16_len(call.system.as_bytes()) as u64,
            system_hash: xxh3_64(call.system.as_bytes()),
        };
        let preamble = factor.sized(counted);
        let (reason, inputs) = if cold {
            self.horizon.reset();
            self.held_usd = 0.0;
            let release = call.release.to_vec();
            self.update_request(&release, 0, &preamble);
            self.sent = release;
            (Reason::Cold, None)
        } else {
            self.warm(&call, &hold, &preamble, tpc)
        };
        self.release_last = call.release.to_vec();
        let m = self.live();
        let (rules, now) = (m.rules, call.now);
        let sent = &self.request.request;
        self.cache.send(sent, &rules, tpc, now);
        self.last_sizes = Some((
            sent.message_chars as f64,
            (preamble.tools_chars + preamble.system_chars) as f64,
        ));
        self.totals.reasons[reason as usize] += 1;
        Ok(LiveDecision {
            reason,
            inputs,
            horizon: self.settings.horizon.unwrap_or(self.horizon.calls()),
        })
    }

    /// A warm call: both candidates quoted on the cache as it stands.
    fn warm(
        &mut self,
        call: &LiveCall<'_>,
        hold: &[i64],
        preamble: &Preamble,
        tpc: f64,
    ) -> (Reason, Option<GateInputs>) {
        let rewrote = first_difference(&self.release_last, call.release) < self.release_last.len();
        self.horizon.observe(rewrote);
        let same = call.release == hold;
        let first = first_difference(&self.sent, call.release);
        let draft = (!same).then(|| {
            let mut draft = self.request.clone();
            std::mem::swap(&mut draft, &mut self.request);
            self.update_request(call.release, first, preamble);
            std::mem::swap(&mut draft, &mut self.request);
            draft
        });
        self.update_request(hold, self.sent.len(), preamble);
        let m = self.live();
        let entry = m.entry.as_ref();
        let quote = |inc: &Incremental| {
            let r = &inc.request;
            let o = self.cache.look(r, &m.rules, tpc, call.now);
            let usd = price(
                entry,
                o.input_chars as f64 * tpc,
                o.read_chars as f64 * tpc,
                o.write_chars as f64 * tpc,
                self.long,
                m.rules.write_premium,
            );
            Quoted {
                outcome: o,
                preamble: r.preamble,
                usd,
                tokens: r.total_chars as f64 * tpc,
            }
        };
        let held = quote(&self.request);
        let apply = draft.as_ref().map(quote);
        let read_tokens = held.tokens.max(1.0);
        let read = price(
            entry,
            0.0,
            read_tokens,
            0.0,
            self.long,
            m.rules.write_premium,
        );
        let inputs = warm_inputs(
            &held,
            apply.as_ref(),
            read / read_tokens,
            self.held_usd,
            self.horizon.calls(),
            entry
                .and_then(|e| e.context_window)
                .unwrap_or(DEFAULT_CONTEXT_WINDOW),
        );
        let reason = decide(&inputs, &self.settings);
        if reason.applies() {
            if let Some(d) = draft {
                self.request = d;
            }
            self.sent = call.release.to_vec();
            self.held_usd = 0.0;
        } else {
            let extra =
                (inputs.hold_tokens - inputs.apply_tokens).max(0.0) * inputs.read_usd_per_token;
            self.held_usd += extra;
            self.totals.extra_read_usd += extra;
            self.totals.deferred_usd += inputs.apply_usd - inputs.hold_usd;
            self.sent = hold.to_vec();
        }
        (reason, Some(inputs))
    }

    /// Brings the kept request to `slots`, reusing it before `first`.
    fn update_request(&mut self, slots: &[i64], first: usize, preamble: &Preamble) {
        let m = self.model.as_ref().expect("a call sets the model first");
        let messages: Vec<&Converted<Packed>> = slots
            .iter()
            .map(|s| &self.converted[self.slot_of[s] as usize])
            .collect();
        self.request
            .update(m.key, preamble, &messages, first, &m.model, &m.rules);
    }

    /// A cold start: the slots, the request, the horizon and (another
    /// model) the cache and calibration are forgotten.
    fn forget(&mut self, switched: bool) {
        self.converted.clear();
        self.slot_of.clear();
        self.sent.clear();
        self.release_last.clear();
        self.request = Incremental::default();
        if switched {
            self.cache = Cache::default();
            self.points.clear();
            self.last_sizes = None;
        }
    }

    fn live(&self) -> &LiveModel {
        self.model.as_ref().expect("a call sets the model first")
    }
}

/// pi-ai's model object read as a catalog entry (its `cost` and
/// `contextWindow`), the shape `js/catalog.js` gives the replay.
fn entry_of(model: &Json) -> Option<ModelEntry> {
    let provider = model.get("provider").and_then(Json::as_text)?;
    let id = model.get("id").and_then(Json::as_text)?;
    let cost = model.get("cost")?;
    let mut fields = vec![];
    for (from, to) in [
        ("input", "input"),
        ("output", "output"),
        ("cacheRead", "cacheRead"),
        ("cacheWrite", "cacheWrite"),
        ("tiers", "tiers"),
    ] {
        if let Some(v) = cost.get(from) {
            fields.push((to.as_bytes().into(), v.clone()));
        }
    }
    if let Some(w) = model.get("contextWindow") {
        fields.push((b"contextWindow".as_slice().into(), w.clone()));
    }
    let name = [provider, b"/", id].concat();
    let catalog = Catalog::from_json(&Json::Obj(vec![(
        name.as_slice().into(),
        Json::Obj(fields),
    )]));
    catalog.get(provider, id).cloned()
}

/// The first index where `a` and `b` differ (the shorter length when one
/// is a prefix of the other).
fn first_difference(a: &[i64], b: &[i64]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
