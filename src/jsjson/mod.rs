//! JavaScript-exact JSON text: what `JSON.stringify` writes and how long it is
//! in UTF-16 code units, plus the few ECMAScript coercions the phases rely on.

pub mod lone;
mod number;
mod string;
mod utf16;

pub use number::{format_number, string_to_number, write_json_number};
pub use string::write_json_string;
pub use utf16::utf16_len;
