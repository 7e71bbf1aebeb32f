//! One output message as a JSON value, for the wire conversion
//! (`wire.rs` reads values): what a render's slot shows, built from the
//! input message's value and the slot's edit rather than from the slot's
//! rendered text, so no rendered text is parsed back. The shapes are
//! `script.rs`'s (`write_stub`, `write_inserted`, `purge_marker`) and
//! `apply.rs`'s edit (`write_edited`) as values; the replay's tests hold
//! every value against the text `write_slot` writes (`walk.rs`).

use crate::engine::Shown;
use crate::json::parse_checked_value;
use crate::json::Json;
use crate::record::{Interner, Scalar};

/// A message's value from its JSON text (the context's own messages, as
/// the engine keeps them: read and checked as UTF-8 already).
pub fn message(json: &[u8]) -> Json {
    parse_checked_value(json).unwrap_or_default()
}

/// The value a slot shows.
pub fn shown(s: &Shown<'_>) -> Json {
    match s {
        Shown::Message { text, slot } => {
            let mut m = message(text);
            if slot.strip_thinking || !slot.purged.is_empty() {
                edit(&mut m, slot.strip_thinking, &slot.purged);
            }
            m
        }
        Shown::Stub { record, text, syms } => {
            let mut fields = vec![field("role", Json::str("toolResult"))];
            let mut scalar = |name: &str, v: &Scalar| {
                if let Some(v) = scalar_value(v, syms) {
                    fields.push(field(name, v));
                }
            };
            scalar("toolCallId", &record.tool_call_id);
            scalar("toolName", &record.tool_name);
            fields.push(field("content", text_content(text)));
            fields.push(field("isError", Json::Bool(false)));
            if let Some(v) = scalar_value(&record.timestamp, syms) {
                fields.push(field("timestamp", v));
            }
            Json::Obj(fields)
        }
        Shown::Inserted(block) => {
            let mut fields = vec![
                field("role", Json::str("user")),
                field("content", text_content(&block.text)),
            ];
            if let Some(t) = &block.timestamp {
                fields.push(field("timestamp", t.clone()));
            }
            Json::Obj(fields)
        }
    }
}

fn field(name: &str, v: Json) -> (Box<[u8]>, Json) {
    (name.as_bytes().into(), v)
}

/// `[{"type":"text","text":T}]`, `T` canonical text.
fn text_content(text: &[u8]) -> Json {
    Json::Arr(vec![Json::Obj(vec![
        field("type", Json::str("text")),
        field("text", Json::Str(text.into())),
    ])])
}

/// A scalar the phases read, as a value (None: absent).
fn scalar_value(s: &Scalar, syms: &Interner) -> Option<Json> {
    Some(match s {
        Scalar::Absent => return None,
        Scalar::Null => Json::Null,
        Scalar::Bool(b) => Json::Bool(*b),
        Scalar::Num(n) => Json::Num(*n),
        Scalar::Str(s) => Json::Str(syms.text(*s).into()),
        Scalar::Object(s) => message(syms.text(*s)),
    })
}

/// `apply.rs`'s edit on a value: thinking blocks removed, the arguments of
/// the purged blocks replaced by the purge marker.
fn edit(m: &mut Json, strip_thinking: bool, purged: &[(u32, u32)]) {
    let Json::Obj(fields) = m else { return };
    let Some((_, Json::Arr(blocks))) = fields.iter_mut().rev().find(|(k, _)| &**k == b"content")
    else {
        return;
    };
    let old = std::mem::take(blocks);
    for (j, mut b) in old.into_iter().enumerate() {
        let thinking =
            matches!(&b, Json::Obj(_)) && b.get("type").is_some_and(|t| t.is_str("thinking"));
        if strip_thinking && thinking {
            continue;
        }
        if let (Some(&(_, len)), Json::Obj(entries)) =
            (purged.iter().find(|(k, _)| *k as usize == j), &mut b)
        {
            if let Some((_, args)) = entries.iter_mut().rev().find(|(k, _)| &**k == b"arguments") {
                let marker = format!("<purged-errored-args size=\"{len}\"/>");
                *args = Json::Obj(vec![field("_purged", Json::str(&marker))]);
            }
        }
        blocks.push(b);
    }
}
