//! condense-native: pi-condense's render-path pruner as a Node addon.

// Renders allocate and free the same few large vectors every time; the
// system allocator hands such blocks back to the kernel and takes page faults
// to get them again, mimalloc keeps them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod config;
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
pub mod state;
pub mod value;

// napi-derive registers exports only outside test builds.
#[cfg(feature = "napi")]
#[cfg_attr(test, allow(dead_code))]
mod napi_api;
