//! Replaying a pi session file: every model call of the active branch
//! rendered as pi-condense would have rendered it, under several pruning
//! policies side by side, each call priced as its provider would bill it
//! (issue 15; the tune, `crate::tune`, runs the same walk over a grid of
//! configurations).
//!
//! A file is parsed and prepared once (`prepared.rs`): its model calls
//! (SESSIONS.md C.3: the assistant entry and the leaf its request saw),
//! what the file says of each (`calls.rs`: model, recorded usage, tools and
//! system, compactions, edits, branches and cache warms since the previous
//! call), and the characters-to-tokens factor per model
//! (`crate::cost::calibration`, fitted on a measure pass of the recorded
//! policy). Then each policy walks
//! the calls on its own kept engine (`walk.rs`; the state per call is
//! `timeline.rs`'s rebuild, the indexer's answers `indexer.rs`'s), one
//! engine's copy of the conversation alive at a time. Per render the walk
//! measures the output against the previous one (`digest.rs`: per-message
//! digests, the break index, `prefixHash` and `outputHash`, docs/REPLAY.md),
//! checks the flush-gated invariant (`invariant.rs`) and names the phases
//! behind what changed (`cause.rs`).
//!
//! One pricing path prices every call (`pricer.rs`) under the cache model
//! asked for, with the pieces of `crate::cost`: the provider's (the
//! default: the wire request kept up to date by `requests.rs`) or the
//! prefix rule (kept for comparison). Both give each call its tokens, USD,
//! class and cause, and a policy its sums; `result.rs` holds them and
//! `report.rs` writes them as JSON. The recorded policy's bill is compared
//! with the usage pi recorded (`reconcile.rs`).

mod calls;
mod cause;
mod compaction;
mod digest;
mod indexer;
mod invariant;
pub mod options;
mod parts;
mod policy;
mod prepared;
mod pricer;
pub mod progress;
mod reconcile;
pub(crate) mod report;
mod requests;
pub mod result;
mod settings;
mod timeline;
mod walk;
mod warmer;

pub use options::{Contexts, ReplayOptions};
pub use policy::Policy;
pub use prepared::Prepared;
pub use progress::Progress;
pub use report::to_json;
pub use result::{PolicyReplay, Replay};
pub use settings::Settings;

use crate::cost::bill::CacheModel;
use crate::cost::calibration::{self, Calibration};
use crate::error::{guarded, Result};
use crate::json::text::utf8_string;
use crate::sessionfile::SessionInput;
use reconcile::reconcile;

/// The replay of a session as the JS API asks for it: the options as JSON
/// text, the result as JSON text (`report::to_json`); a panic is an error.
pub fn report(
    input: &SessionInput<'_>,
    options_json: &str,
    progress: Option<&Progress>,
) -> Result<String> {
    guarded(
        "internal error while replaying the session (a bug: please report it with the file)",
        || {
            let options = ReplayOptions::from_json(options_json.as_bytes())?;
            let r = replay(&input.bytes()?, &options, progress)?;
            Ok(utf8_string(to_json(&r, options.keep_renders)))
        },
    )
}

