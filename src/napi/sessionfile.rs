//! The N-API surface of session loading (`sessionfile`): converts
//! arguments, runs the load, and hands back JSON texts for the JS layer to
//! parse. Failures come back as data (code, message, line) rather than as a
//! thrown error, so the JS layer builds one error type, with `line` and the
//! file name, for the sync and async paths alike. Panics never cross.

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::bindgen_prelude::{AsyncTask, Either, Uint8Array};
use napi::{Env, Task};
use napi_derive::napi;

use super::{utf8_string, TaskInput};
use crate::error::Code;
use crate::sessionfile::{load, load_path, Dialect, LoadOptions, Loaded, SessionError};

/// A load's outcome: the three JSON texts, or the error fields.
#[napi(object)]
#[derive(Default)]
pub struct NativeLoadResult {
    /// `JSON.stringify` of the handler view (an array of messages).
    pub messages: Option<String>,
    pub message_count: u32,
    /// The state object of the dialect (SESSIONS.md B.6).
    pub state: Option<String>,
    /// The frontier object, or `null`.
    pub frontier: Option<String>,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    /// The file line the error concerns.
    pub error_line: Option<u32>,
}

fn options(
    leaf_id: Option<String>,
    dialect: Option<String>,
) -> Result<LoadOptions<'static>, SessionError> {
    Ok(LoadOptions {
        leaf_id: leaf_id.map(Into::into),
        dialect: match dialect {
            None => Dialect::default(),
            Some(d) => Dialect::parse(&d)
                .map_err(|e| SessionError::new(Code::InvalidArgument, e.message))?,
        },
    })
}

fn result(outcome: Result<Loaded, SessionError>) -> NativeLoadResult {
    match outcome {
        Ok(l) => NativeLoadResult {
            messages: Some(utf8_string(l.messages)),
            message_count: l.message_count as u32,
            state: Some(utf8_string(l.state)),
            frontier: Some(utf8_string(l.frontier)),
            ..NativeLoadResult::default()
        },
        Err(e) => NativeLoadResult {
            error_code: Some(e.code().as_str().to_string()),
            error_message: Some(e.message),
            error_line: e.line,
            ..NativeLoadResult::default()
        },
    }
}

/// Runs a load, turning a panic into an error result.
fn guarded(run: impl FnOnce() -> Result<Loaded, SessionError>) -> Result<Loaded, SessionError> {
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| {
        Err(SessionError::new(
            Code::InvalidSession,
            "internal error while loading the session (a bug: please report it with the file)",
        ))
    })
}

/// Loads a session from bytes the caller holds (read in place, not
/// copied), on the calling thread.
#[napi(catch_unwind)]
pub fn load_session_bytes(
    bytes: Uint8Array,
    leaf_id: Option<String>,
    dialect: Option<String>,
) -> NativeLoadResult {
    result(guarded(|| load(&bytes[..], &options(leaf_id, dialect)?)))
}

/// Reads and loads a session file on the calling thread.
#[napi(catch_unwind)]
pub fn load_session_file(
    path: String,
    leaf_id: Option<String>,
    dialect: Option<String>,
) -> NativeLoadResult {
    result(guarded(|| {
        load_path(path.as_ref(), &options(leaf_id, dialect)?)
    }))
}

pub struct LoadTask {
    input: Option<TaskInput>,
    leaf_id: Option<String>,
    dialect: Option<String>,
}

impl Task for LoadTask {
    type Output = Result<Loaded, SessionError>;
    type JsValue = NativeLoadResult;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let input = self.input.take();
        let leaf_id = self.leaf_id.take();
        let dialect = self.dialect.take();
        Ok(guarded(move || {
            let options = options(leaf_id, dialect)?;
            match input {
                Some(TaskInput::Path(p)) => load_path(p.as_ref(), &options),
                Some(TaskInput::Bytes(b)) => load(b, &options),
                None => Err(SessionError::new(
                    Code::InvalidArgument,
                    "the task ran twice",
                )),
            }
        }))
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        Ok(result(output))
    }
}

/// Loads a session on the libuv pool: the file read (or, for bytes, the
/// copy taken now so the caller may reuse its buffer) and the whole load run
/// off the JS thread; the promise resolves with the JSON texts.
#[napi(catch_unwind)]
pub fn load_session_async(
    input: Either<String, Uint8Array>,
    leaf_id: Option<String>,
    dialect: Option<String>,
) -> AsyncTask<LoadTask> {
    AsyncTask::new(LoadTask {
        input: Some(input.into()),
        leaf_id,
        dialect,
    })
}
