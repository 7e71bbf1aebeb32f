//! A JSON value as JavaScript holds it after `JSON.parse`: keys in the order
//! a JS object has them, duplicate keys resolved, numbers as doubles, and
//! strings as canonical text (`text.rs`), so lone surrogates survive. It
//! carries the state and config, and the odd message values (a tool name
//! that is an object, say) whose JS coercions the phases need; well-formed
//! messages never become one (see `record`). It is built from the reader's
//! tape (`read.rs`, `view.rs`), so its rules are the session lines' rules.

use super::lex::UnitOrChar;
use super::number::{format_number, string_to_number, write_json_number};
use super::read::{read, Input, ParseResult};
use super::tape::Kind;
use super::text::{self, write_quoted};
use super::view::{js_members, Value};

/// `JSON.parse` of a whole text (white space around it allowed), held to
/// the render path's depth limit.
pub fn parse_value(bytes: &[u8]) -> ParseResult<Json> {
    parse_with(bytes, Input::BYTES)
}

/// [`parse_value`] of text already checked to be UTF-8 (a message the
/// engine keeps: its strings skip the check).
pub fn parse_checked_value(bytes: &[u8]) -> ParseResult<Json> {
    parse_with(
        bytes,
        Input {
            utf8: true,
            ..Input::BYTES
        },
    )
}

fn parse_with(bytes: &[u8], input: Input) -> ParseResult<Json> {
    let tape = read(bytes, input)?;
    Ok(Json::of(Value::root(bytes, &tape)))
}

#[derive(Debug, Clone, PartialEq, Default)]
pub enum Json {
    #[default]
    Null,
    Bool(bool),
    Num(f64),
    /// Canonical text, without quotes.
    Str(Box<[u8]>),
    Arr(Vec<Json>),
    /// Entries in JS property order; keys as canonical text.
    Obj(Vec<(Box<[u8]>, Json)>),
}

impl Json {
    /// The value a read node stands for.
    pub fn of(v: Value<'_>) -> Json {
        match v.kind() {
            Kind::Null => Json::Null,
            Kind::False => Json::Bool(false),
            Kind::True => Json::Bool(true),
            Kind::Number => Json::Num(v.number().unwrap_or(f64::NAN)),
            Kind::String => Json::Str(v.string().unwrap_or_default().into_owned().into()),
            Kind::Array => Json::Arr(v.elements().map(Json::of).collect()),
            Kind::Object => Json::Obj(
                js_members(v)
                    .into_iter()
                    .map(|(k, v)| (k.into_owned().into_boxed_slice(), Json::of(v)))
                    .collect(),
            ),
        }
    }

    pub fn str(s: &str) -> Json {
        Json::Str(text::text_of(s).into_boxed_slice())
    }

    /// The property `key` (a plain ASCII name) of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(entries) => entries
                .iter()
                .find(|(k, _)| &**k == key.as_bytes())
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// `{...self, [key]: value}`: `key` (a plain ASCII name) keeps its place
    /// or comes last; anything but an object counts as `{}`.
    pub fn with(&self, key: &str, value: Json) -> Json {
        let mut entries = match self {
            Json::Obj(e) => e.clone(),
            _ => Vec::new(),
        };
        match entries.iter_mut().find(|(k, _)| &**k == key.as_bytes()) {
            Some(slot) => slot.1 = value,
            None => entries.push((key.as_bytes().into(), value)),
        }
        Json::Obj(entries)
    }

