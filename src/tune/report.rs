//! A tune as JSON text, the wire format the JS API parses and the CLI's
//! `--json` prints. Field names are defined here once:
//!
//! ```text
//! { files, modelCalls, held,
//!   today:       { pruningOn, costUsd },
//!   current:     { release, contextPrune, gate, costUsd, charsSent,
//!                  thinkingDropped: { blocks, tokens, calls },
//!                  thinkingBoundary: null | { rule, reason } },
//!   recommended: { release, contextPrune, gate, costUsd, charsSent,
//!                  thinkingDropped, saving,
//!                  savingSpread: { min, median, max },
//!                  ties: { count, withinUsd, free: [part] },
//!                  changes: [{ parts: [part], costUsd, savingUsd }],
//!                  paste: null | { settings: { contextPrune?,
//!                                              condenseNative? },
//!                                  release, turnsPruning } },
//!   ranked: [{ release, contextPrune, gate, costUsd, charsSent,
//!              thinkingDropped, rewrites,
//!              front, tied, current, perFileCostUsd: [..],
//!              causes: [{ cause, calls, costUsd }] }],
//!   perFile: [{ file, modelCalls, noneUsd, currentUsd, todayUsd,
//!               recommendedUsd, skippedLines: { count, lines } }],
//!   errors: [{ file, error: { code, message, line } }],
//!   heldOut: null | { perFile: [{ file, chosen: { release, contextPrune,
//!                       gate }, saving, costUsd, todayUsd,
//!                       todayTied }],
//!                     saving, savingUsd, todayUsd, withinUsd,
//!                     savingSpread: { min, median, max }, filesSaving,
//!                     keepYours: null | 'not above zero'
//!                                | 'too small to tell' } }
//! ```
//!
//! `contextPrune` is the block as pi's settings.json spells it (null for
//! release `none`), `gate` the `condenseNative.gate` settings beside it
//! (null: no gate; each configuration has a gated twin). `today` is what
//! the user pays now: their settings when pi-condense's master switch
//! (`contextPrune.enabled`) is on, no pruning when it is off; savings are
//! fractions of today's USD. Totals are order-free sums, so any order of
//! the same files gives the same figures. `recommended` is the choice of
//! the configurations tied with the cheapest (`ranked[].tied`, within
//! `ties.withinUsd`); `ties.free` names the parts that do not matter on
//! these sessions; `changes` walks from today to it, a part at a time
//! (`enabled` is the master switch; `release`, the `contextPrune` sections
//! and `gate` the grid's parts), each step's saving in USD over all files;
//! `paste.settings` is what to set in pi's settings.json (only the keys
//! that change; `condenseNative.gate` turned on when the gate is part of
//! it), `paste.release` the release to run when it is not yours,
//! `paste.turnsPruning` 'on' or 'off' when it flips the master switch.
//! `heldOut` (two files or more) leaves each file out in turn: `chosen` is
//! the configuration chosen the same way on the others, `saving` its
//! saving on this file, `todayTied` whether the others tie today's
//! configuration with their cheapest (they cannot tell it apart, so the
//! check is too small to tell); the totals are over the files, `withinUsd` the
//! tie tolerance of today's USD, `keepYours` says why the check keeps
//! yours (null: it does not).
//! `files`, `perFile`, `perFileCostUsd` and `heldOut.perFile` hold the
//! files tuned, in order;
//! a file that could not be read, parsed or replayed is left out and listed
//! in `errors` (its message names no file; `line` is null when none).
//! `current.thinkingBoundary` says which 2.4.3 boundary rule the current
//! configuration rendered with (null for a release that reads none).

use super::choose::{fraction, tolerance};
use super::{Candidate, FileRun, Fold, HeldOut, Keep, Paste, Tuned, HELD};
use crate::json::members::{null_or, object, Members};
use crate::json::text::write_str;
use crate::json::write_json_number;

/// `release`, `contextPrune` and `gate`: what to paste.
fn settings(o: &mut Members, c: &Candidate) {
    o.str("release", c.release)
        .raw("contextPrune", |out| c.block.write_json(out))
        .raw("gate", |out| {
            null_or(out, c.gate, |out, g| g.to_json().write_json(out))
        });
}

fn head(o: &mut Members, t: &Tuned, c: usize) {
    settings(o, &t.candidates[c]);
    o.num("costUsd", t.choice.cost[c])
        .num("charsSent", t.choice.chars[c] as f64)
        .object("thinkingDropped", |o| {
            let runs = &t.outcomes[c];
            o.nums(&[
                (
                    "blocks",
                    runs.iter().map(|r| r.thinking_dropped.blocks).sum::<u64>() as f64,
                ),
                (
                    "tokens",
                    runs.iter().map(|r| r.thinking_dropped.tokens).sum::<f64>(),
                ),
                (
                    "calls",
                    runs.iter().map(|r| r.thinking_dropped.calls).sum::<u64>() as f64,
                ),
            ]);
        });
}

