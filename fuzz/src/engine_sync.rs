//! The kept engine against the stateless path. A generated conversation is
//! fed to `Engine` the way the JS side feeds it: `sync` from some position
//! (an append, a re-send of the tail, a switch to another branch), indexer
//! answers or a new state between renders, flushes and boundary changes.
//! After each step the engine's render, rebuilt into bytes by `Receiver`,
//! must equal a stateless `prune_bytes` of the same messages with the same
//! state, config and boundary: the same error, or the same bytes, sizes,
//! stats, diagnostics and frontier. `run` panics on the first difference.

use arbitrary::{Result, Unstructured};
use condense_native::parse_value;
use condense_native::prune_bytes;
use condense_native::Config;
use condense_native::Dialect;
use condense_native::Engine;
use condense_native::Json;
use condense_native::Source;
use condense_native::State;

use crate::gen::{Gen, J};
use crate::replay::Receiver;

/// The JSON array of some message texts.
pub fn array_of(messages: &[String]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + messages.iter().map(|m| m.len() + 1).sum::<usize>());
    out.push(b'[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(m.as_bytes());
    }
    out.push(b']');
    out
}

/// `Source::Stringify` (the unchecked scan the JS side's sync uses) when
/// every message is spelled as `JSON.stringify` would spell it, which is
/// what that source promises; `Source::Bytes` otherwise.
fn source_of(messages: &[String]) -> Source {
    let canonical = |m: &String| {
        condense_native::parse_value(m.as_bytes()).is_ok_and(|v| v.to_json() == m.as_bytes())
    };
    if messages.iter().all(canonical) {
        Source::Stringify
    } else {
        Source::Bytes
    }
}

/// How far a case got, for judging the generator (`examples/show_case.rs
/// --engine-stats`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub renders: usize,
    pub failed: usize,
    pub pruned: usize,
    /// Edits a render named by an id sent by an earlier render.
    pub reused_edits: usize,
    pub failed_syncs: usize,
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, o: Tally) {
        self.renders += o.renders;
        self.failed += o.failed;
        self.pruned += o.pruned;
        self.reused_edits += o.reused_edits;
        self.failed_syncs += o.failed_syncs;
    }
}

/// What the driver holds beside the engine: the messages the engine holds
/// and the inputs a stateless call needs to give the same answer.
pub struct Mirror {
    pub tally: Tally,
    /// Prints every step to stderr (`ENGINE_SYNC_TRACE=1`), to read a crash
    /// artifact: `cargo run --example show_case -- --engine FILE`.
    pub trace: bool,
    pub dialect: Dialect,
    pub engine: Engine,
    pub held: Vec<String>,
    pub state: State,
    pub config: Config,
    pub boundary: Option<f64>,
    pub receiver: Receiver,
}

impl Mirror {
    pub fn new(dialect: Dialect, config: Config, state: Option<State>) -> Self {
        let mut engine = Engine::new(dialect);
        engine.set_config(config.clone());
        let state = match state {
            Some(s) => {
                engine.set_state(s.clone());
                s
            }
            None => State::answers(dialect),
        };
        Mirror {
            tally: Tally::default(),
            trace: std::env::var_os("ENGINE_SYNC_TRACE").is_some(),
            dialect,
            engine,
            held: Vec::new(),
            state,
            config,
            boundary: None,
            receiver: Receiver::default(),
        }
    }

    /// Re-sends the messages from `from` on; a failed sync must be the
    /// stateless call's failure and leave the engine as it was.
    pub fn sync(&mut self, from: usize, tail: &[String]) {
        if self.trace {
            eprintln!(
                "sync from {from}: {}",
                String::from_utf8_lossy(&array_of(tail))
            );
        }
        let mut next = self.held[..from].to_vec();
        next.extend_from_slice(tail);
        match self.engine.sync(from, &array_of(tail), source_of(tail)) {
            Ok(()) => self.held = next,
            Err(e) => {
                self.tally.failed_syncs += 1;
                let whole = prune_bytes(
                    &array_of(&next),
                    &self.state,
                    &self.config,
                    self.boundary,
                    self.dialect,
                );
                match whole {
                    Err(w) => assert_eq!(e, w, "sync from {from} failed unlike the stateless call"),
                    Ok(_) => {
                        panic!("sync from {from} failed ({e:?}) where the stateless call succeeds")
                    }
                }
                assert_eq!(
                    self.engine.len(),
                    self.held.len(),
                    "a failed sync changed the engine"
                );
            }
        }
    }

