//! `NativeEngine`: the kept engine (`crate::engine`) behind `PruneSession`,
//! the pi-condense drop-ins and the array `pruneMessages`. It keeps the
//! conversation's records and text between calls; a render crosses the
//! boundary as an order (typed array), the edits new to the JS side (one
//! JSON text) and evictions.

use crate::record::Source;
use napi::bindgen_prelude::{Buffer, Either, Int32ArraySlice, Null, Uint32ArraySlice, Uint8Array};
use napi::Env;
use napi_derive::napi;

use super::background::{BackgroundSyncs, SliceText};
use super::{
    config_of, diagnostics_json, dialect_of, js_error, nullable, state_of, utf16_to_utf8,
    NativeFrontier, NativeStats, StringUnits,
};
use crate::engine::{Engine, Rendered};
use crate::error::PruneError;
use crate::hash::HashMap;
use crate::indexer_methods::{AbsentMethods, IndexerMethod};
use crate::json::parse_value;
use crate::json::Json;
use crate::state::{Chains, Unanswered};

#[napi]
pub struct NativeEngine {
    /// Read by `NativeGate::decide` (its last render).
    pub(super) inner: Engine,
    background: BackgroundSyncs,
}

#[napi(object)]
pub struct NativeRenderResult<'env> {
    pub pruned: bool,
    pub before_chars: f64,
    pub after_chars: f64,
    pub frontier: NativeFrontier,
    pub stats: NativeStats,
    /// JSON text of `[{kind, key, detail}]` (2.9.1), or null.
    pub diagnostics: Option<String>,
    pub order: Option<Int32ArraySlice<'env>>,
    pub fresh: Option<Uint32ArraySlice<'env>>,
    pub fresh_edits: Option<String>,
    pub evicted: Option<Uint32ArraySlice<'env>>,
}

fn render_result(
    env: &Env,
    r: Rendered,
    dialect: crate::dialect::Dialect,
) -> napi::Result<NativeRenderResult<'_>> {
    let evicted = (!r.evicted.is_empty())
        .then(|| Uint32ArraySlice::copy_from(env, &r.evicted))
        .transpose()?;
    let (order, fresh, fresh_edits) = if r.pruned {
        (
            Some(Int32ArraySlice::copy_from(env, &r.order)?),
            Some(Uint32ArraySlice::copy_from(env, &r.fresh)?),
            Some(String::from_utf8(r.fresh_edits).unwrap_or_default()),
        )
    } else {
        (None, None, None)
    };
    Ok(NativeRenderResult {
        pruned: r.pruned,
        before_chars: r.before_chars as f64,
        after_chars: r.after_chars as f64,
        frontier: r.frontier.into(),
        stats: NativeStats::of(r.stats, dialect),
        diagnostics: diagnostics_json(&r.diagnostics),
        order,
        fresh,
        fresh_edits,
        evicted,
    })
}

fn parse_json(text: &str, what: &str) -> Result<Json, PruneError> {
    parse_value(text.as_bytes()).map_err(|e| PruneError::bad_argument(format!("{what}: {e}")))
}

/// `{"v": value}`, `{"throws": true}` (a call that threw in the host) or
/// `{"absent": method}` (the host's indexer has no such method).
fn outcome(v: &Json) -> Result<Result<Json, Unanswered>, PruneError> {
    if let Some(value) = v.get("v") {
        return Ok(Ok(value.clone()));
    }
    match v
        .get("absent")
        .map(|m| m.as_text().and_then(IndexerMethod::named))
    {
        Some(Some(method)) => Ok(Err(Unanswered::Absent(method))),
        Some(None) => Err(PruneError::bad_argument(
            "chains: an absent answer must name an indexer method",
        )),
        None => Ok(Err(Unanswered::Threw)),
    }
}

