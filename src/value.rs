//! Values as the phases see them: untouched subtrees stay on the simd-json
//! tape (`Raw`), edited ones are small owned trees (`Val`) that embed raw
//! subtrees, and `V` reads either with JavaScript's rules.

use crate::hash::HashMap;
use std::borrow::Cow;
use std::cell::Cell;

use simd_json::{Node, StaticNode};

use crate::jsjson::lone::tape_number;
use crate::jsjson::{format_number, string_to_number, write_json_number, write_json_string};

/// A node on the tape and, for containers, the subtree behind it.
#[derive(Clone, Copy)]
pub struct Raw<'t> {
    tape: &'t [Node<'t>],
    at: usize,
}

impl<'t> Raw<'t> {
    pub fn new(tape: &'t [Node<'t>], at: usize) -> Self {
        Self { tape, at }
    }

    pub fn node(&self) -> Node<'t> {
        self.tape[self.at]
    }

    /// Index just past this node's subtree.
    pub fn end(&self) -> usize {
        match self.tape[self.at] {
            Node::Object { count, .. } | Node::Array { count, .. } => self.at + 1 + count,
            _ => self.at + 1,
        }
    }

    pub fn elements(&self) -> RawElements<'t> {
        let left = match self.node() {
            Node::Array { len, .. } => len,
            _ => 0,
        };
        RawElements {
            tape: self.tape,
            next: self.at + 1,
            left,
        }
    }

    /// Keys and values in document order, duplicates included.
    pub fn entries(&self) -> RawEntries<'t> {
        let left = match self.node() {
            Node::Object { len, .. } => len,
            _ => 0,
        };
        RawEntries {
            tape: self.tape,
            next: self.at + 1,
            left,
        }
    }

    /// `obj[key]` after JSON.parse: the last duplicate wins.
    pub fn get(&self, key: &str) -> Option<Raw<'t>> {
        self.entries()
            .filter(|(k, _)| same_key(k, key))
            .last()
            .map(|(_, v)| v)
    }

    /// Whether every object below is already in JS property order with no
    /// duplicate keys, so the raw spelling is JSON.stringify's.
    pub fn keys_in_js_order(&self) -> bool {
        let end = self.end();
        let mut i = self.at;
        while i < end {
            if let Node::Object { len, .. } = self.tape[i] {
                if len > 0 && !object_keys_plain(Raw::new(self.tape, i), len) {
                    return false;
                }
            }
            i += 1;
        }
        true
    }

    /// Properties in JS order: integer-like keys ascending, then insertion
    /// order; a duplicate key keeps its first position and its last value.
    pub fn js_entries(&self) -> Vec<(&'t str, Raw<'t>)> {
        let len = match self.node() {
            Node::Object { len, .. } => len,
            _ => 0,
        };
        let mut out: Vec<(&'t str, Raw<'t>)> = Vec::with_capacity(len);
        if len <= SMALL_OBJECT {
            for (k, v) in self.entries() {
                match out.iter_mut().find(|e| e.0 == k) {
                    Some(slot) => slot.1 = v,
                    None => out.push((k, v)),
                }
            }
        } else {
            let mut seen: HashMap<&'t str, usize> =
                HashMap::with_capacity_and_hasher(len, Default::default());
            for (k, v) in self.entries() {
                if let Some(&pos) = seen.get(k) {
                    out[pos].1 = v;
                } else {
                    seen.insert(k, out.len());
                    out.push((k, v));
                }
            }
        }
        order_integer_keys_first(&mut out, |e| e.0);
        out
    }
}

/// Key equality with the cheap tests first: property look-ups are the
/// phases' inner loop and most keys differ in length or first byte.
#[inline]
fn same_key(k: &str, key: &str) -> bool {
    k.len() == key.len() && k.as_bytes().first() == key.as_bytes().first() && k == key
}

/// Objects up to this many keys are checked by comparing keys pairwise.
const SMALL_OBJECT: usize = 16;

fn object_keys_plain(obj: Raw<'_>, len: usize) -> bool {
    if obj.entries().any(|(k, _)| {
        k.as_bytes().first().is_some_and(u8::is_ascii_digit) && array_index(k).is_some()
    }) {
        return false;
    }
    if len <= SMALL_OBJECT {
        let mut rest = obj.entries();
        while let Some((k, _)) = rest.next() {
            if rest.clone().any(|(other, _)| other == k) {
                return false;
            }
        }
        true
    } else {
        let mut keys: crate::hash::HashSet<&str> =
            crate::hash::HashSet::with_capacity_and_hasher(len, Default::default());
        obj.entries().all(|(k, _)| keys.insert(k))
    }
}

