//! Differences the `engine_sync` target found between the kept engine and
//! the stateless path, minimized, kept as regression tests (`.ci/run` runs
//! `cargo test --release` here).

use condense_native::prune_bytes;
use condense_native::Config;
use condense_native::Dialect;
use condense_native::Engine;
use condense_native::Source;
use condense_native::State;
use condense_native_fuzz::engine_sync::Mirror;

/// A chain over messages 0-3 that drops and quotes tool result `c1`.
const CHAIN_STATE: &str = r#"{"records":{},"chains":[{"blockId":"b1","startUserTimestamp":1,"droppedToolCallIds":["c1"],"protectedToolCallIds":["c1"],"finalAssistantTimestamp":4,"toolRefs":["t1"],"compressedAt":5,"rangeSummaryText":"Wrote a."}]}"#;

fn chain_conversation(tool: &str, text: &str) -> Vec<String> {
    vec![
        r#"{"role":"user","content":[{"type":"text","text":"go"}],"timestamp":1}"#.into(),
        r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"write","arguments":{"path":"a"}}],"timestamp":2}"#.into(),
        format!(r#"{{"role":"toolResult","toolCallId":"c1","toolName":"{tool}","content":[{{"type":"text","text":"{text}"}}],"isError":false,"timestamp":3}}"#),
        r#"{"role":"assistant","content":[{"type":"text","text":"done"}],"timestamp":4}"#.into(),
    ]
}

/// `Memo::synthetic_text` (now `SyntheticCache::text`) keeps a chain's
/// synthetic text while the list of protected outputs it quotes is the same, and a quoted output is named by
/// its message index (`ProtectedOutput { input, stub }`). When that message
/// is re-sent with other content (`Engine::sync` from its index or before:
/// an edit the fingerprint sees, a branch switch), `Memo::truncate` keeps the
/// cached text, so the render quotes the old tool name and output. Found by
/// `engine_sync` (a branch switch re-sent message 10, a protected result);
/// reproduced through the JS API too: `PruneSession.render` of the messages
/// below, then of the same with message 2 changed, quotes `write` / `old
/// output` where `pruneMessages` quotes `edit` / `new output`, in both
/// dialects. Fixed: `Memo::truncate` drops the cached texts that quote a
/// message at `from` or after.
#[test]
fn a_re_sent_protected_output_is_quoted_afresh() {
    for dialect in [Dialect::V2_4, Dialect::V2_9] {
        let config = Config::from_json(
            br#"{"chainCompression":{"enabled":true,"stripFinalAssistantThinking":false}}"#,
            dialect,
        )
        .expect("config");
        let state = State::from_json(CHAIN_STATE.as_bytes(), dialect).expect("state");
        let mut mirror = Mirror::new(dialect, config, Some(state));
        mirror.sync(0, &chain_conversation("write", "old output"));
        mirror.compare();
        mirror.sync(2, &chain_conversation("edit", "new output")[2..]);
        mirror.compare();
    }
}

/// `Engine::set_boundary` keeps the old boundary when the new one compares
/// equal (`!=` on `Option<f64>`), so -0 after 0 stays 0, and the frontier of
/// the next render reports 0 where a stateless call with -0 reports -0. The
/// phases compare timestamps with `<=`, for which the two are the same, so
/// only the frontier's echo differed. Fixed: the boundary is compared bit
/// for bit.
#[test]
fn a_boundary_of_minus_zero_after_zero_is_reported_as_given() {
    let config = Config::from_json(
        br#"{"thinkingStrip":{"enabled":true,"keepLastTurns":1}}"#,
        Dialect::V2_4,
    )
    .expect("config");
    let messages =
        br#"[{"role":"assistant","content":[{"type":"thinking","thinking":"t"}],"timestamp":1}]"#;
    let mut engine = Engine::new(Dialect::V2_4);
    engine.set_config(config.clone());
    engine.sync(0, messages, Source::Stringify).expect("sync");
    engine.set_boundary(Some(0.0));
    engine.render().expect("render");
    engine.set_boundary(Some(-0.0));
    let kept = engine.render().expect("render");
    let stateless = prune_bytes(
        messages,
        &State::answers(Dialect::V2_4),
        &config,
        Some(-0.0),
        Dialect::V2_4,
    )
    .expect("prune");
    assert_eq!(
        kept.frontier
            .thinking_strip_boundary_timestamp
            .map(f64::to_bits),
        stateless
            .frontier
            .thinking_strip_boundary_timestamp
            .map(f64::to_bits),
        "kept {:?}, stateless {:?}",
        kept.frontier,
        stateless.frontier
    );
}
