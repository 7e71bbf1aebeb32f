//! What pi-condense's tool-call indexer knows (SPEC 2.2, SPEC-2.9 2.3-2.4)
//! and the look-ups its render path makes, with the indexer's Map
//! semantics: keys are strings compared by their text, `__proto__` is an
//! ordinary key, a non-string key never matches. The state comes either as
//! the addon's state object (`from_value`) or, for the pi-condense drop-in,
//! as the answers of the host's own indexer (`Chains::Given` and the
//! per-message answers of `engine::Answers`). The JS oracle's copy of the
//! look-up rules is js/pure/state.js (`createIndexer243`, `createIndexer291`).

use crate::config::same_value_zero;
use crate::dialect::Dialect;
use crate::error::{PruneError, Result};
use crate::hash::HashMap;
use crate::indexer_methods::{missing_method_error, AbsentMethods, IndexerMethod};
use crate::json::parse_value;
use crate::json::value::{characters, write_joined};
use crate::json::Json;

type Key = Box<[u8]>;

#[derive(Debug, Default, Clone)]
pub struct State {
    pub dialect: Dialect,
    records: HashMap<Key, Json>,
    dedup_aliases: HashMap<Key, Json>,
    short_refs: HashMap<Key, Json>,
    ref_aliases: HashMap<Key, Json>,
    /// 2.9 `keysOf`: record keys by their record's string `toolCallId`.
    keys_of: HashMap<Key, Vec<Key>>,
    pub chains: Chains,
    summary_bodies: Vec<Json>,
    /// A host indexer's `hasLegacyBareRecord` answers, by id (answers
    /// states only).
    legacy: Option<HashMap<Key, bool>>,
    /// The host indexer's methods that are not functions (answers states
    /// only): the phases raise where the release would call one.
    pub absent: AbsentMethods,
}

/// Why the host gave no answer for a chain's summary or a `{bN}` lookup:
/// its method threw, or it has no such method. Raised only where the
/// reference would make that call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unanswered {
    Threw,
    /// The method the answer needed (a `{bN}` lookup needs the entry's
    /// summary too).
    Absent(IndexerMethod),
}

/// The chain registry.
#[derive(Debug, Clone)]
pub enum Chains {
    /// From the state's `chains` array: registered under
    /// `startUserTimestamp` (a later entry takes an earlier one's value and
    /// keeps its place), `entries` the registry sorted as `chainEntries()`.
    Registry {
        registry: Vec<Json>,
        entries: Vec<usize>,
    },
    /// Answered by a host's indexer: `getChainEntries()` as it returned
    /// them, each entry's summary, and `{bN}` look-ups. An `Err` is a call
    /// the host could not answer, raised here only where the reference
    /// would make that call.
    Given {
        entries: Vec<Json>,
        summaries: Vec<std::result::Result<Json, Unanswered>>,
        lookups: HashMap<Key, std::result::Result<Option<Json>, Unanswered>>,
    },
}

/// The tables `getRecord` reads, keyed by `K`: the records, and the
/// records a key's dedup alias or ref alias names (`Some(None)`: it has one,
/// naming no record), and 2.9's record of a bare id with one key.
pub trait RecordTables<K: ?Sized> {
    type Record;
    fn record(&self, key: &K) -> Option<Self::Record>;
    fn dedup_alias(&self, key: &K) -> Option<Option<Self::Record>>;
    fn ref_alias(&self, key: &K) -> Option<Option<Self::Record>>;
    fn only_key_record(&self, key: &K) -> Option<Self::Record>;
}

/// pi-condense's `getRecord(key)` (SPEC 2.2, SPEC-2.9 2.3): the record, or
/// what a dedup alias names, or what a ref alias names, or (2.9.1) the
/// record of a bare id indexed under one key. The one copy of the ladder,
/// for a state object (`State`) and the replay's rebuilt state
/// (`replay::indexer`); the JS oracle's is js/pure/state.js.
pub fn get_record<K: ?Sized, T: RecordTables<K>>(
    tables: &T,
    dialect: Dialect,
    key: &K,
) -> Option<T::Record> {
    if let Some(r) = tables.record(key) {
        return Some(r);
    }
    if let Some(named) = tables.dedup_alias(key) {
        return named;
    }
    if let Some(named) = tables.ref_alias(key) {
        return named;
    }
    match dialect {
        Dialect::V2_4 => None,
        Dialect::V2_9 => tables.only_key_record(key),
    }
}

