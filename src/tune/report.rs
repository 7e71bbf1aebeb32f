//! A tune as JSON text, the wire format the JS API parses and the CLI's
//! `--json` prints. Field names are defined here once:
//!
//! ```text
//! { files, modelCalls, held,
//!   current:     { release, contextPrune, gate, costUsd, charsSent,
//!                  thinkingBoundary: null | { rule, reason } },
//!   recommended: { release, contextPrune, gate, costUsd, charsSent, saving,
//!                  savingSpread: { min, median, max } },
//!   ranked: [{ release, contextPrune, gate, costUsd, charsSent, rewrites,
//!              front, current, perFileCostUsd: [..],
//!              causes: [{ cause, calls, costUsd }] }],
//!   perFile: [{ file, modelCalls, noneUsd, currentUsd, recommendedUsd,
//!               skippedLines: { count, lines } }],
//!   errors: [{ file, error: { code, message, line } }],
//!   heldOut: null | { fitFiles, testFiles, chosen: { release,
//!              contextPrune, gate }, savingFit, savingTest, noise,
//!              beatsNoise } }
//! ```
//!
//! `contextPrune` is the block to paste into pi's settings.json (null for
//! release `none`), `gate` the `condenseNative.gate` settings beside it
//! (null: no gate; each configuration has a gated twin); savings are fractions of the current settings' USD.
//! `files`, `perFile` and `perFileCostUsd` hold the files tuned, in order;
//! a file that could not be read, parsed or replayed is left out and listed
//! in `errors` (its message names no file; `line` is null when none).
//! `current.thinkingBoundary` says which 2.4.3 boundary rule the current
//! configuration rendered with (null for a release that reads none).

use super::{Candidate, Outcome, Tuned, HELD};
// The writers shared with the replay's report, under short names.
use crate::json::text::{write_key as field, write_str as string};
use crate::json::write_json_number as num;
use crate::json::Json;

fn sum(outcomes: &[Outcome]) -> (f64, u64) {
    (
        outcomes.iter().map(|o| o.cost_usd).sum(),
        outcomes.iter().map(|o| o.chars_sent).sum(),
    )
}

/// `release`, `contextPrune` and `gate`: what to paste.
fn settings(out: &mut Vec<u8>, c: &Candidate) {
    field(out, "release");
    string(out, c.release);
    field(out, "contextPrune");
    match &c.block {
        Json::Null => out.extend_from_slice(b"null"),
        b => b.write_json(out),
    }
    field(out, "gate");
    match c.gate {
        None => out.extend_from_slice(b"null"),
        Some(g) => g.to_json().write_json(out),
    }
}

fn head(out: &mut Vec<u8>, c: &Candidate, outcomes: &[Outcome]) {
    let (cost, chars) = sum(outcomes);
    settings(out, c);
    field(out, "costUsd");
    num(out, cost);
    field(out, "charsSent");
    num(out, chars as f64);
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn files(out: &mut Vec<u8>, t: &Tuned, indices: &[usize]) {
    out.push(b'[');
    for (i, &f) in indices.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        string(out, &t.files[f]);
    }
    out.push(b']');
}

