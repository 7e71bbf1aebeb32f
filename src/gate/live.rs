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
//! an edit's id); each is converted once, the first time a request holds
//! it, from what `SlotValues` says it is (in pi: the drop-in's engine, whose
//! last render already read every message, so nothing crosses as JSON
//! again). A cold call forgets them all.

use super::hold::{self, Appended};
use super::rule::{decide, warm_inputs, Carried, GateInputs, GateSettings, Quoted, Reason};
use crate::cost::bill::Tariff;
use crate::cost::cache::Cache;
use crate::cost::calibration::Rolling;
use crate::cost::catalog::{rules_for, Catalog, ModelEntry, Rules};
use crate::cost::digest::first_difference;
use crate::cost::kept::{wire_message, KeptRequest, MessageValues, WireMessage};
use crate::cost::request::{Bindings, Preamble};
use crate::cost::slot_value;
use crate::cost::usage::Usage;
use crate::cost::wire::CallModel;
use crate::engine::RenderedScript;
use crate::error::{PruneError, Result};
use crate::hash::HashMap;
use crate::json::{utf16_len, Json};
use xxhash_rust::xxh3::xxh3_64;

/// One model call as the extension sees it.
pub struct LiveCall<'a> {
    /// When the request goes out (ms).
    pub now: f64,
    /// Cold by what pi says: the first call, a session opened, a branch, a
    /// compaction, another model, a context that is not an append of the
    /// previous one.
    pub cold: bool,
    /// `{model, catalog}`: pi-ai's model object (`ctx.model`: provider,
    /// api, id, input, compat) and its prices as the replay's catalog
    /// object (`js/catalog.js` `catalogOf`); None: the previous call's.
    pub model: Option<&'a Json>,
    /// The system prompt and the active tools' definitions, as text; None:
    /// the previous call's.
    pub system: Option<&'a str>,
    pub tools: Option<&'a str>,
    /// The usage pi recorded on the answer to the previous request, when
    /// it is known (read as the replay reads a session's).
    pub usage: Option<&'a Json>,
    /// That answer's `timestamp` (its thinking is bound to the previous
    /// request, under preserved thinking).
    pub answer: Option<f64>,
    /// The release's render, slot by slot, of `inputs` messages.
    pub release: &'a [i32],
    pub inputs: usize,
    /// The input message the release renders at position `i` (its slot
    /// given too; None: a chain block).
    pub source_of: &'a dyn Fn(usize, i32) -> Option<usize>,
    /// What a slot not converted yet stands for (`at`: its position in
    /// the release's render, when the gate knows it).
    pub values: &'a dyn MessageValues<i32>,
}

/// The slots of the release's render as the drop-in's engine last rendered
/// it (`Engine::last_rendered`): an input's value from the text the engine
/// keeps, an edit's from what the render's script shows.
pub struct RenderedSlots<'a> {
    pub script: &'a RenderedScript<'a>,
    /// The render's order, slot by slot, as the JS side holds it.
    pub release: &'a [i32],
}

impl MessageValues<i32> for RenderedSlots<'_> {
    fn value(&self, &slot: &i32, at: Option<usize>) -> Result<Json> {
        if slot >= 0 {
            return match self.script.input_text(slot as usize) {
                Some(text) => Ok(slot_value::message(text)),
                None => Err(PruneError::bad_argument(format!(
                    "gate: slot {slot} is past the engine's messages"
                ))),
            };
        }
        let slots = self.script.slots();
        if slots.len() != self.release.len() {
            return Err(PruneError::bad_argument(
                "gate: the release's order is not the engine's last render",
            ));
        }
        let at = at
            .filter(|&p| self.release.get(p) == Some(&slot))
            .or_else(|| self.release.iter().position(|&s| s == slot));
        match at {
            Some(p) => Ok(slot_value::shown(&self.script.shown(&slots[p]))),
            None => Err(PruneError::bad_argument(format!(
                "gate: slot {slot} is in neither the release's render nor an earlier request"
            ))),
        }
    }
}

