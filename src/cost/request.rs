//! One model call's prompt as a provider's cache sees it: a list of
//! positions, each with the prompt's size up to its end and a hash of
//! everything up to its end, plus where the breakpoints are. Tools and
//! system come first (one position each); then the wire blocks of
//! `wire.rs`, where a run of consecutive `tool_use` blocks, or of
//! `tool_result` blocks, is one position (Anthropic's lookback counts them
//! so). Thinking the model does not keep is left out: for such models,
//! thinking before the latest user turn is dropped server-side, and in the
//! open turn only the unbroken run of thinking from its first assistant
//! message is billed (CACHE-MODEL.md 4). On a model that runs preserved
//! thinking's prefix check, a thinking block whose prefix is not the one
//! it was produced under is dropped by the API, and every later one with
//! it ([`Bindings`]): dropped blocks are neither billed nor cached, and
//! counted.

use xxhash_rust::xxh3::xxh3_64;

use crate::hash::HashMap;

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
    /// The output message the position's wire message starts with.
    pub source: u32,
}

/// The tools and system prompt in force for a call.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Preamble {
    pub tools_chars: u64,
    pub tools_hash: u64,
    pub system_chars: u64,
    pub system_hash: u64,
}

/// What each answer's thinking is bound to under preserved thinking
/// (Anthropic's prefix check, docs/REPLAY.md): per answer (its key,
/// `wire::answer_key`), the prefix of the request that produced it
/// (`Request::end_hash`). A conversation keeps one: the replay's walk per
/// policy, pi's live gate per session.
pub type Bindings = HashMap<u64, u64>;

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
    /// The hash of the whole prompt (what an answer to it is bound to).
    pub end_hash: u64,
    /// Thinking blocks the API drops under the prefix check, and their
    /// characters (not billed, not cached).
    pub dropped_blocks: u32,
    pub dropped_chars: u64,
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

/// The builder's running state between wire blocks, saved at each user
/// turn so the next call can resume there.
#[derive(Debug, Clone, Copy, PartialEq)]
struct BuildState {
    positions: usize,
    chars: u64,
    hash: u64,
    message_chars: u64,
    /// Thinking still unbroken in the open turn.
    thinking_run: bool,
    previous_kind: Option<BlockKind>,
    /// The current message's source and last position.
    source: usize,
    last_position: Option<usize>,
    /// The last message that is not an effort marker: role and last position.
    last_message: Option<(&'static str, Option<usize>)>,
    last_text: Option<usize>,
    trailing_effort: bool,
    /// A thinking block failed the prefix check: it and every later one
    /// are dropped.
    unbound: bool,
    dropped_blocks: u32,
    dropped_chars: u64,
}

impl BuildState {
    /// A position ending here, in the current message.
    fn position(&self) -> Position {
        Position {
            chars: self.chars,
            hash: self.hash,
            messages: self.source as u32,
            source: self.source as u32,
        }
    }
}

/// Builds a request's positions from the wire messages as `assemble`
/// streams them.
struct Builder<'b> {
    rules: &'b Rules,
    positions: &'b mut Vec<Position>,
    checkpoints: &'b mut Vec<(usize, BuildState)>,
    /// The converted message that opens the latest user turn.
    open_turn: Option<usize>,
    /// Whether the current message's thinking is billed.
    billed: bool,
    /// What answers' thinking is bound to, on a model that checks it.
    bindings: Option<&'b Bindings>,
    st: BuildState,
}

