//! Phase 1 (SPEC 3; SPEC-2.9 3): a summarized tool result becomes a stub
//! that points at its summary. The dialects differ in the key: 2.4.3 looks
//! the bare `toolCallId` up, 2.9.1 the occurrence key first and the bare id
//! only for a legacy-only record. The stub text is spelled here once for
//! Rust; `stubText` in js/pure/rules.js is the JS oracle's copy.

use super::keys::{message_key, MessageKey};
use super::put;
use super::text::{write_or, write_scalar};
use super::Inputs;
use crate::dialect::Dialect;
use crate::error::{PruneError, Result};
use crate::hash::{HashMap, HashSet};
use crate::indexer_methods::IndexerMethod;
use crate::json::value::write_value;
use crate::json::Json;
use crate::record::{ElementKind, Log, Role, Scalar};
use crate::script::{EditScript, Stats};

const GRACE_TOOL: &[u8] = b"context_tree_query";

/// Phase 1's decision for one tool result, before recovery grace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StubDecision {
    Keep,
    /// Stub it with the text `TextId`.
    Stub(TextId),
}

/// A stub text's number, stable within a generation (so an edit already
/// sent to JS can be named by it).
pub type TextId = u32;

/// What phase 1 keeps between renders: its decision per tool result and
/// the stub texts they name.
#[derive(Default)]
pub struct StubCache {
    stubs: Vec<Option<StubDecision>>,
    texts: Vec<Box<[u8]>>,
    text_ids: HashMap<Box<[u8]>, TextId>,
    /// The keys a tool result is looked up by (its id; in 2.9.1 also its
    /// occurrence key) to the messages `0..keyed` that carry them, so a
    /// flush forgets the decisions its answers touched without reading
    /// every message. It depends on the messages alone.
    result_keys: HashMap<Box<[u8]>, Vec<u32>>,
    keyed: usize,
    /// The dialect `result_keys` was built for (a memo serves one engine).
    keyed_dialect: Dialect,
}

impl StubCache {
    /// Forgets every decision and text (the keys stay: they depend on the
    /// messages alone).
    pub fn clear(&mut self) {
        self.stubs.clear();
        self.texts.clear();
        self.text_ids.clear();
    }

    /// Forgets the decisions about messages `from` and after of `log`
    /// (about to be re-sent).
    pub fn truncate(&mut self, from: usize, log: &Log) {
        self.stubs.truncate(from);
        // The keys the re-sent messages added are taken back, newest first.
        for i in (from..self.keyed).rev() {
            for key in result_keys_of(log, i, self.keyed_dialect).into_iter().rev() {
                if let Some(v) = self.result_keys.get_mut(key.as_slice()) {
                    if v.last() == Some(&(i as u32)) {
                        v.pop();
                    }
                    if v.is_empty() {
                        self.result_keys.remove(key.as_slice());
                    }
                }
            }
        }
        self.keyed = self.keyed.min(from);
    }

    pub fn get(&self, i: usize) -> Option<StubDecision> {
        self.stubs.get(i).copied().flatten()
    }

    /// Forgets the decisions about the tool results that look `keys` up
    /// (their indexer answers changed; nothing else did).
    pub fn forget_for(&mut self, keys: &HashSet<Box<[u8]>>, log: &Log, dialect: Dialect) {
        self.keyed_dialect = dialect;
        for i in self.keyed..log.records.len() {
            for key in result_keys_of(log, i, dialect) {
                self.result_keys
                    .entry(key.into_boxed_slice())
                    .or_default()
                    .push(i as u32);
            }
        }
        self.keyed = log.records.len();
        for key in keys {
            for &i in self.result_keys.get(key).into_iter().flatten() {
                if let Some(d) = self.stubs.get_mut(i as usize) {
                    *d = None;
                }
            }
        }
    }