/// What the gate sent at a call, and what it read to decide.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiveDecision {
    pub reason: Reason,
    /// None at a cold call (nothing quoted).
    pub inputs: Option<GateInputs>,
}

/// A hold as the caller builds its messages: from position `common` on
/// (before it the release and the previous request agree), each message of
/// the held request as `Held::source`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Held {
    pub common: usize,
    /// Per position from `common`: `-j - 1` for input message `j` as the
    /// caller has it now; `p >= 0` before `previous` for the previous
    /// request's message at `p`, from `previous` on for the release's
    /// render at `p`.
    pub sources: Vec<i32>,
    /// The previous request's length.
    pub previous: usize,
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

/// A request kept from call to call, by the slots of its messages.
type Kept = KeptRequest<i32>;

/// The gate of one live conversation.
pub struct LiveGate {
    settings: GateSettings,
    /// pi's `compaction.reserveTokens` when its compaction is on: a hold
    /// never passes the window less it.
    pub reserve: Option<f64>,
    /// pi's long cache retention (`PI_CACHE_RETENTION=long`).
    long: bool,
    carried: Carried,
    model: Option<LiveModel>,
    /// The tools and system as counted (the calibration sizes them).
    counted: Preamble,
    /// Tokens per character on the answers so far (`cost::calibration`,
    /// as the replay's gated walks fit it).
    calibration: Rolling,
    cache: Cache,
    /// The slots converted since the last cold call.
    converted: HashMap<i32, WireMessage>,
    /// What the answers' thinking is bound to (preserved thinking), and the
    /// prefix of the last request sent, which its answer will be bound to.
    bindings: Bindings,
    sent_end: Option<u64>,
    /// The request sent last, and the release's latest render (the same
    /// after an apply; carried on while the gate holds, so each call
    /// brings it up to date from what the release changed).
    sent: Kept,
    release: Kept,
    /// The last request's message and preamble characters, for the usage
    /// its answer records.
    last_sizes: Option<(f64, f64)>,
    pub totals: LiveTotals,
    /// The latest call's messages (a hold appends those past it).
    inputs: usize,
    /// The latest call's hold, when it held.
    pub held: Option<Held>,
}

impl LiveGate {
    pub fn new(settings: GateSettings, long: bool) -> Self {
        LiveGate {
            settings,
            reserve: None,
            long,
            carried: Carried::default(),
            model: None,
            counted: Preamble::default(),
            calibration: Rolling::default(),
            cache: Cache::default(),
            converted: HashMap::default(),
            bindings: Bindings::default(),
            sent_end: None,
            sent: Kept::default(),
            release: Kept::default(),
            last_sizes: None,
            totals: LiveTotals::default(),
            inputs: 0,
            held: None,
        }
    }

