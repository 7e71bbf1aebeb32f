//! The oracle: src/sessionfile/json/wtf8.rs as at 42cc795 (decoding and
//! writing; the UTF-16 helpers left out). JavaScript strings as bytes. A JS string may hold lone surrogates (a
//! session line may spell them as `\udxxx` escapes), which UTF-8 cannot.
//! Strings are therefore kept as WTF-8: UTF-8 in which a lone surrogate is
//! the three-byte sequence of its code unit (`ED A0..BF xx`), which valid
//! UTF-8 never contains. Equal JS strings have equal WTF-8 bytes, so ids
//! compare and hash as bytes, and a writer turns the surrogate sequences
//! back into the escapes `JSON.stringify` writes.

use std::borrow::Cow;

use super::text::{escape_byte, escape_unit_or_char, UnitOrChar};

/// The string value of a JSON string body (the bytes between the quotes,
/// already validated by the parser). Borrowed when it holds no escape.
pub fn decode(raw: &[u8], escaped: bool) -> Cow<'_, [u8]> {
    if !escaped {
        return Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let Some(off) = memchr::memchr(b'\\', &raw[i..]) else {
            out.extend_from_slice(&raw[i..]);
            break;
        };
        out.extend_from_slice(&raw[i..i + off]);
        i += off + 1;
        let c = raw[i];
        i += 1;
        match c {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'u' => {
                let unit = hex4(&raw[i..i + 4]);
                i += 4;
                let pair_low = (0xD800..0xDC00).contains(&unit)
                    && raw.get(i) == Some(&b'\\')
                    && raw.get(i + 1) == Some(&b'u')
                    && raw.len() >= i + 6
                    && (0xDC00..0xE000).contains(&hex4(&raw[i + 2..i + 6]));
                if pair_low {
                    let low = hex4(&raw[i + 2..i + 6]);
                    i += 6;
                    let cp = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    push_code_point(&mut out, cp);
                } else {
                    push_code_point(&mut out, unit);
                }
            }
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

/// The value of four hex digits (the parser checked they are hex).
pub fn hex4(digits: &[u8]) -> u32 {
    digits.iter().fold(0, |acc, &d| {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => d - b'A' + 10,
        };
        acc * 16 + u32::from(v)
    })
}

/// Appends a code point (a lone surrogate included) in WTF-8.
pub fn push_code_point(out: &mut Vec<u8>, cp: u32) {
    match cp {
        0..=0x7F => out.push(cp as u8),
        0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]),
        0x800..=0xFFFF => out.extend_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xF0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]),
    }
}

fn needs_care(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\' || b == 0xED
}

/// Appends `s` (WTF-8) as `JSON.stringify` writes a string: `"` and `\`
/// escaped, the short escapes for `\b \f \n \r \t`, other controls as
/// `\u00xx`, lone surrogates as `\udxxx`, everything else literal. The
/// escapes themselves are the addon's JSON writer's (`json::text`).
pub fn write_json(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if !needs_care(b) {
            i += 1;
            continue;
        }
        if b == 0xED {
            // U+D000..U+D7FF are ordinary characters; A0..BF after ED is a
            // surrogate.
            if s.get(i + 1).is_some_and(|&c| c >= 0xA0) && i + 2 < s.len() {
                out.extend_from_slice(&s[run..i]);
                let unit = 0xD000 | (u16::from(s[i + 1] & 0x3F) << 6) | u16::from(s[i + 2] & 0x3F);
                escape_unit_or_char(out, UnitOrChar::Lone(unit));
                i += 3;
                run = i;
            } else {
                i += 1;
            }
            continue;
        }
        out.extend_from_slice(&s[run..i]);
        escape_byte(out, b);
        i += 1;
        run = i;
    }
    out.extend_from_slice(&s[run..]);
    out.push(b'"');
}
