//! The whole Anthropic request pi-ai 1.6.0 would send (`{system?,
//! messages}`), written out as JSON: the replay's block model as a payload,
//! for the differential test against pi-ai's `onPayload`
//! (`__test__/wire-payload.test.js`, through the binding's
//! `replayWirePayload`). The replay itself never writes it: it streams the
//! converted messages (`wire.rs`) through `assemble.rs` into its own sink.

use super::assemble::{assemble, MessageStart, WireBlock, WireSink};
use super::wire::{
    content_array, convert_message, is_type, normalize_tool_call_id, obj, s, same_model,
    system_text, CallModel, Converted,
};
use crate::json::Json;

/// A wire message, collected.
#[derive(Debug, Clone, PartialEq)]
pub struct WireMessage<B> {
    pub role: &'static str,
    pub blocks: Vec<B>,
    pub string_content: bool,
    pub source: Option<usize>,
    pub user_turn: bool,
    pub effort: Option<Json>,
}

struct Collect<B>(Vec<WireMessage<B>>);

impl<'a, B: Clone> WireSink<'a, B> for Collect<B> {
    fn start(&mut self, m: MessageStart) {
        self.0.push(WireMessage {
            role: m.role,
            blocks: Vec::new(),
            string_content: m.string_content,
            source: m.source,
            user_turn: m.user_turn,
            effort: m.effort,
        });
    }

    fn block(&mut self, block: &'a B) {
        if let Some(m) = self.0.last_mut() {
            m.blocks.push(block.clone());
        }
    }
}

/// The request's messages, collected.
pub fn collect<B: WireBlock + Clone>(
    converted: &[&Converted<B>],
    model: &CallModel,
) -> Vec<WireMessage<B>> {
    let mut sink = Collect(Vec::new());
    assemble(converted, 0, model, &mut sink);
    sink.0
}

/// The message that carries the cache marker: the last one before a
/// trailing effort marker, when it is a user message.
pub fn marker_at<B>(messages: &[WireMessage<B>], model: &CallModel) -> Option<usize> {
    let end = messages.len() - usize::from(model.effort && !messages.is_empty());
    let last = end.checked_sub(1)?;
    (messages[last].role == "user").then_some(last)
}

/// The request's `messages` as pi-ai writes them, with the marker
/// (`cache_control`: `ttl` for long retention, none without caching).
pub fn write_payload_messages(
    messages: &[WireMessage<Json>],
    model: &CallModel,
    retention: &str,
) -> Json {
    let marker = if retention == "none" {
        None
    } else {
        marker_at(messages, model)
    };
    let control = || {
        let mut f = vec![("type", s("ephemeral"))];
        if retention == "long" {
            f.push(("ttl", s("1h")));
        }
        obj(f)
    };
    Json::Arr(
        messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                if m.role == "system" {
                    let level = m.effort.clone().unwrap_or_default();
                    return obj(vec![
                        ("role", s("system")),
                        ("content", Json::Arr(Vec::new())),
                        ("output_config", obj(vec![("effort", level)])),
                    ]);
                }
                let marked = marker == Some(i);
                let content = if m.string_content && !marked {
                    m.blocks[0].get("text").cloned().unwrap_or_default()
                } else {
                    let mut blocks = m.blocks.clone();
                    if marked {
                        if let Some(Json::Obj(f)) = blocks.last_mut() {
                            f.push((b"cache_control"[..].into(), control()));
                        }
                    }
                    Json::Arr(blocks)
                };
                obj(vec![("role", s(m.role)), ("content", content)])
            })
            .collect(),
    )
}

/// The whole payload pi-ai would send for `messages` (pi agent messages,
/// pi's system message first): `{system?, messages}`. For the differential
/// test against pi-ai's `onPayload`.
pub fn payload(messages: &[Json], model: &CallModel, retention: &str) -> Json {
    let system = messages.first().and_then(system_text);
    let rest = if messages
        .first()
        .is_some_and(|m| m.get("role").is_some_and(|r| r.is_str("system")))
    {
        &messages[1..]
    } else {
        messages
    };
    let converted = convert_all(rest, model);
    let refs: Vec<&Converted<Json>> = converted.iter().collect();
    let wire = collect(&refs, model);
    let mut fields = Vec::new();
    if let Some(text) = system {
        let mut block = vec![("type", s("text")), ("text", text)];
        if retention != "none" {
            let mut f = vec![("type", s("ephemeral"))];
            if retention == "long" {
                f.push(("ttl", s("1h")));
            }
            block.push(("cache_control", obj(f)));
        }
        fields.push(("system", Json::Arr(vec![obj(block)])));
    }
    fields.push(("messages", write_payload_messages(&wire, model, retention)));
    obj(fields)
}

/// Converts a run of pi messages, tracking which tool-call ids another
/// model's calls had normalized (their results follow the new id).
pub fn convert_all(messages: &[Json], model: &CallModel) -> Vec<Converted<Json>> {
    let mut renamed: Vec<Json> = Vec::new();
    messages
        .iter()
        .map(|m| {
            let normalize = m.get("role").is_some_and(|r| r.is_str("toolResult"))
                && m.get("toolCallId").is_some_and(|id| renamed.contains(id));
            let c = convert_message(m, model, normalize);
            if m.get("role").is_some_and(|r| r.is_str("assistant")) && !same_model(m, model) {
                for b in content_array(m) {
                    if is_type(b, "toolCall") {
                        if let Some(id) = b.get("id") {
                            if normalize_tool_call_id(id) != *id {
                                renamed.push(id.clone());
                            }
                        }
                    }
                }
            }
            c
        })
        .collect()
}
