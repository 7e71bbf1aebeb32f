//! A structurally valid message array in pi's shapes, built from the fuzzer's
//! bytes with `arbitrary`, plus a state and config that meet its ids and
//! timestamps (and sometimes arbitrary JSON instead), in either dialect. No
//! panic; when the call succeeds the output parses, `afterChars` is its
//! UTF-16 length and `size_of(output) == afterChars`.

#![no_main]

use condense_native_fuzz::{check, gen::Case};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(case) = Case::build(data) else { return };
    check(
        case.messages.as_bytes(),
        case.state.as_bytes(),
        case.config.as_bytes(),
        case.boundary,
        case.dialect,
    );
});
