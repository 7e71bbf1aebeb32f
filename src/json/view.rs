//! Reading a tape (`tape.rs`) with JavaScript's rules: property access where
//! a duplicated key yields its last value, an object's own properties in JS
//! order, truthiness, `typeof`, `String()`, and the identity of a value as a
//! `Map` key. Strings come out as their canonical text (`text.rs`), the one
//! form every string of the crate has. Everything borrows the text.

use std::borrow::Cow;

use super::lex::array_index;
use super::lex::number_value;
use super::tape::{Kind, Node, Tape};
use super::text;
use crate::json::format_number;

/// A node of a read text, with the text and tape it lives in.
#[derive(Clone, Copy)]
pub struct Value<'a> {
    text: &'a [u8],
    tape: &'a Tape,
    at: u32,
}

impl std::fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", String::from_utf8_lossy(self.span()))
    }
}

impl<'a> Value<'a> {
    /// The root of a read text.
    pub fn root(text: &'a [u8], tape: &'a Tape) -> Self {
        Value { text, tape, at: 0 }
    }

    fn node(&self) -> Node {
        self.tape.nodes[self.at as usize]
    }

    fn at(&self, at: u32) -> Value<'a> {
        Value { at, ..*self }
    }

    pub fn kind(&self) -> Kind {
        self.node().kind
    }

    /// Whether the text is JSON.stringify's text of its value.
    pub fn canonical(&self) -> bool {
        self.tape.canonical
    }

    /// The value's own text (strings with their quotes).
    pub fn span(&self) -> &'a [u8] {
        let n = self.node();
        match n.kind {
            Kind::String => &self.text[n.start as usize - 1..n.end as usize + 1],
            _ => &self.text[n.start as usize..n.end as usize],
        }
    }

    /// Identity of an object or array: `===` between two of them is true only
    /// for the same node of the same text.
    pub fn identity(&self) -> u64 {
        (u64::from(self.tape.ordinal) << 32) | u64::from(self.at)
    }

    pub fn is_object(&self) -> bool {
        self.kind() == Kind::Object
    }

    pub fn is_array(&self) -> bool {
        self.kind() == Kind::Array
    }

    pub fn is_null(&self) -> bool {
        self.kind() == Kind::Null
    }

    /// `typeof v === "object"` (arrays and null included).
    pub fn is_typeof_object(&self) -> bool {
        matches!(self.kind(), Kind::Object | Kind::Array | Kind::Null)
    }

    /// JavaScript truthiness (`null`, `false`, `0`, `-0` and `""` are falsy).
    pub fn truthy(&self) -> bool {
        match self.kind() {
            Kind::Null | Kind::False => false,
            Kind::True | Kind::Array | Kind::Object => true,
            Kind::Number => self.number().is_some_and(|n| n != 0.0 && !n.is_nan()),
            Kind::String => {
                let n = self.node();
                n.end > n.start
            }
        }
    }

    pub fn number(&self) -> Option<f64> {
        (self.kind() == Kind::Number).then(|| number_value(self.span()))
    }

    /// The string's canonical text, or None for other kinds. Borrowed from
    /// the text unless the string holds an escape JS would not write.
    pub fn string(&self) -> Option<Cow<'a, [u8]>> {
        let n = self.node();
        (n.kind == Kind::String).then(|| {
            let body = &self.text[n.start as usize..n.end as usize];
            if n.escaped {
                Cow::Owned(text::of_body(body))
            } else {
                Cow::Borrowed(body)
            }
        })
    }

    /// `v === "literal"`.
    pub fn is_str(&self, literal: &str) -> bool {
        let n = self.node();
        if n.kind != Kind::String {
            return false;
        }
        let body = &self.text[n.start as usize..n.end as usize];
        if n.escaped {
            text::is_text_of(&text::of_body(body), literal)
        } else {
            text::is_text_of(body, literal)
        }
    }

    /// How deep the value nests: 0 for a primitive, 1 for an array or object
    /// of primitives, and so on (`lex::MAX_DEPTH`'s levels).
    pub fn depth(&self) -> usize {
        let nodes = &self.tape.nodes;
        let mut ends: Vec<u32> = Vec::new();
        let mut deepest = 0;
        for at in self.at..self.node().next {
            while ends.last().is_some_and(|&e| e <= at) {
                ends.pop();
            }
            if matches!(nodes[at as usize].kind, Kind::Array | Kind::Object) {
                ends.push(nodes[at as usize].next);
                deepest = deepest.max(ends.len());
            }
        }
        deepest
    }

    /// The child nodes when this is a `kind` container (none otherwise).
    fn children(&self, kind: Kind) -> Elements<'a> {
        let n = self.node();
        let (next, end) = if n.kind == kind {
            (self.at + 1, n.next)
        } else {
            (0, 0)
        };
        Elements {
            v: *self,
            next,
            end,
        }
    }

    /// MemberPairs in document order, duplicates included.
    pub fn members(&self) -> MemberPairs<'a> {
        MemberPairs(self.children(Kind::Object))
    }

    /// Elements of an array (none for other kinds).
    pub fn elements(&self) -> Elements<'a> {
        self.children(Kind::Array)
    }

    /// Property access on a parsed object: the last member with that key.
    /// Other kinds have no own JSON properties (`(5).x`, `[].x` are
    /// undefined).
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        let mut found = None;
        for (k, v) in self.members() {
            if k.is_str(key) {
                found = Some(v);
            }
        }
        found
    }

    /// This value's node index in its text.
    pub fn index(&self) -> u32 {
        self.at
    }

    /// The value at a node index of the same text.
    pub fn node_value(&self, at: u32) -> Value<'a> {
        self.at(at)
    }

    /// Appends JavaScript's `String(v)` (canonical text): arrays join their elements
    /// with `,` (null and undefined as empty), objects are
    /// `[object Object]`.
    pub fn write_to_string(&self, out: &mut Vec<u8>) {
        match self.kind() {
            Kind::Null => out.extend_from_slice(b"null"),
            Kind::False => out.extend_from_slice(b"false"),
            Kind::True => out.extend_from_slice(b"true"),
            Kind::Number => {
                out.extend_from_slice(format_number(self.number().unwrap_or(f64::NAN)).as_bytes())
            }
            Kind::String => out.extend_from_slice(&self.string().unwrap_or_default()),
            Kind::Object => out.extend_from_slice(b"[object Object]"),
            Kind::Array => {
                for (i, e) in self.elements().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    if !e.is_null() {
                        e.write_to_string(out);
                    }
                }
            }
        }
    }

    pub fn to_js_string(self) -> Cow<'a, [u8]> {
        if let Some(s) = self.string() {
            return s;
        }
        let mut out = Vec::new();
        self.write_to_string(&mut out);
        Cow::Owned(out)
    }
}

