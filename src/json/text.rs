//! JS strings as their canonical JSON text. Every string the engine handles
//! (ids, tool names, stub texts, summaries) is kept as the bytes
//! `JSON.stringify` writes between the quotes: UTF-8, with `"` `\` and the
//! controls escaped the way JS escapes them and lone surrogates as `\udxxx`.
//! That spelling is unique per JS string, so two strings are equal exactly
//! when their texts are equal; the text of a concatenation is the
//! concatenation of the texts; and a JSON output is assembled by copying
//! texts, never decoding them. Lone surrogates, which no Rust `str` can hold,
//! need no special mode. A string the reader (`read.rs`) found spelled
//! otherwise becomes canonical text here ([`of_body`]), and nowhere else.

use super::lex::{self, UnitOrChar};

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
        _ => escape_u(out, u16::from(b)),
    }
}

/// Appends `\uXXXX` (lowercase hex) for a code unit.
fn escape_u(out: &mut Vec<u8>, u: u16) {
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[usize::from((u >> shift) & 15)]);
    }
}

/// Appends the canonical text of a Rust string (which holds no lone
/// surrogates).
pub fn escape_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if NEEDS_ESCAPE[b as usize] {
            out.extend_from_slice(&bytes[run..i]);
            escape_byte(out, b);
            run = i + 1;
        }
    }
    out.extend_from_slice(&bytes[run..]);
}

const LANES16: u64 = 0x0001_0001_0001_0001;

/// Whether none of four UTF-16 units needs more than a copy: all are
/// printable ASCII other than `"` and `\\`. (Bit tricks on one u64: a lane
/// below 0x20, a lane above 0x7F, a lane equal to a given unit.)
fn plain4(x: u64) -> bool {
    let wide = x & (LANES16 * 0xFF80);
    let control = x.wrapping_sub(LANES16 * 0x20) & !x & (LANES16 * 0x8000);
    let q = x ^ (LANES16 * u64::from(b'"'));
    let quote = q.wrapping_sub(LANES16) & !q & (LANES16 * 0x8000);
    let b = x ^ (LANES16 * u64::from(b'\\'));
    let backslash = b.wrapping_sub(LANES16) & !b & (LANES16 * 0x8000);
    wide | control | quote | backslash == 0
}

/// A Latin-1 unit a string cannot copy as it is: not printable ASCII, or
/// `"` or `\\`.
fn latin1_special(b: u8) -> bool {
    b >= 0x80 || NEEDS_ESCAPE[b as usize]
}

/// Bit i set when byte i of the block is [`latin1_special`].
#[cfg(target_arch = "x86_64")]
fn latin1_specials(block: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86-64; the load reads the 16 bytes of `block`.
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
        // Signed: bytes from 0x80 on compare below 0x20 too.
        let low_or_high = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(low_or_high, _mm_or_si128(quote, backslash))) as u32
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn latin1_specials(block: &[u8; 16]) -> u32 {
    let mut mask = 0;
    for (i, &b) in block.iter().enumerate() {
        if latin1_special(b) {
            mask |= 1 << i;
        }
    }
    mask
}

/// Appends the canonical text of a JS string held as Latin-1 (one byte per
/// code unit, as V8 keeps strings with no unit above 0xFF): bytes from 0x80
/// on become two UTF-8 bytes.
pub fn escape_latin1(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len());
    let mut run = 0;
    let special = |out: &mut Vec<u8>, run: &mut usize, i: usize| {
        let b = bytes[i];
        out.extend_from_slice(&bytes[*run..i]);
        if b >= 0x80 {
            out.extend_from_slice(&[0xC0 | (b >> 6), 0x80 | (b & 0x3F)]);
        } else {
            escape_byte(out, b);
        }
        *run = i + 1;
    };
    let blocks = bytes.chunks_exact(16);
    let tail = blocks.len() * 16;
    for (k, block) in blocks.enumerate() {
        let mut mask = latin1_specials(block.try_into().unwrap_or(&[0; 16]));
        while mask != 0 {
            special(out, &mut run, 16 * k + mask.trailing_zeros() as usize);
            mask &= mask - 1;
        }
    }
    for (i, &b) in bytes.iter().enumerate().skip(tail) {
        if latin1_special(b) {
            special(out, &mut run, i);
        }
    }
    out.extend_from_slice(&bytes[run..]);
}

