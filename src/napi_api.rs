//! The N-API surface: converts arguments, maps `PruneError` to a JS Error
//! whose `code` is the error's code, and never lets a panic cross.

use napi::bindgen_prelude::{
    BufferSlice, Either, Int32ArraySlice, Null, Uint32ArraySlice, Uint8Array,
};
use napi::{Env, Status};
use napi_derive::napi;

use crate::config::Config;
use crate::convert;
use crate::error::PruneError;
use crate::frontier;
use crate::phases::Stats;
use crate::prune::{self, Frontier, Pruned};
use crate::session::Session;
use crate::state::State;

/// Throws a JS Error carrying the typed error's code, then tells napi-rs the
/// exception is already pending.
fn js_error(env: &Env, e: PruneError) -> napi::Error {
    match env.throw_error(&e.message, Some(e.code)) {
        Ok(()) => napi::Error::from_status(Status::PendingException),
        Err(_) => napi::Error::new(Status::GenericFailure, e.to_string()),
    }
}

#[napi(object)]
pub struct NativeFrontier {
    pub thinking_strip_boundary_timestamp: Either<f64, Null>,
    pub next_thinking_strip_boundary_timestamp: Either<f64, Null>,
}

#[napi(object)]
pub struct NativeStats {
    pub stubbed: u32,
    pub purged_args: u32,
    pub chain_dropped: u32,
    pub chain_inserted: u32,
    pub final_thinking_stripped: u32,
    pub thinking_stripped: u32,
}

// Results go to JS as copies in memory the engine owns (Buffer, typed
// arrays), not as external buffers over Rust allocations: the engine runs the
// finalizers of external buffers only after the event loop turns, so a host
// pruning in a loop without yielding would hold every result it ever
// produced until then (docs/RELIABILITY.md, "bursts"). The copy costs one
// memcpy of the output; the Rust side is freed on return.

#[napi(object)]
pub struct NativePruneResult<'env> {
    pub pruned: bool,
    pub before_chars: f64,
    pub after_chars: f64,
    pub messages: Either<BufferSlice<'env>, Null>,
    pub frontier: NativeFrontier,
    pub stats: NativeStats,
}

fn nullable(v: Option<f64>) -> Either<f64, Null> {
    match v {
        Some(n) if !n.is_nan() => Either::A(n),
        _ => Either::B(Null),
    }
}

impl From<Stats> for NativeStats {
    fn from(s: Stats) -> Self {
        NativeStats {
            stubbed: s.stubbed,
            purged_args: s.purged_args,
            chain_dropped: s.chain_dropped,
            chain_inserted: s.chain_inserted,
            final_thinking_stripped: s.final_thinking_stripped,
            thinking_stripped: s.thinking_stripped,
        }
    }
}

fn prune_result(env: &Env, p: Pruned) -> napi::Result<NativePruneResult<'_>> {
    Ok(NativePruneResult {
        pruned: p.pruned,
        before_chars: p.before_chars as f64,
        after_chars: p.after_chars as f64,
        messages: match p.messages {
            Some(bytes) => {
                let copy = BufferSlice::copy_from(env, &bytes)?;
                crate::index::reuse::give_output(bytes);
                Either::A(copy)
            }
            None => Either::B(Null),
        },
        frontier: p.frontier.into(),
        stats: p.stats.into(),
    })
}

impl From<Frontier> for NativeFrontier {
    fn from(f: Frontier) -> Self {
        NativeFrontier {
            thinking_strip_boundary_timestamp: nullable(f.thinking_strip_boundary_timestamp),
            next_thinking_strip_boundary_timestamp: nullable(
                f.next_thinking_strip_boundary_timestamp,
            ),
        }
    }
}

fn state_from(json: Option<String>) -> Result<State, PruneError> {
    json.map_or_else(|| Ok(State::default()), |j| State::from_json(j.as_bytes()))
}

fn config_from(json: Option<String>) -> Result<Config, PruneError> {
    json.map_or_else(
        || Ok(Config::default()),
        |j| Config::from_json(j.as_bytes()),
    )
}

fn boundary_from(b: Option<f64>) -> Result<Option<f64>, PruneError> {
    match b {
        Some(n) if n.is_nan() => Err(PruneError::bad_argument(
            "thinkingStripBoundaryTimestamp must be a number, null or undefined (got NaN)",
        )),
        other => Ok(other),
    }
}

/// Stateless prune: `stateJson` and `configJson` are JSON texts (the JS
/// layer stringifies the host's objects), `messages` the JSON array's bytes.
/// The thread keeps the last state and config it converted, keyed by their
/// text (`convert`), so renders between two flushes convert them once.
#[napi(catch_unwind)]
pub fn prune_json(
    env: &Env,
    messages: Uint8Array,
    state_json: Option<String>,
    config_json: Option<String>,
    thinking_strip_boundary_timestamp: Option<f64>,
) -> napi::Result<NativePruneResult<'_>> {
    let run = || -> Result<Pruned, PruneError> {
        let state = convert::state(state_json)?;
        let config = convert::config(config_json)?;
        let boundary = boundary_from(thinking_strip_boundary_timestamp)?;
        prune::prune_bytes(&messages, &state, &config, boundary)
    };
    let pruned = run().map_err(|e| js_error(env, e))?;
    prune_result(env, pruned)
}

/// Holds converted state and config between renders.
#[napi]
pub struct NativePruner {
    state: State,
    config: Config,
}

