//! The configurations a tune compares: pi-condense's render-time settings
//! (those that act at every render, so a replay can show what they would
//! have done), each a complete `contextPrune` block as pi's settings.json
//! takes it, built over the user's own block so their protected tools and
//! paths and every flush-time setting stay as given. The grid: chain
//! compression off, on, or on without stripping the final answer's
//! thinking; error purge off or at three strengths (cooldown and minimum
//! argument size); recovery grace 1 or 3 turns; for 2.4.3 the thinking
//! strip off or keeping 8, 16 or 32 turns; both releases; and no pruning.
//! Each configuration but no pruning has a gated twin: the same release and
//! block behind the cache-aware gate (`crate::gate::rule`), with the
//! tune's gate settings.

use crate::gate::rule::GateSettings;
use crate::json::Json;
use crate::replay::{Policy, Settings};

/// Settings that act only at a flush: a replay cannot change what the
/// summarizer did, so they stay at what the session recorded.
pub const HELD: [&str; 12] = [
    "summarizerModel",
    "summarizerThinking",
    "pruneOn",
    "batchingMode",
    "minBatchChars",
    "dedupByContentHash",
    "autoBudgetThreshold",
    "budgetTurnDelta",
    "spillThreshold",
    "spillPreviewBytes",
    "chainCompression.rollingWindow",
    "chainCompression.fuseRangeSummary",
];

/// One configuration of the grid.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// `2.4.3`, `2.9.1` or `none`.
    pub release: &'static str,
    /// The `contextPrune` block to paste (null for `none`).
    pub block: Json,
    pub policy: Policy,
    pub settings: Settings,
    /// The gate's settings, on a gated twin (pi's `condenseNative.gate`
    /// to paste beside the block).
    pub gate: Option<GateSettings>,
}

impl Candidate {
    /// The same release and block behind the gate.
    pub fn gated(&self, gate: GateSettings) -> Candidate {
        Candidate {
            policy: self.policy.with_gate(),
            gate: Some(gate),
            ..self.clone()
        }
    }
}

fn key(k: &str) -> Box<[u8]> {
    k.as_bytes().into()
}

/// `{...base, ...changes}` for one section of the block.
fn section(base: &Json, name: &str, changes: &[(&str, Json)]) -> Json {
    let mut entries = match base.get(name) {
        Some(Json::Obj(e)) => e.clone(),
        _ => Vec::new(),
    };
    for (k, v) in changes {
        match entries.iter_mut().find(|(have, _)| &**have == k.as_bytes()) {
            Some(slot) => slot.1 = v.clone(),
            None => entries.push((key(k), v.clone())),
        }
    }
    Json::Obj(entries)
}

fn candidate(release: &'static str, block: Json) -> Candidate {
    let policy = match release {
        "2.9.1" => Policy::V2_9,
        "none" => Policy::None,
        _ => Policy::Config,
    };
    let settings = Settings::new(Some(Json::Obj(vec![(key("contextPrune"), block.clone())])))
        .expect("a grid block is an object");
    Candidate {
        release,
        block: if release == "none" { Json::Null } else { block },
        policy,
        settings,
        gate: None,
    }
}

/// The user's current configuration: `release` with their block.
pub fn current(release: &'static str, base: &Json) -> Candidate {
    candidate(release, base.clone())
}

/// The leaves of a JSON value: (dotted key path, value).
fn leaves<'j>(prefix: String, v: &'j Json, out: &mut Vec<(String, &'j Json)>) {
    match v {
        Json::Obj(entries) => {
            for (k, x) in entries {
                leaves(format!("{prefix}.{}", String::from_utf8_lossy(k)), x, out);
            }
        }
        other => out.push((prefix, other)),
    }
}

/// How many settings differ between two blocks (or two sections of
/// them), whatever the order of their keys.
pub fn block_distance(a: &Json, b: &Json) -> usize {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    leaves(String::new(), a, &mut x);
    leaves(String::new(), b, &mut y);
    x.iter()
        .filter(|(k, v)| !y.iter().any(|(k2, v2)| k == k2 && v == v2))
        .count()
        + y.iter()
            .filter(|(k, _)| !x.iter().any(|(k2, _)| k == k2))
            .count()
}

/// How many settings differ between two candidates (the release and the
/// gate count as one each): among equally cheap configurations the one
/// that changes least from the user's is recommended.
pub fn distance(a: &Candidate, b: &Candidate) -> usize {
    block_distance(&a.block, &b.block)
        + usize::from(a.release != b.release)
        + usize::from(a.gate.is_some() != b.gate.is_some())
}

/// Every configuration of the grid over the user's block `base` (their
/// `contextPrune`, merged over the release's defaults), then each one's
/// gated twin with `gate` (none without).
pub fn grid(base: &Json, gate: Option<GateSettings>) -> Vec<Candidate> {
    let t = Json::Bool(true);
    let f = Json::Bool(false);
    let chains = [(true, true), (true, false), (false, true)];
    let purges = [
        None,
        Some((1.0, 200.0)),
        Some((2.0, 500.0)),
        Some((4.0, 2000.0)),
    ];
    let graces = [1.0, 3.0];
    let strips = [None, Some(8.0), Some(16.0), Some(32.0)];
    let mut out = vec![candidate("none", base.clone())];
    for release in ["2.4.3", "2.9.1"] {
        for &(chain, strip_final) in &chains {
            for purge in purges {
                for grace in graces {
                    let mut block = base.with(
                        "chainCompression",
                        section(
                            base,
                            "chainCompression",
                            &[
                                ("enabled", Json::Bool(chain)),
                                ("stripFinalAssistantThinking", Json::Bool(strip_final)),
                            ],
                        ),
                    );
                    let purge_section = match purge {
                        None => section(base, "purgeErrors", &[("enabled", f.clone())]),
                        Some((cooldown, min)) => section(
                            base,
                            "purgeErrors",
                            &[
                                ("enabled", t.clone()),
                                ("cooldownTurns", Json::Num(cooldown)),
                                ("minArgChars", Json::Num(min)),
                            ],
                        ),
                    };
                    block = block.with("purgeErrors", purge_section);
                    block = block.with("recoveryGraceTurns", Json::Num(grace));
                    if release == "2.9.1" {
                        // 2.9.1 has no thinking strip: its block has no such key.
                        out.push(candidate(release, block.without("thinkingStrip")));
                        continue;
                    }
                    for strip in strips {
                        let thinking = match strip {
                            None => section(base, "thinkingStrip", &[("enabled", f.clone())]),
                            Some(k) => section(
                                base,
                                "thinkingStrip",
                                &[("enabled", t.clone()), ("keepLastTurns", Json::Num(k))],
                            ),
                        };
                        out.push(candidate(release, block.with("thinkingStrip", thinking)));
                    }
                }
            }
        }
    }
    // Each twin right after its sibling: the family walk renders the two
    // once (`walk.rs`, lanes next to each other).
    match gate {
        Some(gate) => out
            .into_iter()
            .flat_map(|c| {
                let twin = (c.release != "none").then(|| c.gated(gate));
                std::iter::once(c).chain(twin)
            })
            .collect(),
        None => out,
    }
}

/// Whether two candidates render the same (same release and render
/// config).
pub fn same(a: &Candidate, b: &Candidate) -> bool {
    a.release == b.release
        && a.gate.is_some() == b.gate.is_some()
        && (a.release == "none"
            || a.settings.render_config(a.policy.dialect())
                == b.settings.render_config(b.policy.dialect()))
}
