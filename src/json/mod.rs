//! JavaScript-exact JSON: the text `JSON.stringify` writes and its length in
//! UTF-16 code units, `JSON.parse` into a value with JS semantics, the same text read from
//! `v8.serialize`'s bytes, and the
//! few ECMAScript coercions (`String()`, ToNumber) the phases rely on.

pub(crate) mod number;
pub(crate) mod parse;
pub(crate) mod text;
pub(crate) mod utf16;
pub(crate) mod v8_wire;
pub(crate) mod value;

pub use number::{format_number, string_to_number, write_json_number};
pub use utf16::utf16_len;
pub use value::Json;
