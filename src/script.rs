//! The edit script: what the phases decided, per output slot. A slot keeps
//! the caller's message `i`, replaces it with a stub, keeps it with some
//! tool-call arguments purged and/or its thinking blocks removed, or inserts
//! a synthetic chain block. Two appliers consume it: the byte applier
//! (`apply.rs`) writes the pruned JSON, and the JS applier
//! (`js/applier.js`) builds the pruned array from the caller's own objects.
//! Both rely on one invariant: applying the script to the input gives
//! exactly the array the reference returns. The shapes a slot turns into
//! (the stub envelope, the purge marker, the synthetic block) are defined
//! here, once for Rust; their JavaScript copies are the oracle's
//! (`stubMessage` and `syntheticBlock` in js/pure/rules.js,
//! `purgedArguments` in js/pure/purge.js), which `js/applier.js` calls.

use crate::json::text::write_quoted;
use crate::json::{utf16_len, Json};
use crate::record::{MessageRecord, Scalar};

/// What one output slot is. The discriminants are the opcodes the JS
/// applier reads (`js/applier.js`, `OP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Op {
    /// The caller's message `input`, unchanged.
    Keep = 0,
    /// A stub in place of tool result `input` (SPEC 3, phase 1).
    Stub = 1,
    /// Message `input` with arguments purged (phase 2) and/or thinking
    /// removed (phases 3 and 4).
    Edit = 2,
    /// Synthetic chain block `input` (an index into `EditScript::blocks`).
    Insert = 3,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Slot {
    pub op: Op,
    /// The input message, or for `Insert` the synthetic block.
    pub input: u32,
    /// `Stub`: its text (`Memo::text`).
    pub text: u32,
    /// `Edit`: every thinking block is removed.
    pub strip_thinking: bool,
    /// `Edit`: (content index, purged argument length) per purged block.
    pub purged: Vec<(u32, u32)>,
}

impl Slot {
    pub fn keep(i: usize) -> Self {
        Slot {
            op: Op::Keep,
            input: i as u32,
            text: 0,
            strip_thinking: false,
            purged: Vec::new(),
        }
    }

    /// The input message this slot shows, if any.
    pub fn input(&self) -> Option<usize> {
        (self.op != Op::Insert).then_some(self.input as usize)
    }

    /// The edit form of this slot (a stub is never edited further: phase 2
    /// and the thinking phases only touch assistants).
    fn make_edit(&mut self) {
        if self.op == Op::Keep {
            self.op = Op::Edit;
        }
    }

    pub fn purge(&mut self, block: usize, len: u32) {
        self.make_edit();
        self.purged.push((block as u32, len));
    }

    pub fn strip_thinking(&mut self) {
        self.make_edit();
        self.strip_thinking = true;
    }
}

/// A synthetic chain block: `{role:"user", content:[{type:"text", text}],
/// timestamp?}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Inserted {
    /// Canonical text (shared with the memo that built it: synthetic blocks
    /// can be large, a kept engine rebuilds one only when it changes).
    pub text: std::rc::Rc<[u8]>,
    /// The entry's `compressedAt`; None when absent (no `timestamp` key).
    pub timestamp: Option<Json>,
}

/// An inserted block's text as a map key, compared by identity: the memo
/// builds a new one whenever the text changes, and the key keeps it alive,
/// so identity is equality here without hashing megabytes per render (the
/// engine's edit keys, the replay's digests).
#[derive(Debug, Clone)]
pub struct SharedText(pub std::rc::Rc<[u8]>);

impl PartialEq for SharedText {
    fn eq(&self, other: &Self) -> bool {
        std::rc::Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SharedText {}

impl std::hash::Hash for SharedText {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::ptr::hash(self.0.as_ptr(), h);
    }
}

/// What each phase changed, for reports.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub stubbed: u32,
    pub purged_args: u32,
    pub chain_dropped: u32,
    pub chain_inserted: u32,
    pub final_thinking_stripped: u32,
    pub thinking_stripped: u32,
    pub orphans_swept: u32,
}

