//! Why a call wrote more than its appended tail: the one place a cause is
//! named. Two renders of a policy are compared slot by slot to name the
//! phase that changed an output message ([`attribute`], which the
//! flush-gated invariant reports too); the walk gathers the phases behind
//! the messages a render changed ([`policy_changes`]); the pricer, given
//! the call's class and what happened on the path since the previous call,
//! decides the cause ([`decide`]). [`Cause::name`] is the JSON spelling
//! (`rewriteCause.cause`, the causes table's labels).

use crate::dialect::Dialect;
use crate::script::{Op, Slot, Stats};

/// What broke a call's cached prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    // The policy changed history (a phase of the render).
    Stub,
    ErrorPurge,
    ChainCompression,
    ThinkingStrip,
    OrphanSweep,
    // pi changed the context.
    Compaction,
    /// pi's `context_edit` rewrote a message.
    ContextEdit,
    Branch,
    // The cache or the request changed.
    Expired,
    ModelSwitch,
    SystemPrompt,
    /// The provider dropped closed-turn thinking.
    ThinkingDropped,
    /// The previous breakpoint lies beyond the lookback.
    Lookback,
    Unknown,
}

impl Cause {
    /// The JSON spelling.
    pub fn name(self) -> &'static str {
        match self {
            Cause::Stub => "stub",
            Cause::ErrorPurge => "errorPurge",
            Cause::ChainCompression => "chainCompression",
            Cause::ThinkingStrip => "thinkingStrip",
            Cause::OrphanSweep => "orphanSweep",
            Cause::Compaction => "compaction",
            Cause::ContextEdit => "contextEdit",
            Cause::Branch => "branch",
            Cause::Expired => "expired",
            Cause::ModelSwitch => "modelSwitch",
            Cause::SystemPrompt => "systemPrompt",
            Cause::ThinkingDropped => "thinkingDropped",
            Cause::Lookback => "lookback",
            Cause::Unknown => "unknown",
        }
    }
}

/// One call's rewrite: its cause and what came with it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rewrite {
    pub cause: Cause,
    /// The policy's change came with a flush (new state in force).
    pub flush: bool,
    /// For `expired`: the time since the entries were last used, ms.
    pub gap_ms: Option<f64>,
}

impl Rewrite {
    fn plain(cause: Cause) -> Rewrite {
        Rewrite {
            cause,
            flush: false,
            gap_ms: None,
        }
    }

    /// The line of the causes table this rewrite adds to.
    pub fn label(&self) -> String {
        if self.flush {
            format!("{} at a flush", self.cause.name())
        } else {
            self.cause.name().to_string()
        }
    }
}

/// The previous render's output, as a comparison needs it.
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

/// The phase that made one output message differ, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Attributed {
    /// The context message it shows now (None for a synthetic block).
    pub input: Option<usize>,
    /// A phase of the render (`Stub` .. `OrphanSweep`) or `Unknown`.
    pub phase: Cause,
    pub detail: String,
}

