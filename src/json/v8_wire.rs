//! Messages in V8's serialization format (what Node's `v8.serialize` writes)
//! turned into the JSON text `JSON.stringify` writes for them.
//!
//! Why: in Node, `JSON.stringify` of a long run of messages returns a rope
//! that V8 flattens (allocates and copies again) before any N-API call can
//! read it, and the copy out is in UTF-16; together that was most of a
//! stateless render. `v8.serialize` writes one contiguous Buffer several
//! times faster, strings as raw Latin-1 or UTF-16. This module reads it.
//!
//! Only values `JSON.stringify` writes the same way from their serialized
//! form are read: plain objects, dense arrays, strings, numbers, booleans,
//! null and undefined. Anything else (a back-reference to an object seen
//! before, which JSON would repeat or reject as a cycle; dates, maps, boxed
//! primitives, BigInts, sparse arrays, arrays with named properties, host
//! objects, a version this reader does not know, nesting deeper than
//! [`MAX_DEPTH`]) gives `None`, and the caller sends `JSON.stringify`'s own
//! text instead (js/conversation.js, `wireBytes`). What JSON does with
//! `toJSON` methods the serialized form cannot show: the JS side sends only
//! trees of plain objects and arrays this way (js/wire.js).

use super::lex::array_index;
use super::number::write_json_number;
use super::text::{escape_latin1, escape_utf16le};

/// Deeper values are left to `JSON.stringify`'s text (the engine's own
/// depth limit then applies to it).
pub const MAX_DEPTH: usize = 512;

/// The format versions read here (Node 18 to 24 write 15).
const VERSIONS: std::ops::RangeInclusive<u64> = 13..=15;

const PADDING: u8 = 0x00;
const VERSION: u8 = 0xFF;
const UNDEFINED: u8 = b'_';
const NULL: u8 = b'0';
const TRUE: u8 = b'T';
const FALSE: u8 = b'F';
const INT32: u8 = b'I';
const UINT32: u8 = b'U';
const DOUBLE: u8 = b'N';
const ONE_BYTE_STRING: u8 = b'"';
const TWO_BYTE_STRING: u8 = b'c';
const BEGIN_OBJECT: u8 = b'o';
const END_OBJECT: u8 = b'{';
const BEGIN_DENSE_ARRAY: u8 = b'A';
const END_DENSE_ARRAY: u8 = b'$';
const THE_HOLE: u8 = b'-';
const BEGIN_SPARSE_ARRAY: u8 = b'a';
const END_SPARSE_ARRAY: u8 = b'@';

/// The JSON text of the serialized value in `wire` (header included), or
/// None where the value is not one this reader takes.
pub fn wire_to_json(wire: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(wire.len() + wire.len() / 8);
    read(wire, &mut out)?;
    Some(out)
}

/// Whether [`wire_to_json`] takes `wire`, found without writing the text
/// (strings are skipped by their length): a fraction of the conversion's
/// time, so the conversion itself can run on another thread.
pub fn wire_is_json(wire: &[u8]) -> bool {
    read(wire, &mut NoText).is_some()
}

fn read<T: Text>(wire: &[u8], out: &mut T) -> Option<()> {
    let mut r = WireReader {
        b: wire,
        at: 0,
        keys: Vec::new(),
        spans: Vec::new(),
    };
    if r.byte()? != VERSION || !VERSIONS.contains(&r.varint()?) {
        return None;
    }
    match r.value(out, 0)? {
        Written::Value => {}
        Written::Undefined | Written::Hole => return None,
    }
    (r.at == wire.len()).then_some(())
}

/// Where the reader writes: the JSON text, or nowhere (to check only).
/// Nothing a `Text` does can fail, so both agree on what is taken.
trait Text {
    fn push(&mut self, b: u8);
    fn extend(&mut self, s: &[u8]);
    fn latin1(&mut self, s: &[u8]);
    fn utf16le(&mut self, s: &[u8]);
    fn number(&mut self, n: f64);
    fn len(&self) -> usize;
    fn truncate(&mut self, n: usize);
}

