//! The host indexer's knowledge (SPEC 2.2) and the look-ups derived from it.

use crate::hash::{HashMap, HashSet};

use crate::error::{PruneError, Result};
use crate::index::{parse_owned, TextFlags};
use crate::value::{Key, Ty, Val, V};

#[derive(Default)]
pub struct State {
    records: HashMap<String, Val<'static>>,
    dedup_aliases: HashMap<String, Val<'static>>,
    short_refs: HashMap<String, Val<'static>>,
    ref_aliases: HashMap<String, Val<'static>>,
    /// Registry insertion order, duplicates included.
    chains: Vec<Val<'static>>,
    /// `chainEntries()`: indices into `chains`, deduplicated and sorted.
    chain_entries: Vec<usize>,
    summary_bodies: Vec<Val<'static>>,
    pub flags: TextFlags,
}

fn object_map(root: V<'_, 'static>, field: &str) -> Result<HashMap<String, Val<'static>>> {
    let Some(v) = root.get(field) else {
        return Ok(HashMap::default());
    };
    match (v.ty(), v) {
        (Ty::Null, _) => Ok(HashMap::default()),
        (Ty::Obj, V::O(Val::Obj(entries))) => Ok(entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()),
        _ => Err(PruneError::bad_state(format!("{field} must be an object"))),
    }
}

fn array(root: V<'_, 'static>, field: &str) -> Result<Vec<Val<'static>>> {
    let Some(v) = root.get(field) else {
        return Ok(Vec::new());
    };
    match (v.ty(), v) {
        (Ty::Null, _) => Ok(Vec::new()),
        (Ty::Arr, V::O(Val::Arr(items))) => Ok(items.clone()),
        _ => Err(PruneError::bad_state(format!("{field} must be an array"))),
    }
}

impl State {
    pub fn from_json(json: &[u8]) -> Result<Self> {
        let (root, flags) = parse_owned(json, "state")?;
        let mut state = Self::from_val(&root)?;
        state.flags = flags;
        Ok(state)
    }

    pub fn from_val(root: &Val<'static>) -> Result<Self> {
        let r = root.view();
        match r.ty() {
            Ty::Null => return Ok(Self::default()),
            Ty::Obj => {}
            _ => return Err(PruneError::bad_state("must be an object")),
        }
        let chains = array(r, "chains")?;
        for (i, c) in chains.iter().enumerate() {
            if !c.view().is_object() {
                return Err(PruneError::bad_state(format!(
                    "chains[{i}] must be an object"
                )));
            }
        }
        let mut state = State {
            records: object_map(r, "records")?,
            dedup_aliases: object_map(r, "dedupAliases")?,
            short_refs: object_map(r, "shortRefs")?,
            ref_aliases: object_map(r, "refAliases")?,
            chains,
            chain_entries: Vec::new(),
            summary_bodies: array(r, "summaryBodies")?,
            flags: TextFlags::default(),
        };
        state.chain_entries = state.dedup_and_sort_chains();
        Ok(state)
    }

    /// Registered under startUserTimestamp: a later entry with the same key
    /// replaces the earlier one in its place; then sorted ascending with the
    /// reference's `a - b` comparator (stable).
    fn dedup_and_sort_chains(&self) -> Vec<usize> {
        let mut order: Vec<usize> = Vec::new();
        let mut slot: HashMap<Key<'_>, usize> = HashMap::default();
        for (i, c) in self.chains.iter().enumerate() {
            let key = Key::of(c.view().get("startUserTimestamp"));
            match slot.get(&key) {
                Some(&pos) => order[pos] = i,
                None => {
                    slot.insert(key, order.len());
                    order.push(i);
                }
            }
        }
        let start = |i: usize| {
            self.chains[i]
                .view()
                .get("startUserTimestamp")
                .map_or(f64::NAN, |v| v.to_number())
        };
        // Insertion sort: stable, and never panics on NaN comparisons.
        for i in 1..order.len() {
            let mut j = i;
            while j > 0 && start(order[j - 1]) - start(order[j]) > 0.0 {
                order.swap(j - 1, j);
                j -= 1;
            }
        }
        order
    }

