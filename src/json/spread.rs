//! `JSON.stringify({...v, k1: x1, ...})` for a read object `v` with some
//! keys replaced or left out: pi builds its context messages that way
//! (`sessionfile/project.rs`).

use std::borrow::Cow;

use super::stringify::to_json;
use super::text::{is_text_of, text_of, write_quoted};
use super::view::{js_members, Value};

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
    let mut member = |out: &mut Vec<u8>, key: &[u8], text: &[u8]| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        write_quoted(out, key);
        out.push(b':');
        out.extend_from_slice(text);
    };
    out.push(b'{');
    for (k, val) in js_members(v) {
        let replaced = overrides.iter().position(|(name, _)| is_text_of(&k, name));
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
            member(out, &k, &text);
        }
    }
    for ((name, o), used) in overrides.iter().zip(used) {
        if let (false, Override::Json(t)) = (used, o) {
            member(out, &text_of(name), t);
        }
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::view::tests::tape;

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