impl<'s> RecordTables<[u8]> for &'s State {
    type Record = &'s Json;
    fn record(&self, key: &[u8]) -> Option<&'s Json> {
        self.records.get(key)
    }
    fn dedup_alias(&self, key: &[u8]) -> Option<Option<&'s Json>> {
        let t = self.dedup_aliases.get(key).filter(|t| t.truthy())?;
        Some(t.as_text().and_then(|t| self.records.get(t)))
    }
    fn ref_alias(&self, key: &[u8]) -> Option<Option<&'s Json>> {
        let t = self.ref_aliases.get(key).filter(|t| t.truthy())?;
        Some(t.as_text().and_then(|t| self.records.get(t)))
    }
    fn only_key_record(&self, key: &[u8]) -> Option<&'s Json> {
        match self.keys_of.get(key) {
            Some(keys) if keys.len() == 1 => self.records.get(&keys[0]),
            _ => None,
        }
    }
}

impl Default for Chains {
    fn default() -> Self {
        Chains::Registry {
            registry: Vec::new(),
            entries: Vec::new(),
        }
    }
}

fn object_map(root: &Json, field: &str) -> Result<HashMap<Key, Json>> {
    match root.get(field) {
        None | Some(Json::Null) => Ok(HashMap::default()),
        Some(Json::Obj(entries)) => Ok(entries.iter().cloned().collect()),
        Some(_) => Err(PruneError::bad_state(format!("{field} must be an object"))),
    }
}

fn array(root: &Json, field: &str) -> Result<Vec<Json>> {
    match root.get(field) {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Arr(items)) => Ok(items.clone()),
        Some(_) => Err(PruneError::bad_state(format!("{field} must be an array"))),
    }
}

/// Registers entries under `startUserTimestamp` and sorts them with the
/// reference's `a - b` comparator (stable; NaN compares equal).
fn registry_of(chains: Vec<Json>) -> Result<(Vec<Json>, Vec<usize>)> {
    let mut registry: Vec<Json> = Vec::new();
    for (i, c) in chains.into_iter().enumerate() {
        if !matches!(c, Json::Obj(_)) {
            return Err(PruneError::bad_state(format!(
                "chains[{i}] must be an object"
            )));
        }
        let key = c.get("startUserTimestamp");
        let slot = registry.iter().position(|r| {
            let k = r.get("startUserTimestamp");
            match (k, key) {
                (None, None) => true,
                (Some(a), Some(b)) => same_value_zero(a, b),
                _ => false,
            }
        });
        match slot {
            Some(p) => registry[p] = c,
            None => registry.push(c),
        }
    }
    let start = |e: &Json| {
        e.get("startUserTimestamp")
            .map_or(f64::NAN, Json::to_number)
    };
    let mut order: Vec<usize> = (0..registry.len()).collect();
    // Insertion sort: stable, and consistent with a comparator that answers
    // NaN (treated as equal) where a total order would not exist.
    for i in 1..order.len() {
        let mut j = i;
        while j > 0 && start(&registry[order[j - 1]]) - start(&registry[order[j]]) > 0.0 {
            order.swap(j - 1, j);
            j -= 1;
        }
    }
    Ok((registry, order))
}

impl State {
    pub fn from_json(json: &[u8], dialect: Dialect) -> Result<Self> {
        let root = parse_value(json).map_err(PruneError::bad_state)?;
        Self::from_value(&root, dialect)
    }

    pub fn from_value(root: &Json, dialect: Dialect) -> Result<Self> {
        match root {
            Json::Null => {
                return Ok(State {
                    dialect,
                    ..State::default()
                })
            }
            Json::Obj(_) => {}
            _ => return Err(PruneError::bad_state("must be an object")),
        }
        let records = object_map(root, "records")?;
        let (registry, entries) = registry_of(array(root, "chains")?)?;
        let mut state = State {
            dialect,
            keys_of: HashMap::default(),
            records,
            dedup_aliases: object_map(root, "dedupAliases")?,
            short_refs: object_map(root, "shortRefs")?,
            ref_aliases: object_map(root, "refAliases")?,
            chains: Chains::Registry { registry, entries },
            summary_bodies: array(root, "summaryBodies")?,
            legacy: None,
            absent: AbsentMethods::default(),
        };
        if let Json::Obj(entries) = root.get("records").unwrap_or(&Json::Null) {
            for (key, record) in entries {
                if let Some(id) = record.get("toolCallId").and_then(Json::as_text) {
                    let keys = state.keys_of.entry(id.into()).or_default();
                    if !keys.iter().any(|k| k == key) {
                        keys.push(key.clone());
                    }
                }
            }
        }
        Ok(state)
    }

