//! condense-native: pi-condense's render-path pruner as a Node addon.

// mimalloc serves the render's many small and medium blocks faster than the
// system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod apply;
pub mod config;
pub mod dialect;
pub mod engine;
pub mod error;
pub mod frontier;
pub mod glob;
mod hash;
pub mod json;
pub mod phases;
pub mod prune;
pub mod record;
pub mod replay;
pub mod script;
pub mod sessionfile;
pub mod state;
pub mod tune;

// napi-derive registers exports only outside test builds.
#[cfg(feature = "napi")]
#[cfg_attr(test, allow(dead_code))]
mod napi;
