//! The pruning policies a replay compares, by name (issue 15 item 3). Each
//! is a dialect, a config derived from the user's settings, and a rule for
//! the 2.4.3 thinking boundary:
//! - `none`: no pruning; the context as pi sent it.
//! - `config`: pi-condense 2.4.3 with the given config and the flush-gated
//!   boundary of the frontier in force.
//! - `no-thinking-strip`: the same without the thinking strip (what 2.5
//!   moved to after its cache A/B).
//! - `live-thinking-strip`: the thinking strip with no boundary, so the
//!   keep-window is counted afresh at every render (SPEC 6's fallback
//!   path, the behaviour before the flush-gated fix); enabled with the
//!   config's `keepLastTurns` even when the config turns the strip off.
//! - `2.9.1`: pi-condense 2.9.1's render path over its own state rebuild.
//! - `config+gate`, `2.9.1+gate`: the release's render behind the
//!   cache-aware gate (`gate.rs`), which sends it or holds the previous
//!   request's messages; opt-in, not among the defaults.

use crate::config::Config;
use crate::dialect::Dialect;
use crate::error::{PruneError, Result};
use crate::json::Json;

use super::settings::Settings;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Policy {
    None,
    Config,
    NoThinkingStrip,
    LiveThinkingStrip,
    V2_9,
    ConfigGate,
    V2_9Gate,
}

impl Policy {
    pub const ALL: [Policy; 5] = [
        Policy::None,
        Policy::Config,
        Policy::NoThinkingStrip,
        Policy::LiveThinkingStrip,
        Policy::V2_9,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Policy::None => "none",
            Policy::Config => "config",
            Policy::NoThinkingStrip => "no-thinking-strip",
            Policy::LiveThinkingStrip => "live-thinking-strip",
            Policy::V2_9 => "2.9.1",
            Policy::ConfigGate => "config+gate",
            Policy::V2_9Gate => "2.9.1+gate",
        }
    }

    /// The opt-in policies beside `ALL`.
    pub const GATED: [Policy; 2] = [Policy::ConfigGate, Policy::V2_9Gate];

    /// The release a gated policy renders with (itself otherwise).
    pub fn base(self) -> Policy {
        match self {
            Policy::ConfigGate => Policy::Config,
            Policy::V2_9Gate => Policy::V2_9,
            p => p,
        }
    }

    /// The policies one walk renders together (`Walk::run_family`): a
    /// release, its gated twin and, for 2.4.3, the same config without its
    /// thinking strip share every phase before the strip.
    pub fn family(self) -> Policy {
        match self {
            Policy::NoThinkingStrip => Policy::Config,
            p => p.base(),
        }
    }

    /// The release behind the gate (itself for `none` and the variants,
    /// which have no gated twin).
    pub fn with_gate(self) -> Policy {
        match self {
            Policy::Config => Policy::ConfigGate,
            Policy::V2_9 => Policy::V2_9Gate,
            p => p,
        }
    }

    /// Whether the cache-aware gate decides what is sent.
    pub fn gated(self) -> bool {
        self != self.base()
    }

    pub fn parse(name: &str) -> Result<Self> {
        Policy::ALL
            .into_iter()
            .chain(Policy::GATED)
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                PruneError::bad_argument(format!(
                    "unknown policy '{name}' (known: none, config, no-thinking-strip, live-thinking-strip, 2.9.1, config+gate, 2.9.1+gate)"
                ))
            })
    }

    pub fn dialect(self) -> Dialect {
        match self.base() {
            Policy::V2_9 => Dialect::V2_9,
            _ => Dialect::V2_4,
        }
    }

    /// Whether the policy promises a byte-stable prefix between flushes
    /// (the live keep-window breaks it by design; the gate applies at
    /// cold moments, flush or not).
    pub fn flush_gated(self) -> bool {
        self != Policy::LiveThinkingStrip && !self.gated()
    }

    /// Whether renders read the frontier's thinking boundary.
    pub fn uses_boundary(self) -> bool {
        self.base() == Policy::Config
    }

    /// The render config as a JSON object (None for `none`).
    pub fn config_json(self, settings: &Settings) -> Option<Json> {
        let base = settings.render_config(self.dialect());
        let set_thinking = |value: Option<Json>| -> Json {
            let Json::Obj(mut entries) = base.clone() else {
                return base.clone();
            };
            entries.retain(|(k, _)| &**k != b"thinkingStrip");
            if let Some(v) = value {
                entries.push((b"thinkingStrip".as_slice().into(), v));
            }
            Json::Obj(entries)
        };
        match self.base() {
            Policy::None => None,
            Policy::Config | Policy::V2_9 => Some(base),
            Policy::NoThinkingStrip => Some(set_thinking(None)),
            Policy::LiveThinkingStrip => Some(set_thinking(Some(Json::Obj(vec![
                (b"enabled".as_slice().into(), Json::Bool(true)),
                (
                    b"keepLastTurns".as_slice().into(),
                    settings.keep_last_turns(),
                ),
            ])))),
            Policy::ConfigGate | Policy::V2_9Gate => unreachable!("a base policy"),
        }
    }

    pub fn config(self, settings: &Settings) -> Result<Option<Config>> {
        self.config_json(settings)
            .map(|c| Config::from_value(&c, self.dialect()))
            .transpose()
    }
}