/// 2.9.1's side channel (SPEC-2.9 4.1).
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub kind: &'static str,
    /// A string, except that a blockId is passed on as it is (None:
    /// `undefined`).
    pub key: Option<Json>,
    /// Canonical text.
    pub detail: Vec<u8>,
}

/// The diagnostics of a render as one JSON text for JS (`to_value` each;
/// lone surrogates stay escapes), or None when there are none.
pub fn diagnostics_json(ds: &[Diagnostic]) -> Option<String> {
    if ds.is_empty() {
        return None;
    }
    let items = ds.iter().map(Diagnostic::to_value).collect();
    Some(crate::json::text::utf8_string(Json::Arr(items).to_json()))
}

impl Diagnostic {
    /// The diagnostic as the API reports it: `{kind, key, detail}`, `key`
    /// omitted when it is `undefined` (a blockId that is absent).
    pub fn to_value(&self) -> Json {
        let mut entries = vec![(b"kind".as_slice().into(), Json::str(self.kind))];
        if let Some(k) = &self.key {
            entries.push((b"key".as_slice().into(), k.clone()));
        }
        entries.push((
            b"detail".as_slice().into(),
            Json::Str(self.detail.clone().into_boxed_slice()),
        ));
        Json::Obj(entries)
    }
}

#[derive(Debug, Clone, Default)]
pub struct EditScript {
    pub slots: Vec<Slot>,
    pub blocks: Vec<Inserted>,
    /// Some phase changed something; when false the call answers with the
    /// caller's own array and 0/0 sizes.
    pub changed: bool,
    pub stats: Stats,
    pub diagnostics: Vec<Diagnostic>,
}

impl EditScript {
    /// As `identity`, in the allocation of `slots` (whatever it held goes).
    pub fn identity_in(n: usize, mut slots: Vec<Slot>) -> Self {
        slots.clear();
        slots.extend((0..n).map(Slot::keep));
        EditScript {
            slots,
            ..EditScript::default()
        }
    }

    /// Replaces slot `slot` with a stub whose text is `text` (a `Memo`
    /// text id).
    pub fn stub(&mut self, slot: usize, text: u32) {
        let s = &mut self.slots[slot];
        s.op = Op::Stub;
        s.text = text;
    }
}

// The shapes, spelled once.

/// The purge marker's value text: `<purged-errored-args size="N"/>`
/// (JS: `purgedArguments` in js/pure/purge.js).
pub fn purge_marker(len: u32) -> Vec<u8> {
    format!("{{\"_purged\":\"<purged-errored-args size=\\\"{len}\\\"/>\"}}").into_bytes()
}

/// JSON length of the purge marker object.
pub fn purge_marker_len(len: u32) -> usize {
    // {"_purged":"<purged-errored-args size=\"N\"/>"}
    // Its decimal digits.
    46 + len.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Appends a message property `,"key":value`, or nothing for an absent one.
fn write_property(out: &mut Vec<u8>, key: &[u8], s: &Scalar, syms: &crate::record::Interner) {
    if let Some(value) = scalar_json(s, syms) {
        out.push(b',');
        write_quoted(out, key);
        out.push(b':');
        out.extend_from_slice(&value);
    }
}

/// The JSON text of a scalar the phases read (None: absent).
pub fn scalar_json(s: &Scalar, syms: &crate::record::Interner) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    match s {
        Scalar::Absent => return None,
        Scalar::Null => out.extend_from_slice(b"null"),
        Scalar::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Scalar::Num(n) => crate::json::write_json_number(&mut out, *n),
        Scalar::Str(s) => write_quoted(&mut out, syms.text(*s)),
        Scalar::Object(s) => out.extend_from_slice(syms.text(*s)),
    }
    Some(out)
}

