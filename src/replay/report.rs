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
//!                renders?: [{ charsBefore, charsAfter, messagesBefore,
//!                             messagesAfter, breakIndex, prefixHash,
//!                             outputHash, entryId, leafId, timestamp,
//!                             stats, inputTokens, cacheReadTokens,
//!                             cacheWriteTokens, costUsd, cacheReadMessages,
//!                             callClass, rewriteCause,
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
//! 'recorded' | 'config', reason }`.

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

fn stats(out: &mut Vec<u8>, s: &Stats, v29: bool) {
    out.push(b'{');
    let put = |out: &mut Vec<u8>, name: &str, v: u32| {
        field(out, name);
        num(out, f64::from(v));
    };
    put(out, "stubbed", s.stubbed);
    put(out, "purgedArgs", s.purged_args);
    put(out, "chainDropped", s.chain_dropped);
    put(out, "chainInserted", s.chain_inserted);
    put(out, "finalThinkingStripped", s.final_thinking_stripped);
    if v29 {
        put(out, "orphansSwept", s.orphans_swept);
    } else {
        put(out, "thinkingStripped", s.thinking_stripped);
    }
    out.push(b'}');
}

/// `{count, lines}`: lines pi skipped, and the first line numbers.
pub fn skipped_lines(out: &mut Vec<u8>, (count, lines): &(usize, Vec<u32>)) {
    out.push(b'{');
    field(out, "count");
    num(out, *count as f64);
    field(out, "lines");
    out.push(b'[');
    for (i, n) in lines.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        num(out, f64::from(*n));
    }
    out.extend_from_slice(b"]}");
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

fn hex(out: &mut Vec<u8>, h: u64) {
    out.extend_from_slice(format!("\"{h:016x}\"").as_bytes());
}

fn flag(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

fn opt_num(out: &mut Vec<u8>, v: Option<f64>) {
    match v {
        Some(v) => num(out, v),
        None => out.extend_from_slice(b"null"),
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
    field(out, "charsSent");
    num(out, p.chars_sent as f64);
    bill(out, replay, p);
    invariant(out, p);
    if let Some((rule, sums)) = &p.bill.prefix {
        field(out, "prefix");
        out.push(b'{');
        let cost = |q: &PolicyReplay| q.bill.prefix.as_ref().map_or(0.0, |(r, s)| r.cost(s));
        for (name, v) in [
            ("inputTokens", rule.tokens(p.chars_sent)),
            ("cacheReadTokens", rule.tokens(sums.read_chars)),
            ("cacheWriteTokens", rule.tokens(sums.write_chars)),
            ("cacheReadChars", sums.read_chars as f64),
            ("cacheWriteChars", sums.write_chars as f64),
            ("cost", rule.cost(sums)),
            ("costVsNone", replay.vs_none(p, cost)),
        ] {
            field(out, name);
            num(out, v);
        }
        out.push(b'}');
    }
    if renders {
        field(out, "renders");
        out.push(b'[');
        for (i, r) in p.renders.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            render(out, replay, p, r);
        }
        out.push(b']');
    }
    out.push(b'}');
}

/// A policy's USD, tokens, classes and causes.
fn bill(out: &mut Vec<u8>, replay: &Replay, p: &PolicyReplay) {
    let b = &p.bill;
    field(out, "costUsd");
    num(out, b.cost_usd);
    field(out, "costUsdVsNone");
    num(out, replay.vs_none(p, |q| q.bill.cost_usd));
    field(out, "inputTokens");
    num(out, b.input_tokens);
    field(out, "cacheReadTokens");
    num(out, b.cache_read_tokens);
    field(out, "cacheWriteTokens");
    num(out, b.cache_write_tokens);
    field(out, "warms");
    num(out, b.warms as f64);
    field(out, "warmCostUsd");
    num(out, b.warm_cost_usd);
    field(out, "callClasses");
    out.push(b'{');
    for (i, name) in ["first", "append", "partial", "rewrite", "expired"]
        .iter()
        .enumerate()
    {
        field(out, name);
        num(out, b.classes[i] as f64);
    }
    out.push(b'}');
    field(out, "causes");
    out.push(b'[');
    let mut causes = b.causes.clone();
    causes.sort_by(|x, y| y.cost_usd.total_cmp(&x.cost_usd));
    for (i, c) in causes.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'{');
        field(out, "cause");
        string(out, &c.label);
        field(out, "calls");
        num(out, c.calls as f64);
        field(out, "tokensWritten");
        num(out, c.tokens_written);
        field(out, "costUsd");
        num(out, c.cost_usd);
        out.push(b'}');
    }
    out.push(b']');
}

/// A policy's flush-gated invariant.
fn invariant(out: &mut Vec<u8>, p: &PolicyReplay) {
    field(out, "invariant");
    out.push(b'{');
    field(out, "flushGated");
    flag(out, p.policy.flush_gated());
    field(out, "checked");
    num(out, p.checked as f64);
    field(out, "broken");
    num(out, p.violation_count as f64);
    field(out, "violations");
    out.push(b'[');
    for (i, v) in p.violations.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'{');
        field(out, "render");
        num(out, v.render as f64);
        field(out, "outputIndex");
        num(out, v.output_index as f64);
        field(out, "inputIndex");
        opt_num(out, v.input_index.map(|i| i as f64));
        field(out, "phase");
        string(out, v.phase.name());
        field(out, "detail");
        string(out, &v.detail);
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
}

