//! `JSON.stringify` of a read value (`view.rs`). A value from a canonical
//! text is copied as it stands; any other is written as the value JS holds
//! after `JSON.parse` (`Json::of`: keys unique, first position, last value,
//! array indices first; JS string escapes; ECMAScript number form).

use super::value::Json;
use super::view::Value;

/// Appends `JSON.stringify(v)`.
pub fn write(out: &mut Vec<u8>, v: Value<'_>) {
    if v.canonical() {
        out.extend_from_slice(v.span());
    } else {
        Json::of(v).write_json(out);
    }
}

/// `JSON.stringify(v)` as a new buffer.
pub fn to_json(v: Value<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    write(&mut out, v);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::view::tests::tape;

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
}
