//! Reading pi session files (JSON Lines) natively, exactly as pi 1.6.0 reads
//! them, and rebuilding pi-condense's state from the entries it wrote
//! (`../shared/SESSIONS.md`). Independent of the render engine: it produces
//! JSON texts (each message as `JSON.stringify` writes it, the state in the
//! addon's shape) that the engine and the JS layer consume.
//!
//! The pieces, in the order a load runs them:
//! - `lines`: decoding, splitting and reading lines with `crate::json`'s
//!   reader (in parallel when large);
//! - `key`: JS values as `Map` keys and `===` operands (ids);
//! - `file`: header check, migration, entries, id index, active leaf;
//! - `path`: root-to-leaf paths (cycles are errors);
//! - `project` and `context`: the messages a `context` handler receives, at
//!   any path position (`ContextView`, built for replays);
//! - `date`: `new Date(iso)` for the timestamps pi derives;
//! - `condense`: pi-condense's state rebuild, incremental;
//! - `model_calls`: which leaf each model call saw;
//! - `load`: the one-shot `loadSession`.
//!
//! A replay walks it like this: `SessionFile::parse(bytes)`, `path_to(&file,
//! &Leaf::Active)`, `model_calls(&file, &path.entries)`; then, for each call
//! in order, `view.seek(leaf)` (`ContextView`) and `state.apply` for every
//! path entry up to and including the leaf (`CondenseState`; a call's leaf
//! always has an id, so its `getBranch()` is that prefix of the path),
//! re-syncing the renderer from `view.take_changed_from()` and re-reading
//! `state_json(&state)` when `state.version()` moved.

pub(crate) mod condense;
pub(crate) mod context;
pub(crate) mod date;
pub(crate) mod error;
pub(crate) mod file;
pub(crate) mod key;
pub(crate) mod lines;
pub(crate) mod load;
pub(crate) mod model_calls;
pub(crate) mod path;
pub(crate) mod project;

pub use condense::CondenseState;
pub use context::ContextView;
pub use error::SessionError;
pub use file::{Entry, SessionFile};
pub use load::{load, load_input, LoadOptions, SessionInput};
pub use model_calls::{model_calls, ModelCall};
pub use path::{path_to, Leaf};
