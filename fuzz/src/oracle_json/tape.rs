//! The oracle: src/sessionfile/json/tape.rs as at 42cc795. The parsed form of one line: a flat, pre-order list of nodes whose
//! strings and numbers are spans of the line's own text, so parsing copies
//! no text. A line whose text is exactly what `JSON.stringify` would write
//! for its parsed value is marked canonical: then the text of any node is its
//! JSON.stringify text too, and writers copy spans instead of re-serializing.

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

/// One node. Offsets are bytes of the line's text.
/// - `String`: `start..end` is the body between the quotes; `escaped` when
///   it holds a backslash.
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

/// A parsed line: its nodes (the root is node 0) and whether the root's text
/// is canonical JSON. `ordinal` tells lines apart, so that objects parsed
/// from different places never compare equal (`===` on objects is identity).
#[derive(Debug, Default)]
pub struct Tape {
    pub nodes: Vec<Node>,
    pub canonical: bool,
    pub ordinal: u32,
}