impl Text for Vec<u8> {
    fn push(&mut self, b: u8) {
        Vec::push(self, b);
    }
    fn extend(&mut self, s: &[u8]) {
        self.extend_from_slice(s);
    }
    fn latin1(&mut self, s: &[u8]) {
        escape_latin1(self, s);
    }
    fn utf16le(&mut self, s: &[u8]) {
        escape_utf16le(self, s);
    }
    fn number(&mut self, n: f64) {
        write_json_number(self, n);
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn truncate(&mut self, n: usize) {
        Vec::truncate(self, n);
    }
}

struct NoText;

impl Text for NoText {
    fn push(&mut self, _: u8) {}
    fn extend(&mut self, _: &[u8]) {}
    fn latin1(&mut self, _: &[u8]) {}
    fn utf16le(&mut self, _: &[u8]) {}
    fn number(&mut self, _: f64) {}
    fn len(&self) -> usize {
        0
    }
    fn truncate(&mut self, _: usize) {}
}

struct WireReader<'a> {
    b: &'a [u8],
    at: usize,
    /// The quoted key texts of the objects being read (nested objects
    /// stack), and each key's span in it: V8 writes each key once, index
    /// keys first in ascending order (JSON.stringify's order); bytes that do
    /// otherwise are declined, as JSON would write them differently.
    keys: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

/// Objects with more keys than this are left to JSON.stringify's text
/// (the duplicate check is a linear scan).
const MAX_KEYS: usize = 256;

/// What a value wrote: JSON text, or nothing (undefined, an array hole),
/// which the container writes its own way.
enum Written {
    Value,
    Undefined,
    Hole,
}

impl WireReader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.b.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn tag(&mut self) -> Option<u8> {
        let t = self.peek_tag()?;
        self.at += 1;
        Some(t)
    }

