//! Arbitrary bytes as the messages buffer, with a fixed realistic state and
//! config (every phase on), in both dialects, under 2.4.3 once with a
//! boundary and once without. Any answer must be a typed error or a pruned
//! array whose sizes are exact.

#![no_main]

use std::sync::OnceLock;

use condense_native::Config;
use condense_native::Dialect;
use condense_native::State;
use condense_native_fuzz::{check_with, fixed_config, DIALECTS, FIXED_STATE};
use libfuzzer_sys::fuzz_target;

type Fixed = [(Dialect, State, Config); 2];

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| {
        DIALECTS.map(|d| {
            (
                d,
                State::from_json(FIXED_STATE.as_bytes(), d).expect("fixed state"),
                fixed_config(d),
            )
        })
    })
}

fuzz_target!(|data: &[u8]| {
    for (dialect, state, config) in fixed() {
        check_with(data, state, config, Some(3.0), *dialect);
        if *dialect == Dialect::V2_4 {
            check_with(data, state, config, None, *dialect);
        }
    }
});
