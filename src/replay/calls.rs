//! What the session file says about each model call besides its context:
//! which model answered it (the assistant message's `provider`, `model`
//! and `api`, or the `model` option), the usage pi recorded for it, the
//! tools and system prompt in force (pi's `system` messages on the path),
//! and what happened since the previous call: a compaction, a branch
//! summary, a context edit, pi's cache warms (`usage` entries of kind
//! `cache_warm`), and what pi's cache warmer asks of a call (`warmer.rs`):
//! whether its request thinks, and when the answer ended the agent's run.

use xxhash_rust::xxh3::xxh3_64;

use crate::cost::request::Preamble;
use crate::cost::usage::Usage;
use crate::cost::wire::CallModel;
use crate::json::text::to_string_lossy;
use crate::json::view::Value;
use crate::json::Json;
use crate::sessionfile::date::{date_of, DateValue};
use crate::sessionfile::{Entry, ModelCall, SessionFile};

/// What happened on the path between the previous call and this one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Since {
    pub compaction: bool,
    pub branch: bool,
    /// A `context_edit` entry rewrote an earlier message.
    pub edit: bool,
    /// Times (ms) of pi's cache warms.
    pub warms: Vec<f64>,
    /// When the conversation stopped extending the previous request (the
    /// first model change, compaction or branch summary since): pi's
    /// warmer stops warming it then.
    pub changed: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CallMeta {
    pub model: CallModel,
    /// XXH3 of `provider/id`: the key of the model's cache.
    pub model_key: u64,
    pub usage: Option<Usage>,
    pub preamble: Preamble,
    pub since: Since,
    /// The request thinks (pi's thinking level is not `off` and the model
    /// reasons): pi-ai sends `reasoning`.
    pub reasoning: bool,
    /// When the answer ended the agent's run (it asked for no tool): the
    /// assistant entry's time. None while the run goes on.
    pub settled: Option<f64>,
    /// The answer's key (`wire::answer_key`: what its thinking is bound
    /// to under preserved thinking).
    pub answer: Option<u64>,
}

/// A string field as UTF-8 (lone surrogates as U+FFFD).
fn text(v: Option<Value<'_>>) -> Box<[u8]> {
    v.and_then(|v| v.string())
        .map(|s| to_string_lossy(&s).into_bytes().into_boxed_slice())
        .unwrap_or_default()
}

fn entry_time(e: &Entry<'_>) -> Option<f64> {
    match date_of(e.timestamp()) {
        DateValue::Time(t) if t.is_finite() => Some(t),
        _ => None,
    }
}

/// Folds one `system` message into the preamble: its text and its tools.
fn fold_system(p: &mut Preamble, message: Value<'_>) {
    let parsed = Json::of(message);
    let text = crate::cost::wire::system_text(&parsed)
        .map(|t| t.to_json())
        .unwrap_or_default();
    let tools = parsed
        .get("toolsAdded")
        .map(Json::to_json)
        .unwrap_or_default();
    let removed = parsed
        .get("toolsRemoved")
        .map(Json::to_json)
        .unwrap_or_default();
    p.system_chars += crate::json::utf16_len(&text) as u64;
    p.system_hash = xxh3_64(&[&p.system_hash.to_le_bytes()[..], &text].concat());
    if tools.len() > 2 || removed.len() > 2 {
        p.tools_chars += crate::json::utf16_len(&tools) as u64;
        p.tools_hash = xxh3_64(&[&p.tools_hash.to_le_bytes()[..], &tools, &removed].concat());
    }
}

/// One `CallMeta` per model call. `model` overrides the model of every
/// call (`provider/id`).
pub fn call_meta(
    file: &SessionFile<'_>,
    path: &[u32],
    calls: &[ModelCall],
    model: Option<&CallModel>,
    catalog: &crate::cost::catalog::Catalog,
) -> Vec<CallMeta> {
    let mut out = Vec::with_capacity(calls.len());
    let mut preamble = Preamble::default();
    let mut scanned = 0usize;
    let mut since = Since::default();
    // pi's default thinking level (pi-coding-agent core/defaults.js).
    let mut thinking_off = false;
    for c in calls {
        // Entries up to the call's leaf shape its prompt; entries after the
        // leaf (written during the answer) count for the next call.
        let upto = c.leaf.map_or(0, |l| l + 1).max(scanned);
        for &e in &path[scanned..upto] {
            let entry = file.entry(e as usize);
            if entry.is("message") && entry.message_role_is("system") {
                if let Some(m) = entry.message() {
                    fold_system(&mut preamble, m);
                }
            } else if entry.is("compaction") {
                since.compaction = true;
                since.changed = since.changed.or(entry_time(&entry));
            } else if entry.is("branch_summary") {
                since.branch = true;
                since.changed = since.changed.or(entry_time(&entry));
            } else if entry.is("model_change") {
                since.changed = since.changed.or(entry_time(&entry));
            } else if entry.is("thinking_level_change") {
                thinking_off = entry.get("thinkingLevel").is_some_and(|l| l.is_str("off"));
            } else if entry.is("context_edit") {
                since.edit = true;
            } else if entry.is("usage") && entry.get("kind").is_some_and(|k| k.is_str("cache_warm"))
            {
                if let Some(t) = entry_time(&entry) {
                    since.warms.push(t);
                }
            }
        }
        scanned = upto;
        let a = file.entry(path[c.assistant] as usize);
        let message = a.message();
        let mut m = match model {
            Some(m) => m.clone(),
            None => CallModel {
                provider: text(message.and_then(|m| m.get("provider"))),
                api: text(message.and_then(|m| m.get("api"))),
                id: text(message.and_then(|m| m.get("model"))),
                images: true,
                effort: false,
                empty_signature: false,
                answers_own: false,
            },
        };
        let known = catalog.get(&m.provider, &m.id);
        if let Some(entry) = known {
            m.images = entry.images;
            m.effort = entry.effort;
            if m.api.is_empty() {
                m.api = entry.api.clone();
            }
        }
        let model_key = m.key();
        let tool_use = message
            .and_then(|m| m.get("stopReason"))
            .is_some_and(|r| r.is_str("toolUse"));
        out.push(CallMeta {
            answer: message
                .and_then(|m| m.get("timestamp"))
                .and_then(|t| t.number())
                .filter(|t| t.is_finite())
                .map(f64::to_bits),
            reasoning: !thinking_off && known.is_none_or(|e| e.reasoning),
            settled: if tool_use { None } else { entry_time(&a) },
            model: m,
            model_key,
            usage: Usage::of(message.and_then(|m| m.get("usage"))),
            preamble,
            since: std::mem::take(&mut since),
        });
        // The assistant entry and what its answer wrote (up to the next
        // call's leaf) are scanned with the next call.
    }
    out
}
