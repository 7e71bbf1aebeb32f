//! `Pruner`: the state and config converted once and held, for hosts that
//! prune bytes render after render.

use napi::bindgen_prelude::Uint8Array;
use napi::Env;
use napi_derive::napi;

use super::stateless::{prune_into, prune_result, NativePruneResult};
use super::{boundary_from, config_of, dialect_of, js_error, state_of};
use crate::config::Config;
use crate::dialect::Dialect;
use crate::json::Json;
use crate::state::State;

#[napi]
pub struct NativePruner {
    dialect: Dialect,
    state: State,
    config: Config,
}

#[napi]
impl NativePruner {
    /// Starts with an empty state and config; the JS layer sets both.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, dialect: Option<String>) -> napi::Result<Self> {
        let dialect = dialect_of(dialect).map_err(|e| js_error(&env, e))?;
        Ok(NativePruner {
            dialect,
            state: State::answers(dialect),
            config: Config::from_value(&Json::Null, dialect).unwrap_or_default(),
        })
    }

    #[napi(catch_unwind)]
    pub fn set_state(&mut self, env: Env, state_json: Option<String>) -> napi::Result<()> {
        self.state = state_of(state_json, self.dialect).map_err(|e| js_error(&env, e))?;
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn set_config(&mut self, env: Env, config_json: Option<String>) -> napi::Result<()> {
        self.config = config_of(config_json, self.dialect).map_err(|e| js_error(&env, e))?;
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn prune(
        &self,
        env: Env,
        messages: Uint8Array,
        thinking_strip_boundary_timestamp: Option<f64>,
    ) -> napi::Result<NativePruneResult> {
        let pruned = boundary_from(thinking_strip_boundary_timestamp)
            .and_then(|b| prune_into(&env, &messages, &self.state, &self.config, b, self.dialect))
            .map_err(|e| js_error(&env, e))?;
        Ok(prune_result(pruned, self.dialect))
    }
}