/// Stable reorder: array-index keys first, ascending, others keep their order.
fn order_integer_keys_first<T>(items: &mut [T], key: impl Fn(&T) -> &str) {
    if items.iter().any(|e| array_index(key(e)).is_some()) {
        items.sort_by_key(|e| array_index(key(e)).unwrap_or(u64::MAX));
    }
}

/// The numeric value of a canonical array-index key ("0", "17", at most
/// 2^32 - 2), the keys JS orders first.
pub fn array_index(k: &str) -> Option<u64> {
    let b = k.as_bytes();
    if b.is_empty()
        || b.len() > 10
        || !b.iter().all(u8::is_ascii_digit)
        || (b[0] == b'0' && b.len() > 1)
    {
        return None;
    }
    let v: u64 = k.parse().ok()?;
    (v <= 4_294_967_294).then_some(v)
}

pub struct RawElements<'t> {
    tape: &'t [Node<'t>],
    next: usize,
    left: usize,
}

impl<'t> Iterator for RawElements<'t> {
    type Item = Raw<'t>;
    fn next(&mut self) -> Option<Raw<'t>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let r = Raw::new(self.tape, self.next);
        self.next = r.end();
        Some(r)
    }
}

#[derive(Clone)]
pub struct RawEntries<'t> {
    tape: &'t [Node<'t>],
    next: usize,
    left: usize,
}

impl<'t> Iterator for RawEntries<'t> {
    type Item = (&'t str, Raw<'t>);
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let key = match self.tape[self.next] {
            Node::String(s) => s,
            _ => "",
        };
        let v = Raw::new(self.tape, self.next + 1);
        self.next = v.end();
        Some((key, v))
    }
}

/// An owned or partly owned value, for edited and inserted messages and for
/// the host's state and config.
#[derive(Clone)]
pub enum Val<'t> {
    Raw(Raw<'t>),
    /// A message kept by a session between renders, read in place.
    Ref(&'t Val<'t>),
    Null,
    Bool(bool),
    Num(f64),
    Str(Cow<'t, str>),
    Arr(Vec<Val<'t>>),
    /// Already in JS property order, no duplicate keys.
    Obj(Vec<(Cow<'t, str>, Val<'t>)>),
}

impl<'t> Val<'t> {
    pub fn view(&self) -> V<'_, 't> {
        V::of(self)
    }

    pub fn str(s: impl Into<Cow<'t, str>>) -> Self {
        Val::Str(s.into())
    }

    /// A shallow copy of a raw object: its properties in JS order, each value
    /// still on the tape.
    pub fn shallow_object(r: Raw<'t>) -> Vec<(Cow<'t, str>, Val<'t>)> {
        r.js_entries()
            .into_iter()
            .map(|(k, v)| (Cow::Borrowed(k), Val::Raw(v)))
            .collect()
    }

    /// A shallow owned copy of an object or array held in place (`Raw` or
    /// `Ref`), so its direct children can be replaced; other values as they
    /// are.
    pub fn make_owned(&mut self) {
        match *self {
            Val::Raw(r) => match r.node() {
                Node::Object { .. } => *self = Val::Obj(Val::shallow_object(r)),
                Node::Array { .. } => *self = Val::Arr(r.elements().map(Val::Raw).collect()),
                _ => {}
            },
            Val::Ref(inner) => match inner {
                Val::Obj(entries) => {
                    *self = Val::Obj(
                        entries
                            .iter()
                            .map(|(k, v)| (Cow::Borrowed(k.as_ref()), Val::Ref(v)))
                            .collect(),
                    )
                }
                Val::Arr(items) => *self = Val::Arr(items.iter().map(Val::Ref).collect()),
                other => {
                    *self = other.clone();
                    self.make_owned();
                }
            },
            _ => {}
        }
    }

    /// A deep copy detached from the tape.
    pub fn to_owned_val(r: Raw<'_>) -> Val<'static> {
        match r.node() {
            Node::String(s) => Val::Str(Cow::Owned(s.to_owned())),
            Node::Static(s) => static_val(s),
            Node::Array { .. } => Val::Arr(r.elements().map(Val::to_owned_val).collect()),
            Node::Object { .. } => Val::Obj(
                r.js_entries()
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.to_owned()), Val::to_owned_val(v)))
                    .collect(),
            ),
        }
    }

    pub fn set(entries: &mut [(Cow<'t, str>, Val<'t>)], key: &str, value: Val<'t>) -> bool {
        match entries.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => {
                slot.1 = value;
                true
            }
            None => false,
        }
    }
}

