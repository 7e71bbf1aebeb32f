//! State values as the reference's `Set` and `Map` keys (SameValueZero),
//! looked up with message fields: the chain sets' ids and timestamps
//! (`chain_sets.rs`), the id index (`id_index.rs`) and the log index
//! (`log_index.rs`) key by them, and the synthetic blocks read them.

use crate::hash::HashMap;
use crate::json::Json;
use crate::record::{Interner, Scalar};

/// A state value as a `Set`/`Map` key compared with message fields
/// (SameValueZero): strings by their text, primitives by value; `undefined`
/// is a key like any other. An array or object equals nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    Text(Box<[u8]>),
    Other(Scalar),
}

/// The key `v` is as a `Map` key (None: `undefined`); None when it is an
/// array or object, which no message field equals.
pub fn key_of_json(v: Option<&Json>) -> Option<Key> {
    Some(match v {
        None => Key::Other(Scalar::Absent),
        Some(Json::Null) => Key::Other(Scalar::Null),
        Some(Json::Bool(b)) => Key::Other(Scalar::Bool(*b)),
        Some(Json::Num(n)) => Key::Other(Scalar::Num(*n)),
        Some(Json::Str(t)) => Key::Text(t.clone()),
        Some(Json::Arr(_) | Json::Obj(_)) => return None,
    })
}

/// A JS `Map` keyed by state values, looked up with message fields.
#[derive(Debug)]
pub struct ValueMap<V> {
    texts: HashMap<Box<[u8]>, V>,
    others: Vec<(Scalar, V)>,
}

impl<V> Default for ValueMap<V> {
    fn default() -> Self {
        ValueMap {
            texts: HashMap::default(),
            others: Vec::new(),
        }
    }
}

impl<V: Default> ValueMap<V> {
    /// The value at `key`, set to the default when there is none.
    pub fn at(&mut self, key: &Key) -> &mut V {
        match key {
            Key::Text(t) => self.texts.entry(t.clone()).or_default(),
            Key::Other(k) => {
                let at = match self.others.iter().position(|(o, _)| o.same(k)) {
                    Some(at) => at,
                    None => {
                        self.others.push((*k, V::default()));
                        self.others.len() - 1
                    }
                };
                &mut self.others[at].1
            }
        }
    }
}

impl<V> ValueMap<V> {
    /// Changes the value at `key`, if there is one, with `change`, and
    /// deletes the key when `change` says it is not to be kept.
    pub fn update(&mut self, key: &Key, change: impl FnOnce(&mut V) -> bool) {
        match key {
            Key::Text(t) => {
                if let Some(v) = self.texts.get_mut(t) {
                    if !change(v) {
                        self.texts.remove(t);
                    }
                }
            }
            Key::Other(k) => {
                if let Some(at) = self.others.iter().position(|(o, _)| o.same(k)) {
                    if !change(&mut self.others[at].1) {
                        self.others.remove(at);
                    }
                }
            }
        }
    }

    pub fn get(&self, key: &Scalar, syms: &Interner) -> Option<&V> {
        match key {
            Scalar::Str(s) => self.texts.get(syms.text(*s)),
            _ => self.others.iter().find(|(o, _)| o.same(key)).map(|e| &e.1),
        }
    }
}
