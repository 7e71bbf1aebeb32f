//! The two appliers of the edit script, and the sizes. The bytes applier
//! writes the pruned array: an untouched message whose bytes are already
//! JSON.stringify's spelling is copied and measured straight from the
//! caller's buffer; everything else is serialized. The script applier (for
//! JS arrays) lists, per output slot, either the caller's own message or an
//! edited one, serializing only edits it has not sent before.

use crate::hash::{HashMap, HashSet};

use crate::index::scan::Span;
use crate::jsjson::utf16_len;
use crate::phases::{Edit, Msg};
use crate::value::{Raw, Val};

pub struct Sizes {
    pub before: usize,
    pub after: usize,
}

/// The caller's messages with what is known about their bytes.
pub struct Source<'i, 't> {
    input: &'i [u8],
    raws: &'i [Raw<'t>],
    /// One per raw when the scanner could align them; None otherwise.
    spans: Option<&'i [Span]>,
}

impl<'i, 't> Source<'i, 't> {
    pub fn new(input: &'i [u8], raws: &'i [Raw<'t>], spans: &'i [Span]) -> Self {
        let spans = (spans.len() == raws.len()).then_some(spans);
        Self { input, raws, spans }
    }

    /// The caller's exact bytes for message `i`, when they are canonical.
    fn canonical_bytes(&self, i: usize) -> Option<&'i [u8]> {
        let span = self.spans?.get(i)?;
        (span.canonical && self.raws[i].keys_in_js_order())
            .then(|| &self.input[span.start..span.end])
    }

    /// Length in UTF-16 units of message `i` as JSON.stringify writes it,
    /// given its canonical bytes when it has them.
    fn input_len(&self, i: usize, canonical: Option<&[u8]>, scratch: &mut Vec<u8>) -> usize {
        match canonical {
            Some(bytes) => utf16_len(bytes),
            None => {
                scratch.clear();
                Val::Raw(self.raws[i]).view().write_json(scratch);
                utf16_len(scratch)
            }
        }
    }

    /// Every input message's length.
    pub fn input_lens(&self) -> Vec<usize> {
        let mut scratch = Vec::new();
        (0..self.raws.len())
            .map(|i| self.input_len(i, self.canonical_bytes(i), &mut scratch))
            .collect()
    }
}

/// `JSON.stringify(a).length` of an array whose elements have these lengths.
pub fn array_len(count: usize, body: usize) -> usize {
    2 + count.saturating_sub(1) + body
}

/// The input message an output slot shows unchanged, if any.
fn untouched(m: &Msg<'_>) -> Option<usize> {
    m.src.filter(|_| m.edit.is_none())
}

/// `JSON.stringify(input).length`, `JSON.stringify(output).length`, and the
/// output bytes.
pub fn assemble(src: &Source<'_, '_>, msgs: &[Msg<'_>]) -> (Vec<u8>, Sizes) {
    let canonical: Vec<Option<&[u8]>> = (0..src.raws.len())
        .map(|i| src.canonical_bytes(i))
        .collect();
    let mut scratch = Vec::new();
    let lens: Vec<usize> = (0..src.raws.len())
        .map(|i| src.input_len(i, canonical[i], &mut scratch))
        .collect();
    let before = array_len(lens.len(), lens.iter().sum());
    // The thread's kept vector (given back by the caller once copied).
    let mut out = crate::index::reuse::take_output(src.input.len());
    out.push(b'[');
    let mut body = 0;
    for (n, m) in msgs.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        let from = out.len();
        match untouched(m) {
            Some(i) => {
                match canonical[i] {
                    Some(bytes) => out.extend_from_slice(bytes),
                    None => m.view().write_json(&mut out),
                }
                debug_assert_eq!(utf16_len(&out[from..]), lens[i]);
                body += lens[i];
            }
            None => {
                m.view().write_json(&mut out);
                body += utf16_len(&out[from..]);
            }
        }
    }
    out.push(b']');
    let after = array_len(msgs.len(), body);
    (out, Sizes { before, after })
}

/// `JSON.stringify(JSON.parse(bytes)).length` for a whole array.
pub fn measure(src: &Source<'_, '_>) -> usize {
    let lens = src.input_lens();
    array_len(lens.len(), lens.iter().sum())
}

/// Edited messages already serialized and sent to the JS side, by what was
/// done to which input message (or, for inserted blocks, by their text), so
/// a later render that makes the same edit sends only its id.
#[derive(Default)]
pub struct EditCache {
    by_edit: HashMap<(usize, Edit), Sent>,
    by_json: HashMap<Vec<u8>, Sent>,
    next_id: u32,
    /// Ids forgotten between renders, reported with the next script.
    forgotten: Vec<u32>,
}

#[derive(Clone, Copy)]
struct Sent {
    id: u32,
    len: usize,
}

impl EditCache {
    /// Forgets edits of input messages at `from` and after (they changed).
    pub fn forget_from(&mut self, from: usize) {
        let forgotten = &mut self.forgotten;
        self.by_edit.retain(|(i, _), s| {
            if *i >= from {
                forgotten.push(s.id);
            }
            *i < from
        });
    }

