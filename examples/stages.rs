//! Times the native stages of a render on a corpus file (no Node):
//! scanning the bytes into records, the phases, writing the output, and a
//! kept engine's render after one appended message.
//!
//!     cargo run --release --no-default-features --example stages -- ../shared/corpus/large.json [runs] [render|all] [2.4.3|2.9.1]
//!
//! The corpus files hold a 2.4.3 state; for 2.9.1 pass a file of the same
//! members whose `state` is in 2.9.1's shape (benches/corpus.js `stateOf`).

use std::time::Instant;

use condense_native::parse_value;
use condense_native::Config;
use condense_native::Dialect;
use condense_native::Engine;
use condense_native::Log;
use condense_native::State;
use condense_native::{output_len, write_output};
use condense_native::{run_phases, Inputs, Memo};
use condense_native::{scan_array, Source};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(f());
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

/// The span of a top-level member's value in the corpus file.
fn member<'a>(file: &'a [u8], key: &str) -> &'a [u8] {
    let needle = format!("\"{key}\":");
    let at = file
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .expect("member")
        + needle.len();
    let deep = condense_native::Input {
        max_depth: 2000,
        ..condense_native::Input::BYTES
    };
    let (_, len) = condense_native::read_value(&file[at..], deep).expect("value");
    &file[at..at + len]
}

fn main() {
    let path = std::env::args().nth(1).expect("a corpus file");
    let runs: usize = std::env::args().nth(2).map_or(9, |n| n.parse().unwrap());
    let only_render = std::env::args().nth(3).as_deref() == Some("render");
    let file = std::fs::read(&path).expect("read");
    let messages = member(&file, "messages");
    let dialect = std::env::args()
        .nth(4)
        .map_or(Ok(Dialect::V2_4), |d| Dialect::parse(&d))
        .expect("dialect");
    let state = State::from_json(member(&file, "state"), dialect).unwrap();
    let config = Config::from_json(member(&file, "config"), dialect).unwrap();
    let boundary = parse_value(member(&file, "thinkingBoundaryTimestamp"))
        .ok()
        .and_then(|v| v.as_text().is_none().then(|| v.to_number()))
        .filter(|b| !b.is_nan());

    // A kept engine holding all the messages, rendered again and again.
    let engine_render = || {
        let mut engine = Engine::new(dialect);
        engine.set_config(config.clone());
        engine.set_state(state.clone());
        engine.set_boundary(boundary);
        engine.sync(0, messages, Source::Stringify).unwrap();
        engine.render().unwrap();
        time(runs, || engine.render().unwrap().order.len())
    };
    if only_render {
        println!("engine render {:.3} ms", engine_render());
        return;
    }
    let scan = time(runs, || {
        let mut log = Log::default();
        scan_array(messages, &mut log, 0, Source::Bytes).unwrap();
        log.len()
    });
    let scan_trusted = time(runs, || {
        let mut log = Log::default();
        scan_array(messages, &mut log, 0, Source::Stringify).unwrap();
        log.len()
    });
    let mut log = Log::default();
    scan_array(messages, &mut log, 0, Source::Bytes).unwrap();
    let inputs = Inputs {
        log: &log,
        text: messages,
        state: &state,
        config: &config,
        boundary,
        dialect,
    };
    let phases = time(runs, || {
        run_phases(&inputs, &mut Memo::default())
            .unwrap()
            .slots
            .len()
    });
    let mut memo = Memo::default();
    let script = run_phases(&inputs, &mut memo).unwrap();
    let write = time(runs, || {
        let mut out = Vec::with_capacity(messages.len());
        write_output(&mut out, &inputs, &memo, &script);
        (out.len(), output_len(&inputs, &memo, &script))
    });

    let render = engine_render();

    let state_bytes = member(&file, "state");
    let state_ms = time(runs, || State::from_json(state_bytes, dialect).unwrap());
    let mb = messages.len() as f64 / 1e6;
    println!("{path}: {:.2} MB, {} messages", mb, log.len());
    println!("  scan      {scan:8.2} ms  ({:.0} MB/s)", mb / scan * 1e3);
    println!(
        "  scan (JSON.stringify's) {scan_trusted:8.2} ms  ({:.0} MB/s)",
        mb / scan_trusted * 1e3
    );
    println!("  phases    {phases:8.2} ms");
    println!("  write     {write:8.2} ms");
    println!(
        "  bytes     {:8.2} ms  ({:.0} MB/s)",
        scan + phases + write,
        mb / (scan + phases + write) * 1e3
    );
    println!("  engine render (kept, nothing new) {render:8.3} ms");
    println!(
        "  state     {state_ms:8.2} ms  ({:.2} MB of JSON)",
        state_bytes.len() as f64 / 1e6
    );
}
