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
pub trait WireBlock {
    fn is_thinking(&self) -> bool;
}

impl WireBlock for Packed {
    fn is_thinking(&self) -> bool {
        matches!(self.kind, BlockKind::Thinking | BlockKind::RedactedThinking)
    }
}

impl WireBlock for Json {
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
    /// An assistant message's answer key (`Converted::Assistant`).
    pub produced: Option<u64>,
}

/// Receives the request's messages in order.
pub trait WireSink<'a, B> {
    fn start(&mut self, message: MessageStart);
    fn block(&mut self, block: &'a B);
    /// Converted message `index`, a user message, comes next, and nothing
    /// is pending: assembling may resume here with a fresh state.
    fn turn(&mut self, _index: usize) {}
}

/// The sequence state between converted messages.
struct Assembler<'a, 's, B, S> {
    sink: &'s mut S,
    /// Calls of the last assistant message not yet answered, and the ids
    /// answered since it.
    pending: &'a [(u64, B)],
    answered: Vec<u64>,
    /// The open run of tool results: its images, held for its end.
    run_open: bool,
    images: Vec<&'a B>,
}

impl<'a, B: WireBlock + 'a, S: WireSink<'a, B>> Assembler<'a, '_, B, S> {
    fn open_run(&mut self, source: Option<usize>) {
        if !self.run_open {
            self.run_open = true;
            self.sink.start(MessageStart {
                role: "user",
                source,
                user_turn: false,
                string_content: false,
                effort: None,
                has_thinking: false,
                produced: None,
            });
        }
    }

    fn close_run(&mut self) {
        if self.run_open {
            for b in self.images.drain(..) {
                self.sink.block(b);
            }
            self.run_open = false;
        }
    }

    /// Answers the calls still pending, in the open run (or a new one).
    fn answer(&mut self, source: Option<usize>) {
        for (id, block) in self.pending {
            if !self.answered.contains(id) {
                self.open_run(source);
                self.sink.block(block);
            }
        }
        self.pending = &[];
        self.answered.clear();
    }

    fn user(&mut self, i: usize, blocks: &'a [B], string_content: bool) {
        self.answer(Some(i));
        self.close_run();
        self.sink.turn(i);
        self.sink.start(MessageStart {
            role: "user",
            source: Some(i),
            user_turn: true,
            string_content,
            effort: None,
            has_thinking: false,
            produced: None,
        });
        for b in blocks {
            self.sink.block(b);
        }
    }

    fn assistant(
        &mut self,
        i: usize,
        blocks: &'a [B],
        tool_calls: &'a [(u64, B)],
        errored: bool,
        (effort, produced): (Option<&Json>, Option<u64>),
    ) {
        self.answer(Some(i));
        // transformMessages drops an errored turn before the results are
        // merged: the runs on either side of it become one.
        if errored {
            return;
        }
        self.close_run();
        if !tool_calls.is_empty() {
            self.pending = tool_calls;
            self.answered.clear();
        }
        if blocks.is_empty() {
            return;
        }
        if let Some(level) = effort {
            self.sink.start(effort_start(level.clone()));
        }
        self.sink.start(MessageStart {
            role: "assistant",
            source: Some(i),
            user_turn: false,
            string_content: false,
            effort: None,
            has_thinking: blocks.iter().any(WireBlock::is_thinking),
            produced,
        });
        for b in blocks {
            self.sink.block(b);
        }
    }

    fn tool_result(&mut self, i: usize, id: u64, block: &'a B, images: &'a [B]) {
        self.answered.push(id);
        self.open_run(Some(i));
        self.sink.block(block);
        self.images.extend(images.iter());
    }
}

/// Streams the request's messages from `converted` to `sink`; `offset`:
/// the index of `converted[0]` (a resumed request starts at a user turn).
pub fn assemble<'a, B, C, S>(converted: &'a [C], offset: usize, model: &CallModel, sink: &mut S)
where
    B: WireBlock + 'a,
    C: std::ops::Deref<Target = Converted<B>>,
    S: WireSink<'a, B>,
{
    let mut a = Assembler {
        sink,
        pending: &[],
        answered: Vec::new(),
        run_open: false,
        images: Vec::new(),
    };
    for (i, c) in converted.iter().enumerate() {
        let i = i + offset;
        match &**c {
            Converted::Nothing => {}
            Converted::User {
                blocks,
                string_content,
            } => a.user(i, blocks, *string_content),
            Converted::Assistant {
                blocks,
                tool_calls,
                errored,
                effort,
                produced,
            } => a.assistant(
                i,
                blocks,
                tool_calls,
                *errored,
                (effort.as_ref().filter(|_| model.effort), *produced),
            ),
            Converted::ToolResult { id, block, images } => a.tool_result(i, *id, block, images),
        }
    }
    a.answer(None);
    a.close_run();
    if model.effort {
        a.sink.start(effort_start(Json::str("high")));
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
        produced: None,
    }
}
