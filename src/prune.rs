//! The stateless path: bytes in, pruned bytes and sizes out.

use crate::config::Config;
use crate::error::Result;
use crate::frontier::compute_thinking_boundary;
use crate::index::{
    parse_each, parse_tape, prepare, reuse, top_level_elements, Prepared, TextFlags,
};
use crate::jsjson::lone::{holds_stand_ins, with_infinity_mode, with_lone_mode};
use crate::output::{array_len, assemble, script, EditCache, Script, Source};
use crate::phases::{self, Stats};
use crate::state::State;
use crate::value::{Raw, Ty, Val, V};

#[derive(Debug, Clone, PartialEq)]
pub struct Frontier {
    pub thinking_strip_boundary_timestamp: Option<f64>,
    pub next_thinking_strip_boundary_timestamp: Option<f64>,
}

#[derive(Debug)]
pub struct Pruned {
    pub pruned: bool,
    pub before_chars: usize,
    pub after_chars: usize,
    /// The pruned JSON array; None when nothing changed or when delivered
    /// as a script.
    pub messages: Option<Vec<u8>>,
    /// The output as an edit script over the input (array callers).
    pub script: Option<Script>,
    pub frontier: Frontier,
    pub stats: Stats,
}

/// Runs the four phases over `input` (a JSON array of messages). The input
/// is never written; a private copy is parsed.
pub fn prune_bytes(
    input: &[u8],
    state: &State,
    config: &Config,
    boundary: Option<f64>,
) -> Result<Pruned> {
    prune_input(input, state, config, boundary, Deliver::Bytes)
}

/// Like `prune_bytes`, but the messages come back as an edit script over
/// the input's elements (for callers that hold the input as JS objects).
pub fn prune_to_script(
    input: &[u8],
    state: &State,
    config: &Config,
    boundary: Option<f64>,
) -> Result<Pruned> {
    prune_input(input, state, config, boundary, Deliver::Script)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Deliver {
    Bytes,
    Script,
}

fn prune_input(
    input: &[u8],
    state: &State,
    config: &Config,
    boundary: Option<f64>,
    deliver: Deliver,
) -> Result<Pruned> {
    prune_input_split_from(input, state, config, boundary, deliver, PARALLEL_MIN_BYTES)
}

fn prune_input_split_from(
    input: &[u8],
    state: &State,
    config: &Config,
    boundary: Option<f64>,
    deliver: Deliver,
    parallel_min_bytes: usize,
) -> Result<Pruned> {
    let Prepared {
        spans,
        mut scratch,
        mut flags,
        escaped_stand_in,
        splittable,
    } = prepare(input)?;
    if !flags.lone_surrogates && (state.flags.lone_surrogates || config.flags.lone_surrogates) {
        flags.stand_ins = escaped_stand_in || holds_stand_ins(input);
    }
    let lone = TextFlags::lone_mode(&[flags, state.flags, config.flags])?;
    let infinity = TextFlags::infinity_mode(&[flags])?;
    let run = |raws: Vec<Raw<'_>>| {
        with_lone_mode(lone, || {
            with_infinity_mode(infinity, || {
                prune_raws(input, &spans, raws, state, config, boundary, deliver)
            })
        })
    };
    // Large well-formed inputs: each message on its own, across cores. A
    // message that fails falls through to the whole-document parse, which
    // says where the input is wrong.
    if splittable && input.len() >= parallel_min_bytes {
        if let Some(tapes) = parse_each(&mut scratch, &spans) {
            let pruned = run(tapes.iter().map(|t| Raw::new(&t.0, 0)).collect());
            reuse::give_tapes(tapes);
            reuse::give_scratch(scratch);
            return pruned;
        }
        // simd-json parses in place: start again from a clean copy.
        let mut whole = input.to_vec();
        let tape = parse_tape(&mut whole, &spans)?;
        return run(top_level_elements(&tape.0)?);
    }
    let tape = parse_tape(&mut scratch, &spans)?;
    let pruned = run(top_level_elements(&tape.0)?);
    reuse::give_tape(tape);
    reuse::give_scratch(scratch);
    pruned
}

/// Inputs at least this large are parsed message by message on all cores.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

