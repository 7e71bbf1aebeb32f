//! JSON's lexical rules as `JSON.parse` applies them, written once, and for
//! each the verdict "is this already what `JSON.stringify` writes?": white
//! space, a string's runs (no raw control), its escapes (hex digits,
//! surrogate pairs), the number token and its JS spelling, an object's keys
//! (unique, array indices first and ascending), and the nesting limit. The
//! tree reader (`read.rs`) and the render path's fast scan
//! (`record/scan.rs`) both call these; neither spells a rule of its own.

/// How deep arrays and objects may nest. The base, for every reader: the
/// value read (a message, a state, a config) is level 1 when it is an array
/// or an object, and each container inside it one level more. A session
/// line is an entry holding its message one level down, so the loader
/// measures a message entry's `message` from the message
/// (`sessionfile/lines.rs`), as the render path does.
pub const MAX_DEPTH: usize = 1000;

/// JSON white space: space, tab, LF, CR (no BOM, no other Unicode space).
#[inline]
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The first index at or after `at` that is not white space.
#[inline]
pub fn skip_ws(b: &[u8], mut at: usize) -> usize {
    while b.get(at).is_some_and(|&c| is_ws(c)) {
        at += 1;
    }
    at
}

/// A byte a string may not hold raw (a control below U+0020).
#[inline]
pub fn is_control(b: u8) -> bool {
    b < 0x20
}

/// The index of the first raw control in `bytes`, if any (vectorized test
/// first: most runs hold none).
#[inline]
pub fn first_control(bytes: &[u8]) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(32);
    let mut any = false;
    for chunk in &mut chunks {
        if chunk
            .iter()
            .fold(0u8, |acc, &b| acc | u8::from(is_control(b)))
            != 0
        {
            any = true;
            break;
        }
    }
    if !any && !chunks.remainder().iter().any(|&b| is_control(b)) {
        return None;
    }
    bytes.iter().position(|&b| is_control(b))
}

/// The value of the four hex digits at `at`, when there are four.
#[inline]
pub fn hex4(b: &[u8], at: usize) -> Option<u16> {
    let d = b.get(at..at + 4)?;
    let mut v = 0u16;
    for &c in d {
        let x = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u16::from(x);
    }
    Some(v)
}

/// A decoded element of a JS string: a character, or a lone surrogate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitOrChar {
    Char(char),
    Lone(u16),
}

impl UnitOrChar {
    /// What `char::decode_utf16` yields, as a character or a lone surrogate.
    pub fn decoded(r: Result<char, std::char::DecodeUtf16Error>) -> Self {
        r.map_or_else(
            |e| UnitOrChar::Lone(e.unpaired_surrogate()),
            UnitOrChar::Char,
        )
    }
}

/// One escape sequence of a string, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Escape {
    /// Its length in bytes (12 for a pair of `\u` escapes).
    pub len: usize,
    /// What it stands for: a character, or a lone surrogate.
    pub what: UnitOrChar,
    /// Whether `JSON.stringify` writes exactly this: `\"`, `\\`, the short
    /// forms `\b \f \n \r \t`, `\u00xx` for the other controls and `\udxxx`
    /// for a lone surrogate, in lowercase hex.
    pub canonical: bool,
}

/// Why an escape is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadEscape {
    /// The text ends right after the backslash.
    End,
    /// Not one of JSON's escapes, or `\u` without four hex digits.
    Invalid,
}

/// The escape whose backslash is at `at`. A high surrogate escape followed
/// by a low one is one character (JS pairs them); any other surrogate is
/// lone.
#[inline]
pub fn escape(b: &[u8], at: usize) -> Result<Escape, BadEscape> {
    let c = *b.get(at + 1).ok_or(BadEscape::End)?;
    match short_escape(c) {
        Some((ch, canonical)) => Ok(Escape {
            len: 2,
            what: UnitOrChar::Char(ch),
            canonical,
        }),
        None if c == b'u' => unicode_escape(b, at),
        None => Err(BadEscape::Invalid),
    }
}

/// The two-character escape `\c`: its character, and whether
/// `JSON.stringify` writes it (all but `\/`).
#[inline]
pub fn short_escape(c: u8) -> Option<(char, bool)> {
    Some(match c {
        b'"' => ('"', true),
        b'\\' => ('\\', true),
        b'/' => ('/', false),
        b'b' => ('\u{8}', true),
        b'f' => ('\u{c}', true),
        b'n' => ('\n', true),
        b'r' => ('\r', true),
        b't' => ('\t', true),
        _ => return None,
    })
}

