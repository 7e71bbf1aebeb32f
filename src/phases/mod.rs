//! The four phases of SPEC section 3, run in order over the message list.
//! Untouched messages stay as they came (`Val::Raw`, a tape position, or
//! `Val::Ref`, a session's kept message); a phase that edits one replaces it
//! with a shallow owned copy and records what it did in the message's `Edit`,
//! which is the edit script the appliers and the session cache work from.

mod chain;
mod purge;
mod stub;
mod thinking;

use std::borrow::Cow;

use crate::config::Config;
use crate::error::{PruneError, Result};
use crate::state::State;
use crate::value::{Ty, Val, V};

/// What each phase changed, for reports.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub stubbed: u32,
    pub purged_args: u32,
    pub chain_dropped: u32,
    pub chain_inserted: u32,
    pub final_thinking_stripped: u32,
    pub thinking_stripped: u32,
}

/// What the phases did to one input message (all false/empty: untouched).
#[derive(Debug, Default, Clone, PartialEq, Eq, Hash)]
pub struct Edit {
    pub stubbed: bool,
    /// Content indices (before any thinking was removed) of toolCall blocks
    /// whose arguments were purged, with the purged arguments' length.
    pub purged: Vec<(u32, u32)>,
    pub final_thinking_stripped: bool,
    pub thinking_stripped: bool,
}

impl Edit {
    pub fn is_none(&self) -> bool {
        *self == Edit::default()
    }
}

/// `msg.role`, read once per message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    ToolResult,
    Custom,
    Other,
}

impl Role {
    pub fn of(m: V<'_, '_>) -> Role {
        match m.get("role").and_then(|r| r.as_str()) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("toolResult") => Role::ToolResult,
            Some("custom") => Role::Custom,
            _ => Role::Other,
        }
    }
}

/// One message of the output: where it came from and what was done to it.
#[derive(Clone)]
pub struct Msg<'t> {
    pub val: Val<'t>,
    /// The phases never change a message's role.
    pub role: Role,
    /// Its index in the input; None for an inserted chain block.
    pub src: Option<usize>,
    pub edit: Edit,
}

impl<'t> Msg<'t> {
    pub fn view(&self) -> V<'_, 't> {
        self.val.view()
    }
}

pub struct Outcome<'t> {
    pub messages: Vec<Msg<'t>>,
    pub changed: bool,
    pub stats: Stats,
}

pub fn run<'t>(
    input: Vec<Val<'t>>,
    state: &State,
    config: &Config,
    boundary: Option<f64>,
) -> Result<Outcome<'t>> {
    let mut msgs: Vec<Msg<'t>> = input
        .into_iter()
        .enumerate()
        .map(|(i, val)| Msg {
            role: Role::of(val.view()),
            val,
            src: Some(i),
            edit: Edit::default(),
        })
        .collect();
    let mut stats = Stats::default();
    // The reference reads `msg.role` of every element first: null throws.
    if let Some(i) = msgs.iter().position(|m| m.view().ty() == Ty::Null) {
        return Err(PruneError::bad_message(
            i,
            "element",
            "is null, not a message object",
        ));
    }
    let mut changed = stub::run(&mut msgs, state, config, &mut stats)?;
    if let Some(purge) = &config.purge {
        changed |= purge::run(&mut msgs, purge, &mut stats)?;
    }
    if let Some(chain) = &config.chain {
        if state.has_chain_entries() {
            msgs = chain::run(msgs, state, chain, &mut stats)?;
            changed = true;
        }
    }
    if let Some(thinking) = &config.thinking {
        changed |= thinking::run(&mut msgs, thinking, boundary, &mut stats)?;
    }
    Ok(Outcome {
        messages: msgs,
        changed,
        stats,
    })
}

/// The message as an owned object whose properties can be replaced.
fn owned_object<'a, 't>(m: &'a mut Val<'t>) -> &'a mut Vec<(Cow<'t, str>, Val<'t>)> {
    m.make_owned();
    match m {
        Val::Obj(entries) => entries,
        _ => unreachable!("owned_object is only called on objects"),
    }
}

