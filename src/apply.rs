//! The byte applier: the edit script applied to message texts, giving the
//! pruned array as `JSON.stringify` would write it, and the sizes of both
//! arrays from recorded lengths. A kept message is copied as it is; an
//! edited one is its text with the content array rewritten; stubs and
//! synthetic blocks are written from `script.rs`'s shapes.

use crate::phases::Inputs;
use crate::record::{array_len, BlockType, Kind};
use crate::script::{
    inserted_len, purge_marker, purge_marker_len, stub_len, write_inserted, write_stub, EditScript,
    Op, Slot,
};

/// `JSON.stringify(message).length` of one output slot.
pub fn slot_len(inputs: &Inputs<'_>, script: &EditScript, slot: &Slot) -> usize {
    let log = inputs.log;
    match slot.op {
        Op::Keep => log.records[slot.input as usize].len as usize,
        Op::Stub => stub_len(
            &log.records[slot.input as usize],
            script.stub_text(slot),
            &log.syms,
        ),
        Op::Insert => inserted_len(&script.blocks[slot.input as usize]),
        Op::Edit => edited_len(inputs, slot),
    }
}

/// `JSON.stringify(output).length`.
pub fn output_len(inputs: &Inputs<'_>, script: &EditScript) -> usize {
    let body = script
        .slots
        .iter()
        .map(|s| slot_len(inputs, script, s))
        .sum();
    array_len(script.slots.len(), body)
}

fn removed(slot: &Slot, b: &crate::record::Block) -> bool {
    slot.strip_thinking && b.kind == Kind::Object && b.ty == BlockType::Thinking
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
pub fn write_slot(out: &mut Vec<u8>, inputs: &Inputs<'_>, script: &EditScript, slot: &Slot) {
    let log = inputs.log;
    match slot.op {
        Op::Keep => out.extend_from_slice(inputs.message_text(slot.input as usize)),
        Op::Stub => write_stub(
            out,
            &log.records[slot.input as usize],
            script.stub_text(slot),
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

/// Writes the whole pruned array.
pub fn write_output(out: &mut Vec<u8>, inputs: &Inputs<'_>, script: &EditScript) {
    out.push(b'[');
    for (n, slot) in script.slots.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write_slot(out, inputs, script, slot);
    }
    out.push(b']');
}