fn static_val(s: StaticNode) -> Val<'static> {
    match s {
        StaticNode::Null => Val::Null,
        StaticNode::Bool(b) => Val::Bool(b),
        other => Val::Num(static_num(other)),
    }
}

fn static_num(s: StaticNode) -> f64 {
    match s {
        StaticNode::I64(i) => i as f64,
        StaticNode::U64(u) => u as f64,
        StaticNode::F64(f) => tape_number(f),
        _ => f64::NAN,
    }
}

/// The type of a value as `typeof`-like cases, with its scalar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ty<'v> {
    Null,
    Bool(bool),
    Num(f64),
    Str(&'v str),
    Arr,
    Obj,
}

/// A read-only view of a value on the tape or in an owned tree.
#[derive(Clone, Copy)]
pub enum V<'v, 't> {
    R(Raw<'t>),
    O(&'v Val<'t>),
    /// A part of a value that lives as long as the tape lifetime (a
    /// session's kept message): it can be embedded with `Val::Ref` instead
    /// of copied.
    S(&'t Val<'t>),
}

impl<'v, 't: 'v> V<'v, 't> {
    pub fn of(v: &'v Val<'t>) -> Self {
        match v {
            Val::Raw(r) => V::R(*r),
            Val::Ref(inner) => V::shared(inner),
            other => V::O(other),
        }
    }

    fn shared(v: &'t Val<'t>) -> Self {
        match v {
            Val::Raw(r) => V::R(*r),
            Val::Ref(inner) => V::shared(inner),
            other => V::S(other),
        }
    }

