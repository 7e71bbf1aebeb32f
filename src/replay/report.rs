//! The replay as JSON text: the wire format the JS API parses and the CLI's
//! `--json` prints per file. Field names are defined here once:
//!
//! ```text
//! { modelCalls, skippedLines: { count, lines },
//!   prefix?: { charsPerToken, inputPrice, cacheWriteMultiplier,
//!              cacheReadMultiplier, cacheTtlSeconds },
//!   cacheModel, retention, cacheWarming,
//!   models: [{ model, inCatalog, keepsThinking, prefixCheck, charsPerToken,
//!              preambleTokens, calibration, calls, fitError }],
//!   recorded: { policy, status, reason, calls, classMatch,
//!               recordedCostUsd, predictedCostUsd, costError,
//!               warms: { recorded, simulated, matched } },
//!   policies: [{ policy, config, thinkingBoundary, charsSent, costUsd,
//!                costUsdVsNone,
//!                parts: [{ part, costUsd }],
//!                inputTokens, cacheReadTokens, cacheWriteTokens,
//!                warms: { count, costUsd },
//!                thinkingDropped: { blocks, tokens, calls }, compactions,
//!                compactionCostUsd, overWindow,
//!                callClasses: { first, append, partial, rewrite, expired },
//!                causes: [{ cause, calls, tokensWritten, costUsd }],
//!                invariant: { flushGated, checked, broken,
//!                             violations: [{ render, outputIndex,
//!                                            inputIndex, phase, detail }] },
//!                prefix?: { inputTokens, cacheReadTokens, cacheWriteTokens,
//!                           cacheReadChars, cacheWriteChars, cost,
//!                           costVsNone },
//!                gate?: { horizon ('auto' or calls), budget, applies, holds,
//!                         reasons: { cold, budget, pays, same, waits } },
//!                renders?: [{ charsBefore, charsAfter, messagesBefore,
//!                             messagesAfter, breakIndex, prefixHash,
//!                             outputHash, entryId, leafId, timestamp,
//!                             stats, inputTokens, cacheReadTokens,
//!                             cacheWriteTokens, costUsd, cacheReadMessages,
//!                             callClass, overWindow, thinkingDropped:
//!                             { blocks, tokens }, compactions, warms,
//!                             rewriteCause,
//!                             gate?: 'apply' | 'hold', gateReason?,
//!                             messages?,
//!                             prefix?: { cacheReadChars, cacheWriteChars,
//!                                        cacheExpired } }] }] }
//! ```
//!
//! Every figure of a policy's row and of a render's row comes from its
//! bill (`bill.rs`, `pricer.rs`), whichever cache model priced it. The
//! plain names are that model's USD and tokens: the provider's bill
//! (`cacheModel` `provider`, the default), or the prefix rule's tokens
//! priced at the catalog. The `prefix` objects (present only under
//! `cacheModel: 'prefix'`) hold the rule's own figures: chars (UTF-16 units), tokens as chars over `charsPerToken` (not
//! rounded), `cost` in units of `inputPrice`, `costVsNone` the ratio to
//! policy `none` (null when that costs nothing). Hashes are 16 lower-case
//! hex digits; `inputIndex`, `leafId` and `timestamp` are null when absent.
//! `renders` is present only when asked for. `skippedLines` counts the
//! lines pi skips without a word (a truncated or garbage line, an entry of
//! a type pi does not write; blank lines aside) and lists the first five
//! line numbers (1-based). `thinkingBoundary` is null
//! for a policy that reads no 2.4.3 thinking boundary, else `{ rule:
//! 'recorded' | 'config', reason }`. `gate` is present on the `+gate`
//! policies only: the settings, the calls that sent the release's render
//! (`applies`) and the previous request's messages (`holds`), and the calls
//! per reason (`gate.rs`). A render's `messages` (with `contexts: true`)
//! is the array the context handler hands back to pi at that call: what
//! was sent and priced.

