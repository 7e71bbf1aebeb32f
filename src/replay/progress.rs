//! How far a replay or a tune has got, read from another thread (the JS
//! side polls it for `onProgress`).

use std::sync::atomic::{AtomicU64, Ordering};

/// Renders done out of renders to do, readable from another thread.
#[derive(Debug, Default)]
pub struct Progress {
    pub total: AtomicU64,
    pub done: AtomicU64,
}

impl Progress {
    pub(super) fn advance(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }
}
