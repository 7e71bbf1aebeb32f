//! Writing a JSON object by hand, one member a line: the reports (the
//! replay's and the tune's) and the contexts export name each field once,
//! with its value, instead of a key call, a value call and the `null` /
//! `true` / bracket bytes around them. Keys are written with
//! [`write_key`](super::text::write_key), strings with
//! [`write_str`](super::text::write_str), numbers as JavaScript prints
//! them ([`write_json_number`](super::write_json_number)).

use super::text::{write_key, write_str};
use super::value::write_list;
use super::write_json_number;

/// The members of an object being written into `out` (its `{` already
/// there; [`object`] writes both braces).
pub struct Members<'a>(pub &'a mut Vec<u8>);

/// `{...}`, its members written by `each`.
pub fn object(out: &mut Vec<u8>, each: impl FnOnce(&mut Members)) {
    out.push(b'{');
    each(&mut Members(out));
    out.push(b'}');
}

/// `[item,...]`, each item written by `each`.
pub fn array<T>(
    out: &mut Vec<u8>,
    items: impl IntoIterator<Item = T>,
    each: impl FnMut(&mut Vec<u8>, T),
) {
    write_list(out, b"[]", items, each);
}

/// `null`, or what `write` writes for a present value.
pub fn null_or<T>(out: &mut Vec<u8>, v: Option<T>, write: impl FnOnce(&mut Vec<u8>, T)) {
    match v {
        Some(v) => write(out, v),
        None => out.extend_from_slice(b"null"),
    }
}

impl Members<'_> {
    /// `"name":` followed by what `write` writes.
    pub fn raw(&mut self, name: &str, write: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        write_key(self.0, name);
        write(self.0);
        self
    }

    pub fn str(&mut self, name: &str, v: &str) -> &mut Self {
        self.raw(name, |out| write_str(out, v))
    }

    pub fn num(&mut self, name: &str, v: f64) -> &mut Self {
        self.raw(name, |out| write_json_number(out, v))
    }

    /// `"name":v` for each pair, in order.
    pub fn nums(&mut self, pairs: &[(&str, f64)]) -> &mut Self {
        for (name, v) in pairs {
            self.num(name, *v);
        }
        self
    }

    pub fn flag(&mut self, name: &str, v: bool) -> &mut Self {
        self.raw(name, |out| {
            out.extend_from_slice(if v { b"true" } else { b"false" })
        })
    }

    /// A string, or `null`.
    pub fn opt_str(&mut self, name: &str, v: Option<&str>) -> &mut Self {
        self.raw(name, |out| null_or(out, v, write_str))
    }

    /// A number, or `null`.
    pub fn opt_num(&mut self, name: &str, v: Option<f64>) -> &mut Self {
        self.raw(name, |out| null_or(out, v, write_json_number))
    }

    /// `"name":{...}`, its members written by `each`.
    pub fn object(&mut self, name: &str, each: impl FnOnce(&mut Members)) -> &mut Self {
        self.raw(name, |out| object(out, each))
    }

    /// `"name":[...]`, each item written by `each`.
    pub fn array<T>(
        &mut self,
        name: &str,
        items: impl IntoIterator<Item = T>,
        each: impl FnMut(&mut Vec<u8>, T),
    ) -> &mut Self {
        self.raw(name, |out| array(out, items, each))
    }
}