    /// The id of a stub text, the same for the same text.
    pub fn text_id(&mut self, text: Vec<u8>) -> TextId {
        if let Some(&id) = self.text_ids.get(text.as_slice()) {
            return id;
        }
        let id = self.texts.len() as TextId;
        let text: Box<[u8]> = text.into_boxed_slice();
        self.texts.push(text.clone());
        self.text_ids.insert(text, id);
        id
    }

    pub fn text(&self, id: TextId) -> &[u8] {
        &self.texts[id as usize]
    }
}

/// The keys tool result `i` is looked up by, in the order they are indexed:
/// its id, and in 2.9.1 its `K(m)` (none for another message).
fn result_keys_of(log: &Log, i: usize, dialect: Dialect) -> Vec<Vec<u8>> {
    let rec = &log.records[i];
    let mut keys = Vec::new();
    if rec.role != Role::ToolResult {
        return keys;
    }
    if let Scalar::Str(s) = rec.tool_call_id {
        keys.push(log.syms.text(s).to_vec());
    }
    if dialect == Dialect::V2_9 {
        if let MessageKey::Text(k) = message_key(rec, &log.syms) {
            keys.push(k);
        }
    }
    keys
}

pub fn run(
    inputs: &Inputs<'_>,
    cache: &mut StubCache,
    script: &mut EditScript,
    stats: &mut Stats,
) -> Result<bool> {
    let log = inputs.log;
    let grace = recovery_grace(inputs);
    let mut changed = false;
    for (i, rec) in log.records.iter().enumerate() {
        // The reference reads `msg.role` of every element in turn: a null
        // one throws there, after what the messages before it asked.
        if rec.kind == ElementKind::Null {
            return Err(PruneError::bad_message(
                i,
                "element",
                "is null, not a message object",
            ));
        }
        if rec.role != Role::ToolResult {
            continue;
        }
        let decision = match cache.get(i) {
            Some(d) => d,
            None => {
                let d = decide(inputs, cache, i)?;
                put(&mut cache.stubs, i, d);
                d
            }
        };
        let StubDecision::Stub(text) = decision else {
            continue;
        };
        if !grace.is_empty() && in_grace(inputs, i, &grace) {
            continue;
        }
        inputs
            .state
            .require(IndexerMethod::GetShortRefForToolCallId)?;
        script.stub(i, text);
        stats.stubbed += 1;
        changed = true;
    }
    Ok(changed)
}

/// Whether tool result `i`'s key is among the `grace` keys: 2.4.3 compares
/// the id, 2.9.1 `K(m)`.
fn in_grace(inputs: &Inputs<'_>, i: usize, grace: &[Vec<u8>]) -> bool {
    let log = inputs.log;
    let rec = &log.records[i];
    match inputs.dialect {
        Dialect::V2_4 => rec
            .tool_call_id
            .as_str()
            .is_some_and(|s| grace.iter().any(|g| g.as_slice() == log.syms.text(s))),
        Dialect::V2_9 => match message_key(rec, &log.syms) {
            MessageKey::Text(k) => grace.contains(&k),
            MessageKey::Value(_) => false,
        },
    }
}

