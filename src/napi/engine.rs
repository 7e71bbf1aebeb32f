//! `NativeEngine`: the kept engine (`crate::engine`) behind `PruneSession`,
//! the pi-condense drop-ins and the array `pruneMessages`. It keeps the
//! conversation's records and text between calls; a render crosses the
//! boundary as an order (typed array), the edits new to the JS side (one
//! JSON text) and evictions.

use crate::record::Source;
use napi::bindgen_prelude::{Either, Int32ArraySlice, Null, Uint32ArraySlice, Uint8Array};
use napi::Env;
use napi_derive::napi;

use super::{
    config_of, dialect_of, js_error, nullable, state_of, NativeFrontier, NativeStats, StringUnits,
};
use crate::engine::background::{BackgroundSyncs, SliceText};
use crate::engine::{Engine, Rendered};
use crate::json::utf16::utf16_to_utf8;
use crate::script::diagnostics_json;

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

    /// The host indexer's methods that are not functions, as JSON text
    /// (`Engine::set_absent_methods_json`): the render raises where the
    /// release would call one of them.
    #[napi(catch_unwind)]
    pub fn set_absent_methods(&mut self, env: Env, absent_json: String) -> napi::Result<()> {
        let r = self.inner.set_absent_methods_json(absent_json.as_bytes());
        r.map_err(|e| js_error(&env, e))
    }

    /// A host indexer's answers, as JSON text (`Engine::set_answers_json`).
    #[napi(catch_unwind)]
    pub fn set_answers(&mut self, env: Env, answers_json: String) -> napi::Result<()> {
        let r = self.inner.set_answers_json(answers_json.as_bytes());
        r.map_err(|e| js_error(&env, e))
    }

    /// A host indexer's chain registry, as JSON text
    /// (`Engine::set_chains_json`). Costs reading that text.
    #[napi(catch_unwind)]
    pub fn set_chains(&mut self, env: Env, chains_json: String) -> napi::Result<()> {
        let r = self.inner.set_chains_json(chains_json.as_bytes());
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
