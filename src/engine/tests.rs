//! A kept engine against fresh ones: chain entries replaced from one on (a
//! flush adds a chain, changes one, a bad entry comes and goes), messages
//! appended and re-sent between them, and at every step the kept engine's
//! render equals the render of an engine given everything at once; and
//! the render after a new chain (sent from it on, or with every entry)
//! decides 2.4.3's facts of only the messages the new entry's ids and
//! timestamps reach.

use super::Engine;
use crate::config::Config;
use crate::dialect::Dialect;
use crate::json::{parse_value, Json};
use crate::record::Source;

struct Sample {
    messages: Vec<Json>,
    config: Json,
    chains: Vec<Json>,
}

fn sample() -> Sample {
    let root = parse_value(include_bytes!("../../sample/session.json")).unwrap();
    let list = |v: Option<&Json>| v.and_then(Json::as_array).unwrap().to_vec();
    Sample {
        messages: list(root.get("messages")),
        config: root.get("config").unwrap().clone(),
        chains: list(root.get("state").and_then(|s| s.get("chains"))),
    }
}

fn json(text: &str) -> Json {
    parse_value(text.as_bytes()).unwrap()
}

fn text(v: &Json) -> String {
    String::from_utf8(v.to_json()).unwrap()
}

/// `entries` as `set_chains_json` takes them (from entry `from` on, when
/// given), each summarized by its range text or as "summary of <blockId>".
fn chains_json(entries: &[Json], from: Option<usize>) -> Vec<u8> {
    let skip = from.unwrap_or(0);
    let summaries: Vec<String> = entries[skip..]
        .iter()
        .map(|e| match e.get("rangeSummaryText") {
            Some(t) => format!(r#"{{"v":{}}}"#, text(t)),
            None => format!(
                r#"{{"v":"summary of {}"}}"#,
                e.get("blockId")
                    .and_then(Json::as_text)
                    .map_or(String::new(), |b| {
                        String::from_utf8_lossy(b).into_owned()
                    })
            ),
        })
        .collect();
    let listed: Vec<String> = entries[skip..].iter().map(text).collect();
    let head = from.map_or(String::new(), |f| format!(r#""from":{f},"#));
    format!(
        r#"{{{head}"entries":[{}],"summaries":[{}],"lookups":[]}}"#,
        listed.join(","),
        summaries.join(",")
    )
    .into_bytes()
}

fn messages_json(messages: &[Json]) -> Vec<u8> {
    text(&Json::Arr(messages.to_vec())).into_bytes()
}

fn engine(config: &Json) -> Engine {
    let mut e = Engine::new(Dialect::V2_4);
    e.set_config(Config::from_value(config, Dialect::V2_4).unwrap());
    e
}

/// The render's output, message by message as JSON text, or its error.
fn output(e: &mut Engine) -> Result<Vec<Vec<u8>>, String> {
    let script = e.render_script().map_err(|err| err.message)?;
    Ok(script
        .slots()
        .iter()
        .map(|slot| {
            let mut out = Vec::new();
            script.write_slot(slot, &mut out);
            out
        })
        .collect())
}

/// An engine given `messages`, `entries` and `boundary` at once.
fn fresh(config: &Json, messages: &[Json], entries: &[Json], boundary: Option<f64>) -> Engine {
    let mut e = engine(config);
    e.sync(0, &messages_json(messages), Source::Bytes).unwrap();
    e.set_chains_json(&chains_json(entries, None)).unwrap();
    e.set_boundary(boundary);
    e
}

/// A message's timestamp.
fn stamp(m: &Json) -> f64 {
    m.get("timestamp").map_or(f64::NAN, Json::to_number)
}

fn role(m: &Json) -> &[u8] {
    m.get("role").and_then(Json::as_text).unwrap_or(b"")
}

/// The ids of the tool calls of an assistant message.
fn tool_calls(m: &Json) -> Vec<Vec<u8>> {
    m.get("content")
        .and_then(Json::as_array)
        .unwrap_or(&[])
        .iter()
        .filter(|b| b.get("type").and_then(Json::as_text) == Some(b"toolCall"))
        .filter_map(|b| b.get("id").and_then(Json::as_text).map(<[u8]>::to_vec))
        .collect()
}

/// A chain over the last tool call of `messages` answered after it: the
/// user message before it as its start, the call dropped, the assistant
/// after it as its final one.
fn last_chain(messages: &[Json]) -> (Json, Vec<u8>, f64, f64) {
    let answered = |i: usize| messages[i + 1..].iter().any(|m| role(m) == b"assistant");
    let at = (0..messages.len())
        .rev()
        .find(|&i| {
            role(&messages[i]) == b"assistant"
                && !tool_calls(&messages[i]).is_empty()
                && answered(i)
        })
        .unwrap();
    let user = messages[..at]
        .iter()
        .rposition(|m| role(m) == b"user")
        .unwrap();
    let id = tool_calls(&messages[at]).remove(0);
    let last = messages[at + 1..]
        .iter()
        .find(|m| role(m) == b"assistant")
        .unwrap();
    let (start, end) = (stamp(&messages[user]), stamp(last));
    let entry = json(&format!(
        r#"{{"blockId":"b50","startUserTimestamp":{start},"droppedToolCallIds":["{}"],"finalAssistantTimestamp":{end},"toolRefs":["t50"],"compressedAt":{end}}}"#,
        String::from_utf8_lossy(&id)
    ));
    (entry, id, start, end)
}

#[test]
fn chains_replaced_from_an_entry_render_as_a_fresh_engine() {
    let s = sample();
    let [b1, b2, b3] = [0, 1, 2].map(|n| s.chains[n].clone());
    let id =
        |c: &Json, k: usize| text(&c.get("droppedToolCallIds").unwrap().as_array().unwrap()[k]);
    // b2 reaching into b1 (drops one of b1's ids, protects another) and
    // summarized from its batches; b3 again under another id, ending at
    // b1's final answer; an entry the reference cannot read.
    let b2x = json(&format!(
        r#"{{"blockId":"b2","startUserTimestamp":{},"droppedToolCallIds":[{},{}],"protectedToolCallIds":[{}],"finalAssistantTimestamp":{},"toolRefs":["t23"]}}"#,
        text(b2.get("startUserTimestamp").unwrap()),
        id(&b1, 0),
        id(&b2, 1),
        id(&b1, 1),
        text(b2.get("finalAssistantTimestamp").unwrap()),
    ));
    let b9 = json(&format!(
        r#"{{"blockId":"b9","startUserTimestamp":{},"droppedToolCallIds":[{}],"finalAssistantTimestamp":{},"toolRefs":[]}}"#,
        text(b3.get("startUserTimestamp").unwrap()),
        id(&b3, 0),
        text(b1.get("finalAssistantTimestamp").unwrap()),
    ));
    let bad =
        json(r#"{"blockId":"bx","startUserTimestamp":1,"droppedToolCallIds":5,"toolRefs":[]}"#);
    let (b50, _, _, _) = last_chain(&s.messages);
    let n = s.messages.len();
    // (messages kept, re-sent from, entries, replaced from, boundary)
    type Step = (usize, Option<usize>, Vec<Json>, Option<usize>, Option<f64>);
    let steps: Vec<Step> = vec![
        (200, None, vec![b1.clone()], None, None),
        (250, None, vec![b1.clone(), b2.clone()], Some(1), None),
        (
            n,
            None,
            vec![b1.clone(), b2.clone(), b3.clone()],
            Some(2),
            None,
        ),
        (
            n,
            None,
            vec![b1.clone(), b2x.clone(), b3.clone()],
            Some(1),
            None,
        ),
        (
            n,
            None,
            vec![b1.clone(), bad.clone(), b3.clone()],
            Some(1),
            None,
        ),
        (
            n,
            None,
            vec![b1.clone(), bad.clone(), b3.clone(), b9.clone()],
            Some(3),
            None,
        ),
        (
            n,
            None,
            vec![b1.clone(), b2.clone(), b3.clone(), b9.clone()],
            Some(1),
            None,
        ),
        (
            n,
            Some(150),
            vec![b1.clone(), b2.clone(), b3.clone(), b9.clone()],
            None,
            None,
        ),
        (
            n,
            None,
            vec![b1.clone(), b2.clone(), b3.clone(), b50.clone()],
            Some(3),
            None,
        ),
        (
            n,
            None,
            vec![b1.clone(), b2x.clone(), b3.clone(), b50.clone()],
            Some(1),
            Some(stamp(&s.messages[n / 2])),
        ),
        (n, None, vec![b1.clone()], Some(1), None),
        (
            n,
            Some(100),
            vec![b1.clone(), b3.clone(), b50.clone()],
            Some(1),
            None,
        ),
    ];
    let mut kept = engine(&s.config);
    let mut synced = 0;
    let mut errors = 0;
    for (k, (len, resend, entries, from, boundary)) in steps.into_iter().enumerate() {
        let at = resend.unwrap_or(synced);
        kept.sync(at, &messages_json(&s.messages[at..len]), Source::Bytes)
            .unwrap();
        synced = len;
        if k == 0 {
            kept.set_chains_json(&chains_json(&entries, None)).unwrap();
        } else if let Some(f) = from {
            kept.set_chains_json(&chains_json(&entries, Some(f)))
                .unwrap();
        }
        kept.set_boundary(boundary);
        let want = output(&mut fresh(
            &s.config,
            &s.messages[..len],
            &entries,
            boundary,
        ));
        let got = output(&mut kept);
        errors += usize::from(want.is_err());
        assert_eq!(got, want, "step {k}");
    }
    assert_eq!(errors, 2, "the unreadable entry fails both, twice");
}

#[test]
fn a_new_chain_decides_the_facts_of_the_messages_it_reaches() {
    let s = sample();
    let kept_chains = s.chains[..3].to_vec();
    let mut e = engine(&s.config);
    e.sync(0, &messages_json(&s.messages), Source::Bytes)
        .unwrap();
    e.set_chains_json(&chains_json(&kept_chains, None)).unwrap();
    output(&mut e).unwrap();
    output(&mut e).unwrap();
    let first = e.memo.facts_decided();
    assert_eq!(
        first,
        s.messages.len(),
        "the first render decides every fact once"
    );
    // The messages the new entry reaches: the tool result it drops, the
    // assistant calling it, summaries citing it, the user message at its
    // start and the assistants at its final timestamp.
    let (entry, id, start, end) = last_chain(&s.messages);
    let cites = |m: &Json| {
        m.get("details")
            .and_then(|d| d.get("toolCallRefs"))
            .and_then(Json::as_array)
            .unwrap_or(&[])
            .iter()
            .any(|r| r.get("toolCallId").and_then(Json::as_text) == Some(&id[..]))
    };
    let reached = s
        .messages
        .iter()
        .filter(|m| match role(m) {
            b"toolResult" => m.get("toolCallId").and_then(Json::as_text) == Some(&id[..]),
            b"assistant" => tool_calls(m).contains(&id) || [start, end].contains(&stamp(m)),
            b"user" => [start, end].contains(&stamp(m)),
            _ => cites(m),
        })
        .count();
    let mut entries = kept_chains.clone();
    entries.push(entry);
    // Sent from the new entry on (the drop-in), or whole (the replay): the
    // engine finds the entries it keeps either way.
    for (step, from) in [(1, Some(3)), (2, None)] {
        let before = e.memo.facts_decided();
        e.set_chains_json(&chains_json(&entries, from)).unwrap();
        let got = output(&mut e).unwrap();
        let decided = e.memo.facts_decided() - before;
        assert_eq!(decided, reached, "facts decided after new chain {step}");
        let want = output(&mut fresh(&s.config, &s.messages, &entries, None)).unwrap();
        assert_eq!(got, want, "new chain {step}");
        // The second: the same entry again under another block id.
        let again = json(&text(&entries[3]).replace(r#""b50""#, r#""b51""#));
        entries.push(again);
    }
    assert!(reached < 10, "{reached} messages reached");
}
