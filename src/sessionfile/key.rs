//! JS values where pi and pi-condense use them as `Map` keys or compare them
//! with `===`: entry ids, parent ids, tool-call ids, occurrence keys. A file
//! may give any of them any JSON type, so keys are not just strings: `5` and
//! `"5"` differ, objects equal only themselves, and an absent field is
//! `undefined`, which is a key like any other.

use std::borrow::Cow;

use crate::json::stringify;
use crate::json::tape::Kind;
use crate::json::text::{self, write_quoted};
use crate::json::view::Value;

/// SameValueZero identity (also `===`, since JSON holds no NaN).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum JsKey<'a> {
    Undefined,
    Null,
    Bool(bool),
    /// The bits of the number, `-0` stored as `0`.
    Number(u64),
    String(Cow<'a, [u8]>),
    Object(u64),
    /// An id pi mints while migrating a version-1 file: random there, unique
    /// here, equal to no value in the file.
    Minted(u32),
}

impl<'a> JsKey<'a> {
    pub fn of(v: Option<Value<'a>>) -> Self {
        let Some(v) = v else {
            return JsKey::Undefined;
        };
        match v.kind() {
            Kind::Null => JsKey::Null,
            Kind::False => JsKey::Bool(false),
            Kind::True => JsKey::Bool(true),
            Kind::Number => JsKey::number(v.number().unwrap_or(0.0)),
            Kind::String => JsKey::String(v.string().unwrap_or_default()),
            Kind::Array | Kind::Object => JsKey::Object(v.identity()),
        }
    }

    pub fn number(n: f64) -> Self {
        JsKey::Number(if n == 0.0 { 0 } else { n.to_bits() })
    }

    /// The string `s` (held as its canonical text).
    pub fn str(s: &'a str) -> Self {
        if text::is_text_of(s.as_bytes(), s) {
            JsKey::String(Cow::Borrowed(s.as_bytes()))
        } else {
            JsKey::String(Cow::Owned(text::text_of(s)))
        }
    }

    pub fn truthy(&self) -> bool {
        match self {
            JsKey::Undefined | JsKey::Null => false,
            JsKey::Bool(b) => *b,
            JsKey::Number(bits) => *bits != 0 && !f64::from_bits(*bits).is_nan(),
            JsKey::String(s) => !s.is_empty(),
            JsKey::Object(_) | JsKey::Minted(_) => true,
        }
    }

    pub fn into_owned(self) -> JsKey<'static> {
        match self {
            JsKey::Undefined => JsKey::Undefined,
            JsKey::Null => JsKey::Null,
            JsKey::Bool(b) => JsKey::Bool(b),
            JsKey::Number(n) => JsKey::Number(n),
            JsKey::String(s) => JsKey::String(Cow::Owned(s.into_owned())),
            JsKey::Object(o) => JsKey::Object(o),
            JsKey::Minted(m) => JsKey::Minted(m),
        }
    }
}

/// A JS value held by the state: one from the file, or a string made at run
/// time (an occurrence key), or `undefined`.
#[derive(Clone, Debug)]
pub enum JsVal<'a> {
    Undefined,
    Value(Value<'a>),
    /// A string (canonical text).
    Text(Box<[u8]>),
}

impl<'a> JsVal<'a> {
    pub fn of(v: Option<Value<'a>>) -> Self {
        v.map_or(JsVal::Undefined, JsVal::Value)
    }

    pub fn key(&self) -> JsKey<'_> {
        match self {
            JsVal::Undefined => JsKey::Undefined,
            JsVal::Value(v) => JsKey::of(Some(*v)),
            JsVal::Text(t) => JsKey::String(Cow::Borrowed(t)),
        }
    }

    pub fn truthy(&self) -> bool {
        match self {
            JsVal::Undefined => false,
            JsVal::Value(v) => v.truthy(),
            JsVal::Text(t) => !t.is_empty(),
        }
    }

    pub fn is_undefined(&self) -> bool {
        matches!(self, JsVal::Undefined)
    }

    /// `typeof v === "string"`.
    pub fn is_string(&self) -> bool {
        match self {
            JsVal::Value(v) => v.kind() == Kind::String,
            JsVal::Text(_) => true,
            JsVal::Undefined => false,
        }
    }

    /// Appends `String(v)`.
    pub fn write_to_string(&self, out: &mut Vec<u8>) {
        match self {
            JsVal::Undefined => out.extend_from_slice(b"undefined"),
            JsVal::Value(v) => v.write_to_string(out),
            JsVal::Text(t) => out.extend_from_slice(t),
        }
    }

    pub fn to_js_string(&self) -> Cow<'_, [u8]> {
        match self {
            JsVal::Value(v) => v.to_js_string(),
            JsVal::Text(t) => Cow::Borrowed(t),
            JsVal::Undefined => Cow::Borrowed(b"undefined"),
        }
    }

    /// Appends `JSON.stringify(v)`; `undefined` writes nothing and returns
    /// false (the caller leaves the key out).
    pub fn write_json(&self, out: &mut Vec<u8>) -> bool {
        match self {
            JsVal::Undefined => false,
            JsVal::Value(v) => {
                stringify::write(out, *v);
                true
            }
            JsVal::Text(t) => {
                write_quoted(out, t);
                true
            }
        }
    }
}
