//! The conversation as compact per-message records: what the phases read
//! (role, timestamp, ids, the kind and span of every content block, summary
//! refs) plus each message's exact `JSON.stringify` text and its length, so
//! a render never walks a JSON tree or serializes anything it did not
//! change. Strings the phases compare (ids, tool names) are interned
//! (`intern.rs`); values a phase only copies or measures stay spans of the
//! message text. `array.rs` reads a messages array, `scan.rs` one element
//! of it into a record; the stateless path, the session and the replay all
//! read the same `Log`.

mod array;
pub(crate) mod intern;
pub(crate) mod scan;
mod stops;

use std::ops::Range;

pub use array::{scan_array, Source};
pub use intern::{Interner, Sym};

/// A property value as the phases see it: absent (`undefined`), a JSON
/// primitive, an interned string, or an array/object (interned as its JSON
/// text; never equal to anything, as JS objects are compared by identity).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Scalar {
    #[default]
    Absent,
    Null,
    Bool(bool),
    Num(f64),
    Str(Sym),
    Object(Sym),
}

impl Scalar {
    /// SameValueZero, the comparison of `Map`/`Set` keys and of `===` on
    /// the values JSON can hold.
    pub fn same(&self, other: &Scalar) -> bool {
        match (self, other) {
            (Scalar::Absent, Scalar::Absent) | (Scalar::Null, Scalar::Null) => true,
            (Scalar::Bool(a), Scalar::Bool(b)) => a == b,
            (Scalar::Num(a), Scalar::Num(b)) => a == b,
            (Scalar::Str(a), Scalar::Str(b)) => a == b,
            _ => false,
        }
    }

    pub fn is_absent(&self) -> bool {
        matches!(self, Scalar::Absent)
    }

    pub fn as_str(&self) -> Option<Sym> {
        match self {
            Scalar::Str(s) => Some(*s),
            _ => None,
        }
    }

    /// `value === null || value === undefined`.
    pub fn is_nullish(&self) -> bool {
        matches!(self, Scalar::Absent | Scalar::Null)
    }
}

/// What an element of the messages array is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ElementKind {
    Null,
    /// A number, string, boolean or array: no properties the phases read.
    NonObject,
    #[default]
    Object,
}

/// `msg.role`, when it is one of the four the phases treat specially.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    User,
    Assistant,
    ToolResult,
    Custom,
    #[default]
    Other,
}

/// The shape of `msg.content`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Content {
    #[default]
    Absent,
    Null,
    Str,
    /// An array: its elements are `Log::blocks[blocks]`.
    Array,
    /// A number or boolean.
    Primitive,
    /// An object (not an array).
    Object,
}

/// `block.type`, for the three types the phases act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BlockType {
    Text,
    Thinking,
    ToolCall,
    #[default]
    Other,
}

/// A value's span inside its message text, with its JSON length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ValueSpan {
    pub start: u32,
    pub end: u32,
    /// UTF-16 length of the value's JSON text.
    pub len: u32,
}

impl ValueSpan {
    pub fn range(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// One element of an array `content`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Block {
    /// The element's span inside its message text (its JSON length is
    /// `span.len`).
    pub span: ValueSpan,
    pub kind: ElementKind,
    pub ty: BlockType,
    /// `block.id`.
    pub id: Scalar,
    /// `block.arguments`, when present.
    pub args: Option<ValueSpan>,
    /// `block.text`, when present (what text extraction joins).
    pub text: Option<ValueSpan>,
}

/// One element of a summary message's `details.toolCallRefs`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SummaryRef {
    pub kind: ElementKind,
    pub tool_call_id: Scalar,
    pub result_timestamp: Scalar,
}

/// `details?.toolCallRefs ?? []` of a summary message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Refs {
    /// Null, absent, or `details` itself nullish or not an object: no refs.
    #[default]
    None,
    /// An array: its elements are `Log::refs[refs]`.
    Array,
    /// Some other value, on which the reference's `.some` throws.
    Invalid,
}

/// One message (the default: an object with none of the fields read).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessageRecord {
    /// Where its canonical JSON text is (see `Log::text`).
    pub text: TextSpan,
    /// `JSON.stringify(message).length`.
    pub len: u32,
    pub kind: ElementKind,
    pub role: Role,
    pub timestamp: Scalar,
    pub tool_call_id: Scalar,
    pub tool_name: Scalar,
    /// `isError === true`.
    pub is_error: bool,
    /// `role === "custom" && customType === "context-prune-summary"`.
    pub summary: bool,
    pub content: Content,
    pub blocks: Range<u32>,
    pub refs_kind: Refs,
    pub refs: Range<u32>,
    /// A user message whose `content?.[0]?.text` starts with
    /// `<compressed-chain id="X"`: X, interned (SPEC 3, phase 3 step 1).
    pub chain_block: Option<Sym>,
    /// An array `content` holds a thinking block / a null element.
    pub has_thinking: bool,
    pub has_null_block: bool,
}

/// Where a message's text lives: in the caller's input, or in the log's own
/// bytes (a message that had to be re-serialized, or a kept one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TextSpan {
    pub owned: bool,
    pub start: u32,
    pub end: u32,
}

