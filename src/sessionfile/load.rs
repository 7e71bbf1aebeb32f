//! The one-shot load behind `loadSession` (SESSIONS.md part D): the handler
//! view at a leaf as one JSON array text, the state rebuilt over that leaf's
//! branch in the dialect's shape, and the frontier.

use std::borrow::Cow;

use super::condense::{frontier_json, state_json, CondenseState, Dialect};
use super::context::ContextView;
use super::error::{Result, SessionError};
use super::file::SessionFile;
use super::path::{path_to, Leaf};
use crate::error::Code;

/// What to load.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions<'k> {
    /// None: the active leaf.
    pub leaf_id: Option<Cow<'k, str>>,
    pub dialect: Dialect,
}

/// The loaded session as JSON texts.
#[derive(Debug)]
pub struct Loaded {
    /// `JSON.stringify(messages)` of the handler view.
    pub messages: Vec<u8>,
    /// The state object (B.6).
    pub state: Vec<u8>,
    /// The frontier object, or `null`.
    pub frontier: Vec<u8>,
}

/// Where a session comes from: bytes the caller holds, or a file to read.
pub enum SessionInput<'a> {
    Bytes(Cow<'a, [u8]>),
    Path(Cow<'a, str>),
}

impl SessionInput<'_> {
    /// The session's bytes (a path's file read now).
    pub fn bytes(&self) -> crate::error::Result<Cow<'_, [u8]>> {
        match self {
            SessionInput::Bytes(b) => Ok(Cow::Borrowed(b)),
            SessionInput::Path(p) => crate::error::read_file(p).map(Cow::Owned),
        }
    }
}

/// Loads a session file's bytes.
pub fn load<'a>(input: impl Into<Cow<'a, [u8]>>, options: &LoadOptions<'_>) -> Result<Loaded> {
    let file = SessionFile::parse(input)?;
    let leaf = match &options.leaf_id {
        None => Leaf::Active,
        Some(id) => Leaf::Id(super::key::JsKey::str(id)),
    };
    let path = path_to(&file, &leaf)?;
    let mut view = ContextView::new(&file, &path.entries);
    view.finish()?;
    let mut state = CondenseState::new(options.dialect);
    for &e in path.branch() {
        state.apply(file.entry(e as usize))?;
    }
    Ok(Loaded {
        messages: view.to_json(),
        state: state_json(&state),
        frontier: frontier_json(&state),
    })
}

/// Reads and loads a file.
pub fn load_path(path: &std::path::Path, options: &LoadOptions<'_>) -> Result<Loaded> {
    let bytes = std::fs::read(path)
        .map_err(|e| SessionError::new(Code::Io, format!("cannot read {}: {e}", path.display())))?;
    load(bytes, options)
}

/// A load as the JS API asks for it: `leaf_id` (None: the active leaf)
/// and the dialect by name; the answer as one JSON text, `{"messages",
/// "state", "frontier"}`, or the error as the replay reports it. A panic is
/// an error.
pub fn load_input(
    input: SessionInput<'_>,
    leaf_id: Option<String>,
    dialect: Option<String>,
) -> crate::error::Result<String> {
    let loaded = load_guarded(input, leaf_id, dialect).map_err(SessionError::located)?;
    let mut out = Vec::with_capacity(loaded.messages.len() + loaded.state.len() + 64);
    crate::json::members::object(&mut out, |o| {
        o.raw("messages", |w| w.extend_from_slice(&loaded.messages))
            .raw("state", |w| w.extend_from_slice(&loaded.state))
            .raw("frontier", |w| w.extend_from_slice(&loaded.frontier));
    });
    Ok(crate::json::text::utf8_string(out))
}

fn load_guarded(
    input: SessionInput<'_>,
    leaf_id: Option<String>,
    dialect: Option<String>,
) -> Result<Loaded> {
    let run = || {
        let options = LoadOptions {
            leaf_id: leaf_id.map(Into::into),
            dialect: match dialect {
                None => Dialect::default(),
                Some(d) => Dialect::parse(&d)
                    .map_err(|e| SessionError::new(Code::InvalidArgument, e.message))?,
            },
        };
        match input {
            SessionInput::Bytes(b) => load(b, &options),
            SessionInput::Path(p) => load_path(p.as_ref().as_ref(), &options),
        }
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|_| {
        Err(SessionError::new(
            Code::InvalidSession,
            "internal error while loading the session (a bug: please report it with the file)",
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::read::{read, Input};

    fn canonical(text: &[u8]) -> bool {
        read(text, Input::BYTES).is_ok_and(|t| t.canonical)
    }

    /// Damaged copies of a real session (bytes flipped, cut, repeated):
    /// every load is a typed error or canonical JSON texts.
    #[test]
    fn damaged_files_give_typed_errors_or_canonical_json() {
        let seed = include_bytes!("../../__test__/fixtures/sessionfile/flushes.jsonl");
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut ok = 0;
        for _ in 0..3000 {
            let mut bytes = seed.to_vec();
            for _ in 0..1 + next() % 6 {
                let at = (next() as usize) % bytes.len();
                match next() % 4 {
                    0 => bytes[at] = next() as u8,
                    1 => bytes.truncate(at.max(1)),
                    2 => bytes.insert(at, b"{}[]\",:\n\\"[(next() % 9) as usize]),
                    _ => {
                        let end = (at + (next() as usize) % 64).min(bytes.len());
                        let piece = bytes[at..end].to_vec();
                        bytes.splice(at..at, piece);
                    }
                }
            }
            for dialect in [Dialect::V2_4, Dialect::V2_9] {
                let options = LoadOptions {
                    leaf_id: None,
                    dialect,
                };
                match load(&bytes[..], &options) {
                    Ok(l) => {
                        assert!(
                            canonical(&l.messages) && canonical(&l.state) && canonical(&l.frontier)
                        );
                        ok += 1;
                    }
                    Err(e) => assert!(e.code().as_str().starts_with("ERR_CONDENSE_"), "{e}"),
                }
            }
        }
        assert!(ok > 1000, "{ok}");
    }
}
