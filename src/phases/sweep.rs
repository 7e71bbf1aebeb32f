//! Phase 4 of 2.9.1 (SPEC-2.9 3): the orphan sweep. Providers reject a
//! tool result whose call is not open, so every such result goes: each
//! assistant opens exactly its own calls, each result answers one, and any
//! other element closes them all. It always runs, and reports what it
//! removed once per call (SPEC-2.9 4.1). The JS oracle's copy is
//! `orphanSweep` in js/pure/v2.9.js.

use sha1::{Digest, Sha1};

use super::text::write_scalar;
use super::Inputs;
use crate::error::Result;
use crate::json::text::{to_string_lossy, to_units};
use crate::json::Json;
use crate::record::{BlockType, Role, Scalar};
use crate::script::{Diagnostic, EditScript, Op, Stats};

pub fn run(
    inputs: &Inputs<'_>,
    script: &mut EditScript,
    stats: &mut Stats,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<bool> {
    let log = inputs.log;
    let mut open: Vec<Scalar> = Vec::new();
    let mut orphans: Vec<usize> = Vec::new();
    for (k, slot) in script.slots.iter().enumerate() {
        if slot.op == Op::Insert {
            open.clear();
            continue;
        }
        let i = slot.input as usize;
        let rec = &log.records[i];
        match rec.role {
            Role::Assistant => {
                open.clear();
                for b in inputs.walked_blocks(i, "the sweep reads its tool calls")? {
                    let (_, b) = b?;
                    if b.ty == BlockType::ToolCall && !open.iter().any(|o| o.same(&b.id)) {
                        open.push(b.id);
                    }
                }
            }
            Role::ToolResult => match open.iter().position(|o| o.same(&rec.tool_call_id)) {
                Some(p) => {
                    open.swap_remove(p);
                }
                None => orphans.push(k),
            },
            _ => open.clear(),
        }
    }
    if orphans.is_empty() {
        return Ok(false);
    }
    let ids: Vec<Scalar> = orphans
        .iter()
        .map(|&k| log.records[script.slots[k].input as usize].tool_call_id)
        .collect();
    diagnostics.push(report(inputs, &ids));
    stats.orphans_swept += orphans.len() as u32;
    // `orphans` is ascending: slot positions in order.
    let mut k = 0;
    script.slots.retain(|_| {
        k += 1;
        orphans.binary_search(&(k - 1)).is_err()
    });
    Ok(true)
}

/// An orphan's id for the report: its sort key (None: `undefined`, sorted
/// last) and its text in a join (`String()`'s, empty for null and
/// undefined, which `Array#join` prints as nothing).
type SortedId = (Option<Vec<u16>>, Vec<u8>);

/// The `orphan-sweep` report: the ids sorted as JS's default sort does
/// (by their string forms in UTF-16 units, stable, `undefined` last); the
/// key is the first 16 hex digits of the SHA-1 of their join.
fn report(inputs: &Inputs<'_>, ids: &[Scalar]) -> Diagnostic {
    let syms = &inputs.log.syms;
    let mut sorted: Vec<SortedId> = ids
        .iter()
        .map(|id| {
            let mut text = Vec::new();
            write_scalar(&mut text, id, syms);
            let key = (!id.is_absent()).then(|| to_units(&text));
            if id.is_nullish() {
                text.clear();
            }
            (key, text)
        })
        .collect();
    sorted.sort_by(|a, b| (a.0.is_none(), &a.0).cmp(&(b.0.is_none(), &b.0)));
    let join = |items: &[SortedId], sep: &[u8]| {
        let texts: Vec<&[u8]> = items.iter().map(|(_, text)| &text[..]).collect();
        texts.join(sep)
    };
    let digest = Sha1::digest(to_string_lossy(&join(&sorted, b",")).as_bytes());
    let key: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let n = sorted.len();
    let shown = n.min(5);
    let mut detail = format!("swept {n} orphan toolResult(s): ").into_bytes();
    detail.extend(join(&sorted[..shown], b", "));
    if n > shown {
        detail.extend_from_slice(format!(" ... +{} more", n - shown).as_bytes());
    }
    Diagnostic {
        kind: "orphan-sweep",
        key: Some(Json::str(&key)),
        detail,
    }
}
