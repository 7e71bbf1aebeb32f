//! Each call's wire request under the provider model, kept up to date from
//! one call to the next: the output messages from the first one that
//! changed are converted to wire blocks (`wire.rs`; each distinct message
//! once per model, shared between every walk of a file) and the request's
//! positions and breakpoints are brought up to date (`request.rs`'s
//! `Incremental`).

use std::sync::{Arc, RwLock};

use super::calls::CallMeta;
use crate::cost::catalog::Rules;
use crate::cost::digest::Digest;
use crate::cost::request::{Incremental, Preamble, Request, Update};
use crate::cost::wire::{convert_message, Converted, Packed};
use crate::hash::HashMap;
use crate::json::Json;

/// Output messages converted to wire blocks, by digest and model key:
/// a conversion depends on the message and the model alone, so every walk
/// of a file (each policy, each tune configuration, on any thread)
/// converts a message once between them.
#[derive(Default)]
pub struct Conversions(RwLock<HashMap<(u64, u64), Shared>>);

/// One converted message, shared between walks.
type Shared = Arc<Converted<Packed>>;

impl Conversions {
    fn get(&self, key: (u64, u64)) -> Option<Shared> {
        let map = self.0.read().unwrap_or_else(|e| e.into_inner());
        map.get(&key).cloned()
    }

    fn insert(&self, key: (u64, u64), value: Shared) {
        let mut map = self.0.write().unwrap_or_else(|e| e.into_inner());
        map.insert(key, value);
    }
}

/// One walk's requests.
pub struct Requests<'a> {
    meta: &'a [CallMeta],
    shared: &'a Conversions,
    /// The conversions this walk has used, without the shared map's lock.
    converted: HashMap<(u64, u64), Shared>,
    kept: Kept,
    /// `first_new` of the current call: (call, index).
    first_of: Option<(usize, usize)>,
    /// An update already made for a call (the gate's), which `update`
    /// hands back instead of doing it again: (call, its update).
    built: Option<(usize, Update)>,
}

/// The latest request and what it was built from.
#[derive(Clone, Default)]
struct Kept {
    incremental: Incremental,
    /// The previous call's output and its converted messages, by index.
    out: Vec<Digest>,
    messages: Vec<Shared>,
    messages_model: Option<u64>,
}

/// The gate's other candidate: a request brought to the release's render
/// of a call while the kept request is the hold's, to quote and perhaps
/// adopt (carried from call to call while the gate holds).
pub struct Draft {
    call: usize,
    kept: Kept,
    update: Update,
}

impl Draft {
    pub fn request(&self) -> &Request {
        &self.kept.incremental.request
    }
}

impl<'a> Requests<'a> {
    pub fn new(meta: &'a [CallMeta], shared: &'a Conversions) -> Self {
        Requests {
            meta,
            shared,
            converted: HashMap::default(),
            kept: Kept::default(),
            first_of: None,
            built: None,
        }
    }

    /// The latest request built.
    pub fn request(&self) -> &Request {
        &self.kept.incremental.request
    }

    /// The first output message of call `k` that differs from the
    /// previous call's (0 after a model switch): only those from there on
    /// need converting and assembling again.
    pub fn first_new(&mut self, k: usize, out: &[Digest]) -> usize {
        if let Some((at, first)) = self.first_of {
            if at == k {
                return first;
            }
        }
        let kept = &self.kept;
        let first = if kept.messages_model != Some(self.meta[k].model_key) {
            0
        } else {
            let common = kept.out.len().min(out.len());
            (0..common)
                .find(|&i| out[i] != kept.out[i])
                .unwrap_or(common)
        };
        // The walk asks before converting, `update` again after: the
        // output is the same in between.
        self.first_of = Some((k, first));
        first
    }

    /// Whether output message `digest` still needs converting for call `k`.
    pub fn needs(&mut self, k: usize, digest: &Digest) -> bool {
        let key = (digest.hash, self.meta[k].model_key);
        if self.converted.contains_key(&key) {
            return false;
        }
        match self.shared.get(key) {
            Some(c) => {
                self.converted.insert(key, c);
                false
            }
            None => true,
        }
    }

