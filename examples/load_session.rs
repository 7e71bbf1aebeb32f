//! Times the native session load, phase by phase, on one file: what a
//! replay pays before its first render (no JS objects are made).
//!
//!   cargo run --release --no-default-features --example load_session -- FILE [runs]

use std::time::Instant;

use condense_native::{frontier_json, state_json};
use condense_native::{
    model_calls, path_to, CondenseState, ContextView, Dialect, Leaf, SessionFile,
};

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args.next().expect("usage: load_session FILE [runs]");
    let runs: usize = args.next().map_or(5, |r| r.parse().expect("runs"));
    let bytes = std::fs::read(&file).expect("read");
    let mut rows: Vec<[f64; 6]> = Vec::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        let session = SessionFile::parse(&bytes[..]).expect("parse");
        let t1 = Instant::now();
        let path = path_to(&session, &Leaf::Active).expect("path");
        let mut view = ContextView::new(&session, &path.entries);
        view.finish().expect("view");
        let t2 = Instant::now();
        let mut state = CondenseState::new(Dialect::V2_4);
        for &e in path.branch() {
            state.apply(session.entry(e as usize)).expect("state");
        }
        let t3 = Instant::now();
        let calls = model_calls(&session, &path.entries);
        let t4 = Instant::now();
        let messages = view.to_json();
        let state_text = state_json(&state);
        let frontier = frontier_json(&state);
        let t5 = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        rows.push([
            ms(t0, t1),
            ms(t1, t2),
            ms(t2, t3),
            ms(t3, t4),
            ms(t4, t5),
            ms(t0, t5),
        ]);
        std::hint::black_box((
            calls.len(),
            messages.len(),
            state_text.len(),
            frontier.len(),
        ));
    }
    let median = |i: usize| {
        let mut v: Vec<f64> = rows.iter().map(|r| r[i]).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "{file}: {} bytes, median of {runs}: parse {:.1} ms, context {:.1} ms, state {:.1} ms, model calls {:.1} ms, JSON texts {:.1} ms, total {:.1} ms",
        bytes.len(),
        median(0),
        median(1),
        median(2),
        median(3),
        median(4),
        median(5)
    );
}
