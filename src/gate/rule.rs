//! The cache-aware gate (issue 31): at each model call the release renders
//! R as always, and the gate sends either R (apply) or H (hold): every
//! message the previous request sent, byte for byte, followed by the
//! messages appended since, each as the release renders it (as it is, when
//! the release folds it into a chain block further back, so that a hold
//! never loses a message). Holding keeps the cached prefix warm; applying
//! writes R from its first changed position and then reads the smaller R
//! on every later call.
//!
//! [`decide`] is the rule, and the only copy of it: the replay and the tune
//! call it per gated render (`walk.rs`, with the quotes of `pricer.rs`), and
//! pi's extension through the binding. It applies when
//! 1. the cache is cold: the first call, another model, a context that is
//!    not an append of the previous one (compaction, branch, context
//!    edit), or a hold that would read nothing past the tools and system
//!    (the lifetime passed, pi's cache warms counted);
//! 2. H would pass the budget: a share of the model's context window, or
//!    pi's compaction threshold (the window less `reserveTokens`) when
//!    that comes first;
//! 3. it pays: what R saves over H, read on each of the next `horizon`
//!    calls, plus what the holds since the last apply have already cost in
//!    extra reads, is more than applying costs now over holding. The
//!    horizon is a setting or learned ([`Horizon`]); the holds' cost bounds
//!    what waiting can lose (rent or buy). R's quote counts the thinking
//!    the provider would drop from it (preserved thinking: not billed), and
//!    with `keepReasoning` (the default) the gate holds instead of sending
//!    an R that drops reasoning H keeps: the model's reasoning is worth
//!    more than the saving, unless the cache is cold anyway.
//!
//! Only what is known at the call decides: no look-ahead.

use crate::cost::bill::{CallBill, Tariff};
use crate::cost::cache::Outcome;
use crate::cost::catalog::DEFAULT_CONTEXT_WINDOW;
use crate::cost::request::Request;
use crate::error::{PruneError, Result};
use crate::json::Json;

/// The gate's settings, as pi's `condenseNative.gate` and the replay's
/// `gate` option spell them: `{enabled?, horizon?, budget?,
/// keepReasoning?}`. `enabled` is
/// pi's switch (read by the extension); offline the replay gates the
/// `+gate` policies it is asked for, and `enabled: false` leaves the
/// gated twins out of the tune.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GateSettings {
    /// False only when the settings say `"enabled": false`.
    pub enabled: bool,
    /// Calls over which a saving is counted; None: learned ([`Horizon`]).
    pub horizon: Option<f64>,
    /// Share of the model's context window a hold may fill.
    pub budget: f64,
    /// Hold rather than send a render whose rewrite makes the provider
    /// drop reasoning the hold keeps (false only when the settings say
    /// `"keepReasoning": false`).
    pub keep_reasoning: bool,
}

impl Default for GateSettings {
    fn default() -> Self {
        GateSettings {
            enabled: true,
            horizon: None,
            budget: 0.8,
            keep_reasoning: true,
        }
    }
}

/// The horizon learned from the session so far: the calls the release's
/// render has stayed an append of its previous one, per rewrite of its own
/// (plus the one to come). A release that rarely rewrites history gets a
/// long horizon, so the gate applies its rare rewrites at once; one that
/// rewrites at every flush (2.4.3's moving thinking boundary) a short one,
/// so the gate gathers its rewrites into one.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Horizon {
    calls: u32,
    rewrites: u32,
}

impl Horizon {
    /// One more call; `rewrote`: the release's render changed something
    /// its previous render had sent.
    pub fn observe(&mut self, rewrote: bool) {
        self.calls += 1;
        self.rewrites += u32::from(rewrote);
    }

    /// The expected calls until the release rewrites again.
    pub fn calls(&self) -> f64 {
        f64::from(self.calls) / f64::from(self.rewrites + 1)
    }
}

/// What a gated conversation carries from one call to the next (a replay
/// lane's and pi's live gate alike): the horizon learned so far, and what
/// the holds since the last apply have cost in extra reads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Carried {
    pub horizon: Horizon,
    pub held_usd: f64,
}

