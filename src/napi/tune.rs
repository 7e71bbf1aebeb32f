//! The N-API surface of the tune (`crate::tune`): `tuneFiles` on the
//! calling thread and `tuneAsync` on the libuv pool, both over session
//! file paths, counting renders into a `NativeReplayProgress`. The result
//! is the tune's JSON text (`tune::to_json`) or the error fields, as for
//! the replay; panics never cross.

use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;

use super::replay::{result, NativeReplayProgress, NativeReplayResult, ReportTask};
use super::{guarded, read_file, utf8_string};
use crate::error::PruneError;
use crate::json::parse_value;
use crate::json::Json;
use crate::replay::{Progress, ReplayOptions};
use crate::tune::{to_json, tune, TuneOptions};

fn run(
    paths: &[String],
    options_json: &str,
    progress: Option<&Progress>,
) -> Result<String, PruneError> {
    guarded(
        "internal error while tuning (a bug: please report it with the files)",
        || {
            let replay = ReplayOptions::from_json(options_json.as_bytes())?;
            let release = match parse_value(options_json.as_bytes())
                .ok()
                .and_then(|o| o.get("release").cloned())
            {
                None | Some(Json::Null) => "2.4.3",
                Some(r) if r.is_str("2.4.3") => "2.4.3",
                Some(r) if r.is_str("2.9.1") => "2.9.1",
                Some(_) => {
                    return Err(PruneError::bad_argument(
                        "release must be '2.4.3' or '2.9.1'",
                    ))
                }
            };
            // A file that cannot be read is left out of the tune, as one that
            // cannot be parsed (`tune` lists both in `errors`).
            let files: Vec<(String, Result<Vec<u8>, PruneError>)> =
                paths.iter().map(|p| (p.clone(), read_file(p))).collect();
            let t = tune(&files, &TuneOptions { replay, release }, progress)?;
            Ok(utf8_string(to_json(&t)))
        },
    )
}

/// Tunes over session files on the calling thread (configurations spread
/// over rayon's pool).
#[napi(catch_unwind)]
pub fn tune_files(paths: Vec<String>, options_json: String) -> NativeReplayResult {
    result(run(&paths, &options_json, None))
}

/// The same tune off the JS thread, counting renders into `progress`.
#[napi(catch_unwind)]
pub fn tune_async(
    paths: Vec<String>,
    options_json: String,
    progress: Option<&NativeReplayProgress>,
) -> AsyncTask<ReportTask> {
    ReportTask::spawn(progress, move |progress| {
        run(&paths, &options_json, Some(progress))
    })
}
