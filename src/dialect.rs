//! Which pi-condense release the render reproduces. The two share records,
//! the edit script and both appliers; they differ in how phase 1 keys a tool
//! result, how phase 3 finds a chain, what the fourth phase is, and which
//! config sections exist. The dialect is a value every engine is built with.

use crate::error::{PruneError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Dialect {
    /// pi-condense 2.4.3 (SPEC.md): flush-gated thinking strip.
    #[default]
    V2_4,
    /// pi-condense 2.9.1 (SPEC-2.9.md): occurrence keys, positional chain
    /// ranges, the orphan sweep and diagnostics.
    V2_9,
}

impl Dialect {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "2.4.3" => Ok(Dialect::V2_4),
            "2.9.1" => Ok(Dialect::V2_9),
            other => Err(PruneError::bad_argument(format!(
                "dialect must be '2.4.3' or '2.9.1', not '{other}'"
            ))),
        }
    }

    pub fn release(self) -> &'static str {
        match self {
            Dialect::V2_4 => "2.4.3",
            Dialect::V2_9 => "2.9.1",
        }
    }
}