impl Carried {
    /// A cold call: nothing is carried on.
    pub fn cold(&mut self) {
        *self = Carried::default();
    }

    /// The outcome of a quoted call: an apply starts the holds' count
    /// again; a hold adds its extra reads, which are returned.
    pub fn settle(&mut self, reason: Reason, inputs: &GateInputs) -> f64 {
        if reason.applies() {
            self.held_usd = 0.0;
            return 0.0;
        }
        let extra = (inputs.hold_tokens - inputs.apply_tokens).max(0.0) * inputs.read_usd_per_token;
        self.held_usd += extra;
        extra
    }
}

impl GateSettings {
    /// From the settings object (null or absent: the defaults); `where_`
    /// names it in errors.
    pub fn from_json(v: Option<&Json>, where_: &str) -> Result<Self> {
        let d = GateSettings::default();
        let obj = match v {
            None | Some(Json::Null) => return Ok(d),
            Some(o @ Json::Obj(_)) => o,
            Some(_) => {
                return Err(PruneError::bad_argument(format!(
                    "{where_} must be an object {{enabled?, horizon?, budget?, keepReasoning?}}"
                )))
            }
        };
        if let Json::Obj(entries) = obj {
            for (k, _) in entries {
                if !matches!(&**k, b"enabled" | b"horizon" | b"budget" | b"keepReasoning") {
                    return Err(PruneError::bad_argument(format!(
                        "{where_}.{} is not a gate setting (enabled, horizon, budget, keepReasoning)",
                        String::from_utf8_lossy(k)
                    )));
                }
            }
        }
        let number = |name: &str, default: f64, ok: fn(f64) -> bool, want: &str| -> Result<f64> {
            match obj.get(name) {
                None | Some(Json::Null) => Ok(default),
                Some(Json::Num(n)) if ok(*n) => Ok(*n),
                Some(_) => Err(PruneError::bad_argument(format!(
                    "{where_}.{name} must be {want}"
                ))),
            }
        };
        for flag in ["enabled", "keepReasoning"] {
            if !matches!(obj.get(flag), None | Some(Json::Null | Json::Bool(_))) {
                return Err(PruneError::bad_argument(format!(
                    "{where_}.{flag} must be a boolean"
                )));
            }
        }
        let horizon = match obj.get("horizon") {
            None | Some(Json::Null) => None,
            Some(Json::Str(t)) if &**t == b"auto" => None,
            Some(_) => Some(number(
                "horizon",
                0.0,
                |n| n.is_finite() && n >= 0.0,
                "'auto' or a finite number of calls >= 0",
            )?),
        };
        Ok(GateSettings {
            enabled: !matches!(obj.get("enabled"), Some(Json::Bool(false))),
            keep_reasoning: !matches!(obj.get("keepReasoning"), Some(Json::Bool(false))),
            horizon,
            budget: number(
                "budget",
                d.budget,
                |n| n > 0.0 && n <= 1.0,
                "a share of the context window in (0, 1]",
            )?,
        })
    }

    /// As JSON: `{horizon, budget}` (`horizon` 'auto' when learned), with
    /// `enabled: false` first when it is off and `keepReasoning: false`
    /// last when that is.
    pub fn to_json(self) -> Json {
        let off = (!self.enabled).then(|| (b"enabled".as_slice().into(), Json::Bool(false)));
        let drops =
            (!self.keep_reasoning).then(|| (b"keepReasoning".as_slice().into(), Json::Bool(false)));
        Json::Obj(
            off.into_iter()
                .chain([
                    (
                        b"horizon".as_slice().into(),
                        self.horizon.map_or_else(|| Json::str("auto"), Json::Num),
                    ),
                    (b"budget".as_slice().into(), Json::Num(self.budget)),
                ])
                .chain(drops)
                .collect(),
        )
    }
}

