//! Per-message digests of rendered output, each computed once: a kept
//! message's from its session text (by the context view's message id), an
//! edited message's once per distinct edit, a stub's and a synthetic
//! block's once per engine generation (their ids are only stable within
//! one). A render's digests then cost a look-up per message, so a replay
//! stays near O(messages) per model call rather than O(bytes).
//!
//! The digest of a message is XXH3-64 (seed 0) of the UTF-8 bytes of its
//! `JSON.stringify` text; its length is that text's UTF-16 length, as
//! JavaScript counts it. `prefix_hash` hashes a run of digests.

use crate::cost::digest::Digest;
use crate::engine::RenderedScript;
use crate::hash::HashMap;
use crate::script::{Op, SharedText, Slot};
use crate::sessionfile::ContextView;

type EditKey = (u32, bool, Box<[(u32, u32)]>);
/// A message's latest edit: thinking stripped, purged blocks, digest.
type LastEdit = (bool, Box<[(u32, u32)]>, Digest);
/// A synthetic block by text identity and its timestamp's JSON.
type InsertKey = (SharedText, Option<Box<[u8]>>);

#[derive(Default)]
pub struct Digests {
    /// By context-view message id.
    kept: Vec<Option<Digest>>,
    /// Purged and/or stripped messages, by view id and edit.
    edits: HashMap<EditKey, Digest>,
    /// Each view message's latest edit, looked up by index before `edits`
    /// (a message keeps its edit from one render to the next).
    last_edit: Vec<Option<LastEdit>>,
    /// The engine generation the stubs and inserts belong to.
    generation: Option<u64>,
    /// Each view message's stub: its text id and digest.
    stubs: Vec<Option<(u32, Digest)>>,
    inserts: HashMap<InsertKey, Digest>,
    scratch: Vec<u8>,
}

impl Digests {
    /// The digest of context-view message `id`.
    pub fn kept(&mut self, view: &ContextView<'_>, id: u32) -> Digest {
        let at = id as usize;
        if self.kept.len() <= at {
            self.kept.resize(at + 1, None);
        }
        *self.kept[at].get_or_insert_with(|| Digest::of(&view.message(id).json))
    }

    fn written(&mut self, script: &RenderedScript<'_>, slot: &Slot) -> Digest {
        self.scratch.clear();
        script.write_slot(slot, &mut self.scratch);
        Digest::of(&self.scratch)
    }

    /// The digest of an output slot of `script`, whose inputs are the view
    /// messages `ids`.
    pub fn slot(
        &mut self,
        view: &ContextView<'_>,
        ids: &[u32],
        script: &RenderedScript<'_>,
        slot: &Slot,
    ) -> Digest {
        if self.generation != Some(script.generation()) {
            self.generation = Some(script.generation());
            self.stubs.clear();
            self.inserts.clear();
        }
        match slot.op {
            Op::Keep => self.kept(view, ids[slot.input as usize]),
            Op::Stub => {
                let id = ids[slot.input as usize] as usize;
                if let Some(Some((text, d))) = self.stubs.get(id) {
                    if *text == slot.text {
                        return *d;
                    }
                }
                let d = self.written(script, slot);
                if self.stubs.len() <= id {
                    self.stubs.resize(id + 1, None);
                }
                self.stubs[id] = Some((slot.text, d));
                d
            }
            Op::Edit => {
                let id = ids[slot.input as usize] as usize;
                if let Some(Some((strip, purged, d))) = self.last_edit.get(id) {
                    if *strip == slot.strip_thinking && **purged == *slot.purged {
                        return *d;
                    }
                }
                let key: EditKey = (
                    id as u32,
                    slot.strip_thinking,
                    slot.purged.clone().into_boxed_slice(),
                );
                let d = match self.edits.get(&key) {
                    Some(d) => *d,
                    None => {
                        let d = self.written(script, slot);
                        self.edits.insert(key.clone(), d);
                        d
                    }
                };
                if self.last_edit.len() <= id {
                    self.last_edit.resize(id + 1, None);
                }
                self.last_edit[id] = Some((key.1, key.2, d));
                d
            }
            Op::Insert => {
                let block = script.block(slot);
                let key = (
                    SharedText(block.text.clone()),
                    block
                        .timestamp
                        .as_ref()
                        .map(|t| t.to_json().into_boxed_slice()),
                );
                if let Some(d) = self.inserts.get(&key) {
                    return *d;
                }
                let d = self.written(script, slot);
                self.inserts.insert(key, d);
                d
            }
        }
    }
}

/// XXH3-64 (seed 0) of the digests' hashes, each as 8 little-endian bytes,
/// in order: the prefix hash of a run of output messages (an empty run
/// hashes the empty input). The replay computes it in place (`walk.rs`);
/// this is its definition, for the tests.
#[cfg(test)]
pub(crate) fn prefix_hash(digests: &[Digest], scratch: &mut Vec<u8>) -> u64 {
    use xxhash_rust::xxh3::xxh3_64;
    scratch.clear();
    scratch.reserve(digests.len() * 8);
    for d in digests {
        scratch.extend_from_slice(&d.hash.to_le_bytes());
    }
    xxh3_64(scratch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xxhash_rust::xxh3::xxh3_64;

    #[test]
    fn digests_and_prefix_hash_follow_their_definition() {
        let a = Digest::of(br#"{"role":"user","content":"h\u00e9"}"#);
        assert_eq!(a.len, 35);
        let b = Digest::of("{\"role\":\"user\",\"content\":\"é\"}".as_bytes());
        assert_eq!(b.len, 29);
        let mut scratch = Vec::new();
        let mut bytes = a.hash.to_le_bytes().to_vec();
        bytes.extend_from_slice(&b.hash.to_le_bytes());
        assert_eq!(prefix_hash(&[a, b], &mut scratch), xxh3_64(&bytes));
        assert_eq!(prefix_hash(&[], &mut scratch), xxh3_64(b""));
        // XXH3-64 of the empty input, as the reference implementation gives it.
        assert_eq!(xxh3_64(b""), 0x2d06_8005_38d3_94c2);
    }
}