    /// The gate's choice at one call: the release's render (apply) or the
    /// previous request followed by what was appended since (hold). The request sent
    /// goes through the cache at `call.now`.
    pub fn decide(&mut self, call: LiveCall<'_>) -> Result<LiveDecision> {
        let switched = match call.model {
            Some(json) => self.set_model(json),
            None if self.model.is_none() => {
                return Err(PruneError::bad_argument(
                    "gate: the first call names no model",
                ))
            }
            None => false,
        };
        let cold = call.cold || switched || self.sent.keys().is_empty();
        if cold {
            self.forget(switched);
        }
        let usage = call.usage.and_then(Usage::from_json).map(|u| u.total());
        self.calibrate(usage, switched);
        if let (Some(at), Some(end)) = (call.answer.filter(|t| t.is_finite()), self.sent_end) {
            self.bindings.insert(at.to_bits(), end);
        }
        // Counted as the replay counts a session's system message
        // (`replay/calls.rs`): the prompt as the wire quotes it, the tools'
        // JSON when there are any.
        if let Some(system) = call.system {
            let mut quoted = Vec::with_capacity(system.len() + 2);
            crate::json::text::write_str(&mut quoted, system);
            self.counted.system_chars = if system.is_empty() {
                0
            } else {
                utf16_len(&quoted) as u64
            };
            self.counted.system_hash = xxh3_64(system.as_bytes());
        }
        if let Some(tools) = call.tools {
            self.counted.tools_chars = if tools.len() > 2 {
                utf16_len(tools.as_bytes()) as u64
            } else {
                0
            };
            self.counted.tools_hash = xxh3_64(tools.as_bytes());
        }
        let preamble = self.counted;
        self.held = None;
        let (reason, inputs) = if cold {
            self.carried.cold();
            let mut release = std::mem::take(&mut self.release);
            self.bring(&mut release, 0, call.release, Some, call.values, &preamble)?;
            self.sent = release.clone();
            self.release = release;
            (Reason::Cold, None)
        } else {
            self.warm(&call, &preamble)?
        };
        self.inputs = call.inputs;
        let (rules, tpc) = (self.live().rules, self.tokens_per_char());
        let sent = self.sent.request();
        self.cache.send(sent, &rules, tpc, call.now);
        self.sent_end = Some(sent.end_hash);
        self.last_sizes = Some((
            sent.message_chars as f64,
            (preamble.tools_chars + preamble.system_chars) as f64,
        ));
        self.totals.reasons[reason as usize] += 1;
        Ok(LiveDecision { reason, inputs })
    }

    /// A warm call: both candidates brought up to date and quoted on the
    /// cache as it stands.
    fn warm(
        &mut self,
        call: &LiveCall<'_>,
        preamble: &Preamble,
    ) -> Result<(Reason, Option<GateInputs>)> {
        let common = first_difference(self.sent.keys(), call.release);
        let first = first_difference(self.release.keys(), call.release);
        self.carried
            .horizon
            .observe(first < self.release.keys().len());
        let mut release = std::mem::take(&mut self.release);
        let new = &call.release[first..];
        let brought = self.bring(
            &mut release,
            first,
            new,
            |j| Some(first + j),
            call.values,
            preamble,
        );
        self.release = release;
        brought?;
        // The hold: the previous request, then what was appended since.
        let input_of = |i: usize| (call.source_of)(i, call.release[i]);
        let appended = hold::appended(call.release.len(), &input_of, self.inputs, call.inputs);
        let tail: Vec<i32> = appended
            .iter()
            .map(|&a| match a {
                Appended::Render(i) => call.release[i],
                Appended::Input(j) => j as i32,
            })
            .collect();
        let at = |j: usize| match appended[j] {
            Appended::Render(i) => Some(i),
            Appended::Input(_) => None,
        };
        let mut sent = std::mem::take(&mut self.sent);
        let previous = sent.keys().len();
        let before: Vec<i32> = sent.keys()[common.min(previous)..].to_vec();
        let brought = self.bring(&mut sent, previous, &tail, at, call.values, preamble);
        self.sent = sent;
        brought?;
        let same = self.release.keys() == self.sent.keys();
        let m = self.live();
        let tariff = Tariff {
            entry: m.entry.as_ref(),
            tokens_per_char: self.tokens_per_char(),
            long: self.long,
            premium: m.rules.write_premium,
        };
        let quote = |kept: &Kept| {
            let r = kept.request();
            let o = self
                .cache
                .look(r, &m.rules, tariff.tokens_per_char, call.now);
            Quoted::of(r, o, tariff.outcome(&o), tariff.tokens_per_char)
        };
        let hold = quote(&self.sent);
        let apply = (!same).then(|| quote(&self.release));
        let inputs = warm_inputs(&hold, apply.as_ref(), &tariff, &self.carried, self.reserve);
        let reason = decide(&inputs, &self.settings);
        let extra = self.carried.settle(reason, &inputs);
        if reason.applies() {
            if !same {
                self.sent = self.release.clone();
            }
        } else {
            self.totals.extra_read_usd += extra;
            self.totals.deferred_usd += inputs.apply_usd - inputs.hold_usd;
            let start = common.min(previous);
            let earlier = before.iter().enumerate().map(|(n, &s)| match s {
                s if s >= 0 => -s - 1,
                _ => (start + n) as i32,
            });
            let later = appended.iter().map(|&a| match a {
                Appended::Render(i) => i as i32,
                Appended::Input(j) => -(j as i32) - 1,
            });
            self.held = Some(Held {
                common: start,
                sources: earlier.chain(later).collect(),
                previous,
            });
        }
        Ok((reason, Some(inputs)))
    }