    /// A state holding only a host indexer's answers: records, aliases and
    /// refs are set per key with `answer`, chains with `set_given_chains`.
    pub fn answers(dialect: Dialect) -> Self {
        State {
            dialect,
            ..State::default()
        }
    }

    /// Sets what the host's indexer said about one key: summarized (with a
    /// record, or without one), and its short ref. Returns whether that
    /// differs from what the state said before (a key never answered reads
    /// as not summarized, without record or ref).
    pub fn answer(
        &mut self,
        key: &[u8],
        summarized: bool,
        record: Option<Json>,
        short_ref: Option<Json>,
    ) -> bool {
        let said = |s: &Self| {
            (
                s.records.get(key).cloned(),
                s.dedup_aliases.contains_key(key),
                s.short_refs.get(key).cloned(),
            )
        };
        let was = said(self);
        self.records.remove(key);
        self.dedup_aliases.remove(key);
        self.short_refs.remove(key);
        if summarized {
            match record {
                Some(r) => {
                    self.records.insert(key.into(), r);
                }
                // Summarized without a record: an alias to nothing.
                None => {
                    self.dedup_aliases.insert(key.into(), Json::Null);
                }
            }
        }
        if let Some(r) = short_ref {
            self.short_refs.insert(key.into(), r);
        }
        was != said(self)
    }

    /// Sets a host indexer's `hasLegacyBareRecord(id)`; whether it changed.
    pub fn answer_legacy(&mut self, id: &[u8], legacy: bool) -> bool {
        let was = self
            .legacy
            .get_or_insert_with(HashMap::default)
            .insert(id.into(), legacy)
            .unwrap_or(false);
        was != legacy
    }

    /// Replaces the chains with `chains`; returns the first entry that
    /// differs from the ones given before (by value, or by its summary:
    /// those before it are the same; 0 when the chains were not given
    /// before) and whether the lookups are the ones kept.
    pub fn set_given_chains(&mut self, chains: Chains) -> (usize, bool) {
        let kept = match (&self.chains, &chains) {
            (
                Chains::Given {
                    entries,
                    summaries,
                    lookups,
                },
                Chains::Given {
                    entries: new_entries,
                    summaries: new_summaries,
                    lookups: new_lookups,
                },
            ) => {
                let same = entries
                    .iter()
                    .zip(summaries)
                    .zip(new_entries.iter().zip(new_summaries))
                    .take_while(|((e, s), (ne, ns))| e == ne && s == ns)
                    .count();
                (same, lookups == new_lookups)
            }
            _ => (0, false),
        };
        self.chains = chains;
        kept
    }

    /// The given chains from `from` on replaced by `update`'s entries and
    /// summaries, and the lookups by its lookups; true when the lookups are
    /// the ones kept. An error, and nothing changed, when the chains were
    /// not given or had fewer entries.
    pub fn update_given_chains(&mut self, from: usize, update: Chains) -> Result<bool> {
        let (
            Chains::Given {
                entries,
                summaries,
                lookups,
            },
            Chains::Given {
                entries: more,
                summaries: more_summaries,
                lookups: new_lookups,
            },
        ) = (&mut self.chains, update)
        else {
            return Err(PruneError::bad_argument(
                "chains: an update with no chains given before",
            ));
        };
        if from > entries.len() || from > summaries.len() {
            return Err(PruneError::bad_argument(format!(
                "chains: an update from entry {from} of {}",
                entries.len()
            )));
        }
        entries.truncate(from);
        entries.extend(more);
        summaries.truncate(from);
        summaries.extend(more_summaries);
        let same_lookups = *lookups == new_lookups;
        *lookups = new_lookups;
        Ok(same_lookups)
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && self.dedup_aliases.is_empty() && !self.has_chain_entries()
    }

    /// Ok when the host's indexer has `method` (always, for a state
    /// object); else the error the release's call of it gives.
    pub fn require(&self, method: IndexerMethod) -> Result<()> {
        self.absent.require(method, self.dialect)
    }