/// [`escape`] for `\uXXXX` (and a pair of them).
#[inline(never)]
fn unicode_escape(b: &[u8], at: usize) -> Result<Escape, BadEscape> {
    let unit = hex4(b, at + 2).ok_or(BadEscape::Invalid)?;
    let lower = !b[at + 2..at + 6].iter().any(u8::is_ascii_uppercase);
    if (0xd800..0xdc00).contains(&unit)
        && b.get(at + 6) == Some(&b'\\')
        && b.get(at + 7) == Some(&b'u')
    {
        if let Some(low) = hex4(b, at + 8).filter(|l| (0xdc00..0xe000).contains(l)) {
            let cp = 0x10000 + ((u32::from(unit) - 0xd800) << 10) + (u32::from(low) - 0xdc00);
            return Ok(Escape {
                len: 12,
                what: UnitOrChar::Char(char::from_u32(cp).unwrap_or('\u{fffd}')),
                canonical: false,
            });
        }
    }
    let (what, canonical) = match char::from_u32(u32::from(unit)) {
        Some(ch) => {
            let control_without_short_form =
                unit < 0x20 && !matches!(unit, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d);
            (UnitOrChar::Char(ch), lower && control_without_short_form)
        }
        None => (UnitOrChar::Lone(unit), lower),
    };
    Ok(Escape {
        len: 6,
        what,
        canonical,
    })
}

/// Where the number token starting at `at` ends, by JSON's grammar
/// (`-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`); Err: the index
/// of the byte that breaks it.
#[inline]
pub fn number_end(b: &[u8], at: usize) -> Result<usize, usize> {
    let digits = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = at;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i),
        _ => return Err(i),
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return Err(i);
        }
        i = digits(i);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return Err(i);
        }
        i = digits(i);
    }
    Ok(i)
}

/// An integer token of at most 15 digits spelled as JS spells it (no
/// leading zero, no `-0`): its value, exact without a float parser. Most
/// numbers of a conversation (timestamps, counts) are such.
#[inline]
fn small_integer(token: &[u8]) -> Option<f64> {
    let (negative, digits) = match token.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, token),
    };
    let (&first, _) = digits.split_first()?;
    if digits.len() > 15 || (first == b'0' && (digits.len() > 1 || negative)) {
        return None;
    }
    let mut n = 0u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(d - b'0');
    }
    let v = n as f64;
    Some(if negative { -v } else { v })
}

/// The value `JSON.parse` gives a number token: the correctly rounded
/// double, ±Infinity past the range.
#[inline]
pub fn number_value(token: &[u8]) -> f64 {
    if let Some(v) = small_integer(token) {
        return v;
    }
    std::str::from_utf8(token)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
}

/// The value of a number token (JSON's grammar) when it is spelled as
/// `JSON.stringify` writes that value (so not `1.0`, `-0`, `1E21` or
/// `1e400`); None otherwise.
#[inline]
pub fn canonical_number(token: &[u8]) -> Option<f64> {
    if let Some(v) = small_integer(token) {
        return Some(v);
    }
    let v = number_value(token);
    (v.is_finite() && ryu_js::Buffer::new().format_finite(v).as_bytes() == token).then_some(v)
}

/// Whether a number token is spelled as `JSON.stringify` writes it.
#[inline]
pub fn number_is_canonical(token: &[u8]) -> bool {
    canonical_number(token).is_some()
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

/// The key rule, applied key by key as an object is read: each key once,
/// array indices first and ascending, as `JSON.stringify` writes a parsed
/// object. Keys are spans of `text`, string bodies whose escapes are all
/// canonical (so equal bodies are equal strings).
#[derive(Default)]
pub struct KeyOrder<'t> {
    last_index: Option<u32>,
    named: bool,
    /// One bit per key hash: most keys are new, and a clear bit says so
    /// without comparing.
    seen: u64,
    /// The keys, once there are too many for the bits to say much.
    set: Option<crate::hash::HashSet<&'t [u8]>>,
}

/// Past this many keys the repeat check hashes them.
const KEYS_BY_BITS: usize = 16;

impl<'t> KeyOrder<'t> {
    /// Admits `key`, the object's next key after `earlier`; false when the
    /// object cannot be canonical.
    #[inline]
    pub fn admit(&mut self, text: &'t [u8], earlier: &[(u32, u32)], key: (u32, u32)) -> bool {
        let span = |(a, b): (u32, u32)| &text[a as usize..b as usize];
        let k = span(key);
        match array_index(k) {
            Some(n) => {
                if self.named || self.last_index.is_some_and(|l| l >= n) {
                    return false;
                }
                self.last_index = Some(n);
            }
            None => self.named = true,
        }
        if earlier.len() >= KEYS_BY_BITS {
            let set = self
                .set
                .get_or_insert_with(|| earlier.iter().map(|&e| span(e)).collect());
            return set.insert(k);
        }
        let h = k.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let bit = 1u64 << ((h ^ (h >> 29)) & 63);
        let repeated = self.seen & bit != 0 && earlier.iter().any(|&e| span(e) == k);
        self.seen |= bit;
        !repeated
    }
}

