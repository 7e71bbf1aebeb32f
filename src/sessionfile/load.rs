//! The one-shot load behind `loadSession` (SESSIONS.md part D): the handler
//! view at a leaf as one JSON array text, the state rebuilt over that leaf's
//! branch in the dialect's shape, and the frontier.

use std::borrow::Cow;

use super::condense::{frontier_json, state_json, CondenseState, Dialect};
use super::context::ContextView;
use super::error::{ErrorKind, Result, SessionError};
use super::file::SessionFile;
use super::path::{path_to, Leaf};

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
    pub message_count: usize,
    /// The state object (B.6).
    pub state: Vec<u8>,
    /// The frontier object, or `null`.
    pub frontier: Vec<u8>,
}

/// Loads a session file's bytes.
pub fn load<'a>(input: impl Into<Cow<'a, [u8]>>, options: &LoadOptions<'_>) -> Result<Loaded> {
    let file = SessionFile::parse(input)?;
    let leaf = match &options.leaf_id {
        None => Leaf::Active,
        Some(id) => Leaf::Id(super::json::JsKey::str(id)),
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
        message_count: view.messages().len(),
        state: state_json(&state),
        frontier: frontier_json(&state),
    })
}

/// Reads and loads a file.
pub fn load_path(path: &std::path::Path, options: &LoadOptions<'_>) -> Result<Loaded> {
    let bytes = std::fs::read(path).map_err(|e| {
        SessionError::new(
            ErrorKind::Io,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    load(bytes, options)
}