    fn absent_error(&self, method: IndexerMethod) -> PruneError {
        self.require(method)
            .err()
            .unwrap_or_else(|| missing_method_error(method, self.dialect, "it has none"))
    }

    /// `isSummarized(key)`.
    pub fn is_summarized(&self, key: &[u8]) -> bool {
        self.records.contains_key(key) || self.dedup_aliases.contains_key(key)
    }

    /// 2.9 `hasLegacyBareRecord(id)`.
    pub fn has_legacy_bare_record(&self, id: &[u8]) -> bool {
        if let Some(answers) = &self.legacy {
            return answers.get(id).copied().unwrap_or(false);
        }
        self.records.contains_key(id) && self.keys_of.get(id).is_some_and(|k| k.len() == 1)
    }

    /// `getRecord(key)` of the state's dialect.
    pub fn record(&self, key: &[u8]) -> Option<&Json> {
        get_record(&self, self.dialect, key)
    }

    /// `getShortRefForToolCallId(key)`.
    pub fn short_ref(&self, key: &[u8]) -> Option<&Json> {
        self.short_refs.get(key)
    }

    pub fn has_chain_entries(&self) -> bool {
        match &self.chains {
            Chains::Registry { entries, .. } => !entries.is_empty(),
            Chains::Given { entries, .. } => !entries.is_empty(),
        }
    }

    /// `chainEntries()`, in order.
    pub fn chain_entries(&self) -> Vec<&Json> {
        match &self.chains {
            Chains::Registry { registry, entries } => {
                entries.iter().map(|&i| &registry[i]).collect()
            }
            Chains::Given { entries, .. } => entries.iter().collect(),
        }
    }

    /// The summary of the `n`-th of `chain_entries()`: `rangeSummaryText ??`
    /// the per-batch texts of its dropped ids (2.9: of
    /// `droppedOccurrenceKeys ?? droppedToolCallIds`).
    pub fn entry_summary(&self, n: usize) -> Result<Json> {
        match &self.chains {
            Chains::Registry { registry, entries } => self.summary_of(&registry[entries[n]]),
            Chains::Given { summaries, .. } => summaries[n].clone().map_err(|why| match why {
                Unanswered::Threw => PruneError::bad_state(format!(
                    "chain entry {n}: the indexer threw computing its summary"
                )),
                Unanswered::Absent(method) => self.absent_error(method),
            }),
        }
    }

    fn summary_of(&self, entry: &Json) -> Result<Json> {
        match entry.get("rangeSummaryText") {
            Some(t) if !t.is_null() => Ok(t.clone()),
            _ => {
                let ids = match self.dialect {
                    Dialect::V2_9 => entry
                        .get("droppedOccurrenceKeys")
                        .filter(|v| !v.is_null())
                        .or_else(|| entry.get("droppedToolCallIds")),
                    Dialect::V2_4 => entry.get("droppedToolCallIds"),
                };
                let text = self.per_batch_summary_text(ids)?;
                Ok(Json::Str(text.into_boxed_slice()))
            }
        }
    }

    /// `blockLookup(b)`: the first registry entry with that blockId, its
    /// summary when truthy (any value; the caller converts it).
    pub fn block_lookup(&self, block_id: &[u8]) -> Result<Option<Json>> {
        match &self.chains {
            Chains::Registry { registry, .. } => {
                let Some(entry) = registry
                    .iter()
                    .find(|e| e.get("blockId").and_then(Json::as_text) == Some(block_id))
                else {
                    return Ok(None);
                };
                let s = self.summary_of(entry)?;
                Ok(s.truthy().then_some(s))
            }
            Chains::Given { lookups, .. } => match lookups.get(block_id) {
                None => Ok(None),
                Some(Ok(v)) => Ok(v.clone().filter(Json::truthy)),
                Some(Err(Unanswered::Threw)) => Err(PruneError::bad_state(format!(
                    "chain block {}: the indexer threw looking it up",
                    String::from_utf8_lossy(block_id)
                ))),
                Some(Err(Unanswered::Absent(method))) => Err(self.absent_error(*method)),
            },
        }
    }

