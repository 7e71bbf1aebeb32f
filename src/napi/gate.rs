//! `NativeGate`: the cache-aware gate of one live pi conversation
//! (`crate::replay::live`), for the extension's `condenseNative.gate`. The
//! JS side names each message by a slot (pi-condense's drop-in: an input
//! index, or an edit id as the render's order spells it, negative) and
//! sends a slot's JSON once; each call crosses as typed arrays of slots and
//! one JSON text of the messages new to the gate.

use napi::bindgen_prelude::Int32Array;
use napi::Env;
use napi_derive::napi;

use super::js_error;
use crate::error::PruneError;
use crate::json::{parse_value, Json};
use crate::replay::gate::{GateSettings, Reason};
use crate::replay::live::{LiveCall, LiveGate};

#[napi]
pub struct NativeGate {
    inner: LiveGate,
}

/// One model call, as `NativeGate.decide` takes it.
#[napi(object)]
pub struct NativeGateCall {
    /// When the request goes out (ms since the epoch).
    pub now: f64,
    /// Cold by what pi says (first call, session opened, branch,
    /// compaction, a context that is not an append).
    pub cold: bool,
    /// JSON text of pi-ai's model object (`ctx.model`).
    pub model: String,
    /// The system prompt, and the active tools' definitions as JSON text.
    pub system: String,
    pub tools: String,
    /// Prompt tokens pi recorded for the previous request, when known.
    pub usage: Option<f64>,
    /// The release's render, slot by slot.
    pub release: Int32Array,
    /// The slots a hold appends after the previous request's.
    pub tail: Int32Array,
    /// Slots new to the gate, and their messages (a JSON array, in order).
    pub fresh_slots: Int32Array,
    pub fresh_json: String,
}

/// What the gate sent at one call, and the quotes it read.
#[napi(object)]
pub struct NativeGateDecision {
    /// `apply` (the release's render) or `hold`.
    pub sent: String,
    /// `cold`, `same`, `budget`, `pays` or `waits`.
    pub reason: String,
    pub horizon: f64,
    /// USD of sending each candidate now, and their prompt tokens (absent
    /// at a cold call: nothing was quoted).
    pub apply_usd: Option<f64>,
    pub hold_usd: Option<f64>,
    pub apply_tokens: Option<f64>,
    pub hold_tokens: Option<f64>,
}

/// The gate's counts so far.
#[napi(object)]
pub struct NativeGateTotals {
    pub applies: u32,
    pub holds: u32,
    pub cold: u32,
    pub same: u32,
    pub budget: u32,
    pub pays: u32,
    pub waits: u32,
    /// What the holds put off paying now, and their extra reads since.
    pub deferred_usd: f64,
    pub extra_read_usd: f64,
}

fn parse(text: &[u8], what: &str) -> Result<Json, PruneError> {
    parse_value(text).map_err(|e| PruneError::bad_argument(format!("gate: {what}: {e}")))
}

#[napi]
impl NativeGate {
    /// A gate with `settings` (pi's `condenseNative.gate` as JSON text,
    /// checked by name: `enabled`, `horizon`, `budget`); `long`: pi's
    /// long cache retention. Cheap.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, settings: String, long: bool) -> napi::Result<Self> {
        let s = parse(settings.as_bytes(), "settings")
            .and_then(|v| GateSettings::from_json(Some(&v), "condenseNative.gate"))
            .map_err(|e| js_error(&env, e))?;
        Ok(NativeGate {
            inner: LiveGate::new(s, long),
        })
    }

    /// The gate's choice at one call. Costs the conversion of the fresh
    /// messages, the request brought up to date from the first message
    /// that changed (for each candidate) and two cache lookups: what
    /// changed, not the conversation.
    #[napi(catch_unwind)]
    pub fn decide(&mut self, env: Env, call: NativeGateCall) -> napi::Result<NativeGateDecision> {
        let mut run = || -> Result<NativeGateDecision, PruneError> {
            let model = parse(call.model.as_bytes(), "model")?;
            let fresh = match parse(call.fresh_json.as_bytes(), "fresh messages")? {
                Json::Arr(items) if items.len() == call.fresh_slots.len() => items,
                _ => {
                    return Err(PruneError::bad_argument(
                        "gate: fresh messages must be an array with one message per fresh slot",
                    ))
                }
            };
            let widen = |a: &Int32Array| a.iter().map(|&s| i64::from(s)).collect::<Vec<_>>();
            let (release, tail) = (widen(&call.release), widen(&call.tail));
            let d = self.inner.decide(LiveCall {
                now: call.now,
                cold: call.cold,
                model: &model,
                system: &call.system,
                tools: &call.tools,
                usage: call.usage.filter(|u| u.is_finite()),
                release: &release,
                tail: &tail,
                fresh: call
                    .fresh_slots
                    .iter()
                    .map(|&s| i64::from(s))
                    .zip(fresh)
                    .collect(),
            })?;
            let i = d.inputs;
            Ok(NativeGateDecision {
                sent: d.reason.sent().to_string(),
                reason: d.reason.name().to_string(),
                horizon: d.horizon,
                apply_usd: i.map(|i| i.apply_usd),
                hold_usd: i.map(|i| i.hold_usd),
                apply_tokens: i.map(|i| i.apply_tokens),
                hold_tokens: i.map(|i| i.hold_tokens),
            })
        };
        run().map_err(|e| js_error(&env, e))
    }

    /// Applies, holds, reasons and the estimated saving so far. Cheap.
    #[napi(getter, catch_unwind)]
    pub fn totals(&self) -> NativeGateTotals {
        let t = self.inner.totals;
        let n = |r: Reason| t.reasons[r as usize];
        NativeGateTotals {
            applies: Reason::ALL
                .iter()
                .filter(|r| r.applies())
                .map(|&r| n(r))
                .sum(),
            holds: n(Reason::Waits),
            cold: n(Reason::Cold),
            budget: n(Reason::Budget),
            pays: n(Reason::Pays),
            same: n(Reason::Same),
            waits: n(Reason::Waits),
            deferred_usd: t.deferred_usd,
            extra_read_usd: t.extra_read_usd,
        }
    }
}
