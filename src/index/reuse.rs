//! Memory kept from one call to the next, per thread.
//!
//! A render allocates the same large blocks every time: the scratch copy of
//! the input, simd-json's working buffers (about three times the text), the
//! tapes, and the output. Allocated and freed on every call, they left the
//! allocator holding a varying amount of freed memory between calls, so the
//! RSS at rest wandered by 10 MiB from one sample to the next
//! (docs/RELIABILITY.md, "Memory kept between calls"). Kept here instead,
//! they are allocated once and refilled.
//!
//! Only blocks up to `KEEP_MAX_BYTES` are kept, so that one huge call does
//! not pin its memory for the life of the process; larger ones get fresh
//! blocks, freed after the call as before. Everything here is per thread:
//! the JS thread keeps the scratch copy, the output vector and the tapes,
//! each rayon worker its own simd-json buffers.

use std::cell::RefCell;

use simd_json::{Buffers, Node, Tape};

/// The largest block (scratch copy, output vector, parse buffers, all tapes
/// of a call) a thread keeps for the next call.
pub const KEEP_MAX_BYTES: usize = 8 << 20;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static BUFFERS: RefCell<Option<Buffers>> = const { RefCell::new(None) };
    static TAPES: RefCell<Vec<Tape<'static>>> = const { RefCell::new(Vec::new()) };
    static WHOLE: RefCell<Tape<'static>> = const { RefCell::new(Tape(Vec::new())) };
}

type Slot = std::thread::LocalKey<RefCell<Vec<u8>>>;

fn take_bytes(slot: &'static Slot, len: usize) -> Vec<u8> {
    if len > KEEP_MAX_BYTES {
        return Vec::with_capacity(len);
    }
    let mut v = slot.with(|s| std::mem::take(&mut *s.borrow_mut()));
    v.clear();
    v.reserve(len);
    v
}

fn give_bytes(slot: &'static Slot, v: Vec<u8>) {
    if v.capacity() <= KEEP_MAX_BYTES {
        slot.with(|s| *s.borrow_mut() = v);
    }
}

/// An empty vector with room for `len` bytes, for the copy simd-json parses:
/// the thread's kept one when `len` is small enough to keep.
pub fn take_scratch(len: usize) -> Vec<u8> {
    take_bytes(&SCRATCH, len)
}

/// Keeps `v` for the next `take_scratch` on this thread, unless it is too
/// large to keep.
pub fn give_scratch(v: Vec<u8>) {
    give_bytes(&SCRATCH, v)
}

/// Like `take_scratch`, for the text a call writes (the output array, the
/// wrapped state): a second vector, as both are live at once.
pub fn take_output(len: usize) -> Vec<u8> {
    take_bytes(&OUTPUT, len)
}

/// Keeps `v` for the next `take_output` on this thread, unless it is too
/// large to keep.
pub fn give_output(v: Vec<u8>) {
    give_bytes(&OUTPUT, v)
}

/// Runs `f` with simd-json's working buffers: the thread's kept ones when a
/// text of `len` bytes is small enough, fresh ones otherwise.
pub fn with_buffers<R>(len: usize, f: impl FnOnce(&mut Buffers) -> R) -> R {
    if len > KEEP_MAX_BYTES {
        return f(&mut Buffers::new(len));
    }
    // Taken out for the call, so that `f` may itself parse (it does not).
    let mut buffers = BUFFERS
        .with(|b| b.borrow_mut().take())
        .unwrap_or_else(|| Buffers::new(len));
    let r = f(&mut buffers);
    BUFFERS.with(|b| *b.borrow_mut() = Some(buffers));
    r
}

/// Parses `s` into `tape` (its earlier contents dropped), with this thread's
/// buffers.
pub fn fill<'s>(s: &'s mut [u8], tape: &mut Tape<'s>) -> simd_json::Result<()> {
    with_buffers(s.len(), |b| simd_json::fill_tape(s, b, tape))
}

/// An empty tape for a whole document: the thread's kept one.
pub fn take_tape<'s>() -> Tape<'s> {
    WHOLE.with(|t| std::mem::replace(&mut *t.borrow_mut(), Tape(Vec::new())))
}

