//! Lookups over the conversation that phase 3 would otherwise repeat over
//! every message at every render: where each timestamp occurs among the
//! user and the assistant messages (2.9.1 resolves each chain entry by its
//! two timestamps) and which synthetic chain blocks the conversation
//! already holds (both dialects skip those). They depend on the messages
//! alone, so a kept engine extends them as messages are appended and builds
//! them again only after messages were re-sent.

use super::value_key::Key;
use crate::hash::{HashMap, HashSet};
use crate::json::Json;
use crate::record::{Interner, Log, Role, Scalar, Sym};

/// A message field's value as a hash key, compared as the phases compare
/// it (`Scalar::same`: `-0` is `0`; NaN equals nothing, so it is never a
/// key): timestamps here, ids and timestamps in `id_index.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Stamp {
    Absent,
    Null,
    Bool(bool),
    Num(u64),
    Str(Sym),
}

fn num(n: f64) -> Option<Stamp> {
    (!n.is_nan()).then(|| Stamp::Num((n + 0.0).to_bits()))
}

impl Stamp {
    pub(super) fn of_field(s: &Scalar) -> Option<Stamp> {
        match *s {
            Scalar::Absent => Some(Stamp::Absent),
            Scalar::Null => Some(Stamp::Null),
            Scalar::Bool(b) => Some(Stamp::Bool(b)),
            Scalar::Num(n) => num(n),
            Scalar::Str(t) => Some(Stamp::Str(t)),
            Scalar::Object(_) => None,
        }
    }

    /// A state value as a key; None when no message can carry it.
    fn of_value(v: Option<&Json>, syms: &Interner) -> Option<Stamp> {
        match v {
            None => Some(Stamp::Absent),
            Some(Json::Null) => Some(Stamp::Null),
            Some(Json::Bool(b)) => Some(Stamp::Bool(*b)),
            Some(Json::Num(n)) => num(*n),
            Some(Json::Str(t)) => syms.find(t).map(Stamp::Str),
            Some(_) => None,
        }
    }

    /// A state value read as a `Map`/`Set` key (`synthetic::Key`); None
    /// when no message can carry it.
    pub(super) fn of_key(key: &Key, syms: &Interner) -> Option<Stamp> {
        match key {
            Key::Text(t) => syms.find(t).map(Stamp::Str),
            Key::Other(s) => Stamp::of_field(s),
        }
    }
}

/// The messages of one role carrying one timestamp: the first's position
/// and how many there are. Messages go from the end only, so the first
/// stays the first until the count drops to zero.
#[derive(Debug, Clone, Copy, Default)]
struct Carriers {
    first: u32,
    count: u32,
}

impl Carriers {
    fn add(&mut self, i: usize) {
        if self.count == 0 {
            self.first = i as u32;
        }
        self.count += 1;
    }
}

#[derive(Default)]
pub struct LogIndex {
    /// Messages indexed so far (a prefix of the log).
    indexed: usize,
    users: HashMap<Stamp, Carriers>,
    assistants: HashMap<Stamp, Carriers>,
    blocks: HashSet<Sym>,
}

impl LogIndex {
    /// Indexes the messages appended since the last call.
    pub fn catch_up(&mut self, log: &Log) {
        if self.indexed > log.len() {
            *self = LogIndex::default();
        }
        for (i, rec) in log.records.iter().enumerate().skip(self.indexed) {
            let map = match rec.role {
                Role::User => {
                    if let Some(b) = rec.chain_block {
                        self.blocks.insert(b);
                    }
                    &mut self.users
                }
                Role::Assistant => &mut self.assistants,
                _ => continue,
            };
            if let Some(stamp) = Stamp::of_field(&rec.timestamp) {
                map.entry(stamp).or_default().add(i);
            }
        }
        self.indexed = log.len();
    }

    /// Forgets messages `from` and after of `log` (about to be re-sent).
    pub fn truncate(&mut self, from: usize, log: &Log) {
        for rec in log.records.iter().take(self.indexed).skip(from) {
            let map = match rec.role {
                Role::User => {
                    if rec.chain_block.is_some() {
                        // Another message may carry the same block: index
                        // them all again.
                        *self = LogIndex::default();
                        return;
                    }
                    &mut self.users
                }
                Role::Assistant => &mut self.assistants,
                _ => continue,
            };
            if let Some(stamp) = Stamp::of_field(&rec.timestamp) {
                if let Some(c) = map.get_mut(&stamp) {
                    c.count -= 1;
                    if c.count == 0 {
                        map.remove(&stamp);
                    }
                }
            }
        }
        self.indexed = self.indexed.min(from);
    }

    fn only(map: &HashMap<Stamp, Carriers>, v: Option<&Json>, syms: &Interner) -> Option<usize> {
        let c = map.get(&Stamp::of_value(v, syms)?)?;
        (c.count == 1).then_some(c.first as usize)
    }

    /// The position of the one user message whose timestamp is `v`, if
    /// exactly one has it.
    pub fn only_user(&self, v: Option<&Json>, syms: &Interner) -> Option<usize> {
        Self::only(&self.users, v, syms)
    }

    /// The same among the assistant messages.
    pub fn only_assistant(&self, v: Option<&Json>, syms: &Interner) -> Option<usize> {
        Self::only(&self.assistants, v, syms)
    }

    /// Whether an entry's blockId names a synthetic block the conversation
    /// already holds (a user message carrying it).
    pub fn has_block(&self, block_id: Option<&Json>, syms: &Interner) -> bool {
        match block_id {
            Some(Json::Str(t)) => syms.find(t).is_some_and(|s| self.blocks.contains(&s)),
            _ => false,
        }
    }
}