    pub fn set_boundary(&mut self, b: Option<f64>) {
        if self.trace {
            eprintln!("set_boundary {b:?}");
        }
        self.engine.set_boundary(b);
        self.boundary = b;
    }

    pub fn set_state(&mut self, s: State) {
        if self.trace {
            eprintln!("set_state {s:?}");
        }
        self.engine.set_state(s.clone());
        self.state = s;
    }

    pub fn answer(
        &mut self,
        key: &[u8],
        summarized: bool,
        record: Option<Json>,
        short_ref: Option<Json>,
    ) {
        if self.trace {
            let show = |j: &Option<Json>| {
                j.as_ref().map_or("none".into(), |r| {
                    String::from_utf8_lossy(&r.to_json()).into_owned()
                })
            };
            eprintln!(
                "answer {}: summarized {summarized}, record {}, shortRef {}",
                String::from_utf8_lossy(key),
                show(&record),
                show(&short_ref)
            );
        }
        self.engine
            .answer(key, summarized, record.clone(), short_ref.clone());
        self.state.answer(key, summarized, record, short_ref);
    }

    pub fn answer_legacy(&mut self, id: &[u8], legacy: bool) {
        if self.trace {
            eprintln!("answer_legacy {}: {legacy}", String::from_utf8_lossy(id));
        }
        self.engine.answer_legacy(id, legacy);
        self.state.answer_legacy(id, legacy);
    }

    /// Flushes (2.4.3): the boundary the engine moves to must be what a
    /// stateless render of the same messages (plus the closing one) reports
    /// as the next boundary, or the current one when there is none.
    pub fn flush(&mut self, closing: Option<&str>) {
        if self.trace {
            eprintln!("flush, closing {closing:?}");
        }
        let mut with = self.held.clone();
        with.extend(closing.map(str::to_string));
        let stateless = prune_bytes(
            &array_of(&with),
            &self.state,
            &self.config,
            self.boundary,
            self.dialect,
        );
        let Ok(b) = self.engine.flush(closing.map(str::as_bytes)) else {
            return;
        };
        if let Ok(p) = stateless {
            let want = p
                .frontier
                .next_thinking_strip_boundary_timestamp
                .or(self.boundary);
            // As numbers (see `compare` on -0).
            assert_eq!(b, want, "flush moved the boundary to {b:?}, not {want:?}");
        }
        self.boundary = b;
    }

    /// Renders and compares with the stateless call.
    pub fn compare(&mut self) {
        let bytes = array_of(&self.held);
        let stateless = prune_bytes(
            &bytes,
            &self.state,
            &self.config,
            self.boundary,
            self.dialect,
        );
        let kept = self.engine.render();
        if self.trace {
            let r = kept.as_ref();
            eprintln!(
                "render of {} messages: {:?}",
                self.held.len(),
                r.map(|r| (
                    r.pruned,
                    r.before_chars,
                    r.after_chars,
                    &r.order,
                    &r.fresh,
                    &r.evicted
                ))
            );
        }
        let show = || String::from_utf8_lossy(&bytes).into_owned();
        self.tally.renders += 1;
        let (r, p) = match (kept, stateless) {
            (Err(a), Err(b)) => {
                self.tally.failed += 1;
                assert_eq!(
                    a,
                    b,
                    "the kept render fails unlike the stateless call on {}",
                    show()
                );
                return;
            }
            (Ok(r), Ok(p)) => (r, p),
            (Ok(_), Err(e)) => panic!(
                "the stateless call fails ({e:?}) but the kept render answers, on {}",
                show()
            ),
            (Err(e), Ok(_)) => panic!(
                "the kept render fails ({e:?}) but the stateless call answers, on {}",
                show()
            ),
        };
        self.receiver.receive(&r);
        let ctx = || format!("messages {}", show());
        assert_eq!(r.pruned, p.pruned, "pruned; {}", ctx());
        assert_eq!(r.stats, p.stats, "stats; {}", ctx());
        assert_eq!(r.diagnostics, p.diagnostics, "diagnostics; {}", ctx());
        // Compared as numbers: a boundary set to -0 after 0 is kept as 0
        // (`Engine::set_boundary` compares with `!=`), which only the echo
        // in the frontier shows (tests/findings.rs).
        assert_eq!(r.frontier, p.frontier, "frontier; {}", ctx());
        if p.pruned {
            self.tally.pruned += 1;
            self.tally.reused_edits += r
                .order
                .iter()
                .filter(|&&v| v < 0 && !r.fresh.contains(&((-(v as i64) - 1) as u32)))
                .count();
            // The output first: where it differs says more than a size.
            let (out, len) = self.receiver.output(&r, &bytes, self.dialect);
            let want = p.messages.as_deref().expect("a pruned answer has bytes");
            if self.trace && out != want {
                eprintln!("kept output: {}", String::from_utf8_lossy(&out));
                eprintln!("stateless output: {}", String::from_utf8_lossy(want));
            }
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(want),
                "output; {}",
                ctx()
            );
            assert_eq!(len, p.after_chars, "the applied output's length; {}", ctx());
        }
        assert_eq!(
            (r.before_chars, r.after_chars),
            (p.before_chars, p.after_chars),
            "sizes; {}",
            ctx()
        );
    }
}

