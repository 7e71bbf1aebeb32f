//! Each call's wire request under the provider model, kept up to date from
//! one call to the next (`crate::cost::kept`): the output messages from
//! the first one that changed are converted to wire blocks, each distinct
//! message once per model, shared between every walk of a file, the first
//! time a request holds it.

use std::sync::RwLock;

use super::calls::CallMeta;
use crate::cost::catalog::Rules;
use crate::cost::digest::Digest;
use crate::cost::kept::{wire_message, KeptRequest, MessageValues, WireMessage};
use crate::cost::request::{Bindings, Preamble, Request, Update};
use crate::error::Result;
use crate::hash::HashMap;

/// Output messages converted to wire blocks, by digest and model key:
/// a conversion depends on the message and the model alone, so every walk
/// of a file (each policy, each tune configuration, on any thread)
/// converts a message once between them.
#[derive(Default)]
pub struct Conversions(RwLock<HashMap<(u64, u64), WireMessage>>);

impl Conversions {
    fn get(&self, key: (u64, u64)) -> Option<WireMessage> {
        let map = self.0.read().unwrap_or_else(|e| e.into_inner());
        map.get(&key).cloned()
    }

    fn insert(&self, key: (u64, u64), value: WireMessage) {
        let mut map = self.0.write().unwrap_or_else(|e| e.into_inner());
        map.insert(key, value);
    }
}

/// One walk's requests.
pub struct Requests<'a> {
    meta: &'a [CallMeta],
    shared: &'a Conversions,
    /// The conversions this walk has used, without the shared map's lock.
    converted: HashMap<(u64, u64), WireMessage>,
    kept: KeptRequest<Digest>,
    /// An update already made for a call (the gate's), which `update`
    /// hands back instead of doing it again: (call, its update).
    built: Option<(usize, Update)>,
    /// What the answers' thinking is bound to (preserved thinking): each
    /// call's answer, the request this walk sent for it.
    bindings: Bindings,
}

/// The gate's other candidate: a request brought to the release's render
/// of a call while the kept request is the hold's, to quote and perhaps
/// adopt (carried from call to call while the gate holds).
pub struct Draft {
    call: usize,
    kept: KeptRequest<Digest>,
    update: Update,
}

impl Draft {
    pub fn request(&self) -> &Request {
        self.kept.request()
    }
}

impl<'a> Requests<'a> {
    pub fn new(meta: &'a [CallMeta], shared: &'a Conversions) -> Self {
        Requests {
            meta,
            shared,
            converted: HashMap::default(),
            kept: KeptRequest::default(),
            built: None,
            bindings: Bindings::default(),
        }
    }

    /// Call `k`'s request went out: its answer's thinking is bound to it.
    pub fn bind(&mut self, k: usize) {
        if let Some(answer) = self.meta[k].answer {
            let end = self.kept.request().end_hash;
            self.bindings.insert(answer, end);
        }
    }

    /// The latest request built.
    pub fn request(&self) -> &Request {
        self.kept.request()
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
        values: &dyn MessageValues<Digest>,
        (preamble, rules): (&Preamble, &Rules),
    ) -> Result<Draft> {
        let mut kept = match previous {
            Some(d) => d.kept,
            None => self.kept.clone(),
        };
        let update = self.bring(&mut kept, k, None, out, values, preamble, rules)?;
        Ok(Draft {
            call: k,
            kept,
            update,
        })
    }

    /// Brings the kept request, built from `sent`, to call `k`'s output
    /// `sent` followed by `appended`, now; the `update` that prices the
    /// call hands back this one's result.
    pub fn append(
        &mut self,
        k: usize,
        (sent, appended): (&[Digest], &[Digest]),
        values: &dyn MessageValues<Digest>,
        (preamble, rules): (&Preamble, &Rules),
    ) -> Result<()> {
        debug_assert!(
            self.kept.keys() == sent,
            "the kept request is the previous one's"
        );
        let mut kept = std::mem::take(&mut self.kept);
        let update = self.bring(
            &mut kept,
            k,
            Some(sent.len()),
            appended,
            values,
            preamble,
            rules,
        );
        self.kept = kept;
        self.built = Some((k, update?));
        Ok(())
    }

    /// Makes `draft` the kept request, as if its call's `update` had built
    /// it from the previous request: its divergence is where it first
    /// differs from the hold built at the same call (which differs from the
    /// previous request only where the hold's update says).
    pub fn adopt(&mut self, draft: Draft) {
        let update = match self.built.take() {
            Some((k, held)) if k == draft.call => {
                let first = self
                    .kept
                    .request()
                    .common_prefix(draft.kept.request())
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
    }

    /// Brings the request of call `k` (output `out`, whose messages
    /// `values` gives) up to date.
    pub fn update(
        &mut self,
        k: usize,
        out: &[Digest],
        values: &dyn MessageValues<Digest>,
        (preamble, rules): (&Preamble, &Rules),
    ) -> Result<Update> {
        if let Some((at, update)) = self.built.take() {
            if at == k && self.kept.keys() == out {
                return Ok(update);
            }
        }
        let mut kept = std::mem::take(&mut self.kept);
        let update = self.bring(&mut kept, k, None, out, values, preamble, rules);
        self.kept = kept;
        update
    }

    /// `kept` brought to call `k`'s output: its first `from` messages
    /// followed by `new` (with `from` None, `new` is the whole output and
    /// the kept request is reused up to its first difference from it).
    #[allow(clippy::too_many_arguments)]
    fn bring(
        &mut self,
        kept: &mut KeptRequest<Digest>,
        k: usize,
        from: Option<usize>,
        new: &[Digest],
        values: &dyn MessageValues<Digest>,
        preamble: &Preamble,
        rules: &Rules,
    ) -> Result<Update> {
        let (meta, shared) = (&self.meta[k], self.shared);
        let converted = &mut self.converted;
        let bindings = &self.bindings;
        let key = meta.model_key;
        let (first, new) = match from {
            Some(first) => (first, new),
            None => {
                let first = kept.first_new(key, new);
                (first, &new[first..])
            }
        };
        let message = |j: usize| -> Result<WireMessage> {
            let id = (new[j].hash, key);
            if let Some(m) = converted.get(&id) {
                return Ok(m.clone());
            }
            let m = match shared.get(id) {
                Some(m) => m,
                None => {
                    let m = wire_message(&values.value(&new[j], Some(first + j))?, &meta.model);
                    shared.insert(id, m.clone());
                    m
                }
            };
            converted.insert(id, m.clone());
            Ok(m)
        };
        kept.bring(
            first,
            new,
            message,
            &meta.model,
            key,
            preamble,
            (rules, Some(bindings)),
        )
    }
}