    /// `isSummarized(id)`: only string ids can be.
    pub fn is_summarized(&self, id: Option<V<'_, '_>>) -> bool {
        match id.and_then(|v| v.as_str()) {
            Some(s) => self.records.contains_key(s) || self.dedup_aliases.contains_key(s),
            None => false,
        }
    }

    /// `getRecord(id)` with the reference's truthiness test on the alias.
    pub fn record(&self, id: &str) -> Option<V<'_, 'static>> {
        if let Some(r) = self.records.get(id) {
            return Some(r.view());
        }
        if let Some(target) = self.dedup_aliases.get(id) {
            if target.view().truthy() {
                return target
                    .view()
                    .as_str()
                    .and_then(|t| self.records.get(t))
                    .map(Val::view);
            }
        }
        let target = self.ref_aliases.get(id)?;
        target
            .view()
            .as_str()
            .and_then(|t| self.records.get(t))
            .map(Val::view)
    }

    /// `getShortRefForToolCallId(id) ?? id`.
    pub fn short_ref_or_id(&self, id: &str) -> String {
        match self.short_refs.get(id) {
            Some(r) if r.view().ty() != Ty::Null => r.view().to_js_string().into_owned(),
            _ => id.to_owned(),
        }
    }

    pub fn chain_entries(&self) -> impl Iterator<Item = V<'_, 'static>> {
        self.chain_entries.iter().map(|&i| self.chains[i].view())
    }

    pub fn has_chain_entries(&self) -> bool {
        !self.chain_entries.is_empty()
    }

    /// Texts of the summary bodies whose ids meet `ids`, first occurrence of
    /// each text, joined by a blank line. A null body is an error, as in the
    /// reference (`body.toolCallIds` of null).
    pub fn per_batch_summary_text<'a>(
        &self,
        ids: impl Iterator<Item = V<'a, 'a>>,
    ) -> Result<String> {
        let wanted: HashSet<Key<'_>> = ids.map(|v| v.key()).collect();
        // Distinct text values (null, a missing text and "null" are three),
        // joined like Array#join: null and undefined print as "".
        let mut seen: HashSet<Key<'_>> = HashSet::default();
        let mut texts: Vec<Option<V<'_, 'static>>> = Vec::new();
        for (n, body) in self.summary_bodies.iter().enumerate() {
            let b = body.view();
            if b.ty() == Ty::Null {
                return Err(PruneError::bad_state(format!("summaryBodies[{n}] is null")));
            }
            let Some(ids) = b.get("toolCallIds") else {
                continue;
            };
            if !ids.elements().any(|id| wanted.contains(&id.key())) {
                continue;
            }
            let text = b.get("text");
            if seen.insert(Key::of(text)) {
                texts.push(text);
            }
        }
        let parts: Vec<String> = texts
            .iter()
            .map(|t| match t {
                Some(t) if t.ty() != Ty::Null => t.to_js_string().into_owned(),
                _ => String::new(),
            })
            .collect();
        Ok(parts.join("\n\n"))
    }

    /// An entry's own summary, `rangeSummaryText ?? perBatch(dropped)`:
    /// the range value as it is, or the batches' texts.
    fn summary_value<'e>(&self, entry: V<'e, 'static>) -> Result<Summary<'e>> {
        match entry.get("rangeSummaryText") {
            Some(t) if t.ty() != Ty::Null => Ok(Summary::Range(t)),
            _ => {
                let dropped = entry.get("droppedToolCallIds");
                let text =
                    self.per_batch_summary_text(dropped.into_iter().flat_map(|d| d.elements()))?;
                Ok(Summary::Batches(text))
            }
        }
    }

    /// An entry's own summary text.
    pub fn entry_summary(&self, entry: V<'_, 'static>) -> Result<String> {
        Ok(match self.summary_value(entry)? {
            Summary::Range(t) => t.to_js_string().into_owned(),
            Summary::Batches(text) => text,
        })
    }

    /// `{bN}` look-up: the first of `chainEntries()` with that blockId (an
    /// entry replaced under the same startUserTimestamp is gone); an empty
    /// result counts as not found.
    /// The reference tests the value for truthiness, so a range value of 0
    /// or false is not found while `[]` is found and inserts "".
    pub fn block_lookup(&self, block_id: &str) -> Result<Option<String>> {
        let Some(entry) = self
            .chain_entries()
            .find(|c| c.get("blockId").is_some_and(|b| b.is_str(block_id)))
        else {
            return Ok(None);
        };
        Ok(match self.summary_value(entry)? {
            Summary::Range(t) => t.truthy().then(|| t.to_js_string().into_owned()),
            Summary::Batches(text) => (!text.is_empty()).then_some(text),
        })
    }
}

