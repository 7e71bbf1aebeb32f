//! What a policy's saving rests on: its difference from no pruning split
//! into parts, each the difference between two policies that differ in
//! that part alone (issue 45): the release's stubs, purges and chains
//! (`none` against the release without its thinking strip), the 2.4.3
//! thinking strip (without it against with it), the gate's holds (the
//! release against its gated twin), pi's compactions and pi's warms (each
//! policy's own, against `none`'s). Requests, compactions and warms are
//! billed apart, so the parts add up to the difference exactly.
//!
//! A policy whose stages the replay was not asked for walks them unseen
//! (`mod.rs`).

use super::policy::Policy;
use super::result::{PolicyReplay, SavingPart as Part};
use super::settings::Settings;
use crate::error::Result;

/// The policies a policy's saving is measured through, from the least
/// pruned on: the release without its strip, with it, behind the gate.
pub fn stages(policy: Policy, settings: &Settings) -> Result<Vec<Policy>> {
    let base = policy.base();
    let strips = match base {
        Policy::Config => policy
            .config(settings)?
            .is_some_and(|c| c.thinking.is_some()),
        Policy::LiveThinkingStrip => true,
        _ => false,
    };
    let mut out = Vec::new();
    if base == Policy::None {
        return Ok(out);
    }
    if strips {
        out.push(Policy::NoThinkingStrip);
    }
    out.push(base);
    if policy.gated() {
        out.push(policy);
    }
    Ok(out)
}

/// What requests alone cost (compactions and warms apart).
fn requests(p: &PolicyReplay) -> f64 {
    p.bill.cost_usd - p.bill.compaction_cost_usd - p.bill.warm_cost_usd
}

/// The parts of `policy`'s saving against `none`, in USD (positive: it
/// saves), given the replays of its stages (`find`). They sum to
/// `none`'s cost less `policy`'s.
pub fn parts<'r>(
    policy: Policy,
    settings: &Settings,
    find: impl Fn(Policy) -> Option<&'r PolicyReplay>,
) -> Result<Vec<(Part, f64)>> {
    let (Some(none), Some(this)) = (find(Policy::None), find(policy)) else {
        return Ok(Vec::new());
    };
    if policy == Policy::None {
        return Ok(Vec::new());
    }
    let stages = stages(policy, settings)?;
    let mut out = Vec::new();
    let mut before = none;
    for &stage in &stages {
        let Some(after) = find(stage) else {
            return Ok(Vec::new());
        };
        let part = match stage {
            Policy::NoThinkingStrip | Policy::V2_9 => Part::Pruning,
            Policy::Config if stages[0] == Policy::Config => Part::Pruning,
            Policy::Config | Policy::LiveThinkingStrip => Part::ThinkingStrip,
            _ => Part::Gate,
        };
        out.push((part, requests(before) - requests(after)));
        before = after;
    }
    out.push((
        Part::Compactions,
        none.bill.compaction_cost_usd - this.bill.compaction_cost_usd,
    ));
    out.push((
        Part::Warms,
        none.bill.warm_cost_usd - this.bill.warm_cost_usd,
    ));
    Ok(out)
}
