//! The replay as JSON text: the wire format the JS API parses and the CLI's
//! `--json` prints per file. Field names are defined here once:
//!
//! ```text
//! { modelCalls, skippedLines: { count, lines },
//!   prefix?: { charsPerToken, inputPrice, cacheWriteMultiplier,
//!              cacheReadMultiplier, cacheTtlSeconds },
//!   cacheModel, retention,
//!   models: [{ model, inCatalog, charsPerToken, preambleTokens,
//!              calibration, calls, fitError }],
//!   recorded: { policy, status, reason, calls, classMatch,
//!               recordedCostUsd, predictedCostUsd, costError },
//!   policies: [{ policy, config, thinkingBoundary, charsSent, costUsd,
//!                costUsdVsNone,
//!                inputTokens, cacheReadTokens, cacheWriteTokens, warms,
//!                warmCostUsd,
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
//!                             callClass, rewriteCause,
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

// The writers shared with the tune's report, under short names.
use crate::json::text::{write_key as field, write_str as string};
use crate::json::write_json_number as num;
use crate::script::Stats;

use super::{PolicyReplay, Replay};

fn opt_string(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => string(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

fn opt_num(out: &mut Vec<u8>, v: Option<f64>) {
    match v {
        Some(v) => num(out, v),
        None => out.extend_from_slice(b"null"),
    }
}

fn flag(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

fn hex(out: &mut Vec<u8>, h: u64) {
    out.extend_from_slice(format!("\"{h:016x}\"").as_bytes());
}

/// `"name":v` for each pair, in order.
fn nums(out: &mut Vec<u8>, pairs: &[(&str, f64)]) {
    for (name, v) in pairs {
        field(out, name);
        num(out, *v);
    }
}

/// `{"name":v,...}`.
fn num_object(out: &mut Vec<u8>, pairs: &[(&str, f64)]) {
    out.push(b'{');
    nums(out, pairs);
    out.push(b'}');
}

/// `[item,...]`, each item written by `each`.
fn list<T>(
    out: &mut Vec<u8>,
    items: impl IntoIterator<Item = T>,
    mut each: impl FnMut(&mut Vec<u8>, T),
) {
    out.push(b'[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        each(out, item);
    }
    out.push(b']');
}

fn stats(out: &mut Vec<u8>, s: &Stats, v29: bool) {
    let (last, v) = if v29 {
        ("orphansSwept", s.orphans_swept)
    } else {
        ("thinkingStripped", s.thinking_stripped)
    };
    num_object(
        out,
        &[
            ("stubbed", f64::from(s.stubbed)),
            ("purgedArgs", f64::from(s.purged_args)),
            ("chainDropped", f64::from(s.chain_dropped)),
            ("chainInserted", f64::from(s.chain_inserted)),
            (
                "finalThinkingStripped",
                f64::from(s.final_thinking_stripped),
            ),
            (last, f64::from(v)),
        ],
    );
}

/// `{count, lines}`: lines pi skipped, and the first line numbers.
pub fn skipped_lines(out: &mut Vec<u8>, (count, lines): &(usize, Vec<u32>)) {
    out.push(b'{');
    nums(out, &[("count", *count as f64)]);
    field(out, "lines");
    list(out, lines, |out, n| num(out, f64::from(*n)));
    out.push(b'}');
}

/// `{rule, reason}`, or null for a policy that reads no boundary.
pub fn boundary(out: &mut Vec<u8>, b: Option<&super::BoundaryUsed>) {
    match b {
        None => out.extend_from_slice(b"null"),
        Some(b) => {
            out.push(b'{');
            field(out, "rule");
            string(out, b.rule);
            field(out, "reason");
            string(out, &b.reason);
            out.push(b'}');
        }
    }
}

/// One policy's row: what it is, its bill, its invariant, the prefix
/// rule's own figures (under that model), and its renders when asked.
fn policy(out: &mut Vec<u8>, replay: &Replay, p: &PolicyReplay, renders: bool) {
    out.push(b'{');
    field(out, "policy");
    string(out, p.policy.name());
    field(out, "config");
    match &p.config {
        Some(c) => c.write_json(out),
        None => out.extend_from_slice(b"null"),
    }
    field(out, "thinkingBoundary");
    boundary(out, p.boundary.as_ref());
    let b = &p.bill;
    nums(
        out,
        &[
            ("charsSent", p.chars_sent as f64),
            ("costUsd", b.cost_usd),
            ("costUsdVsNone", replay.vs_none(p, |q| q.bill.cost_usd)),
            ("inputTokens", b.input_tokens),
            ("cacheReadTokens", b.cache_read_tokens),
            ("cacheWriteTokens", b.cache_write_tokens),
            ("warms", b.warms as f64),
            ("warmCostUsd", b.warm_cost_usd),
        ],
    );
    field(out, "callClasses");
    let names = ["first", "append", "partial", "rewrite", "expired"];
    let classes: Vec<(&str, f64)> = names
        .iter()
        .zip(b.classes)
        .map(|(n, c)| (*n, c as f64))
        .collect();
    num_object(out, &classes);
    field(out, "causes");
    let mut causes = b.causes.clone();
    causes.sort_by(|x, y| y.cost_usd.total_cmp(&x.cost_usd));
    list(out, &causes, |out, c| {
        out.push(b'{');
        field(out, "cause");
        string(out, &c.label);
        nums(
            out,
            &[
                ("calls", c.calls as f64),
                ("tokensWritten", c.tokens_written),
                ("costUsd", c.cost_usd),
            ],
        );
        out.push(b'}');
    });
    invariant(out, p);
    if let Some((rule, sums)) = &b.prefix {
        field(out, "prefix");
        let cost = |q: &PolicyReplay| q.bill.prefix.as_ref().map_or(0.0, |(r, s)| r.cost(s));
        num_object(
            out,
            &[
                ("inputTokens", rule.tokens(p.chars_sent)),
                ("cacheReadTokens", rule.tokens(sums.read_chars)),
                ("cacheWriteTokens", rule.tokens(sums.write_chars)),
                ("cacheReadChars", sums.read_chars as f64),
                ("cacheWriteChars", sums.write_chars as f64),
                ("cost", rule.cost(sums)),
                ("costVsNone", replay.vs_none(p, cost)),
            ],
        );
    }
    if let Some(g) = &p.gate {
        gate(out, g);
    }
    if renders {
        field(out, "renders");
        list(out, &p.renders, |out, r| render(out, replay, p, r));
    }
    out.push(b'}');
}

/// A gated policy's settings and decisions.
fn gate(out: &mut Vec<u8>, g: &super::GateTotals) {
    use super::gate::Reason;
    field(out, "gate");
    out.push(b'{');
    let holds = g.count(Reason::Waits);
    let applies: u64 = g.counts.iter().sum::<u64>() - holds;
    // The settings as the gate writes them (`horizon`, `budget`).
    if let crate::json::Json::Obj(entries) = g.settings.to_json() {
        for (key, value) in &entries {
            field(out, &String::from_utf8_lossy(key));
            value.write_json(out);
        }
    }
    nums(out, &[("applies", applies as f64), ("holds", holds as f64)]);
    field(out, "reasons");
    let reasons: Vec<(&str, f64)> = Reason::ALL
        .iter()
        .map(|&r| (r.name(), g.count(r) as f64))
        .collect();
    num_object(out, &reasons);
    out.push(b'}');
}

/// A policy's flush-gated invariant.
fn invariant(out: &mut Vec<u8>, p: &PolicyReplay) {
    field(out, "invariant");
    out.push(b'{');
    field(out, "flushGated");
    flag(out, p.policy.flush_gated());
    nums(
        out,
        &[
            ("checked", p.checked as f64),
            ("broken", p.violation_count as f64),
        ],
    );
    field(out, "violations");
    list(out, &p.violations, |out, v| {
        out.push(b'{');
        nums(
            out,
            &[
                ("render", v.render as f64),
                ("outputIndex", v.output_index as f64),
            ],
        );
        field(out, "inputIndex");
        opt_num(out, v.input_index.map(|i| i as f64));
        field(out, "phase");
        string(out, v.phase.name());
        field(out, "detail");
        string(out, &v.detail);
        out.push(b'}');
    });
    out.push(b'}');
}

/// One render's row.
fn render(out: &mut Vec<u8>, replay: &Replay, p: &PolicyReplay, r: &super::Render) {
    let call = &replay.calls[r.call];
    out.push(b'{');
    nums(
        out,
        &[
            ("charsBefore", r.chars_before as f64),
            ("charsAfter", r.chars_after as f64),
            ("messagesBefore", r.messages_before as f64),
            ("messagesAfter", r.messages_after as f64),
            ("breakIndex", r.break_index as f64),
        ],
    );
    field(out, "prefixHash");
    hex(out, r.prefix_hash);
    field(out, "outputHash");
    hex(out, r.output_hash);
    field(out, "entryId");
    string(out, &call.entry_id);
    field(out, "leafId");
    opt_string(out, call.leaf_id.as_deref());
    field(out, "timestamp");
    opt_num(out, call.time);
    field(out, "stats");
    stats(
        out,
        &r.stats,
        p.policy.dialect() == crate::dialect::Dialect::V2_9,
    );
    if let Some(pr) = &r.priced {
        priced(out, pr);
    }
    if let Some(reason) = r.gate {
        field(out, "gate");
        string(out, reason.sent());
        field(out, "gateReason");
        string(out, reason.name());
    }
    if let Some(m) = &r.messages {
        field(out, "messages");
        out.extend_from_slice(m);
    }
    out.push(b'}');
}

/// One call's bill, class and cause (and the prefix rule's characters
/// under that model).
fn priced(out: &mut Vec<u8>, pr: &super::Priced) {
    nums(
        out,
        &[
            ("inputTokens", pr.bill.input_tokens),
            ("cacheReadTokens", pr.bill.cache_read_tokens),
            ("cacheWriteTokens", pr.bill.cache_write_tokens),
            ("costUsd", pr.bill.cost_usd),
            ("cacheReadMessages", f64::from(pr.read_messages)),
        ],
    );
    field(out, "callClass");
    string(out, pr.class.name());
    field(out, "rewriteCause");
    match &pr.cause {
        None => out.extend_from_slice(b"null"),
        Some(c) => {
            out.push(b'{');
            field(out, "cause");
            string(out, c.cause.name());
            field(out, "flush");
            flag(out, c.flush);
            field(out, "gapSeconds");
            opt_num(out, c.gap_ms.map(|g| g / 1000.0));
            out.push(b'}');
        }
    }
    if let Some(c) = &pr.prefix {
        field(out, "prefix");
        out.push(b'{');
        nums(
            out,
            &[
                ("cacheReadChars", c.read_chars as f64),
                ("cacheWriteChars", c.write_chars as f64),
            ],
        );
        field(out, "cacheExpired");
        flag(out, c.expired);
        out.push(b'}');
    }
}

/// The replay as one JSON object (`renders`: include each policy's
/// per-render rows).
pub fn to_json(replay: &Replay, renders: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let out = &mut out;
    out.push(b'{');
    nums(out, &[("modelCalls", replay.calls.len() as f64)]);
    field(out, "skippedLines");
    skipped_lines(out, &replay.skipped_lines);
    if let super::CacheModel::Prefix(m) = &replay.cache_model {
        field(out, "prefix");
        num_object(
            out,
            &[
                ("charsPerToken", m.chars_per_token),
                ("inputPrice", m.input_price),
                ("cacheWriteMultiplier", m.cache_write_multiplier),
                ("cacheReadMultiplier", m.cache_read_multiplier),
                ("cacheTtlSeconds", m.cache_ttl_ms / 1000.0),
            ],
        );
    }
    field(out, "cacheModel");
    string(out, replay.cache_model.name());
    field(out, "retention");
    string(
        out,
        if replay.long_retention {
            "long"
        } else {
            "short"
        },
    );
    field(out, "models");
    list(out, &replay.models, |out, (key, name, known)| {
        let f = replay.calibration.factor(*key);
        out.push(b'{');
        field(out, "model");
        string(out, name);
        field(out, "inCatalog");
        flag(out, *known);
        nums(out, &[("charsPerToken", 1.0 / f.tokens_per_char)]);
        field(out, "preambleTokens");
        opt_num(out, f.preamble_tokens);
        field(out, "calibration");
        string(out, f.source);
        nums(out, &[("calls", f.calls as f64)]);
        field(out, "fitError");
        opt_num(out, f.fit_error);
        out.push(b'}');
    });
    let rc = &replay.reconciliation;
    field(out, "recorded");
    out.push(b'{');
    field(out, "policy");
    string(out, rc.recorded_policy);
    field(out, "status");
    string(out, rc.status);
    field(out, "reason");
    opt_string(out, rc.reason.as_deref());
    let error = if rc.recorded_cost_usd > 0.0 {
        rc.predicted_cost_usd / rc.recorded_cost_usd - 1.0
    } else {
        f64::NAN
    };
    nums(
        out,
        &[
            ("calls", rc.calls as f64),
            ("classMatch", rc.class_match),
            ("recordedCostUsd", rc.recorded_cost_usd),
            ("predictedCostUsd", rc.predicted_cost_usd),
            ("costError", error),
        ],
    );
    out.push(b'}');
    field(out, "policies");
    list(out, &replay.policies, |out, p| {
        policy(out, replay, p, renders)
    });
    out.push(b'}');
    std::mem::take(out)
}
