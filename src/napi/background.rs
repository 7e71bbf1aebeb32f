//! Syncs read on another thread. When JS sends a long run of messages (the
//! first render of a conversation, a stateless call), it sends them in
//! slices; each slice's text is converted and scanned on rayon's pool while
//! JS serializes the next slice and asks its indexer about tool results.
//! The engine takes the scanned slices, in order, at its next call that
//! reads the conversation (`settle`). A slice that fails leaves the engine
//! as it was before the first slice of the run; a panic on the pool is
//! raised again on the calling thread, where the export's `catch_unwind`
//! turns it into a JS error as for any other panic.

use std::any::Any;
use std::sync::mpsc::{channel, Receiver};

use crate::engine::{scan_messages, Engine};
use crate::error::Result;
use crate::record::scan::Source;
use crate::record::Log;

type Outcome = std::result::Result<Result<Log>, Box<dyn Any + Send>>;

struct Slice {
    from: usize,
    scanned: Receiver<Outcome>,
}

/// The slices sent and not yet taken, in the order they were sent.
#[derive(Default)]
pub struct BackgroundSyncs {
    slices: Vec<Slice>,
}

impl BackgroundSyncs {
    /// Starts reading `units` (the UTF-16 JSON text of messages `from` on).
    pub fn start(&mut self, from: usize, units: Vec<u16>) {
        let (tx, rx) = channel();
        rayon::spawn(move || {
            let outcome = std::panic::catch_unwind(|| {
                let bytes = super::utf16_to_utf8(&units);
                drop(units);
                scan_messages(from, &bytes, Source::Stringify)
            });
            // The engine may have been closed meanwhile: nobody listens.
            let _ = tx.send(outcome);
        });
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