/// One render's row.
fn render(out: &mut Vec<u8>, replay: &Replay, p: &PolicyReplay, r: &super::Render) {
    let call = &replay.calls[r.call];
    out.push(b'{');
    for (name, v) in [
        ("charsBefore", r.chars_before),
        ("charsAfter", r.chars_after),
        ("messagesBefore", r.messages_before),
        ("messagesAfter", r.messages_after),
        ("breakIndex", r.break_index),
    ] {
        field(out, name);
        num(out, v as f64);
    }
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
    out.push(b'}');
}

/// One call's bill, class and cause (and the prefix rule's characters
/// under that model).
fn priced(out: &mut Vec<u8>, pr: &super::Priced) {
    for (name, v) in [
        ("inputTokens", pr.bill.input_tokens),
        ("cacheReadTokens", pr.bill.cache_read_tokens),
        ("cacheWriteTokens", pr.bill.cache_write_tokens),
        ("costUsd", pr.bill.cost_usd),
        ("cacheReadMessages", f64::from(pr.read_messages)),
    ] {
        field(out, name);
        num(out, v);
    }
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
        field(out, "cacheReadChars");
        num(out, c.read_chars as f64);
        field(out, "cacheWriteChars");
        num(out, c.write_chars as f64);
        field(out, "cacheExpired");
        flag(out, c.expired);
        out.push(b'}');
    }
}

/// The replay as one JSON object (`renders`: include each policy's
/// per-render rows).
pub fn to_json(replay: &Replay, renders: bool) -> Vec<u8> {
    let mut out = Vec::new();
    out.push(b'{');
    field(&mut out, "modelCalls");
    num(&mut out, replay.calls.len() as f64);
    field(&mut out, "skippedLines");
    skipped_lines(&mut out, &replay.skipped_lines);
    if let super::CacheModel::Prefix(m) = &replay.cache_model {
        field(&mut out, "prefix");
        out.push(b'{');
        for (name, v) in [
            ("charsPerToken", m.chars_per_token),
            ("inputPrice", m.input_price),
            ("cacheWriteMultiplier", m.cache_write_multiplier),
            ("cacheReadMultiplier", m.cache_read_multiplier),
            ("cacheTtlSeconds", m.cache_ttl_ms / 1000.0),
        ] {
            field(&mut out, name);
            num(&mut out, v);
        }
        out.push(b'}');
    }
    field(&mut out, "cacheModel");
    string(&mut out, replay.cache_model.name());
    field(&mut out, "retention");
    string(
        &mut out,
        if replay.long_retention {
            "long"
        } else {
            "short"
        },
    );
    field(&mut out, "models");
    out.push(b'[');
    for (i, (key, name, known)) in replay.models.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let f = replay.calibration.factor(*key);
        out.push(b'{');
        field(&mut out, "model");
        string(&mut out, name);
        field(&mut out, "inCatalog");
        out.extend_from_slice(if *known { b"true" } else { b"false" });
        field(&mut out, "charsPerToken");
        num(&mut out, 1.0 / f.tokens_per_char);
        field(&mut out, "preambleTokens");
        match f.preamble_tokens {
            Some(t) => num(&mut out, t),
            None => out.extend_from_slice(b"null"),
        }
        field(&mut out, "calibration");
        string(&mut out, f.source);
        field(&mut out, "calls");
        num(&mut out, f.calls as f64);
        field(&mut out, "fitError");
        match f.fit_error {
            Some(e) => num(&mut out, e),
            None => out.extend_from_slice(b"null"),
        }
        out.push(b'}');
    }
    out.push(b']');
    let rc = &replay.reconciliation;
    field(&mut out, "recorded");
    out.push(b'{');
    field(&mut out, "policy");
    string(&mut out, rc.recorded_policy);
    field(&mut out, "status");
    string(&mut out, rc.status);
    field(&mut out, "reason");
    opt_string(&mut out, rc.reason.as_deref());
    field(&mut out, "calls");
    num(&mut out, rc.calls as f64);
    field(&mut out, "classMatch");
    num(&mut out, rc.class_match);
    field(&mut out, "recordedCostUsd");
    num(&mut out, rc.recorded_cost_usd);
    field(&mut out, "predictedCostUsd");
    num(&mut out, rc.predicted_cost_usd);
    field(&mut out, "costError");
    num(
        &mut out,
        if rc.recorded_cost_usd > 0.0 {
            rc.predicted_cost_usd / rc.recorded_cost_usd - 1.0
        } else {
            f64::NAN
        },
    );
    out.push(b'}');
    field(&mut out, "policies");
    out.push(b'[');
    for (i, p) in replay.policies.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        policy(&mut out, replay, p, renders);
    }
    out.extend_from_slice(b"]}");
    out
}