fn prune_raws(
    input: &[u8],
    spans: &[crate::index::scan::Span],
    raws: Vec<Raw<'_>>,
    state: &State,
    config: &Config,
    boundary: Option<f64>,
    deliver: Deliver,
) -> Result<Pruned> {
    let outcome = phases::run(
        raws.iter().map(|r| Val::Raw(*r)).collect(),
        state,
        config,
        boundary,
    )?;
    let frontier = frontier_of(raws.iter().map(|r| V::R(*r)), config, boundary);
    if !outcome.changed {
        return Ok(Pruned::unchanged(frontier, outcome.stats));
    }
    let src = Source::new(input, &raws, spans);
    let mut pruned = Pruned::unchanged(frontier, outcome.stats);
    pruned.pruned = true;
    match deliver {
        Deliver::Bytes => {
            let (bytes, sizes) = assemble(&src, &outcome.messages);
            pruned.before_chars = sizes.before;
            pruned.after_chars = sizes.after;
            pruned.messages = Some(bytes);
        }
        Deliver::Script => {
            let lens = src.input_lens();
            let script = script(&outcome.messages, &lens, &mut EditCache::default());
            pruned.before_chars = array_len(lens.len(), lens.iter().sum());
            pruned.after_chars = script.after;
            pruned.script = Some(script);
        }
    }
    Ok(pruned)
}

/// The frontier snapshot: the boundary used, and the one a flush would
/// compute now over these messages' numeric assistant timestamps.
pub fn frontier_of<'v, 't: 'v>(
    messages: impl Iterator<Item = V<'v, 't>>,
    config: &Config,
    boundary: Option<f64>,
) -> Frontier {
    Frontier {
        thinking_strip_boundary_timestamp: boundary,
        next_thinking_strip_boundary_timestamp: config.thinking.as_ref().and_then(|t| {
            compute_thinking_boundary(&assistant_timestamps(messages), t.keep_last_turns, boundary)
        }),
    }
}

/// Timestamps of assistant messages that are JS numbers, in order.
pub fn assistant_timestamps<'v, 't: 'v>(messages: impl Iterator<Item = V<'v, 't>>) -> Vec<f64> {
    messages
        .filter(|m| m.get("role").is_some_and(|r| r.is_str("assistant")))
        .filter_map(|m| match m.get("timestamp").map(|t| t.ty()) {
            Some(Ty::Num(n)) => Some(n),
            _ => None,
        })
        .collect()
}

impl Pruned {
    pub fn unchanged(frontier: Frontier, stats: Stats) -> Self {
        Pruned {
            pruned: false,
            before_chars: 0,
            after_chars: 0,
            messages: None,
            script: None,
            frontier,
            stats,
        }
    }
}

