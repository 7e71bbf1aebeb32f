//! The N-API surface of session loading (`sessionfile`): the load's JSON
//! text (`{messages, state, frontier}`) or the error fields, as for the
//! replay (`replay.rs`), so the JS layer builds one error type, with `line`
//! and the file name, for the sync and async paths alike. Panics never
//! cross.

use napi::bindgen_prelude::{AsyncTask, Either, Uint8Array};
use napi_derive::napi;

use super::replay::{result, NativeReplayResult, ReportTask};
use crate::sessionfile::{load_input, SessionInput};

/// Loads a session from bytes the caller holds (read in place, not
/// copied), on the calling thread.
#[napi(catch_unwind)]
pub fn load_session_bytes(
    bytes: Uint8Array,
    leaf_id: Option<String>,
    dialect: Option<String>,
) -> NativeReplayResult {
    let input = SessionInput::Bytes((&bytes[..]).into());
    result(load_input(input, leaf_id, dialect))
}

/// Reads and loads a session file on the calling thread.
#[napi(catch_unwind)]
pub fn load_session_file(
    path: String,
    leaf_id: Option<String>,
    dialect: Option<String>,
) -> NativeReplayResult {
    result(load_input(
        SessionInput::Path(path.into()),
        leaf_id,
        dialect,
    ))
}

/// Loads a session on the libuv pool: the file read (or, for bytes, the
/// copy taken now so the caller may reuse its buffer) and the whole load run
/// off the JS thread; the promise resolves with the JSON text.
#[napi(catch_unwind)]
pub fn load_session_async(
    input: Either<String, Uint8Array>,
    leaf_id: Option<String>,
    dialect: Option<String>,
) -> AsyncTask<ReportTask> {
    let input = super::session_input(input);
    ReportTask::spawn(None, move |_| load_input(input, leaf_id, dialect))
}
