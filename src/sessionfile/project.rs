//! One selected entry to the messages pi builds from it (A.7, step 4): a
//! message entry's message (content made `""` or `[]` where pi fixes a
//! missing one), the `custom`, `branchSummary` and `compactionSummary`
//! messages pi creates, a compaction's system checkpoint, and a context
//! edit's replacement applied to them. Each message comes out as its
//! `JSON.stringify` text: borrowed from the file when the line is canonical
//! and pi passes the message through untouched, written anew otherwise.

use std::borrow::Cow;

use super::date::{date_of, DateValue};
use super::error::{Result, SessionError};
use super::file::Entry;
use crate::json::spread::{write_spread, Override};
use crate::json::stringify::{to_json, write};
use crate::json::tape::Kind;
use crate::json::text::write_str;
use crate::json::view::Value;
use crate::json::write_json_number;

/// A message of the context.
#[derive(Clone, Debug)]
pub struct Projected<'s> {
    /// `JSON.stringify(message)`.
    pub json: Cow<'s, [u8]>,
    /// Index of the entry it comes from.
    pub entry: u32,
    /// `message.role === "system"`: not shown to `context` handlers (A.8).
    pub system: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EntryRole {
    User,
    Assistant,
    ToolResult,
    Custom,
    System,
    Other,
}

fn role_of(v: Value<'_>, renamed: bool) -> EntryRole {
    if v.kind() != Kind::Object {
        return EntryRole::Other;
    }
    if renamed {
        return EntryRole::Custom;
    }
    match v.get("role") {
        Some(r) if r.is_str("user") => EntryRole::User,
        Some(r) if r.is_str("assistant") => EntryRole::Assistant,
        Some(r) if r.is_str("toolResult") => EntryRole::ToolResult,
        Some(r) if r.is_str("custom") => EntryRole::Custom,
        Some(r) if r.is_str("system") => EntryRole::System,
        _ => EntryRole::Other,
    }
}

/// Where a message comes from, before it is written.
enum MessageSource<'s> {
    /// A stored message (or a compaction's checkpoint).
    Stored {
        v: Value<'s>,
        renamed: bool,
        fixed_content: Option<&'static [u8]>,
    },
    Custom,
    BranchSummary,
    CompactionSummary,
}

/// A context edit's replacement content as JSON (`None`: undefined), and as
/// the text block pi makes of a string for assistants and tool results.
struct EditedContent {
    json: Option<Vec<u8>>,
    text_block: Option<Vec<u8>>,
}

/// Closes a message pi builds from an entry with its `timestamp`: the
/// entry's ISO `timestamp` read with `Date`, as JSON (`null` for NaN).
fn with_timestamp<'s>(entry: &Entry<'_>, mut out: Vec<u8>) -> Result<Cow<'s, [u8]>> {
    match date_of(entry.timestamp()) {
        DateValue::Time(t) => {
            out.extend_from_slice(b",\"timestamp\":");
            write_json_number(&mut out, t);
            out.push(b'}');
            Ok(Cow::Owned(out))
        }
        DateValue::LocalTime => Err(SessionError::at(
            entry.line,
            "timestamp holds a date without a time zone: JavaScript reads it in the host's local time zone, which this loader does not guess",
        )),
    }
}

fn member(out: &mut Vec<u8>, key: &str, v: Option<Value<'_>>) {
    if let Some(v) = v {
        out.push(b',');
        write_str(out, key);
        out.push(b':');
        write(out, v);
    }
}

