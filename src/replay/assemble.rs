//! The sequence rules of the request pi-ai 1.6.0 builds, over converted
//! messages (`wire.rs` converts each on its own): `transformMessages`
//! drops errored and aborted turns and answers a tool call that has no
//! result before the next assistant or user message (and at the end);
//! `convertMessages` merges consecutive tool results, with the images of
//! error results after them, into one user message; effort-managed models
//! get an effort marker before each assistant message that carried a level
//! and one at the end. The messages are streamed to a [`WireSink`], so the
//! replay builds a call's cache positions without copying its blocks, and
//! `payload.rs` collects them for the payload.

use super::wire::{BlockKind, CallModel, Converted, Packed};
use crate::json::Json;

/// A block whose kind the thinking rules need.
pub trait Block {
    fn is_thinking(&self) -> bool;
}

impl Block for Packed {
    fn is_thinking(&self) -> bool {
        matches!(self.kind, BlockKind::Thinking | BlockKind::RedactedThinking)
    }
}

impl Block for Json {
    fn is_thinking(&self) -> bool {
        self.get("type")
            .is_some_and(|t| t.is_str("thinking") || t.is_str("redacted_thinking"))
    }
}

/// Where a wire message starts.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageStart {
    /// `"user"`, `"assistant"` or `"system"` (an effort marker).
    pub role: &'static str,
    /// The converted message it comes from (the first of a merged run;
    /// None for an effort marker).
    pub source: Option<usize>,
    /// A user message with text or images (it opens a user turn).
    pub user_turn: bool,
    /// A user message pi-ai sends as a plain string.
    pub string_content: bool,
    /// An effort marker's level.
    pub effort: Option<Json>,
    /// An assistant message with a thinking block.
    pub has_thinking: bool,
}

/// Receives the request's messages in order.
pub trait WireSink<'a, B> {
    fn start(&mut self, message: MessageStart);
    fn block(&mut self, block: &'a B);
    /// Converted message `index`, a user message, comes next, and nothing
    /// is pending: assembling may resume here with a fresh state.
    fn turn(&mut self, _index: usize) {}
}

/// Streams the request's messages from `converted` to `sink`; `offset`:
/// the index of `converted[0]` (a resumed request starts at a user turn).
pub fn assemble<'a, B, C, S>(converted: &'a [C], offset: usize, model: &CallModel, sink: &mut S)
where
    B: Block + 'a,
    C: std::ops::Deref<Target = Converted<B>>,
    S: WireSink<'a, B>,
{
    // Calls of the last assistant message not yet answered, and the ids
    // answered since it.
    let mut pending: &'a [(u64, B)] = &[];
    let mut answered: Vec<u64> = Vec::new();
    // The open run of tool results: its images, held for its end.
    let mut run_open = false;
    let mut images: Vec<&'a B> = Vec::new();
    let open_run = |sink: &mut S, run_open: &mut bool, source: Option<usize>| {
        if !*run_open {
            *run_open = true;
            sink.start(MessageStart {
                role: "user",
                source,
                user_turn: false,
                string_content: false,
                effort: None,
                has_thinking: false,
            });
        }
    };
    let close_run = |sink: &mut S, run_open: &mut bool, images: &mut Vec<&'a B>| {
        if *run_open {
            for b in images.drain(..) {
                sink.block(b);
            }
            *run_open = false;
        }
    };
    // Answers the calls still pending, in the open run (or a new one).
    let answer = |sink: &mut S,
                  run_open: &mut bool,
                  pending: &mut &'a [(u64, B)],
                  answered: &mut Vec<u64>,
                  source: Option<usize>| {
        for (id, block) in pending.iter() {
            if !answered.contains(id) {
                open_run(sink, run_open, source);
                sink.block(block);
            }
        }
        *pending = &[];
        answered.clear();
    };
    for (i, c) in converted.iter().enumerate() {
        let i = i + offset;
        match &**c {
            Converted::Nothing => {}
            Converted::User {
                blocks,
                string_content,
            } => {
                answer(sink, &mut run_open, &mut pending, &mut answered, Some(i));
                close_run(sink, &mut run_open, &mut images);
                sink.turn(i);
                sink.start(MessageStart {
                    role: "user",
                    source: Some(i),
                    user_turn: true,
                    string_content: *string_content,
                    effort: None,
                    has_thinking: false,
                });
                for b in blocks {
                    sink.block(b);
                }
            }
            Converted::Assistant {
                blocks,
                tool_calls,
                errored,
                effort,
            } => {
                answer(sink, &mut run_open, &mut pending, &mut answered, Some(i));
                // transformMessages drops an errored turn before the results
                // are merged: the runs on either side of it become one.
                if *errored {
                    continue;
                }
                close_run(sink, &mut run_open, &mut images);
                if !tool_calls.is_empty() {
                    pending = tool_calls;
                    answered.clear();
                }
                if blocks.is_empty() {
                    continue;
                }
                if let (true, Some(level)) = (model.effort, effort) {
                    sink.start(effort_start(level.clone()));
                }
                sink.start(MessageStart {
                    role: "assistant",
                    source: Some(i),
                    user_turn: false,
                    string_content: false,
                    effort: None,
                    has_thinking: blocks.iter().any(Block::is_thinking),
                });
                for b in blocks {
                    sink.block(b);
                }
            }
            Converted::ToolResult {
                id,
                block,
                images: extra,
            } => {
                answered.push(*id);
                open_run(sink, &mut run_open, Some(i));
                sink.block(block);
                images.extend(extra.iter());
            }
        }
    }
    answer(sink, &mut run_open, &mut pending, &mut answered, None);
    close_run(sink, &mut run_open, &mut images);
    if model.effort {
        sink.start(effort_start(Json::str("high")));
    }
}

fn effort_start(level: Json) -> MessageStart {
    MessageStart {
        role: "system",
        source: None,
        user_turn: false,
        string_content: false,
        effort: Some(level),
        has_thinking: false,
    }
}
