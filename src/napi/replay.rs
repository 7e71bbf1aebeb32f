//! The N-API surface of the replay (`crate::replay`): `replayBytes` and
//! `replayFile` on the calling thread, `replayAsync` on the libuv pool, and
//! `NativeReplayProgress`, a counter of renders done that JS may poll while
//! an async replay runs. Every form runs the same core function and hands
//! back the replay as JSON text (`replay::to_json`) for the JS layer to
//! parse; failures come back as data (code, message, line) so the sync and
//! async paths build one error type. Panics never cross.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use napi::bindgen_prelude::{AsyncTask, Either, Uint8Array};
use napi::{Env, Task};
use napi_derive::napi;

use crate::error::PruneError;
use crate::json::text::utf8_string;
use crate::replay::{report, Progress};
use crate::sessionfile::SessionInput;

/// A replay's outcome: its JSON text, or the error fields.
#[napi(object)]
pub struct NativeReplayResult {
    pub json: Option<String>,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    /// The session file line the error concerns.
    pub error_line: Option<u32>,
}

/// Renders done and renders to do by a running `replayAsync`.
#[napi]
pub struct NativeReplayProgress {
    pub(super) inner: Arc<Progress>,
}

#[napi]
impl NativeReplayProgress {
    #[napi(constructor, catch_unwind)]
    pub fn new() -> Self {
        NativeReplayProgress {
            inner: Arc::new(Progress::default()),
        }
    }

    #[napi(getter)]
    pub fn done(&self) -> f64 {
        self.inner.done.load(Ordering::Relaxed) as f64
    }

    /// 0 until the file is parsed and its model calls are known.
    #[napi(getter)]
    pub fn total(&self) -> f64 {
        self.inner.total.load(Ordering::Relaxed) as f64
    }
}

impl Default for NativeReplayProgress {
    fn default() -> Self {
        Self::new()
    }
}

/// The counter an async task counts into: the caller's, or one of its own.
pub(super) fn progress_of(p: Option<&NativeReplayProgress>) -> Arc<Progress> {
    p.map_or_else(|| Arc::new(Progress::default()), |p| p.inner.clone())
}

pub(super) fn result(outcome: Result<String, PruneError>) -> NativeReplayResult {
    match outcome {
        Ok(json) => NativeReplayResult {
            json: Some(json),
            error_code: None,
            error_message: None,
            error_line: None,
        },
        Err(e) => NativeReplayResult {
            json: None,
            error_code: Some(e.code.as_str().to_string()),
            error_message: Some(e.message),
            error_line: e.line.map(|l| l as u32),
        },
    }
}

/// Replays a session from bytes the caller holds (read in place), on the
/// calling thread.
#[napi(catch_unwind)]
pub fn replay_bytes(bytes: Uint8Array, options_json: String) -> NativeReplayResult {
    result(report(
        &SessionInput::Bytes((&bytes[..]).into()),
        &options_json,
        None,
    ))
}

/// Reads and replays a session file on the calling thread.
#[napi(catch_unwind)]
pub fn replay_file(path: String, options_json: String) -> NativeReplayResult {
    result(report(
        &SessionInput::Path(path.into()),
        &options_json,
        None,
    ))
}

type ReportJob = dyn FnOnce(&Progress) -> Result<String, PruneError> + Send;

/// A replay or a tune on the libuv pool: its job (the inputs moved in)
/// counts renders into `progress`, and the promise resolves with the JSON
/// text or the error fields.
pub struct ReportTask {
    job: Option<Box<ReportJob>>,
    progress: Arc<Progress>,
}

impl ReportTask {
    pub(super) fn spawn(
        progress: Option<&NativeReplayProgress>,
        job: impl FnOnce(&Progress) -> Result<String, PruneError> + Send + 'static,
    ) -> AsyncTask<ReportTask> {
        AsyncTask::new(ReportTask {
            job: Some(Box::new(job)),
            progress: progress_of(progress),
        })
    }
}

impl Task for ReportTask {
    type Output = Result<String, PruneError>;
    type JsValue = NativeReplayResult;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(match self.job.take() {
            Some(job) => job(&self.progress),
            None => Err(PruneError::bad_argument("the task ran twice")),
        })
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        Ok(result(output))
    }
}

/// Replays on the libuv pool: the file read (or, for bytes, a copy taken
/// now so the caller may reuse its buffer) and the whole replay run off the
/// JS thread, counting renders into `progress`; the promise resolves with
/// the JSON text.
#[napi(catch_unwind)]
pub fn replay_async(
    input: Either<String, Uint8Array>,
    options_json: String,
    progress: Option<&NativeReplayProgress>,
) -> AsyncTask<ReportTask> {
    let input = super::session_input(input);
    ReportTask::spawn(progress, move |progress| {
        report(&input, &options_json, Some(progress))
    })
}

/// The cache-aware gate's settings (`{enabled?, horizon?, budget?}` as
/// JSON) checked by the one copy of their rules (`replay::gate`), and
/// written back whole (`{horizon, budget}`), for a caller that must report
/// a bad setting before any replay runs (the CLI's `--gate`, pi's
/// `condenseNative.gate`). Cost: a parse of the small object.
#[napi(catch_unwind)]
pub fn check_gate_settings(json: String, name: String) -> NativeReplayResult {
    let outcome = crate::json::parse_value(json.as_bytes())
        .map_err(|e| PruneError::bad_argument(format!("{name}: {e}")))
        .and_then(|v| crate::gate::rule::GateSettings::from_json(Some(&v), &name))
        .map(|s| {
            let mut out = Vec::new();
            s.to_json().write_json(&mut out);
            utf8_string(out)
        });
    result(outcome)
}

/// pi's own settings the replay reads (`{compaction?, cacheWarming?}` of a
/// settings file, as JSON) checked by the replay's rules
/// (`replay::options`, `replay::compaction`), for the CLI to name a bad
/// one with its file before any session is read. Cost: a parse of the
/// small object.
#[napi(catch_unwind)]
pub fn check_pi_settings(json: String) -> NativeReplayResult {
    let outcome = crate::replay::ReplayOptions::from_json(json.as_bytes()).map(|_| String::new());
    result(outcome)
}
