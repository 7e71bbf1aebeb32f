//! Arbitrary bytes as `v8.serialize` output: the reader the engine runs on
//! the JS thread (`wire_is_json`) must agree with the converter that runs
//! later on the sync thread (`wire_to_json`: its `expect` relies on that),
//! and whatever the converter writes must be canonical JSON, the text the
//! scanner then trusts as `JSON.stringify`'s. Nothing may panic or recurse
//! without bound. Seeds: Node's own serializations of pi messages.

#![no_main]

use condense_native::{read, Input};
use condense_native::{wire_is_json, wire_to_json};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = wire_to_json(data);
    assert_eq!(
        wire_is_json(data),
        text.is_some(),
        "the check and the conversion disagree"
    );
    if let Some(text) = text {
        match read(&text, Input::BYTES) {
            Ok(tape) => assert!(tape.canonical, "not JSON.stringify's spelling"),
            Err(e) => panic!("not JSON: {e}"),
        }
    }
});
