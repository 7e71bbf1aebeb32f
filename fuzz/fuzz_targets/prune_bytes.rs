//! Arbitrary bytes as the messages buffer, with a fixed realistic state and
//! config (every phase on), once with a boundary and once without. Any
//! answer must be a typed error or a pruned array whose sizes are exact.

#![no_main]

use std::sync::OnceLock;

use condense_native::config::Config;
use condense_native::state::State;
use condense_native_fuzz::{check_with, FIXED_CONFIG, FIXED_STATE};
use libfuzzer_sys::fuzz_target;

fn fixed() -> &'static (State, Config) {
    static FIXED: OnceLock<(State, Config)> = OnceLock::new();
    FIXED.get_or_init(|| {
        (
            State::from_json(FIXED_STATE.as_bytes()).expect("fixed state"),
            Config::from_json(FIXED_CONFIG.as_bytes()).expect("fixed config"),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let (state, config) = fixed();
    check_with(data, state, config, Some(3.0));
    check_with(data, state, config, None);
});