use crate::json::members::{null_or, object, Members};
use crate::json::write_json_number as num;
use crate::script::Stats;

use super::result::{BoundaryUsed, GateTotals, PolicyReplay, Render, Replay};

fn hex(out: &mut Vec<u8>, h: u64) {
    out.extend_from_slice(format!("\"{h:016x}\"").as_bytes());
}

fn stats(o: &mut Members, s: &Stats, v29: bool) {
    let (last, v) = if v29 {
        ("orphansSwept", s.orphans_swept)
    } else {
        ("thinkingStripped", s.thinking_stripped)
    };
    o.object("stats", |o| {
        o.nums(&[
            ("stubbed", f64::from(s.stubbed)),
            ("purgedArgs", f64::from(s.purged_args)),
            ("chainDropped", f64::from(s.chain_dropped)),
            ("chainInserted", f64::from(s.chain_inserted)),
            (
                "finalThinkingStripped",
                f64::from(s.final_thinking_stripped),
            ),
            (last, f64::from(v)),
        ]);
    });
}

/// `{count, lines}`: lines pi skipped, and the first line numbers.
pub fn skipped_lines(out: &mut Vec<u8>, (count, lines): &(usize, Vec<u32>)) {
    object(out, |o| {
        o.num("count", *count as f64)
            .array("lines", lines, |out, n| num(out, f64::from(*n)));
    });
}

/// `{rule, reason}`, or null for a policy that reads no boundary.
pub fn boundary(out: &mut Vec<u8>, b: Option<&BoundaryUsed>) {
    null_or(out, b, |out, b| {
        object(out, |o| {
            o.str("rule", b.rule).str("reason", &b.reason);
        })
    });
}

/// One policy's row: what it is, its bill, its invariant, the prefix
/// rule's own figures (under that model), and its renders when asked.
fn policy(o: &mut Members, replay: &Replay, p: &PolicyReplay, renders: bool) {
    let b = &p.bill;
    o.str("policy", p.policy.name())
        .raw("config", |out| {
            null_or(out, p.config.as_ref(), |out, c| c.write_json(out))
        })
        .raw("thinkingBoundary", |out| boundary(out, p.boundary.as_ref()))
        .nums(&[
            ("charsSent", p.chars_sent as f64),
            ("costUsd", b.cost_usd),
            ("costUsdVsNone", replay.vs_none(p, |q| q.bill.cost_usd)),
            ("inputTokens", b.input_tokens),
            ("cacheReadTokens", b.cache_read_tokens),
            ("cacheWriteTokens", b.cache_write_tokens),
            ("compactions", b.compactions as f64),
            ("compactionCostUsd", b.compaction_cost_usd),
            ("overWindow", b.over_window as f64),
        ])
        .object("warms", |o| {
            o.nums(&[("count", b.warms as f64), ("costUsd", b.warm_cost_usd)]);
        })
        .object("thinkingDropped", |o| {
            let d = &b.thinking_dropped;
            o.nums(&[
                ("blocks", d.blocks as f64),
                ("tokens", d.tokens),
                ("calls", d.calls as f64),
            ]);
        })
        .array("parts", &p.parts, |out, (part, usd)| {
            object(out, |o| {
                o.str("part", part.name()).num("costUsd", *usd);
            })
        })
        .object("callClasses", |o| {
            let names = ["first", "append", "partial", "rewrite", "expired"];
            for (n, c) in names.iter().zip(b.classes) {
                o.num(n, c as f64);
            }
        });
    let mut causes = b.causes.clone();
    causes.sort_by(|x, y| y.cost_usd.total_cmp(&x.cost_usd));
    o.array("causes", &causes, |out, c| {
        object(out, |o| {
            o.str("cause", &c.label).nums(&[
                ("calls", c.calls as f64),
                ("tokensWritten", c.tokens_written),
                ("costUsd", c.cost_usd),
            ]);
        })
    });
    invariant(o, p);
    if let Some((rule, sums)) = &b.prefix {
        let cost = |q: &PolicyReplay| q.bill.prefix.as_ref().map_or(0.0, |(r, s)| r.cost(s));
        o.object("prefix", |o| {
            o.nums(&[
                ("inputTokens", rule.tokens(p.chars_sent)),
                ("cacheReadTokens", rule.tokens(sums.read_chars)),
                ("cacheWriteTokens", rule.tokens(sums.write_chars)),
                ("cacheReadChars", sums.read_chars as f64),
                ("cacheWriteChars", sums.write_chars as f64),
                ("cost", rule.cost(sums)),
                ("costVsNone", replay.vs_none(p, cost)),
            ]);
        });
    }
    if let Some(g) = &p.gate {
        gate(o, g);
    }
    if renders {
        o.array("renders", &p.renders, |out, r| {
            object(out, |o| render(o, replay, p, r))
        });
    }
}