/// `{min, median, max}` of fractions (the upper median of an even count).
fn spread(o: &mut Members, mut v: Vec<f64>) {
    v.sort_by(f64::total_cmp);
    let at = |i: usize| v.get(i).copied().unwrap_or(f64::NAN);
    o.object("savingSpread", |o| {
        o.num("min", at(0))
            .num("median", at(v.len() / 2))
            .num("max", v.last().copied().unwrap_or(f64::NAN));
    });
}

/// What to set in pi's settings.json.
fn paste(out: &mut Vec<u8>, p: &Paste) {
    object(out, |o| {
        o.object("settings", |o| {
            if !p.context_prune.is_empty() {
                o.object("contextPrune", |o| {
                    for (k, v) in &p.context_prune {
                        o.raw(&String::from_utf8_lossy(k), |out| v.write_json(out));
                    }
                });
            }
            if let Some(g) = p.gate {
                o.object("condenseNative", |o| {
                    o.object("gate", |o| {
                        o.flag("enabled", true);
                        if let crate::json::Json::Obj(entries) = g.to_json() {
                            for (k, v) in &entries {
                                o.raw(&String::from_utf8_lossy(k), |out| v.write_json(out));
                            }
                        }
                    });
                });
            }
        })
        .opt_str("release", p.release)
        .opt_str(
            "turnsPruning",
            p.switches.map(|on| if on { "on" } else { "off" }),
        );
    })
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
    let ex = &t.explained;
    let today_usd = ch.cost[ch.today];
    object(&mut out, |o| {
        files(o, "files", t, 0..t.files.len());
        o.num("modelCalls", t.model_calls as f64)
            .array("held", HELD, write_str)
            .object("today", |o| {
                o.flag("pruningOn", t.pruning_on).num("costUsd", today_usd);
            })
            .object("current", |o| {
                head(o, t, t.current);
                o.raw("thinkingBoundary", |out| {
                    crate::replay::report::boundary(out, t.boundary.as_ref())
                });
            })
            .object("recommended", |o| {
                head(o, t, ch.recommended);
                o.num(
                    "saving",
                    fraction(today_usd - ch.cost[ch.recommended], today_usd),
                );
                spread(o, ch.savings.clone());
                o.object("ties", |o| {
                    o.num("count", ch.tied as f64)
                        .num("withinUsd", tolerance(ch.cost[ch.ranked[0]]))
                        .array("free", &ex.free, |out, p| write_str(out, p));
                })
                .array("changes", &ex.steps, |out, s| {
                    object(out, |o| {
                        o.array("parts", &s.parts, |out, p| write_str(out, p))
                            .num("costUsd", ch.cost[s.to])
                            .num("savingUsd", s.saving_usd);
                    })
                })
                .raw("paste", |out| null_or(out, ex.paste.as_ref(), paste));
            })
            .array("ranked", ch.ranked.iter().enumerate(), |out, (r, &c)| {
                object(out, |o| {
                    let outcomes = &t.outcomes[c];
                    head(o, t, c);
                    o.num(
                        "rewrites",
                        outcomes.iter().map(|o| o.rewrites).sum::<u64>() as f64,
                    )
                    .flag("front", ch.front[c])
                    .flag("tied", r < ch.tied)
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
                    .num("todayUsd", t.outcomes[ch.today][f].cost_usd)
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
            null_or(out, ch.held_out.as_ref(), |out, h| held_out(out, t, h))
        });
    });
    out
}

/// The leave-one-file-out check.
fn held_out(out: &mut Vec<u8>, t: &Tuned, h: &HeldOut) {
    object(out, |o| {
        o.array("perFile", h.folds.iter().enumerate(), |out, (f, fold)| {
            object(out, |o| {
                o.str("file", &t.files[f])
                    .object("chosen", |o| settings(o, &t.candidates[fold.chosen]))
                    .num("saving", fold.saving())
                    .num("costUsd", fold.cost_usd)
                    .num("todayUsd", fold.today_usd)
                    .flag("todayTied", fold.today_tied);
            })
        })
        .num("saving", h.saving())
        .num("savingUsd", h.saving_usd)
        .num("todayUsd", h.today_usd)
        .num("withinUsd", tolerance(h.today_usd));
        spread(o, h.folds.iter().map(Fold::saving).collect());
        o.num(
            "filesSaving",
            h.folds.iter().filter(|f| f.saving() > 0.0).count() as f64,
        )
        .opt_str("keepYours", h.keep.map(Keep::name));
    })
}
