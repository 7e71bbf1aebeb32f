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

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `s` as a JSON string literal exactly as `JSON.stringify` writes it:
/// short escapes where JS has them, `\u00xx` (lowercase) for other controls,
/// everything else literal (no `\/`, non-ASCII and U+2028 unescaped).
pub fn write_json_string(out: &mut Vec<u8>, s: &str) {
    if super::lone::lone_mode() && super::lone::holds_stand_ins(s.as_bytes()) {
        return write_with_lone_surrogates(out, s);
    }
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if !NEEDS_ESCAPE[b as usize] {
            continue;
        }
        out.extend_from_slice(&bytes[run_start..i]);
        run_start = i + 1;
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
    out.extend_from_slice(&bytes[run_start..]);
    out.push(b'"');
}

/// Slow path for text holding lone-surrogate stand-ins: those become the
/// `\udxxx` escapes JSON.stringify writes for lone surrogates.
fn write_with_lone_surrogates(out: &mut Vec<u8>, s: &str) {
    let mut buf = [0u8; 4];
    let mut piece = Vec::new();
    out.push(b'"');
    for c in s.chars() {
        match super::lone::unit_of(c) {
            Some(unit) => out.extend_from_slice(format!("\\u{unit:04x}").as_bytes()),
            None => {
                piece.clear();
                write_json_string(&mut piece, c.encode_utf8(&mut buf));
                out.extend_from_slice(&piece[1..piece.len() - 1]);
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::write_json_string;

    fn enc(s: &str) -> String {
        let mut out = Vec::new();
        write_json_string(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_like_json_stringify() {
        assert_eq!(enc("plain"), r#""plain""#);
        assert_eq!(enc("q\"b\\s/"), r#""q\"b\\s/""#);
        assert_eq!(enc("\u{8}\u{c}\n\r\t"), r#""\b\f\n\r\t""#);
        assert_eq!(enc("\u{0}\u{1f}\u{b}"), r#""\u0000\u001f\u000b""#);
        assert_eq!(
            enc("\u{7f}é😀\u{2028}\u{2029}"),
            "\"\u{7f}é😀\u{2028}\u{2029}\""
        );
    }

    #[test]
    fn stand_ins_become_lone_surrogate_escapes_in_lone_mode() {
        use crate::jsjson::lone::{stand_in, with_lone_mode};
        let s = format!("a{}\n{}", stand_in(0xd834), stand_in(0xdfff));
        assert_eq!(with_lone_mode(true, || enc(&s)), r#""a\ud834\n\udfff""#);
        assert_eq!(
            enc(&s),
            format!("\"a{}\\n{}\"", stand_in(0xd834), stand_in(0xdfff))
        );
    }

    #[test]
    fn every_control_character_is_escaped_like_node() {
        let all: String = (0u8..0x20).map(char::from).collect();
        // node: JSON.stringify(String.fromCharCode(0, 1, ..., 31)), 174 units.
        let js = concat!(
            r#""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r"#,
            r#"\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019"#,
            r#"\u001a\u001b\u001c\u001d\u001e\u001f""#
        );
        assert_eq!(enc(&all), js);
        assert_eq!(js.len(), 174);
    }

    #[test]
    fn non_ascii_stays_literal_and_counts_in_utf16_units() {
        use crate::jsjson::utf16_len;
        // (text, JSON.stringify(text).length in node)
        for (s, js_len) in [
            ("\u{7f}", 3),
            ("\u{2028}\u{2029}", 4),
            ("😀", 4),
            ("a😀é日\u{301}", 8),
            ("👩\u{200d}💻", 7),
            ("\u{10ffff}", 4),
        ] {
            let out = enc(s);
            assert_eq!(out, format!("\"{s}\""));
            assert_eq!(utf16_len(out.as_bytes()), js_len, "{s:?}");
        }
    }
}
