//! The render path's fast scan against the tree reader: a message is taken
//! as it stands exactly when the reader calls it canonical, refused when the
//! reader refuses it, and what the scan keeps is canonical. Input: near-JSON
//! made from the bytes (first byte even) or the bytes themselves.

#![no_main]

use condense_native_fuzz::json_diff::scan_verdict;
use condense_native_fuzz::near_json::near_json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((b, rest)) if b.is_multiple_of(2) => scan_verdict(&near_json(rest)),
        Some((_, rest)) => scan_verdict(rest),
        None => scan_verdict(data),
    }
});
