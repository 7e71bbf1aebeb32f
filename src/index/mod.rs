//! Bytes in, tape and per-message spans out.

pub mod reuse;
pub mod scan;

use rayon::prelude::*;
use simd_json::{Node, Tape};

use crate::error::{PruneError, Result};
use crate::jsjson::lone::{holds_stand_ins, stand_in, with_infinity_mode, INFINITY_SENTINEL_TEXT};
use crate::value::{Raw, Val};
use scan::{scan, Rewrite, Scan, Span};

/// What a text holds that needs lone mode (see `jsjson::lone`).
#[derive(Debug, Default, Clone, Copy)]
pub struct TextFlags {
    pub lone_surrogates: bool,
    pub stand_ins: bool,
    /// Numbers overflowing to Infinity were spelled as the sentinel.
    pub infinities: bool,
    pub infinity_sentinel: bool,
}

impl TextFlags {
    /// Lone mode for a call over several texts, or a typed error when one
    /// holds lone surrogates and another real stand-in characters.
    pub fn lone_mode(parts: &[TextFlags]) -> Result<bool> {
        let lone = parts.iter().any(|p| p.lone_surrogates);
        if lone && parts.iter().any(|p| p.stand_ins) {
            return Err(PruneError::new(
                "ERR_CONDENSE_LONE_SURROGATE",
                "lone surrogates cannot be kept exactly in a call whose text also holds characters U+10D800..U+10DFFF (the stand-ins for lone surrogates)",
            ));
        }
        Ok(lone)
    }

    /// Infinity mode for a call over several texts, refused when one of
    /// them holds the sentinel number itself.
    pub fn infinity_mode(parts: &[TextFlags]) -> Result<bool> {
        let on = parts.iter().any(|p| p.infinities);
        if on && parts.iter().any(|p| p.infinity_sentinel) {
            return Err(PruneError::invalid_json(
                "numbers that overflow to Infinity cannot be kept exactly in a call that also holds the number 1.2345678901234e-310",
            ));
        }
        Ok(on)
    }
}

/// The scanner's findings and the private copy simd-json will parse (the
/// caller's bytes are never written).
pub struct Prepared {
    pub spans: Vec<Span>,
    /// The scanner saw a whole, closed array and the scratch copy is the
    /// input as it is, so each span can be parsed on its own.
    pub splittable: bool,
    pub scratch: Vec<u8>,
    pub flags: TextFlags,
    /// An escaped surrogate pair spells a stand-in character.
    pub escaped_stand_in: bool,
}

pub fn prepare(input: &[u8]) -> Result<Prepared> {
    let Scan {
        spans,
        rewrites,
        escaped_stand_in,
        holds_infinity_sentinel,
        complete,
    } = scan(input)?;
    let splittable = complete && rewrites.is_empty();
    let lone = rewrites
        .iter()
        .any(|r| matches!(r.2, Rewrite::LoneSurrogate(_)));
    let flags = TextFlags {
        lone_surrogates: lone,
        // Only looked for when it matters: a text that needs lone mode.
        stand_ins: lone && (escaped_stand_in || holds_stand_ins(input)),
        infinities: rewrites
            .iter()
            .any(|r| matches!(r.2, Rewrite::Infinity { .. })),
        infinity_sentinel: holds_infinity_sentinel,
    };
    // The thread's kept copy, refilled (see `reuse`).
    let mut out = reuse::take_scratch(input.len());
    let scratch = if rewrites.is_empty() {
        out.extend_from_slice(input);
        out
    } else {
        let mut from = 0;
        for (start, end, what) in rewrites {
            out.extend_from_slice(&input[from..start]);
            match what {
                Rewrite::Infinity { negative } => {
                    if negative {
                        out.push(b'-');
                    }
                    out.extend_from_slice(INFINITY_SENTINEL_TEXT);
                }
                Rewrite::LoneSurrogate(unit) => {
                    out.extend_from_slice(stand_in(unit).encode_utf8(&mut [0u8; 4]).as_bytes())
                }
            }
            from = end;
        }
        out.extend_from_slice(&input[from..]);
        out
    };
    Ok(Prepared {
        splittable,
        spans,
        scratch,
        flags,
        escaped_stand_in,
    })
}