    fn peek_tag(&mut self) -> Option<u8> {
        while *self.b.get(self.at)? == PADDING {
            self.at += 1;
        }
        self.b.get(self.at).copied()
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if shift > 63 {
                return None;
            }
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
            shift += 7;
        }
    }

    fn bytes(&mut self, n: u64) -> Option<&[u8]> {
        let n = usize::try_from(n).ok()?;
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }

    fn value<T: Text>(&mut self, out: &mut T, depth: usize) -> Option<Written> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.tag()? {
            UNDEFINED => return Some(Written::Undefined),
            THE_HOLE => return Some(Written::Hole),
            NULL => out.extend(b"null"),
            TRUE => out.extend(b"true"),
            FALSE => out.extend(b"false"),
            INT32 => {
                // Zigzag-coded int32; a wider value is not V8's.
                let z = u32::try_from(self.varint()?).ok()?;
                out.number((i64::from(z >> 1) ^ -i64::from(z & 1)) as f64);
            }
            UINT32 => out.number(f64::from(u32::try_from(self.varint()?).ok()?)),
            DOUBLE => {
                let raw: [u8; 8] = self.bytes(8)?.try_into().ok()?;
                out.number(f64::from_le_bytes(raw));
            }
            ONE_BYTE_STRING | TWO_BYTE_STRING => {
                self.at -= 1;
                self.string(out)?;
            }
            BEGIN_OBJECT => self.object(out, depth)?,
            BEGIN_DENSE_ARRAY => self.array(out, depth)?,
            BEGIN_SPARSE_ARRAY => self.sparse_array(out, depth)?,
            _ => return None,
        }
        Some(Written::Value)
    }

    /// A string value, quoted.
    fn string<T: Text>(&mut self, out: &mut T) -> Option<()> {
        out.push(b'"');
        match self.tag()? {
            ONE_BYTE_STRING => {
                let n = self.varint()?;
                let s = self.bytes(n)?;
                out.latin1(s);
            }
            TWO_BYTE_STRING => {
                let n = self.varint()?;
                if n % 2 != 0 {
                    return None;
                }
                let units = self.bytes(n)?;
                out.utf16le(units);
            }
            _ => return None,
        }
        out.push(b'"');
        Some(())
    }

    /// An object key (a string, or a number for an integer index), quoted.
    fn key<T: Text>(&mut self, out: &mut T) -> Option<()> {
        match self.peek_tag()? {
            ONE_BYTE_STRING | TWO_BYTE_STRING => self.string(out),
            INT32 | UINT32 | DOUBLE => {
                out.push(b'"');
                match self.value(out, 0)? {
                    Written::Value => {}
                    _ => return None,
                }
                out.push(b'"');
                Some(())
            }
            _ => None,
        }
    }

    /// The next key's quoted text, appended to the key stack (written even
    /// when only checking, so both modes decline the same bytes); its span.
    fn key_text(&mut self) -> Option<std::ops::Range<usize>> {
        let start = self.keys.len();
        let mut keys = std::mem::take(&mut self.keys);
        let read = self.key(&mut keys);
        self.keys = keys;
        read.map(|()| start..self.keys.len())
    }

    fn object<T: Text>(&mut self, out: &mut T, depth: usize) -> Option<()> {
        let key_base = self.keys.len();
        let span_base = self.spans.len();
        let read = self.members(out, depth);
        self.keys.truncate(key_base);
        self.spans.truncate(span_base);
        read
    }

    fn members<T: Text>(&mut self, out: &mut T, depth: usize) -> Option<()> {
        out.push(b'{');
        let span_base = self.spans.len();
        let mut first = true;
        let mut count = 0u64;
        let mut last_index: Option<u64> = None;
        let mut named = false;
        while self.peek_tag()? != END_OBJECT {
            let key = self.key_text()?;
            if self.spans.len() - span_base >= MAX_KEYS
                || self.spans[span_base..]
                    .iter()
                    .any(|&(s, e)| self.keys[s..e] == self.keys[key.clone()])
            {
                return None;
            }
            match array_index(&self.keys[key.start + 1..key.end - 1]).map(u64::from) {
                Some(i) if named || last_index.is_some_and(|l| l >= i) => return None,
                Some(i) => last_index = Some(i),
                None => named = true,
            }
            self.spans.push((key.start, key.end));
            let mark = out.len();
            if !first {
                out.push(b',');
            }
            out.extend(&self.keys[key]);
            out.push(b':');
            count += 1;
            match self.value(out, depth + 1)? {
                Written::Value => first = false,
                // JSON.stringify leaves out undefined properties.
                Written::Undefined => out.truncate(mark),
                Written::Hole => return None,
            }
        }
        self.at += 1;
        if self.varint()? != count {
            return None;
        }
        out.push(b'}');
        Some(())
    }

    fn array<T: Text>(&mut self, out: &mut T, depth: usize) -> Option<()> {
        let length = self.varint()?;
        out.push(b'[');
        for i in 0..length {
            if i > 0 {
                out.push(b',');
            }
            self.element(out, depth)?;
        }
        // Named properties on an array would come here; JSON ignores them,
        // but they are rare enough to leave to JSON's text.
        if self.tag()? != END_DENSE_ARRAY || self.varint()? != 0 || self.varint()? != length {
            return None;
        }
        out.push(b']');
        Some(())
    }

    /// An element of an array at `depth`.
    fn element<T: Text>(&mut self, out: &mut T, depth: usize) -> Option<()> {
        match self.value(out, depth + 1)? {
            Written::Value => {}
            // JSON.stringify writes null for both.
            Written::Undefined | Written::Hole => out.extend(b"null"),
        }
        Some(())
    }

    /// An array written as its index/value pairs (V8 writes arrays that way
    /// when their elements are not kept packed, as after `structuredClone`).
    fn sparse_array<T: Text>(&mut self, out: &mut T, depth: usize) -> Option<()> {
        let length = self.varint()?;
        // Holes cost no bytes here but a `null` each in JSON: more of them
        // than bytes left is not an array pi hands over (and unbounded).
        if length > (self.b.len() - self.at) as u64 {
            return None;
        }
        out.push(b'[');
        let mut next = 0u64;
        let mut pairs = 0u64;
        while self.peek_tag()? != END_SPARSE_ARRAY {
            let index = self.index()?;
            if index < next || index >= length {
                return None;
            }
            holes(out, &mut next, index);
            if next > 0 {
                out.push(b',');
            }
            self.element(out, depth)?;
            next += 1;
            pairs += 1;
        }
        self.at += 1;
        if self.varint()? != pairs || self.varint()? != length {
            return None;
        }
        holes(out, &mut next, length);
        out.push(b']');
        Some(())
    }

    /// An array index written as a key: a number whose key text is an
    /// index (a string key or any other number gives None).
    fn index(&mut self) -> Option<u64> {
        if !matches!(self.peek_tag()?, INT32 | UINT32 | DOUBLE) {
            return None;
        }
        let key = self.key_text()?;
        let index = array_index(&self.keys[key.start + 1..key.end - 1]).map(u64::from);
        self.keys.truncate(key.start);
        index
    }
}