/// Replays a session file's bytes.
pub fn replay(
    bytes: &[u8],
    options: &ReplayOptions,
    progress: Option<&Progress>,
) -> Result<Replay> {
    // `none` is always replayed: the other costs are given relative to it.
    let mut policies = options.policies.clone();
    if !policies.contains(&Policy::None) {
        policies.insert(0, Policy::None);
    }
    let settings = &options.settings;
    // The stages each policy's saving is split by (`parts.rs`), walked
    // unseen when not asked for, and the recorded policy, for the check
    // against the recorded usage.
    let mut runs = policies.clone();
    for &p in &policies {
        for stage in parts::stages(p, settings)? {
            if !runs.contains(&stage) {
                runs.push(stage);
            }
        }
    }
    if !runs.contains(&options.recorded_policy) {
        runs.push(options.recorded_policy);
    }
    let mut prepared = Prepared::new(bytes, options, progress, runs.len())?;
    prepared.hidden = runs[policies.len()..].to_vec();
    // The runs in families that one walk renders together (a release, its
    // gated twin, 2.4.3 without its strip), in order of first appearance.
    let mut families: Vec<Vec<Policy>> = Vec::new();
    for &p in &runs {
        match families.iter_mut().find(|f| f[0].family() == p.family()) {
            Some(f) => f.push(p),
            None => families.push(vec![p]),
        }
    }
    let mut results = Vec::with_capacity(runs.len());
    for (n, family) in families.iter().enumerate() {
        let members: Vec<(Policy, &Settings)> = family.iter().map(|&p| (p, settings)).collect();
        results.extend(prepared.run_family(&members, progress)?);
        // A dialect's rebuilt state goes once no later walk needs it.
        let dialect = family[0].dialect();
        if !families[n + 1..].iter().any(|f| f[0].dialect() == dialect) {
            prepared.timelines.release(dialect);
        }
    }
    // Back in the order asked for.
    results.sort_by_key(|r| runs.iter().position(|&q| q == r.policy));
    let find = |q: Policy| results.iter().find(|r| r.policy == q);
    let parts = policies
        .iter()
        .map(|&p| parts::parts(p, settings, find))
        .collect::<Result<Vec<_>>>()?;
    let recorded = results
        .iter()
        .find(|r| r.policy == options.recorded_policy)
        .map(|r| {
            // The prefix rule prices at a fixed size, and its check against
            // the bill is judged by the same fit on its JSON sizes.
            let (verdict, priced_at) = match options.cache_model {
                CacheModel::Provider => (
                    prepared.calibration.unreconciled.clone(),
                    calibration::DEFAULT_CHARS_PER_TOKEN,
                ),
                CacheModel::Prefix(rule) => (
                    Calibration::fit(&r.points, None).unreconciled,
                    rule.chars_per_token,
                ),
            };
            reconcile(
                r,
                &prepared.meta,
                &options.catalog,
                options.long_retention,
                &prepared.calibration,
                verdict.map(|why| format!("{why}; priced at {priced_at} chars a token")),
            )
        })
        .unwrap_or_default();
    results.retain(|r| policies.contains(&r.policy));
    for (r, parts) in results.iter_mut().zip(parts) {
        r.parts = parts;
    }
    let Prepared {
        infos,
        models,
        calibration,
        skipped,
        ..
    } = prepared;
    Ok(Replay {
        calls: infos,
        policies: results,
        cache_model: options.cache_model,
        long_retention: options.long_retention,
        cache_warming: options.cache_warming,
        calibration,
        models,
        reconciliation: recorded,
        skipped_lines: skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::digest::prefix_hash;
    use super::options::BoundaryMode;
    use super::*;
    use crate::cost::digest::Digest;
    use crate::engine::Engine;
    use crate::gate::live;
    use crate::record::Source;
    use crate::sessionfile::condense::state_json;
    use crate::sessionfile::{model_calls, path_to, Leaf, SessionFile};
    use crate::sessionfile::{CondenseState, ContextView};
    use crate::state::State;

    /// The context at call `call` of a session file (its messages' JSON
    /// texts) and, for a pruning policy, a new engine holding them with the
    /// state of a fresh rebuild.
    fn engine_at(
        bytes: &[u8],
        call: usize,
        policy: Policy,
        settings: &Settings,
    ) -> (Vec<Vec<u8>>, Option<Engine>) {
        let file = SessionFile::parse(bytes).unwrap();
        let path = path_to(&file, &Leaf::Active).unwrap();
        let c = model_calls(&file, &path.entries)[call];
        let mut view = ContextView::new(&file, &path.entries);
        let mut state = CondenseState::new(policy.dialect());
        let mut texts: Vec<Vec<u8>> = Vec::new();
        if let Some(leaf) = c.leaf {
            view.seek(leaf).unwrap();
            for &e in &path.entries[..=leaf] {
                state.apply(file.entry(e as usize)).unwrap();
            }
            texts = view
                .messages()
                .iter()
                .map(|&id| view.message(id).json.to_vec())
                .collect();
        }
        let engine = policy.config(settings).unwrap().map(|config| {
            let mut engine = Engine::new(policy.dialect());
            engine.set_config(config);
            engine.set_state(State::from_json(&state_json(&state), policy.dialect()).unwrap());
            if policy.uses_boundary() {
                engine.set_boundary(state.thinking_boundary());
            }
            engine.sync(0, &json_array(&texts), Source::Bytes).unwrap();
            engine
        });
        (texts, engine)
    }

    /// The model calls of a session file's active branch.
    fn calls_of(bytes: &[u8]) -> usize {
        let file = SessionFile::parse(bytes).unwrap();
        let path = path_to(&file, &Leaf::Active).unwrap();
        model_calls(&file, &path.entries).len()
    }

    fn json_array(texts: &[Vec<u8>]) -> Vec<u8> {
        let mut array = b"[".to_vec();
        array.extend_from_slice(&texts.join(&b","[..]));
        array.push(b']');
        array
    }

    /// The output hash of a render made from scratch: a fresh context view
    /// at the call's leaf, the state object of a fresh rebuild, a new engine.
    fn fresh_output_hash(bytes: &[u8], call: usize, policy: Policy, settings: &Settings) -> u64 {
        let (mut texts, engine) = engine_at(bytes, call, policy, settings);
        if let Some(mut engine) = engine {
            let script = engine.render_script().unwrap();
            texts = script
                .slots()
                .iter()
                .map(|s| {
                    let mut out = Vec::new();
                    script.write_slot(s, &mut out);
                    out
                })
                .collect();
        }
        let digests: Vec<Digest> = texts.iter().map(|t| Digest::of(t)).collect();
        prefix_hash(&digests, &mut Vec::new())
    }

    /// pi's gate reads a slot's message from the engine's last render: the
    /// value is the message the render sends there (an input's, an edit's),
    /// found by its position or by search, and once the engine syncs
    /// again the last render is gone.
    #[test]
    fn the_gate_reads_the_engines_last_render() {
        use crate::cost::kept::MessageValues;
        use live::RenderedSlots;
        let bytes = include_bytes!("../../sample/session.jsonl");
        let settings = Settings::default();
        let calls = calls_of(bytes);
        let (texts, engine) = engine_at(bytes, calls - 1, Policy::Config, &settings);
        let mut engine = engine.unwrap();
        let rendered = engine.render().unwrap();
        assert!(rendered.pruned, "the sample's last call has edits");
        let release = rendered.order;
        assert!(release.iter().any(|&s| s < 0));
        let script = engine.last_rendered().unwrap();
        let values = RenderedSlots {
            script: &script,
            release: &release,
        };
        for (p, slot) in script.slots().iter().enumerate() {
            let mut text = Vec::new();
            script.write_slot(slot, &mut text);
            let want = crate::json::parse_value(&text).unwrap();
            assert_eq!(
                values.value(&release[p], Some(p)).unwrap().to_json(),
                text,
                "slot {p}"
            );
            assert_eq!(
                values.value(&release[p], Some(p)).unwrap(),
                want,
                "slot {p}"
            );
            assert_eq!(values.value(&release[p], None).unwrap(), want, "slot {p}");
        }
        for (i, text) in texts.iter().enumerate() {
            let want = crate::json::parse_value(text).unwrap();
            assert_eq!(values.value(&(i as i32), None).unwrap(), want, "input {i}");
        }
        let past = values.value(&(texts.len() as i32), None).unwrap_err();
        assert!(
            past.message.contains("past the engine's messages"),
            "{}",
            past.message
        );
        let unknown = values.value(&i32::MIN, None).unwrap_err();
        assert!(
            unknown.message.contains("in neither"),
            "{}",
            unknown.message
        );
        drop(script);
        let last = texts.len() - 1;
        engine
            .sync(last, &json_array(&texts[last..]), Source::Bytes)
            .unwrap();
        assert!(engine.last_rendered().is_none());
    }

    /// The message the wire request converts for a slot (what the render
    /// shows of it) is the one the slot's text spells, at every call of
    /// the sample under both releases.
    #[test]
    fn a_slot_shows_the_message_its_text_spells() {
        use crate::cost::slot_value;
        let bytes = include_bytes!("../../sample/session.jsonl");
        let settings = Settings::default();
        let calls = calls_of(bytes);
        let mut checked = 0;
        for policy in [Policy::Config, Policy::V2_9] {
            for k in (0..calls).step_by(7) {
                let (_, engine) = engine_at(bytes, k, policy, &settings);
                let mut engine = engine.unwrap();
                let script = engine.render_script().unwrap();
                for slot in script.slots() {
                    let mut text = Vec::new();
                    script.write_slot(slot, &mut text);
                    let value = slot_value::shown(&script.shown(slot));
                    assert_eq!(value.to_json(), text, "{} call {k}", policy.name());
                    checked += 1;
                }
            }
        }
        assert!(checked > 500, "{checked} slots");
    }

    /// Every render of the incremental replay (engine kept, indexer answers
    /// per flush) equals a render made from scratch, for every policy.
    #[test]
    fn incremental_renders_equal_fresh_ones() {
        let purge_soon = crate::json::parse_value(
            br#"{"contextPrune":{"purgeErrors":{"enabled":true,"cooldownTurns":1,"minArgChars":10},"recoveryGraceTurns":1}}"#,
        )
        .unwrap();
        for (bytes, settings) in [
            (
                &include_bytes!("../../sample/session.jsonl")[..],
                Settings::default(),
            ),
            (
                &include_bytes!("../../__test__/fixtures/sessionfile/flushes.jsonl")[..],
                Settings::new(Some(purge_soon)).unwrap(),
            ),
        ] {
            // The fresh render reads the recorded frontier's boundary.
            let options = ReplayOptions {
                settings: settings.clone(),
                keep_renders: true,
                thinking_boundary: BoundaryMode::Recorded,
                ..ReplayOptions::default()
            };
            let r = replay(bytes, &options, None).unwrap();
            assert!(!r.calls.is_empty());
            for p in &r.policies {
                assert_eq!(p.renders.len(), r.calls.len());
                for (k, render) in p.renders.iter().enumerate() {
                    assert_eq!(
                        render.output_hash,
                        fresh_output_hash(bytes, k, p.policy, &settings),
                        "policy {} call {k}",
                        p.policy.name()
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod gate_tests {
    use super::*;
    use crate::gate::rule as gate;

    /// Behind the gate, through holds, drafts carried from call to call and
    /// adoptions, an applied render is the release's own and a held one
    /// starts with the previous request (that a request kept step by step
    /// equals one built afresh is `cost::kept`'s test).
    #[test]
    fn gated_renders_are_the_release_or_the_hold() {
        let bytes = &include_bytes!("../../sample/session.jsonl")[..];
        for horizon in [None, Some(0.0), Some(1e9)] {
            let options = ReplayOptions {
                policies: vec![
                    Policy::Config,
                    Policy::ConfigGate,
                    Policy::V2_9,
                    Policy::V2_9Gate,
                ],
                keep_renders: true,
                gate: gate::GateSettings {
                    horizon,
                    ..Default::default()
                },
                ..ReplayOptions::default()
            };
            let r = replay(bytes, &options, None).unwrap();
            let by = |p: Policy| r.policies.iter().find(|q| q.policy == p).unwrap();
            for (plain, gated) in [
                (Policy::Config, Policy::ConfigGate),
                (Policy::V2_9, Policy::V2_9Gate),
            ] {
                let (a, g) = (by(plain), by(gated));
                for (k, x) in g.renders.iter().enumerate() {
                    let reason = x.gate.expect("a gated render has a reason");
                    if reason.applies() {
                        assert_eq!(
                            x.output_hash, a.renders[k].output_hash,
                            "{horizon:?} call {k}"
                        );
                    } else {
                        let prev = &g.renders[k - 1];
                        assert_eq!(x.break_index, prev.messages_after, "{horizon:?} call {k}");
                        assert_eq!(x.prefix_hash, prev.output_hash, "{horizon:?} call {k}");
                    }
                }
                let holds = g.gate.as_ref().unwrap().count(gate::Reason::Waits);
                if horizon == Some(1e9) {
                    assert_eq!(holds, 0);
                    assert_eq!(g.bill.cost_usd, a.bill.cost_usd);
                } else {
                    // The sample holds: drafts are carried and adopted.
                    assert!(holds > 0, "{horizon:?}");
                }
            }
        }
    }
}
