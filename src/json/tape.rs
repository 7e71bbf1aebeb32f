//! What the reader (`read.rs`) makes of a JSON text: a flat, pre-order list
//! of nodes whose strings and numbers are spans of the text itself, so
//! reading copies no text. A text that is exactly what `JSON.stringify`
//! would write for its value is marked canonical: then the text of any node
//! is its `JSON.stringify` text too, and writers copy spans instead of
//! re-serializing (`stringify.rs`).

/// What a node is. Object members are stored as a key node (a `String`)
/// followed by the value's subtree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Null,
    False,
    True,
    Number,
    String,
    Array,
    Object,
}

/// One node. Offsets are bytes of the text.
/// - `String`: `start..end` is the body between the quotes; `escaped` when
///   it holds an escape `JSON.stringify` would not write (so the body is not
///   its canonical text, `text.rs`, and must be decoded).
/// - `Number` and literals: `start..end` is the token.
/// - `Array`/`Object`: `start..end` runs from the opening bracket to just
///   past the closing one; `next` is the index of the node after the
///   subtree.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub kind: Kind,
    pub escaped: bool,
    pub start: u32,
    pub end: u32,
    pub next: u32,
}

/// A read text: its nodes (the root is node 0), whether the root's text is
/// canonical JSON, and how deep its containers nest (`lex::MAX_DEPTH`'s
/// levels). `ordinal` tells session lines apart, so that objects read from
/// different lines never compare equal (`===` on objects is identity).
#[derive(Debug, Default)]
pub struct Tape {
    pub nodes: Vec<Node>,
    pub canonical: bool,
    pub depth: u32,
    pub ordinal: u32,
}