/// Appends the canonical text of a JS string held as UTF-16 little-endian
/// bytes (an even number of them).
pub fn escape_utf16le(out: &mut Vec<u8>, bytes: &[u8]) {
    let unit = |i: usize| u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]);
    let n = bytes.len() / 2;
    out.reserve(n);
    let mut i = 0;
    while i < n {
        if let Some(chunk) = bytes.get(2 * i..2 * i + 8) {
            if plain4(u64::from_le_bytes(chunk.try_into().unwrap_or_default())) {
                out.extend_from_slice(&[chunk[0], chunk[2], chunk[4], chunk[6]]);
                i += 4;
                continue;
            }
        }
        // One character (a surrogate pair takes the next unit) or a lone
        // surrogate, as std decodes UTF-16.
        let pair = (i + 1 < n).then(|| unit(i + 1));
        let Some(c) = char::decode_utf16(std::iter::once(unit(i)).chain(pair)).next() else {
            break;
        };
        let c = UnitOrChar::decoded(c);
        escape_unit_or_char(out, c);
        i += match c {
            UnitOrChar::Char(c) => c.len_utf16(),
            UnitOrChar::Lone(_) => 1,
        };
    }
}

/// The canonical text of a Rust string.
pub fn text_of(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    escape_str(&mut out, s);
    out
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
        UnitOrChar::Lone(u) => escape_u(out, u),
    }
}

/// Appends the canonical text of a sequence of UTF-16 code units.
pub fn escape_units(out: &mut Vec<u8>, units: &[u16]) {
    for c in char::decode_utf16(units.iter().copied()) {
        escape_unit_or_char(out, UnitOrChar::decoded(c));
    }
}

/// The canonical text of a string body the reader accepted (escapes of
/// every kind decoded, then written as `JSON.stringify` writes them).
pub fn of_body(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut at = 0;
    while let Some(off) = memchr::memchr(b'\\', &body[at..]) {
        out.extend_from_slice(&body[at..at + off]);
        at += off;
        match lex::escape(body, at) {
            Ok(e) => {
                escape_unit_or_char(&mut out, e.what);
                at += e.len;
            }
            Err(_) => {
                // Not from the reader; kept as it stands.
                out.push(b'\\');
                at += 1;
            }
        }
    }
    out.extend_from_slice(&body[at..]);
    out
}

/// Whether `text` is the canonical text of `s`.
pub fn is_text_of(text: &[u8], s: &str) -> bool {
    if s.bytes().any(|b| NEEDS_ESCAPE[b as usize]) {
        text == text_of(s).as_slice()
    } else {
        text == s.as_bytes()
    }
}

/// Iterates the UTF-16 code units of a canonical text (or of any valid
/// JSON string body: escapes of every kind are decoded).
pub fn units(text: &[u8]) -> Units<'_> {
    Units {
        text,
        at: 0,
        pending: None,
    }
}

pub struct Units<'a> {
    text: &'a [u8],
    at: usize,
    pending: Option<u16>,
}

impl Iterator for Units<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        if let Some(low) = self.pending.take() {
            return Some(low);
        }
        let t = self.text;
        let b = *t.get(self.at)?;
        let c = if b == b'\\' {
            let Ok(e) = lex::escape(t, self.at) else {
                self.at += 1;
                return Some(u16::from(b'\\'));
            };
            self.at += e.len;
            match e.what {
                UnitOrChar::Lone(unit) => return Some(unit),
                UnitOrChar::Char(c) => c,
            }
        } else {
            // One UTF-8 sequence (the text is valid UTF-8).
            let len = match b {
                0x00..=0x7f => 1,
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                _ => 4,
            };
            let s = std::str::from_utf8(&t[self.at..(self.at + len).min(t.len())])
                .unwrap_or("\u{fffd}");
            self.at += len;
            s.chars().next().unwrap_or('\u{fffd}')
        };
        let mut buf = [0u16; 2];
        let enc = c.encode_utf16(&mut buf);
        if enc.len() == 2 {
            self.pending = Some(enc[1]);
        }
        Some(enc[0])
    }
}

/// The UTF-16 code units of a canonical text.
pub fn to_units(text: &[u8]) -> Vec<u16> {
    units(text).collect()
}

/// The string as Rust text, lone surrogates replaced by U+FFFD (for
/// messages and for hashing as UTF-8, which is what JS's UTF-8 encoders do).
/// UTF-8 bytes as a `String` (invalid sequences as U+FFFD), for text that
/// goes to JS.
pub fn utf8_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

pub fn to_string_lossy(text: &[u8]) -> String {
    char::decode_utf16(units(text))
        .map(|c| c.unwrap_or('\u{fffd}'))
        .collect()
}

/// `JSON.stringify(s).length` for a string whose canonical text is `text`.
#[cfg(test)]
fn json_len(text: &[u8]) -> usize {
    super::utf16::utf16_len(text) + 2
}

/// Appends a quoted JSON string.
pub fn write_quoted(out: &mut Vec<u8>, text: &[u8]) {
    out.push(b'"');
    out.extend_from_slice(text);
    out.push(b'"');
}