/// `null` for each missing element of a sparse array from `*next` up to
/// `upto`, comma-separated as the elements around them are.
fn holes<T: Text>(out: &mut T, next: &mut u64, upto: u64) {
    while *next < upto {
        out.extend(if *next == 0 { b"null" } else { b",null" });
        *next += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(body: &[u8]) -> Vec<u8> {
        let mut v = vec![0xFF, 15];
        v.extend_from_slice(body);
        v
    }

    fn json(body: &[u8]) -> Option<String> {
        let text = wire_to_json(&wire(body)).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(wire_is_json(&wire(body)), text.is_some());
        text
    }

    // Bytes as Node 20's v8.serialize writes them.
    #[test]
    fn reads_what_node_writes() {
        // [{a:1,b:'x',t:1.7e12,u:undefined,s:'é€'}]
        let mut body = vec![
            b'A', 1, b'o', b'"', 1, b'a', b'I', 2, b'"', 1, b'b', b'"', 1, b'x',
        ];
        body.extend_from_slice(&[b'"', 1, b't', b'N']);
        body.extend_from_slice(&1.7e12f64.to_le_bytes());
        body.extend_from_slice(&[
            b'"', 1, b'u', b'_', b'"', 1, b's', 0, b'c', 4, 0xe9, 0, 0xac, 0x20,
        ]);
        body.extend_from_slice(&[b'{', 5, b'$', 0, 1]);
        assert_eq!(
            json(&body).as_deref(),
            Some(r#"[{"a":1,"b":"x","t":1700000000000,"s":"é€"}]"#)
        );
    }

    #[test]
    fn escapes_as_json_stringify() {
        let body = [b'"', 5, b'"', b'\\', b'\n', 0x01, 0xFF];
        assert_eq!(json(&body).as_deref(), Some("\"\\\"\\\\\\n\\u0001ÿ\""));
        // A lone surrogate.
        assert_eq!(json(&[b'c', 2, 0x00, 0xD8]).as_deref(), Some(r#""\ud800""#));
    }

    #[test]
    fn numbers_as_javascript_writes_them() {
        assert_eq!(json(&[b'I', 3]).as_deref(), Some("-2"));
        // int32's extremes; a varint wider than 32 bits is not V8's.
        assert_eq!(
            json(&[b'I', 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]).as_deref(),
            Some("-2147483648")
        );
        assert_eq!(
            json(&[b'U', 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]).as_deref(),
            Some("4294967295")
        );
        assert_eq!(json(&[b'I', 0x80, 0x80, 0x80, 0x80, 0x10]), None);
        let nan = [&[b'N'][..], &f64::NAN.to_le_bytes()].concat();
        assert_eq!(json(&nan).as_deref(), Some("null"));
        let neg_zero = [&[b'N'][..], &(-0.0f64).to_le_bytes()].concat();
        assert_eq!(json(&neg_zero).as_deref(), Some("0"));
        // An integer key.
        assert_eq!(
            json(&[b'o', b'I', 0, b'T', b'{', 1]).as_deref(),
            Some(r#"{"0":true}"#)
        );
    }

    #[test]
    fn holes_and_undefined_in_arrays_are_null() {
        assert_eq!(
            json(&[b'A', 2, b'-', b'_', b'$', 0, 2]).as_deref(),
            Some("[null,null]")
        );
        assert_eq!(
            json(&[b'o', b'"', 1, b'a', b'_', b'{', 1]).as_deref(),
            Some("{}")
        );
    }

    #[test]
    fn sparse_arrays_as_json_stringify() {
        // [ , 'x', ] with length 3, as index/value pairs; then an empty one.
        let body = [b'a', 3, b'I', 2, b'"', 1, b'x', b'@', 1, 3];
        assert_eq!(json(&body).as_deref(), Some(r#"[null,"x",null]"#));
        assert_eq!(json(&[b'a', 0, b'@', 0, 0]).as_deref(), Some("[]"));
        let two = [b'a', 2, b'I', 0, b'T', b'I', 2, b'_', b'@', 2, 2];
        assert_eq!(json(&two).as_deref(), Some("[true,null]"));
        // Indices out of order or past the length.
        assert_eq!(
            json(&[b'a', 2, b'I', 2, b'T', b'I', 0, b'T', b'@', 2, 2]),
            None
        );
        assert_eq!(json(&[b'a', 1, b'I', 2, b'T', b'@', 1, 1]), None);
        // A length far beyond the bytes (a billion holes).
        assert_eq!(
            json(&[b'a', 0x80, 0x94, 0xEB, 0xDC, 0x03, b'@', 0, 0x80, 0x94, 0xEB, 0xDC, 0x03]),
            None
        );
    }

    #[test]
    fn declines_what_json_writes_differently() {
        // A back-reference (a shared object or a cycle).
        assert_eq!(json(&[b'A', 2, b'o', b'{', 0, b'^', 1, b'$', 0, 2]), None);
        // A date, a sparse array, an array with a named property.
        assert_eq!(json(&[b'D', 0, 0, 0, 0, 0, 0, 0, 0]), None);
        assert_eq!(json(&[b'a', 1, b'"', 1, b'k', b'T', b'@', 1, 1]), None);
        assert_eq!(json(&[b'A', 0, b'"', 1, b'k', b'T', b'$', 1, 0]), None);
        // Trailing bytes, a truncated string, an unknown version.
        assert_eq!(json(b"TT"), None);
        assert_eq!(json(&[b'"', 5, b'a']), None);
        assert_eq!(wire_to_json(&[0xFF, 16, b'T']), None);
        // Top-level undefined (JSON.stringify returns undefined).
        assert_eq!(json(b"_"), None);
    }

    #[test]
    fn declines_keys_v8_never_writes() {
        // A key twice; an index key after a named one; indices descending.
        let twice = [b'o', b'"', 1, b'a', b'T', b'"', 1, b'a', b'F', b'{', 2];
        assert_eq!(json(&twice), None);
        let late = [b'o', b'"', 1, b'b', b'T', b'I', 0, b'F', b'{', 2];
        assert_eq!(json(&late), None);
        let down = [b'o', b'I', 4, b'T', b'I', 2, b'F', b'{', 2];
        assert_eq!(json(&down), None);
        // The same key in two objects, and nested objects, are fine.
        let nested = [
            b'o', b'"', 1, b'a', b'o', b'"', 1, b'a', b'T', b'{', 1, b'"', 1, b'b', b'0', b'{', 2,
        ];
        assert_eq!(
            json(&nested).as_deref(),
            Some(r#"{"a":{"a":true},"b":null}"#)
        );
        let indices = [
            b'o', b'I', 2, b'T', b'I', 20, b'F', b'"', 1, b'z', b'0', b'{', 3,
        ];
        assert_eq!(
            json(&indices).as_deref(),
            Some(r#"{"1":true,"10":false,"z":null}"#)
        );
    }

    #[test]
    fn declines_nesting_past_the_limit() {
        let deep = MAX_DEPTH + 2;
        let mut body = Vec::new();
        for _ in 0..deep {
            body.extend_from_slice(&[b'A', 1]);
        }
        body.push(b'0');
        for _ in 0..deep {
            body.extend_from_slice(&[b'$', 0, 1]);
        }
        assert_eq!(json(&body), None);
    }
}