    /// `getPerBatchSummaryTextForToolCallIds(ids)` as canonical text.
    pub fn per_batch_summary_text(&self, ids: Option<&Json>) -> Result<Vec<u8>> {
        let wanted: Vec<Json> = match ids {
            None | Some(Json::Null) => {
                return Err(PruneError::bad_state(
                    "a chain entry's dropped ids are missing (the reference reads their length)",
                ))
            }
            Some(Json::Arr(items)) => items.clone(),
            // `new Set("ab")`: the string's characters.
            Some(Json::Str(t)) => characters(t),
            Some(v @ Json::Obj(_)) if matches!(v.get("length"), Some(Json::Num(n)) if *n == 0.0) => {
                Vec::new()
            }
            Some(_) => return Err(PruneError::bad_state(
                "a chain entry's dropped ids are not a list (the reference cannot iterate them)",
            )),
        };
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        // `new Set(ids)`: strings by text, the rare others compared one by one.
        let texts_wanted: crate::hash::HashSet<&[u8]> =
            wanted.iter().filter_map(Json::as_text).collect();
        let others: Vec<&Json> = wanted.iter().filter(|w| w.as_text().is_none()).collect();
        let hit = |id: &Json| match id {
            Json::Str(t) => texts_wanted.contains(&**t),
            _ => others.iter().any(|w| same_value_zero(w, id)),
        };
        let mut texts: Vec<Option<&Json>> = Vec::new();
        let mut seen: crate::hash::HashSet<&[u8]> = crate::hash::HashSet::default();
        for (n, body) in self.summary_bodies.iter().enumerate() {
            let Some(Json::Arr(body_ids)) = body.get("toolCallIds") else {
                return Err(PruneError::bad_state(format!(
                    "summaryBodies[{n}].toolCallIds is not an array"
                )));
            };
            if !body_ids.iter().any(hit) {
                continue;
            }
            let text = body.get("text");
            let fresh = match text {
                Some(Json::Str(t)) => seen.insert(t),
                _ => !texts.iter().any(|t| match (t, text) {
                    (None, None) => true,
                    (Some(a), Some(b)) => same_value_zero(a, b),
                    _ => false,
                }),
            };
            if fresh {
                texts.push(text);
            }
        }
        let mut out = Vec::new();
        write_joined(&mut out, texts.into_iter(), b"\\n\\n");
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(json: &str, dialect: Dialect) -> State {
        State::from_json(json.as_bytes(), dialect).unwrap()
    }

    fn text(v: Option<&Json>) -> Option<String> {
        v.map(|v| String::from_utf8(v.js_string()).unwrap())
    }

    /// The `blockId`s of `s`'s chain entries, in order.
    fn block_ids(s: &State) -> Vec<String> {
        s.chain_entries()
            .iter()
            .map(|e| text(e.get("blockId")).unwrap())
            .collect()
    }

    #[test]
    fn record_lookup_follows_aliases() {
        let s = state(
            r#"{"records":{"a":{"toolName":"read"},"":{"toolName":"empty"}},
                "dedupAliases":{"d":"a","e":"","m":"missing"},
                "refAliases":{"e":"a","t1":"a"},"shortRefs":{"a":"t1"}}"#,
            Dialect::V2_4,
        );
        let name = |id: &str| text(s.record(id.as_bytes()).and_then(|r| r.get("toolName")));
        assert_eq!(name("a").as_deref(), Some("read"));
        assert_eq!(name("d").as_deref(), Some("read"));
        assert_eq!(name("e").as_deref(), Some("read"));
        assert_eq!(name("m"), None);
        assert_eq!(name("t1").as_deref(), Some("read"));
        assert!(s.is_summarized(b"m"));
        assert!(!s.is_summarized(b"t1"));
        assert_eq!(text(s.short_ref(b"a")).as_deref(), Some("t1"));
    }