/// A gated policy's settings and decisions.
fn gate(o: &mut Members, g: &GateTotals) {
    use crate::gate::rule::Reason;
    let holds = g.count(Reason::Waits);
    let applies: u64 = g.counts.iter().sum::<u64>() - holds;
    o.object("gate", |o| {
        // The settings as the gate writes them (`horizon`, `budget`).
        if let crate::json::Json::Obj(entries) = g.settings.to_json() {
            for (key, value) in &entries {
                o.raw(&String::from_utf8_lossy(key), |out| value.write_json(out));
            }
        }
        o.nums(&[("applies", applies as f64), ("holds", holds as f64)])
            .object("reasons", |o| {
                for &r in Reason::ALL.iter() {
                    o.num(r.name(), g.count(r) as f64);
                }
            });
    });
}

/// A policy's flush-gated invariant.
fn invariant(o: &mut Members, p: &PolicyReplay) {
    o.object("invariant", |o| {
        o.flag("flushGated", p.policy.flush_gated())
            .nums(&[
                ("checked", p.checked as f64),
                ("broken", p.violation_count as f64),
            ])
            .array("violations", &p.violations, |out, v| {
                object(out, |o| {
                    o.nums(&[
                        ("render", v.render as f64),
                        ("outputIndex", v.output_index as f64),
                    ])
                    .opt_num("inputIndex", v.input_index.map(|i| i as f64))
                    .str("phase", v.phase.name())
                    .str("detail", &v.detail);
                })
            });
    });
}

/// One render's row.
fn render(o: &mut Members, replay: &Replay, p: &PolicyReplay, r: &Render) {
    let call = &replay.calls[r.call];
    o.nums(&[
        ("charsBefore", r.chars_before as f64),
        ("charsAfter", r.chars_after as f64),
        ("messagesBefore", r.messages_before as f64),
        ("messagesAfter", r.messages_after as f64),
        ("breakIndex", r.break_index as f64),
    ])
    .raw("prefixHash", |out| hex(out, r.prefix_hash))
    .raw("outputHash", |out| hex(out, r.output_hash))
    .str("entryId", &call.entry_id)
    .opt_str("leafId", call.leaf_id.as_deref())
    .opt_num("timestamp", call.time)
    .num("compactions", r.compactions as f64)
    .array("warms", &r.warms, |out, t| num(out, *t));
    stats(
        o,
        &r.stats,
        p.policy.dialect() == crate::dialect::Dialect::V2_9,
    );
    if let Some(pr) = &r.priced {
        priced(o, pr);
    }
    if let Some(reason) = r.gate {
        o.str("gate", reason.sent())
            .str("gateReason", reason.name());
    }
    if let Some(m) = &r.messages {
        o.raw("messages", |out| out.extend_from_slice(m));
    }
}