/// Names the phase that made output message `at` differ, read from the two
/// renders' edit script slots and phase counts.
pub fn attribute(at: usize, prev: &Previous<'_>, cur: &Current<'_>) -> Attributed {
    let named = |input: Option<usize>, phase: Cause, detail: String| Attributed {
        input,
        phase,
        detail,
    };
    let (Some(p), Some(c)) = (prev.slots.get(at), cur.slots.get(at)) else {
        return named(
            cur.slots.get(at).and_then(Slot::input),
            Cause::Unknown,
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
        return named(c.input(), Cause::ChainCompression, detail.into());
    }
    if p.input != c.input {
        let phase = if cur.dialect == Dialect::V2_9
            && prev.stats.orphans_swept != cur.stats.orphans_swept
        {
            Cause::OrphanSweep
        } else if prev.stats.chain_dropped != cur.stats.chain_dropped {
            Cause::ChainCompression
        } else {
            Cause::Unknown
        };
        return named(
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
        return named(
            input,
            Cause::Stub,
            format!("tool result {} was {what} without a flush (recovery grace counts user messages at every render)", c.input),
        );
    }
    if p.op == Op::Stub && c.op == Op::Stub {
        return named(
            input,
            Cause::Stub,
            format!("tool result {}'s stub text changed", c.input),
        );
    }
    if p.purged != c.purged {
        return named(
            input,
            Cause::ErrorPurge,
            format!(
                "assistant message {}: failed tool-call arguments purged once the live count of assistant messages passed the cooldown",
                c.input
            ),
        );
    }
    if p.strip_thinking != c.strip_thinking {
        if (cur.final_answer_strip)(c.input as usize) {
            return named(
                input,
                Cause::ChainCompression,
                format!(
                    "assistant message {}: a chain's final-answer thinking strip changed",
                    c.input
                ),
            );
        }
        return named(
            input,
            Cause::ThinkingStrip,
            format!(
                "assistant message {}: thinking stripped by a keep-window counted at this render",
                c.input
            ),
        );
    }
    named(
        input,
        Cause::Unknown,
        format!("message {} renders differently with the same edit", c.input),
    )
}

/// Changed output messages of a render whose phase is named (the first
/// ones; a render changes few).
const CHANGES_NAMED: usize = 16;

/// One earlier output message the policy changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PolicyChange {
    pub phase: Cause,
    /// A flush came in between.
    pub flush: bool,
    /// The output message.
    pub at: usize,
}

/// What the walk knows about why a render differs from the previous one.
#[derive(Debug, Clone, Default)]
pub struct Change {
    /// The context was rebuilt from the root (the leaf moved back).
    pub rewound: bool,
    /// pi's context changed other than by appending (compaction, edit,
    /// branch).
    pub context_rewritten: bool,
    /// pi compacted the context since the previous call (under this
    /// policy: `compaction.rs`).
    pub compacted: bool,
    /// Earlier output messages the policy changed, in order (the first
    /// few).
    pub policy: Vec<PolicyChange>,
}

/// The phase behind each earlier output message a render changed (`last`
/// and `out`: the two renders' digests, or anything compared by equality;
/// `from`: the first that differs).
pub fn policy_changes<D: PartialEq>(
    last: &[D],
    out: &[D],
    from: usize,
    flush: bool,
    prev: &Previous<'_>,
    cur: &Current<'_>,
) -> Vec<PolicyChange> {
    let change = |at: usize| PolicyChange {
        phase: attribute(at, prev, cur).phase,
        flush,
        at,
    };
    let common = last.len().min(out.len());
    let mut changes: Vec<PolicyChange> = (from..common)
        .filter(|&i| out[i] != last[i])
        .take(CHANGES_NAMED)
        .map(change)
        .collect();
    if changes.is_empty() && common < last.len() {
        changes.push(change(common));
    }
    changes
}

/// What the pricer saw of a call that did not append to the previous one.
pub struct Seen {
    /// The call is on another model than the previous call.
    pub switched: bool,
    /// Tools or system differ from the previous call's on this model.
    pub preamble_changed: bool,
    /// pi compacted, edited a message or changed branch since the previous
    /// call (`calls.rs`'s `Since`).
    pub compaction: bool,
    pub edit: bool,
    pub branch: bool,
    /// The output messages `[first, end)` holding the first position whose
    /// billed prefix changed (None: not known).
    pub diverged: Option<(usize, usize)>,
    /// A new user turn closed the previous open turn.
    pub turn_closed: bool,
    /// The model keeps earlier turns' thinking.
    pub keeps_thinking: bool,
    /// The request still holds the previous call's last breakpoint.
    pub holds_last_breakpoint: bool,
}

/// The cause of a call classed `class` (None for one that appended, or a
/// file's first call): the model or the preamble changed, pi changed the
/// context, the policy changed the message the billed prefix broke at,
/// or the provider's rules did. `gap_ms`: the time since the previous call
/// on the model, for `expired`.
pub fn decide(
    class: crate::cost::bill::CallClass,
    seen: &Seen,
    change: &Change,
    gap_ms: Option<f64>,
) -> Option<Rewrite> {
    use crate::cost::bill::CallClass;
    match class {
        CallClass::Append => None,
        CallClass::First if !seen.switched => None,
        CallClass::First => Some(Rewrite::plain(Cause::ModelSwitch)),
        CallClass::Expired => Some(Rewrite {
            cause: Cause::Expired,
            flush: false,
            gap_ms,
        }),
        CallClass::Partial | CallClass::Rewrite => Some(rewritten(seen, change)),
    }
}

/// The cause of a partial read or a rewrite.
fn rewritten(seen: &Seen, change: &Change) -> Rewrite {
    let plain = if seen.switched {
        Cause::ModelSwitch
    } else if seen.preamble_changed {
        Cause::SystemPrompt
    } else if seen.compaction {
        Cause::Compaction
    } else if seen.edit {
        Cause::ContextEdit
    } else if seen.branch || change.rewound || change.context_rewritten {
        Cause::Branch
    } else {
        let named = match seen.diverged {
            Some((first, end)) => change.policy.iter().find(|c| c.at >= first && c.at < end),
            None => change.policy.first(),
        };
        if let Some(c) = named {
            return Rewrite {
                cause: c.phase,
                flush: c.flush,
                gap_ms: None,
            };
        }
        if seen.turn_closed && !seen.keeps_thinking {
            Cause::ThinkingDropped
        } else if seen.holds_last_breakpoint {
            Cause::Lookback
        } else if !seen.keeps_thinking {
            Cause::ThinkingDropped
        } else {
            Cause::Unknown
        }
    };
    Rewrite::plain(plain)
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
            attribute(0, &prev, &cur).phase
        };
        assert_eq!(case(&keep, &purged, &no), Cause::ErrorPurge);
        assert_eq!(case(&keep, &stripped, &no), Cause::ThinkingStrip);
        assert_eq!(case(&keep, &stripped, &yes), Cause::ChainCompression);
        assert_eq!(case(&keep, &stub, &no), Cause::Stub);
        assert_eq!(case(&keep, &Slot::keep(4), &no), Cause::Unknown);
    }

    #[test]
    fn decides_in_order() {
        use crate::cost::bill::CallClass;
        let seen = |f: &dyn Fn(&mut Seen)| {
            let mut s = Seen {
                switched: false,
                preamble_changed: false,
                compaction: false,
                edit: false,
                branch: false,
                diverged: None,
                turn_closed: false,
                keeps_thinking: true,
                holds_last_breakpoint: false,
            };
            f(&mut s);
            s
        };
        let policy = Change {
            policy: vec![PolicyChange {
                phase: Cause::Stub,
                flush: true,
                at: 4,
            }],
            ..Change::default()
        };
        let cause =
            |s: &Seen, c: &Change| decide(CallClass::Rewrite, s, c, None).map(|r| r.label());
        assert_eq!(
            cause(&seen(&|_| {}), &policy).as_deref(),
            Some("stub at a flush")
        );
        // The phase counts only when it changed the message the prefix broke at.
        let elsewhere = seen(&|s| s.diverged = Some((0, 2)));
        assert_eq!(cause(&elsewhere, &policy).as_deref(), Some("unknown"));
        let compacted = seen(&|s| s.compaction = true);
        assert_eq!(cause(&compacted, &policy).as_deref(), Some("compaction"));
        let dropped = seen(&|s| s.keeps_thinking = false);
        assert_eq!(
            cause(&dropped, &Change::default()).as_deref(),
            Some("thinkingDropped")
        );
        assert_eq!(
            decide(CallClass::Append, &seen(&|_| {}), &policy, None),
            None
        );
        let gap = decide(CallClass::Expired, &seen(&|_| {}), &policy, Some(9.0)).unwrap();
        assert_eq!((gap.cause, gap.gap_ms), (Cause::Expired, Some(9.0)));
    }
}