/// An object's own properties as JS holds them after `JSON.parse`: each key
/// (canonical text) once, at its first position, with its last value; array
/// indices first, ascending.
pub fn js_members(v: Value<'_>) -> Vec<(Cow<'_, [u8]>, Value<'_>)> {
    let mut list: Vec<(Cow<'_, [u8]>, Value<'_>)> = Vec::new();
    let mut index: Option<crate::hash::HashMap<Vec<u8>, usize>> = None;
    for (k, val) in v.members() {
        let key = k.string().unwrap_or_default();
        let found = match &index {
            Some(map) => map.get(&*key).copied(),
            None => list.iter().position(|(have, _)| *have == key),
        };
        match found {
            Some(at) => list[at].1 = val,
            None => {
                if let Some(map) = &mut index {
                    map.insert(key.to_vec(), list.len());
                }
                list.push((key, val));
                if index.is_none() && list.len() > 16 {
                    index = Some(
                        list.iter()
                            .enumerate()
                            .map(|(i, (k, _))| (k.to_vec(), i))
                            .collect(),
                    );
                }
            }
        }
    }
    if list.iter().any(|(k, _)| array_index(k).is_some()) {
        // Stable: plain keys keep their order.
        list.sort_by_key(|(k, _)| array_index(k).map_or(u64::MAX, u64::from));
    }
    list
}

/// An object's children taken two by two: a key node, then its value.
pub struct MemberPairs<'a>(Elements<'a>);

impl<'a> Iterator for MemberPairs<'a> {
    type Item = (Value<'a>, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let key = self.0.next()?;
        Some((key, self.0.next()?))
    }
}

/// A container's child nodes in order (see `Value::children`).
pub struct Elements<'a> {
    v: Value<'a>,
    next: u32,
    end: u32,
}

impl<'a> Iterator for Elements<'a> {
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let e = self.v.at(self.next);
        self.next = e.node().next;
        Some(e)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::json::read::{read, Input};

    pub fn tape(s: &str) -> Tape {
        read(s.as_bytes(), Input::BYTES).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn reads_like_javascript() {
        let text = r#"{"a":1,"b":"x","a":2,"e":"\u0061","arr":[1,null,[2,"s"],{}],"z":0,"s":""}"#;
        let t = tape(text);
        let v = Value::root(text.as_bytes(), &t);
        assert_eq!(v.get("a").unwrap().number(), Some(2.0));
        assert!(v.get("e").unwrap().is_str("a"));
        assert!(v.get("missing").is_none());
        assert!(!v.get("z").unwrap().truthy());
        assert!(!v.get("s").unwrap().truthy());
        assert!(v.get("arr").unwrap().truthy());
        assert_eq!(
            &*v.get("arr").unwrap().to_js_string(),
            b"1,,2,s,[object Object]"
        );
        assert_eq!(v.members().count(), 7);
        assert_eq!(v.get("arr").unwrap().elements().count(), 4);
        assert_eq!(v.get("b").unwrap().span(), br#""x""#);
        assert_eq!(v.depth(), 3);
        assert_eq!(v.get("arr").unwrap().depth(), 2);
        assert_eq!(v.get("z").unwrap().depth(), 0);
    }

    #[test]
    fn strings_are_canonical_text() {
        let text = r#"["a\nb","\u00e9\/","\ud83d\ude00","\ud800","\u0041\"","\uD800x"]"#;
        let t = tape(text);
        let v = Value::root(text.as_bytes(), &t);
        let got: Vec<Vec<u8>> = v
            .elements()
            .map(|e| e.string().unwrap().into_owned())
            .collect();
        let want: [&[u8]; 6] = [
            br"a\nb",
            "é/".as_bytes(),
            "😀".as_bytes(),
            br"\ud800",
            br#"A\""#,
            br"\ud800x",
        ];
        assert_eq!(got, want);
        let first = v.elements().next().unwrap().string();
        assert!(matches!(first, Some(Cow::Borrowed(_))));
        assert!(v.elements().nth(4).unwrap().is_str("A\""));
    }
}
