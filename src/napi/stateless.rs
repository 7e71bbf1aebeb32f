//! Stateless exports: one call, no memory kept (beyond what the allocator
//! holds). Bytes in, bytes out.

use napi::bindgen_prelude::{BufferSlice, Either, Null, Uint8Array};
use napi::Env;
use napi_derive::napi;

use super::{
    boundary_from, diagnostics_json, dialect_of, js_error, nullable, NativeFrontier, NativeStats,
};
use crate::config::Config;
use crate::dialect::Dialect;
use crate::error::PruneError;
use crate::frontier;
use crate::prune::{self, Pruned};
use crate::state::State;

// Results go to JS as copies in memory the engine owns (Buffer), not as
// external buffers over Rust allocations: the engine runs the finalizers of
// external buffers only after the event loop turns, so a host pruning in a
// loop without yielding would hold every result until then
// (docs/RELIABILITY.md, "bursts"). The copy costs one memcpy of the output.
#[napi(object)]
pub struct NativePruneResult<'env> {
    pub pruned: bool,
    pub before_chars: f64,
    pub after_chars: f64,
    pub messages: Either<BufferSlice<'env>, Null>,
    pub frontier: NativeFrontier,
    pub stats: NativeStats,
    /// JSON text of `[{kind, key, detail}]` (2.9.1), or null.
    pub diagnostics: Option<String>,
}

pub(crate) fn prune_result(
    env: &Env,
    p: Pruned,
    dialect: Dialect,
) -> napi::Result<NativePruneResult<'_>> {
    Ok(NativePruneResult {
        pruned: p.pruned,
        before_chars: p.before_chars as f64,
        after_chars: p.after_chars as f64,
        messages: match p.messages {
            Some(bytes) => Either::A(BufferSlice::copy_from(env, &bytes)?),
            None => Either::B(Null),
        },
        frontier: p.frontier.into(),
        stats: NativeStats::of(p.stats, dialect),
        diagnostics: diagnostics_json(&p.diagnostics),
    })
}

/// Prunes the JSON array in `messages` (never written). `stateJson` and
/// `configJson` are JSON texts (null: absent). Reads the bytes once,
/// allocates the output once; no thread but the caller's.
#[napi(catch_unwind)]
pub fn prune_bytes(
    env: &Env,
    messages: Uint8Array,
    state_json: Option<String>,
    config_json: Option<String>,
    thinking_strip_boundary_timestamp: Option<f64>,
    dialect: Option<String>,
) -> napi::Result<NativePruneResult<'_>> {
    let dialect = dialect_of(dialect).map_err(|e| js_error(env, e))?;
    let run = || -> Result<Pruned, PruneError> {
        let state = state_json.map_or(Ok(State::answers(dialect)), |j| {
            State::from_json(j.as_bytes(), dialect)
        })?;
        let config =
            Config::from_json(config_json.as_deref().unwrap_or("null").as_bytes(), dialect)?;
        let boundary = boundary_from(thinking_strip_boundary_timestamp)?;
        prune::prune_bytes(&messages, &state, &config, boundary, dialect)
    };
    let pruned = run().map_err(|e| js_error(env, e))?;
    prune_result(env, pruned, dialect)
}

/// SPEC 6; null stands for `undefined`.
#[napi(catch_unwind)]
pub fn compute_thinking_boundary(
    assistant_timestamps: Vec<f64>,
    keep_last_turns: f64,
    prev: Option<f64>,
) -> Either<f64, Null> {
    nullable(frontier::compute_thinking_boundary(
        &assistant_timestamps,
        keep_last_turns,
        prev,
    ))
}

/// `JSON.stringify(JSON.parse(bytes)).length`, natively.
#[napi(catch_unwind)]
pub fn size_of(env: Env, messages: Uint8Array) -> napi::Result<f64> {
    prune::size_of(&messages)
        .map(|n| n as f64)
        .map_err(|e| js_error(&env, e))
}