    pub fn ty(&self) -> Ty<'v> {
        match *self {
            V::R(r) => match r.node() {
                Node::String(s) => Ty::Str(s),
                Node::Static(StaticNode::Null) => Ty::Null,
                Node::Static(StaticNode::Bool(b)) => Ty::Bool(b),
                Node::Static(s) => Ty::Num(static_num(s)),
                Node::Array { .. } => Ty::Arr,
                Node::Object { .. } => Ty::Obj,
            },
            V::O(v) | V::S(v) => match v {
                Val::Raw(r) => V::R(*r).ty(),
                Val::Ref(inner) => V::shared(inner).ty(),
                Val::Null => Ty::Null,
                Val::Bool(b) => Ty::Bool(*b),
                Val::Num(n) => Ty::Num(*n),
                Val::Str(s) => Ty::Str(s),
                Val::Arr(_) => Ty::Arr,
                Val::Obj(_) => Ty::Obj,
            },
        }
    }

    pub fn is_object(&self) -> bool {
        self.ty() == Ty::Obj
    }

    pub fn as_str(&self) -> Option<&'v str> {
        match self.ty() {
            Ty::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<V<'v, 't>> {
        match *self {
            V::R(r) => r.get(key).map(V::R),
            V::O(Val::Obj(entries)) => entries
                .iter()
                .find(|(k, _)| same_key(k, key))
                .map(|(_, v)| V::of(v)),
            V::O(Val::Raw(r)) => r.get(key).map(V::R),
            V::O(Val::Ref(inner)) => V::shared(inner).get(key),
            V::O(_) => None,
            V::S(Val::Obj(entries)) => entries
                .iter()
                .find(|(k, _)| same_key(k, key))
                .map(|(_, v)| V::shared(v)),
            V::S(other) => V::O(other).get(key),
        }
    }

    /// `x === s` for a string `s`.
    pub fn is_str(&self, s: &str) -> bool {
        self.as_str() == Some(s)
    }

    pub fn elements(&self) -> Elements<'v, 't> {
        match *self {
            V::R(r) => Elements::R(r.elements()),
            V::O(Val::Arr(items)) => Elements::O(items.iter()),
            V::O(Val::Raw(r)) => Elements::R(r.elements()),
            V::O(Val::Ref(inner)) => V::shared(inner).elements(),
            V::O(_) => Elements::O([].iter()),
            V::S(Val::Arr(items)) => Elements::S(items.iter()),
            V::S(other) => V::O(other).elements(),
        }
    }

    /// Entries in JS order (owned trees are kept in that order already).
    pub fn js_entries(&self) -> Vec<(&'v str, V<'v, 't>)> {
        match *self {
            V::R(r) => r
                .js_entries()
                .into_iter()
                .map(|(k, v)| (k, V::R(v)))
                .collect(),
            V::O(Val::Obj(entries)) => entries
                .iter()
                .map(|(k, v)| (k.as_ref(), V::of(v)))
                .collect(),
            V::O(Val::Raw(r)) => V::R(*r).js_entries(),
            V::O(Val::Ref(inner)) => V::shared(inner).js_entries(),
            V::O(_) => Vec::new(),
            V::S(Val::Obj(entries)) => entries
                .iter()
                .map(|(k, v)| (k.as_ref(), V::shared(v)))
                .collect(),
            V::S(other) => V::O(other).js_entries(),
        }
    }

    /// ECMAScript ToBoolean.
    pub fn truthy(&self) -> bool {
        match self.ty() {
            Ty::Null => false,
            Ty::Bool(b) => b,
            Ty::Num(n) => n != 0.0 && !n.is_nan(),
            Ty::Str(s) => !s.is_empty(),
            Ty::Arr | Ty::Obj => true,
        }
    }

    /// ECMAScript `String(x)` for JSON values (arrays join with commas,
    /// null and undefined elements as empty strings).
    pub fn to_js_string(&self) -> Cow<'v, str> {
        match self.ty() {
            Ty::Null => Cow::Borrowed("null"),
            Ty::Bool(b) => Cow::Borrowed(if b { "true" } else { "false" }),
            Ty::Num(n) => Cow::Owned(format_number(n)),
            Ty::Str(s) => Cow::Borrowed(s),
            Ty::Obj => Cow::Borrowed("[object Object]"),
            Ty::Arr => Cow::Owned(join_elements(self.elements())),
        }
    }

    /// ECMAScript ToNumber (after ToPrimitive for arrays and objects).
    pub fn to_number(&self) -> f64 {
        match self.ty() {
            Ty::Null => 0.0,
            Ty::Bool(b) => f64::from(u8::from(b)),
            Ty::Num(n) => n,
            Ty::Str(s) => string_to_number(s),
            Ty::Arr => string_to_number(&self.to_js_string()),
            Ty::Obj => f64::NAN,
        }
    }

    /// Identity under SameValueZero (Map/Set keys); containers are never
    /// equal to anything else.
    pub fn key(&self) -> Key<'v> {
        match self.ty() {
            Ty::Null => Key::Null,
            Ty::Bool(b) => Key::Bool(b),
            Ty::Num(n) => Key::num(n),
            Ty::Str(s) => Key::Str(s),
            Ty::Arr | Ty::Obj => Key::unique(),
        }
    }

    /// Appends JSON.stringify's text for this value.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match *self {
            V::R(r) => write_raw(out, r),
            V::O(v) | V::S(v) => write_val(out, v),
        }
    }

    /// The value as an owned tree node (raw subtrees stay on the tape).
    pub fn to_val(&self) -> Val<'t> {
        match *self {
            V::R(r) => Val::Raw(r),
            V::O(v) => v.clone(),
            V::S(v) => Val::Ref(v),
        }
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_json(&mut out);
        out
    }
}

/// `Array.prototype.join(",")` over JSON values.
pub fn join_elements<'v, 't: 'v>(items: impl Iterator<Item = V<'v, 't>>) -> String {
    let mut s = String::new();
    for (i, item) in items.enumerate() {
        if i > 0 {
            s.push(',');
        }
        if item.ty() != Ty::Null {
            s.push_str(&item.to_js_string());
        }
    }
    s
}

pub enum Elements<'v, 't> {
    R(RawElements<'t>),
    O(std::slice::Iter<'v, Val<'t>>),
    S(std::slice::Iter<'t, Val<'t>>),
}

impl<'v, 't: 'v> Iterator for Elements<'v, 't> {
    type Item = V<'v, 't>;
    fn next(&mut self) -> Option<V<'v, 't>> {
        match self {
            Elements::R(it) => it.next().map(V::R),
            Elements::O(it) => it.next().map(V::of),
            Elements::S(it) => it.next().map(V::shared),
        }
    }
}

/// A Map/Set key compared with SameValueZero. `Undefined` stands for a
/// missing property.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key<'a> {
    Undefined,
    Null,
    Bool(bool),
    Num(u64),
    Str(&'a str),
    Unique(u64),
}

impl Key<'_> {
    pub fn num(n: f64) -> Self {
        let n = if n == 0.0 {
            0.0
        } else if n.is_nan() {
            f64::NAN
        } else {
            n
        };
        Key::Num(n.to_bits())
    }

    fn unique() -> Self {
        thread_local!(static NEXT: Cell<u64> = const { Cell::new(0) });
        NEXT.with(|c| {
            let id = c.get();
            c.set(id + 1);
            Key::Unique(id)
        })
    }

    pub fn of<'v>(v: Option<V<'v, '_>>) -> Key<'v> {
        match v {
            None => Key::Undefined,
            Some(v) => v.key(),
        }
    }
}