/// Phase 1 for tool result `i`, recovery grace aside: whether it is
/// summarized and not protected, and its stub text.
fn decide(inputs: &Inputs<'_>, cache: &mut StubCache, i: usize) -> Result<StubDecision> {
    let log = inputs.log;
    let rec = &log.records[i];
    let state = inputs.state;
    // Asked of every tool result, whatever its id.
    state.require(IndexerMethod::IsSummarized)?;
    let lookup = match inputs.dialect {
        Dialect::V2_4 => {
            let Scalar::Str(id) = rec.tool_call_id else {
                return Ok(StubDecision::Keep);
            };
            let id = log.syms.text(id);
            if !state.is_summarized(id) {
                return Ok(StubDecision::Keep);
            }
            id.to_vec()
        }
        Dialect::V2_9 => {
            let key = message_key(rec, &log.syms);
            match key.text() {
                Some(k) if state.is_summarized(k) => k.to_vec(),
                _ => {
                    state.require(IndexerMethod::HasLegacyBareRecord)?;
                    match rec.tool_call_id {
                        Scalar::Str(id) if state.has_legacy_bare_record(log.syms.text(id)) => {
                            log.syms.text(id).to_vec()
                        }
                        _ => return Ok(StubDecision::Keep),
                    }
                }
            }
        }
    };
    state.require(IndexerMethod::GetRecord)?;
    let record = state.record(&lookup);
    if let (Some(p), Some(r)) = (&inputs.config.protection, record) {
        match p.protects(r.get("toolName"), r.get("args")) {
            Ok(true) => return Ok(StubDecision::Keep),
            Ok(false) => {}
            Err(what) => {
                return Err(PruneError::bad_config(format!(
                    "{what} (the reference throws checking message {i})"
                )))
            }
        }
    }
    let mut reference = Vec::new();
    match inputs.state.short_ref(&lookup) {
        Some(r) if !r.is_null() => r.write_js_string(&mut reference),
        _ => write_scalar(&mut reference, &rec.tool_call_id, &log.syms),
    }
    Ok(StubDecision::Stub(
        cache.text_id(stub_text(record, &reference)),
    ))
}

/// Keys of `context_tree_query` results within the last
/// `recoveryGraceTurns` user turns (2.4.3: their ids; 2.9.1: `K(m)`).
fn recovery_grace(inputs: &Inputs<'_>) -> Vec<Vec<u8>> {
    let log = inputs.log;
    let Some(grace) = inputs.config.grace_turns() else {
        return Vec::new();
    };
    // A result's turn distance is the number of user messages after it:
    // walked from the end, it only grows, so the walk stops at the first
    // message beyond the grace (a number above 0, never NaN).
    let mut users_after = 0usize;
    let mut keys = Vec::new();
    for rec in log.records.iter().rev() {
        if rec.role == Role::User {
            users_after += 1;
            continue;
        }
        if users_after as f64 > grace {
            break;
        }
        let query = rec.role == Role::ToolResult
            && rec
                .tool_name
                .as_str()
                .is_some_and(|n| log.syms.text(n) == GRACE_TOOL);
        let Scalar::Str(id) = rec.tool_call_id else {
            continue;
        };
        if query {
            keys.push(match inputs.dialect {
                Dialect::V2_4 => log.syms.text(id).to_vec(),
                Dialect::V2_9 => match message_key(rec, &log.syms) {
                    MessageKey::Text(k) => k,
                    MessageKey::Value(_) => continue,
                },
            });
        }
    }
    keys
}

/// The stub's text (canonical): the spilled form when the record has a
/// truthy `spillPath`, the plain form otherwise.
fn stub_text(record: Option<&Json>, reference: &[u8]) -> Vec<u8> {
    let mut t = Vec::new();
    let spill = record
        .and_then(|r| r.get("spillPath"))
        .filter(|p| p.truthy());
    match (record, spill) {
        (Some(r), Some(path)) => {
            t.extend_from_slice("[Oversized output spilled to file \u{2014} ".as_bytes());
            write_or(&mut t, r.get("spillBytes"), b"?");
            t.extend_from_slice(b" bytes.]\\nTool: ");
            write_value(&mut t, r.get("toolName"));
            t.extend_from_slice(b"\\nPreview (head):\\n");
            write_or(&mut t, r.get("resultPreview"), b"");
            t.extend_from_slice(
                "\\nFull output \u{2014} read this file (offset/limit supported): ".as_bytes(),
            );
            path.write_js_string(&mut t);
            t.extend_from_slice(b"\\nOr use context_tree_query with ref `");
            t.extend_from_slice(reference);
            t.extend_from_slice(b"`.");
        }
        _ => {
            t.extend_from_slice(b"[Summarized in pruner summary, ref `");
            t.extend_from_slice(reference);
            t.extend_from_slice(b"`. Use context_tree_query to retrieve full output.]");
        }
    }
    t
}