    /// Converts one output message (`message`, whose digest is `digest`)
    /// for call `k`.
    pub fn convert(&mut self, k: usize, digest: &Digest, message: &Json) {
        let meta = &self.meta[k];
        let packed = Arc::new(convert_message(message, &meta.model, false).pack());
        let key = (digest.hash, meta.model_key);
        self.shared.insert(key, packed.clone());
        self.converted.insert(key, packed);
    }

    /// The gate's other candidate: a request brought to call `k`'s output
    /// `out` (the release's render) while the kept one stays the previous
    /// call's. It starts from `previous`, the release's own request at the
    /// previous call when the gate held it back (so a release that only
    /// appended costs an append), else from a copy of the kept request.
    pub fn draft(
        &mut self,
        previous: Option<Draft>,
        k: usize,
        out: &[Digest],
        preamble: &Preamble,
        rules: &Rules,
    ) -> Draft {
        let base = match previous {
            Some(d) => d.kept,
            None => self.kept.clone(),
        };
        let kept = std::mem::replace(&mut self.kept, base);
        self.first_of = None;
        let update = self.update(k, out, preamble, rules);
        Draft {
            call: k,
            kept: std::mem::replace(&mut self.kept, kept),
            update,
        }
    }

    /// Brings the kept request, built from `sent`, to call `k`'s output
    /// `sent` followed by `appended`, now; the `update` that prices the
    /// call hands back this one's result.
    pub fn append(
        &mut self,
        k: usize,
        sent: &[Digest],
        appended: &[Digest],
        preamble: &Preamble,
        rules: &Rules,
    ) {
        debug_assert!(
            self.kept.out == sent,
            "the kept request is the previous one's"
        );
        debug_assert_eq!(self.kept.messages_model, Some(self.meta[k].model_key));
        let update = self.rebuild_from(k, sent.len(), appended, preamble, rules);
        self.built = Some((k, update));
    }

    /// Makes `draft` the kept request, as if its call's `update` had built
    /// it from the previous request: its divergence is where it first
    /// differs from the hold built at the same call (which differs from the
    /// previous request only where the hold's update says).
    pub fn adopt(&mut self, draft: Draft) {
        let update = match self.built.take() {
            Some((k, held)) if k == draft.call => {
                let request = &self.kept.incremental.request;
                let first = request
                    .common_prefix(&draft.kept.incremental.request)
                    .map_or(0, |i| i + 1);
                Update {
                    divergence: Some(held.divergence.map_or(first, |d| d.min(first))),
                    turn_closed: held.turn_closed,
                }
            }
            _ => draft.update,
        };
        self.kept = draft.kept;
        self.built = Some((draft.call, update));
        self.first_of = None;
    }

    /// Brings the request of call `k` (output `out`, preamble `preamble`)
    /// up to date.
    pub fn update(
        &mut self,
        k: usize,
        out: &[Digest],
        preamble: &Preamble,
        rules: &Rules,
    ) -> Update {
        if let Some((at, update)) = self.built.take() {
            if at == k && self.kept.out == out {
                return update;
            }
        }
        let first = self.first_new(k, out);
        self.rebuild_from(k, first, &out[first..], preamble, rules)
    }

    /// The kept request's output from `first` on replaced by `new`, and the
    /// request rebuilt from there.
    fn rebuild_from(
        &mut self,
        k: usize,
        first: usize,
        new: &[Digest],
        preamble: &Preamble,
        rules: &Rules,
    ) -> Update {
        let meta = &self.meta[k];
        let key = meta.model_key;
        let kept = &mut self.kept;
        kept.messages.truncate(first);
        for d in new {
            kept.messages.push(self.converted[&(d.hash, key)].clone());
        }
        kept.out.truncate(first);
        kept.out.extend_from_slice(new);
        kept.messages_model = Some(key);
        self.first_of = None;
        let update =
            kept.incremental
                .update(key, preamble, &kept.messages, first, &meta.model, rules);
        #[cfg(test)]
        {
            let refs: Vec<&Converted<Packed>> = kept.messages.iter().map(|m| &**m).collect();
            let fresh = Request::build(preamble, &refs, &meta.model, rules);
            assert_eq!(fresh, kept.incremental.request, "call {k}");
        }
        update
    }
}
