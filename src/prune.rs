//! The stateless path: bytes of a messages array in, the pruned array's
//! bytes out, in one call (`prune` and `Pruner.prune` in JS). Records are
//! read from the caller's bytes without copying them; only messages that
//! are not `JSON.stringify`'s own spelling are re-serialized.

use crate::apply::{output_len, write_output};
use crate::config::Config;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::frontier::{frontier_of, Frontier};
use crate::phases::{self, Inputs, Memo};
use crate::record::scan::{scan_array, Source};
use crate::record::Log;
use crate::script::{Diagnostic, Stats};
use crate::state::State;

/// The answer of a stateless prune.
#[derive(Debug)]
pub struct Pruned {
    pub pruned: bool,
    /// `JSON.stringify(input).length` and of the output; 0 and 0 when
    /// nothing changed (the reference's sentinel).
    pub before_chars: usize,
    pub after_chars: usize,
    /// The pruned array; None when nothing changed.
    pub messages: Option<Vec<u8>>,
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
    let frontier = frontier_of(&log, config, boundary, dialect);
    if !script.changed {
        return Ok(Pruned {
            pruned: false,
            before_chars: 0,
            after_chars: 0,
            messages: None,
            frontier,
            stats: script.stats,
            diagnostics: script.diagnostics,
        });
    }
    let mut out = Vec::with_capacity(input.len());
    write_output(&mut out, &inputs, &memo, &script);
    Ok(Pruned {
        pruned: true,
        before_chars: log.array_len(),
        after_chars: output_len(&inputs, &memo, &script),
        messages: Some(out),
        frontier,
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