fn value(j: &J) -> Option<Json> {
    parse_value(j.to_json(false).as_bytes()).ok()
}

/// Runs one generated case; panics on a difference.
pub fn run(data: &[u8]) -> Result<Tally> {
    let mut u = Unstructured::new(data);
    let dialect = if u.arbitrary()? {
        Dialect::V2_9
    } else {
        Dialect::V2_4
    };
    let hostile = u.int_in_range(0u8..=99)? < 25;
    let mut g = Gen::new(&mut u, hostile, dialect);
    let spaced = g.pct(5)?;
    let n = g.small(30)?;
    let main = (0..n)
        .map(|_| Ok(g.message()?.to_json(spaced)))
        .collect::<Result<Vec<_>>>()?;
    let m = g.small(8)?;
    let branch = (0..m)
        .map(|_| Ok(g.message()?.to_json(spaced)))
        .collect::<Result<Vec<_>>>()?;
    let Ok(config) = Config::from_json(g.config()?.to_json(false).as_bytes(), dialect) else {
        return Ok(Tally::default());
    };
    // A host either hands over a state object (PruneSession, prune) or
    // answers per key from its indexer (the drop-ins).
    let answers = g.pct(40)?;
    let state = if answers {
        None
    } else {
        match State::from_json(g.state()?.to_json(false).as_bytes(), dialect) {
            Ok(s) => Some(s),
            Err(_) => return Ok(Tally::default()),
        }
    };
    let mut mirror = Mirror::new(dialect, config, state);
    if dialect == Dialect::V2_4 {
        let b = g.boundary()?.filter(|b| !b.is_nan());
        mirror.set_boundary(b);
    }
    let steps = g.small(24)?;
    for _ in 0..steps {
        let held = mirror.held.len() as u32;
        match g.small(11)? {
            // Append or re-send: the tail from `from` is the main line's.
            0..=5 => {
                let from = g.small(held)? as usize;
                let start = from.min(main.len());
                let to = g.u.int_in_range(start..=main.len())?;
                mirror.sync(from, &main[start..to]);
            }
            // Switch to another branch from some position.
            6 => {
                let from = g.small(held)? as usize;
                let k = g.small(branch.len() as u32)? as usize;
                mirror.sync(from, &branch[..k]);
            }
            // The indexer learned something (a flush), or a new state.
            7 | 8 => {
                if answers {
                    for _ in 0..=g.small(3)? {
                        let key = g.id_key()?;
                        if dialect == Dialect::V2_9 && g.pct(20)? {
                            let legacy = g.u.arbitrary()?;
                            mirror.answer_legacy(key.as_bytes(), legacy);
                            continue;
                        }
                        let summarized = g.pct(75)?;
                        let record = if g.pct(85)? {
                            value(&g.record(&key)?)
                        } else {
                            None
                        };
                        let short_ref = if g.pct(60)? {
                            Some(Json::str(&format!("t{}", g.small(5)?)))
                        } else {
                            None
                        };
                        mirror.answer(key.as_bytes(), summarized, record, short_ref);
                    }
                } else if let Ok(s) =
                    State::from_json(g.state()?.to_json(false).as_bytes(), dialect)
                {
                    mirror.set_state(s);
                }
            }
            9 if dialect == Dialect::V2_4 => {
                let closing = if g.pct(30)? {
                    Some(g.message()?.to_json(false))
                } else {
                    None
                };
                mirror.flush(closing.as_deref());
            }
            10 if dialect == Dialect::V2_4 => {
                let b = g.boundary()?.filter(|b| !b.is_nan());
                mirror.set_boundary(b);
            }
            _ => {}
        }
        if g.pct(80)? {
            mirror.compare();
        }
    }
    mirror.compare();
    Ok(mirror.tally)
}
