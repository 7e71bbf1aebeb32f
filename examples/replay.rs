//! Times a native replay of one session file under every policy and prints
//! the per-policy totals (no JS objects are made).
//!
//!   cargo run --release --no-default-features --example replay -- FILE [runs]

use std::time::Instant;

use condense_native::{replay, replay_to_json, Policy, ReplayOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args.next().expect("usage: replay FILE [runs] [policy...]");
    let runs: usize = args.next().map_or(3, |r| r.parse().expect("runs"));
    let policies: Vec<Policy> = args.map(|p| Policy::parse(&p).expect("policy")).collect();
    let bytes = std::fs::read(&file).expect("read");
    let options = ReplayOptions {
        policies: if policies.is_empty() {
            Policy::ALL.to_vec()
        } else {
            policies
        },
        ..ReplayOptions::default()
    };
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let t0 = Instant::now();
        let r = replay(&bytes, &options, None).expect("replay");
        times.push(t0.elapsed().as_secs_f64() * 1e3);
        last = Some(r);
    }
    times.sort_by(f64::total_cmp);
    let r = last.expect("a run");
    println!(
        "{file}: {} bytes, {} model calls, median of {runs}: {:.1} ms",
        bytes.len(),
        r.calls.len(),
        times[times.len() / 2]
    );
    println!("{}", String::from_utf8_lossy(&replay_to_json(&r, false)));
}