/// Appends `s` as a JSON string.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    write_quoted(out, &text_of(s));
}

/// Appends `"name":` to an object being written by hand, after a comma
/// unless it is the object's first member.
pub fn write_key(out: &mut Vec<u8>, name: &str) {
    if !matches!(out.last(), Some(b'{' | b'[') | None) {
        out.push(b',');
    }
    write_str(out, name);
    out.push(b':');
}

/// The index just past the canonical escape sequence or character that
/// starts at `at` (escapes are `\x` or `\uXXXX`).
pub fn next_char_end(text: &[u8], at: usize) -> usize {
    match text[at] {
        b'\\' if text.get(at + 1) == Some(&b'u') => at + 6,
        b'\\' => at + 2,
        b if b < 0x80 => at + 1,
        b if b < 0xe0 => at + 2,
        b if b < 0xf0 => at + 3,
        _ => at + 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js_text(s: &str) -> String {
        String::from_utf8(text_of(s)).unwrap()
    }

    #[test]
    fn escapes_as_json_stringify_does() {
        assert_eq!(js_text("plain"), "plain");
        assert_eq!(js_text("q\"b\\s/"), r#"q\"b\\s/"#);
        assert_eq!(js_text("\u{8}\u{c}\n\r\t"), r#"\b\f\n\r\t"#);
        assert_eq!(js_text("\u{0}\u{1f}\u{b}"), r#"\u0000\u001f\u000b"#);
        assert_eq!(js_text("\u{7f}é😀\u{2028}"), "\u{7f}é😀\u{2028}");
    }

    #[test]
    fn units_round_trip_lone_surrogates() {
        let units_in = [0x61, 0xd800, 0x0a, 0xd83d, 0xde00, 0xdfff, 0x22];
        let mut text = Vec::new();
        escape_units(&mut text, &units_in);
        assert_eq!(
            String::from_utf8(text.clone()).unwrap(),
            "a\\ud800\\n😀\\udfff\\\""
        );
        assert_eq!(to_units(&text), units_in);
        // JSON.stringify("a\ud800\n😀\udfff\"").length
        assert_eq!(json_len(&text), 21);
        assert_eq!(to_string_lossy(&text), "a\u{fffd}\n😀\u{fffd}\"");
    }

    #[test]
    fn reads_escapes_like_json_parse() {
        assert_eq!(of_body(br"a\n\t\u00e9\/"), r"a\n\té/".as_bytes());
        // A pair of escapes is one astral character; a lone one stays a unit.
        assert_eq!(of_body(br"\ud83d\ude00"), "😀".as_bytes());
        assert_eq!(of_body(br"\ud83dx"), br"\ud83dx");
        assert_eq!(of_body(br"\udc00\ud800"), br"\udc00\ud800");
        assert_eq!(of_body(b"plain"), b"plain");
    }

    #[test]
    fn writes_like_json_stringify() {
        // node: JSON.stringify("\ud83d" + "x\u0001\"\\\u2028é😀")
        let units: Vec<u16> = "\u{fffd}x\u{1}\"\\\u{2028}é😀"
            .encode_utf16()
            .enumerate()
            .map(|(i, u)| if i == 0 { 0xd83d } else { u })
            .collect();
        let mut text = Vec::new();
        escape_units(&mut text, &units);
        let mut out = Vec::new();
        write_quoted(&mut out, &text);
        assert_eq!(out, "\"\\ud83dx\\u0001\\\"\\\\\u{2028}é😀\"".as_bytes());
        // U+D55C (Hangul) starts with ED in UTF-8 and stays literal.
        assert_eq!(text_of("한"), "한".as_bytes());
        assert_eq!(text_of("\u{8}\u{c}\n\r\t"), br"\b\f\n\r\t");
    }

    #[test]
    fn utf16_units_of_canonical_text() {
        assert_eq!(to_units("a😀".as_bytes()), vec![0x61, 0xD83D, 0xDE00]);
        assert_eq!(to_units(br"\ud83d"), vec![0xD83D]);
        assert_eq!(to_units(br"\u0000"), vec![0]);
    }

    #[test]
    fn decodes_every_escape_kind() {
        let t = br#"\/\u00e9\uD83D\uDE00\b"#;
        assert_eq!(to_units(t), vec![0x2f, 0xe9, 0xd83d, 0xde00, 0x08],);
        assert_eq!(of_body(t), "/é😀\\b".as_bytes());
        assert_eq!(of_body(br"\u0041\uDC00\ud800\u000A"), br"A\udc00\ud800\n");
        assert!(is_text_of(br#"a\"b"#, "a\"b"));
        assert!(!is_text_of(br#"a"b"#, "a\"b"));
    }
}
