//! Differential: a kept engine fed a generated conversation in random
//! chunks (appends, re-sends from a random position, branch switches, new
//! indexer answers, flushes) renders exactly what a stateless `prune_bytes`
//! of the same messages gives, in both dialects (`engine_sync::run`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = condense_native_fuzz::engine_sync::run(data);
});
