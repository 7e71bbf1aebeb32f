//! Syncs read on another thread. When JS sends a long run of messages (the
//! first render of a conversation, a stateless call), it sends them in
//! slices; each slice's text is converted and scanned on one background
//! thread while JS serializes the next slice and asks its indexer about tool
//! results (one thread: the JS thread keeps a core of its own on a 2-core
//! machine).
//! The engine takes the scanned slices, in order, at its next call that
//! reads the conversation (`settle`). A slice that fails leaves the engine
//! as it was before the first slice of the run; a panic on the pool is
//! raised again on the calling thread, where the export's `catch_unwind`
//! turns it into a JS error as for any other panic.

use std::any::Any;
use std::sync::mpsc::{channel, Receiver};
use std::sync::OnceLock;

use super::{scan_messages, Engine};
use crate::error::Result;
use crate::json::v8_wire::wire_to_json;
use crate::record::Log;
use crate::record::Source;

type Outcome = std::result::Result<Result<Log>, Box<dyn Any + Send>>;

struct Slice {
    from: usize,
    scanned: Receiver<Outcome>,
}

/// A slice of messages: the UTF-16 units of `JSON.stringify`'s text, or
/// `v8.serialize`'s bytes that `json::v8_wire::wire_is_json` took (turned
/// into the same text on the background thread).
pub enum SliceText {
    Utf16(Vec<u16>),
    Wire(Vec<u8>),
}

/// The slices sent and not yet taken, in the order they were sent.
#[derive(Default)]
pub struct BackgroundSyncs {
    slices: Vec<Slice>,
}

/// The one thread background syncs run on, shared by every engine; None
/// where no thread can be started (then syncs run on the caller's).
fn reader() -> Option<&'static rayon::ThreadPool> {
    static READER: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    READER
        .get_or_init(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .thread_name(|_| "condense-native-sync".into())
                .build()
                .ok()
        })
        .as_ref()
}

impl BackgroundSyncs {
    /// Starts reading `text` (the JSON text of messages `from` on).
    pub fn start(&mut self, from: usize, text: SliceText) {
        let (tx, rx) = channel();
        let read = move || {
            let outcome = std::panic::catch_unwind(|| {
                let bytes = match text {
                    SliceText::Utf16(units) => crate::json::utf16::utf16_to_utf8(&units),
                    // Checked by `wire_is_json` before it was sent here.
                    SliceText::Wire(wire) => {
                        wire_to_json(&wire).expect("v8.serialize bytes taken by wire_is_json")
                    }
                };
                scan_messages(from, &bytes, Source::Stringify)
            });
            // The engine may have been closed meanwhile: nobody listens.
            let _ = tx.send(outcome);
        };
        match reader() {
            Some(pool) => pool.spawn(read),
            None => read(),
        }
        self.slices.push(Slice { from, scanned: rx });
    }

    /// Gives `engine` every slice sent, in order.
    pub fn settle(&mut self, engine: &mut Engine) -> Result<()> {
        let Some(first) = self.slices.first().map(|s| s.from) else {
            return Ok(());
        };
        for slice in std::mem::take(&mut self.slices) {
            let outcome = slice
                .scanned
                .recv()
                .unwrap_or_else(|_| Err(Box::new("a background sync never finished")));
            let taken = match outcome {
                Ok(scanned) => scanned.and_then(|log| engine.sync_scanned(slice.from, log)),
                Err(panic) => {
                    Self::undo(engine, first);
                    std::panic::resume_unwind(panic)
                }
            };
            if let Err(e) = taken {
                Self::undo(engine, first);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Drops the messages of a run that failed part way.
    fn undo(engine: &mut Engine, first: usize) {
        if first <= engine.len() {
            // Syncing nothing from there cannot fail.
            let _ = engine.sync_scanned(first, Log::keeping_text());
        }
    }

    /// Forgets the slices not taken (the engine is being closed).
    pub fn clear(&mut self) {
        self.slices.clear();
    }
}
