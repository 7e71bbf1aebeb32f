//! Times each stage of the Buffer path on one corpus file:
//! `cargo run --release --example stages -- ../shared/corpus/large.json`.

use std::time::Instant;

use condense_native::config::Config;
use condense_native::index::{parse_tape, prepare, top_level_elements};
use condense_native::prune::{prune_bytes, size_of};
use condense_native::state::State;
use condense_native::value::Raw;

fn split(doc: &[u8]) -> (Vec<u8>, Vec<u8>, Vec<u8>, Option<f64>) {
    let mut scratch = doc.to_vec();
    let tape = simd_json::to_tape(&mut scratch).expect("corpus file parses");
    let root = Raw::new(&tape.0, 0);
    let field = |k: &str| {
        root.get(k)
            .map(|v| condense_native::value::V::R(v).to_json())
    };
    let boundary = root.get("thinkingBoundaryTimestamp").and_then(|v| {
        match condense_native::value::V::R(v).ty() {
            condense_native::value::Ty::Num(n) => Some(n),
            _ => None,
        }
    });
    (
        field("messages").unwrap(),
        field("state").unwrap(),
        field("config").unwrap(),
        boundary,
    )
}

/// Each message's own JSON text, as the JS layer sends it to a session.
fn split_messages(messages: &[u8]) -> Vec<Vec<u8>> {
    let mut scratch = messages.to_vec();
    let tape = simd_json::to_tape(&mut scratch).expect("messages parse");
    let root = Raw::new(&tape.0, 0);
    root.elements()
        .map(|m| condense_native::value::V::R(m).to_json())
        .collect()
}

fn time<R>(label: &str, runs: usize, mut f: impl FnMut() -> R) {
    let mut ms: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    println!("{label:>12}: {:.2} ms (median of {runs})", ms[runs / 2]);
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/corpus/large.json".into());
    let doc = std::fs::read(&path).expect("readable corpus file");
    let (messages, state, config, boundary) = split(&doc);
    let (state_json, config_json) = (state, config);
    let state = State::from_json(&state_json).unwrap();
    let config = Config::from_json(&config_json).unwrap();
    println!("{path}: {:.2} MB of messages", messages.len() as f64 / 1e6);
    let runs = 21;
    time("copy", runs, || messages.to_vec());
    time("scan", runs, || prepare(&messages).unwrap().spans.len());
    time("tape", runs, || {
        let mut p = prepare(&messages).unwrap();
        parse_tape(&mut p.scratch, &p.spans).unwrap().0.len()
    });
    time("elements", runs, || {
        let mut p = prepare(&messages).unwrap();
        let tape = parse_tape(&mut p.scratch, &p.spans).unwrap();
        top_level_elements(&tape.0).unwrap().len()
    });
    time("size_of", runs, || size_of(&messages).unwrap());
    let mut session = condense_native::session::Session::default();
    session.set_config(Config::from_json(&config_json).unwrap());
    session.set_state(State::from_json(&state_json).unwrap());
    session.set_boundary(boundary);
    let texts = split_messages(&messages);
    time("session sync", 3, || {
        session.sync(0, &texts).unwrap();
    });
    session.render().unwrap();
    if std::env::var("STAGES").as_deref() == Ok("append") {
        // A host's append: drop the last message, render, add it back, render.
        let n = texts.len();
        let mut ms: Vec<f64> = (0..50)
            .map(|_| {
                session.sync(n - 1, &texts[n..]).unwrap();
                session.render().unwrap();
                let t = std::time::Instant::now();
                session.sync(n - 1, &texts[n - 1..]).unwrap();
                std::hint::black_box(session.render().unwrap().after_chars);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        println!("append sync+render: {:.2} ms (median of 50)", ms[25]);
        return;
    }
    if std::env::var("STAGES").as_deref() == Ok("session") {
        // For profilers: only session renders from here on.
        time("session render", 500, || {
            session.render().unwrap().after_chars
        });
        return;
    }
    time("session render", runs, || {
        session.render().unwrap().after_chars
    });
    time("prune", runs, || {
        prune_bytes(&messages, &state, &config, boundary)
            .unwrap()
            .after_chars
    });
}