    pub fn clear(&mut self) {
        let ids = self
            .by_edit
            .values()
            .chain(self.by_json.values())
            .map(|s| s.id);
        self.forgotten.extend(ids);
        self.by_edit.clear();
        self.by_json.clear();
    }

    /// Keeps the edits this render used; returns the ids of the others.
    fn retain(&mut self, used: &HashSet<u32>) -> Vec<u32> {
        let mut evicted = std::mem::take(&mut self.forgotten);
        let mut keep = |s: &Sent| {
            let kept = used.contains(&s.id);
            if !kept {
                evicted.push(s.id);
            }
            kept
        };
        self.by_edit.retain(|_, s| keep(s));
        self.by_json.retain(|_, s| keep(s));
        evicted
    }
}

/// The output as an edit script: `order[k] >= 0` is input message
/// `order[k]` itself; `order[k] < 0` is edit `-order[k] - 1`, either listed
/// in `fresh` (its description in `fresh_edits`, a JSON array in the same
/// order) or sent by an earlier render with the same cache. An edit is
/// described, not serialized, so the JS side builds a fresh message from
/// the caller's own objects at every render:
/// - `[i, 0, text]`: input message `i` replaced by a stub with this text;
/// - `[i, 1, strip, [[j, size], ...]]`: input message `i` with the
///   arguments of content blocks `j` purged (marker of that size), then its
///   thinking blocks removed when `strip` is 1;
/// - `[-1, 2, text]` or `[-1, 2, text, timestamp]`: an inserted chain block.
#[derive(Debug)]
pub struct Script {
    pub order: Vec<i32>,
    pub fresh: Vec<u32>,
    pub fresh_edits: Vec<u8>,
    /// Ids sent earlier that this render no longer uses.
    pub evicted: Vec<u32>,
    pub after: usize,
}

pub fn script(msgs: &[Msg<'_>], input_lens: &[usize], cache: &mut EditCache) -> Script {
    let mut order = Vec::with_capacity(msgs.len());
    let mut fresh = Vec::new();
    let mut fresh_edits = vec![b'['];
    let mut used = HashSet::default();
    let mut body = 0;
    let mut json = Vec::new();
    for m in msgs {
        if let Some(i) = untouched(m) {
            order.push(i as i32);
            body += input_lens[i];
            continue;
        }
        let hit = match m.src {
            Some(i) => cache.by_edit.get(&(i, m.edit.clone())).copied(),
            None => {
                json.clear();
                m.view().write_json(&mut json);
                cache.by_json.get(&json).copied()
            }
        };
        let sent = match hit {
            Some(sent) => sent,
            None => {
                if m.src.is_some() {
                    json.clear();
                    m.view().write_json(&mut json);
                }
                let sent = Sent {
                    id: cache.next_id,
                    len: utf16_len(&json),
                };
                cache.next_id = (cache.next_id + 1) & 0x7fff_ffff;
                if !fresh.is_empty() {
                    fresh_edits.push(b',');
                }
                describe(&mut fresh_edits, m);
                fresh.push(sent.id);
                match m.src {
                    Some(i) => cache.by_edit.insert((i, m.edit.clone()), sent),
                    None => cache.by_json.insert(json.clone(), sent),
                };
                sent
            }
        };
        used.insert(sent.id);
        order.push(-(sent.id as i32) - 1);
        body += sent.len;
    }
    fresh_edits.push(b']');
    let evicted = cache.retain(&used);
    Script {
        order,
        fresh,
        fresh_edits,
        evicted,
        after: array_len(msgs.len(), body),
    }
}

/// Appends the description of an edited or inserted message (see `Script`).
fn describe(out: &mut Vec<u8>, m: &Msg<'_>) {
    let text_of = |v: Option<crate::value::V<'_, '_>>| {
        v.and_then(|c| c.elements().next())
            .and_then(|b| b.get("text"))
            .map(|t| t.to_json())
            .unwrap_or_else(|| b"\"\"".to_vec())
    };
    match m.src {
        Some(i) if m.edit.stubbed => {
            out.extend_from_slice(format!("[{i},0,").as_bytes());
            out.extend_from_slice(&text_of(m.view().get("content")));
            out.push(b']');
        }
        Some(i) => {
            let strip = u8::from(m.edit.thinking_stripped || m.edit.final_thinking_stripped);
            out.extend_from_slice(format!("[{i},1,{strip},[").as_bytes());
            for (n, (j, size)) in m.edit.purged.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(format!("[{j},{size}]").as_bytes());
            }
            out.extend_from_slice(b"]]");
        }
        None => {
            out.extend_from_slice(b"[-1,2,");
            out.extend_from_slice(&text_of(m.view().get("content")));
            if let Some(t) = m.view().get("timestamp") {
                out.push(b',');
                t.write_json(out);
            }
            out.push(b']');
        }
    }
}
