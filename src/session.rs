//! The incremental path: a session keeps the host's conversation as owned
//! message trees between renders. The host re-sends only the messages from
//! the first one that no longer matches; a render runs the phases over the
//! kept messages in place and returns an edit script in which edits already
//! sent by an earlier render are named by id instead of re-serialized.
//! Sizes come from the lengths recorded when each message was indexed.

use crate::config::Config;
use crate::error::{PruneError, Result};
use crate::frontier::compute_thinking_boundary;
use crate::index::{parse_owned, TextFlags};
use crate::jsjson::lone::{holds_stand_ins, with_lone_mode};
use crate::jsjson::utf16_len;
use crate::output::{array_len, script, EditCache};
use crate::phases;
use crate::prune::{assistant_timestamps, frontier_of, Pruned};
use crate::state::State;
use crate::value::{Val, V};

#[derive(Default)]
pub struct Session {
    config: Config,
    state: State,
    boundary: Option<f64>,
    log: Vec<Val<'static>>,
    /// JSON.stringify(log[i]).length.
    lens: Vec<usize>,
    body: usize,
    flags: Vec<TextFlags>,
    cache: EditCache,
}

impl Session {
    pub fn set_config(&mut self, config: Config) {
        self.config = config;
        self.cache.clear();
    }

    pub fn set_state(&mut self, state: State) {
        self.state = state;
        self.cache.clear();
    }

    pub fn set_boundary(&mut self, boundary: Option<f64>) {
        self.boundary = boundary;
    }

    pub fn len(&self) -> usize {
        self.log.len()
    }

    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// Replaces the kept messages from `from` on with `messages`, each the
    /// JSON.stringify text of one message. All of them parse, or nothing
    /// changes.
    pub fn sync<T: AsRef<[u8]>>(&mut self, from: usize, messages: &[T]) -> Result<()> {
        if from > self.log.len() {
            return Err(PruneError::bad_argument(format!(
                "session sync from {from}, but only {} messages are kept",
                self.log.len()
            )));
        }
        let mut parsed = Vec::with_capacity(messages.len());
        for (k, text) in messages.iter().enumerate() {
            let text = text.as_ref();
            let (val, mut flags) = parse_owned(text, &format!("message {}", from + k))?;
            flags.stand_ins |= holds_stand_ins(text);
            parsed.push((val, utf16_len(text), flags));
        }
        self.log.truncate(from);
        self.lens.truncate(from);
        self.flags.truncate(from);
        self.cache.forget_from(from);
        for (val, len, flags) in parsed {
            self.log.push(val);
            self.lens.push(len);
            self.flags.push(flags);
        }
        self.body = self.lens.iter().sum();
        Ok(())
    }

    fn lone_mode(&self) -> Result<bool> {
        let mut parts = vec![self.state.flags, self.config.flags];
        parts.extend(
            self.flags
                .iter()
                .filter(|f| f.lone_surrogates || f.stand_ins),
        );
        TextFlags::lone_mode(&parts)
    }

    /// Prunes the kept messages; the result carries an edit script.
    pub fn render(&mut self) -> Result<Pruned> {
        let lone = self.lone_mode()?;
        with_lone_mode(lone, || {
            let log = &self.log;
            let input: Vec<Val<'_>> = log.iter().map(Val::Ref).collect();
            let outcome = phases::run(input, &self.state, &self.config, self.boundary)?;
            let frontier = frontier_of(log.iter().map(V::of), &self.config, self.boundary);
            let mut pruned = Pruned::unchanged(frontier, outcome.stats);
            if !outcome.changed {
                return Ok(pruned);
            }
            let s = script(&outcome.messages, &self.lens, &mut self.cache);
            pruned.pruned = true;
            pruned.before_chars = array_len(log.len(), self.body);
            pruned.after_chars = s.after;
            pruned.script = Some(s);
            Ok(pruned)
        })
    }

    /// Advances the thinking boundary over the kept assistant timestamps
    /// plus the not-yet-kept closing message (SPEC 6) and returns it.
    pub fn flush(&mut self, closing: Option<&[u8]>) -> Result<Option<f64>> {
        let Some(thinking) = &self.config.thinking else {
            return Ok(self.boundary);
        };
        let closing = closing
            .map(|c| parse_owned(c, "closing message"))
            .transpose()?;
        let mut stamps = assistant_timestamps(self.log.iter().map(V::of));
        if let Some((msg, _)) = &closing {
            stamps.extend(assistant_timestamps(std::iter::once(V::of(msg))));
        }
        let next = compute_thinking_boundary(&stamps, thinking.keep_last_turns, self.boundary);
        if next.is_some_and(|b| !b.is_nan()) {
            self.boundary = next;
        }
        Ok(self.boundary)
    }
}
