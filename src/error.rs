use std::fmt;

/// A session file pi cannot use, or one the loader refuses to guess about
/// (`sessionfile`).
pub const INVALID_SESSION: &str = "ERR_CONDENSE_INVALID_SESSION";

/// A typed failure: `code` is stable (it becomes the JS error's `code`),
/// `message` says what and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneError {
    pub code: &'static str,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, PruneError>;

impl PruneError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn invalid_json(message: impl Into<String>) -> Self {
        Self::new("ERR_CONDENSE_INVALID_JSON", message)
    }

    pub fn not_array(found: &str) -> Self {
        Self::new(
            "ERR_CONDENSE_NOT_ARRAY",
            format!("messages must be a JSON array, found {found}"),
        )
    }

    pub fn lone_surrogate(index: usize, unit: u32) -> Self {
        Self::new(
            "ERR_CONDENSE_LONE_SURROGATE",
            format!("message {index}: string holds a lone surrogate \\u{unit:04x}, which cannot be kept exactly"),
        )
    }

    pub fn too_deep(index: usize, limit: usize) -> Self {
        Self::new(
            "ERR_CONDENSE_TOO_DEEP",
            format!("message {index}: nesting deeper than {limit} levels"),
        )
    }

    /// A message field of a type the reference cannot process (it throws).
    pub fn bad_message(index: usize, field: &str, problem: &str) -> Self {
        Self::new(
            "ERR_CONDENSE_INVALID_MESSAGE",
            format!("message {index}: {field} {problem}"),
        )
    }

    pub fn bad_state(what: impl fmt::Display) -> Self {
        Self::new("ERR_CONDENSE_INVALID_STATE", format!("state: {what}"))
    }

    pub fn bad_config(what: impl fmt::Display) -> Self {
        Self::new("ERR_CONDENSE_INVALID_CONFIG", format!("config: {what}"))
    }

    pub fn bad_argument(what: impl fmt::Display) -> Self {
        Self::new("ERR_CONDENSE_INVALID_ARGUMENT", what.to_string())
    }
}

impl fmt::Display for PruneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for PruneError {}
