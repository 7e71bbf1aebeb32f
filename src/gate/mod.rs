//! The cache-aware gate (issue 31, docs/GATE.md): at each model call, send
//! the release's render or hold the previous request followed by what was
//! appended. `rule.rs` is the rule, the only copy of it, asked by the
//! replay's walks (`crate::replay`) and by pi's extension through the
//! live gate (`live.rs`), which prices both candidates of one live
//! conversation with the cost model (`crate::cost`) as calls arrive.

pub mod live;
pub mod rule;
