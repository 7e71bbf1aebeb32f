//! Replaying a pi session file: every model call of the active branch
//! rendered as pi-condense would have rendered it, under several pruning
//! policies side by side, with what each render would have cost at a
//! provider that caches the prompt prefix (issue 15).
//!
//! For each model call (SESSIONS.md C.3: the assistant entry and the leaf
//! its request saw) the context is the handler view at the leaf, and the
//! state is the rebuild over the branch up to the leaf. Per policy and per
//! render:
//! - `chars_before` / `chars_after`: `JSON.stringify(messages).length` of
//!   the context and of the rendered output (UTF-16 units, as JS counts);
//! - `break_index`: the first output message whose `JSON.stringify` text
//!   differs from the previous render's message at the same index (an
//!   output that only grew breaks at the previous length; the first render
//!   breaks at 0). Texts are compared by digest and length;
//! - `cache_read_chars`: the chars of the rendered array before the break,
//!   counted as in the array's JSON text: the `[` and each message with the
//!   `,` after it (0 when the break is at 0); `cache_write_chars`: the
//!   rest. A call more than the cache lifetime after the previous one reads
//!   nothing and writes everything (`cost.rs`);
//! - `prefix_hash`: XXH3-64 (seed 0) over the per-message digests of the
//!   output messages before the break, each digest 8 bytes little-endian,
//!   where a message's digest is XXH3-64 (seed 0) of the UTF-8 bytes of its
//!   `JSON.stringify` text. A host computes the same per request from the
//!   array it sends; `output_hash` is that hash over the whole output, which
//!   the next render's `prefix_hash` equals when nothing broke.
//!
//! Policies run one after another, each on its own kept engine, so only
//! one engine's copy of the conversation is alive at a time.

mod cost;
mod digest;
mod indexer;
mod invariant;
mod options;
mod policy;
mod report;
mod settings;
mod walk;

use std::sync::atomic::{AtomicU64, Ordering};

pub use cost::{CostModel, Totals};
pub use digest::{prefix_hash, Digest};
pub use invariant::Violation;
pub use policy::Policy;
pub use report::to_json;
pub use settings::Settings;

use crate::error::Result;
use crate::json::Json;
use crate::script::Stats;
use crate::sessionfile::date::{date_of, DateValue};
use crate::sessionfile::file::describe_key;
use crate::sessionfile::json::{wtf8, JsKey};
use crate::sessionfile::{model_calls, path_to, Entry, Leaf, SessionFile};

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
        JsKey::String(s) => wtf8::display(&s),
        other => describe_key(&other),
    }
}

/// What to replay and how to price it.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub policies: Vec<Policy>,
    pub settings: Settings,
    pub cost: CostModel,
    /// Keep every render's measurements (else only the totals).
    pub keep_renders: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            policies: Policy::ALL.to_vec(),
            settings: Settings::default(),
            cost: CostModel::default(),
            keep_renders: false,
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
    pub cache_read_chars: usize,
    pub cache_write_chars: usize,
    pub cache_expired: bool,
    pub prefix_hash: u64,
    pub output_hash: u64,
    /// What each phase changed.
    pub stats: Stats,
}

/// One policy over the whole session.
#[derive(Debug, Clone)]
pub struct PolicyReplay {
    pub policy: Policy,
    /// The render config it ran with (None for `none`).
    pub config: Option<Json>,
    pub totals: Totals,
    pub renders: Vec<Render>,
    /// Renders the flush-gated invariant applied to.
    pub checked: usize,
    pub violation_count: usize,
    /// The first violations, in order.
    pub violations: Vec<Violation>,
}

#[derive(Debug, Clone)]
pub struct Replay {
    pub calls: Vec<CallInfo>,
    pub policies: Vec<PolicyReplay>,
    pub cost: CostModel,
}

impl Replay {
    /// A policy's cost over `none`'s (NaN when `none` costs nothing).
    pub fn cost_vs_none(&self, p: &PolicyReplay) -> f64 {
        let none = self
            .policies
            .iter()
            .find(|q| q.policy == Policy::None)
            .map(|q| self.cost.cost(&q.totals));
        match none {
            Some(n) if n > 0.0 => self.cost.cost(&p.totals) / n,
            _ => f64::NAN,
        }
    }
}

/// Replays a session file's bytes.
pub fn replay(
    bytes: &[u8],
    options: &ReplayOptions,
    progress: Option<&Progress>,
) -> Result<Replay> {
    let file = SessionFile::parse(bytes).map_err(located)?;
    let path = path_to(&file, &Leaf::Active).map_err(located)?;
    let calls = model_calls(&file, &path.entries);
    let infos: Vec<CallInfo> = calls
        .iter()
        .map(|c| {
            let entry = file.entry(path.entries[c.assistant] as usize);
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
                leaf_id: c
                    .leaf
                    .map(|l| id_string(&file.entry(path.entries[l] as usize))),
                time,
            }
        })
        .collect();
    // `none` is always replayed: the other costs are given relative to it.
    let mut policies = options.policies.clone();
    if !policies.contains(&Policy::None) {
        policies.insert(0, Policy::None);
    }
    if let Some(p) = progress {
        p.total
            .store((calls.len() * policies.len()) as u64, Ordering::Relaxed);
    }
    let walk = walk::Walk {
        file: &file,
        path: &path.entries,
        calls: &calls,
        infos: &infos,
        settings: &options.settings,
        cost: &options.cost,
        keep_renders: options.keep_renders,
        progress,
    };
    let mut results = Vec::with_capacity(policies.len());
    for &p in &policies {
        results.push(walk.run(p)?);
    }
    Ok(Replay {
        calls: infos,
        policies: results,
        cost: options.cost,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::record::scan::Source;
    use crate::sessionfile::condense::state_json;
    use crate::sessionfile::{CondenseState, ContextView};
    use crate::state::State;

    /// The output hash of a render made from scratch: a fresh context view
    /// at the call's leaf, the state object of a fresh rebuild, a new engine.
    fn fresh_output_hash(bytes: &[u8], call: usize, policy: Policy, settings: &Settings) -> u64 {
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
        if let Some(config) = policy.config(settings).unwrap() {
            let mut engine = Engine::new(policy.dialect());
            engine.set_config(config);
            engine.set_state(State::from_json(&state_json(&state), policy.dialect()).unwrap());
            if policy.uses_boundary() {
                engine.set_boundary(state.thinking_boundary());
            }
            let mut array = b"[".to_vec();
            array.extend_from_slice(&texts.join(&b","[..]));
            array.push(b']');
            engine.sync(0, &array, Source::Bytes).unwrap();
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

    /// Every render of the incremental replay (engine kept, indexer answers
    /// per flush) equals a render made from scratch, for every policy.
    #[test]
    fn incremental_renders_equal_fresh_ones() {
        let purge_soon = crate::json::parse::parse_value(
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
            let options = ReplayOptions {
                settings: settings.clone(),
                keep_renders: true,
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