/// Whether an object's keys, all read, follow [`KeyOrder`].
pub fn keys_canonical(text: &[u8], keys: &[(u32, u32)]) -> bool {
    let mut order = KeyOrder::default();
    keys.iter()
        .enumerate()
        .all(|(i, &k)| order.admit(text, &keys[..i], k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &str) -> Result<Escape, BadEscape> {
        escape(s.as_bytes(), 0)
    }

    #[test]
    fn escapes_decode_and_judge_as_js() {
        let e = esc(r"\ud83d\ude00").unwrap();
        assert_eq!(
            (e.len, e.what, e.canonical),
            (12, UnitOrChar::Char('😀'), false)
        );
        let e = esc(r"\ud83dx").unwrap();
        assert_eq!(
            (e.len, e.what, e.canonical),
            (6, UnitOrChar::Lone(0xd83d), true)
        );
        assert!(!esc(r"\uD800").unwrap().canonical);
        assert!(esc(r"\u001f").unwrap().canonical);
        assert!(!esc(r"\u001F").unwrap().canonical);
        assert!(!esc(r"\u000a").unwrap().canonical);
        assert!(!esc(r"\u00e9").unwrap().canonical);
        assert!(!esc(r"\/").unwrap().canonical);
        assert!(esc(r"\n").unwrap().canonical);
        assert_eq!(esc(r"\x"), Err(BadEscape::Invalid));
        assert_eq!(esc(r"\u12"), Err(BadEscape::Invalid));
        assert_eq!(esc("\\"), Err(BadEscape::End));
    }

    #[test]
    fn numbers_follow_the_grammar_and_js_spelling() {
        for (t, end) in [
            ("0", Ok(1)),
            ("-12.5e+3,", Ok(8)),
            ("01", Ok(1)),
            ("1.", Err(2)),
        ] {
            assert_eq!(number_end(t.as_bytes(), 0), end, "{t}");
        }
        assert_eq!(number_end(b"-", 0), Err(1));
        assert_eq!(number_end(b"1e", 0), Err(2));
        for ok in [
            "0",
            "-1",
            "1785301802233",
            "0.5",
            "1e+21",
            "1.5e-7",
            "9007199254740994",
            "5e-324",
        ] {
            assert!(number_is_canonical(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "-0",
            "1.0",
            "1E21",
            "1e21",
            "1e400",
            "0.0000001",
            "9007199254740993",
            "100e0",
        ] {
            assert!(!number_is_canonical(bad.as_bytes()), "{bad}");
        }
        assert_eq!(number_value(b"1E400"), f64::INFINITY);
        assert_eq!(number_value(b"-7"), -7.0);
        assert!(number_value(b"-0").is_sign_negative());
    }

    #[test]
    fn small_integers_read_as_the_float_parser_reads_them() {
        for lit in [
            "0",
            "7",
            "-7",
            "1700000000000",
            "999999999999999",
            "-123456789012345",
        ] {
            assert_eq!(
                small_integer(lit.as_bytes()),
                Some(lit.parse::<f64>().unwrap()),
                "{lit}"
            );
        }
        for lit in ["-0", "01", "1.5", "1e3", "1234567890123456", "-", "", "1-"] {
            assert_eq!(small_integer(lit.as_bytes()), None, "{lit}");
        }
    }

    #[test]
    fn keys_unique_and_index_first() {
        let check = |text: &str, spans: &[(u32, u32)]| keys_canonical(text.as_bytes(), spans);
        // "a" "b" / "0" "2" "a" / "b" "1" / "a" "a" / "1" "0"
        assert!(check("ab", &[(0, 1), (1, 2)]));
        assert!(check("02a", &[(0, 1), (1, 2), (2, 3)]));
        assert!(!check("b1", &[(0, 1), (1, 2)]));
        assert!(!check("aa", &[(0, 1), (1, 2)]));
        assert!(!check("10", &[(0, 1), (1, 2)]));
        let many: String = ('a'..='z').collect::<String>() + "q";
        let spans: Vec<(u32, u32)> = (0..many.len() as u32).map(|i| (i, i + 1)).collect();
        assert!(!check(&many, &spans));
        assert!(check(&many, &spans[..26]));
    }

    #[test]
    fn array_index_keys() {
        assert_eq!(array_index(b"0"), Some(0));
        assert_eq!(array_index(b"4294967294"), Some(4294967294));
        assert_eq!(array_index(b"4294967295"), None);
        assert_eq!(array_index(b"01"), None);
        assert_eq!(array_index(b"-1"), None);
        for k in [&b"-0"[..], b"", b"1e3", b"99999999999"] {
            assert_eq!(array_index(k), None, "{k:?}");
        }
    }

    #[test]
    fn finds_the_first_control() {
        assert_eq!(first_control(b"plain text"), None);
        let s = "x".repeat(40) + "\t" + "\n";
        assert_eq!(first_control(s.as_bytes()), Some(40));
    }
}
