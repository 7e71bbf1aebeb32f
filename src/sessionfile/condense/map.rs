//! A JavaScript `Map` over JS values: SameValueZero keys, insertion order,
//! and `set` on an existing key keeping its place. pi-condense keeps its
//! records, refs and chains in such maps; their projection onto the addon's
//! state (an object) turns each key into `String(key)`, where a later key
//! with the same text wins at the earlier one's place.

use std::borrow::Cow;

use crate::hash::HashMap;
use crate::sessionfile::key::{JsKey, JsVal};

#[derive(Clone)]
pub struct JsMap<'s, V> {
    order: Vec<(JsVal<'s>, V)>,
    index: HashMap<JsKey<'s>, usize>,
}

impl<V> Default for JsMap<'_, V> {
    fn default() -> Self {
        JsMap {
            order: Vec::new(),
            index: HashMap::default(),
        }
    }
}

fn owned_key<'s>(k: &JsVal<'s>) -> JsKey<'s> {
    match k {
        JsVal::Undefined => JsKey::Undefined,
        JsVal::Value(v) => JsKey::of(Some(*v)),
        JsVal::Text(t) => JsKey::String(Cow::Owned(t.to_vec())),
    }
}

impl<'s, V> JsMap<'s, V> {
    pub fn set(&mut self, key: JsVal<'s>, value: V) {
        let k = owned_key(&key);
        match self.index.get(&k) {
            Some(&at) => self.order[at].1 = value,
            None => {
                self.index.insert(k, self.order.len());
                self.order.push((key, value));
            }
        }
    }

    pub fn get(&self, key: &JsKey<'_>) -> Option<&V> {
        let index: &HashMap<JsKey<'_>, usize> = &self.index;
        index.get(key).map(|&at| &self.order[at].1)
    }

    /// Entries in Map order.
    pub fn iter(&self) -> impl Iterator<Item = (&JsVal<'s>, &V)> {
        self.order.iter().map(|(k, v)| (k, v))
    }

    /// `Object.fromEntries(map)`: keys as `String(key)`, each once, at its
    /// first place with its last value.
    pub fn as_object(&self) -> Vec<(Cow<'_, [u8]>, &V)> {
        let mut out: Vec<(Cow<'_, [u8]>, &V)> = Vec::with_capacity(self.order.len());
        let mut seen: HashMap<Vec<u8>, usize> = HashMap::default();
        for (k, v) in &self.order {
            let name = k.to_js_string();
            match seen.get(&*name) {
                Some(&at) => out[at].1 = v,
                None => {
                    seen.insert(name.to_vec(), out.len());
                    out.push((name, v));
                }
            }
        }
        out
    }
}
