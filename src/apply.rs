//! The byte applier: the edit script applied to message texts, giving the
//! pruned array as `JSON.stringify` would write it, and the sizes of both
//! arrays from recorded lengths. A kept message is copied as it is; an
//! edited one is its text with the content array rewritten; stubs and
//! synthetic blocks are written from `script.rs`'s shapes.

use crate::phases::{Inputs, Memo};
use crate::record::{array_len, BlockType, ElementKind};
use crate::script::{
    inserted_len, purge_marker, purge_marker_len, stub_len, write_inserted, write_stub, EditScript,
    Op, Slot,
};

/// `JSON.stringify(message).length` of one output slot.
pub fn slot_len(inputs: &Inputs<'_>, memo: &Memo, script: &EditScript, slot: &Slot) -> usize {
    let log = inputs.log;
    match slot.op {
        Op::Keep => log.records[slot.input as usize].len as usize,
        Op::Stub => stub_len(
            &log.records[slot.input as usize],
            memo.text(slot.text),
            &log.syms,
        ),
        Op::Insert => inserted_len(&script.blocks[slot.input as usize]),
        Op::Edit => edited_len(inputs, slot),
    }
}

/// `JSON.stringify(output).length`.
pub fn output_len(inputs: &Inputs<'_>, memo: &Memo, script: &EditScript) -> usize {
    let body = script
        .slots
        .iter()
        .map(|s| slot_len(inputs, memo, script, s))
        .sum();
    array_len(script.slots.len(), body)
}

fn removed(slot: &Slot, b: &crate::record::Block) -> bool {
    slot.strip_thinking && b.kind == ElementKind::Object && b.ty == BlockType::Thinking
}

fn purged_len(slot: &Slot, j: usize) -> Option<u32> {
    slot.purged
        .iter()
        .find(|(k, _)| *k as usize == j)
        .map(|&(_, len)| len)
}

fn edited_len(inputs: &Inputs<'_>, slot: &Slot) -> usize {
    let i = slot.input as usize;
    let rec = &inputs.log.records[i];
    let blocks = inputs.log.blocks(i);
    if blocks.is_empty() {
        return rec.len as usize;
    }
    let before = array_len(
        blocks.len(),
        blocks.iter().map(|b| b.span.len as usize).sum(),
    );
    let mut kept = 0usize;
    let mut body = 0usize;
    for (j, b) in blocks.iter().enumerate() {
        if removed(slot, b) {
            continue;
        }
        kept += 1;
        body += b.span.len as usize;
        if let (Some(len), Some(args)) = (purged_len(slot, j), b.args) {
            body = body - args.len as usize + purge_marker_len(len);
        }
    }
    let after = if kept == 0 { 2 } else { array_len(kept, body) };
    rec.len as usize - before + after
}

/// Appends the JSON text of one output slot.
pub fn write_slot(
    out: &mut Vec<u8>,
    inputs: &Inputs<'_>,
    memo: &Memo,
    script: &EditScript,
    slot: &Slot,
) {
    let log = inputs.log;
    match slot.op {
        Op::Keep => out.extend_from_slice(inputs.message_text(slot.input as usize)),
        Op::Stub => write_stub(
            out,
            &log.records[slot.input as usize],
            memo.text(slot.text),
            &log.syms,
        ),
        Op::Insert => write_inserted(out, &script.blocks[slot.input as usize]),
        Op::Edit => write_edited(out, inputs, slot),
    }
}

fn write_edited(out: &mut Vec<u8>, inputs: &Inputs<'_>, slot: &Slot) {
    let i = slot.input as usize;
    let text = inputs.message_text(i);
    let blocks = inputs.log.blocks(i);
    let (Some(first), Some(last)) = (blocks.first(), blocks.last()) else {
        out.extend_from_slice(text);
        return;
    };
    // The content array runs from the `[` before its first element to the
    // `]` after its last (the text is canonical: nothing in between).
    let open = first.span.start as usize - 1;
    let close = last.span.end as usize + 1;
    out.extend_from_slice(&text[..open]);
    out.push(b'[');
    let mut any = false;
    for (j, b) in blocks.iter().enumerate() {
        if removed(slot, b) {
            continue;
        }
        if any {
            out.push(b',');
        }
        any = true;
        let span = &text[b.span.range()];
        match (purged_len(slot, j), b.args) {
            (Some(len), Some(args)) => {
                let (a0, a1) = (
                    (args.start - b.span.start) as usize,
                    (args.end - b.span.start) as usize,
                );
                out.extend_from_slice(&span[..a0]);
                out.extend_from_slice(&purge_marker(len));
                out.extend_from_slice(&span[a1..]);
            }
            _ => out.extend_from_slice(span),
        }
    }
    out.push(b']');
    out.extend_from_slice(&text[close..]);
}

/// Where each part of the output comes from: a kept message's text, or
/// bytes written into the plan's scratch (edited messages, stubs, blocks).
enum Piece {
    Kept(u32),
    Written(u32, u32),
}

/// The pruned array's bytes, planned so that they can be written once into
/// memory of the exact size (a JS Buffer) rather than built and copied.
pub struct OutputPlan {
    pieces: Vec<Piece>,
    scratch: Vec<u8>,
    len: usize,
}

impl OutputPlan {
    pub fn new(inputs: &Inputs<'_>, memo: &Memo, script: &EditScript) -> Self {
        let mut pieces = Vec::with_capacity(script.slots.len());
        let mut scratch = Vec::new();
        // The brackets and the commas.
        let mut len = 1 + script.slots.len().max(1);
        for slot in &script.slots {
            if slot.op == Op::Keep {
                let text = inputs.log.records[slot.input as usize].text;
                len += (text.end - text.start) as usize;
                pieces.push(Piece::Kept(slot.input));
            } else {
                let start = scratch.len();
                write_slot(&mut scratch, inputs, memo, script, slot);
                len += scratch.len() - start;
                pieces.push(Piece::Written(start as u32, scratch.len() as u32));
            }
        }
        OutputPlan {
            pieces,
            scratch,
            len,
        }
    }

    /// The output's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Writes the output into `dst`, which holds exactly `len()` bytes.
    pub fn write(&self, inputs: &Inputs<'_>, dst: &mut [u8]) {
        assert_eq!(
            dst.len(),
            self.len,
            "the output buffer has the planned size"
        );
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            dst[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        put(b"[");
        for (n, piece) in self.pieces.iter().enumerate() {
            if n > 0 {
                put(b",");
            }
            match *piece {
                Piece::Kept(i) => put(inputs.message_text(i as usize)),
                Piece::Written(a, b) => put(&self.scratch[a as usize..b as usize]),
            }
        }
        put(b"]");
    }
}

/// Writes the whole pruned array.
pub fn write_output(out: &mut Vec<u8>, inputs: &Inputs<'_>, memo: &Memo, script: &EditScript) {
    let plan = OutputPlan::new(inputs, memo, script);
    let at = out.len();
    out.resize(at + plan.len(), 0);
    plan.write(inputs, &mut out[at..]);
}
