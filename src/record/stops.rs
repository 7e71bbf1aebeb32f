//! Where the next `"` or `\` is inside a JSON string, 64 bytes at a time.
//! Tool output is dense with escapes (a backslash every 36 bytes in the
//! corpus), so searching afresh after each one spends most of a string
//! scan in setting up the search. A `Stops` keeps the bit mask of the 64
//! bytes it last looked at and moves through it bit by bit, and it outlives
//! a string: the next string of the message often starts in the same block.

/// The mask of a block's bytes that are `"` or `\`: bit i for byte i.
#[cfg(target_arch = "x86_64")]
fn block_mask(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let mut mask = 0u64;
    // SAFETY: SSE2 is part of every x86-64 CPU; the loads read 16 bytes at
    // offsets 0, 16, 32, 48 of a 64-byte array.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        for k in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
            let hits = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
            mask |= u64::from(_mm_movemask_epi8(hits) as u16) << (16 * k);
        }
    }
    mask
}

/// The same without SIMD intrinsics (the compiler vectorizes what it can).
#[cfg(not(target_arch = "x86_64"))]
fn block_mask(block: &[u8; 64]) -> u64 {
    tail_mask(block)
}

fn tail_mask(bytes: &[u8]) -> u64 {
    bytes.iter().enumerate().fold(0u64, |m, (i, &c)| {
        m | (u64::from(c == b'"' || c == b'\\') << i)
    })
}

/// A cursor over the stops of one text.
#[derive(Default)]
pub struct Stops {
    /// Where the block of `mask` starts.
    base: usize,
    mask: u64,
    /// The block's length (64 except at the end of the text).
    len: usize,
}

impl Stops {
    /// The first `"` or `\` at or after `at`; None when there is none.
    #[inline]
    pub fn next(&mut self, text: &[u8], mut at: usize) -> Option<usize> {
        loop {
            if at < self.base || at >= self.base + self.len {
                if at >= text.len() {
                    return None;
                }
                self.base = at;
                self.len = (text.len() - at).min(64);
                self.mask = match text[at..].first_chunk::<64>() {
                    Some(block) => block_mask(block),
                    None => tail_mask(&text[at..]),
                };
            }
            let shift = at - self.base;
            let ahead = self.mask >> shift;
            if ahead != 0 {
                return Some(at + ahead.trailing_zeros() as usize);
            }
            at = self.base + self.len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_stop_in_order() {
        let mut text = Vec::new();
        for i in 0..500u32 {
            text.extend(std::iter::repeat_n(b'a', (i * 7 % 130) as usize));
            text.push(if i % 3 == 0 { b'\\' } else { b'"' });
        }
        let want: Vec<usize> = text
            .iter()
            .enumerate()
            .filter(|(_, &c)| c == b'"' || c == b'\\')
            .map(|(i, _)| i)
            .collect();
        let mut got = Vec::new();
        let mut stops = Stops::default();
        let mut at = 0;
        while let Some(i) = stops.next(&text, at) {
            got.push(i);
            at = i + 1;
        }
        assert_eq!(got, want);
        // Jumping back and far ahead works too.
        let mut stops = Stops::default();
        assert_eq!(stops.next(&text, want[40] + 1), Some(want[41]));
        assert_eq!(stops.next(&text, 0), Some(want[0]));
        assert_eq!(stops.next(&text, text.len()), None);
    }
}
