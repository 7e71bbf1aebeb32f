//! The N-API surface of the tune (`crate::tune`): `tuneFiles` on the
//! calling thread and `tuneAsync` on the libuv pool, both over session
//! file paths, counting renders into a `NativeReplayProgress`. The result
//! is the tune's JSON text (`tune::to_json`) or the error fields, as for
//! the replay; panics never cross.

use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;

use super::replay::{result, NativeReplayProgress, NativeReplayResult, ReportTask};
use crate::tune::report;

/// Tunes over session files on the calling thread (configurations spread
/// over rayon's pool).
#[napi(catch_unwind)]
pub fn tune_files(paths: Vec<String>, options_json: String) -> NativeReplayResult {
    result(report(&paths, &options_json, None))
}

/// The same tune off the JS thread, counting renders into `progress`.
#[napi(catch_unwind)]
pub fn tune_async(
    paths: Vec<String>,
    options_json: String,
    progress: Option<&NativeReplayProgress>,
) -> AsyncTask<ReportTask> {
    ReportTask::spawn(progress, move |progress| {
        report(&paths, &options_json, Some(progress))
    })
}
