//! Lone surrogates. JS strings may hold them and JSON.stringify writes them as
//! `\udxxx`, but Rust strings cannot, and simd-json would decode them to
//! U+0000. Before parsing, each lone surrogate escape is replaced by a
//! stand-in from plane 16, U+10D800..U+10DFFF (the
//! surrogate's own digits after U+10); while a
//! call runs in "lone mode" the serializer writes those stand-ins back as
//! escapes and the glob matcher reads them as one UTF-16 unit. A text that
//! holds real characters from that range is never mixed with lone mode: that
//! combination is refused with a typed error instead of changing text.

use std::cell::Cell;

const BASE: u32 = 0x10D800;

/// High surrogates of the stand-in range, when it is spelled as an escaped pair.
pub const STAND_IN_HIGH: [u32; 2] = [0xDBF6, 0xDBF7];

thread_local!(static LONE_MODE: Cell<bool> = const { Cell::new(false) });
thread_local!(static INFINITY_MODE: Cell<bool> = const { Cell::new(false) });

/// Numbers that overflow to ±Infinity in JS cannot go through simd-json, so
/// the scratch copy spells them as this subnormal (negated for -Infinity);
/// in "infinity mode" readers take it back as ±Infinity. A text that holds
/// the sentinel itself is never mixed with that mode.
pub const INFINITY_SENTINEL: f64 = 1.234_567_890_123_4e-310;
pub const INFINITY_SENTINEL_TEXT: &[u8] = b"1.2345678901234e-310";

/// Runs `f` with a thread's mode flag set to `on`, restoring the previous
/// value after, also when `f` unwinds.
fn with_mode<R>(
    mode: &'static std::thread::LocalKey<Cell<bool>>,
    on: bool,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore(&'static std::thread::LocalKey<Cell<bool>>, bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            self.0.with(|m| m.set(self.1));
        }
    }
    let _restore = Restore(mode, mode.with(|m| m.replace(on)));
    f()
}

/// Runs `f` with infinity mode on or off.
pub fn with_infinity_mode<R>(on: bool, f: impl FnOnce() -> R) -> R {
    with_mode(&INFINITY_MODE, on, f)
}

/// A number read from the tape, with the sentinel read as ±Infinity in
/// infinity mode.
pub fn tape_number(n: f64) -> f64 {
    if n.abs() == INFINITY_SENTINEL && INFINITY_MODE.with(Cell::get) {
        f64::INFINITY.copysign(n)
    } else {
        n
    }
}

/// Runs `f` with lone mode on or off.
pub fn with_lone_mode<R>(on: bool, f: impl FnOnce() -> R) -> R {
    with_mode(&LONE_MODE, on, f)
}

pub fn lone_mode() -> bool {
    LONE_MODE.with(Cell::get)
}

/// The stand-in character for a lone surrogate code unit.
pub fn stand_in(unit: u32) -> char {
    char::from_u32(BASE + (unit - 0xD800)).unwrap_or('\u{fffd}')
}

/// The surrogate unit a stand-in stands for.
pub fn unit_of(c: char) -> Option<u16> {
    let v = c as u32;
    (BASE..BASE + 0x800)
        .contains(&v)
        .then(|| (0xD800 + (v - BASE)) as u16)
}

/// Whether UTF-8 text holds a character from the stand-in range.
pub fn holds_stand_ins(bytes: &[u8]) -> bool {
    memchr::memmem::find_iter(bytes, b"\xF4\x8D")
        .any(|at| bytes.get(at + 2).is_some_and(|b| (0xA0..=0xBF).contains(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_surrogate() {
        for unit in 0xD800..0xE000u32 {
            assert_eq!(unit_of(stand_in(unit)), Some(unit as u16));
        }
        assert_eq!(unit_of('a'), None);
        assert_eq!(stand_in(0xd834), '\u{10d834}');
        assert_eq!(unit_of('\u{10ffff}'), None);
        assert!(holds_stand_ins("x\u{10D800}".as_bytes()));
        assert!(holds_stand_ins("x\u{10DFFF}".as_bytes()));
        assert!(!holds_stand_ins(
            "x\u{10D7FF}\u{10E000}\u{10FFFF}".as_bytes()
        ));
    }

    #[test]
    fn mode_is_scoped() {
        assert!(!lone_mode());
        with_lone_mode(true, || assert!(lone_mode()));
        assert!(!lone_mode());
    }
}