/// The stub that replaces tool result `rec` (SPEC 3, phase 1): exactly
/// `role, toolCallId, toolName, content, isError, timestamp`, in that
/// order, the three copied ones only when present (JS: `stubMessage` in
/// js/pure/rules.js).
pub fn write_stub(
    out: &mut Vec<u8>,
    rec: &MessageRecord,
    text: &[u8],
    syms: &crate::record::Interner,
) {
    out.extend_from_slice(br#"{"role":"toolResult""#);
    write_property(out, b"toolCallId", &rec.tool_call_id, syms);
    write_property(out, b"toolName", &rec.tool_name, syms);
    out.extend_from_slice(br#","content":[{"type":"text","text":"#);
    write_quoted(out, text);
    out.extend_from_slice(br#"}],"isError":false"#);
    write_property(out, b"timestamp", &rec.timestamp, syms);
    out.push(b'}');
}

/// The synthetic chain block (SPEC 3, phase 3 step 4; JS: `syntheticBlock`
/// in js/pure/rules.js).
pub fn write_inserted(out: &mut Vec<u8>, block: &Inserted) {
    out.extend_from_slice(br#"{"role":"user","content":[{"type":"text","text":"#);
    write_quoted(out, &block.text);
    out.extend_from_slice(b"}]");
    if let Some(t) = &block.timestamp {
        out.extend_from_slice(br#","timestamp":"#);
        t.write_json(out);
    }
    out.push(b'}');
}

/// JSON lengths of the stub and inserted shapes, without writing them.
pub fn stub_len(rec: &MessageRecord, text: &[u8], syms: &crate::record::Interner) -> usize {
    let prop = |key_len: usize, s: &Scalar| {
        scalar_json(s, syms).map_or(0, |v| 4 + key_len + utf16_len(&v))
    };
    // {"role":"toolResult" ,"content":[{"type":"text","text": "..." }],"isError":false }
    20 + prop(10, &rec.tool_call_id)
        + prop(8, &rec.tool_name)
        + 34
        + 2
        + utf16_len(text)
        + 18
        + prop(9, &rec.timestamp)
        + 1
}

pub fn inserted_len(block: &Inserted) -> usize {
    // {"role":"user","content":[{"type":"text","text": "..." }] ,"timestamp":T }
    48 + 2
        + utf16_len(&block.text)
        + 2
        + block
            .timestamp
            .as_ref()
            .map_or(0, |t| 13 + utf16_len(&t.to_json()))
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Log;
    use crate::record::{scan_array, Source};

    #[test]
    fn lengths_match_what_is_written() {
        for (i, json) in [
            r#"[{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[],"isError":true,"timestamp":2}]"#,
            r#"[{"role":"toolResult","content":[],"isError":true}]"#,
            r#"[{"role":"toolResult","toolCallId":{"a":[1,"é"]},"toolName":null,"timestamp":"x"}]"#,
        ]
        .iter()
        .enumerate()
        {
            let mut log = Log::default();
            scan_array(json.as_bytes(), &mut log, 0, Source::Bytes).unwrap();
            let text = "[Summarized — `t1` \\n]".as_bytes();
            let mut out = Vec::new();
            write_stub(&mut out, &log.records[0], text, &log.syms);
            assert_eq!(stub_len(&log.records[0], text, &log.syms), utf16_len(&out), "case {i}");
            assert!(crate::json::parse_value(&out).is_ok());
        }
        for ts in [None, Some(Json::Num(1.5e21)), Some(Json::Null)] {
            let block = Inserted {
                text: "<compressed-chain id=\\\"b1\\\">é".as_bytes().into(),
                timestamp: ts,
            };
            let mut out = Vec::new();
            write_inserted(&mut out, &block);
            assert_eq!(inserted_len(&block), utf16_len(&out));
        }
        for n in [0, 9, 10, 123456] {
            assert_eq!(purge_marker_len(n), utf16_len(&purge_marker(n)), "{n}");
        }
        assert_eq!(
            purge_marker(512),
            br#"{"_purged":"<purged-errored-args size=\"512\"/>"}"#.to_vec()
        );
    }
}