/// Parses each span of the scratch copy as its own document, in parallel,
/// into the thread's kept tapes (give them back with `reuse::give_tapes`).
/// None if any of them fails (the caller then parses the whole document
/// to report where).
pub fn parse_each<'s>(scratch: &'s mut [u8], spans: &[Span]) -> Option<Vec<Tape<'s>>> {
    let mut parts: Vec<&'s mut [u8]> = Vec::with_capacity(spans.len());
    let mut rest: &'s mut [u8] = scratch;
    let mut offset = 0;
    for s in spans {
        let tail = std::mem::take(&mut rest);
        let (_, tail) = tail.split_at_mut(s.start.checked_sub(offset)?);
        let (part, tail) = tail.split_at_mut(s.end - s.start);
        parts.push(part);
        rest = tail;
        offset = s.end;
    }
    let tapes = reuse::take_tapes(parts.len());
    parts
        .into_par_iter()
        .zip(tapes)
        .map(|(p, mut tape)| reuse::fill(p, &mut tape).ok().map(|()| tape))
        .collect()
}

/// simd-json over the scratch copy, into the thread's kept tape for whole
/// documents (give it back with `reuse::give_tape`); errors name the byte and
/// the message.
pub fn parse_tape<'s>(scratch: &'s mut [u8], spans: &[Span]) -> Result<Tape<'s>> {
    let mut tape = reuse::take_tape();
    reuse::fill(scratch, &mut tape).map_err(|e| {
        let at = e.index();
        let which = spans
            .iter()
            .position(|s| at < s.end)
            .map(|i| format!(" (near message {i})"))
            .unwrap_or_default();
        PruneError::invalid_json(format!("invalid JSON at byte {at}{which}: {:?}", e.error()))
    })?;
    Ok(tape)
}

/// The top-level elements of a parsed array, or a typed error naming what the
/// top level is instead.
pub fn top_level_elements<'t>(tape: &'t [Node<'t>]) -> Result<Vec<Raw<'t>>> {
    let root = Raw::new(tape, 0);
    match root.node() {
        Node::Array { .. } => Ok(root.elements().collect()),
        Node::Object { .. } => Err(PruneError::not_array("an object")),
        Node::String(_) => Err(PruneError::not_array("a string")),
        Node::Static(simd_json::StaticNode::Null) => Err(PruneError::not_array("null")),
        Node::Static(simd_json::StaticNode::Bool(_)) => Err(PruneError::not_array("a boolean")),
        Node::Static(_) => Err(PruneError::not_array("a number")),
    }
}

/// Parses a standalone JSON document (state, config) into an owned value.
pub fn parse_owned(json: &[u8], what: &str) -> Result<(Val<'static>, TextFlags)> {
    let mut wrapped = reuse::take_output(json.len() + 2);
    wrapped.push(b'[');
    wrapped.extend_from_slice(json);
    wrapped.push(b']');
    let relabel = |e: PruneError| PruneError::new(e.code, format!("{what}: {}", e.message));
    let mut prepared = prepare(&wrapped).map_err(relabel)?;
    let mut flags = prepared.flags;
    flags.stand_ins = prepared.escaped_stand_in || holds_stand_ins(json);
    let tape = parse_tape(&mut prepared.scratch, &[]).map_err(relabel)?;
    let root = Raw::new(&tape.0, 0);
    let infinity = TextFlags::infinity_mode(&[flags]).map_err(relabel)?;
    let owned = match (root.elements().next(), root.elements().count()) {
        // Owned numbers keep ±Infinity; the flag is spent here.
        (Some(first), 1) => Ok((
            with_infinity_mode(infinity, || Val::to_owned_val(first)),
            TextFlags {
                infinities: false,
                ..flags
            },
        )),
        _ => Err(PruneError::invalid_json(format!(
            "{what}: not a single JSON value"
        ))),
    };
    // The thread's kept ones, also used for messages.
    reuse::give_tape(tape);
    reuse::give_scratch(prepared.scratch);
    reuse::give_output(wrapped);
    owned
}
