//! What 2.4.3's phase 3 derives from the chain entries (SPEC 3, phase 3
//! step 2): the dropped ids D, the protected ids (each to the last entry
//! protecting it), the final assistant timestamps F and the start
//! timestamps (each to the last entry starting there). The reference builds
//! them from every entry at every render; a kept engine keeps them, with
//! what each entry added, so that when the host replaces the entries from
//! one on (a flush adds a chain) only those are taken back and read again,
//! and the keys they touched name the messages whose facts change
//! (`chain_ids.rs`, through `id_index.rs`).

use super::synthetic::iterate;
use super::value_key::{key_of_json, Key, ValueMap};
use crate::config::ChainConfig;
use crate::error::{PruneError, Result};
use crate::json::Json;
use crate::record::{Interner, Scalar};

/// The keys one entry added to the sets.
#[derive(Debug)]
struct EntryKeys {
    dropped: Vec<Key>,
    protected: Vec<Key>,
    finals: Option<Key>,
    start: Option<Key>,
}

impl EntryKeys {
    fn all(&self) -> impl Iterator<Item = &Key> {
        self.dropped
            .iter()
            .chain(&self.protected)
            .chain(&self.finals)
            .chain(&self.start)
    }
}

#[derive(Debug, Default)]
pub struct ChainSets {
    /// D, with how many times the entries list each id.
    dropped: ValueMap<u32>,
    /// Protected id → the entries protecting it, in order.
    protected: ValueMap<Vec<u32>>,
    /// F, with how many entries name each timestamp.
    finals: ValueMap<u32>,
    /// startUserTimestamp → the entries starting there, in order.
    starts: ValueMap<Vec<u32>>,
    /// What each entry read so far added, in `chainEntries()` order.
    read: Vec<EntryKeys>,
    /// Why the entry after the last one read could not be read: the
    /// reference throws there, so no later entry is read.
    failed: Option<PruneError>,
}

/// What entry `n` adds to the sets (errors where the reference throws
/// reading it).
fn keys_of(entry: &Json, chain: &ChainConfig) -> Result<EntryKeys> {
    let dropped = iterate(entry.get("droppedToolCallIds"), "droppedToolCallIds")?;
    let protected = match entry.get("protectedToolCallIds") {
        None | Some(Json::Null) => Vec::new(),
        v => iterate(v, "protectedToolCallIds")?,
    };
    let finals = match entry.get("finalAssistantTimestamp") {
        _ if !chain.strip_final_assistant_thinking => None,
        Some(Json::Null) => None,
        v => key_of_json(v),
    };
    Ok(EntryKeys {
        dropped: dropped
            .iter()
            .filter_map(|v| key_of_json(Some(v)))
            .collect(),
        protected: protected
            .iter()
            .filter_map(|v| key_of_json(Some(v)))
            .collect(),
        finals,
        start: key_of_json(entry.get("startUserTimestamp")),
    })
}

impl ChainSets {
    /// Brings the sets up to `entries`, whose entries from `changed` on
    /// (None: none) differ from the ones read before; the keys of the
    /// entries taken back and read go to `touched`. An error when an entry
    /// cannot be read (the reference's, at the first such entry).
    pub fn bring(
        &mut self,
        entries: &[&Json],
        changed: Option<usize>,
        chain: &ChainConfig,
        touched: &mut Vec<Key>,
    ) -> Result<()> {
        if let Some(from) = changed {
            while self.read.len() > from {
                let keys = self.read.pop().expect("longer than from");
                self.take_back(self.read.len() as u32, &keys);
                touched.extend(keys.all().cloned());
            }
            if from <= self.read.len() {
                self.failed = None;
            }
        }
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        while self.read.len() < entries.len() {
            let n = self.read.len();
            let keys = match keys_of(entries[n], chain) {
                Ok(k) => k,
                Err(e) => {
                    self.failed = Some(e.clone());
                    return Err(e);
                }
            };
            self.add(n as u32, &keys);
            touched.extend(keys.all().cloned());
            self.read.push(keys);
        }
        Ok(())
    }

    fn add(&mut self, n: u32, keys: &EntryKeys) {
        for k in &keys.dropped {
            *self.dropped.at(k) += 1;
        }
        for k in &keys.protected {
            self.protected.at(k).push(n);
        }
        if let Some(k) = &keys.finals {
            *self.finals.at(k) += 1;
        }
        if let Some(k) = &keys.start {
            self.starts.at(k).push(n);
        }
    }

    /// Takes back what entry `n`, the last one read, added.
    fn take_back(&mut self, n: u32, keys: &EntryKeys) {
        fn uncount(map: &mut ValueMap<u32>, k: &Key) {
            map.update(k, |c| {
                *c -= 1;
                *c > 0
            });
        }
        fn unlist(map: &mut ValueMap<Vec<u32>>, k: &Key, n: u32) {
            map.update(k, |list| {
                if list.last() == Some(&n) {
                    list.pop();
                }
                !list.is_empty()
            });
        }
        for k in keys.dropped.iter().rev() {
            uncount(&mut self.dropped, k);
        }
        for k in keys.protected.iter().rev() {
            unlist(&mut self.protected, k, n);
        }
        if let Some(k) = &keys.finals {
            uncount(&mut self.finals, k);
        }
        if let Some(k) = &keys.start {
            unlist(&mut self.starts, k, n);
        }
    }

