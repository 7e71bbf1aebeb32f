//! Which messages read each value 2.4.3's chain sets are keyed by: a tool
//! result its `toolCallId`, an assistant its tool calls' ids and its
//! timestamp, a user message its timestamp, a per-batch summary the ids its
//! refs cite (the fields `chain_ids::fact` looks up). When new chain
//! entries change the sets at a few keys, only these messages' facts are
//! decided again (`chain_ids.rs`). It depends on the messages alone, so a
//! kept engine extends it as messages are appended and takes back only the
//! messages re-sent.

use super::log_index::Stamp;
use super::value_key::Key;
use crate::hash::HashMap;
use crate::record::{BlockType, Content, ElementKind, Log, Refs, Role, Scalar};

#[derive(Default)]
pub struct IdIndex {
    /// Messages indexed so far (a prefix of the log).
    indexed: usize,
    /// Each value to the messages reading it, in message order (a message
    /// reading one value twice is listed twice).
    readers: HashMap<Stamp, Vec<u32>>,
}

/// Calls `f` with each value message `i` reads, in order.
fn values_read(log: &Log, i: usize, mut f: impl FnMut(&Scalar)) {
    let rec = &log.records[i];
    match rec.role {
        Role::ToolResult => f(&rec.tool_call_id),
        Role::Assistant => {
            if rec.content == Content::Array {
                for b in log.blocks(i) {
                    if b.kind == ElementKind::Object && b.ty == BlockType::ToolCall {
                        f(&b.id);
                    }
                }
            }
            f(&rec.timestamp);
        }
        Role::User => f(&rec.timestamp),
        _ => {}
    }
    if rec.summary && rec.refs_kind == Refs::Array {
        for r in log.refs(i) {
            if r.kind != ElementKind::Null {
                f(&r.tool_call_id);
            }
        }
    }
}

impl IdIndex {
    /// Indexes the messages appended since the last call.
    pub fn catch_up(&mut self, log: &Log) {
        if self.indexed > log.len() {
            *self = IdIndex::default();
        }
        for i in self.indexed..log.len() {
            let readers = &mut self.readers;
            values_read(log, i, |v| {
                if let Some(s) = Stamp::of_field(v) {
                    readers.entry(s).or_default().push(i as u32);
                }
            });
        }
        self.indexed = log.len();
    }

    /// Forgets messages `from` and after of `log` (about to be re-sent).
    pub fn truncate(&mut self, from: usize, log: &Log) {
        for i in (from..self.indexed).rev() {
            let readers = &mut self.readers;
            values_read(log, i, |v| {
                let Some(s) = Stamp::of_field(v) else { return };
                if let Some(list) = readers.get_mut(&s) {
                    if list.last() == Some(&(i as u32)) {
                        list.pop();
                    }
                    if list.is_empty() {
                        readers.remove(&s);
                    }
                }
            });
        }
        self.indexed = self.indexed.min(from);
    }

    /// The messages indexed so far that read `key`.
    pub fn readers(&self, key: &Key, syms: &crate::record::Interner) -> &[u32] {
        Stamp::of_key(key, syms)
            .and_then(|s| self.readers.get(&s))
            .map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Json;
    use crate::record::{scan_array, Source};

    fn log(json: &str) -> Log {
        let mut log = Log::keeping_text();
        scan_array(json.as_bytes(), &mut log, 0, Source::Bytes).unwrap();
        log
    }

    fn readers(index: &IdIndex, log: &Log, v: Json) -> Vec<u32> {
        let key = super::super::value_key::key_of_json(Some(&v)).unwrap();
        index.readers(&key, &log.syms).to_vec()
    }

    const MESSAGES: &str = r#"[
        {"role":"user","timestamp":1,"content":"go"},
        {"role":"assistant","timestamp":2,"content":[{"type":"toolCall","id":"a","name":"read","arguments":{}},{"type":"toolCall","id":"b","name":"read","arguments":{}}]},
        {"role":"toolResult","toolCallId":"a","timestamp":3,"content":[]},
        {"role":"custom","customType":"context-prune-summary","details":{"toolCallRefs":[{"shortId":"t1","toolCallId":"a"}]},"content":"s","timestamp":4},
        {"role":"toolResult","toolCallId":"b","timestamp":5,"content":[]}
    ]"#;

    #[test]
    fn each_value_to_the_messages_reading_it() {
        let log = log(MESSAGES);
        let mut index = IdIndex::default();
        index.catch_up(&log);
        assert_eq!(readers(&index, &log, Json::str("a")), [1, 2, 3]);
        assert_eq!(readers(&index, &log, Json::str("b")), [1, 4]);
        assert_eq!(readers(&index, &log, Json::Num(1.0)), [0]);
        assert_eq!(readers(&index, &log, Json::Num(2.0)), [1]);
        // A tool result's and a summary's timestamps are read by no fact.
        assert_eq!(readers(&index, &log, Json::Num(3.0)), [] as [u32; 0]);
        assert_eq!(readers(&index, &log, Json::str("never")), [] as [u32; 0]);
    }

    #[test]
    fn a_resend_takes_back_only_its_messages() {
        let full = log(MESSAGES);
        let mut index = IdIndex::default();
        index.catch_up(&full);
        index.truncate(2, &full);
        let mut cut = log(MESSAGES);
        cut.truncate(2);
        assert_eq!(readers(&index, &cut, Json::str("a")), [1]);
        assert_eq!(readers(&index, &cut, Json::str("b")), [1]);
        index.catch_up(&full);
        assert_eq!(readers(&index, &full, Json::str("a")), [1, 2, 3]);
    }
}