fn write_raw(out: &mut Vec<u8>, r: Raw<'_>) {
    match r.node() {
        Node::String(s) => write_json_string(out, s),
        Node::Static(StaticNode::Null) => out.extend_from_slice(b"null"),
        Node::Static(StaticNode::Bool(b)) => {
            out.extend_from_slice(if b { b"true" } else { b"false" })
        }
        Node::Static(s) => write_json_number(out, static_num(s)),
        Node::Array { .. } => {
            out.push(b'[');
            for (i, e) in r.elements().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_raw(out, e);
            }
            out.push(b']');
        }
        Node::Object { len, .. } => {
            out.push(b'{');
            if object_keys_plain(r, len) {
                write_entries(out, r.entries());
            } else {
                write_entries(out, r.js_entries().into_iter());
            }
            out.push(b'}');
        }
    }
}

fn write_entries<'t>(out: &mut Vec<u8>, entries: impl Iterator<Item = (&'t str, Raw<'t>)>) {
    for (i, (k, v)) in entries.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_json_string(out, k);
        out.push(b':');
        write_raw(out, v);
    }
}

fn write_val(out: &mut Vec<u8>, v: &Val<'_>) {
    match v {
        Val::Raw(r) => write_raw(out, *r),
        Val::Ref(inner) => write_val(out, inner),
        Val::Null => out.extend_from_slice(b"null"),
        Val::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Val::Num(n) => write_json_number(out, *n),
        Val::Str(s) => write_json_string(out, s),
        Val::Arr(items) => {
            out.push(b'[');
            for (i, e) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_val(out, e);
            }
            out.push(b']');
        }
        Val::Obj(entries) => {
            out.push(b'{');
            for (i, (k, e)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json_string(out, k);
                out.push(b':');
                write_val(out, e);
            }
            out.push(b'}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_tape<R>(json: &str, f: impl FnOnce(Raw<'_>) -> R) -> R {
        let mut bytes = json.as_bytes().to_vec();
        let tape = simd_json::to_tape(&mut bytes).unwrap();
        f(Raw::new(&tape.0, 0))
    }

    #[test]
    fn serializes_in_js_property_order() {
        let text = r#"{"b":1,"2":true,"a":{"x":null,"x":[1.0,-0,"\u00e9"]},"1":"y","b":3}"#;
        let out = with_tape(text, |r| String::from_utf8(V::R(r).to_json()).unwrap());
        assert_eq!(out, r#"{"1":"y","2":true,"b":3,"a":{"x":[1,0,"é"]}}"#);
        assert!(!with_tape(text, |r| r.keys_in_js_order()));
        assert!(with_tape(r#"{"a":{"b":1},"c":[{"d":2}]}"#, |r| r.keys_in_js_order()));
    }

    #[test]
    fn reads_with_js_rules() {
        with_tape(
            r#"{"k":1,"k":2,"s":" 7 ","a":[5],"n":null,"e":[null,1,[2,3]],"o":{}}"#,
            |r| {
                let v = V::R(r);
                assert_eq!(v.get("k").unwrap().ty(), Ty::Num(2.0));
                assert_eq!(v.get("s").unwrap().to_number(), 7.0);
                assert_eq!(v.get("a").unwrap().to_number(), 5.0);
                assert_eq!(v.get("n").unwrap().to_number(), 0.0);
                assert_eq!(v.get("e").unwrap().to_js_string(), ",1,2,3");
                assert!(v.get("o").unwrap().to_number().is_nan());
                assert_eq!(v.get("o").unwrap().to_js_string(), "[object Object]");
                assert!(v.get("missing").is_none());
                assert_eq!(v.get("k").unwrap().key(), Key::num(2.0));
                assert_ne!(v.get("o").unwrap().key(), v.get("o").unwrap().key());
            },
        );
        assert_eq!(Key::num(-0.0), Key::num(0.0));
        assert_eq!(Key::num(f64::NAN), Key::num(-f64::NAN));
    }

    #[test]
    fn array_index_keys() {
        assert_eq!(array_index("0"), Some(0));
        assert_eq!(array_index("4294967294"), Some(4_294_967_294));
        for k in ["", "01", "-1", "4294967295", "1.5", "a"] {
            assert_eq!(array_index(k), None, "{k}");
        }
    }
}
