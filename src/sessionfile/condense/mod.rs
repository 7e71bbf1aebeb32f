//! pi-condense's persisted state (SESSIONS.md part B): the rebuild of the
//! indexer and the frontier over a branch, and its projection onto the
//! addon's state shape (B.6) for either dialect.

mod map;
mod shape;
mod state;

pub use shape::{frontier_json, record_fields, state_json};
pub use state::{occurrence_key, CondenseState, CUSTOM_FRONTIER};

/// Which pi-condense release's rules (and state shape) to follow: the
/// crate's one dialect type, shared with the render engine.
pub use crate::dialect::Dialect;
