//! JSON exactly as JavaScript handles it, for session lines: `JSON.parse`
//! (keeping lone surrogates, which simd-json would turn into U+0000 and
//! serde_json refuses), reads with JS property semantics, and
//! `JSON.stringify` text, copied from the line when the line is already
//! canonical.

pub(crate) mod key;
pub(crate) mod parse;
pub(crate) mod tape;
pub(crate) mod value;
pub(crate) mod write;
pub(crate) mod wtf8;

pub use key::{JsKey, JsVal};
pub use parse::{parse, parse_with, Parsed, MAX_DEPTH};
pub use tape::{Kind, Node, Tape};
pub use value::Value;