enum Summary<'s> {
    Range(V<'s, 'static>),
    Batches(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(json: &str) -> State {
        State::from_json(json.as_bytes()).unwrap()
    }

    #[test]
    fn record_lookup_follows_aliases() {
        let s = state(
            r#"{"records":{"a":{"toolName":"read"},"":{"toolName":"empty"}},
                "dedupAliases":{"d":"a","e":"","m":"missing"},
                "refAliases":{"e":"a","t1":"a"},"shortRefs":{"a":"t1"}}"#,
        );
        let name = |id: &str| {
            s.record(id)
                .and_then(|r| r.get("toolName"))
                .map(|n| n.to_js_string().into_owned())
        };
        assert_eq!(name("a").as_deref(), Some("read"));
        assert_eq!(name("d").as_deref(), Some("read"));
        assert_eq!(name("e").as_deref(), Some("read"));
        assert_eq!(name("m"), None);
        assert_eq!(name("t1").as_deref(), Some("read"));
        assert_eq!(s.short_ref_or_id("a"), "t1");
        assert_eq!(s.short_ref_or_id("zz"), "zz");
    }

    #[test]
    fn chain_entries_dedup_and_sort() {
        let s = state(
            r#"{"chains":[{"blockId":"b1","startUserTimestamp":30},{"blockId":"b2","startUserTimestamp":10},
                {"blockId":"b3","startUserTimestamp":30}]}"#,
        );
        let ids: Vec<String> = s
            .chain_entries()
            .map(|e| e.get("blockId").unwrap().to_js_string().into_owned())
            .collect();
        assert_eq!(ids, ["b2", "b3"]);
    }

    #[test]
    fn summaries_and_block_lookup() {
        let s = state(
            r#"{"summaryBodies":[{"toolCallIds":["x"],"text":"one"},{"toolCallIds":["y","x"],"text":"two"},
                {"toolCallIds":["y"],"text":"one"}],
                "chains":[{"blockId":"b1","startUserTimestamp":1,"droppedToolCallIds":["y"]},
                          {"blockId":"b2","startUserTimestamp":2,"droppedToolCallIds":["z"]},
                          {"blockId":"b1","startUserTimestamp":1,"rangeSummaryText":"later"},
                          {"blockId":"b3","startUserTimestamp":4,"droppedToolCallIds":["y"]}]}"#,
        );
        // The first b1 was replaced by the later one under the same start.
        let lookup = |id: &str| s.block_lookup(id).unwrap();
        assert_eq!(lookup("b1").as_deref(), Some("later"));
        assert_eq!(lookup("b3").as_deref(), Some("two\n\none"));
        assert_eq!(lookup("b2"), None);
        assert_eq!(lookup("b9"), None);
    }

    #[test]
    fn rejects_wrong_shapes() {
        assert!(State::from_json(b"[]").is_err());
        assert!(State::from_json(br#"{"records":[]}"#).is_err());
        assert!(State::from_json(br#"{"chains":{}}"#).is_err());
        assert!(State::from_json(br#"{"records":"x"}"#).is_err());
        assert!(
            State::from_json(br#"{"records":{"a":"\ud800"}}"#)
                .unwrap()
                .flags
                .lone_surrogates
        );
        assert!(State::from_json(b"null").is_ok());
    }
}
