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

use xxhash_rust::xxh3::xxh3_64;

use super::assemble::{assemble, MessageStart, WireSink};
use super::catalog::{Family, Rules};
use super::wire::{BlockKind, CallModel, Converted, Packed};

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
    /// The last position is an effort marker (it moves every call).
    pub trailing_effort: bool,
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

/// Builds a request's positions from the wire messages as `assemble`
/// streams them.
struct Builder<'r> {
    rules: &'r Rules,
    r: Request,
    chars: u64,
    hash: u64,
    /// The converted message that opens the latest user turn.
    open_turn: Option<usize>,
    /// Thinking still unbroken in the open turn.
    thinking_run: bool,
    /// Whether the current message's thinking is billed.
    billed: bool,
    previous_kind: Option<BlockKind>,
    /// The current message's source and last position.
    source: usize,
    last_position: Option<usize>,
    /// The last message that is not an effort marker: role and last position.
    last_message: Option<(&'static str, Option<usize>)>,
    last_text: Option<usize>,
}

impl<'a> WireSink<'a, Packed> for Builder<'_> {
    fn start(&mut self, m: MessageStart) {
        if let (Some(source), Some(at)) = (m.source, self.last_position) {
            // The previous message is wholly before this one.
            self.r.positions[at].messages = source as u32;
        }
        if m.role != "system" {
            self.last_message = Some((m.role, None));
            self.last_position = None;
        }
        if let Some(source) = m.source {
            self.source = source;
        }
        let tag = match m.role {
            "user" => ROLE_USER,
            "assistant" => ROLE_ASSISTANT,
            _ => ROLE_SYSTEM,
        };
        self.hash = mix(self.hash, tag);
        self.previous_kind = None;
        self.billed = true;
        if m.role == "assistant" && !self.rules.keeps_thinking {
            if self.open_turn.is_none_or(|open| self.source < open) {
                self.billed = false;
            } else {
                self.thinking_run = self.thinking_run && m.has_thinking;
                self.billed = self.thinking_run;
            }
        }
        if let Some(level) = &m.effort {
            // An effort marker: a message of its own, about 60 chars.
            self.chars += 60;
            self.hash = mix(self.hash, xxh3_64(&level.to_json()));
            self.r.positions.push(Position {
                chars: self.chars,
                hash: self.hash,
                messages: self.source as u32,
            });
            self.r.trailing_effort = true;
        }
    }

    fn block(&mut self, block: &'a Packed) {
        if !self.billed
            && matches!(
                block.kind,
                BlockKind::Thinking | BlockKind::RedactedThinking
            )
        {
            return;
        }
        self.r.trailing_effort = false;
        self.chars += u64::from(block.chars);
        self.r.message_chars += u64::from(block.chars);
        self.hash = mix(self.hash, block.hash);
        let joins_run = matches!(block.kind, BlockKind::ToolUse | BlockKind::ToolResult)
            && self.previous_kind == Some(block.kind);
        if joins_run {
            let p = self.r.positions.last_mut().expect("a run has a position");
            p.chars = self.chars;
            p.hash = self.hash;
        } else {
            self.r.positions.push(Position {
                chars: self.chars,
                hash: self.hash,
                messages: self.source as u32,
            });
        }
        self.previous_kind = Some(block.kind);
        self.last_position = Some(self.r.positions.len() - 1);
        if let Some(last) = self.last_message.as_mut() {
            last.1 = self.last_position;
        }
        if block.kind == BlockKind::Text {
            self.last_text = self.last_position;
        }
    }
}

impl Request {
    /// The request of the converted messages of one call (`out_len` output
    /// messages), with the breakpoints `rules` place.
    pub fn build(
        preamble: &Preamble,
        converted: &[&Converted<Packed>],
        model: &CallModel,
        rules: &Rules,
        out_len: usize,
    ) -> Request {
        let mut b = Builder {
            rules,
            r: Request::default(),
            chars: 0,
            hash: 0,
            open_turn: converted
                .iter()
                .rposition(|c| matches!(c, Converted::User { .. })),
            thinking_run: true,
            billed: true,
            previous_kind: None,
            source: 0,
            last_position: None,
            last_message: None,
            last_text: None,
        };
        let explicit = |families: &[Family]| families.contains(&rules.family);
        if preamble.tools_chars > 0 {
            b.chars += preamble.tools_chars;
            b.hash = mix(b.hash, preamble.tools_hash);
            b.r.positions.push(Position {
                chars: b.chars,
                hash: b.hash,
                messages: 0,
            });
            if explicit(&[Family::Anthropic, Family::OpenRouter]) {
                b.r.breakpoints.push(b.r.positions.len() - 1);
            }
        }
        if preamble.system_chars > 0 {
            b.chars += preamble.system_chars;
            b.hash = mix(b.hash, preamble.system_hash);
            b.r.positions.push(Position {
                chars: b.chars,
                hash: b.hash,
                messages: 0,
            });
            if explicit(&[Family::Anthropic, Family::OpenRouter, Family::Bedrock]) {
                b.r.breakpoints.push(b.r.positions.len() - 1);
            }
        }
        b.r.preamble = b.r.positions.len();
        assemble(converted, model, &mut b);
        if let Some(at) = b.last_position {
            b.r.positions[at].messages = out_len as u32;
        }
        let (last_message, last_text, chars) = (b.last_message, b.last_text, b.chars);
        let mut r = b.r;
        match rules.family {
            Family::Anthropic | Family::Bedrock => {
                if let Some(("user", Some(at))) = last_message {
                    r.breakpoints.push(at);
                }
            }
            Family::OpenRouter => {
                if let Some(at) = last_text.filter(|&at| at >= r.preamble) {
                    r.breakpoints.push(at);
                }
            }
            Family::OpenAiImplicit => {
                if r.positions.len() > r.preamble {
                    r.breakpoints.push(r.positions.len() - 1);
                }
            }
            Family::OpenAiPrefix | Family::Google => {}
        }
        r.breakpoints.sort_unstable();
        r.breakpoints.dedup();
        r.total_chars = chars;
        r
    }

    /// Positions that are content (a trailing effort marker left out).
    pub fn content_len(&self) -> usize {
        self.positions.len() - usize::from(self.trailing_effort)
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
