//! Writing parsed values back as `JSON.stringify` text. A value from a
//! canonical line is copied as it stands; any other is re-serialized the way
//! JS would after `JSON.parse`: keys unique (first position, last value) with
//! array indices first, JS string escapes, ECMAScript number form. Objects
//! spread with some keys replaced (`{...message, content}`) are written here
//! too, since pi builds its context messages that way.

use std::borrow::Cow;

use super::tape::Kind;
use super::value::Value;
use super::wtf8::{self, array_index};
use crate::json::write_json_number;

/// Appends `JSON.stringify(v)`.
pub fn write(out: &mut Vec<u8>, v: Value<'_>) {
    if v.canonical() {
        out.extend_from_slice(v.span());
    } else {
        write_slow(out, v);
    }
}

/// `JSON.stringify(v)` as a new buffer.
pub fn to_json(v: Value<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    write(&mut out, v);
    out
}

fn write_slow(out: &mut Vec<u8>, v: Value<'_>) {
    match v.kind() {
        Kind::Null | Kind::True | Kind::False => out.extend_from_slice(v.span()),
        Kind::Number => write_json_number(out, v.number().unwrap_or(f64::NAN)),
        Kind::String => wtf8::write_json(out, &v.string().unwrap_or_default()),
        Kind::Array => {
            out.push(b'[');
            for (i, e) in v.elements().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_slow(out, e);
            }
            out.push(b']');
        }
        Kind::Object => {
            out.push(b'{');
            for (i, (k, val)) in js_members(v).into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                wtf8::write_json(out, &k);
                out.push(b':');
                write_slow(out, val);
            }
            out.push(b'}');
        }
    }
}

/// An object's own properties as JS holds them after `JSON.parse`: each key
/// once, at its first position, with its last value; array indices first,
/// ascending.
pub fn js_members(v: Value<'_>) -> Vec<(Cow<'_, [u8]>, Value<'_>)> {
    let mut list: Vec<(Cow<'_, [u8]>, Value<'_>)> = Vec::new();
    let mut index: Option<crate::hash::HashMap<Vec<u8>, usize>> = None;
    for (k, val) in v.members() {
        let key = k.string().unwrap_or_default();
        let found = match &index {
            Some(map) => map.get(&*key).copied(),
            None => list.iter().position(|(have, _)| *have == key),
        };
        match found {
            Some(at) => list[at].1 = val,
            None => {
                if let Some(map) = &mut index {
                    map.insert(key.to_vec(), list.len());
                }
                list.push((key, val));
                if index.is_none() && list.len() > 16 {
                    index = Some(
                        list.iter()
                            .enumerate()
                            .map(|(i, (k, _))| (k.to_vec(), i))
                            .collect(),
                    );
                }
            }
        }
    }
    if list.iter().any(|(k, _)| array_index(k).is_some()) {
        // Stable: plain keys keep their order.
        list.sort_by_key(|(k, _)| array_index(k).map_or(u64::MAX, u64::from));
    }
    list
}

/// A replacement for one key of a spread object.
pub enum Override<'x> {
    /// The key's value is `undefined`: JSON.stringify leaves it out.
    Omit,
    /// The value's JSON text.
    Json(&'x [u8]),
}

/// Appends `JSON.stringify({...v, k1: x1, k2: x2, ...})` for an object `v`:
/// a replaced key keeps its place, a new one goes after every other key.
pub fn write_spread(out: &mut Vec<u8>, v: Value<'_>, overrides: &[(&str, Override<'_>)]) {
    let mut used = vec![false; overrides.len()];
    let mut first = true;
    out.push(b'{');
    for (k, val) in js_members(v) {
        let replaced = overrides
            .iter()
            .position(|(name, _)| name.as_bytes() == &*k);
        let text: Option<Cow<'_, [u8]>> = match replaced {
            Some(at) => {
                used[at] = true;
                match overrides[at].1 {
                    Override::Omit => None,
                    Override::Json(t) => Some(Cow::Borrowed(t)),
                }
            }
            None => Some(Cow::Owned(to_json(val))),
        };
        if let Some(text) = text {
            if !first {
                out.push(b',');
            }
            first = false;
            wtf8::write_json(out, &k);
            out.push(b':');
            out.extend_from_slice(&text);
        }
    }
    for ((name, o), used) in overrides.iter().zip(used) {
        if let (false, Override::Json(t)) = (used, o) {
            if !first {
                out.push(b',');
            }
            first = false;
            wtf8::write_json(out, name.as_bytes());
            out.push(b':');
            out.extend_from_slice(t);
        }
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessionfile::json::value::tests::tape;

    fn rewrite(s: &str) -> String {
        let t = tape(s);
        String::from_utf8(to_json(Value::root(s.as_bytes(), &t))).unwrap()
    }

    #[test]
    fn rewrites_like_json_stringify_after_json_parse() {
        // Each right-hand side is node's JSON.stringify(JSON.parse(left)).
        for (text, js) in [
            (
                r#"{ "b" : 1, "a" : [ 1.0, -0, 1E3 ] }"#,
                r#"{"b":1,"a":[1,0,1000]}"#,
            ),
            (r#"{"a":1,"b":2,"a":3}"#, r#"{"a":3,"b":2}"#),
            (
                r#"{"b":1,"10":2,"2":3,"01":4}"#,
                r#"{"2":3,"10":2,"b":1,"01":4}"#,
            ),
            (
                r#""\u00e9\/\ud83d\ude00\ud800\u000a""#,
                "\"é/😀\\ud800\\n\"",
            ),
            ("[1e400,-1e400,5e-324,1e21]", "[null,null,5e-324,1e+21]"),
            (r#"{"\u0061":1,"a":2}"#, r#"{"a":2}"#),
        ] {
            assert_eq!(rewrite(text), js, "{text}");
        }
    }

    #[test]
    fn keeps_canonical_text() {
        let s = r#"{"role":"user","content":"x"}"#;
        assert_eq!(rewrite(s), s);
    }

    #[test]
    fn spreads_like_object_spread() {
        let s = r#"{"role":"user","content":null,"timestamp":1}"#;
        let t = tape(s);
        let v = Value::root(s.as_bytes(), &t);
        let mut out = Vec::new();
        write_spread(&mut out, v, &[("content", Override::Json(b"[]"))]);
        assert_eq!(out, br#"{"role":"user","content":[],"timestamp":1}"#);
        out.clear();
        write_spread(
            &mut out,
            v,
            &[("content", Override::Omit), ("extra", Override::Json(b"1"))],
        );
        assert_eq!(out, br#"{"role":"user","timestamp":1,"extra":1}"#);
    }
}
