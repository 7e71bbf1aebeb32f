//! pi-condense's indexer as the kept engine sees it during a replay: the
//! rebuilt state (`sessionfile::CondenseState`) answers the look-ups the
//! render makes per tool result (`isSummarized`, `getRecord`,
//! `getShortRefForToolCallId`, 2.9.1's `hasLegacyBareRecord`), and only the
//! keys a flush touched are answered again. A flush therefore costs what it
//! wrote, not the size of the state: re-reading the whole state at each of
//! a long session's thousands of flushes would cost more than every render.
//! The look-ups follow the state object's rules (`crate::state::State`,
//! SPEC 2.2 and SPEC-2.9 2.3) over the rebuild's JavaScript Maps, with the
//! dedup-alias pass (SESSIONS.md B.3) evaluated per key. The chain registry
//! changes rarely; when it (or a summary body it cites) changes, it is
//! handed to the engine whole.

use crate::dialect::Dialect;
use crate::error::Result;
use crate::hash::{HashMap, HashSet};
use crate::json::tape::Kind;
use crate::json::view::{js_members, Value};
use crate::json::Json;
use crate::sessionfile::condense::{occurrence_key, record_fields, state_json};
use crate::sessionfile::key::{JsKey, JsVal};
use crate::sessionfile::{CondenseState, Entry};
use crate::state::{Chains, State, Unanswered};

type Key = JsKey<'static>;

/// One thing the indexer tells a render engine; the timeline keeps them
/// for every engine of the dialect (`timeline.rs`).
pub enum Answer {
    /// `isSummarized`, `getRecord`, `getShortRefForToolCallId` for a key.
    Key {
        key: Box<[u8]>,
        summarized: bool,
        record: Option<Json>,
        short_ref: Option<Json>,
    },
    /// 2.9.1's `hasLegacyBareRecord` for an id.
    Legacy { id: Box<[u8]>, legacy: bool },
    /// The chain registry, whole.
    Chains(Chains),
}

/// How an entry touched a key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Touch {
    /// A record stored under the key.
    Record,
    /// A summary ref's short id (a `refAliases` key).
    ShortId,
    /// Any other use (a ref's target, an alias end).
    Key,
}

/// The engine-facing side of the rebuilt indexer for one dialect.
pub struct Indexer {
    dialect: Dialect,
    /// Dedup-alias pairs read so far.
    pairs_seen: usize,
    /// New key to the positions of its pairs.
    alias_positions: HashMap<Key, Vec<usize>>,
    /// Original key to the new keys aliasing it.
    aliased_by: HashMap<Key, Vec<Key>>,
    /// A `refAliases` target to the short ids naming it.
    ref_aliased_by: HashMap<Key, Vec<Key>>,
    /// 2.9.1: bare tool-call id to its records' keys.
    keys_of: HashMap<Key, Vec<Key>>,
    touched: Vec<(Key, Touch)>,
    chains_dirty: bool,
    bodies_seen: usize,
    /// The chain entries' dropped ids (None: a shape the quick test cannot
    /// read, so every new body counts).
    dropped: Option<HashSet<Vec<u8>>>,
    has_chains: bool,
}

fn owned(v: &JsVal<'_>) -> Key {
    v.key().into_owned()
}

/// The engine's key for a string key: its canonical text.
fn engine_key(k: &Key) -> Option<Vec<u8>> {
    match k {
        JsKey::String(s) => Some(s.to_vec()),
        _ => None,
    }
}

/// `JSON.parse(JSON.stringify(v))`: the value, ±Infinity as null.
fn cloned(v: Value<'_>) -> Json {
    fn nulls(j: &mut Json) {
        match j {
            Json::Num(n) if !n.is_finite() => *j = Json::Null,
            Json::Arr(items) => items.iter_mut().for_each(nulls),
            Json::Obj(entries) => entries.iter_mut().for_each(|(_, v)| nulls(v)),
            _ => {}
        }
    }
    let mut j = Json::of(v);
    if j.holds_non_finite() {
        nulls(&mut j);
    }
    j
}

