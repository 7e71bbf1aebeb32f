//! The stateless path: bytes of a messages array in, the pruned array's
//! bytes out, in one call (`prune` and `Pruner.prune` in JS). Records are
//! read from the caller's bytes without copying them; only messages that
//! are not `JSON.stringify`'s own spelling are re-serialized.

use crate::apply::{output_len, OutputPlan};
use crate::config::Config;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::frontier::{frontier_of, Frontier};
use crate::phases::{self, Inputs, Memo};
use crate::record::Log;
use crate::record::{scan_array, Source};
use crate::script::{Diagnostic, Stats};
use crate::state::State;

/// The answer of a stateless prune; `B` holds the output bytes.
#[derive(Debug)]
pub struct Pruned<B = Vec<u8>> {
    pub pruned: bool,
    /// `JSON.stringify(input).length` and of the output; 0 and 0 when
    /// nothing changed (the reference's sentinel).
    pub before_chars: usize,
    pub after_chars: usize,
    /// The pruned array; None when nothing changed.
    pub messages: Option<B>,
    pub frontier: Frontier,
    pub stats: Stats,
    pub diagnostics: Vec<Diagnostic>,
}

/// Prunes the JSON array in `input`.
pub fn prune_bytes(
    input: &[u8],
    state: &State,
    config: &Config,
    boundary: Option<f64>,
    dialect: Dialect,
) -> Result<Pruned> {
    prune_bytes_into(input, state, config, boundary, dialect, |len| {
        Ok(vec![0u8; len])
    })
}

/// As `prune_bytes`, with the output written once into memory `make`
/// provides for its exact length in bytes (a JS Buffer, say).
pub fn prune_bytes_into<B: AsMut<[u8]>>(
    input: &[u8],
    state: &State,
    config: &Config,
    boundary: Option<f64>,
    dialect: Dialect,
    make: impl FnOnce(usize) -> Result<B>,
) -> Result<Pruned<B>> {
    let mut log = Log::default();
    scan_array(input, &mut log, 0, Source::Bytes)?;
    let inputs = Inputs {
        log: &log,
        text: input,
        state,
        config,
        boundary,
        dialect,
    };
    let mut memo = Memo::default();
    let script = phases::run(&inputs, &mut memo)?;
    // Unchanged: the caller keeps its own array, and the sizes are 0/0.
    let (messages, before_chars, after_chars) = if script.changed {
        let plan = OutputPlan::new(&inputs, &memo, &script);
        let mut out = make(plan.len())?;
        plan.write(&inputs, out.as_mut());
        let after = output_len(&inputs, &memo, &script);
        (Some(out), log.array_len(), after)
    } else {
        (None, 0, 0)
    };
    Ok(Pruned {
        pruned: script.changed,
        before_chars,
        after_chars,
        messages,
        frontier: frontier_of(&log, config, boundary, dialect),
        stats: script.stats,
        diagnostics: script.diagnostics,
    })
}

/// `JSON.stringify(JSON.parse(bytes)).length`, from records.
pub fn size_of(input: &[u8]) -> Result<usize> {
    let mut log = Log::default();
    scan_array(input, &mut log, 0, Source::Bytes)?;
    Ok(log.array_len())
}
