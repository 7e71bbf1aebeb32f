//! condense-native: pi-condense's render-path pruner as a Node addon.

// Without the bindings (`--no-default-features`: the fuzz targets, the
// Rust tests) what only they call is unused; dead code is judged in the
// build with them (`npm run lint`).
#![cfg_attr(not(feature = "napi"), allow(dead_code, unused_imports))]

// mimalloc serves the render's many small and medium blocks faster than the
// system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod apply;
mod config;
mod cost;
mod dialect;
mod engine;
mod error;
mod frontier;
mod gate;
mod glob;
mod hash;
mod indexer_methods;
mod json;
mod phases;
mod prune;
mod record;
mod replay;
mod script;
mod sessionfile;
mod state;
mod tune;

// The surface outside the crate: what the fuzz targets (fuzz/), the
// examples and tests/ use. The bindings (`napi/`) are inside the crate and
// reach the modules directly. Everything else is crate-private, so rustc
// reports what nothing calls.
pub use apply::{output_len, write_output};
pub use config::Config;
pub use dialect::Dialect;
pub use engine::{Engine, Rendered};
pub use error::PruneError;
pub use frontier::compute_thinking_boundary;
pub use json::read::{read, read_value, Input, ParseError, Problem};
pub use json::tape::{Kind, Tape};
pub use json::v8_wire::{wire_is_json, wire_to_json};
pub use json::view::Value;
pub use json::{parse_value, Json};
pub use phases::{run as run_phases, Inputs, Memo};
pub use prune::{prune_bytes, size_of, Pruned};
pub use record::{scan_array, Log, Source};
pub use replay::{replay, to_json as replay_to_json, Policy, ReplayOptions};
pub use script::{EditScript, Inserted, Op, Slot};
pub use sessionfile::condense::{frontier_json, state_json};
pub use sessionfile::{
    load, model_calls, path_to, CondenseState, ContextView, Leaf, LoadOptions, SessionFile,
};
pub use state::State;

// napi-derive registers exports only outside test builds.
#[cfg(feature = "napi")]
#[cfg_attr(test, allow(dead_code))]
mod napi;
