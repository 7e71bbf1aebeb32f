//! UTF-16 lengths: JavaScript measures strings, and so `JSON.stringify(...).length`,
//! in UTF-16 code units, while the engine holds UTF-8.

/// Length in UTF-16 code units of valid UTF-8 text: every byte that is not a
/// continuation byte starts one code point (one unit), and four-byte sequences
/// need a surrogate pair (one more unit).
pub fn utf16_len(bytes: &[u8]) -> usize {
    let mut continuation = 0usize;
    let mut four_byte = 0usize;
    // Chunked so the compiler can vectorize the two counts.
    let mut chunks = bytes.chunks_exact(64);
    for chunk in &mut chunks {
        let mut c = 0u32;
        let mut f = 0u32;
        for &b in chunk {
            c += u32::from((b as i8) < -64);
            f += u32::from(b >= 0xF0);
        }
        continuation += c as usize;
        four_byte += f as usize;
    }
    for &b in chunks.remainder() {
        continuation += usize::from((b as i8) < -64);
        four_byte += usize::from(b >= 0xF0);
    }
    bytes.len() - continuation + four_byte
}

/// The UTF-16 length of UTF-8 text and whether it holds a byte below 0x20
/// (canonical JSON holds none), in one vectorizable pass.
pub fn utf16_len_and_controls(bytes: &[u8]) -> (usize, bool) {
    let mut continuation = 0usize;
    let mut four_byte = 0usize;
    let mut controls = 0usize;
    let mut chunks = bytes.chunks_exact(64);
    for chunk in &mut chunks {
        let mut c = 0u8;
        let mut f = 0u8;
        let mut k = 0u8;
        for &b in chunk {
            c += u8::from((b as i8) < -64);
            f += u8::from(b >= 0xF0);
            k += u8::from(b < 0x20);
        }
        continuation += usize::from(c);
        four_byte += usize::from(f);
        controls += usize::from(k);
    }
    for &b in chunks.remainder() {
        continuation += usize::from((b as i8) < -64);
        four_byte += usize::from(b >= 0xF0);
        controls += usize::from(b < 0x20);
    }
    (bytes.len() - continuation + four_byte, controls > 0)
}

/// UTF-16 code units from JS to the UTF-8 the records read. JSON text from
/// `JSON.stringify` holds no lone surrogate (it escapes them), so nothing is
/// lost; a stray one becomes U+FFFD.
pub fn utf16_to_utf8(units: &[u16]) -> Vec<u8> {
    // At most three bytes per unit (a pair of units is four bytes).
    let mut out = vec![0u8; units.len() * 3];
    let written = encoding_rs::mem::convert_utf16_to_utf8(units, &mut out);
    out.truncate(written);
    out
}

#[cfg(test)]
mod tests {
    use super::{utf16_len, utf16_len_and_controls};

    #[test]
    fn finds_controls_while_counting() {
        let s = "é😀".repeat(40) + "\\n";
        assert_eq!(
            utf16_len_and_controls(s.as_bytes()),
            (utf16_len(s.as_bytes()), false)
        );
        let t = "x".repeat(100) + "\n" + &"y".repeat(50);
        assert_eq!(utf16_len_and_controls(t.as_bytes()), (151, true));
    }

    fn js_len(s: &str) -> usize {
        s.encode_utf16().count()
    }

    #[test]
    fn counts_units_not_bytes_or_chars() {
        for s in [
            "",
            "ascii only",
            "é",
            "日本語",
            "😀",
            "a😀b\u{2028}c",
            "\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}",
        ] {
            assert_eq!(utf16_len(s.as_bytes()), js_len(s), "{s:?}");
        }
        let long = "xé日😀".repeat(100);
        assert_eq!(utf16_len(long.as_bytes()), 500);
    }

    #[test]
    fn counts_json_text_as_js_length() {
        // JSON texts with escapes count their escape characters; raw
        // astral characters count 2.
        for (json, js_len) in [
            (r#"["\ud800"]"#, 10),
            (r#"{"p":"é😀"}"#, 11),
            (r#"{"s":"a\nb"}"#, 12),
            ("\"\u{2028}\"", 3),
        ] {
            assert_eq!(utf16_len(json.as_bytes()), js_len, "{json}");
        }
        // Lengths that straddle the 64-byte chunks.
        for n in [63, 64, 65, 127, 128, 129] {
            let s = "😀".repeat(n / 4) + &"é".repeat(n % 4);
            assert_eq!(utf16_len(s.as_bytes()), js_len(&s), "{n}");
        }
    }
}