/// Keeps `tape` for the next `take_tape` on this thread, unless it is too
/// large to keep.
pub fn give_tape(tape: Tape<'_>) {
    if tape.0.capacity() * std::mem::size_of::<Node<'_>>() <= KEEP_MAX_BYTES {
        WHOLE.with(|t| *t.borrow_mut() = tape.reset());
    }
}

/// `n` empty tapes (one per message): the ones the thread kept, in the order
/// they were given back (the same message gets the same tape on the next
/// render of the same conversation), then new ones.
pub fn take_tapes<'s>(n: usize) -> Vec<Tape<'s>> {
    let mut kept = TAPES.with(|t| std::mem::take(&mut *t.borrow_mut()));
    kept.truncate(n);
    kept.resize_with(n, || Tape(Vec::new()));
    // A Tape<'static> is a Tape<'s>: no copy.
    kept
}

/// Keeps `tapes` for the next `take_tapes` on this thread, unless together
/// they are too large to keep.
pub fn give_tapes(tapes: Vec<Tape<'_>>) {
    let bytes: usize = tapes
        .iter()
        .map(|t| t.0.capacity() * std::mem::size_of::<Node<'_>>())
        .sum();
    if bytes <= KEEP_MAX_BYTES {
        let empty: Vec<Tape<'static>> = tapes.into_iter().map(Tape::reset).collect();
        TAPES.with(|t| *t.borrow_mut() = empty);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_blocks_are_reused_and_large_ones_are_not_kept() {
        let mut v = take_scratch(100);
        v.extend_from_slice(&[1; 100]);
        let ptr = v.as_ptr();
        give_scratch(v);
        let again = take_scratch(50);
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), ptr);
        give_scratch(again);
        give_scratch(Vec::with_capacity(KEEP_MAX_BYTES + 1));
        assert!(take_scratch(10).capacity() <= KEEP_MAX_BYTES);
        // The output vector is kept apart from the scratch copy.
        let out = take_output(10);
        let out_ptr = out.as_ptr();
        give_output(out);
        give_scratch(Vec::with_capacity(20));
        let again = take_output(5);
        assert_eq!(again.as_ptr(), out_ptr);

        let mut text = br#"{"a":[1,"x\n"]}"#.to_vec();
        let mut tapes = take_tapes(2);
        fill(&mut text, &mut tapes[0]).unwrap();
        assert_eq!(tapes[0].0.len(), 5);
        assert!(tapes[1].0.is_empty());
        let first = tapes[0].0.as_ptr();
        give_tapes(tapes);
        let tapes = take_tapes(1);
        assert_eq!(tapes.len(), 1);
        assert!(tapes[0].0.is_empty());
        assert_eq!(tapes[0].0.as_ptr(), first);
        // Too large together: not kept.
        give_tapes(vec![Tape(Vec::with_capacity(KEEP_MAX_BYTES))]);
        assert_eq!(take_tapes(1)[0].0.capacity(), 0);

        // The whole-document tape is kept apart from the per-message ones.
        let mut tape = take_tape();
        let mut doc = b"[1,2,3]".to_vec();
        fill(&mut doc, &mut tape).unwrap();
        let whole = tape.0.as_ptr();
        give_tape(tape);
        give_tapes(vec![Tape(Vec::with_capacity(4))]);
        let again = take_tape();
        assert_eq!(again.0.as_ptr(), whole);
    }

    #[test]
    fn reused_buffers_parse_like_fresh_ones() {
        for text in [
            &br#"[1,{"k":"v\u00e9"},true]"#[..],
            br#""long string here""#,
            b"[]",
        ] {
            let mut a = text.to_vec();
            let mut b = text.to_vec();
            let mut tape = Tape(Vec::new());
            fill(&mut a, &mut tape).unwrap();
            let fresh = simd_json::to_tape(&mut b).unwrap();
            assert_eq!(tape.0, fresh.0);
        }
        let mut bad = b"[1,".to_vec();
        assert!(fill(&mut bad, &mut Tape(Vec::new())).is_err());
    }
}