/// A record as the render reads it: the state object's projection (B.6)
/// with `args` reduced to its string `path`, the only argument the render
/// looks at (protected paths). The full arguments of every record would
/// otherwise be held a second time for the whole replay.
fn lean_record(record: Value<'_>, dialect: Dialect) -> Result<Json> {
    let fields = record_fields(dialect);
    let mut out = Vec::new();
    for (k, v) in js_members(record) {
        if !fields.iter().any(|f| f.as_bytes() == &*k) {
            continue;
        }
        let value = if &*k == b"args" {
            let path = v.get("path").filter(|p| p.kind() == Kind::String);
            Json::Obj(path.map_or_else(Vec::new, |p| vec![(b"path".as_slice().into(), cloned(p))]))
        } else {
            cloned(v)
        };
        out.push((k.into_owned().into_boxed_slice(), value));
    }
    Ok(Json::Obj(out))
}

fn to_json(v: &JsVal<'_>) -> Result<Option<Json>> {
    Ok(match v {
        JsVal::Undefined => None,
        JsVal::Value(v) => Some(cloned(*v)),
        JsVal::Text(t) => Some(Json::Str(t.clone())),
    })
}

impl Indexer {
    pub fn new(dialect: Dialect) -> Self {
        Indexer {
            dialect,
            pairs_seen: 0,
            alias_positions: HashMap::default(),
            aliased_by: HashMap::default(),
            ref_aliased_by: HashMap::default(),
            keys_of: HashMap::default(),
            touched: Vec::new(),
            chains_dirty: false,
            bodies_seen: 0,
            dropped: Some(HashSet::default()),
            has_chains: false,
        }
    }

