//! Prints what the structured generator makes of fuzzer inputs and how the
//! pruner answers: `cargo run --example show_case -- FILE...` (a crash
//! artifact or corpus file of `prune_structured`). With `--stats N`, builds
//! N cases from a fixed pseudo-random stream and counts the outcomes
//! instead; `--engine-stats N` runs N `engine_sync` cases the same way and
//! sums how far they got (renders, failed ones, pruned ones, edits reused
//! from an earlier render). `--engine FILE...` replays `engine_sync` inputs
//! (a crash artifact) with every step printed.

use condense_native_fuzz::{check, engine_sync, gen::Case};

/// `n` blocks of pseudo-random bytes (xorshift, fixed seed).
fn blocks(n: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n).map(move |_| {
        (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    })
}

fn outcome(case: &Case) -> &'static str {
    match check(
        case.messages.as_bytes(),
        case.state.as_bytes(),
        case.config.as_bytes(),
        case.boundary,
        case.dialect,
    ) {
        Some(p) if p.pruned => "pruned",
        Some(_) => "unchanged",
        None => "error",
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--engine") {
        std::env::set_var("ENGINE_SYNC_TRACE", "1");
        for file in &args[1..] {
            let data = std::fs::read(file).expect("readable file");
            println!("== {file}: {:?}", engine_sync::run(&data));
        }
        return;
    }
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    if args.first().map(String::as_str) == Some("--engine-stats") {
        let mut sum = engine_sync::Tally::default();
        for data in blocks(n) {
            if let Ok(t) = engine_sync::run(&data) {
                sum += t;
            }
        }
        println!("{sum:?}");
        return;
    }
    if args.first().map(String::as_str) == Some("--stats") {
        let mut counts = std::collections::BTreeMap::new();
        for data in blocks(n) {
            let case = Case::build(&data).expect("case");
            *counts.entry(outcome(&case)).or_insert(0usize) += 1;
        }
        println!("{counts:?}");
        return;
    }
    for file in args {
        let data = std::fs::read(&file).expect("readable file");
        let case = Case::build(&data).expect("case");
        println!(
            "== {file}\ndialect: {}\nmessages: {}\nstate: {}\nconfig: {}\nboundary: {:?}",
            case.dialect.release(),
            case.messages,
            case.state,
            case.config,
            case.boundary
        );
        println!("outcome: {}", outcome(&case));
    }
}
