//! A request kept from one call to the next, for the replay's pricer and
//! pi's live gate alike: the keys of its messages (what tells messages
//! apart on that side: a digest in a replay, a slot in pi), the messages
//! converted for the wire, and the request built over them
//! (`request.rs`'s `Incremental`). A call brings it up to date from the
//! first key that differs, so a call that only appends converts and
//! assembles only what it appended.

use std::sync::Arc;

use super::catalog::Rules;
use super::digest::first_difference;
use super::request::{Bindings, Incremental, Preamble, Request, Update};
use super::wire::{convert_message, CallModel, Converted, Packed};
use crate::error::Result;
use crate::json::Json;

/// One message converted for the wire, shared between requests (and, in
/// a tune, between walks on several threads).
pub type WireMessage = Arc<Converted<Packed>>;

/// `value` converted for `model`'s wire.
pub fn wire_message(value: &Json, model: &CallModel) -> WireMessage {
    Arc::new(convert_message(value, model, false).pack())
}

/// Where the message a key stands for is read, the first time a request
/// holds it: `at` is its position in the request being built, when the
/// caller can say it.
pub trait MessageValues<K> {
    fn value(&self, key: &K, at: Option<usize>) -> Result<Json>;
}

/// A request and what it was built from.
#[derive(Clone)]
pub struct KeptRequest<K> {
    keys: Vec<K>,
    messages: Vec<WireMessage>,
    /// The model the messages were converted for.
    model: Option<u64>,
    incremental: Incremental,
}

impl<K> Default for KeptRequest<K> {
    fn default() -> Self {
        KeptRequest {
            keys: Vec::new(),
            messages: Vec::new(),
            model: None,
            incremental: Incremental::default(),
        }
    }
}

impl<K: Clone + PartialEq> KeptRequest<K> {
    pub fn request(&self) -> &Request {
        &self.incremental.request
    }

    pub fn keys(&self) -> &[K] {
        &self.keys
    }

    /// The first of `keys` that differs from the kept ones (0 on another
    /// model: every message is converted again).
    pub fn first_new(&self, model: u64, keys: &[K]) -> usize {
        if self.model == Some(model) {
            first_difference(&self.keys, keys)
        } else {
            0
        }
    }

    /// Brings the request to its keys before `first` followed by `new`, on
    /// `model` (its key `key`); `message(j)` is `new[j]`'s converted
    /// message. When one cannot be had, nothing changes.
    #[allow(clippy::too_many_arguments)]
    pub fn bring(
        &mut self,
        first: usize,
        new: &[K],
        mut message: impl FnMut(usize) -> Result<WireMessage>,
        model: &CallModel,
        key: u64,
        preamble: &Preamble,
        rules: (&Rules, Option<&Bindings>),
    ) -> Result<Update> {
        let first = first.min(self.keys.len());
        let fresh = (0..new.len())
            .map(&mut message)
            .collect::<Result<Vec<_>>>()?;
        self.messages.truncate(first);
        self.messages.extend(fresh);
        self.keys.truncate(first);
        self.keys.extend_from_slice(new);
        self.model = Some(key);
        Ok(self
            .incremental
            .update(key, preamble, &self.messages, first, model, rules))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::catalog::rules_for;
    use crate::json::parse_value;

    /// Every request brought up to date step by step equals one built
    /// afresh from its messages: appends, rewrites from any point, a new
    /// user turn, on a model whose thinking rules depend on the turn.
    #[test]
    fn a_kept_request_equals_a_fresh_one() {
        let model = CallModel::from_json(
            &parse_value(
                br#"{"provider":"anthropic","api":"anthropic-messages","id":"claude-opus-5"}"#,
            )
            .unwrap(),
        );
        let rules = rules_for(&model, false);
        let preamble = Preamble {
            tools_chars: 400,
            system_chars: 300,
            tools_hash: 1,
            system_hash: 2,
        };
        let message = |n: u32| -> Json {
            let text = format!("message {n} {}", "x".repeat((n as usize * 37) % 300));
            let json = match n % 4 {
                0 => format!(
                    r#"{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"timestamp":{n}}}"#
                ),
                1 => format!(
                    r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":"t{n}","thinkingSignature":"s"}},{{"type":"toolCall","id":"c{n}","name":"read","arguments":{{"path":"{text}"}}}}],"stopReason":"toolUse","timestamp":{n}}}"#
                ),
                2 => format!(
                    r#"{{"role":"toolResult","toolCallId":"c{}","toolName":"read","content":[{{"type":"text","text":"{text}"}}],"isError":false,"timestamp":{n}}}"#,
                    n - 1
                ),
                _ => format!(
                    r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"stopReason":"stop","timestamp":{n}}}"#
                ),
            };
            parse_value(json.as_bytes()).unwrap()
        };
        let mut kept = KeptRequest::<u32>::default();
        let mut keys: Vec<u32> = Vec::new();
        let mut seed = 7u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for step in 0..200u32 {
            // Mostly appends; now and then a rewrite from an earlier point.
            if !keys.is_empty() && next(5) == 0 {
                let at = next(keys.len() as u64) as usize;
                keys.truncate(at);
            }
            for _ in 0..=next(4) {
                keys.push(keys.len() as u32 + 1000 * u32::from(step % 7 == 0));
            }
            let first = kept.first_new(9, &keys);
            let new = keys[first..].to_vec();
            kept.bring(
                first,
                &new,
                |j| Ok(wire_message(&message(new[j] % 1000), &model)),
                &model,
                9,
                &preamble,
                (&rules, None),
            )
            .unwrap();
            let fresh: Vec<WireMessage> = keys
                .iter()
                .map(|&k| wire_message(&message(k % 1000), &model))
                .collect();
            let refs: Vec<&Converted<Packed>> = fresh.iter().map(|m| &**m).collect();
            assert_eq!(
                *kept.request(),
                Request::build(&preamble, &refs, &model, &rules),
                "step {step}"
            );
            assert_eq!(kept.keys(), &keys[..]);
        }
    }
}
