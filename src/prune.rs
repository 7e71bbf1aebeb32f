//! The stateless path: bytes in, pruned bytes and sizes out.

use crate::config::Config;
use crate::error::Result;
use crate::frontier::compute_thinking_boundary;
use crate::index::{parse_tape, prepare, top_level_elements, Prepared, TextFlags};
use crate::jsjson::lone::{holds_stand_ins, with_lone_mode};
use crate::output::{assemble, Source};
use crate::phases::{self, Stats};
use crate::state::State;
use crate::value::{Ty, V};

#[derive(Debug, Clone, PartialEq)]
pub struct Frontier {
    pub thinking_strip_boundary_timestamp: Option<f64>,
    pub next_thinking_strip_boundary_timestamp: Option<f64>,
}

#[derive(Debug)]
pub struct Pruned {
    pub pruned: bool,
    pub before_chars: usize,
    pub after_chars: usize,
    /// The pruned JSON array; None when nothing changed.
    pub messages: Option<Vec<u8>>,
    pub frontier: Frontier,
    pub stats: Stats,
}

/// Runs the four phases over `input` (a JSON array of messages). The input
/// is never written; a private copy is parsed.
pub fn prune_bytes(
    input: &[u8],
    state: &State,
    config: &Config,
    boundary: Option<f64>,
) -> Result<Pruned> {
    let Prepared {
        spans,
        mut scratch,
        mut flags,
        escaped_stand_in,
    } = prepare(input)?;
    if !flags.lone_surrogates && (state.flags.lone_surrogates || config.flags.lone_surrogates) {
        flags.stand_ins = escaped_stand_in || holds_stand_ins(input);
    }
    let lone = TextFlags::lone_mode(&[flags, state.flags, config.flags])?;
    let tape = parse_tape(&mut scratch, &spans)?;
    with_lone_mode(lone, || {
        prune_tape(input, &spans, &tape.0, state, config, boundary)
    })
}

fn prune_tape<'t>(
    input: &[u8],
    spans: &[crate::index::scan::Span],
    tape: &'t [simd_json::Node<'t>],
    state: &State,
    config: &Config,
    boundary: Option<f64>,
) -> Result<Pruned> {
    let raws = top_level_elements(tape)?;
    let outcome = phases::run(&raws, state, config, boundary)?;
    let frontier = Frontier {
        thinking_strip_boundary_timestamp: boundary,
        next_thinking_strip_boundary_timestamp: config.thinking.as_ref().and_then(|t| {
            let stamps: Vec<f64> = raws
                .iter()
                .map(|r| V::R(*r))
                .filter(|m| m.get("role").is_some_and(|r| r.is_str("assistant")))
                .filter_map(|m| match m.get("timestamp").map(|t| t.ty()) {
                    Some(Ty::Num(n)) => Some(n),
                    _ => None,
                })
                .collect();
            compute_thinking_boundary(&stamps, t.keep_last_turns, boundary)
        }),
    };
    if !outcome.changed {
        return Ok(Pruned {
            pruned: false,
            before_chars: 0,
            after_chars: 0,
            messages: None,
            frontier,
            stats: outcome.stats,
        });
    }
    let src = Source::new(input, &raws, spans);
    let (bytes, sizes) = assemble(&src, &outcome.messages);
    Ok(Pruned {
        pruned: true,
        before_chars: sizes.before,
        after_chars: sizes.after,
        messages: Some(bytes),
        frontier,
        stats: outcome.stats,
    })
}

/// `JSON.stringify(JSON.parse(input)).length` for any JSON array.
pub fn size_of(input: &[u8]) -> Result<usize> {
    let Prepared {
        spans,
        mut scratch,
        flags,
        ..
    } = prepare(input)?;
    let lone = TextFlags::lone_mode(&[flags])?;
    let tape = parse_tape(&mut scratch, &spans)?;
    let raws = top_level_elements(&tape.0)?;
    Ok(with_lone_mode(lone, || {
        crate::output::measure(&Source::new(input, &raws, &spans))
    }))
}