pub fn to_json(t: &Tuned) -> Vec<u8> {
    let mut out = vec![b'{'];
    field(&mut out, "files");
    files(&mut out, t, &(0..t.files.len()).collect::<Vec<_>>());
    field(&mut out, "modelCalls");
    num(&mut out, t.model_calls as f64);
    field(&mut out, "held");
    out.push(b'[');
    for (i, h) in HELD.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        string(&mut out, h);
    }
    out.push(b']');
    field(&mut out, "current");
    out.push(b'{');
    head(&mut out, &t.candidates[t.current], &t.outcomes[t.current]);
    field(&mut out, "thinkingBoundary");
    crate::replay::report::boundary(&mut out, t.boundary.as_ref());
    out.push(b'}');
    let ch = &t.choice;
    field(&mut out, "recommended");
    out.push(b'{');
    head(
        &mut out,
        &t.candidates[ch.recommended],
        &t.outcomes[ch.recommended],
    );
    let (rec, _) = sum(&t.outcomes[ch.recommended]);
    let (cur, _) = sum(&t.outcomes[t.current]);
    field(&mut out, "saving");
    num(&mut out, if cur > 0.0 { 1.0 - rec / cur } else { 0.0 });
    field(&mut out, "savingSpread");
    out.push(b'{');
    let min = ch.savings.iter().copied().fold(f64::INFINITY, f64::min);
    let max = ch.savings.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    field(&mut out, "min");
    num(&mut out, min);
    field(&mut out, "median");
    num(&mut out, median(ch.savings.clone()));
    field(&mut out, "max");
    num(&mut out, max);
    out.extend_from_slice(b"}}");
    field(&mut out, "ranked");
    out.push(b'[');
    for (i, &c) in ch.ranked.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'{');
        head(&mut out, &t.candidates[c], &t.outcomes[c]);
        field(&mut out, "rewrites");
        num(
            &mut out,
            t.outcomes[c].iter().map(|o| o.rewrites).sum::<u64>() as f64,
        );
        field(&mut out, "front");
        out.extend_from_slice(if ch.front[c] { b"true" } else { b"false" });
        field(&mut out, "current");
        out.extend_from_slice(if c == t.current { b"true" } else { b"false" });
        field(&mut out, "perFileCostUsd");
        out.push(b'[');
        for (j, o) in t.outcomes[c].iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            num(&mut out, o.cost_usd);
        }
        out.push(b']');
        field(&mut out, "causes");
        out.push(b'[');
        let mut causes: Vec<(String, u64, f64)> = Vec::new();
        for o in &t.outcomes[c] {
            for (label, calls, usd) in &o.causes {
                match causes.iter_mut().find(|x| &x.0 == label) {
                    Some(x) => {
                        x.1 += calls;
                        x.2 += usd;
                    }
                    None => causes.push((label.clone(), *calls, *usd)),
                }
            }
        }
        causes.sort_by(|a, b| b.2.total_cmp(&a.2));
        for (j, (label, calls, usd)) in causes.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            out.push(b'{');
            field(&mut out, "cause");
            string(&mut out, label);
            field(&mut out, "calls");
            num(&mut out, *calls as f64);
            field(&mut out, "costUsd");
            num(&mut out, *usd);
            out.push(b'}');
        }
        out.extend_from_slice(b"]}");
    }
    out.push(b']');
    field(&mut out, "perFile");
    out.push(b'[');
    let none = t.candidates.iter().position(|c| c.release == "none");
    for (f, info) in t.infos.iter().enumerate() {
        if f > 0 {
            out.push(b',');
        }
        out.push(b'{');
        field(&mut out, "file");
        string(&mut out, &info.file);
        field(&mut out, "modelCalls");
        num(&mut out, info.model_calls as f64);
        field(&mut out, "noneUsd");
        num(
            &mut out,
            none.map_or(f64::NAN, |n| t.outcomes[n][f].cost_usd),
        );
        field(&mut out, "currentUsd");
        num(&mut out, t.outcomes[t.current][f].cost_usd);
        field(&mut out, "recommendedUsd");
        num(&mut out, t.outcomes[ch.recommended][f].cost_usd);
        field(&mut out, "skippedLines");
        crate::replay::report::skipped_lines(&mut out, &info.skipped_lines);
        out.push(b'}');
    }
    out.push(b']');
    field(&mut out, "errors");
    out.push(b'[');
    for (i, e) in t.errors.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'{');
        field(&mut out, "file");
        string(&mut out, &e.file);
        field(&mut out, "error");
        out.push(b'{');
        field(&mut out, "code");
        string(&mut out, e.error.code.as_str());
        field(&mut out, "message");
        string(&mut out, &e.error.message);
        field(&mut out, "line");
        match e.error.line {
            Some(l) => num(&mut out, l as f64),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b"}}");
    }
    out.push(b']');
    field(&mut out, "heldOut");
    match &ch.held_out {
        None => out.extend_from_slice(b"null"),
        Some(h) => {
            out.push(b'{');
            field(&mut out, "fitFiles");
            files(&mut out, t, &h.fit);
            field(&mut out, "testFiles");
            files(&mut out, t, &h.test);
            field(&mut out, "chosen");
            out.push(b'{');
            settings(&mut out, &t.candidates[h.chosen]);
            out.push(b'}');
            field(&mut out, "savingFit");
            num(&mut out, h.saving_fit);
            field(&mut out, "savingTest");
            num(&mut out, h.saving_test);
            field(&mut out, "noise");
            num(&mut out, h.noise);
            field(&mut out, "beatsNoise");
            out.extend_from_slice(if h.beats_noise { b"true" } else { b"false" });
            out.push(b'}');
        }
    }
    out.push(b'}');
    out
}
