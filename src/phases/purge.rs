//! Phase 2: arguments of calls that failed long enough ago are replaced by a
//! marker that keeps their size.

use crate::hash::HashMap;
use std::borrow::Cow;

use super::{owned_object, Msg, Role, Stats};
use crate::config::PurgeConfig;
use crate::error::{PruneError, Result};
use crate::jsjson::utf16_len;
use crate::value::{Key, Ty, Val};

pub fn run(msgs: &mut [Msg<'_>], cfg: &PurgeConfig, stats: &mut Stats) -> Result<bool> {
    // (message index, block index, JSON length of the arguments)
    let mut edits: Vec<(usize, usize, usize)> = Vec::new();
    {
        let mut errored_at: HashMap<Key<'_>, usize> = HashMap::default();
        let mut turn = 0usize;
        for m in msgs.iter() {
            let v = m.view();
            if m.role == Role::Assistant {
                turn += 1;
            } else if m.role == Role::ToolResult
                && v.get("isError").is_some_and(|e| e.ty() == Ty::Bool(true))
            {
                errored_at.insert(Key::of(v.get("toolCallId")), turn);
            }
        }
        if errored_at.is_empty() {
            return Ok(false);
        }
        let current = turn;
        for (i, m) in msgs.iter().enumerate() {
            let v = m.view();
            if m.role != Role::Assistant {
                continue;
            }
            let content = v.get("content");
            if content.map(|c| c.ty()) != Some(Ty::Arr) {
                return Err(PruneError::bad_message(
                    i,
                    "content",
                    "is not an array (assistant content is mapped once any call failed)",
                ));
            }
            for (j, block) in content.into_iter().flat_map(|c| c.elements()).enumerate() {
                if block.ty() == Ty::Null {
                    return Err(PruneError::bad_message(
                        i,
                        &format!("content[{j}]"),
                        "is null",
                    ));
                }
                if !block.get("type").is_some_and(|t| t.is_str("toolCall")) {
                    continue;
                }
                let Some(&at) = errored_at.get(&Key::of(block.get("id"))) else {
                    continue;
                };
                if ((current - at) as f64) < cfg.cooldown_turns {
                    continue;
                }
                let Some(args) = block.get("arguments") else {
                    return Err(PruneError::bad_message(
                        i,
                        &format!("content[{j}].arguments"),
                        "is missing on a failed call past its cooldown",
                    ));
                };
                let len = utf16_len(&args.to_json());
                if (len as f64) < cfg.min_arg_chars {
                    continue;
                }
                edits.push((i, j, len));
            }
        }
    }
    for &(i, j, len) in &edits {
        msgs[i].edit.purged.push((j as u32, len as u32));
        let entries = owned_object(&mut msgs[i].val);
        let Some((_, content)) = entries.iter_mut().find(|(k, _)| k == "content") else {
            continue;
        };
        content.make_owned();
        let Val::Arr(blocks) = content else { continue };
        let block = owned_object(&mut blocks[j]);
        let marker = format!("<purged-errored-args size=\"{len}\"/>");
        Val::set(
            block,
            "arguments",
            Val::Obj(vec![(Cow::Borrowed("_purged"), Val::str(marker))]),
        );
        stats.purged_args += 1;
    }
    Ok(!edits.is_empty())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{expect_error, expect_pruned, expect_unchanged, plain_stub, units};
    use super::super::Stats;

    const INVALID: &str = "ERR_CONDENSE_INVALID_MESSAGE";

    fn purged(n: u32) -> Stats {
        Stats {
            purged_args: n,
            ..Stats::default()
        }
    }

    fn config(cooldown: &str, min: &str) -> String {
        format!(
            r#"{{"errorPurge":{{"enabled":true,"cooldownTurns":{cooldown},"minArgChars":{min}}}}}"#
        )
    }

    fn marker(size: usize) -> String {
        format!(r#"{{"_purged":"<purged-errored-args size=\"{size}\"/>"}}"#)
    }

    /// x fails after assistant 1 (age 3 at the end), y after assistant 3
    /// (age 1); z's `isError` is the string "true", which does not count.
    fn cooldown_session(x_args: &str, y_args: &str) -> String {
        format!(
            concat!(
                "[",
                r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"x","name":"bash","arguments":{}}}],"timestamp":1}},"#,
                r#"{{"role":"toolResult","toolCallId":"x","toolName":"bash","content":[],"isError":true,"timestamp":2}},"#,
                r#"{{"role":"assistant","content":[{{"type":"text","text":"retry"}}],"timestamp":3}},"#,
                r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"y","name":"bash","arguments":{}}}],"timestamp":4}},"#,
                r#"{{"role":"toolResult","toolCallId":"y","toolName":"bash","content":[],"isError":true,"timestamp":5}},"#,
                r#"{{"role":"toolResult","toolCallId":"z","toolName":"bash","content":[],"isError":"true","timestamp":6}},"#,
                r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"z","name":"bash","arguments":{{"q":3}}}}],"timestamp":7}}"#,
                "]"
            ),
            x_args, y_args
        )
    }

    #[test]
    fn cooldown_edges() {
        let input = cooldown_session(r#"{"q":1}"#, r#"{"q":2}"#);
        assert_eq!(units(&input), 708);
        let both = cooldown_session(&marker(7), &marker(7));
        let x_only = cooldown_session(&marker(7), r#"{"q":2}"#);
        // `current - erroredAt < cooldownTurns` skips; null is no limit.
        for (cooldown, expected, n, after) in [
            ("0", &both, 2, 788),
            ("1", &both, 2, 788),
            ("null", &both, 2, 788),
            ("1.5", &x_only, 1, 748),
            ("2", &x_only, 1, 748),
            ("\"2\"", &x_only, 1, 748),
            ("3", &x_only, 1, 748),
        ] {
            let p = expect_pruned(
                &input,
                "{}",
                &config(cooldown, "0"),
                None,
                expected,
                purged(n),
            );
            assert_eq!((p.before_chars, p.after_chars), (708, after), "{cooldown}");
        }
        for cooldown in ["3.5", "4", "100"] {
            expect_unchanged(&input, "{}", &config(cooldown, "0"), None);
        }
        // A disabled section does nothing.
        expect_unchanged(
            &input,
            "{}",
            r#"{"errorPurge":{"enabled":false,"cooldownTurns":0,"minArgChars":0}}"#,
            None,
        );
    }

    /// `{"p":"é😀"}` is 11 UTF-16 units (14 UTF-8 bytes, 10 code points);
    /// `{"s":"a\nb"}` is 12 units. The same id failed once and is called
    /// in two assistants.
    fn unicode_session(u1: &str, u2: &str) -> String {
        format!(
            concat!(
                "[",
                r#"{{"role":"assistant","content":[{{"type":"text","text":"t"}},{{"type":"toolCall","id":"u","name":"w","arguments":{},"extra":1}}],"timestamp":1}},"#,
                r#"{{"role":"toolResult","toolCallId":"u","toolName":"w","content":[],"isError":true,"timestamp":2}},"#,
                r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"u","name":"w","arguments":{}}}],"timestamp":3}}"#,
                "]"
            ),
            u1, u2
        )
    }

    #[test]
    fn min_arg_chars_counts_utf16_units() {
        let a1 = r#"{"p":"é😀"}"#;
        let a2 = r#"{"s":"a\nb"}"#;
        assert_eq!((units(a1), a1.len(), a1.chars().count()), (11, 14, 10));
        let input = unicode_session(a1, a2);
        let both = unicode_session(&marker(11), &marker(12));
        for (min, expected, n, after) in [
            ("0", &both, 2, 430),
            ("10", &both, 2, 430),
            ("11", &both, 2, 430),
            ("\"11\"", &both, 2, 430),
            ("null", &both, 2, 430),
            ("12", &unicode_session(a1, &marker(12)), 1, 393),
        ] {
            let p = expect_pruned(&input, "{}", &config("0", min), None, expected, purged(n));
            assert_eq!((p.before_chars, p.after_chars), (357, after), "{min}");
        }
        expect_unchanged(&input, "{}", &config("0", "13"), None);
        expect_unchanged(&input, "{}", &config("0", "14"), None);
    }

    #[test]
    fn argument_length_is_of_the_parsed_value() {
        // `"\u00e9"` spelled with an escape is `"é"` to JSON.stringify: 9 units.
        let input = concat!(
            r#"[{"role":"assistant","content":[{"type":"toolCall","id":"e","name":"w","arguments":{"p":"\u00e9\/"}}],"timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"e","toolName":"w","content":[],"isError":true,"timestamp":2}]"#
        );
        let p = super::super::testing::run(input, "{}", &config("0", "0"), None).unwrap();
        assert_eq!(
            super::super::testing::text(&p),
            format!(
                concat!(
                    r#"[{{"role":"assistant","content":[{{"type":"toolCall","id":"e","name":"w","arguments":{}}}],"timestamp":1}},"#,
                    r#"{{"role":"toolResult","toolCallId":"e","toolName":"w","content":[],"isError":true,"timestamp":2}}]"#
                ),
                marker(10)
            )
        );
        assert_eq!((p.before_chars, p.after_chars), (207, 245));
        expect_unchanged(input, "{}", &config("0", "11"), None);
    }

    #[test]
    fn numeric_ids_match_numbers_only() {
        let input = concat!(
            r#"[{"role":"toolResult","toolCallId":7,"toolName":"w","content":[],"isError":true,"timestamp":1},"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","id":7,"name":"w","arguments":{"a":"xyz"}},"#,
            r#"{"type":"toolCall","id":"7","name":"w","arguments":{"a":"xyz"}}],"timestamp":2}]"#
        );
        let expected = concat!(
            r#"[{"role":"toolResult","toolCallId":7,"toolName":"w","content":[],"isError":true,"timestamp":1},"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","id":7,"name":"w","arguments":{"_purged":"<purged-errored-args size=\"11\"/>"}},"#,
            r#"{"type":"toolCall","id":"7","name":"w","arguments":{"a":"xyz"}}],"timestamp":2}]"#
        );
        // A "7" record does not summarize the numeric id 7 (phase 1 is inert).
        let p = expect_pruned(
            input,
            r#"{"records":{"7":{"toolName":"w","args":{}}}}"#,
            &config("0", "0"),
            None,
            expected,
            purged(1),
        );
        assert_eq!((p.before_chars, p.after_chars), (268, 305));

        // 7.0 and 7 are the same number.
        let raw = concat!(
            r#"[{"role":"toolResult","toolCallId":7.0,"toolName":"w","content":[],"isError":true,"timestamp":1},"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","id":7,"name":"w","arguments":{"a":"xyz"}}],"timestamp":2}]"#
        );
        let p = super::super::testing::run(raw, "{}", &config("0", "0"), None).unwrap();
        assert!(p.pruned);
        assert_eq!(
            super::super::testing::text(&p),
            concat!(
                r#"[{"role":"toolResult","toolCallId":7,"toolName":"w","content":[],"isError":true,"timestamp":1},"#,
                r#"{"role":"assistant","content":[{"type":"toolCall","id":7,"name":"w","arguments":{"_purged":"<purged-errored-args size=\"11\"/>"}}],"timestamp":2}]"#
            )
        );
        // Measured as JSON.stringify writes the parsed input: `7.0` is `7`.
        assert_eq!((p.before_chars, p.after_chars), (204, 241));
        assert_eq!(p.stats, purged(1));
    }

    #[test]
    fn missing_arguments_past_cooldown_is_a_typed_error() {
        let input = concat!(
            r#"[{"role":"assistant","content":[{"type":"toolCall","id":"n","name":"w"}],"timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"n","toolName":"w","content":[],"isError":true,"timestamp":2}]"#
        );
        let err = expect_error(input, "{}", &config("0", "0"), None, INVALID, "message 0");
        assert!(err.message.contains("content[0].arguments"), "{err}");
        // Within its cooldown the call is never stringified.
        expect_unchanged(input, "{}", &config("1", "0"), None);
    }

    #[test]
    fn non_array_assistant_content_fails_once_an_error_exists() {
        for content in [r#""text""#, "null", r#"{"0":1}"#] {
            let input = |err: &str| {
                format!(
                    concat!(
                        r#"[{{"role":"assistant","content":{},"timestamp":1}},"#,
                        r#"{{"role":"toolResult","toolCallId":"e","toolName":"w","content":[],"isError":{},"timestamp":2}}]"#
                    ),
                    content, err
                )
            };
            let err = expect_error(
                &input("true"),
                "{}",
                &config("0", "0"),
                None,
                INVALID,
                "message 0",
            );
            assert!(err.message.contains("content"), "{err}");
            // Without an error the phase never looks at assistants.
            expect_unchanged(&input("false"), "{}", &config("0", "0"), None);
        }
        let null_block = concat!(
            r#"[{"role":"assistant","content":[{"type":"text","text":"a"},null],"timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"e","toolName":"w","content":[],"isError":true,"timestamp":2}]"#
        );
        let err = expect_error(
            null_block,
            "{}",
            &config("0", "0"),
            None,
            INVALID,
            "message 0",
        );
        assert!(err.message.contains("content[1]"), "{err}");
    }

    #[test]
    fn already_purged_args_are_purged_again_and_count_as_a_change() {
        let fixed = marker(48);
        assert_eq!(units(&fixed), 48);
        let input = format!(
            concat!(
                r#"[{{"role":"assistant","content":[{{"type":"toolCall","id":"f","name":"w","arguments":{}}}],"timestamp":1}},"#,
                r#"{{"role":"toolResult","toolCallId":"f","toolName":"w","content":[],"isError":true,"timestamp":2}}]"#
            ),
            fixed
        );
        let p = expect_pruned(&input, "{}", &config("0", "48"), None, &input, purged(1));
        assert_eq!((p.before_chars, p.after_chars), (245, 245));
        expect_unchanged(&input, "{}", &config("0", "49"), None);
    }

    #[test]
    fn stubbed_results_hide_their_error() {
        let input = concat!(
            r#"[{"role":"assistant","content":[{"type":"toolCall","id":"s","name":"w","arguments":{"a":1}}],"timestamp":1},"#,
            r#"{"role":"toolResult","toolCallId":"s","toolName":"w","content":[],"isError":true,"timestamp":2},"#,
            r#"{"role":"assistant","content":[],"timestamp":3}]"#
        );
        let expected = format!(
            concat!(
                r#"[{{"role":"assistant","content":[{{"type":"toolCall","id":"s","name":"w","arguments":{{"a":1}}}}],"timestamp":1}},"#,
                "{},",
                r#"{{"role":"assistant","content":[],"timestamp":3}}]"#
            ),
            plain_stub("s", "w", "2", "s")
        );
        let p = expect_pruned(
            input,
            r#"{"records":{"s":{"toolName":"w","args":{}}}}"#,
            &config("0", "0"),
            None,
            &expected,
            Stats {
                stubbed: 1,
                ..Stats::default()
            },
        );
        assert_eq!((p.before_chars, p.after_chars), (252, 366));
    }
}
