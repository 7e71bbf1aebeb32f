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

use super::{Candidate, FileRun, Tuned, HELD};
use crate::json::members::{null_or, object, Members};
use crate::json::text::write_str;
use crate::json::write_json_number;

fn sum(outcomes: &[FileRun]) -> (f64, u64) {
    (
        outcomes.iter().map(|o| o.cost_usd).sum(),
        outcomes.iter().map(|o| o.chars_sent).sum(),
    )
}

/// `release`, `contextPrune` and `gate`: what to paste.
fn settings(o: &mut Members, c: &Candidate) {
    o.str("release", c.release)
        .raw("contextPrune", |out| c.block.write_json(out))
        .raw("gate", |out| {
            null_or(out, c.gate, |out, g| g.to_json().write_json(out))
        });
}

fn head(o: &mut Members, c: &Candidate, outcomes: &[FileRun]) {
    let (cost, chars) = sum(outcomes);
    settings(o, c);
    o.num("costUsd", cost).num("charsSent", chars as f64);
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn files(o: &mut Members, name: &str, t: &Tuned, indices: impl IntoIterator<Item = usize>) {
    o.array(name, indices, |out, f| write_str(out, &t.files[f]));
}

/// A configuration's USD per cause, summed over the files, most first.
fn causes(outcomes: &[FileRun]) -> Vec<(String, u64, f64)> {
    let mut causes: Vec<(String, u64, f64)> = Vec::new();
    for o in outcomes {
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
    causes
}

pub fn to_json(t: &Tuned) -> Vec<u8> {
    let mut out = Vec::new();
    let ch = &t.choice;
    object(&mut out, |o| {
        files(o, "files", t, 0..t.files.len());
        o.num("modelCalls", t.model_calls as f64)
            .array("held", HELD, write_str)
            .object("current", |o| {
                head(o, &t.candidates[t.current], &t.outcomes[t.current]);
                o.raw("thinkingBoundary", |out| {
                    crate::replay::report::boundary(out, t.boundary.as_ref())
                });
            })
            .object("recommended", |o| {
                let (rec, _) = sum(&t.outcomes[ch.recommended]);
                let (cur, _) = sum(&t.outcomes[t.current]);
                head(
                    o,
                    &t.candidates[ch.recommended],
                    &t.outcomes[ch.recommended],
                );
                o.num("saving", if cur > 0.0 { 1.0 - rec / cur } else { 0.0 })
                    .object("savingSpread", |o| {
                        let s = &ch.savings;
                        o.num("min", s.iter().copied().fold(f64::INFINITY, f64::min))
                            .num("median", median(s.clone()))
                            .num("max", s.iter().copied().fold(f64::NEG_INFINITY, f64::max));
                    });
            })
            .array("ranked", &ch.ranked, |out, &c| {
                object(out, |o| {
                    let outcomes = &t.outcomes[c];
                    head(o, &t.candidates[c], outcomes);
                    o.num(
                        "rewrites",
                        outcomes.iter().map(|o| o.rewrites).sum::<u64>() as f64,
                    )
                    .flag("front", ch.front[c])
                    .flag("current", c == t.current)
                    .array("perFileCostUsd", outcomes, |out, o| {
                        write_json_number(out, o.cost_usd)
                    })
                    .array(
                        "causes",
                        causes(outcomes),
                        |out, (label, calls, usd)| {
                            object(out, |o| {
                                o.str("cause", &label)
                                    .num("calls", calls as f64)
                                    .num("costUsd", usd);
                            })
                        },
                    );
                })
            });
        let none = t.candidates.iter().position(|c| c.release == "none");
        o.array("perFile", t.infos.iter().enumerate(), |out, (f, info)| {
            object(out, |o| {
                o.str("file", &info.file)
                    .num("modelCalls", info.model_calls as f64)
                    .num(
                        "noneUsd",
                        none.map_or(f64::NAN, |n| t.outcomes[n][f].cost_usd),
                    )
                    .num("currentUsd", t.outcomes[t.current][f].cost_usd)
                    .num("recommendedUsd", t.outcomes[ch.recommended][f].cost_usd)
                    .raw("skippedLines", |out| {
                        crate::replay::report::skipped_lines(out, &info.skipped_lines)
                    });
            })
        })
        .array("errors", &t.errors, |out, e| {
            object(out, |o| {
                o.str("file", &e.file).object("error", |o| {
                    o.str("code", e.error.code.as_str())
                        .str("message", &e.error.message)
                        .opt_num("line", e.error.line.map(|l| l as f64));
                });
            })
        })
        .raw("heldOut", |out| {
            null_or(out, ch.held_out.as_ref(), |out, h| {
                object(out, |o| {
                    files(o, "fitFiles", t, h.fit.iter().copied());
                    files(o, "testFiles", t, h.test.iter().copied());
                    o.object("chosen", |o| settings(o, &t.candidates[h.chosen]))
                        .num("savingFit", h.saving_fit)
                        .num("savingTest", h.saving_test)
                        .num("noise", h.noise)
                        .flag("beatsNoise", h.beats_noise);
                })
            })
        });
    });
    out
}
