//! pi-condense's persisted state (SESSIONS.md part B): the rebuild of the
//! indexer and the frontier over a branch, and its projection onto the
//! addon's state shape (B.6) for either dialect.

mod map;
mod shape;
mod state;

pub use map::JsMap;
pub use shape::{frontier_json, state_json};
pub use state::{occurrence_key, CondenseState, SummaryBody};

use crate::sessionfile::error::{ErrorKind, SessionError};

/// Which pi-condense release's rules (and state shape) to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Dialect {
    /// 2.4.3: bare tool-call ids, the flush-gated thinking boundary.
    #[default]
    V243,
    /// 2.9.1: occurrence keys, no boundary.
    V291,
}

impl Dialect {
    pub fn parse(name: &str) -> Result<Self, SessionError> {
        match name {
            "2.4.3" => Ok(Dialect::V243),
            "2.9.1" => Ok(Dialect::V291),
            other => Err(SessionError::new(
                ErrorKind::InvalidArgument,
                format!("dialect must be \"2.4.3\" or \"2.9.1\", got {other:?}"),
            )),
        }
    }
}
