//! The recorded policy's bill against the usage pi recorded: the class each
//! call's recorded usage shows (`crate::cost::bill::classify`, the one
//! class rule) and the cost it records, beside what the replay priced.

use super::calls;
use super::result::{PolicyReplay, Reconciliation};
use super::warmer::SLACK_MS;
use crate::cost::bill::{self, CallClass};
use crate::cost::calibration::Calibration;
use crate::cost::catalog::{self, Catalog};
use crate::cost::usage::Usage;

/// The class a call's recorded usage shows, given the previous recorded
/// call on the same model: `bill.rs`'s rule, on what the usage says.
fn recorded_class(usage: &Usage, previous: Option<&Usage>, preamble_tokens: f64) -> CallClass {
    let reads = match previous {
        None => bill::Reads {
            previous: false,
            lapsed: false,
            reached_previous: false,
            within_preamble: false,
        },
        Some(p) => {
            // The previous call's prompt, within a tolerance.
            let tail = p.cache_read + p.cache_write;
            let tolerance = 0.02 * tail + 16.0;
            bill::Reads {
                previous: true,
                lapsed: false,
                reached_previous: usage.cache_read + tolerance >= tail && usage.cache_read > 0.0,
                within_preamble: usage.cache_read <= preamble_tokens * 1.002 + 8.0,
            }
        }
    };
    bill::classify(reads)
}

/// Compares the recorded policy's priced calls with the usage pi recorded.
pub(super) fn reconcile(
    r: &PolicyReplay,
    meta: &[calls::CallMeta],
    catalog: &Catalog,
    long: bool,
    calibration: &Calibration,
    unreconciled: Option<String>,
) -> Reconciliation {
    let mut out = Reconciliation {
        recorded_policy: r.policy.name(),
        status: "noUsage",
        ..Reconciliation::default()
    };
    let mut matched = 0usize;
    let mut any_cache = false;
    let mut previous: crate::hash::HashMap<u64, Usage> = Default::default();
    for (k, p) in r.priced.iter().enumerate() {
        let m = &meta[k];
        let Some(u) = m.usage else { continue };
        any_cache |= u.cache_read > 0.0 || u.cache_write > 0.0;
        let f = calibration.factor(m.model_key);
        let preamble = f.preamble_tokens.unwrap_or(
            (m.preamble.tools_chars + m.preamble.system_chars) as f64 * f.tokens_per_char,
        );
        let mut class = recorded_class(&u, previous.get(&m.model_key), preamble);
        if p.class == CallClass::Expired && class == CallClass::Rewrite {
            class = CallClass::Expired;
        }
        previous.insert(m.model_key, u);
        out.calls += 1;
        if class == p.class {
            matched += 1;
        }
        let rules = catalog::rules_for(&m.model, long);
        out.recorded_cost_usd += bill::price(
            catalog.get(&m.model.provider, &m.model.id),
            u.input,
            u.cache_read,
            u.cache_write,
            long,
            rules.write_premium,
        );
        out.predicted_cost_usd += p.bill.cost_usd;
    }
    out.warms = warms_matched(meta, &r.warm_times);
    if out.calls == 0 {
        return out;
    }
    out.class_match = matched as f64 / out.calls as f64;
    out.status = "matched";
    if let Some(why) = unreconciled {
        out.status = "unreconciled";
        out.reason = Some(why);
    } else if !any_cache {
        out.status = "unreconciled";
        out.reason = Some(
            "the recorded usage shows no cache reads or writes at all: a proxy or a provider without prompt caching".into(),
        );
    }
    out
}

/// pi's warms the file recorded, those the replay sent, and how many of
/// the recorded ones have a sent one within the warmer's slack (each sent
/// warm matched once).
fn warms_matched(meta: &[calls::CallMeta], sent: &[f64]) -> (usize, usize, usize) {
    let recorded: Vec<f64> = meta
        .iter()
        .flat_map(|m| m.since.warms.iter().copied())
        .collect();
    let mut taken = vec![false; sent.len()];
    let mut matched = 0;
    for t in &recorded {
        let near = sent
            .iter()
            .enumerate()
            .find(|&(i, s)| !taken[i] && (t - s).abs() <= SLACK_MS);
        if let Some((i, _)) = near {
            taken[i] = true;
            matched += 1;
        }
    }
    (recorded.len(), sent.len(), matched)
}
