//! What a provider bills for one request pi sends: the request as pi-ai
//! 1.6.0 builds it (`wire.rs` converts a message, `assemble.rs` applies
//! pi-ai's sequence rules, `request.rs` places the cache breakpoints and
//! keeps positions up to date from the first changed message), the
//! provider's prompt cache (`cache.rs`, CACHE-MODEL.md 2-3) or the prefix
//! rule kept for comparison (`prefix.rs`), the rules and prices of pi-ai's
//! catalog (`catalog.rs`), tokens from characters (`calibration.rs`, fitted
//! on the usage pi records: `usage.rs`) and the bill of a call (`bill.rs`).
//! Nothing here knows a session file, a replay or pi's extension: the
//! replay (`crate::replay`) and the live gate (`crate::gate`) both price
//! through these pieces.

pub mod assemble;
pub mod bill;
pub mod cache;
pub mod calibration;
pub mod catalog;
pub mod digest;
pub mod kept;
// Reached only from the binding's test export (`replayWirePayload`).
#[cfg(feature = "napi")]
pub mod payload;
pub mod prefix;
pub mod request;
pub mod slot_value;
pub mod usage;
pub mod wire;