    /// Brings `kept` to its slots before `first` followed by `new`,
    /// converting the slots no request held yet from `values` (`at(j)`:
    /// where `new[j]` sits in the release's render, when it does).
    fn bring(
        &mut self,
        kept: &mut Kept,
        first: usize,
        new: &[i32],
        at: impl Fn(usize) -> Option<usize>,
        values: &dyn MessageValues<i32>,
        preamble: &Preamble,
    ) -> Result<()> {
        let m = self.model.as_ref().expect("a call sets the model first");
        let converted = &mut self.converted;
        let message = |j: usize| -> Result<WireMessage> {
            let slot = new[j];
            if let Some(message) = converted.get(&slot) {
                return Ok(message.clone());
            }
            let value = values.value(&slot, at(j))?;
            let message = wire_message(&value, &m.model);
            converted.insert(slot, message.clone());
            Ok(message)
        };
        kept.bring(
            first,
            new,
            message,
            &m.model,
            m.key,
            preamble,
            (&m.rules, Some(&self.bindings)),
        )?;
        Ok(())
    }

    /// Takes pi-ai's model object; true when it is another model than the
    /// previous call's.
    fn set_model(&mut self, json: &Json) -> bool {
        let model = CallModel::from_json(json.get("model").unwrap_or(&Json::Null));
        let key = model.key();
        let switched = self.model.as_ref().is_none_or(|m| m.key != key);
        self.model = Some(LiveModel {
            rules: rules_for(&model, self.long),
            entry: json
                .get("catalog")
                .map(Catalog::from_json)
                .and_then(|c| c.get(&model.provider, &model.id).cloned()),
            model,
            key,
        });
        switched
    }

    /// The prompt tokens pi recorded for the previous request, against its
    /// size: tokens per character (and the preamble's tokens), fitted on
    /// the answers so far (`Rolling`).
    fn calibrate(&mut self, usage: Option<f64>, switched: bool) {
        if switched {
            let key = self.live().key;
            self.calibration.switch_to(key);
            self.last_sizes = None;
        }
        if let (Some(tokens), Some((messages, preamble))) = (usage, self.last_sizes) {
            self.calibration.observe(messages, preamble, tokens);
        }
    }

    fn tokens_per_char(&self) -> f64 {
        self.calibration.factor().tokens_per_char
    }

    /// pi's cache warmer re-sent the last request at `at` (ms): its
    /// entries' lifetimes start again, as the replay's warms do.
    pub fn warmed(&mut self, at: f64) {
        let Some(m) = self.model.as_ref() else {
            return;
        };
        if self.sent.keys().is_empty() {
            return;
        }
        let tpc = self.tokens_per_char();
        self.cache.send(self.sent.request(), &m.rules, tpc, at);
    }

    /// A cold start: the slots and both requests are forgotten (another
    /// model: the cache too).
    fn forget(&mut self, switched: bool) {
        self.converted.clear();
        self.sent = Kept::default();
        self.release = Kept::default();
        if switched {
            self.cache = Cache::default();
        }
    }

