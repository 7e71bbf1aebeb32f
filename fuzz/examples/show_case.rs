//! Prints what the structured generator makes of fuzzer inputs and how the
//! pruner answers: `cargo run --example show_case -- FILE...` (a crash
//! artifact or corpus file). With `--stats N`, builds N cases from a fixed
//! pseudo-random stream and counts the outcomes instead.

use condense_native_fuzz::{check, gen::Case};

fn outcome(case: &Case) -> &'static str {
    match check(
        case.messages.as_bytes(),
        case.state.as_bytes(),
        case.config.as_bytes(),
        case.boundary,
    ) {
        Some(p) if p.pruned => "pruned",
        Some(_) => "unchanged",
        None => "error",
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--stats") {
        let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..n {
            let data: Vec<u8> = (0..4096)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
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
            "== {file}\nmessages: {}\nstate: {}\nconfig: {}\nboundary: {:?}",
            case.messages, case.state, case.config, case.boundary
        );
        println!("outcome: {}", outcome(&case));
    }
}