/// `JSON.stringify(JSON.parse(input)).length` for any JSON array.
pub fn size_of(input: &[u8]) -> Result<usize> {
    let Prepared {
        spans,
        mut scratch,
        flags,
        ..
    } = prepare(input)?;
    let lone = TextFlags::lone_mode(&[flags])?;
    let infinity = TextFlags::infinity_mode(&[flags])?;
    let tape = parse_tape(&mut scratch, &spans)?;
    let raws = top_level_elements(&tape.0)?;
    let size = with_lone_mode(lone, || {
        with_infinity_mode(infinity, || {
            crate::output::measure(&Source::new(input, &raws, &spans))
        })
    });
    drop(raws);
    reuse::give_tape(tape);
    reuse::give_scratch(scratch);
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_and_whole_document_parses_agree() {
        let config = Config::from_json(
            br#"{"thinkingStrip":{"enabled":true,"keepLastTurns":1},"errorPurge":{"enabled":true,"cooldownTurns":0,"minArgChars":0}}"#,
        )
        .unwrap();
        let state =
            State::from_json(br#"{"records":{"c1":{"toolName":"read","args":{}}}}"#).unwrap();
        let input = concat!(
            "[ {\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\"},",
            "{\"type\":\"toolCall\",\"id\":\"c2\",\"arguments\":{\"x\":1.0}}],\"timestamp\":1},\n",
            "{\"role\":\"toolResult\",\"toolCallId\":\"c1\",\"content\":[],\"timestamp\":2},",
            "{\"role\":\"toolResult\",\"toolCallId\":\"c2\",\"isError\":true,\"content\":[]},",
            "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"u\"}],\"timestamp\":3} ]"
        )
        .as_bytes();
        for deliver in [Deliver::Bytes, Deliver::Script] {
            let split = prune_input_split_from(input, &state, &config, None, deliver, 0).unwrap();
            let whole =
                prune_input_split_from(input, &state, &config, None, deliver, usize::MAX).unwrap();
            assert!(split.pruned);
            assert_eq!(split.messages, whole.messages);
            assert_eq!(
                (split.before_chars, split.after_chars),
                (whole.before_chars, whole.after_chars)
            );
            assert_eq!(split.stats, whole.stats);
            assert_eq!(
                split.script.map(|s| (s.order, s.fresh_edits)),
                whole.script.map(|s| (s.order, s.fresh_edits))
            );
        }
        // A message simd-json rejects falls back to the whole-document
        // parse, whose error names the place.
        let bad = br#"[{"role":"user","content":"a"},{"role":tru},3]"#;
        let e = prune_input_split_from(bad, &state, &config, None, Deliver::Bytes, 0).unwrap_err();
        assert_eq!(e.code, "ERR_CONDENSE_INVALID_JSON");
        assert!(e.message.contains("message 1"), "{}", e.message);
        // Trailing bytes after the array are not splittable, and rejected.
        let trailing = br#"[1,2] x"#;
        assert!(
            prune_input_split_from(trailing, &state, &config, None, Deliver::Bytes, 0).is_err()
        );
    }

    /// The parse memory a thread keeps between calls (`index::reuse`) does
    /// not carry anything over: each result equals the one of a fresh thread,
    /// whatever was parsed before, failed parses included.
    #[test]
    fn calls_after_other_calls_equal_calls_on_a_fresh_thread() {
        let config = r#"{"thinkingStrip":{"enabled":true,"keepLastTurns":0},"errorPurge":{"enabled":true,"cooldownTurns":0,"minArgChars":0}}"#;
        let state = r#"{"records":{"c1":{"toolName":"read","args":{}}}}"#;
        let long = format!(
            r#"[{{"role":"assistant","content":[{{"type":"thinking","thinking":"{}"}},{{"type":"toolCall","id":"c1","arguments":{{"p":"\u00e9\n"}}}}],"timestamp":1}},{{"role":"toolResult","toolCallId":"c1","content":[{{"type":"text","text":"{}"}}],"timestamp":2}},{{"role":"user","content":"next","timestamp":3}}]"#,
            "t".repeat(5000),
            "r\\\"".repeat(3000)
        );
        let inputs: Vec<Vec<u8>> = vec![
            long.clone().into_bytes(),
            br#"[{"role":"assistant","content":[{"type":"thinking","thinking":"x"}],"timestamp":1}]"#.to_vec(),
            br#"[{"role":"user","content":"a"},{"role":tru}]"#.to_vec(),
            br#"[1e400,{"role":"toolResult","toolCallId":"c1","content":"\ud800"}]"#.to_vec(),
            long.into_bytes(),
            b"[]".to_vec(),
        ];
        let all = |inputs: &[Vec<u8>]| {
            let state = State::from_json(state.as_bytes()).unwrap();
            let config = Config::from_json(config.as_bytes()).unwrap();
            let mut out = vec![];
            for input in inputs {
                for split in [0, usize::MAX] {
                    let r = prune_input_split_from(
                        input,
                        &state,
                        &config,
                        Some(2.5),
                        Deliver::Bytes,
                        split,
                    );
                    out.push(
                        r.map(|p| (p.messages, p.before_chars, p.after_chars, p.stats))
                            .map_err(|e| e.message),
                    );
                }
                out.push(
                    size_of(input)
                        .map_err(|e| e.message)
                        .map(|n| (None, n, 0, Default::default())),
                );
            }
            out
        };
        let in_turn = all(&inputs);
        for (k, input) in inputs.iter().enumerate() {
            let input = input.clone();
            let fresh = std::thread::spawn(move || all(&[input])).join().unwrap();
            assert_eq!(in_turn[k * 3..k * 3 + 3], fresh[..], "input {k}");
        }
        assert!(
            in_turn[0].as_ref().unwrap().0.is_some(),
            "the long input is pruned"
        );
        assert!(in_turn[6].is_err() && in_turn[9].is_ok());
    }

    /// JavaScript's `s.length`.
    fn units(s: &str) -> usize {
        s.encode_utf16().count()
    }

    fn run(input: &[u8], state: &str, config: &str, boundary: Option<f64>) -> Result<Pruned> {
        let state = State::from_json(state.as_bytes())?;
        let config = Config::from_json(config.as_bytes())?;
        prune_bytes(input, &state, &config, boundary)
    }

    fn text(p: &Pruned) -> String {
        String::from_utf8(p.messages.clone().unwrap()).unwrap()
    }

    const STUB_C1: &str = concat!(
        r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","#,
        r#""text":"[Summarized in pruner summary, ref `c1`. Use context_tree_query to retrieve full output.]"}],"#,
        r#""isError":false,"timestamp":2}"#
    );

    /// Spellings JSON.stringify never writes: whitespace, `\u0065`,
    /// `\u00e9`, `\/`, `1.0`, `1E21`, `-0`, `1E400`, 2^53+1, a duplicate key,
    /// integer-like keys out of order, and a key order the stub rewrites.
    const RAW: &str = concat!(
        "[ {\"role\":\"user\", \"content\":\"caf\\u00e9 \\/ok\",\"timestamp\":1.0},\n",
        " {\"timestamp\":2,\"role\":\"toolResult\",\"toolCallId\":\"c1\",\"toolName\":\"r\\u0065ad\",",
        "\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"isError\":false},\n",
        " {\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\",\"text\":\"bye\"}],",
        "\"usage\":{\"b\":1E21,\"a\":-0,\"2\":1.5E-7,\"10\":0.1,\"1\":9007199254740993,\"big\":1E400,\"01\":5e-324},",
        "\"timestamp\":3}\n]"
    );

    /// `JSON.stringify(JSON.parse(RAW))`, as node prints it.
    const RAW_AS_JS: &str = concat!(
        r#"[{"role":"user","content":"café /ok","timestamp":1},"#,
        r#"{"timestamp":2,"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false},"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"bye"}],"#,
        r#""usage":{"1":9007199254740992,"2":1.5e-7,"10":0.1,"b":1e+21,"a":0,"big":null,"01":5e-324},"timestamp":3}]"#
    );

    #[test]
    fn no_op_returns_no_buffer_and_the_zero_sentinel() {
        for config in [
            "{}",
            "null",
            r#"{"errorPurge":{"enabled":true,"cooldownTurns":0,"minArgChars":0},"thinkingStrip":{"enabled":true,"keepLastTurns":16}}"#,
        ] {
            let p = run(
                RAW.as_bytes(),
                r#"{"records":{"other":{"toolName":"read","args":{}}}}"#,
                config,
                None,
            )
            .unwrap();
            assert!(!p.pruned);
            assert!(p.messages.is_none());
            assert_eq!((p.before_chars, p.after_chars), (0, 0));
            assert_eq!(p.stats, Stats::default());
        }
        let p = run(b"[]", "{}", "{}", None).unwrap();
        assert!(!p.pruned && p.messages.is_none());
    }

    #[test]
    fn raw_spellings_are_measured_and_written_as_js_would() {
        assert_eq!(units(RAW), 378);
        assert_eq!(units(RAW_AS_JS), 345);
        let expected = concat!(
            r#"[{"role":"user","content":"café /ok","timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"[Summarized in pruner summary, ref `c1`. Use context_tree_query to retrieve full output.]"}],"isError":false,"timestamp":2},"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"bye"}],"#,
            r#""usage":{"1":9007199254740992,"2":1.5e-7,"10":0.1,"b":1e+21,"a":0,"big":null,"01":5e-324},"timestamp":3}]"#
        );
        assert!(expected.contains(STUB_C1));
        let input = RAW.as_bytes().to_vec();
        let p = run(
            &input,
            r#"{"records":{"c1":{"toolName":"read","args":{}}}}"#,
            "{}",
            None,
        )
        .unwrap();
        assert!(p.pruned);
        assert_eq!(text(&p), expected);
        assert_eq!((p.before_chars, p.after_chars), (345, 433));
        assert_eq!(p.after_chars, units(expected));
        assert_eq!(
            p.stats,
            Stats {
                stubbed: 1,
                ..Stats::default()
            }
        );
        // The caller's bytes are never written.
        assert_eq!(input, RAW.as_bytes());
        assert_eq!(size_of(RAW.as_bytes()).unwrap(), 345);
        assert_eq!(size_of(RAW_AS_JS.as_bytes()).unwrap(), 345);
    }

    #[test]
    fn lone_surrogates_survive_as_escapes() {
        let input = concat!(
            r#"[{"role":"user","content":"a\ud800b","timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"c\udc01","toolName":"t\udfff","content":[{"type":"text","text":"\ud83d"}],"isError":false,"timestamp":2}]"#
        );
        let expected = concat!(
            r#"[{"role":"user","content":"a\ud800b","timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"c\udc01","toolName":"t\udfff","content":[{"type":"text","#,
            r#""text":"[Summarized in pruner summary, ref `c\udc01`. Use context_tree_query to retrieve full output.]"}],"#,
            r#""isError":false,"timestamp":2}]"#
        );
        let bytes = input.as_bytes().to_vec();
        // The record's key holds the same lone surrogate as the id.
        let p = run(
            &bytes,
            r#"{"records":{"c\udc01":{"toolName":"read","args":{}}}}"#,
            "{}",
            None,
        )
        .unwrap();
        assert!(p.pruned);
        assert_eq!(text(&p), expected);
        // Each `\udxxx` escape is 6 units of the JSON text.
        assert_eq!((p.before_chars, p.after_chars), (192, 280));
        assert_eq!((units(input), units(expected)), (192, 280));
        assert_eq!(bytes, input.as_bytes());
        assert_eq!(size_of(input.as_bytes()).unwrap(), 192);
    }

    #[test]
    fn lone_surrogates_in_untouched_messages_are_lowercased() {
        let input = concat!(
            r#"[{"role":"user","content":"\uD800\uDBFF x \uDC00","timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[],"isError":false,"timestamp":2}]"#
        );
        let user = r#"{"role":"user","content":"\ud800\udbff x \udc00","timestamp":1}"#;
        let p = run(
            input.as_bytes(),
            r#"{"records":{"c1":{"toolName":"read","args":{}}}}"#,
            "{}",
            None,
        )
        .unwrap();
        let expected = format!("[{user},{STUB_C1}]");
        assert_eq!(text(&p), expected);
        let before = format!(
            "[{user},{}]",
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[],"isError":false,"timestamp":2}"#
        );
        assert_eq!(
            (p.before_chars, p.after_chars),
            (units(&before), units(&expected))
        );
        assert_eq!((p.before_chars, p.after_chars), (166, 280));
    }

    #[test]
    fn lone_surrogates_with_real_stand_in_characters_are_refused() {
        let input = "[\"\\ud800\",\"\u{10D800}\"]";
        let err = run(input.as_bytes(), "{}", "{}", None).unwrap_err();
        assert_eq!(err.code, "ERR_CONDENSE_LONE_SURROGATE");
        assert_eq!(size_of(input.as_bytes()).unwrap_err().code, err.code);
        // Either alone is fine: the stand-in range is ordinary text.
        assert_eq!(size_of("[\"\u{10D800}\"]".as_bytes()).unwrap(), 6);
        assert_eq!(size_of(br#"["\ud800"]"#).unwrap(), 10);
    }

    #[test]
    fn size_of_matches_json_stringify_length() {
        for (json, js_len) in [
            ("[]", 2),
            ("[ 1.0 , -0 ]", 5),
            (r#"["\u00e9"]"#, 5),
            (r#"[{"b":1,"2":2,"1":3,"b":4}]"#, 21),
            (r#"["\ud800"]"#, 10),
            ("[1E400,-1E400]", 11),
            (r#"["\/"]"#, 5),
            (r#"[{"a":1,"a":2}]"#, 9),
            ("[9007199254740993,1E21,123e-20,1e-7,0.1]", 42),
            (r#"[{"4294967294":1,"4294967295":2,"01":3,"0":4}]"#, 46),
            (r#"["\uD83D\uDE00"]"#, 6),
            (r#"["\u2028\u007f\u001F"]"#, 12),
            (RAW, 345),
        ] {
            assert_eq!(size_of(json.as_bytes()).unwrap(), js_len, "{json}");
        }
        assert_eq!(size_of(b"{}").unwrap_err().code, "ERR_CONDENSE_NOT_ARRAY");
        assert_eq!(
            size_of(b"[1,]").unwrap_err().code,
            "ERR_CONDENSE_INVALID_JSON"
        );
    }

    #[test]
    fn bad_top_level_and_null_messages_are_typed_errors() {
        for (input, code) in [
            ("{}", "ERR_CONDENSE_NOT_ARRAY"),
            ("null", "ERR_CONDENSE_NOT_ARRAY"),
            ("42", "ERR_CONDENSE_NOT_ARRAY"),
            ("[", "ERR_CONDENSE_INVALID_JSON"),
            ("[1,null]", "ERR_CONDENSE_INVALID_MESSAGE"),
        ] {
            let err = run(input.as_bytes(), "{}", "{}", None).unwrap_err();
            assert_eq!(err.code, code, "{input}: {err}");
        }
        // Numbers, strings and arrays as messages pass through untouched.
        let p = run(br#"[1,"s",[2]]"#, "{}", "{}", None).unwrap();
        assert!(!p.pruned);
    }

    #[test]
    fn frontier_uses_numeric_assistant_timestamps_of_the_input() {
        // Numeric assistant timestamps: 10, 20, 30, 40 ("25" and the user's
        // 26 do not count). (`1E400` is covered in `overflow_tests`.)
        let input = concat!(
            r#"[{"role":"assistant","content":[],"timestamp":10},{"role":"assistant","content":[],"timestamp":20},"#,
            r#"{"role":"assistant","content":[],"timestamp":"25"},{"role":"user","content":"u","timestamp":26},"#,
            r#"{"role":"assistant","content":[],"timestamp":30},{"role":"assistant","content":[],"timestamp":40}]"#
        );
        let keep =
            |k: &str| format!(r#"{{"thinkingStrip":{{"enabled":true,"keepLastTurns":{k}}}}}"#);
        let frontier = |config: &str, boundary: Option<f64>| {
            let p = run(input.as_bytes(), "{}", config, boundary).unwrap();
            assert!(!p.pruned);
            assert_eq!(p.frontier.thinking_strip_boundary_timestamp, boundary);
            p.frontier.next_thinking_strip_boundary_timestamp
        };
        assert_eq!(frontier(&keep("2"), None), Some(30.0));
        assert_eq!(frontier(&keep("2"), Some(25.0)), Some(30.0));
        assert_eq!(frontier(&keep("2"), Some(40.0)), Some(40.0));
        assert_eq!(frontier(&keep("1"), None), Some(40.0));
        assert_eq!(frontier(&keep("0"), Some(50.0)), Some(50.0));
        assert_eq!(frontier(&keep("\"3\""), None), Some(20.0));
        assert_eq!(frontier(&keep("4"), None), None);
        assert_eq!(frontier(&keep("10"), Some(7.0)), Some(7.0));
        // Absent or disabled strip: null.
        assert_eq!(frontier("{}", Some(5.0)), None);
        assert_eq!(
            frontier(
                r#"{"thinkingStrip":{"enabled":false,"keepLastTurns":1}}"#,
                Some(5.0)
            ),
            None
        );
        // A missing keepLastTurns gives NaN or undefined: null in JS.
        assert!(
            frontier(r#"{"thinkingStrip":{"enabled":true}}"#, Some(5.0)).is_none_or(f64::is_nan)
        );
        assert!(frontier(r#"{"thinkingStrip":{"enabled":true}}"#, None).is_none_or(f64::is_nan));
    }
}

#[cfg(test)]
mod overflow_tests {
    //! JSON.parse reads a number that overflows (`1E400`) as Infinity, and
    //! only JSON.stringify writes it as `null`. The reference's phases and
    //! frontier see Infinity.
    use super::*;

    fn run(input: &str, state: &str, config: &str, boundary: Option<f64>) -> Pruned {
        let state = State::from_json(state.as_bytes()).unwrap();
        let config = Config::from_json(config.as_bytes()).unwrap();
        prune_bytes(input.as_bytes(), &state, &config, boundary).unwrap()
    }

    #[test]
    fn infinity_timestamp_is_not_before_the_boundary_and_spill_bytes_print_infinity() {
        let input = concat!(
            r#"[{"role":"user","content":"u","timestamp":1},"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"a"}],"timestamp":1E400},"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"b"}],"timestamp":5},"#,
            r#"{"role":"toolResult","toolCallId":"s","toolName":"bash","content":[],"isError":false,"timestamp":6}]"#
        );
        // node: pure.pruneMessages(JSON.parse(input), ...) with boundary 100.
        let expected = concat!(
            r#"[{"role":"user","content":"u","timestamp":1},"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"a"}],"timestamp":null},"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"b"}],"timestamp":5},"#,
            r#"{"role":"toolResult","toolCallId":"s","toolName":"bash","content":[{"type":"text","text":"[Oversized output spilled to file — Infinity bytes.]\nTool: bash\nPreview (head):\n\nFull output — read this file (offset/limit supported): /p\nOr use context_tree_query with ref `s`."}],"isError":false,"timestamp":6}]"#
        );
        let p = run(
            input,
            r#"{"records":{"s":{"toolName":"bash","args":{},"spillPath":"/p","spillBytes":1E400}}}"#,
            r#"{"thinkingStrip":{"enabled":true,"keepLastTurns":1}}"#,
            Some(100.0),
        );
        assert_eq!(String::from_utf8(p.messages.unwrap()).unwrap(), expected);
        assert_eq!((p.before_chars, p.after_chars), (331, 539));
        assert_eq!(p.stats.thinking_stripped, 0);
    }

    #[test]
    fn infinity_config_values_keep_their_meaning() {
        // recoveryGraceTurns Infinity: every context_tree_query result is in
        // grace; keepLastTurns Infinity: n <= K, nothing stripped. The
        // reference returns pruned: false.
        let input = concat!(
            r#"[{"role":"user","content":"u1","timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"q1","toolName":"context_tree_query","content":[],"isError":false,"timestamp":2},"#,
            r#"{"role":"user","content":"u2","timestamp":3},"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t"}],"timestamp":4},"#,
            r#"{"role":"assistant","content":[],"timestamp":5}]"#
        );
        let p = run(
            input,
            r#"{"records":{"q1":{"toolName":"context_tree_query","args":{}}}}"#,
            r#"{"recoveryGraceTurns":1E400,"thinkingStrip":{"enabled":true,"keepLastTurns":1E400}}"#,
            None,
        );
        assert!(!p.pruned, "stats: {:?}", p.stats);
        assert_eq!(p.frontier.next_thinking_strip_boundary_timestamp, None);
    }

    #[test]
    fn infinity_assistant_timestamps_count_for_the_frontier() {
        // Numeric assistant timestamps 10, 20, 30, Infinity; K = 2 picks 30.
        let input = concat!(
            r#"[{"role":"assistant","content":[],"timestamp":10},{"role":"assistant","content":[],"timestamp":20},"#,
            r#"{"role":"assistant","content":[],"timestamp":30},{"role":"assistant","content":[],"timestamp":1E400}]"#
        );
        let config =
            |k: &str| format!(r#"{{"thinkingStrip":{{"enabled":true,"keepLastTurns":{k}}}}}"#);
        let next = |k: &str| {
            run(input, "{}", &config(k), None)
                .frontier
                .next_thinking_strip_boundary_timestamp
        };
        assert_eq!(next("2"), Some(30.0));
        assert_eq!(next("1"), Some(f64::INFINITY));
    }

    #[test]
    fn infinity_min_arg_chars_and_start_timestamp() {
        // minArgChars Infinity: no args are long enough; pruned: false.
        let p = run(
            r#"[{"role":"assistant","content":[{"type":"toolCall","id":"a","arguments":{}}],"timestamp":1},{"role":"toolResult","toolCallId":"a","content":[],"isError":true,"timestamp":2}]"#,
            "{}",
            r#"{"errorPurge":{"enabled":true,"cooldownTurns":0,"minArgChars":1E400}}"#,
            None,
        );
        assert!(!p.pruned, "stats: {:?}", p.stats);
        // startUserTimestamp Infinity matches the user at Infinity only, not
        // the one whose timestamp is null.
        let p = run(
            r#"[{"role":"user","content":"a","timestamp":1E400},{"role":"user","content":"b","timestamp":null}]"#,
            r#"{"chains":[{"blockId":"b1","startUserTimestamp":1E400,"droppedToolCallIds":[],"toolRefs":[],"compressedAt":5}]}"#,
            r#"{"chainCompression":{"enabled":true}}"#,
            None,
        );
        assert_eq!(
            String::from_utf8(p.messages.unwrap()).unwrap(),
            concat!(
                r#"[{"role":"user","content":"a","timestamp":null},"#,
                r#"{"role":"user","content":[{"type":"text","text":"<compressed-chain id=\"b1\" tools=\"\">\n\n</compressed-chain>"}],"timestamp":5},"#,
                r#"{"role":"user","content":"b","timestamp":null}]"#
            )
        );
        assert_eq!((p.before_chars, p.after_chars), (95, 225));
    }
}