    fn key_of<'s>(&self, id: Option<Value<'s>>, ts: Option<Value<'s>>) -> Key {
        match self.dialect {
            Dialect::V2_4 => JsKey::of(id).into_owned(),
            Dialect::V2_9 => owned(&occurrence_key(JsVal::of(id), JsVal::of(ts))),
        }
    }

    fn touch_ref(&mut self, r: Value<'_>, summary: bool) {
        if !r.is_typeof_object() {
            return;
        }
        let id = r.get("toolCallId");
        self.touched
            .push((JsKey::of(r.get("shortId")).into_owned(), Touch::ShortId));
        self.touched.push((JsKey::of(id).into_owned(), Touch::Key));
        if self.dialect == Dialect::V2_9 {
            let ts = r
                .get("resultTimestamp")
                .filter(|t| !summary || t.kind() == Kind::Number);
            let k = self.key_of(id, ts);
            self.touched.push((k, Touch::Key));
        }
    }

    /// Notes the keys an applied path entry may have changed (a superset:
    /// answering an unchanged key again costs a look-up, nothing more).
    pub fn note(&mut self, entry: Entry<'_>) {
        if entry.is("custom") {
            let data = entry.data();
            if entry.custom_type_is("context-prune-index") {
                let Some(d) = data else { return };
                if let Some(calls) = d.get("toolCalls").filter(|c| c.is_array()) {
                    for call in calls.elements() {
                        let id = call.get("toolCallId");
                        let k = self.key_of(id, call.get("resultTimestamp"));
                        self.touched.push((k, Touch::Record));
                        self.touched.push((JsKey::of(id).into_owned(), Touch::Key));
                    }
                }
                if let Some(refs) = d.get("refs").filter(|r| r.is_array()) {
                    for r in refs.elements() {
                        self.touch_ref(r, false);
                    }
                }
            } else if entry.custom_type_is("context-prune-chain") {
                self.chains_dirty = true;
            }
            // Dedup aliases are read from the state (`pairs_seen`).
        } else if entry.is("custom_message") && entry.custom_type_is("context-prune-summary") {
            let Some(details) = entry.get("details").filter(|d| d.is_typeof_object()) else {
                return;
            };
            if let Some(refs) = details.get("toolCallRefs").filter(|l| l.is_array()) {
                for r in refs.elements() {
                    self.touch_ref(r, true);
                }
            } else if let Some(ids) = details.get("toolCallIds").filter(|l| l.is_array()) {
                for id in ids.elements() {
                    let k = JsKey::of(Some(id)).into_owned();
                    self.touched.push((k.clone(), Touch::ShortId));
                    self.touched.push((k, Touch::Key));
                }
            }
        }
    }

    fn summarized(&self, state: &CondenseState<'_>, k: &Key) -> bool {
        state.records().get(k).is_some() || self.alias_positions.contains_key(k)
    }

    /// The record a string target names.
    fn target<'s>(state: &CondenseState<'s>, t: &JsVal<'s>) -> Option<Value<'s>> {
        if !t.is_string() {
            return None;
        }
        state.records().get(&t.key()).copied()
    }

    /// `getRecord(k)`.
    fn record<'s>(&self, state: &CondenseState<'s>, k: &Key) -> Option<Value<'s>> {
        if let Some(r) = state.records().get(k) {
            return Some(*r);
        }
        if let Some(&j) = self.alias_positions.get(k).and_then(|p| p.last()) {
            return Self::target(state, &state.dedup_alias_pairs()[j].1);
        }
        if let Some(t) = state.ref_aliases().get(k).filter(|t| t.truthy()) {
            return Self::target(state, t);
        }
        match self.dialect {
            Dialect::V2_4 => None,
            Dialect::V2_9 => match self.keys_of.get(k) {
                Some(keys) if keys.len() == 1 => state.records().get(&keys[0]).copied(),
                _ => None,
            },
        }
    }

    /// The short ref of `k` after the first `t` pairs of the alias pass.
    fn short_at<'s>(&self, state: &CondenseState<'s>, k: &Key, t: usize) -> Option<JsVal<'s>> {
        if let Some(positions) = self.alias_positions.get(k) {
            for &j in positions.iter().rev().filter(|&&j| j < t) {
                let original = owned(&state.dedup_alias_pairs()[j].1);
                if let Some(r) = self.short_at(state, &original, j).filter(|r| r.truthy()) {
                    return Some(r);
                }
            }
        }
        state.short_refs_before_aliases().get(k).cloned()
    }

    fn legacy(&self, state: &CondenseState<'_>, k: &Key) -> bool {
        state.records().get(k).is_some() && self.keys_of.get(k).is_some_and(|v| v.len() == 1)
    }

    /// Appends the answers of every key touched since the last call (and
    /// of the keys that alias them), and the chain registry when it changed.
    pub fn answer(&mut self, state: &CondenseState<'_>, out: &mut Vec<Answer>) -> Result<()> {
        let pairs = state.dedup_alias_pairs();
        for (j, (new, original)) in pairs.iter().enumerate().skip(self.pairs_seen) {
            let (new, original) = (owned(new), owned(original));
            self.alias_positions.entry(new.clone()).or_default().push(j);
            self.aliased_by
                .entry(original.clone())
                .or_default()
                .push(new.clone());
            self.touched.push((new, Touch::Key));
            self.touched.push((original, Touch::Key));
        }
        self.pairs_seen = pairs.len();
        let touched = std::mem::take(&mut self.touched);
        let mut queue: Vec<Key> = Vec::with_capacity(touched.len());
        for (k, how) in touched {
            match how {
                Touch::Record if self.dialect == Dialect::V2_9 => {
                    let id = state
                        .records()
                        .get(&k)
                        .and_then(|r| r.get("toolCallId"))
                        .filter(|i| i.kind() == Kind::String)
                        .map(|i| JsKey::of(Some(i)).into_owned());
                    if let Some(id) = id {
                        let keys = self.keys_of.entry(id.clone()).or_default();
                        if !keys.contains(&k) {
                            keys.push(k.clone());
                        }
                        queue.push(id);
                    }
                }
                Touch::ShortId => {
                    if let Some(t) = state.ref_aliases().get(&k) {
                        let list = self.ref_aliased_by.entry(owned(t)).or_default();
                        if !list.contains(&k) {
                            list.push(k.clone());
                        }
                    }
                }
                _ => {}
            }
            queue.push(k);
        }
        let mut seen: HashSet<Key> = HashSet::default();
        while let Some(k) = queue.pop() {
            if !seen.insert(k.clone()) {
                continue;
            }
            for more in [self.aliased_by.get(&k), self.ref_aliased_by.get(&k)]
                .into_iter()
                .flatten()
            {
                queue.extend(more.iter().cloned());
            }
        }
        for k in &seen {
            let Some(name) = engine_key(k) else { continue };
            let summarized = self.summarized(state, k);
            let (record, short_ref) = if summarized {
                let record = match self.record(state, k) {
                    Some(r) => Some(lean_record(r, self.dialect)?),
                    None => None,
                };
                let short_ref = match self.short_at(state, k, self.pairs_seen) {
                    Some(r) => to_json(&r)?,
                    None => None,
                };
                (record, short_ref)
            } else {
                (None, None)
            };
            let legacy = (self.dialect == Dialect::V2_9).then(|| self.legacy(state, k));
            out.push(Answer::Key {
                key: name.as_slice().into(),
                summarized,
                record,
                short_ref,
            });
            if let Some(legacy) = legacy {
                out.push(Answer::Legacy {
                    id: name.into(),
                    legacy,
                });
            }
        }
        self.chains(state, out)
    }

    /// Whether summary bodies added since the last call may change a chain
    /// entry's summary (they cite one of its dropped ids).
    fn bodies_matter(&mut self, state: &CondenseState<'_>) -> bool {
        let bodies = state.summary_bodies();
        let fresh = &bodies[self.bodies_seen.min(bodies.len())..];
        self.bodies_seen = bodies.len();
        if !self.has_chains || fresh.is_empty() {
            return false;
        }
        let Some(dropped) = &self.dropped else {
            return true;
        };
        fresh.iter().any(|b| {
            b.tool_call_ids.iter().any(|id| {
                id.is_string() && engine_key(&owned(id)).is_some_and(|k| dropped.contains(&k))
            })
        })
    }

    fn chains(&mut self, state: &CondenseState<'_>, out: &mut Vec<Answer>) -> Result<()> {
        let bodies = self.bodies_matter(state);
        if !self.chains_dirty && !bodies {
            return Ok(());
        }
        self.chains_dirty = false;
        let full = State::from_json(&state_json(state), self.dialect)?;
        let entries: Vec<Json> = full.chain_entries().into_iter().cloned().collect();
        let summaries = (0..entries.len())
            .map(|n| full.entry_summary(n).map_err(|_| Unanswered::Threw))
            .collect();
        let mut lookups = HashMap::default();
        let mut dropped = Some(HashSet::default());
        for e in &entries {
            if let Some(id) = e.get("blockId").and_then(Json::as_text) {
                lookups.insert(
                    id.into(),
                    full.block_lookup(id).map_err(|_| Unanswered::Threw),
                );
            }
            for field in ["droppedToolCallIds", "droppedOccurrenceKeys"] {
                match e.get(field) {
                    None | Some(Json::Null) => {}
                    Some(Json::Arr(ids)) if ids.iter().all(|i| i.as_text().is_some()) => {
                        if let Some(set) = &mut dropped {
                            set.extend(ids.iter().filter_map(Json::as_text).map(<[u8]>::to_vec));
                        }
                    }
                    Some(_) => dropped = None,
                }
            }
        }
        self.dropped = dropped;
        self.has_chains = !entries.is_empty();
        out.push(Answer::Chains(Chains::Given {
            entries,
            summaries,
            lookups,
        }));
        Ok(())
    }
}
