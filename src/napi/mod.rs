//! The N-API surface, the only code that knows about napi: it converts
//! arguments, turns a `PruneError` into a JS Error carrying its `code` and
//! its location (`messageIndex`, `field`, `line`), and never lets a panic
//! cross (every export is `catch_unwind`). One file per export family:
//! stateless calls, the held `Pruner`, the kept engine, session loading,
//! the replay, and pi's cache-aware gate.

mod engine;
mod gate;
mod pruner;
mod replay;
mod sessionfile;
mod stateless;
#[cfg(feature = "test-exports")]
mod testing;
mod tune;

use napi::bindgen_prelude::{Either, JsObjectValue, Null};
use napi::{Env, Status};
use napi_derive::napi;

use crate::config::Config;
use crate::dialect::Dialect;
use crate::error::PruneError;
use crate::frontier::Frontier;
use crate::script::Stats;
use crate::sessionfile::SessionInput;
use crate::state::State;

/// Throws a JS Error for `e` and tells napi-rs an exception is pending.
pub(crate) fn js_error(env: &Env, e: PruneError) -> napi::Error {
    let thrown = (|| -> napi::Result<()> {
        let mut obj =
            env.create_error(napi::Error::new(Status::GenericFailure, e.message.clone()))?;
        obj.set_named_property("code", e.code.as_str())?;
        if let Some(i) = e.message_index {
            obj.set_named_property("messageIndex", i as f64)?;
        }
        if let Some(f) = &e.field {
            obj.set_named_property("field", f.as_str())?;
        }
        if let Some(l) = e.line {
            obj.set_named_property("line", l as f64)?;
        }
        env.throw(obj)
    })();
    match thrown {
        Ok(()) => napi::Error::from_status(Status::PendingException),
        Err(_) => napi::Error::new(Status::GenericFailure, e.to_string()),
    }
}

pub(crate) fn dialect_of(name: Option<String>) -> Result<Dialect, PruneError> {
    name.map_or(Ok(Dialect::V2_4), |n| Dialect::parse(&n))
}

/// A state object's JSON text (absent: `null`).
pub(crate) fn state_of(json: Option<String>, dialect: Dialect) -> Result<State, PruneError> {
    State::from_json(json.as_deref().unwrap_or("null").as_bytes(), dialect)
}

/// A config object's JSON text (absent: `null`).
pub(crate) fn config_of(json: Option<String>, dialect: Dialect) -> Result<Config, PruneError> {
    Config::from_json(json.as_deref().unwrap_or("null").as_bytes(), dialect)
}

/// Where an async task's session comes from: a path, or a copy of the
/// caller's bytes taken at the call (so the caller may reuse its buffer).
pub(crate) fn session_input(
    input: Either<String, napi::bindgen_prelude::Uint8Array>,
) -> SessionInput<'static> {
    match input {
        Either::A(path) => SessionInput::Path(path.into()),
        Either::B(bytes) => SessionInput::Bytes(bytes.to_vec().into()),
    }
}

pub(crate) fn boundary_from(b: Option<f64>) -> Result<Option<f64>, PruneError> {
    match b {
        Some(n) if n.is_nan() => Err(PruneError::bad_argument(
            "thinkingStripBoundaryTimestamp must be a number, null or undefined (got NaN)",
        )),
        other => Ok(other),
    }
}

fn nullable(v: Option<f64>) -> Either<f64, Null> {
    match v {
        Some(n) if !n.is_nan() => Either::A(n),
        _ => Either::B(Null),
    }
}

#[napi(object)]
pub struct NativeFrontier {
    pub thinking_strip_boundary_timestamp: Either<f64, Null>,
    pub next_thinking_strip_boundary_timestamp: Either<f64, Null>,
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

/// What each phase changed; each dialect reports its own phases (2.4.3
/// `thinkingStripped`, 2.9.1 `orphansSwept`).
#[napi(object)]
pub struct NativeStats {
    pub stubbed: u32,
    pub purged_args: u32,
    pub chain_dropped: u32,
    pub chain_inserted: u32,
    pub final_thinking_stripped: u32,
    pub thinking_stripped: Option<u32>,
    pub orphans_swept: Option<u32>,
}

impl NativeStats {
    pub(crate) fn of(s: Stats, dialect: Dialect) -> Self {
        NativeStats {
            stubbed: s.stubbed,
            purged_args: s.purged_args,
            chain_dropped: s.chain_dropped,
            chain_inserted: s.chain_inserted,
            final_thinking_stripped: s.final_thinking_stripped,
            thinking_stripped: (dialect == Dialect::V2_4).then_some(s.thinking_stripped),
            orphans_swept: (dialect == Dialect::V2_9).then_some(s.orphans_swept),
        }
    }
}

/// A JS string's UTF-16 code units, read into memory that is not zeroed
/// first (napi-rs's `Utf16String` zeroes its buffer, which for a
/// conversation's JSON text is megabytes written twice).
pub struct StringUnits(pub Vec<u16>);

impl napi::bindgen_prelude::TypeName for StringUnits {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> napi::ValueType {
        napi::ValueType::String
    }
}

impl napi::bindgen_prelude::ValidateNapiValue for StringUnits {}

impl napi::bindgen_prelude::FromNapiValue for StringUnits {
    unsafe fn from_napi_value(
        env: napi::sys::napi_env,
        value: napi::sys::napi_value,
    ) -> napi::Result<Self> {
        let not_a_string = || napi::Error::new(napi::Status::StringExpected, "expected a string");
        let mut len = 0usize;
        // SAFETY: env and value come from the N-API call; a null buffer asks
        // for the length.
        let status = unsafe {
            napi::sys::napi_get_value_string_utf16(env, value, std::ptr::null_mut(), 0, &mut len)
        };
        if status != napi::sys::Status::napi_ok {
            return Err(not_a_string());
        }
        // One more unit for the terminator N-API writes.
        let mut units: Vec<u16> = Vec::with_capacity(len + 1);
        let mut written = 0usize;
        // SAFETY: the buffer holds len + 1 units; N-API writes at most that
        // many and reports how many it wrote (without the terminator).
        let status = unsafe {
            napi::sys::napi_get_value_string_utf16(
                env,
                value,
                units.as_mut_ptr(),
                len + 1,
                &mut written,
            )
        };
        if status != napi::sys::Status::napi_ok || written > len {
            return Err(not_a_string());
        }
        // SAFETY: the first `written` units were initialized by N-API.
        unsafe { units.set_len(written) };
        Ok(StringUnits(units))
    }
}
