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

use super::{guarded, read_file, utf8_string, TaskInput};
use crate::error::PruneError;
use crate::replay::{replay, to_json, Progress, ReplayOptions};

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

/// Where the session comes from.
enum SessionSource<'a> {
    Bytes(&'a [u8]),
    Path(&'a str),
}

/// The one core call behind every export, panics turned into an error.
fn run(
    source: SessionSource<'_>,
    options_json: &str,
    progress: Option<&Progress>,
) -> Result<String, PruneError> {
    guarded(
        "internal error while replaying the session (a bug: please report it with the file)",
        || {
            let options = ReplayOptions::from_json(options_json.as_bytes())?;
            let read;
            let bytes = match source {
                SessionSource::Bytes(b) => b,
                SessionSource::Path(p) => {
                    read = read_file(p)?;
                    &read[..]
                }
            };
            let r = replay(bytes, &options, progress)?;
            Ok(utf8_string(to_json(&r, options.keep_renders)))
        },
    )
}

/// Replays a session from bytes the caller holds (read in place), on the
/// calling thread.
#[napi(catch_unwind)]
pub fn replay_bytes(bytes: Uint8Array, options_json: String) -> NativeReplayResult {
    result(run(SessionSource::Bytes(&bytes), &options_json, None))
}

/// Reads and replays a session file on the calling thread.
#[napi(catch_unwind)]
pub fn replay_file(path: String, options_json: String) -> NativeReplayResult {
    result(run(SessionSource::Path(&path), &options_json, None))
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
    let input: TaskInput = input.into();
    ReportTask::spawn(progress, move |progress| {
        let source = match &input {
            TaskInput::Path(p) => SessionSource::Path(p),
            TaskInput::Bytes(b) => SessionSource::Bytes(b),
        };
        run(source, &options_json, Some(progress))
    })
}

/// The Anthropic request body (`{system?, messages}`) pi-ai 1.6.0 would
/// send for pi agent messages (pi's system message first) to `model` (a
/// pi-ai catalog object) with `retention` `short`, `long` or `none`: the
/// replay's block model, for the differential test against pi-ai's
/// `onPayload` (`__test__/wire-payload.test.js`). Internal: not in
/// index.js. Returns the JSON text, or an error message prefixed `error: `.
#[napi(catch_unwind)]
pub fn replay_wire_payload(messages_json: String, model_json: String, retention: String) -> String {
    use crate::cost::payload::payload;
    use crate::cost::wire::CallModel;
    use crate::json::parse_value;
    let messages = match parse_value(messages_json.as_bytes()) {
        Ok(crate::json::Json::Arr(m)) => m,
        _ => return "error: messages must be a JSON array".into(),
    };
    let Ok(model) = parse_value(model_json.as_bytes()) else {
        return "error: model must be JSON".into();
    };
    let model = CallModel::from_json(&model);
    utf8_string(payload(&messages, &model, &retention).to_json())
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