impl<'a> WireSink<'a, Packed> for Builder<'_> {
    fn turn(&mut self, index: usize) {
        self.st.positions = self.positions.len();
        self.checkpoints.push((index, self.st));
    }

    fn start(&mut self, m: MessageStart) {
        let st = &mut self.st;
        if let (Some(source), Some(at)) = (m.source, st.last_position) {
            // The previous message is wholly before this one.
            self.positions[at].messages = source as u32;
        }
        if m.role != "system" {
            st.last_message = Some((m.role, None));
            st.last_position = None;
        }
        if let Some(source) = m.source {
            st.source = source;
        }
        // Preserved thinking: an answer whose prefix is not the one it was
        // produced under loses its thinking, and every later answer too.
        if let (Some(bindings), Some(key), false) = (self.bindings, m.produced, st.unbound) {
            if m.has_thinking && bindings.get(&key).is_some_and(|&h| h != st.hash) {
                st.unbound = true;
            }
        }
        let tag = match m.role {
            "user" => ROLE_USER,
            "assistant" => ROLE_ASSISTANT,
            _ => ROLE_SYSTEM,
        };
        st.hash = mix(st.hash, tag);
        st.previous_kind = None;
        self.billed = true;
        if m.role == "assistant" && !self.rules.keeps_thinking {
            if self.open_turn.is_none_or(|open| st.source < open) {
                self.billed = false;
            } else {
                st.thinking_run = st.thinking_run && m.has_thinking;
                self.billed = st.thinking_run;
            }
        }
        if let Some(level) = &m.effort {
            // An effort marker: a message of its own, about 60 chars.
            st.chars += 60;
            st.hash = mix(st.hash, xxh3_64(&level.to_json()));
            self.positions.push(st.position());
            st.trailing_effort = true;
        }
    }

    fn block(&mut self, block: &'a Packed) {
        let thinking = matches!(
            block.kind,
            BlockKind::Thinking | BlockKind::RedactedThinking
        );
        if thinking && !self.billed {
            return;
        }
        let st = &mut self.st;
        if thinking && st.unbound {
            st.dropped_blocks += 1;
            st.dropped_chars += u64::from(block.chars);
            return;
        }
        st.trailing_effort = false;
        st.chars += u64::from(block.chars);
        st.message_chars += u64::from(block.chars);
        st.hash = mix(st.hash, block.hash);
        let joins_run = matches!(block.kind, BlockKind::ToolUse | BlockKind::ToolResult)
            && st.previous_kind == Some(block.kind);
        if joins_run {
            let p = self.positions.last_mut().expect("a run has a position");
            p.chars = st.chars;
            p.hash = st.hash;
        } else {
            self.positions.push(st.position());
        }
        st.previous_kind = Some(block.kind);
        st.last_position = Some(self.positions.len() - 1);
        if let Some(last) = st.last_message.as_mut() {
            last.1 = st.last_position;
        }
        if block.kind == BlockKind::Text {
            st.last_text = st.last_position;
        }
    }
}

/// A call's request kept for the next call: built again only from the
/// last user turn before the first message that changed (or before the
/// previous open turn, when a new user turn closed it and its thinking
/// stopped being billed). A replay's calls mostly append, so a call costs
/// the messages of its open turn rather than the whole conversation.
#[derive(Debug, Default, Clone)]
pub struct Incremental {
    /// What the kept request was built for: model key, preamble, rules.
    key: Option<(u64, Preamble, Rules)>,
    checkpoints: Vec<(usize, BuildState)>,
    open_turn: Option<usize>,
    preamble_breakpoints: Vec<usize>,
    /// The previous request's prefix hashes from where this one resumed.
    tail: Vec<u64>,
    pub request: Request,
}

/// How an update changed the kept request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Update {
    /// The first position whose prefix differs from the previous
    /// request's (None: rebuilt from scratch, so not compared).
    pub divergence: Option<usize>,
    /// A new user turn closed the previous open turn.
    pub turn_closed: bool,
}

