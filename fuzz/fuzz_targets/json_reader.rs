//! The one JSON reader against the two it replaced (fuzz/src/oracle_json):
//! on arbitrary bytes (first byte odd) and on near-JSON made from them
//! (first byte even), the same value or error as the old `JSON.parse`, and
//! for session lines the same verdict, nodes, strings and canonical flag.

#![no_main]

use condense_native_fuzz::json_diff::tree_reader;
use condense_native_fuzz::near_json::near_json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((b, rest)) if b.is_multiple_of(2) => tree_reader(&near_json(rest)),
        Some((_, rest)) => tree_reader(rest),
        None => tree_reader(data),
    }
});