#[napi]
impl NativeEngine {
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, dialect: Option<String>) -> napi::Result<Self> {
        let dialect = dialect_of(dialect).map_err(|e| js_error(&env, e))?;
        Ok(NativeEngine {
            inner: Engine::new(dialect),
            background: BackgroundSyncs::default(),
        })
    }

    #[napi(catch_unwind)]
    pub fn set_config(&mut self, env: Env, config_json: Option<String>) -> napi::Result<()> {
        let config = config_of(config_json, self.inner.dialect()).map_err(|e| js_error(&env, e))?;
        self.inner.set_config(config);
        Ok(())
    }

    /// A whole state object (the addon's state shape) as JSON text.
    #[napi(catch_unwind)]
    pub fn set_state(&mut self, env: Env, state_json: Option<String>) -> napi::Result<()> {
        let state = state_of(state_json, self.inner.dialect()).map_err(|e| js_error(&env, e))?;
        self.inner.set_state(state);
        Ok(())
    }

    /// The 2.4.3 thinking boundary, compared with `<` as the release
    /// compares it: NaN is one no timestamp is older than (the drop-in's
    /// caller may pass it; the public options refuse it: js/args.js).
    #[napi(catch_unwind)]
    pub fn set_boundary(&mut self, boundary: Option<f64>) {
        self.inner.set_boundary(boundary);
    }

    /// The host indexer's methods that are not functions, as JSON text:
    /// `{"getRecord": "it is number", ...}` (`{}`: none). The render raises
    /// where the release would call one of them.
    #[napi(catch_unwind)]
    pub fn set_absent_methods(&mut self, env: Env, absent_json: String) -> napi::Result<()> {
        let absent = parse_json(&absent_json, "absent methods")
            .and_then(|v| AbsentMethods::from_json(&v))
            .map_err(|e| js_error(&env, e))?;
        self.inner.set_absent_methods(absent);
        Ok(())
    }

    /// A host indexer's answers, as JSON text: an array of
    /// `{"k": key, "s": summarized, "r": record?, "f": shortRef?}` and
    /// `{"l": id, "v": hasLegacyBareRecord}`.
    #[napi(catch_unwind)]
    pub fn set_answers(&mut self, env: Env, answers_json: String) -> napi::Result<()> {
        let mut run = || -> Result<(), PruneError> {
            let answers = parse_json(&answers_json, "answers")?;
            for a in answers.as_array().unwrap_or(&[]) {
                if let Some(id) = a.get("l").and_then(Json::as_text) {
                    self.inner
                        .answer_legacy(id, a.get("v").is_some_and(Json::truthy));
                    continue;
                }
                let Some(key) = a.get("k").and_then(Json::as_text) else {
                    return Err(PruneError::bad_argument(
                        "answers: an answer without a string key",
                    ));
                };
                self.inner.answer(
                    key,
                    a.get("s").is_some_and(Json::truthy),
                    a.get("r").filter(|r| !r.is_null()).cloned(),
                    a.get("f").cloned(),
                );
            }
            Ok(())
        };
        run().map_err(|e| js_error(&env, e))
    }

    /// A host indexer's chain registry, as JSON text: `{"entries": [...],
    /// "summaries": [outcome...], "lookups": [[blockId, outcome]...]}` where
    /// an outcome is `{"v": value}`, `{"throws": true}` or `{"absent":
    /// method}`. With `"from": k`,
    /// only the entries and summaries from position k on (those before are
    /// the kept ones), and every lookup. Costs reading that text.
    #[napi(catch_unwind)]
    pub fn set_chains(&mut self, env: Env, chains_json: String) -> napi::Result<()> {
        let run = || -> Result<(Option<usize>, Chains), PruneError> {
            let c = parse_json(&chains_json, "chains")?;
            let from = match c.get("from") {
                None => None,
                Some(Json::Num(k)) if k.fract() == 0.0 && *k >= 0.0 => Some(*k as usize),
                Some(_) => {
                    return Err(PruneError::bad_argument(
                        "chains: from must be a whole number of entries",
                    ))
                }
            };
            let list = |key: &str| c.get(key).and_then(Json::as_array).unwrap_or(&[]);
            let entries = list("entries").to_vec();
            let summaries = list("summaries")
                .iter()
                .map(outcome)
                .collect::<Result<_, _>>()?;
            let mut lookups = HashMap::default();
            for l in list("lookups") {
                let pair = l.as_array().unwrap_or(&[]);
                if let (Some(id), Some(v)) = (pair.first().and_then(Json::as_text), pair.get(1)) {
                    let value = match v.get("none") {
                        Some(_) => Ok(None),
                        None => outcome(v)?.map(Some),
                    };
                    lookups.insert(id.into(), value);
                }
            }
            let chains = Chains::Given {
                entries,
                summaries,
                lookups,
            };
            Ok((from, chains))
        };
        let r = run().and_then(|(from, chains)| match from {
            None => {
                self.inner.set_chains(chains);
                Ok(())
            }
            Some(from) => self.inner.update_chains(from, chains),
        });
        r.map_err(|e| js_error(&env, e))
    }

    /// Replaces the kept messages from `from` on with the elements of
    /// `messagesJson` (JSON.stringify of the messages from `from` on),
    /// read as UTF-16 and kept as UTF-8.
    #[napi(catch_unwind)]
    pub fn sync(
        &mut self,
        env: Env,
        from: u32,
        #[napi(ts_arg_type = "string")] messages_json: StringUnits,
    ) -> napi::Result<()> {
        self.settle(&env)?;
        let bytes = utf16_to_utf8(&messages_json.0);
        let r = self.inner.sync(from as usize, &bytes, Source::Stringify);
        r.map_err(|e| js_error(&env, e))
    }

    /// As `sync`, but the text is converted and read on the sync thread while
    /// the caller goes on; the next call that reads the conversation
    /// (`render`, `flush`, `sync`, `length`) waits for it and reports its
    /// errors. Copies the string's UTF-16 units on the calling thread.
    #[napi(catch_unwind)]
    pub fn sync_later(
        &mut self,
        from: u32,
        #[napi(ts_arg_type = "string")] messages_json: StringUnits,
    ) {
        self.background
            .start(from as usize, SliceText::Utf16(messages_json.0));
    }

    /// As `syncLater`, for messages as `v8.serialize` wrote them: checks
    /// the bytes (skipping over strings) and copies them here; turning them
    /// into their JSON text and reading it happen on another thread.
    /// Returns false, and keeps nothing, for a value whose JSON text cannot
    /// be told from these bytes (see `json::v8_wire`): the caller sends
    /// `JSON.stringify`'s text instead.
    #[napi(catch_unwind)]
    pub fn sync_later_wire(&mut self, from: u32, wire: Uint8Array) -> bool {
        if !crate::json::v8_wire::wire_is_json(&wire) {
            return false;
        }
        self.background
            .start(from as usize, SliceText::Wire(wire.to_vec()));
        true
    }

    #[napi(catch_unwind)]
    pub fn render<'env>(&mut self, env: &'env Env) -> napi::Result<NativeRenderResult<'env>> {
        self.settle(env)?;
        let r = self.inner.render().map_err(|e| js_error(env, e))?;
        render_result(env, r, self.inner.dialect())
    }

    /// Advances and returns the thinking boundary (null: none yet).
    #[napi(catch_unwind)]
    pub fn flush(
        &mut self,
        env: Env,
        closing_json: Option<String>,
    ) -> napi::Result<Either<f64, Null>> {
        self.settle(&env)?;
        self.inner
            .flush(closing_json.as_deref().map(str::as_bytes))
            .map(nullable)
            .map_err(|e| js_error(&env, e))
    }

    /// Frees the kept conversation now, not when the engine finalizes the
    /// object (which waits for the event loop to turn).
    #[napi(catch_unwind)]
    pub fn close(&mut self) {
        self.background.clear();
        self.inner = Engine::new(self.inner.dialect());
    }

    #[napi(getter, catch_unwind)]
    pub fn length(&mut self, env: Env) -> napi::Result<u32> {
        self.settle(&env)?;
        Ok(self.inner.len() as u32)
    }
}

impl NativeEngine {
    /// Takes the background syncs in (see `background.rs`).
    fn settle(&mut self, env: &Env) -> napi::Result<()> {
        self.background
            .settle(&mut self.inner)
            .map_err(|e| js_error(env, e))
    }
}

/// The JSON text the engine reads from `v8.serialize` bytes (null where it
/// declines them and JS sends `JSON.stringify`'s text instead). Internal:
/// the tests hold it against `JSON.stringify` (`__test__/wire.test.js`).
#[napi(catch_unwind)]
pub fn wire_to_json(wire: Uint8Array) -> Option<Buffer> {
    crate::json::v8_wire::wire_to_json(&wire).map(Buffer::from)
}
