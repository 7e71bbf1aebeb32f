//! The oracle's helpers: the parts of src/json/text.rs and value.rs (as at
//! 42cc795) that the two old readers called.

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Bytes that `JSON.stringify` escapes: controls, `"` and `\`.
static NEEDS_ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Appends `JSON.stringify`'s escape of one byte it escapes (a control,
/// `"` or `\`): the short escapes `\" \\ \b \f \n \r \t`, else `\u00xx`.
pub fn escape_byte(out: &mut Vec<u8>, b: u8) {
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[(b >> 4) as usize],
            HEX[(b & 15) as usize],
        ]),
    }
}

/// Appends the canonical text of one UTF-16 code point or lone surrogate.
pub fn escape_unit_or_char(out: &mut Vec<u8>, c: UnitOrChar) {
    match c {
        UnitOrChar::Char(c) => {
            let mut buf = [0u8; 4];
            let s = c.encode_utf8(&mut buf);
            if s.len() == 1 && NEEDS_ESCAPE[s.as_bytes()[0] as usize] {
                escape_byte(out, s.as_bytes()[0]);
            } else {
                out.extend_from_slice(s.as_bytes());
            }
        }
        UnitOrChar::Lone(u) => {
            out.extend_from_slice(b"\\u");
            for shift in [12, 8, 4, 0] {
                out.push(HEX[usize::from((u >> shift) & 15)]);
            }
        }
    }
}

/// A decoded element of a JS string: a character, or a lone surrogate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitOrChar {
    Char(char),
    Lone(u16),
}

fn hex_value(b: u8) -> Option<u16> {
    match b {
        b'0'..=b'9' => Some(u16::from(b - b'0')),
        b'a'..=b'f' => Some(u16::from(b - b'a' + 10)),
        b'A'..=b'F' => Some(u16::from(b - b'A' + 10)),
        _ => None,
    }
}

/// The four hex digits at `at`, when there are four.
pub fn hex4(b: &[u8], at: usize) -> Option<u16> {
    let d = b.get(at..at + 4)?;
    let mut v = 0u16;
    for &c in d {
        v = (v << 4) | hex_value(c)?;
    }
    Some(v)
}

/// Whether a key is an array index (`0` ..= `2^32 - 2` in canonical
/// decimal), which JS objects list first, in numeric order.
pub fn array_index(key: &[u8]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key[0] == b'0') {
        return None;
    }
    let mut v: u64 = 0;
    for &b in key {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(b - b'0');
    }
    (v < u64::from(u32::MAX)).then_some(v as u32)
}