    /// An object without its property `key` (a plain ASCII name); anything
    /// but an object as it is.
    pub fn without(&self, key: &str) -> Json {
        match self {
            Json::Obj(entries) => Json::Obj(
                entries
                    .iter()
                    .filter(|(k, _)| &**k != key.as_bytes())
                    .cloned()
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    pub fn as_text(&self) -> Option<&[u8]> {
        match self {
            Json::Str(t) => Some(t),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Arr(items) => Some(items),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub fn is_str(&self, s: &str) -> bool {
        self.as_text().is_some_and(|t| t == s.as_bytes())
    }

    /// ToBoolean.
    pub fn truthy(&self) -> bool {
        match self {
            Json::Null => false,
            Json::Bool(b) => *b,
            Json::Num(n) => *n != 0.0 && !n.is_nan(),
            Json::Str(t) => !t.is_empty(),
            Json::Arr(_) | Json::Obj(_) => true,
        }
    }

    /// Appends the canonical text of `String(value)`.
    pub fn write_js_string(&self, out: &mut Vec<u8>) {
        match self {
            Json::Null => out.extend_from_slice(b"null"),
            Json::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Json::Num(n) => out.extend_from_slice(format_number(*n).as_bytes()),
            Json::Str(t) => out.extend_from_slice(t),
            Json::Arr(items) => write_joined(out, items.iter().map(Some), b","),
            Json::Obj(_) => out.extend_from_slice(b"[object Object]"),
        }
    }

    /// The canonical text of `String(value)`.
    pub fn js_string(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_js_string(&mut out);
        out
    }

    /// ToNumber (objects through ToPrimitive: an array as its joined text).
    pub fn to_number(&self) -> f64 {
        match self {
            Json::Null => 0.0,
            Json::Bool(b) => f64::from(u8::from(*b)),
            Json::Num(n) => *n,
            Json::Str(t) => string_to_number(&text::to_string_lossy(t)),
            Json::Arr(_) => string_to_number(&text::to_string_lossy(&self.js_string())),
            Json::Obj(_) => f64::NAN,
        }
    }

    /// Appends the value as `JSON.stringify` writes it.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Json::Null => out.extend_from_slice(b"null"),
            Json::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Json::Num(n) => write_json_number(out, *n),
            Json::Str(t) => write_quoted(out, t),
            Json::Arr(items) => write_list(out, b"[]", items, |out, v| v.write_json(out)),
            Json::Obj(entries) => write_list(out, b"{}", entries, |out, (k, v)| {
                write_quoted(out, k);
                out.push(b':');
                v.write_json(out);
            }),
        }
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_json(&mut out);
        out
    }

    /// Whether the value holds a number JSON cannot spell (±Infinity).
    pub fn holds_non_finite(&self) -> bool {
        match self {
            Json::Num(n) => !n.is_finite(),
            Json::Arr(items) => items.iter().any(Json::holds_non_finite),
            Json::Obj(entries) => entries.iter().any(|(_, v)| v.holds_non_finite()),
            _ => false,
        }
    }
}

/// Appends `items` between `brackets` (`b"[]"` or `b"{}"`), separated by
/// commas, each written by `each`.
pub fn write_list<T>(
    out: &mut Vec<u8>,
    brackets: &[u8; 2],
    items: impl IntoIterator<Item = T>,
    mut each: impl FnMut(&mut Vec<u8>, T),
) {
    out.push(brackets[0]);
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        each(out, item);
    }
    out.push(brackets[1]);
}

/// `String(value)` of a property (None: absent, printed `undefined`).
pub fn write_value(out: &mut Vec<u8>, v: Option<&Json>) {
    match v {
        None => out.extend_from_slice(b"undefined"),
        Some(v) => v.write_js_string(out),
    }
}

/// A string's characters as the string iterator yields them (code points;
/// a lone surrogate alone), as for `new Set(string)`.
pub fn characters(text: &[u8]) -> Vec<Json> {
    char::decode_utf16(text::to_units(text))
        .map(|c| {
            let mut out = Vec::new();
            text::escape_unit_or_char(&mut out, UnitOrChar::decoded(c));
            Json::Str(out.into_boxed_slice())
        })
        .collect()
}

/// `Array.prototype.join`: `null` and `undefined` (None) print as nothing,
/// everything else through `String()`.
pub fn write_joined<'a>(
    out: &mut Vec<u8>,
    items: impl Iterator<Item = Option<&'a Json>>,
    separator: &[u8],
) {
    for (i, v) in items.enumerate() {
        if i > 0 {
            out.extend_from_slice(separator);
        }
        match v {
            None | Some(Json::Null) => {}
            Some(v) => v.write_js_string(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::lex::MAX_DEPTH;

    fn v(json: &str) -> Json {
        parse_value(json.as_bytes()).unwrap()
    }

    fn s(t: Vec<u8>) -> String {
        String::from_utf8(t).unwrap()
    }

    #[test]
    fn coerces_like_javascript() {
        assert_eq!(s(v("[1,null,[2,[3]],true]").js_string()), "1,,2,3,true");
        assert_eq!(s(v(r#"{"a":1}"#).js_string()), "[object Object]");
        assert_eq!(s(v("1e21").js_string()), "1e+21");
        assert_eq!(v(r#""0x1f""#).to_number(), 31.0);
        assert_eq!(v("[5]").to_number(), 5.0);
        assert!(v("[1,2]").to_number().is_nan());
        assert_eq!(v("null").to_number(), 0.0);
        assert!(!v(r#""""#).truthy());
        assert!(v("[]").truthy());
    }

    fn canon(json: &str) -> String {
        String::from_utf8(parse_value(json.as_bytes()).unwrap().to_json()).unwrap()
    }

    #[test]
    fn writes_back_what_json_stringify_writes() {
        assert_eq!(
            canon(r#" { "a" : 1.0 , "b":[ -0, 1E21, 1e400 ] } "#),
            r#"{"a":1,"b":[0,1e+21,null]}"#
        );
        assert_eq!(canon(r#"{"b":1,"a":2,"b":3}"#), r#"{"b":3,"a":2}"#);
        assert_eq!(
            canon(r#"{"x":1,"10":2,"2":3,"01":4}"#),
            r#"{"2":3,"10":2,"x":1,"01":4}"#
        );
        assert_eq!(
            canon(r#""\u00e9\/\uD83D\uDE00\u001F\ud800""#),
            "\"é/😀\\u001f\\ud800\""
        );
        assert_eq!(canon(r#""\uDE00\uD83D""#), r#""\ude00\ud83d""#);
        assert_eq!(canon("9007199254740993"), "9007199254740992");
        assert_eq!(canon(r#"{"__proto__":1}"#), r#"{"__proto__":1}"#);
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        for bad in [
            "NaN", "01", "1.", ".5", "[1,]", "{\"a\"}", "\"\t\"", "\"\\x\"", "[1] 2", "'a'", "-",
        ] {
            assert!(parse_value(bad.as_bytes()).is_err(), "{bad}");
        }
        let e = parse_value(b"[1, NaN]").unwrap_err();
        assert_eq!(e.to_string(), "unexpected 'N' at byte 4");
        assert_eq!(
            parse_value(b"\"\xff\"").unwrap_err().problem,
            crate::json::read::Problem::InvalidUtf8
        );
    }

    #[test]
    fn bounds_nesting() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse_value(ok.as_bytes()).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(
            parse_value(deep.as_bytes()).unwrap_err().problem,
            crate::json::read::Problem::TooDeep
        );
    }
}