/// Why a gated call sent what it sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Applied: nothing warm to lose.
    Cold,
    /// Applied: the hold would pass the budget.
    Budget,
    /// Applied: the saving over the horizon beats the cost now.
    Pays,
    /// Applied: the release's render is the hold (it changed nothing the
    /// previous request sent).
    Same,
    /// Held: applying would not pay yet.
    Waits,
}

impl Reason {
    pub const ALL: [Reason; 5] = [
        Reason::Cold,
        Reason::Budget,
        Reason::Pays,
        Reason::Same,
        Reason::Waits,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reason::Cold => "cold",
            Reason::Budget => "budget",
            Reason::Pays => "pays",
            Reason::Same => "same",
            Reason::Waits => "waits",
        }
    }

    /// Whether the release's render is sent.
    pub fn applies(self) -> bool {
        self != Reason::Waits
    }

    /// What was sent, as the reports spell it: `apply` or `hold`.
    pub fn sent(self) -> &'static str {
        if self.applies() {
            "apply"
        } else {
            "hold"
        }
    }
}

/// What the rule reads at one call, priced by the replay's cost model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GateInputs {
    /// Cold by what the context says (first call, another model, not an
    /// append).
    pub cold_context: bool,
    /// The hold would read nothing past the tools and system.
    pub hold_reads_nothing: bool,
    /// The release's render is the hold, byte for byte.
    pub same: bool,
    /// USD of sending R and of sending H now.
    pub apply_usd: f64,
    pub hold_usd: f64,
    /// Prompt tokens of R and of H.
    pub apply_tokens: f64,
    pub hold_tokens: f64,
    /// USD of reading one cached token on this model.
    pub read_usd_per_token: f64,
    /// What the holds since the last apply have cost over sending the
    /// release's render: each held call's extra tokens read.
    pub held_usd: f64,
    /// The learned horizon (used when the settings fix none).
    pub learned_horizon: f64,
    /// The model's context window, in tokens.
    pub context_window: f64,
    /// Where pi compacts: the window less `compaction.reserveTokens` (None:
    /// compaction off, or its settings unknown).
    pub compaction_threshold: Option<f64>,
    /// R's rewrite makes the provider drop reasoning H keeps (preserved
    /// thinking).
    pub apply_drops_reasoning: bool,
}

/// One candidate request as the cost model quotes it at a call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quoted {
    /// What sending it would read and write, the cache as it stands.
    pub outcome: Outcome,
    /// Its tools and system positions.
    pub preamble: usize,
    /// Its USD now, and its prompt tokens.
    pub usd: f64,
    pub tokens: f64,
    /// Tokens of thinking the provider would drop from it.
    pub dropped_tokens: f64,
}

impl Quoted {
    /// `request`, whose sending would read and write `outcome` and cost
    /// `bill`, at `tokens_per_char`.
    pub fn of(request: &Request, outcome: Outcome, bill: CallBill, tokens_per_char: f64) -> Self {
        Quoted {
            outcome,
            preamble: request.preamble,
            usd: bill.cost_usd,
            tokens: request.total_chars as f64 * tokens_per_char,
            dropped_tokens: request.dropped_chars as f64 * tokens_per_char,
        }
    }
}

/// The rule's inputs at a warm call from the quotes of the hold and of the
/// release's render (None: it is the hold) on the model's `tariff`, for
/// the replay's pricer and pi's live gate alike.
pub fn warm_inputs(
    hold: &Quoted,
    apply: Option<&Quoted>,
    tariff: &Tariff<'_>,
    carried: &Carried,
    reserve: Option<f64>,
) -> GateInputs {
    let context_window = tariff
        .entry
        .and_then(|e| e.context_window)
        .unwrap_or(DEFAULT_CONTEXT_WINDOW);
    let read_tokens = hold.tokens.max(1.0);
    let read = tariff.bill((0.0, read_tokens, 0.0)).cost_usd;
    let apply = apply.unwrap_or(hold);
    GateInputs {
        cold_context: false,
        hold_reads_nothing: hold.outcome.within_preamble(hold.preamble),
        same: std::ptr::eq(apply, hold),
        apply_usd: apply.usd,
        hold_usd: hold.usd,
        apply_tokens: apply.tokens,
        hold_tokens: hold.tokens,
        read_usd_per_token: read / read_tokens,
        held_usd: carried.held_usd,
        learned_horizon: carried.horizon.calls(),
        context_window,
        compaction_threshold: reserve.map(|r| context_window - r),
        apply_drops_reasoning: apply.dropped_tokens > hold.dropped_tokens,
    }
}

