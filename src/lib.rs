//! condense-native: pi-condense's render-path pruner as a Node addon.

pub mod config;
pub mod error;
pub mod frontier;
pub mod glob;
pub mod index;
pub mod jsjson;
pub mod output;
pub mod phases;
pub mod prune;
pub mod session;
pub mod state;
pub mod value;

// napi-derive registers exports only outside test builds.
#[cfg(feature = "napi")]
#[cfg_attr(test, allow(dead_code))]
mod napi_api;