/// The request's last breakpoint, where the provider's rules put it.
fn place_breakpoint(r: &mut Request, st: &BuildState, rules: &Rules) {
    match rules.family {
        Family::Anthropic | Family::Bedrock => {
            if let Some(("user", Some(at))) = st.last_message {
                r.breakpoints.push(at);
            }
        }
        Family::OpenRouter => {
            if let Some(at) = st.last_text.filter(|&at| at >= r.preamble) {
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
}

impl Incremental {
    /// Starts the request afresh: tools and system, with their breakpoints.
    fn restart(&mut self, preamble: &Preamble, rules: &Rules) -> BuildState {
        let r = &mut self.request;
        self.checkpoints.clear();
        r.positions.clear();
        self.preamble_breakpoints.clear();
        let mut st = BuildState {
            positions: 0,
            chars: 0,
            hash: 0,
            message_chars: 0,
            thinking_run: true,
            previous_kind: None,
            source: 0,
            last_position: None,
            last_message: None,
            last_text: None,
            trailing_effort: false,
            unbound: false,
            dropped_blocks: 0,
            dropped_chars: 0,
        };
        let mut push = |chars: u64, item: u64, marked: bool| {
            st.chars += chars;
            st.hash = mix(st.hash, item);
            r.positions.push(st.position());
            if marked {
                self.preamble_breakpoints.push(r.positions.len() - 1);
            }
        };
        if preamble.tools_chars > 0 {
            push(
                preamble.tools_chars,
                preamble.tools_hash,
                matches!(rules.family, Family::Anthropic | Family::OpenRouter),
            );
        }
        if preamble.system_chars > 0 {
            push(
                preamble.system_chars,
                preamble.system_hash,
                matches!(
                    rules.family,
                    Family::Anthropic | Family::OpenRouter | Family::Bedrock
                ),
            );
        }
        r.preamble = r.positions.len();
        st
    }

    /// Builds the request of `converted` (one call's converted output
    /// messages, `out_len` of them), reusing the kept one up to the first
    /// message that differs from the previous call's (`first_changed`);
    /// `bindings`: what answers' thinking is bound to, on a model that
    /// runs the prefix check.
    #[allow(clippy::too_many_arguments)]
    pub fn update<C: std::ops::Deref<Target = Converted<Packed>>>(
        &mut self,
        model_key: u64,
        preamble: &Preamble,
        converted: &[C],
        first_changed: usize,
        model: &CallModel,
        (rules, bindings): (&Rules, Option<&Bindings>),
    ) -> Update {
        let open_turn = converted
            .iter()
            .rposition(|c| matches!(&**c, Converted::User { .. }));
        let key = (model_key, *preamble, *rules);
        let mut resume = None;
        if self.key == Some(key) {
            let mut limit = first_changed;
            if open_turn != self.open_turn {
                limit = limit.min(self.open_turn.unwrap_or(0));
            }
            if let Some(j) = self.checkpoints.iter().rposition(|(i, _)| *i <= limit) {
                resume = Some(self.checkpoints[j]);
                self.checkpoints.truncate(j);
            }
        }
        let turn_closed =
            self.key == Some(key) && open_turn > self.open_turn && self.open_turn.is_some();
        self.tail.clear();
        let (from, st) = match resume {
            Some((from, st)) => {
                let r = &mut self.request;
                self.tail.extend(
                    r.positions[st.positions.min(r.positions.len())..]
                        .iter()
                        .map(|p| p.hash),
                );
                r.positions.truncate(st.positions);
                (from, st)
            }
            None => (0, self.restart(preamble, rules)),
        };
        let r = &mut self.request;
        self.key = Some(key);
        self.open_turn = open_turn;
        let mut b = Builder {
            rules,
            positions: &mut r.positions,
            checkpoints: &mut self.checkpoints,
            open_turn,
            billed: true,
            bindings: bindings.filter(|_| rules.prefix_check),
            st,
        };
        assemble(&converted[from.min(converted.len())..], from, model, &mut b);
        let st = b.st;
        if let Some(at) = st.last_position {
            r.positions[at].messages = converted.len() as u32;
        }
        r.breakpoints.clone_from(&self.preamble_breakpoints);
        place_breakpoint(r, &st, rules);
        r.breakpoints.sort_unstable();
        r.breakpoints.dedup();
        r.total_chars = st.chars;
        r.message_chars = st.message_chars;
        r.trailing_effort = st.trailing_effort;
        r.end_hash = st.hash;
        r.dropped_blocks = st.dropped_blocks;
        r.dropped_chars = st.dropped_chars;
        let divergence = resume.map(|(_, st)| {
            let at = st.positions;
            (at..)
                .find(|&i| {
                    r.positions.get(i).map(|p| p.hash) != self.tail.get(i - at).copied()
                        || i >= r.positions.len()
                })
                .unwrap_or(at)
        });
        Update {
            divergence,
            turn_closed,
        }
    }
}

impl Request {
    /// The request of the converted messages of one call, built afresh (the
    /// tests hold every incremental update against it).
    #[cfg(test)]
    pub fn build(
        preamble: &Preamble,
        converted: &[&Converted<Packed>],
        model: &CallModel,
        rules: &Rules,
    ) -> Request {
        let mut inc = Incremental::default();
        inc.update(0, preamble, converted, 0, model, (rules, None));
        inc.request
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
