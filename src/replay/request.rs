//! One model call's prompt as a provider's cache sees it: a list of
//! positions, each with the prompt's size up to its end and a hash of
//! everything up to its end, plus where the breakpoints are. Tools and
//! system come first (one position each); then the wire blocks of
//! `wire.rs`, where a run of consecutive `tool_use` blocks, or of
//! `tool_result` blocks, is one position (Anthropic's lookback counts them
//! so). Thinking the model does not keep is left out: for such models,
//! thinking before the latest user turn is dropped server-side, and in the
//! open turn only the unbroken run of thinking from its first assistant
//! message is billed (CACHE-MODEL.md 4).

use super::catalog::{Family, Rules};
use super::wire::{BlockKind, Packed, WireMessage};

/// The end of one position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Characters of the prompt up to here (tools and system included).
    pub chars: u64,
    /// Hash of the prompt up to here.
    pub hash: u64,
    /// Output messages wholly before this point.
    pub messages: u32,
}

/// The tools and system prompt in force for a call.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Preamble {
    pub tools_chars: u64,
    pub tools_hash: u64,
    pub system_chars: u64,
    pub system_hash: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Request {
    pub positions: Vec<Position>,
    /// Position indices that carry a breakpoint, ascending.
    pub breakpoints: Vec<usize>,
    /// Positions of tools and system at the front.
    pub preamble: usize,
    /// The whole prompt's characters (what follows the last position, an
    /// effort marker, included).
    pub total_chars: u64,
    /// Characters of the message blocks billed (the calibration's input).
    pub message_chars: u64,
}

/// A splitmix64 step over the previous prefix hash and the next item.
fn mix(prev: u64, item: u64) -> u64 {
    let mut z = (prev ^ item.rotate_left(17)).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Role tags mixed in where a wire message starts.
const ROLE_USER: u64 = 0x7573_6572;
const ROLE_ASSISTANT: u64 = 0x6173_7374;
const ROLE_SYSTEM: u64 = 0x7379_7374;

/// Which blocks of which wire messages are billed.
fn billed_thinking(messages: &[WireMessage<Packed>], rules: &Rules) -> Vec<bool> {
    // Per wire message: whether its thinking blocks are billed.
    let mut billed = vec![true; messages.len()];
    if rules.keeps_thinking {
        return billed;
    }
    let open = messages.iter().rposition(|m| m.user_turn).unwrap_or(0);
    let mut run = true;
    for (i, m) in messages.iter().enumerate() {
        if m.role != "assistant" {
            continue;
        }
        if i < open {
            billed[i] = false;
            continue;
        }
        let has = m
            .blocks
            .iter()
            .any(|b| matches!(b.kind, BlockKind::Thinking | BlockKind::RedactedThinking));
        run = run && has;
        billed[i] = run;
    }
    billed
}

impl Request {
    /// The prompt of `messages` (the assembled wire messages; `through[w]`:
    /// output messages wholly within wire messages `..=w`), with the
    /// breakpoints `rules` place. `marker`: the message pi-ai marks.
    pub fn build(
        preamble: &Preamble,
        messages: &[WireMessage<Packed>],
        through: &[u32],
        marker: Option<usize>,
        rules: &Rules,
    ) -> Request {
        let mut r = Request::default();
        let mut chars = 0u64;
        let mut hash = 0u64;
        let push = |r: &mut Request, chars: u64, hash: u64, messages: u32| {
            r.positions.push(Position {
                chars,
                hash,
                messages,
            })
        };
        if preamble.tools_chars > 0 {
            chars += preamble.tools_chars;
            hash = mix(hash, preamble.tools_hash);
            push(&mut r, chars, hash, 0);
            if matches!(rules.family, Family::Anthropic | Family::OpenRouter) {
                r.breakpoints.push(r.positions.len() - 1);
            }
        }
        if preamble.system_chars > 0 {
            chars += preamble.system_chars;
            hash = mix(hash, preamble.system_hash);
            push(&mut r, chars, hash, 0);
            if matches!(
                rules.family,
                Family::Anthropic | Family::OpenRouter | Family::Bedrock
            ) {
                r.breakpoints.push(r.positions.len() - 1);
            }
        }
        r.preamble = r.positions.len();
        let billed = billed_thinking(messages, rules);
        // OpenRouter marks the last text part of the last message that has
        // one; every other explicit family the last block of `marker`.
        let text_mark = if rules.family == Family::OpenRouter {
            messages.iter().enumerate().rev().find_map(|(w, m)| {
                m.blocks
                    .iter()
                    .rposition(|b| b.kind == BlockKind::Text)
                    .map(|b| (w, b))
            })
        } else {
            None
        };
        let mut previous_kind = None;
        let mut before = 0u32;
        for (w, m) in messages.iter().enumerate() {
            let role = match m.role {
                "user" => ROLE_USER,
                "assistant" => ROLE_ASSISTANT,
                _ => ROLE_SYSTEM,
            };
            hash = mix(hash, role);
            if m.effort.is_some() {
                // An effort marker: a message of its own, about 60 chars.
                chars += 60;
                hash = mix(
                    hash,
                    m.effort.as_ref().map_or(0, |e| e.to_json().len() as u64),
                );
                push(&mut r, chars, hash, before);
                previous_kind = None;
                continue;
            }
            let end = through.get(w).copied().unwrap_or(before);
            let mut kept = m
                .blocks
                .iter()
                .enumerate()
                .filter(|(_, b)| {
                    billed[w]
                        || !matches!(b.kind, BlockKind::Thinking | BlockKind::RedactedThinking)
                })
                .peekable();
            while let Some((b, block)) = kept.next() {
                chars += u64::from(block.chars);
                r.message_chars += u64::from(block.chars);
                hash = mix(hash, block.hash);
                let last_of_message = kept.peek().is_none();
                let covered = if last_of_message { end } else { before };
                let joins_run = matches!(block.kind, BlockKind::ToolUse | BlockKind::ToolResult)
                    && previous_kind == Some(block.kind)
                    && !r.positions.is_empty()
                    && r.positions.len() > r.preamble;
                if joins_run {
                    let p = r.positions.last_mut().expect("a run has a position");
                    p.chars = chars;
                    p.hash = hash;
                    p.messages = covered;
                } else {
                    push(&mut r, chars, hash, covered);
                }
                previous_kind = Some(block.kind);
                if text_mark == Some((w, b)) {
                    r.breakpoints.push(r.positions.len() - 1);
                }
            }
            if marker == Some(w)
                && matches!(rules.family, Family::Anthropic | Family::Bedrock)
                && r.positions.len() > r.preamble
            {
                r.breakpoints.push(r.positions.len() - 1);
            }
            before = end;
        }
        if rules.family == Family::OpenAiImplicit && r.positions.len() > r.preamble {
            r.breakpoints.push(r.positions.len() - 1);
        }
        r.breakpoints.dedup();
        r.total_chars = chars;
        r
    }

    /// The last position whose prefix equals `other`'s at the same index
    /// (prefix hashes chain, so equality is monotone): None when even the
    /// first differs.
    pub fn common_prefix(&self, other: &Request) -> Option<usize> {
        let n = self.positions.len().min(other.positions.len());
        let (mut lo, mut hi) = (0usize, n);
        // Invariant: positions < lo are equal, positions >= hi differ.
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.positions[mid].hash == other.positions[mid].hash {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo.checked_sub(1)
    }
}
