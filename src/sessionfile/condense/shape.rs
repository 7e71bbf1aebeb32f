//! The rebuilt state as the addon's state object (SESSIONS.md B.6, the
//! conformance READMEs' shape) and the frontier object of B.5, as JSON text.
//! Records keep only the fields the render reads; map keys become
//! `String(key)` as `Object.fromEntries` makes them.

use std::borrow::Cow;

use super::map::JsMap;
use super::{CondenseState, Dialect};
use crate::json::lex::array_index;
use crate::json::stringify::write;
use crate::json::text::{write_quoted, write_str};
use crate::json::value::write_list;
use crate::json::view::{js_members, Value};
use crate::sessionfile::key::JsVal;

const RECORD_FIELDS_243: &[&str] = &[
    "toolName",
    "args",
    "spillPath",
    "spillBytes",
    "resultPreview",
];
const RECORD_FIELDS_291: &[&str] = &[
    "toolCallId",
    "resultTimestamp",
    "toolName",
    "args",
    "spillPath",
    "spillBytes",
    "resultPreview",
];

/// Writes an object from `(key, write value)` pairs, array-index keys first
/// as JS orders them.
fn write_object<T>(
    out: &mut Vec<u8>,
    mut members: Vec<(Cow<'_, [u8]>, T)>,
    mut value: impl FnMut(&mut Vec<u8>, T),
) {
    if members.iter().any(|(k, _)| array_index(k).is_some()) {
        members.sort_by_key(|(k, _)| array_index(k).map_or(u64::MAX, u64::from));
    }
    write_list(out, b"{}", members, |out, (k, v)| {
        write_quoted(out, &k);
        out.push(b':');
        value(out, v);
    });
}

fn write_val(out: &mut Vec<u8>, v: &JsVal<'_>) {
    if !v.write_json(out) {
        // An undefined map value: JSON.stringify leaves the key out of an
        // object, which a caller cannot do after the key; such keys are
        // skipped before (see `defined`).
        out.extend_from_slice(b"null");
    }
}

fn defined<'m, 's>(map: &'m JsMap<'s, JsVal<'s>>) -> Vec<(Cow<'m, [u8]>, &'m JsVal<'s>)> {
    map.as_object()
        .into_iter()
        .filter(|(_, v)| !v.is_undefined())
        .collect()
}

fn write_record(out: &mut Vec<u8>, record: Value<'_>, fields: &[&str]) {
    let kept: Vec<_> = js_members(record)
        .into_iter()
        .filter(|(k, _)| fields.iter().any(|f| f.as_bytes() == &**k))
        .collect();
    write_object(out, kept, |out, v| write(out, v));
}

/// The record fields the state object keeps (B.6) for the dialect.
pub fn record_fields(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::V2_4 => RECORD_FIELDS_243,
        Dialect::V2_9 => RECORD_FIELDS_291,
    }
}

/// The state object: `{records, dedupAliases, shortRefs, refAliases,
/// chains, summaryBodies}`.
pub fn state_json(state: &CondenseState<'_>) -> Vec<u8> {
    let fields = record_fields(state.dialect());
    let (dedup, short) = state.aliases_and_short_refs();
    let mut out = Vec::new();
    crate::json::members::object(&mut out, |o| {
        o.raw("records", |out| {
            write_object(out, state.records().as_object(), |out, r| {
                write_record(out, *r, fields)
            })
        })
        .raw("dedupAliases", |out| {
            write_object(out, defined(&dedup), write_val)
        })
        .raw("shortRefs", |out| {
            write_object(out, defined(&short), write_val)
        })
        .raw("refAliases", |out| {
            write_object(out, defined(state.ref_aliases()), write_val)
        })
        .array("chains", state.chains().iter(), |out, (_, data)| {
            write(out, *data)
        })
        .array("summaryBodies", state.summary_bodies(), |out, body| {
            crate::json::members::object(out, |o| {
                // JSON.stringify writes undefined array elements as null.
                o.array("toolCallIds", &body.tool_call_ids, write_val)
                    .raw("text", |out| write_quoted(out, &body.text));
            })
        });
    });
    out
}

/// The frontier object of B.5 (`null` when no valid frontier entry is on
/// the branch). 2.4.3 carries `thinkingStripBoundaryTimestamp` as stored,
/// left out when the entry lacks it; 2.9.1 has no such field.
pub fn frontier_json(state: &CondenseState<'_>) -> Vec<u8> {
    let Some(data) = state.frontier_data() else {
        return b"null".to_vec();
    };
    let mut out = b"{\"lastAttemptedToolCallId\":".to_vec();
    if let Some(id) = data.get("lastAttemptedToolCallId") {
        write(&mut out, id);
    }
    let defaults: [(&str, &[u8]); 8] = [
        ("lastAttemptedToolName", b"\"unknown\""),
        ("lastAttemptedTurnIndex", b"0"),
        ("lastAttemptedTimestamp", b"0"),
        ("attemptedBatchCount", b"0"),
        ("attemptedToolCallCount", b"0"),
        ("rawCharCount", b"0"),
        ("summaryCharCount", b"0"),
        ("outcome", b"\"summarized\""),
    ];
    for (name, default) in defaults {
        out.push(b',');
        write_str(&mut out, name);
        out.push(b':');
        match data.get(name).filter(|v| !v.is_null()) {
            Some(v) => write(&mut out, v),
            None => out.extend_from_slice(default),
        }
    }
    if state.dialect() == Dialect::V2_4 {
        if let Some(b) = data.get("thinkingStripBoundaryTimestamp") {
            out.extend_from_slice(b",\"thinkingStripBoundaryTimestamp\":");
            write(&mut out, b);
        }
    }
    out.push(b'}');
    out
}
