//! condense-native: pi-condense's render-path pruner as a Node addon.

// mimalloc serves the render's many small and medium blocks faster than the
// system allocator (the large ones a thread keeps between calls, see
// index::reuse).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod config;
pub mod convert;
pub mod error;
pub mod frontier;
pub mod glob;
mod hash;
pub mod index;
pub mod jsjson;
pub mod output;
pub mod phases;
pub mod prune;
pub mod session;
pub mod sessionfile;
pub mod state;
pub mod value;

// napi-derive registers exports only outside test builds.
#[cfg(feature = "napi")]
#[cfg_attr(test, allow(dead_code))]
mod napi_api;

#[cfg(feature = "napi")]
#[cfg_attr(test, allow(dead_code))]
mod napi_sessionfile;
