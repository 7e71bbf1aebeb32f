//! 2.9.1's occurrence keys (SPEC-2.9 2.2): a tool result is keyed by its
//! id and its own timestamp, `id@ts`, because providers reuse ids within a
//! conversation; `bare` turns a key back into an id. The JS oracle's copies
//! are `occKey`, `occurrenceKeyOf` and `bare` in js/pure/v2.9.js.

use super::text::write_scalar;
use crate::json::format_number;
use crate::record::{Interner, MessageRecord, Scalar};

/// A tool result's key `K(m)`.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageKey {
    /// A string key (canonical text).
    Text(Vec<u8>),
    /// No numeric timestamp and a `toolCallId` that is not a string: the
    /// key is that value, which no string key equals.
    Value(Scalar),
}

impl MessageKey {
    pub fn text(&self) -> Option<&[u8]> {
        match self {
            MessageKey::Text(t) => Some(t),
            MessageKey::Value(_) => None,
        }
    }
}

/// `occKey(id, ts)` for a numeric `ts`: `String(id) + "@" + String(ts)`.
pub fn occurrence_key(id: &Scalar, ts: f64, syms: &Interner) -> Vec<u8> {
    let mut key = Vec::new();
    write_scalar(&mut key, id, syms);
    key.push(b'@');
    key.extend_from_slice(format_number(ts).as_bytes());
    key
}

/// `K(m)`: the occurrence key when the timestamp is a number, else the id.
pub fn message_key(rec: &MessageRecord, syms: &Interner) -> MessageKey {
    match (rec.timestamp, rec.tool_call_id) {
        (Scalar::Num(ts), id) => MessageKey::Text(occurrence_key(&id, ts, syms)),
        (_, Scalar::Str(s)) => MessageKey::Text(syms.text(s).to_vec()),
        (_, other) => MessageKey::Value(other),
    }
}

/// `bare(k)`: the key up to its last `@` when one or more ASCII digits
/// follow it and it is not the first character; the key itself otherwise.
pub fn bare(key: &[u8]) -> &[u8] {
    match key.iter().rposition(|&b| b == b'@') {
        Some(i) if i > 0 && i + 1 < key.len() && key[i + 1..].iter().all(u8::is_ascii_digit) => {
            &key[..i]
        }
        _ => key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_ids() {
        assert_eq!(bare(b"a@12"), b"a");
        assert_eq!(bare(b"a@1@2"), b"a@1");
        assert_eq!(bare(b"a@x"), b"a@x");
        assert_eq!(bare(b"a@"), b"a@");
        assert_eq!(bare(b"@12"), b"@12");
    }

    #[test]
    fn keys_format_like_javascript() {
        let mut syms = Interner::default();
        let id = Scalar::Str(syms.intern(b"bash_0"));
        assert_eq!(occurrence_key(&id, 1e21, &syms), b"bash_0@1e+21");
        assert_eq!(occurrence_key(&id, -0.0, &syms), b"bash_0@0");
        assert_eq!(
            occurrence_key(&id, f64::INFINITY, &syms),
            b"bash_0@Infinity"
        );
        assert_eq!(occurrence_key(&Scalar::Absent, 5.0, &syms), b"undefined@5");
        assert_eq!(occurrence_key(&Scalar::Num(5.0), 1.5, &syms), b"5@1.5");
    }
}