    #[test]
    fn occurrence_keys_and_the_legacy_rung() {
        let s = state(
            r#"{"records":{"c6":{"toolCallId":"c6"},"bash_0@5":{"toolCallId":"bash_0","resultTimestamp":5},
                "x":{"toolCallId":"x"},"x@9":{"toolCallId":"x","resultTimestamp":9}}}"#,
            Dialect::V2_9,
        );
        assert!(s.has_legacy_bare_record(b"c6"));
        assert!(!s.has_legacy_bare_record(b"x"));
        assert!(!s.has_legacy_bare_record(b"bash_0"));
        // The fourth rung: a bare id with exactly one record.
        assert!(s.record(b"bash_0").is_some());
        assert!(s.record(b"bash_0@6").is_none());
    }

    #[test]
    fn chain_entries_dedup_sort_and_look_up() {
        let s = state(
            r#"{"summaryBodies":[{"toolCallIds":["x"],"text":"one"},{"toolCallIds":["y","x"],"text":"two"},
                {"toolCallIds":["y"],"text":"one"}],
                "chains":[{"blockId":"b1","startUserTimestamp":30,"droppedToolCallIds":["y"]},
                          {"blockId":"b2","startUserTimestamp":10,"droppedToolCallIds":["z"]},
                          {"blockId":"b1","startUserTimestamp":30,"rangeSummaryText":"later"},
                          {"blockId":"b3","startUserTimestamp":40,"droppedToolCallIds":["y"]}]}"#,
            Dialect::V2_4,
        );
        assert_eq!(block_ids(&s), ["b2", "b1", "b3"]);
        let lookup = |b: &str| text(s.block_lookup(b.as_bytes()).unwrap().as_ref());
        assert_eq!(lookup("b1").as_deref(), Some("later"));
        assert_eq!(lookup("b3").as_deref(), Some("two\\n\\none"));
        assert_eq!(lookup("b2"), None);
        assert_eq!(lookup("b9"), None);
        assert_eq!(
            s.per_batch_summary_text(Some(&Json::str("xy"))).unwrap(),
            b"one\\n\\ntwo"
        );
        assert!(s.per_batch_summary_text(None).is_err());
    }

    #[test]
    fn given_chains_update_from_an_entry() {
        let entry = |b: &str| Json::Obj(vec![(b"blockId".as_slice().into(), Json::str(b))]);
        let given = |blocks: &[&str], lookups: &[(&str, &str)]| Chains::Given {
            entries: blocks.iter().map(|b| entry(b)).collect(),
            summaries: blocks
                .iter()
                .map(|b| Ok(Json::str(&format!("of {b}"))))
                .collect(),
            lookups: lookups
                .iter()
                .map(|(b, v)| (b.as_bytes().into(), Ok(Some(Json::str(v)))))
                .collect(),
        };
        let mut s = state("{}", Dialect::V2_4);
        let refused = s.update_given_chains(0, given(&["b1"], &[]));
        assert!(refused
            .unwrap_err()
            .message
            .contains("no chains given before"));
        assert_eq!(
            s.set_given_chains(given(&["b1", "b2", "b3"], &[("b1", "old")])),
            (0, false),
            "none given before"
        );
        assert_eq!(
            s.set_given_chains(given(&["b1", "b2", "b3"], &[("b1", "old")])),
            (3, true),
            "the same chains"
        );
        assert_eq!(
            s.set_given_chains(given(&["b1", "b4", "b3"], &[("b1", "new")])),
            (1, false),
            "from the second entry on, other lookups"
        );
        s.set_given_chains(given(&["b1", "b2", "b3"], &[("b1", "old")]));
        let past = s.update_given_chains(4, given(&[], &[]));
        assert!(past.unwrap_err().message.contains("from entry 4 of 3"));
        assert_eq!(
            s.chain_entries().len(),
            3,
            "a refused update changes nothing"
        );
        let same = s.update_given_chains(1, given(&["b4"], &[("b4", "new")]));
        assert!(!same.unwrap(), "other lookups");
        let same = s.update_given_chains(2, given(&["b5"], &[("b4", "new")]));
        assert!(same.unwrap(), "the same lookups");
        s.update_given_chains(1, given(&["b4"], &[("b4", "new")]))
            .unwrap();
        assert_eq!(block_ids(&s), ["b1", "b4"]);
        assert_eq!(
            text(Some(&s.entry_summary(1).unwrap())).as_deref(),
            Some("of b4")
        );
        assert_eq!(
            s.block_lookup(b"b1").unwrap(),
            None,
            "the lookups are replaced"
        );
        assert!(s.block_lookup(b"b4").unwrap().is_some());
    }

    #[test]
    fn rejects_wrong_shapes() {
        for bad in [
            "[]",
            r#"{"records":[]}"#,
            r#"{"chains":{}}"#,
            r#"{"chains":[null]}"#,
        ] {
            assert!(
                State::from_json(bad.as_bytes(), Dialect::V2_4).is_err(),
                "{bad}"
            );
        }
        assert!(State::from_json(b"null", Dialect::V2_4).is_ok());
        let lone = state(r#"{"records":{"\ud800":{}}}"#, Dialect::V2_4);
        assert!(lone.is_summarized(br"\ud800"));
    }
}
