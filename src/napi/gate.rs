//! `NativeGate`: the cache-aware gate of one live pi conversation
//! (`crate::gate::live`), for the extension's `condenseNative.gate`. The
//! JS side names each message by a slot (pi-condense's drop-in: an input
//! index, or an edit id as the render's order spells it, negative); each
//! call crosses as typed arrays of slots and the drop-in's engine, whose
//! last render the gate reads a slot's message from.

use napi::bindgen_prelude::{Int32Array, Int32ArraySlice};
use napi::Env;
use napi_derive::napi;

use super::engine::NativeEngine;
use super::js_error;
use crate::error::PruneError;
use crate::gate::live::{LiveCall, LiveGate, RenderedSlots};
use crate::gate::rule::{GateSettings, Reason};
use crate::json::{parse_value, Json};

#[napi]
pub struct NativeGate {
    inner: LiveGate,
}

/// One of the gate's reasons.
#[napi(object)]
pub struct NativeGateReason {
    /// `cold`, `budget`, `pays`, `same` or `waits`.
    pub name: String,
    /// `apply` or `hold`.
    pub sent: String,
}

/// How a hold's messages are built (`NativeGate.held`).
#[napi(object)]
pub struct NativeHeld {
    pub common: u32,
    pub previous: u32,
    pub sources: Int32Array,
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
    /// long cache retention; `reserveTokens`: pi's
    /// `compaction.reserveTokens` when its compaction is on (a hold never
    /// passes the window less it). Cheap.
    #[napi(constructor, catch_unwind)]
    pub fn new(
        env: Env,
        settings: String,
        long: bool,
        reserve_tokens: Option<f64>,
    ) -> napi::Result<Self> {
        let s = parse(settings.as_bytes(), "settings")
            .and_then(|v| GateSettings::from_json(Some(&v), "condenseNative.gate"))
            .map_err(|e| js_error(&env, e))?;
        let mut inner = LiveGate::new(s, long);
        inner.reserve = reserve_tokens.filter(|r| r.is_finite() && *r >= 0.0);
        Ok(NativeGate { inner })
    }

    /// The gate's choice at one call, as the index of its reason in
    /// `NativeGate.reasons()`.
    ///
    /// - `engine`: the drop-in's engine, just after its render of this
    ///   call: the gate reads the messages it has not converted yet from
    ///   the engine's last render (an input's kept text, an edit's value
    ///   from the render's script), so none crosses again;
    /// - `now`: when the request goes out (ms);
    /// - `cold`: by what pi says (first call, session opened, branch,
    ///   compaction, another model, not an append);
    /// - `model`: `{model, catalog}` (pi-ai's model object and its prices as
    ///   `js/catalog.js` `catalogOf` gives them), `system` (the system
    ///   prompt), `tools` (the active tools' definitions): JSON text, each
    ///   null when unchanged since the previous call;
    /// - `usage`: JSON text of the usage pi recorded on the answer to the
    ///   previous request, if any, and `answerAt`: that answer's
    ///   `timestamp` (its thinking is bound to the previous request, under
    ///   preserved thinking);
    /// - `release`: the release's render, slot by slot (the engine's order,
    ///   or `0..n` for a render that is the input itself).
    ///
    /// On a hold, `held` says how to build its messages (the hold itself
    /// is built here, `gate::hold`, as the replay builds its holds).
    /// Costs the conversion of the messages no request held yet, both
    /// requests brought up to date from the first message that changed, and
    /// two cache lookups: what changed, not the conversation.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn decide(
        &mut self,
        env: Env,
        engine: &NativeEngine,
        now: f64,
        cold: bool,
        model: Option<String>,
        system: Option<String>,
        tools: Option<String>,
        usage: Option<String>,
        answer_at: Option<f64>,
        release: Int32ArraySlice<'_>,
    ) -> napi::Result<u32> {
        let mut run = || -> Result<u32, PruneError> {
            let read = |text: &Option<String>, what: &str| match text {
                Some(text) => parse(text.as_bytes(), what).map(Some),
                None => Ok(None),
            };
            let model = read(&model, "model")?;
            let usage = read(&usage, "usage")?;
            let Some(script) = engine.inner.last_rendered() else {
                return Err(PruneError::bad_argument(
                    "gate: the engine changed since its last render",
                ));
            };
            let values = RenderedSlots {
                script: &script,
                release: &release,
            };
            let slots = script.slots();
            let source_of = |i: usize, slot: i32| match slot {
                s if s >= 0 => Some(s as usize),
                _ => slots.get(i).and_then(|s| s.input()),
            };
            let d = self.inner.decide(LiveCall {
                now,
                cold,
                model: model.as_ref(),
                system: system.as_deref(),
                tools: tools.as_deref(),
                usage: usage.as_ref(),
                answer: answer_at,
                release: &release,
                inputs: engine.inner.len(),
                source_of: &source_of,
                values: &values,
            })?;
            Ok(d.reason as u32)
        };
        run().map_err(|e| js_error(&env, e))
    }

    /// pi's cache warmer re-sent the last request at `at` (ms; a `usage`
    /// entry of kind `cache_warm` in pi's session): its cache entries live
    /// on from then, as the replay's warms make them. Cheap: one cache
    /// lookup.
    #[napi(catch_unwind)]
    pub fn warmed(&mut self, at: f64) {
        if at.is_finite() {
            self.inner.warmed(at);
        }
    }

    /// The reasons, in the order `decide` numbers them: each one's name
    /// and what it sends (`apply` or `hold`). Cheap.
    #[napi(catch_unwind)]
    pub fn reasons() -> Vec<NativeGateReason> {
        Reason::ALL
            .iter()
            .map(|r| NativeGateReason {
                name: r.name().to_string(),
                sent: r.sent().to_string(),
            })
            .collect()
    }

    /// The latest call's hold, or null when it applied: from position
    /// `common` on (before it the release's render is the hold), per
    /// message `-j - 1` for pi's message `j` now, else `p`: before
    /// `previous` the previous request's message at `p`, after it the
    /// release's render at `p`. Costs the held part.
    #[napi(getter, catch_unwind)]
    pub fn held(&self) -> Option<NativeHeld> {
        self.inner.held.as_ref().map(|h| NativeHeld {
            common: h.common as u32,
            previous: h.previous as u32,
            sources: Int32Array::new(h.sources.clone()),
        })
    }

    /// Applies, holds, reasons and the estimated saving so far. Cheap.
    #[napi(getter, catch_unwind)]
    pub fn totals(&self) -> NativeGateTotals {
        let t = self.inner.totals;
        let n = |r: Reason| t.reasons[r as usize];
        let sum = |applies: bool| {
            Reason::ALL
                .iter()
                .filter(|r| r.applies() == applies)
                .map(|&r| n(r))
                .sum()
        };
        NativeGateTotals {
            applies: sum(true),
            holds: sum(false),
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
