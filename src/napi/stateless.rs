//! Stateless exports: one call, no memory kept (beyond what the allocator
//! holds). Bytes in, bytes out.

use napi::bindgen_prelude::{Either, Null, Uint8Array};
use napi::Env;
use napi_derive::napi;

use super::{
    boundary_from, config_of, dialect_of, js_error, nullable, NativeFrontier, NativeStats,
};
use crate::config::Config;
use crate::dialect::Dialect;
use crate::error::PruneError;
use crate::frontier;
use crate::prune::{self, Pruned};
use crate::script::diagnostics_json;
use crate::state::State;

/// A Node Buffer the engine allocates, which the output is written into
/// in place. Results live in memory the engine owns, not in external
/// buffers over Rust allocations: the engine runs the finalizers of
/// external buffers only after the event loop turns, so a host pruning in a
/// loop without yielding would hold every result until then
/// (docs/RELIABILITY.md, "bursts").
pub struct EngineBuffer {
    value: napi::sys::napi_value,
    data: *mut u8,
    len: usize,
}

impl EngineBuffer {
    fn new(env: &Env, len: usize) -> Result<Self, PruneError> {
        let mut value = std::ptr::null_mut();
        let mut data = std::ptr::null_mut();
        // SAFETY: a plain N-API call on the calling thread's env.
        let status =
            unsafe { napi::sys::napi_create_buffer(env.raw(), len, &mut data, &mut value) };
        if status != napi::sys::Status::napi_ok {
            return Err(PruneError::bad_argument(format!(
                "the runtime could not allocate a {len}-byte Buffer for the output"
            )));
        }
        Ok(EngineBuffer {
            value,
            data: data.cast(),
            len,
        })
    }
}

impl AsMut<[u8]> for EngineBuffer {
    fn as_mut(&mut self) -> &mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: N-API gave `len` writable bytes that live as long as the
        // Buffer, which lives at least until this call returns.
        unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }
    }
}

impl napi::bindgen_prelude::TypeName for EngineBuffer {
    fn type_name() -> &'static str {
        "Buffer"
    }

    fn value_type() -> napi::ValueType {
        napi::ValueType::Object
    }
}

impl napi::bindgen_prelude::ToNapiValue for EngineBuffer {
    unsafe fn to_napi_value(
        _env: napi::sys::napi_env,
        val: Self,
    ) -> napi::Result<napi::sys::napi_value> {
        Ok(val.value)
    }
}

#[napi(object, object_from_js = false)]
pub struct NativePruneResult {
    pub pruned: bool,
    pub before_chars: f64,
    pub after_chars: f64,
    #[napi(ts_type = "Buffer | null")]
    pub messages: Either<EngineBuffer, Null>,
    pub frontier: NativeFrontier,
    pub stats: NativeStats,
    /// JSON text of `[{kind, key, detail}]` (2.9.1), or null.
    pub diagnostics: Option<String>,
}

/// Prunes `messages` with the output written into a new Buffer.
pub(crate) fn prune_into(
    env: &Env,
    messages: &[u8],
    state: &State,
    config: &Config,
    boundary: Option<f64>,
    dialect: Dialect,
) -> Result<Pruned<EngineBuffer>, PruneError> {
    prune::prune_bytes_into(messages, state, config, boundary, dialect, |len| {
        EngineBuffer::new(env, len)
    })
}

pub(crate) fn prune_result(p: Pruned<EngineBuffer>, dialect: Dialect) -> NativePruneResult {
    NativePruneResult {
        pruned: p.pruned,
        before_chars: p.before_chars as f64,
        after_chars: p.after_chars as f64,
        messages: p.messages.map_or(Either::B(Null), Either::A),
        frontier: p.frontier.into(),
        stats: NativeStats::of(p.stats, dialect),
        diagnostics: diagnostics_json(&p.diagnostics),
    }
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
) -> napi::Result<NativePruneResult> {
    let dialect = dialect_of(dialect).map_err(|e| js_error(env, e))?;
    let run = || -> Result<Pruned<EngineBuffer>, PruneError> {
        let state = state_json.map_or(Ok(State::answers(dialect)), |j| {
            State::from_json(j.as_bytes(), dialect)
        })?;
        let config = config_of(config_json, dialect)?;
        let boundary = boundary_from(thinking_strip_boundary_timestamp)?;
        prune_into(env, &messages, &state, &config, boundary, dialect)
    };
    let pruned = run().map_err(|e| js_error(env, e))?;
    Ok(prune_result(pruned, dialect))
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