/// The message with every `thinking` block removed from its content array;
/// None when there is none to remove (content that is not an array has
/// none). `index` names the message in errors.
fn without_thinking<'t>(m: &Val<'t>, index: usize) -> Result<Option<Val<'t>>> {
    let v = m.view();
    let Some(content) = v.get("content").filter(|c| c.ty() == Ty::Arr) else {
        return Ok(None);
    };
    let mut kept = Vec::new();
    let mut removed = false;
    for (j, block) in content.elements().enumerate() {
        if block.ty() == Ty::Null {
            return Err(PruneError::bad_message(
                index,
                &format!("content[{j}]"),
                "is null",
            ));
        }
        if block.get("type").is_some_and(|t| t.is_str("thinking")) {
            removed = true;
        } else {
            kept.push(block.to_val());
        }
    }
    if !removed {
        return Ok(None);
    }
    let mut out = m.clone();
    Val::set(owned_object(&mut out), "content", Val::Arr(kept));
    Ok(Some(out))
}

/// Shared helpers for the phase tests: each phase is driven through the
/// whole pipeline (`prune_bytes`) with hand-written JSON.
#[cfg(test)]
pub(crate) mod testing {
    use super::Stats;
    use crate::config::Config;
    use crate::error::{PruneError, Result};
    use crate::prune::{prune_bytes, Pruned};
    use crate::state::State;

    /// JavaScript's `s.length`: UTF-16 code units.
    pub fn units(s: &str) -> usize {
        s.encode_utf16().count()
    }

    pub fn run(messages: &str, state: &str, config: &str, boundary: Option<f64>) -> Result<Pruned> {
        let state = State::from_json(state.as_bytes())?;
        let config = Config::from_json(config.as_bytes())?;
        prune_bytes(messages.as_bytes(), &state, &config, boundary)
    }

    /// The output array as text.
    pub fn text(p: &Pruned) -> String {
        String::from_utf8(p.messages.clone().expect("a pruned result has messages")).unwrap()
    }

    /// Runs `messages` (spelled as JSON.stringify spells it, so its length
    /// is `beforeChars`) and checks a changed result: the exact output
    /// text, both sizes and the stats.
    #[track_caller]
    pub fn expect_pruned(
        messages: &str,
        state: &str,
        config: &str,
        boundary: Option<f64>,
        expected: &str,
        stats: Stats,
    ) -> Pruned {
        let p = run(messages, state, config, boundary).expect("no error");
        assert!(p.pruned, "pruned");
        assert_eq!(text(&p), expected);
        assert_eq!(p.before_chars, units(messages), "beforeChars");
        assert_eq!(p.after_chars, units(expected), "afterChars");
        assert_eq!(p.stats, stats);
        p
    }

    /// Checks a no-op: no new buffer, the 0/0 sentinel, no stats.
    #[track_caller]
    pub fn expect_unchanged(messages: &str, state: &str, config: &str, boundary: Option<f64>) {
        let p = run(messages, state, config, boundary).expect("no error");
        assert!(!p.pruned, "not pruned");
        assert!(p.messages.is_none());
        assert_eq!((p.before_chars, p.after_chars), (0, 0));
        assert_eq!(p.stats, Stats::default());
    }

    /// Checks a typed error with `code` whose message mentions `needle`.
    #[track_caller]
    pub fn expect_error(
        messages: &str,
        state: &str,
        config: &str,
        boundary: Option<f64>,
        code: &str,
        needle: &str,
    ) -> PruneError {
        let err = match run(messages, state, config, boundary) {
            Ok(p) => panic!("expected {code}, got pruned={}", p.pruned),
            Err(e) => e,
        };
        assert_eq!(err.code, code, "{err}");
        assert!(err.message.contains(needle), "{err}");
        err
    }

    /// The plain stub message as JSON.stringify writes it.
    pub fn plain_stub(id: &str, tool: &str, ts: &str, reference: &str) -> String {
        format!(
            concat!(
                r#"{{"role":"toolResult","toolCallId":"{}","toolName":"{}","content":[{{"type":"text","#,
                r#""text":"[Summarized in pruner summary, ref `{}`. Use context_tree_query to retrieve full output.]"}}],"#,
                r#""isError":false,"timestamp":{}}}"#
            ),
            id, tool, reference, ts
        )
    }
}
