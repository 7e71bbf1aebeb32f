//! JavaScript's `String()` of the values the phases print (ids, tool
//! names, record fields), appended as canonical text.

use crate::json::parse_value;
use crate::json::{format_number, Json};
use crate::record::{Interner, Scalar};

/// `String(value)` of a message field.
pub fn write_scalar(out: &mut Vec<u8>, s: &Scalar, syms: &Interner) {
    match s {
        Scalar::Absent => out.extend_from_slice(b"undefined"),
        Scalar::Null => out.extend_from_slice(b"null"),
        Scalar::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Scalar::Num(n) => out.extend_from_slice(format_number(*n).as_bytes()),
        Scalar::Str(s) => out.extend_from_slice(syms.text(*s)),
        Scalar::Object(s) => {
            if let Ok(v) = parse_value(syms.text(*s)) {
                v.write_js_string(out);
            }
        }
    }
}

/// `${value ?? fallback}`.
pub fn write_or(out: &mut Vec<u8>, v: Option<&Json>, fallback: &[u8]) {
    match v {
        None | Some(Json::Null) => out.extend_from_slice(fallback),
        Some(v) => v.write_js_string(out),
    }
}

/// SameValueZero between a message field and a state value (absent and
/// `undefined` alike).
pub fn same(s: &Scalar, v: Option<&Json>, syms: &Interner) -> bool {
    match (s, v) {
        (Scalar::Absent, None) => true,
        (Scalar::Null, Some(Json::Null)) => true,
        (Scalar::Bool(a), Some(Json::Bool(b))) => a == b,
        (Scalar::Num(a), Some(Json::Num(b))) => a == b,
        (Scalar::Str(a), Some(Json::Str(b))) => syms.text(*a) == &**b,
        _ => false,
    }
}

/// ToNumber of a message field (`undefined` is NaN).
pub fn to_number(s: &Scalar, syms: &Interner) -> f64 {
    match s {
        Scalar::Absent => f64::NAN,
        Scalar::Null => 0.0,
        Scalar::Bool(b) => f64::from(u8::from(*b)),
        Scalar::Num(n) => *n,
        Scalar::Str(t) => Json::Str(syms.text(*t).into()).to_number(),
        Scalar::Object(t) => parse_value(syms.text(*t)).map_or(f64::NAN, |v| v.to_number()),
    }
}
