//! Exports for the tests only, built with the `test-exports` feature
//! (Cargo.toml) and left out of release builds: a panic on purpose (a panic
//! becomes a JS error), the engine's reader of `v8.serialize` bytes, and the
//! replay's model of the Anthropic request body.

use napi::bindgen_prelude::{Buffer, Uint8Array};
use napi_derive::napi;

/// Panics on purpose: the test proves a panic becomes a JS error and the
/// addon keeps working (`__test__/api.test.js`).
#[napi(catch_unwind)]
pub fn debug_panic() {
    panic!("debug_panic called");
}

/// The JSON text the engine reads from `v8.serialize` bytes (null where it
/// declines them and JS sends `JSON.stringify`'s text instead), held against
/// `JSON.stringify` (`__test__/wire.test.js`).
#[napi(catch_unwind)]
pub fn wire_to_json(wire: Uint8Array) -> Option<Buffer> {
    crate::json::v8_wire::wire_to_json(&wire).map(Buffer::from)
}

/// The Anthropic request body (`{system?, messages}`) pi-ai 1.6.0 would
/// send for pi agent messages to `model` (a pi-ai catalog object) with
/// `retention` `short`, `long` or `none`, for the differential test against
/// pi-ai's `onPayload` (`__test__/wire-payload.test.js`): the JSON text, or
/// an error message prefixed `error: `.
#[napi(catch_unwind)]
pub fn replay_wire_payload(messages_json: String, model_json: String, retention: String) -> String {
    crate::cost::payload::payload_json(&messages_json, &model_json, &retention)
}