    /// `D.has(v)`.
    pub fn dropped(&self, v: &Scalar, syms: &Interner) -> bool {
        self.dropped.get(v, syms).is_some()
    }

    /// The last entry protecting `v`.
    pub fn protected_by(&self, v: &Scalar, syms: &Interner) -> Option<u32> {
        self.protected.get(v, syms).and_then(|l| l.last()).copied()
    }

    /// `F.has(v)`.
    pub fn is_final(&self, v: &Scalar, syms: &Interner) -> bool {
        self.finals.get(v, syms).is_some()
    }

    /// The last entry starting at `v`.
    pub fn starting(&self, v: &Scalar, syms: &Interner) -> Option<u32> {
        self.starts.get(v, syms).and_then(|l| l.last()).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_value;

    fn entries(json: &str) -> Vec<Json> {
        match parse_value(json.as_bytes()).unwrap() {
            Json::Arr(items) => items,
            _ => unreachable!(),
        }
    }

    /// An interner holding the ids "a", "b", "c" (symbols 0, 1, 2).
    fn syms() -> Interner {
        let mut syms = Interner::default();
        for id in ["a", "b", "c"] {
            syms.intern(id.as_bytes());
        }
        syms
    }

    fn chain() -> ChainConfig {
        ChainConfig {
            strip_final_assistant_thinking: true,
        }
    }

    /// The sets built from nothing over `list`, and `sets` brought there:
    /// the same answers for every id and timestamp in play.
    fn assert_same(sets: &ChainSets, list: &[Json], syms: &Interner) {
        let mut fresh = ChainSets::default();
        let refs: Vec<&Json> = list.iter().collect();
        fresh.bring(&refs, None, &chain(), &mut Vec::new()).unwrap();
        let probes = [
            Scalar::Str(0),
            Scalar::Str(1),
            Scalar::Str(2),
            Scalar::Num(1.0),
            Scalar::Num(2.0),
            Scalar::Num(3.0),
            Scalar::Absent,
        ];
        for p in &probes {
            assert_eq!(sets.dropped(p, syms), fresh.dropped(p, syms), "{p:?}");
            assert_eq!(sets.protected_by(p, syms), fresh.protected_by(p, syms));
            assert_eq!(sets.is_final(p, syms), fresh.is_final(p, syms));
            assert_eq!(sets.starting(p, syms), fresh.starting(p, syms));
        }
    }

    #[test]
    fn entries_replaced_from_one_on_give_the_sets_of_the_new_list() {
        let syms = syms();
        let old = entries(
            r#"[{"droppedToolCallIds":["a","b"],"protectedToolCallIds":["b"],"startUserTimestamp":1,"finalAssistantTimestamp":2},
                {"droppedToolCallIds":["b"],"protectedToolCallIds":["b"],"startUserTimestamp":1,"finalAssistantTimestamp":3}]"#,
        );
        let new = entries(
            r#"[{"droppedToolCallIds":["a","b"],"protectedToolCallIds":["b"],"startUserTimestamp":1,"finalAssistantTimestamp":2},
                {"droppedToolCallIds":["c"],"startUserTimestamp":3,"finalAssistantTimestamp":null}]"#,
        );
        let mut sets = ChainSets::default();
        let refs: Vec<&Json> = old.iter().collect();
        sets.bring(&refs, None, &chain(), &mut Vec::new()).unwrap();
        assert_eq!(sets.protected_by(&Scalar::Str(1), &syms), Some(1));
        assert_eq!(sets.starting(&Scalar::Num(1.0), &syms), Some(1));
        let mut touched = Vec::new();
        let refs: Vec<&Json> = new.iter().collect();
        sets.bring(&refs, Some(1), &chain(), &mut touched).unwrap();
        assert_same(&sets, &new, &syms);
        assert!(
            sets.dropped(&Scalar::Str(1), &syms),
            "still dropped by entry 0"
        );
        assert_eq!(sets.protected_by(&Scalar::Str(1), &syms), Some(0));
        assert!(!sets.is_final(&Scalar::Num(3.0), &syms));
        // The keys of the entry taken back and of the one read.
        assert_eq!(touched.len(), 4 + 2);
    }

    #[test]
    fn an_unreadable_entry_fails_until_it_is_replaced() {
        let syms = syms();
        let bad = entries(
            r#"[{"droppedToolCallIds":[],"startUserTimestamp":1},{"droppedToolCallIds":5}]"#,
        );
        let refs: Vec<&Json> = bad.iter().collect();
        let mut sets = ChainSets::default();
        let err = sets.bring(&refs, None, &chain(), &mut Vec::new());
        assert!(err
            .unwrap_err()
            .message
            .contains("droppedToolCallIds is not iterable"));
        assert!(sets.bring(&refs, None, &chain(), &mut Vec::new()).is_err());
        let good = entries(
            r#"[{"droppedToolCallIds":[],"startUserTimestamp":1},{"droppedToolCallIds":[],"startUserTimestamp":2}]"#,
        );
        let refs: Vec<&Json> = good.iter().collect();
        sets.bring(&refs, Some(1), &chain(), &mut Vec::new())
            .unwrap();
        assert_eq!(sets.starting(&Scalar::Num(2.0), &syms), Some(1));
        assert_same(&sets, &good, &syms);
    }
}
