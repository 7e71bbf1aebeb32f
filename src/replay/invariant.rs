//! The flush-gated invariant (SPEC 1, issue 15 item 4): between two
//! flushes, a render must keep the previous render's output as a
//! byte-identical prefix, so the provider's cached prefix stays valid and
//! only the newly appended messages are written. It applies to consecutive
//! renders of one policy when the rebuilt state did not change between
//! them (no flush entry in force in between) and pi only appended to the
//! context (no compaction, edit or branch change rewrote history). A
//! render that breaks it is reported with the first output message that
//! changed and the phase that changed it (`cause.rs`'s `attribute`).

use super::cause::{attribute, Cause, Current, Previous};

/// One render that changed history between flushes.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The model call (render) index.
    pub render: usize,
    /// The first output message that differs from the previous render's.
    pub output_index: usize,
    /// The context message it shows now (None for a synthetic block).
    pub input_index: Option<usize>,
    /// `stub`, `errorPurge`, `chainCompression`, `thinkingStrip`,
    /// `orphanSweep`, or `unknown`.
    pub phase: Cause,
    pub detail: String,
}

/// Whether the invariant applies to render `k`: neither a flush nor a
/// rebuild from the root came in between, and pi only appended (`from`:
/// the first context message that changed; `inputs`: the previous
/// render's context length).
pub fn applies(k: usize, flushed: bool, rewound: bool, from: usize, inputs: usize) -> bool {
    k > 0 && !flushed && !rewound && from >= inputs
}

/// The violation of render `k`, whose output first differs from the
/// previous one's (`previous_len` messages) at `break_index`, when it does
/// before that output's end.
pub fn check(
    k: usize,
    break_index: usize,
    previous_len: usize,
    prev: &Previous<'_>,
    cur: &Current<'_>,
) -> Option<Violation> {
    (break_index < previous_len).then(|| {
        let a = attribute(break_index, prev, cur);
        Violation {
            render: k,
            output_index: break_index,
            input_index: a.input,
            phase: a.phase,
            detail: a.detail,
        }
    })
}