    fn live(&self) -> &LiveModel {
        self.model.as_ref().expect("a call sets the model first")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_value;

    fn json(text: &str) -> Json {
        parse_value(text.as_bytes()).unwrap()
    }

    /// `{model, catalog}` of an Anthropic model priced as Sonnet.
    fn anthropic(id: &str, window: f64) -> Json {
        json(&format!(
            r#"{{"model":{{"provider":"anthropic","api":"anthropic-messages","id":"{id}","input":["text"]}},
            "catalog":{{"anthropic/{id}":{{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75,"contextWindow":{window}}}}}}}"#
        ))
    }

    fn user(i: usize) -> Json {
        json(&format!(
            r#"{{"role":"user","content":"question {i} {}","timestamp":{i}}}"#,
            "x".repeat(400)
        ))
    }

    /// The messages of the slots a test gives, by slot.
    struct Given(Vec<(i32, Json)>);

    impl MessageValues<i32> for Given {
        fn value(&self, &slot: &i32, _at: Option<usize>) -> Result<Json> {
            match self.0.iter().find(|(s, _)| *s == slot) {
                Some((_, m)) => Ok(m.clone()),
                None => Err(PruneError::bad_argument(format!(
                    "gate: slot {slot} was never given"
                ))),
            }
        }
    }

    /// The input a test's slot renders: its own, or message 0 for the
    /// edit -1 (a stub of it).
    fn source(_: usize, slot: i32) -> Option<usize> {
        Some(slot.max(0) as usize)
    }

    /// A call of the release rendering `release` (slots) of as many inputs
    /// as it names, the messages of slots new to the gate in `values`.
    fn call<'a>(
        now: f64,
        model: Option<&'a Json>,
        system: Option<&'a str>,
        release: &'a [i32],
        values: &'a Given,
    ) -> LiveCall<'a> {
        LiveCall {
            now,
            cold: false,
            model,
            system,
            tools: None,
            usage: None,
            answer: None,
            release,
            inputs: release
                .iter()
                .map(|&s| s.max(0) as usize + 1)
                .max()
                .unwrap_or(0),
            source_of: &source,
            values,
        }
    }

    /// Four user messages on `model`, the gate's first call.
    fn first_call(gate: &mut LiveGate, model: &Json, system: &str) -> LiveDecision {
        let given = Given((0..4).map(|i| (i, user(i as usize))).collect());
        gate.decide(call(0.0, Some(model), Some(system), &[0, 1, 2, 3], &given))
            .unwrap()
    }

    #[test]
    fn cold_same_hold_and_a_pause() {
        let model = anthropic("claude-sonnet-4-5", 200_000.0);
        let system = "You are a careful agent. ".repeat(400);
        let mut gate = LiveGate::new(GateSettings::default(), false);
        // Call 0: cold.
        let d = first_call(&mut gate, &model, &system);
        assert_eq!(d.reason, Reason::Cold);
        assert!(d.inputs.is_none());
        // Call 1: an append, rendered as it is: the hold itself.
        let d = gate
            .decide(call(
                1_000.0,
                None,
                None,
                &[0, 1, 2, 3, 4],
                &Given(vec![(4, user(4))]),
            ))
            .unwrap();
        assert_eq!(d.reason, Reason::Same);
        let i = d.inputs.unwrap();
        assert_eq!(i.apply_usd, i.hold_usd);
        assert!(!i.hold_reads_nothing);
        // Call 2: the release rewrites message 0 (an edit, slot -1) and
        // shortens it a little: rewriting everything after it does not pay.
        let stub = json(r#"{"role":"user","content":"stub","timestamp":0}"#);
        let d = gate
            .decide(call(
                2_000.0,
                None,
                None,
                &[-1, 1, 2, 3, 4, 5],
                &Given(vec![(5, user(5)), (-1, stub.clone())]),
            ))
            .unwrap();
        assert_eq!(d.reason, Reason::Waits);
        let i = d.inputs.unwrap();
        assert!(i.apply_usd > i.hold_usd && i.apply_tokens < i.hold_tokens);
        // The hold: the previous request from the first slot (where the
        // release differs) as pi hands its inputs over now, then the
        // appended message as the release renders it (position 5).
        let held = gate.held.clone().unwrap();
        assert_eq!((held.common, held.previous), (0, 5));
        assert_eq!(held.sources, [-1, -2, -3, -4, -5, 5]);
        assert_eq!(gate.sent.keys(), [0, 1, 2, 3, 4, 5]);
        assert!(gate.totals.deferred_usd > 0.0 && gate.carried.held_usd > 0.0);
        // Call 3, ten minutes on: the hold would read nothing cached.
        let d = gate
            .decide(call(
                602_000.0,
                None,
                None,
                &[-1, 1, 2, 3, 4, 5, 6],
                &Given(vec![(6, user(6))]),
            ))
            .unwrap();
        assert_eq!(d.reason, Reason::Cold);
        assert_eq!(gate.sent.keys(), [-1, 1, 2, 3, 4, 5, 6]);
        assert_eq!(gate.carried.held_usd, 0.0);
        // Another model: cold, and its slots are forgotten.
        let haiku = anthropic("claude-haiku-4-5", 200_000.0);
        let e = gate
            .decide(call(603_000.0, Some(&haiku), None, &[0], &Given(vec![])))
            .unwrap_err();
        assert!(
            e.message.contains("slot 0 was never given"),
            "{}",
            e.message
        );
        let first = Given(vec![(0, user(0))]);
        let mut all = call(603_000.0, Some(&haiku), None, &[0], &first);
        all.cold = true;
        assert_eq!(gate.decide(all).unwrap().reason, Reason::Cold);
        let t = gate.totals;
        // Cold at calls 0 and 3 and on Haiku (the refused call counts for
        // nothing), same at 1, waits at 2.
        assert_eq!(t.reasons, [3, 0, 0, 1, 1]);
    }

    #[test]
    fn a_long_horizon_pays_and_a_small_window_is_over_budget() {
        let system = "You are a careful agent. ".repeat(400);
        let stub = json(r#"{"role":"user","content":"stub","timestamp":0}"#);
        let run = |settings: GateSettings, window: f64| {
            let model = anthropic("claude-sonnet-4-5", window);
            let mut gate = LiveGate::new(settings, false);
            first_call(&mut gate, &model, &system);
            gate.decide(call(
                1_000.0,
                None,
                None,
                &[-1, 1, 2, 3, 4],
                &Given(vec![(4, user(4)), (-1, stub.clone())]),
            ))
            .unwrap()
            .reason
        };
        let d = GateSettings::default();
        assert_eq!(run(d, 200_000.0), Reason::Waits);
        let long = GateSettings {
            horizon: Some(1e6),
            ..d
        };
        assert_eq!(run(long, 200_000.0), Reason::Pays);
        assert_eq!(run(d, 1_000.0), Reason::Budget);
    }

    #[test]
    fn the_answers_usage_calibrates_tokens_per_character() {
        let model = anthropic("claude-sonnet-4-5", 200_000.0);
        let system = "You are a careful agent. ".repeat(400);
        let mut gate = LiveGate::new(GateSettings::default(), false);
        first_call(&mut gate, &model, &system);
        assert_eq!(gate.tokens_per_char(), 0.25);
        let (messages, preamble) = gate.last_sizes.unwrap();
        // The answer says the request took a token per two characters; a
        // usage without `input` is no usage, as in a session file.
        for (usage, want) in [
            (r#"{"cacheRead":9}"#, 0.25),
            (
                &*format!(
                    r#"{{"input":{},"cacheWrite":0}}"#,
                    (messages + preamble) / 2.0
                ),
                0.5,
            ),
        ] {
            let usage = json(usage);
            let none = Given(vec![]);
            let mut next = call(1_000.0, None, None, &[0, 1, 2, 3], &none);
            next.usage = Some(&usage);
            gate.decide(next).unwrap();
            assert_eq!(gate.tokens_per_char(), want);
        }
    }
}
