//! Every conformance vector of both dialects through the Rust API (bytes
//! in, bytes out), so the records, the phases and the byte applier are
//! checked without Node. Raw spellings are exercised: each case's
//! `messages` goes in as the bytes the vector file holds.

use condense_native::compute_thinking_boundary;
use condense_native::prune_bytes;
use condense_native::Config;
use condense_native::Dialect;
use condense_native::Json;
use condense_native::State;
use condense_native::{parse_value, read, Input, Value};

/// The top-level members of a JSON object, each with its raw bytes.
fn members(text: &[u8]) -> Vec<(Vec<u8>, &[u8])> {
    let deep = Input {
        max_depth: 2000,
        ..Input::BYTES
    };
    let tape = read(text, deep).unwrap();
    let root = Value::root(text, &tape);
    assert!(root.is_object());
    let spans: Vec<(Vec<u8>, usize, usize)> = root
        .members()
        .map(|(k, v)| {
            let at = v.span().as_ptr() as usize - text.as_ptr() as usize;
            (k.string().unwrap().into_owned(), at, at + v.span().len())
        })
        .collect();
    spans
        .into_iter()
        .map(|(k, a, b)| (k, &text[a..b]))
        .collect()
}

fn fixture(name: &str) -> Option<Vec<u8>> {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        here.join("__test__/fixtures").join(name),
        here.join("../shared/conformance-2.9/vectors.json"),
    ]
    .into_iter()
    .take(if name == "vectors-2.9.json" { 2 } else { 1 })
    .find_map(|p| std::fs::read(p).ok())
}

fn cases(file: &[u8]) -> Vec<&[u8]> {
    file.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b",").unwrap_or(l))
        .filter(|l| l.first() == Some(&b'{'))
        .collect()
}

fn get<'a>(m: &'a [(Vec<u8>, &'a [u8])], key: &str) -> Option<&'a [u8]> {
    m.iter().find(|(k, _)| k == key.as_bytes()).map(|(_, v)| *v)
}

fn run(dialect: Dialect, file: &[u8]) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut count = 0;
    for case in cases(file) {
        count += 1;
        let m = members(case);
        let name =
            String::from_utf8_lossy(&parse_value(get(&m, "name").unwrap()).unwrap().js_string())
                .into_owned();
        let group = parse_value(get(&m, "group").unwrap()).unwrap();
        let expected = parse_value(get(&m, "expected").unwrap()).unwrap();
        if group.is_str("boundary") {
            let ts: Vec<f64> = parse_value(get(&m, "assistantTimestamps").unwrap())
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.to_number())
                .collect();
            let keep = parse_value(get(&m, "keepLastTurns").unwrap())
                .unwrap()
                .to_number();
            let prev = match parse_value(get(&m, "prev").unwrap()).unwrap() {
                Json::Null => None,
                v => Some(v.to_number()),
            };
            let got = compute_thinking_boundary(&ts, keep, prev);
            let want = match expected.get("value").unwrap() {
                Json::Null => None,
                v => Some(v.to_number()),
            };
            if got != want && !(got.is_some_and(f64::is_nan) && want.is_none()) {
                failures.push(format!("{name}: boundary {got:?} != {want:?}"));
            }
            continue;
        }
        let hostile = group.is_str("hostile");
        let state = State::from_json(get(&m, "state").unwrap(), dialect);
        let config = Config::from_json(get(&m, "config").unwrap(), dialect);
        let boundary = get(&m, "thinkingBoundaryTimestamp")
            .map(|b| parse_value(b).unwrap())
            .and_then(|b| match b {
                Json::Null => None,
                v => Some(v.to_number()),
            });
        let result = state.and_then(|s| {
            config
                .and_then(|c| prune_bytes(get(&m, "messages").unwrap(), &s, &c, boundary, dialect))
        });
        if expected.get("throws").is_some() {
            if let Ok(r) = result {
                failures.push(format!("{name}: expected a throw, got pruned={}", r.pruned));
            }
            continue;
        }
        let r = match result {
            Ok(r) => r,
            Err(e) if hostile => {
                let _ = e;
                continue;
            }
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let want_pruned = expected.get("pruned").unwrap().truthy();
        let want_before = expected.get("beforeChars").unwrap().to_number() as usize;
        let want_after = expected.get("afterChars").unwrap().to_number() as usize;
        if r.pruned != want_pruned || r.before_chars != want_before || r.after_chars != want_after {
            failures.push(format!(
                "{name}: pruned/before/after {}/{}/{} != {}/{}/{}",
                r.pruned, r.before_chars, r.after_chars, want_pruned, want_before, want_after
            ));
            continue;
        }
        if let Some(out) = &r.messages {
            let want = expected.get("messages").unwrap().to_json();
            let got = parse_value(out).expect("the output parses").to_json();
            if got != want || *out != got {
                failures.push(format!("{name}: messages differ"));
                continue;
            }
        }
        if dialect == Dialect::V2_9 {
            let want = expected
                .get("diagnostics")
                .and_then(Json::as_array)
                .unwrap_or(&[]);
            let got: Vec<Json> = r.diagnostics.iter().map(|d| d.to_value()).collect();
            if got.as_slice() != want {
                failures.push(format!(
                    "{name}: diagnostics {} != {}",
                    String::from_utf8_lossy(&Json::Arr(got).to_json()),
                    String::from_utf8_lossy(&Json::Arr(want.to_vec()).to_json())
                ));
            }
        }
    }
    (count, failures)
}

#[test]
fn every_2_4_vector() {
    let file = fixture("vectors.json").expect("__test__/fixtures/vectors.json");
    let (count, failures) = run(Dialect::V2_4, &file);
    assert_eq!(count, 400);
    assert!(
        failures.is_empty(),
        "{} of {count} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_2_9_vector() {
    let Some(file) = fixture("vectors-2.9.json") else {
        eprintln!("skipped: no vectors-2.9.json");
        return;
    };
    let (count, failures) = run(Dialect::V2_9, &file);
    assert_eq!(count, 400);
    assert!(
        failures.is_empty(),
        "{} of {count} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