/// The messages of `entry`, selected at `head` (first of the selection)
/// or not, with the context edit `edit` when one targets it.
pub fn project<'s>(
    entry: Entry<'s>,
    head: bool,
    edit: Option<Entry<'s>>,
) -> Result<Vec<Projected<'s>>> {
    let mut sources: Vec<(MessageSource<'s>, EntryRole)> = Vec::new();
    if entry.is("message") {
        let Some(m) = entry.message().filter(|m| !m.is_null()) else {
            return Err(missing_message(&entry));
        };
        let renamed = entry.role_renamed();
        let role = role_of(m, renamed);
        let content_missing =
            m.kind() == Kind::Object && m.get("content").is_none_or(|c| c.is_null());
        let fixed_content: Option<&'static [u8]> = match role {
            EntryRole::System if content_missing => Some(b"\"\""),
            EntryRole::User | EntryRole::Assistant | EntryRole::ToolResult if content_missing => {
                Some(b"[]")
            }
            _ => None,
        };
        sources.push((
            MessageSource::Stored {
                v: m,
                renamed,
                fixed_content,
            },
            role,
        ));
    } else if entry.is("custom_message") {
        sources.push((MessageSource::Custom, EntryRole::Custom));
    } else if entry.is("branch_summary") {
        if entry.get("summary").is_some_and(|s| s.truthy()) {
            sources.push((MessageSource::BranchSummary, EntryRole::Other));
        }
    } else if entry.is("compaction") && head {
        if let Some(sys) = entry.get("systemMessage").filter(|s| s.truthy()) {
            let role = role_of(sys, false);
            sources.push((
                MessageSource::Stored {
                    v: sys,
                    renamed: false,
                    fixed_content: None,
                },
                role,
            ));
        }
        sources.push((MessageSource::CompactionSummary, EntryRole::Other));
    }

    let mut edited: Option<EditedContent> = None;
    if let Some(edit) = edit {
        match edit.get("replacement") {
            Some(r) if r.is_null() => return Ok(Vec::new()),
            None => {
                let editable = sources.iter().any(|(_, role)| {
                    matches!(
                        role,
                        EntryRole::User
                            | EntryRole::Assistant
                            | EntryRole::ToolResult
                            | EntryRole::Custom
                    )
                });
                if editable {
                    return Err(SessionError::at(
                        edit.line,
                        format!(
                            "context_edit without replacement targets the entry at line {}: pi throws a TypeError building the context",
                            entry.line
                        ),
                    ));
                }
            }
            Some(r) => {
                let content = r.get("content").filter(|_| r.is_object());
                edited = Some(EditedContent {
                    json: content.map(to_json),
                    text_block: content.filter(|c| c.kind() == Kind::String).map(|c| {
                        let mut b = b"[{\"type\":\"text\",\"text\":".to_vec();
                        write(&mut b, c);
                        b.extend_from_slice(b"}]");
                        b
                    }),
                });
            }
        }
    }

    let mut out = Vec::with_capacity(sources.len());
    for (source, role) in sources {
        // The content pi sets on an edited message.
        let content_override: Option<Override<'_>> = match (&edited, role) {
            (Some(e), EntryRole::Assistant | EntryRole::ToolResult) if e.text_block.is_some() => {
                e.text_block.as_deref().map(Override::Json)
            }
            (
                Some(e),
                EntryRole::User | EntryRole::Assistant | EntryRole::ToolResult | EntryRole::Custom,
            ) => Some(e.json.as_deref().map_or(Override::Omit, Override::Json)),
            _ => None,
        };
        let json: Cow<'s, [u8]> = match source {
            MessageSource::Stored {
                v,
                renamed,
                fixed_content,
            } => {
                let mut overrides: Vec<(&str, Override<'_>)> = Vec::new();
                if renamed {
                    overrides.push(("role", Override::Json(b"\"custom\"")));
                }
                if let Some(o) = content_override.or(fixed_content.map(Override::Json)) {
                    overrides.push(("content", o));
                }
                if overrides.is_empty() {
                    if v.canonical() {
                        Cow::Borrowed(v.span())
                    } else {
                        Cow::Owned(to_json(v))
                    }
                } else {
                    let mut buf = Vec::with_capacity(v.span().len() + 16);
                    write_spread(&mut buf, v, &overrides);
                    Cow::Owned(buf)
                }
            }
            MessageSource::Custom => {
                let mut b = b"{\"role\":\"custom\"".to_vec();
                member(&mut b, "customType", entry.get("customType"));
                match content_override {
                    Some(Override::Json(t)) => {
                        b.extend_from_slice(b",\"content\":");
                        b.extend_from_slice(t);
                    }
                    Some(Override::Omit) => {}
                    None => match entry.get("content").filter(|c| !c.is_null()) {
                        Some(c) => member(&mut b, "content", Some(c)),
                        None => b.extend_from_slice(b",\"content\":[]"),
                    },
                }
                member(&mut b, "display", entry.get("display"));
                member(&mut b, "details", entry.get("details"));
                with_timestamp(&entry, b)?
            }
            MessageSource::BranchSummary => summary(&entry, b"branchSummary", "fromId")?,
            MessageSource::CompactionSummary => {
                summary(&entry, b"compactionSummary", "tokensBefore")?
            }
        };
        out.push(Projected {
            json,
            entry: entry.index,
            system: role == EntryRole::System,
        });
    }
    Ok(out)
}

/// The `branchSummary` or `compactionSummary` message of `entry`: its
/// `summary` and `also` fields.
fn summary<'s>(entry: &Entry<'_>, role: &[u8], also: &str) -> Result<Cow<'s, [u8]>> {
    let mut b = b"{\"role\":\"".to_vec();
    b.extend_from_slice(role);
    b.push(b'"');
    member(&mut b, "summary", entry.get("summary"));
    member(&mut b, also, entry.get(also));
    with_timestamp(entry, b)
}

pub fn missing_message(entry: &Entry<'_>) -> SessionError {
    SessionError::at(
        entry.line,
        "message entry without a message: pi throws a TypeError building the context",
    )
}
