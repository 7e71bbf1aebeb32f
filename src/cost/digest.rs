//! A message as the cost model tells messages apart: the XXH3-64 of its
//! `JSON.stringify` text (UTF-8) and that text's UTF-16 length, as
//! JavaScript counts it. Two requests are compared digest by digest, and
//! what one sends after their first difference is what the cache has not
//! seen.

use xxhash_rust::xxh3::xxh3_64;

use crate::json::utf16_len;

/// One output message: its digest and `JSON.stringify(message).length`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Digest {
    pub hash: u64,
    pub len: u32,
}

impl Digest {
    pub fn of(json: &[u8]) -> Self {
        Digest {
            hash: xxh3_64(json),
            len: utf16_len(json) as u32,
        }
    }
}

/// The first index where two sequences differ (digests of two renders, or
/// the slots of two requests): the shorter one's length when one is a
/// prefix of the other.
pub fn first_difference<T: PartialEq>(before: &[T], after: &[T]) -> usize {
    before.iter().zip(after).take_while(|(a, b)| a == b).count()
}
