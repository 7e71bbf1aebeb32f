//! JavaScript-exact JSON, one layer for the whole crate. Reading:
//! `lex` (the lexical rules and their "as `JSON.stringify` writes it"
//! verdicts, also called by the render path's fast scan), `read` (the one
//! reader: a tape of spans, `tape`, with error positions), `view` (reading a
//! tape with JS property semantics), `value` (an owned value, `Json`, for the
//! state and config). Writing: `text` (strings as their canonical JSON text,
//! the one string form), `number`, `utf16` (lengths as JS counts them),
//! `stringify` and `spread` (a read value written back), `members` (an
//! object written by hand, a member a line: the reports). `v8_wire` reads
//! the same text from `v8.serialize`'s bytes.

pub(crate) mod lex;
pub(crate) mod members;
pub(crate) mod number;
pub(crate) mod read;
pub(crate) mod spread;
pub(crate) mod stringify;
pub(crate) mod tape;
pub(crate) mod text;
pub(crate) mod utf16;
pub(crate) mod v8_wire;
pub(crate) mod value;
pub(crate) mod view;

pub use number::{format_number, string_to_number, write_json_number};
pub use utf16::utf16_len;
pub use value::{parse_checked_value, parse_value, Json};
