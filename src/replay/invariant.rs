//! The flush-gated invariant (SPEC 1, issue 15 item 4): between two
//! flushes, a render must keep the previous render's output as a
//! byte-identical prefix, so the provider's cached prefix stays valid and
//! only the newly appended messages are written. It applies to consecutive
//! renders of one policy when the rebuilt state did not change between
//! them (no flush entry in force in between) and pi only appended to the
//! context (no compaction, edit or branch change rewrote history). A
//! render that breaks it is reported with the first output message that
//! changed and the phase that changed it, read from the two renders' edit
//! script slots and phase counts.

use crate::dialect::Dialect;
use crate::script::{Op, Slot, Stats};

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
    pub phase: &'static str,
    pub detail: String,
}

/// The previous render's output, as the check needs it.
pub struct Previous<'a> {
    pub slots: &'a [Slot],
    pub stats: Stats,
}

/// The current render's output.
pub struct Current<'a> {
    pub slots: &'a [Slot],
    pub stats: Stats,
    pub dialect: Dialect,
    /// Whether phase 3 strips this input's thinking as a chain's final
    /// answer.
    pub final_answer_strip: &'a dyn Fn(usize) -> bool,
}

/// Names the phase that made output message `at` differ.
pub fn attribute(render: usize, at: usize, prev: &Previous<'_>, cur: &Current<'_>) -> Violation {
    let violation = |input: Option<usize>, phase: &'static str, detail: String| Violation {
        render,
        output_index: at,
        input_index: input,
        phase,
        detail,
    };
    let (Some(p), Some(c)) = (prev.slots.get(at), cur.slots.get(at)) else {
        return violation(
            cur.slots.get(at).and_then(Slot::input),
            "unknown",
            format!(
                "the output shrank from {} to {} messages",
                prev.slots.len(),
                cur.slots.len()
            ),
        );
    };
    if p.op == Op::Insert || c.op == Op::Insert {
        let detail = if p.op == c.op {
            "a compressed-chain block's text changed (it quotes protected outputs found anywhere in the context)"
        } else {
            "a compressed-chain block appeared or went away"
        };
        return violation(c.input(), "chainCompression", detail.into());
    }
    if p.input != c.input {
        let phase = if cur.dialect == Dialect::V2_9
            && prev.stats.orphans_swept != cur.stats.orphans_swept
        {
            "orphanSweep"
        } else if prev.stats.chain_dropped != cur.stats.chain_dropped {
            "chainCompression"
        } else {
            "unknown"
        };
        return violation(
            c.input(),
            phase,
            format!(
                "message {} now stands where message {} stood (an earlier message was dropped or restored)",
                c.input, p.input
            ),
        );
    }
    let input = Some(c.input as usize);
    if p.op != c.op && (p.op == Op::Stub || c.op == Op::Stub) {
        let what = if c.op == Op::Stub {
            "stubbed"
        } else {
            "unstubbed"
        };
        return violation(
            input,
            "stub",
            format!("tool result {} was {what} without a flush (recovery grace counts user messages at every render)", c.input),
        );
    }
    if p.op == Op::Stub && c.op == Op::Stub {
        return violation(
            input,
            "stub",
            format!("tool result {}'s stub text changed", c.input),
        );
    }
    if p.purged != c.purged {
        return violation(
            input,
            "errorPurge",
            format!(
                "assistant message {}: failed tool-call arguments purged once the live count of assistant messages passed the cooldown",
                c.input
            ),
        );
    }
    if p.strip_thinking != c.strip_thinking {
        if (cur.final_answer_strip)(c.input as usize) {
            return violation(
                input,
                "chainCompression",
                format!(
                    "assistant message {}: a chain's final-answer thinking strip changed",
                    c.input
                ),
            );
        }
        return violation(
            input,
            "thinkingStrip",
            format!(
                "assistant message {}: thinking stripped by a keep-window counted at this render",
                c.input
            ),
        );
    }
    violation(
        input,
        "unknown",
        format!("message {} renders differently with the same edit", c.input),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_phase() {
        let keep = Slot::keep(3);
        let mut purged = Slot::keep(3);
        purged.purge(1, 600);
        let mut stripped = Slot::keep(3);
        stripped.strip_thinking();
        let mut stub = Slot::keep(3);
        stub.op = Op::Stub;
        let no = |_: usize| false;
        let yes = |_: usize| true;
        let case = |a: &Slot, b: &Slot, f: &dyn Fn(usize) -> bool| {
            let prev = Previous {
                slots: std::slice::from_ref(a),
                stats: Stats::default(),
            };
            let cur = Current {
                slots: std::slice::from_ref(b),
                stats: Stats::default(),
                dialect: Dialect::V2_4,
                final_answer_strip: f,
            };
            attribute(7, 0, &prev, &cur).phase
        };
        assert_eq!(case(&keep, &purged, &no), "errorPurge");
        assert_eq!(case(&keep, &stripped, &no), "thinkingStrip");
        assert_eq!(case(&keep, &stripped, &yes), "chainCompression");
        assert_eq!(case(&keep, &stub, &no), "stub");
        assert_eq!(case(&keep, &Slot::keep(4), &no), "unknown");
    }
}