/// The gate's rule (module doc).
pub fn decide(i: &GateInputs, s: &GateSettings) -> Reason {
    if i.cold_context || i.hold_reads_nothing {
        Reason::Cold
    } else if i.same {
        Reason::Same
    } else if i.hold_tokens > s.budget * i.context_window
        || i.compaction_threshold.is_some_and(|t| i.hold_tokens > t)
    {
        // A hold past pi's compaction threshold would make pi compact:
        // the budget never lets it get there.
        Reason::Budget
    } else if s.keep_reasoning && i.apply_drops_reasoning {
        Reason::Waits
    } else if pays(i, s) {
        Reason::Pays
    } else {
        Reason::Waits
    }
}

/// Whether R's saving over the horizon beats what applying costs now.
fn pays(i: &GateInputs, s: &GateSettings) -> bool {
    let extra_now = i.apply_usd - i.hold_usd;
    let horizon = s.horizon.unwrap_or(i.learned_horizon);
    let saved_later = (i.hold_tokens - i.apply_tokens) * i.read_usd_per_token * horizon;
    i.held_usd + saved_later > extra_now
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warm() -> GateInputs {
        GateInputs {
            cold_context: false,
            hold_reads_nothing: false,
            same: false,
            apply_usd: 0.30,
            hold_usd: 0.03,
            apply_tokens: 90_000.0,
            hold_tokens: 100_000.0,
            read_usd_per_token: 0.3e-6,
            held_usd: 0.0,
            learned_horizon: 8.0,
            context_window: 200_000.0,
            compaction_threshold: None,
            apply_drops_reasoning: false,
        }
    }

    /// With `keepReasoning` the gate holds rather than send a render that
    /// drops reasoning the hold keeps, even where applying pays; a cold
    /// cache or the budget still apply; without it the saving decides.
    #[test]
    fn reasoning_is_kept_unless_the_cache_is_cold() {
        let s = GateSettings::default();
        let pays = GateInputs {
            held_usd: 1.0,
            apply_drops_reasoning: true,
            ..warm()
        };
        assert_eq!(decide(&pays, &s), Reason::Waits);
        let drop = GateSettings {
            keep_reasoning: false,
            ..s
        };
        assert_eq!(decide(&pays, &drop), Reason::Pays);
        let cold = GateInputs {
            hold_reads_nothing: true,
            ..pays
        };
        assert_eq!(decide(&cold, &s), Reason::Cold);
        let full = GateInputs {
            hold_tokens: 190_000.0,
            ..pays
        };
        assert_eq!(decide(&full, &s), Reason::Budget);
        let read = GateSettings::from_json(
            Some(&crate::json::parse_value(br#"{"keepReasoning":false}"#).unwrap()),
            "gate",
        )
        .unwrap();
        assert!(!read.keep_reasoning);
        assert_eq!(
            read.to_json().to_json(),
            br#"{"horizon":"auto","budget":0.8,"keepReasoning":false}"#.to_vec()
        );
        assert!(GateSettings::from_json(
            Some(&crate::json::parse_value(br#"{"keepReasoning":1}"#).unwrap()),
            "gate"
        )
        .is_err());
    }

    #[test]
    fn the_rule_in_its_order() {
        let s = GateSettings::default();
        // 10k tokens saved x $0.3/M x 8 calls = $0.024 < $0.27 more now.
        assert_eq!(decide(&warm(), &s), Reason::Waits);
        let long = GateSettings {
            horizon: Some(100.0),
            ..s
        };
        // x 100 calls = $0.30 > $0.27.
        assert_eq!(decide(&warm(), &long), Reason::Pays);
        // The holds so far count: $0.25 + $0.024 > $0.27.
        let waited = GateInputs {
            held_usd: 0.25,
            ..warm()
        };
        assert_eq!(decide(&waited, &s), Reason::Pays);
        // A learned horizon of 100 calls is the setting's 100.
        let learned = GateInputs {
            learned_horizon: 100.0,
            ..warm()
        };
        assert_eq!(decide(&learned, &s), Reason::Pays);
        let full = GateInputs {
            hold_tokens: 170_000.0,
            ..warm()
        };
        assert_eq!(decide(&full, &s), Reason::Budget);
        // Under the budget (0.8 of a 100,000-token window), past pi's
        // compaction threshold (100,000 less 30,000 reserved): a hold
        // would make pi compact.
        let near = GateInputs {
            hold_tokens: 75_000.0,
            context_window: 100_000.0,
            ..warm()
        };
        assert_eq!(decide(&near, &s), Reason::Waits);
        let reserved = GateInputs {
            compaction_threshold: Some(70_000.0),
            ..near
        };
        assert_eq!(decide(&reserved, &s), Reason::Budget);
        let same = GateInputs { same: true, ..full };
        assert_eq!(decide(&same, &s), Reason::Same);
        for cold in [
            GateInputs {
                cold_context: true,
                ..same
            },
            GateInputs {
                hold_reads_nothing: true,
                ..warm()
            },
        ] {
            assert_eq!(decide(&cold, &s), Reason::Cold);
        }
        // A render that is cheaper now and no larger always applies.
        let cheaper = GateInputs {
            apply_usd: 0.02,
            apply_tokens: 100_000.0,
            ..warm()
        };
        let none = GateSettings {
            horizon: Some(0.0),
            ..s
        };
        assert_eq!(decide(&cheaper, &none), Reason::Pays);
    }

    #[test]
    fn reasons_are_listed_in_declaration_order() {
        // `GateTotals` counts a reason at `reason as usize`.
        for (i, r) in Reason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
    }

    #[test]
    fn the_horizon_is_the_calls_per_rewrite() {
        let mut h = Horizon::default();
        assert_eq!(h.calls(), 0.0);
        for n in 0..12 {
            h.observe(n % 4 == 3);
        }
        // 12 calls, 3 rewrites (and the one to come).
        assert_eq!(h.calls(), 3.0);
        let mut h = Horizon::default();
        h.observe(false);
        assert_eq!(h.calls(), 1.0);
    }

    #[test]
    fn settings_are_checked_by_name() {
        let parse = |t: &str| {
            GateSettings::from_json(
                Some(&crate::json::parse_value(t.as_bytes()).unwrap()),
                "gate",
            )
        };
        assert_eq!(parse("{}").unwrap(), GateSettings::default());
        assert_eq!(
            parse(r#"{"enabled":true,"horizon":20,"budget":0.5}"#).unwrap(),
            GateSettings {
                enabled: true,
                horizon: Some(20.0),
                budget: 0.5,
                keep_reasoning: true,
            }
        );
        assert_eq!(parse(r#"{"horizon":"auto"}"#).unwrap().horizon, None);
        // Off only when said so; written back with the rest.
        let off = parse(r#"{"enabled":false,"budget":0.5}"#).unwrap();
        assert!(!off.enabled);
        let mut text = Vec::new();
        off.to_json().write_json(&mut text);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            r#"{"enabled":false,"horizon":"auto","budget":0.5}"#
        );
        assert!(parse(r#"{"enabled":null}"#).unwrap().enabled);
        for (bad, says) in [
            (r#"{"horizon":-1}"#, "gate.horizon must be"),
            (r#"{"horizon":"soon"}"#, "gate.horizon must be"),
            (r#"{"budget":0}"#, "gate.budget must be"),
            (r#"{"budget":"half"}"#, "gate.budget must be"),
            (r#"{"enabled":"yes"}"#, "gate.enabled must be a boolean"),
            (r#"{"horizn":3}"#, "gate.horizn is not a gate setting"),
            ("[]", "gate must be an object"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.message.contains(says), "{bad}: {}", e.message);
        }
    }
}