impl TextSpan {
    pub fn range(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// The records of one messages array.
#[derive(Default)]
pub struct Log {
    pub records: Vec<MessageRecord>,
    pub blocks: Vec<Block>,
    pub refs: Vec<SummaryRef>,
    /// Text of messages with `owned` spans.
    pub owned: Vec<u8>,
    pub syms: Interner,
    /// Every message's text is copied into `owned` (a log kept between
    /// calls cannot point into the caller's bytes).
    pub keeps_text: bool,
}

impl Log {
    /// A log that owns all its text.
    pub fn keeping_text() -> Self {
        Log {
            keeps_text: true,
            ..Log::default()
        }
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The canonical JSON text of message `i`; `input` is the bytes the
    /// borrowed spans point into.
    pub fn text<'a>(&'a self, input: &'a [u8], i: usize) -> &'a [u8] {
        let span = self.records[i].text;
        if span.owned {
            &self.owned[span.range()]
        } else {
            &input[span.range()]
        }
    }

    pub fn blocks(&self, i: usize) -> &[Block] {
        let r = &self.records[i].blocks;
        &self.blocks[r.start as usize..r.end as usize]
    }

    pub fn refs(&self, i: usize) -> &[SummaryRef] {
        let r = &self.records[i].refs;
        &self.refs[r.start as usize..r.end as usize]
    }

    /// Drops the records from `from` on (and their blocks, refs and owned
    /// text, which always sit at the end).
    pub fn truncate(&mut self, from: usize) {
        if from >= self.records.len() {
            return;
        }
        let r = &self.records[from];
        self.blocks.truncate(r.blocks.start as usize);
        self.refs.truncate(r.refs.start as usize);
        if let Some(start) = self.records[from..]
            .iter()
            .filter(|r| r.text.owned)
            .map(|r| r.text.start)
            .min()
        {
            self.owned.truncate(start as usize);
        }
        self.records.truncate(from);
    }

    /// Appends the records of `more` (read with this log's interner).
    pub fn append(&mut self, more: Log) {
        let blocks = self.blocks.len() as u32;
        let refs = self.refs.len() as u32;
        let owned = self.owned.len() as u32;
        self.records.extend(more.records.into_iter().map(|mut r| {
            r.blocks = r.blocks.start + blocks..r.blocks.end + blocks;
            r.refs = r.refs.start + refs..r.refs.end + refs;
            if r.text.owned {
                r.text.start += owned;
                r.text.end += owned;
            }
            r
        }));
        self.blocks.extend(more.blocks);
        self.refs.extend(more.refs);
        self.owned.extend(more.owned);
    }

    /// Appends the records of `more`, read with an interner of its own.
    pub fn absorb(&mut self, mut more: Log) {
        let map = self.syms.absorb(&more.syms);
        let sym = |s: &mut Sym| *s = map[*s as usize];
        let scalar = |v: &mut Scalar| {
            if let Scalar::Str(s) | Scalar::Object(s) = v {
                *s = map[*s as usize];
            }
        };
        for r in &mut more.records {
            scalar(&mut r.timestamp);
            scalar(&mut r.tool_call_id);
            scalar(&mut r.tool_name);
            if let Some(b) = &mut r.chain_block {
                sym(b);
            }
        }
        for b in &mut more.blocks {
            scalar(&mut b.id);
        }
        for r in &mut more.refs {
            scalar(&mut r.tool_call_id);
            scalar(&mut r.result_timestamp);
        }
        more.syms = Interner::default();
        self.append(more);
    }

    /// `2 + (n - 1) + Σ len`: `JSON.stringify(messages).length`.
    pub fn array_len(&self) -> usize {
        array_len(
            self.records.len(),
            self.records.iter().map(|r| r.len as usize).sum(),
        )
    }
}

/// `JSON.stringify(a).length` of an array whose elements have these lengths.
pub fn array_len(count: usize, body: usize) -> usize {
    2 + count.saturating_sub(1) + body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncating_keeps_what_comes_before() {
        let json = br#"[{"role":"assistant","content":[{"type":"text","text":"a"}]},{"role":"user","content":"x"},{"role":"custom","customType":"context-prune-summary","details":{"toolCallRefs":[{"toolCallId":"c"}]}},{"role":"user","content":"y"}]"#;
        let mut log = Log::keeping_text();
        scan_array(json, &mut log, 0, Source::Bytes).unwrap();
        let full_blocks = log.blocks(0).to_vec();
        log.truncate(3);
        assert_eq!(log.blocks(0), full_blocks.as_slice());
        assert_eq!(log.refs(2).len(), 1);
        log.truncate(1);
        assert_eq!(log.blocks(0), full_blocks.as_slice());
        let mut more = Log::keeping_text();
        std::mem::swap(&mut more.syms, &mut log.syms);
        scan_array(
            br#"[{"role":"user","content":[{"type":"text","text":"z"}]}]"#,
            &mut more,
            1,
            Source::Stringify,
        )
        .unwrap();
        std::mem::swap(&mut more.syms, &mut log.syms);
        log.append(more);
        assert_eq!(log.len(), 2);
        assert_eq!(log.blocks(1).len(), 1);
        assert_eq!(
            log.text(&[], 1),
            br#"{"role":"user","content":[{"type":"text","text":"z"}]}"#
        );
        assert_eq!(
            log.text(&[], 0),
            br#"{"role":"assistant","content":[{"type":"text","text":"a"}]}"#
        );
    }
}