#[napi]
impl NativePruner {
    /// Starts with an empty state and config; the JS layer sets both.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        NativePruner {
            state: State::default(),
            config: Config::default(),
        }
    }

    #[napi(catch_unwind)]
    pub fn set_state(&mut self, env: Env, state_json: Option<String>) -> napi::Result<()> {
        self.state = state_from(state_json).map_err(|e| js_error(&env, e))?;
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn set_config(&mut self, env: Env, config_json: Option<String>) -> napi::Result<()> {
        self.config = config_from(config_json).map_err(|e| js_error(&env, e))?;
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn prune<'env>(
        &self,
        env: &'env Env,
        messages: Uint8Array,
        thinking_strip_boundary_timestamp: Option<f64>,
    ) -> napi::Result<NativePruneResult<'env>> {
        let pruned = boundary_from(thinking_strip_boundary_timestamp)
            .and_then(|b| prune::prune_bytes(&messages, &self.state, &self.config, b))
            .map_err(|e| js_error(env, e))?;
        prune_result(env, pruned)
    }
}

/// A prune result whose messages come as an edit script over the input
/// array: `order[k] >= 0` is input message `order[k]`, `order[k] < 0` is
/// edited message `-order[k] - 1`; the edits new to the caller are `fresh`
/// (ids) with their descriptions in `freshEdits` (see `output::Script`), and
/// `evicted` lists ids the caller may forget.
#[napi(object)]
pub struct NativeScriptResult<'env> {
    pub pruned: bool,
    pub before_chars: f64,
    pub after_chars: f64,
    pub frontier: NativeFrontier,
    pub stats: NativeStats,
    pub order: Option<Int32ArraySlice<'env>>,
    pub fresh: Option<Uint32ArraySlice<'env>>,
    pub fresh_edits: Option<String>,
    pub evicted: Option<Uint32ArraySlice<'env>>,
}

fn script_result(env: &Env, p: Pruned) -> napi::Result<NativeScriptResult<'_>> {
    let (order, fresh, evicted, fresh_edits) = match p.script {
        Some(s) => (
            Some(Int32ArraySlice::copy_from(env, &s.order)?),
            Some(Uint32ArraySlice::copy_from(env, &s.fresh)?),
            Some(Uint32ArraySlice::copy_from(env, &s.evicted)?),
            Some(String::from_utf8(s.fresh_edits).unwrap_or_default()),
        ),
        None => (None, None, None, None),
    };
    Ok(NativeScriptResult {
        pruned: p.pruned,
        before_chars: p.before_chars as f64,
        after_chars: p.after_chars as f64,
        frontier: p.frontier.into(),
        stats: p.stats.into(),
        order,
        fresh,
        fresh_edits,
        evicted,
    })
}

/// Stateless prune of a JSON array text (JSON.stringify of the host's
/// array), answered as an edit script so untouched messages stay the
/// caller's own objects.
#[napi(catch_unwind)]
pub fn prune_array(
    env: &Env,
    messages_json: String,
    state_json: Option<String>,
    config_json: Option<String>,
    thinking_strip_boundary_timestamp: Option<f64>,
) -> napi::Result<NativeScriptResult<'_>> {
    let run = || -> Result<Pruned, PruneError> {
        let state = convert::state(state_json)?;
        let config = convert::config(config_json)?;
        let boundary = boundary_from(thinking_strip_boundary_timestamp)?;
        prune::prune_to_script(messages_json.as_bytes(), &state, &config, boundary)
    };
    let pruned = run().map_err(|e| js_error(env, e))?;
    script_result(env, pruned)
}

/// The incremental path: keeps the conversation between renders.
#[napi]
pub struct NativeSession {
    inner: Session,
}

#[napi]
impl NativeSession {
    /// Starts empty; the JS layer sets config, state and boundary.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        NativeSession {
            inner: Session::default(),
        }
    }

    #[napi(catch_unwind)]
    pub fn set_config(&mut self, env: Env, config_json: Option<String>) -> napi::Result<()> {
        let config = config_from(config_json).map_err(|e| js_error(&env, e))?;
        self.inner.set_config(config);
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn set_state(&mut self, env: Env, state_json: Option<String>) -> napi::Result<()> {
        let state = state_from(state_json).map_err(|e| js_error(&env, e))?;
        self.inner.set_state(state);
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn set_boundary(&mut self, env: Env, boundary: Option<f64>) -> napi::Result<()> {
        let b = boundary_from(boundary).map_err(|e| js_error(&env, e))?;
        self.inner.set_boundary(b);
        Ok(())
    }

    /// Frees the kept conversation now instead of when the engine finalizes
    /// the object (which waits for the event loop to turn).
    #[napi]
    pub fn close(&mut self) {
        self.inner = Session::default();
    }

    #[napi(getter)]
    pub fn length(&self) -> u32 {
        self.inner.len() as u32
    }

    /// Replaces the kept messages from `from` on (JSON texts, one each).
    #[napi(catch_unwind)]
    pub fn sync(&mut self, env: Env, from: u32, messages: Vec<String>) -> napi::Result<()> {
        self.inner
            .sync(from as usize, &messages)
            .map_err(|e| js_error(&env, e))
    }

    #[napi(catch_unwind)]
    pub fn render<'env>(&mut self, env: &'env Env) -> napi::Result<NativeScriptResult<'env>> {
        let pruned = self.inner.render().map_err(|e| js_error(env, e))?;
        script_result(env, pruned)
    }

    /// Advances and returns the thinking boundary (null: none yet).
    #[napi(catch_unwind)]
    pub fn flush(
        &mut self,
        env: Env,
        closing_json: Option<String>,
    ) -> napi::Result<Either<f64, Null>> {
        self.inner
            .flush(closing_json.as_deref().map(str::as_bytes))
            .map(nullable)
            .map_err(|e| js_error(&env, e))
    }
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

/// Panics on purpose, so tests can check that a panic becomes a JS error.
#[napi(catch_unwind)]
pub fn debug_panic() {
    panic!("debug_panic called");
}