/// One call's bill, class and cause (and the prefix rule's characters
/// under that model).
fn priced(o: &mut Members, pr: &super::pricer::Priced) {
    o.nums(&[
        ("inputTokens", pr.bill.input_tokens),
        ("cacheReadTokens", pr.bill.cache_read_tokens),
        ("cacheWriteTokens", pr.bill.cache_write_tokens),
        ("costUsd", pr.bill.cost_usd),
        ("cacheReadMessages", f64::from(pr.read_messages)),
    ])
    .str("callClass", pr.class.name())
    .flag("overWindow", pr.over_window)
    .object("thinkingDropped", |o| {
        o.nums(&[
            ("blocks", f64::from(pr.thinking_dropped.0)),
            ("tokens", pr.thinking_dropped.1),
        ]);
    })
    .raw("rewriteCause", |out| {
        null_or(out, pr.cause.as_ref(), |out, c| {
            object(out, |o| {
                o.str("cause", c.cause.name())
                    .flag("flush", c.flush)
                    .opt_num("gapSeconds", c.gap_ms.map(|g| g / 1000.0));
            })
        })
    });
    if let Some(c) = &pr.prefix {
        o.object("prefix", |o| {
            o.nums(&[
                ("cacheReadChars", c.read_chars as f64),
                ("cacheWriteChars", c.write_chars as f64),
            ])
            .flag("cacheExpired", c.expired);
        });
    }
}

/// The replay as one JSON object (`renders`: include each policy's
/// per-render rows).
pub fn to_json(replay: &Replay, renders: bool) -> Vec<u8> {
    let mut out = Vec::new();
    object(&mut out, |o| {
        o.num("modelCalls", replay.calls.len() as f64)
            .raw("skippedLines", |out| {
                skipped_lines(out, &replay.skipped_lines)
            });
        if let crate::cost::bill::CacheModel::Prefix(m) = &replay.cache_model {
            o.object("prefix", |o| {
                o.nums(&[
                    ("charsPerToken", m.chars_per_token),
                    ("inputPrice", m.input_price),
                    ("cacheWriteMultiplier", m.cache_write_multiplier),
                    ("cacheReadMultiplier", m.cache_read_multiplier),
                    ("cacheTtlSeconds", m.cache_ttl_ms / 1000.0),
                ]);
            });
        }
        let retention = if replay.long_retention {
            "long"
        } else {
            "short"
        };
        o.str("cacheModel", replay.cache_model.name())
            .str("retention", retention)
            .str("cacheWarming", replay.cache_warming.name())
            .array("models", &replay.models, |out, m| {
                let f = replay.calibration.factor(m.key);
                object(out, |o| {
                    o.str("model", &m.name)
                        .flag("inCatalog", m.in_catalog)
                        .flag("keepsThinking", m.keeps_thinking)
                        .flag("prefixCheck", m.prefix_check)
                        .num("charsPerToken", 1.0 / f.tokens_per_char)
                        .opt_num("preambleTokens", f.preamble_tokens)
                        .str("calibration", f.source)
                        .num("calls", f.calls as f64)
                        .opt_num("fitError", f.fit_error);
                })
            });
        let rc = &replay.reconciliation;
        let error = if rc.recorded_cost_usd > 0.0 {
            rc.predicted_cost_usd / rc.recorded_cost_usd - 1.0
        } else {
            f64::NAN
        };
        o.object("recorded", |o| {
            o.str("policy", rc.recorded_policy)
                .str("status", rc.status)
                .opt_str("reason", rc.reason.as_deref())
                .nums(&[
                    ("calls", rc.calls as f64),
                    ("classMatch", rc.class_match),
                    ("recordedCostUsd", rc.recorded_cost_usd),
                    ("predictedCostUsd", rc.predicted_cost_usd),
                    ("costError", error),
                ])
                .object("warms", |o| {
                    let (recorded, simulated, matched) = rc.warms;
                    o.nums(&[
                        ("recorded", recorded as f64),
                        ("simulated", simulated as f64),
                        ("matched", matched as f64),
                    ]);
                });
        })
        .array("policies", &replay.policies, |out, p| {
            object(out, |o| policy(o, replay, p, renders))
        });
    });
    out
}
