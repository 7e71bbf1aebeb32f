//! Phase 4: thinking blocks of older assistant turns are removed, behind the
//! persisted boundary or, without one, all but the last K turns.

use super::{without_thinking, Msg, Role, Stats};
use crate::config::ThinkingConfig;
use crate::error::Result;
use crate::frontier::js_max;

/// Which assistants lose their thinking.
enum Rule {
    /// `timestamp < B` with JS coercion; a missing timestamp never strips.
    Before(f64),
    /// Those before this array position; None strips every one (a
    /// non-integer K finds no K-th assistant, as in the reference).
    BeforePosition(Option<usize>),
}

impl Rule {
    fn strips(&self, i: usize, m: &Msg<'_>) -> bool {
        match *self {
            Rule::Before(b) => m.view().get("timestamp").is_some_and(|t| t.to_number() < b),
            Rule::BeforePosition(cutoff) => cutoff.is_none_or(|c| i < c),
        }
    }
}

pub fn run(
    msgs: &mut [Msg<'_>],
    cfg: &ThinkingConfig,
    boundary: Option<f64>,
    stats: &mut Stats,
) -> Result<bool> {
    let assistants: Vec<usize> = (0..msgs.len())
        .filter(|&i| msgs[i].role == Role::Assistant)
        .collect();
    let rule = match boundary {
        Some(b) => Rule::Before(b),
        None => {
            let k = js_max(1.0, cfg.keep_last_turns);
            let n = assistants.len() as f64;
            if n <= k {
                return Ok(false);
            }
            // The K-th assistant from the end.
            let at = n - k;
            Rule::BeforePosition((at.fract() == 0.0 && at >= 0.0).then(|| assistants[at as usize]))
        }
    };
    let mut changed = false;
    for &i in &assistants {
        if !rule.strips(i, &msgs[i]) {
            continue;
        }
        if let Some(stripped) = without_thinking(&msgs[i].val, i)? {
            msgs[i].val = stripped;
            msgs[i].edit.thinking_stripped = true;
            stats.thinking_stripped += 1;
            changed = true;
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{expect_error, expect_pruned, expect_unchanged, run};
    use super::super::Stats;

    fn stripped(n: u32) -> Stats {
        Stats {
            thinking_stripped: n,
            ..Stats::default()
        }
    }

    fn keep(k: &str) -> String {
        format!(r#"{{"thinkingStrip":{{"enabled":true,"keepLastTurns":{k}}}}}"#)
    }

    /// An assistant with a signed and a redacted thinking block around a
    /// text block; `ts` is the raw timestamp JSON, None for no timestamp.
    fn with_thinking(ts: Option<&str>) -> String {
        format!(
            r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":"t","thinkingSignature":"s"}},{{"type":"text","text":"a"}},{{"type":"thinking","thinking":"","redacted":true}}]{}}}"#,
            ts.map_or(String::new(), |t| format!(r#","timestamp":{t}"#))
        )
    }

    fn without_thinking(ts: Option<&str>) -> String {
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"a"}}]{}}}"#,
            ts.map_or(String::new(), |t| format!(r#","timestamp":{t}"#))
        )
    }

    fn array(items: &[String]) -> String {
        format!("[{}]", items.join(","))
    }

    #[test]
    fn boundary_strips_assistants_before_it_with_js_coercion() {
        let user =
            r#"{"role":"user","content":[{"type":"thinking","thinking":"u"}],"timestamp":10}"#;
        let plain =
            r#"{"role":"assistant","content":[{"type":"text","text":"plain"}],"timestamp":50}"#;
        let stamps = [
            Some("100"),
            Some("200"),
            None,
            Some(r#""150""#),
            Some("null"),
            Some(r#""abc""#),
            Some("199.5"),
        ];
        // 100, "150" (as 150), null (as 0) and 199.5 are < 200; 200 is not;
        // a missing or NaN timestamp is never stripped; users are not touched.
        let strips = [true, false, false, true, true, false, true];
        let mut input = vec![user.to_owned()];
        let mut expected = vec![user.to_owned()];
        for (ts, strip) in stamps.iter().zip(strips) {
            input.push(with_thinking(*ts));
            expected.push(if strip {
                without_thinking(*ts)
            } else {
                with_thinking(*ts)
            });
        }
        input.push(plain.to_owned());
        expected.push(plain.to_owned());
        let p = expect_pruned(
            &array(&input),
            "{}",
            &keep("1"),
            Some(200.0),
            &array(&expected),
            stripped(4),
        );
        assert_eq!((p.before_chars, p.after_chars), (1444, 1008));
        // The boundary wins over keepLastTurns, whatever its value.
        let p = run(&array(&input), "{}", &keep("1000"), Some(200.0)).unwrap();
        assert_eq!(p.stats, stripped(4));
        // Before 100 only the null timestamp (0) is.
        let p = run(&array(&input), "{}", &keep("1"), Some(100.0)).unwrap();
        assert_eq!(p.stats, stripped(1));
        // Nothing is before 0.
        expect_unchanged(&array(&input), "{}", &keep("1"), Some(0.0));
    }

    /// Four assistants (three with thinking), a user and a tool result.
    fn fallback_session(strip: [bool; 3]) -> String {
        let a = |ts: &str, s: bool| {
            if s {
                without_thinking(Some(ts))
            } else {
                with_thinking(Some(ts))
            }
        };
        array(&[
            r#"{"role":"user","content":"q","timestamp":1}"#.to_owned(),
            a("2", strip[0]),
            r#"{"role":"toolResult","toolCallId":"x","content":[],"isError":false,"timestamp":3}"#
                .to_owned(),
            a("4", strip[1]),
            r#"{"role":"assistant","content":[{"type":"text","text":"no thinking"}],"timestamp":5}"#
                .to_owned(),
            a("6", strip[2]),
        ])
    }

    #[test]
    fn fallback_keeps_the_last_k_assistants() {
        let input = fallback_session([false; 3]);
        for (k, strip, n, after) in [
            ("1", [true, true, false], 2, 542),
            ("0", [true, true, false], 2, 542),
            ("-3", [true, true, false], 2, 542),
            ("null", [true, true, false], 2, 542),
            // The 2nd assistant from the end has no thinking.
            ("2", [true, true, false], 2, 542),
            ("\"2\"", [true, true, false], 2, 542),
            ("3", [true, false, false], 1, 651),
            // No K-th assistant for a fractional K: all are stripped.
            ("1.5", [true, true, true], 3, 433),
            ("2.5", [true, true, true], 3, 433),
        ] {
            let p = expect_pruned(
                &input,
                "{}",
                &keep(k),
                None,
                &fallback_session(strip),
                stripped(n),
            );
            assert_eq!((p.before_chars, p.after_chars), (760, after), "K={k}");
        }
        // K = n and above: unchanged.
        for k in ["4", "5", "1000"] {
            expect_unchanged(&input, "{}", &keep(k), None);
        }
        // A disabled section does nothing.
        expect_unchanged(
            &input,
            "{}",
            r#"{"thinkingStrip":{"enabled":false,"keepLastTurns":1}}"#,
            None,
        );
    }

    #[test]
    fn non_array_content_is_skipped() {
        let odd = [
            r#"{"role":"assistant","content":"str","timestamp":1}"#.to_owned(),
            r#"{"role":"assistant","content":null,"timestamp":2}"#.to_owned(),
            r#"{"role":"assistant","content":{"0":{"type":"thinking"}},"timestamp":3}"#.to_owned(),
        ];
        let mut input = odd.to_vec();
        input.extend([with_thinking(Some("4")), with_thinking(Some("5"))]);
        let mut expected = odd.to_vec();
        expected.extend([without_thinking(Some("4")), with_thinking(Some("5"))]);
        let p = expect_pruned(
            &array(&input),
            "{}",
            &keep("1"),
            None,
            &array(&expected),
            stripped(1),
        );
        assert_eq!((p.before_chars, p.after_chars), (539, 430));
    }

    #[test]
    fn null_block_fails_only_when_stripped() {
        let bad = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t"},null],"timestamp":1}"#
            .to_owned();
        let err = expect_error(
            &array(&[bad.clone(), with_thinking(Some("2"))]),
            "{}",
            &keep("1"),
            None,
            "ERR_CONDENSE_INVALID_MESSAGE",
            "message 0",
        );
        assert!(err.message.contains("content[1]"), "{err}");
        // Same message at or after the boundary: kept, no error.
        expect_unchanged(
            &array(&[bad.clone(), with_thinking(Some("2"))]),
            "{}",
            &keep("1"),
            Some(1.0),
        );
        // As the kept last assistant: no error either.
        let bad2 = bad.replace(r#""timestamp":1"#, r#""timestamp":2"#);
        let p = expect_pruned(
            &array(&[with_thinking(Some("1")), bad2.clone()]),
            "{}",
            &keep("1"),
            None,
            &array(&[without_thinking(Some("1")), bad2]),
            stripped(1),
        );
        assert_eq!((p.before_chars, p.after_chars), (271, 162));
    }
}
