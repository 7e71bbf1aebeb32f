//! Every failure the addon reports: a stable code (it becomes the JS error's
//! `code`; `js/codes.js` spells the same list for JavaScript), a message
//! that says what is wrong in words, and where, as fields the N-API layer
//! copies onto the JS error (`messageIndex`, `field`, `line`).

use std::fmt;

/// The error codes, spelled once for Rust. `js/codes.js` is the JavaScript
/// copy; a test checks the two lists agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    InvalidJson,
    NotArray,
    InvalidMessage,
    TooDeep,
    InvalidState,
    InvalidConfig,
    InvalidArgument,
    InvalidSession,
    Io,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidJson => "ERR_CONDENSE_INVALID_JSON",
            Code::NotArray => "ERR_CONDENSE_NOT_ARRAY",
            Code::InvalidMessage => "ERR_CONDENSE_INVALID_MESSAGE",
            Code::TooDeep => "ERR_CONDENSE_TOO_DEEP",
            Code::InvalidState => "ERR_CONDENSE_INVALID_STATE",
            Code::InvalidConfig => "ERR_CONDENSE_INVALID_CONFIG",
            Code::InvalidArgument => "ERR_CONDENSE_INVALID_ARGUMENT",
            Code::InvalidSession => "ERR_CONDENSE_INVALID_SESSION",
            Code::Io => "ERR_CONDENSE_IO",
        }
    }
}

/// A typed failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneError {
    pub code: Code,
    pub message: String,
    /// The message the problem is in, by its index in the input array.
    pub message_index: Option<usize>,
    /// The field path inside that message (`content[2].arguments`).
    pub field: Option<String>,
    /// The 1-based line of a session file.
    pub line: Option<usize>,
}

pub type Result<T> = std::result::Result<T, PruneError>;

impl PruneError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            message_index: None,
            field: None,
            line: None,
        }
    }

    pub fn invalid_json(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidJson, message)
    }

    /// Malformed JSON inside message `index`.
    pub fn invalid_json_in(index: usize, what: impl fmt::Display) -> Self {
        let mut e = Self::new(Code::InvalidJson, format!("message {index}: {what}"));
        e.message_index = Some(index);
        e
    }

    pub fn not_array(found: &str) -> Self {
        Self::new(
            Code::NotArray,
            format!("messages must be a JSON array, found {found}"),
        )
    }

    pub fn too_deep(index: usize, limit: usize) -> Self {
        let mut e = Self::new(
            Code::TooDeep,
            format!("message {index}: nesting deeper than {limit} levels"),
        );
        e.message_index = Some(index);
        e
    }

    /// A message field of a type the reference cannot process (it throws).
    pub fn bad_message(index: usize, field: &str, problem: &str) -> Self {
        let mut e = Self::new(
            Code::InvalidMessage,
            format!("message {index}: {field} {problem}"),
        );
        e.message_index = Some(index);
        e.field = Some(field.to_owned());
        e
    }

    pub fn bad_state(what: impl fmt::Display) -> Self {
        Self::new(Code::InvalidState, format!("state: {what}"))
    }

    pub fn bad_config(what: impl fmt::Display) -> Self {
        Self::new(Code::InvalidConfig, format!("config: {what}"))
    }

    pub fn bad_argument(what: impl fmt::Display) -> Self {
        Self::new(Code::InvalidArgument, what.to_string())
    }

    /// The same error, its message index shifted by `offset` (a part of a
    /// larger array was scanned on its own).
    #[cfg(test)]
    fn shifted(mut self, offset: usize) -> Self {
        if let Some(i) = self.message_index {
            let old = format!("message {i}");
            self.message_index = Some(i + offset);
            if let Some(rest) = self.message.strip_prefix(&old) {
                self.message = format!("message {}{rest}", i + offset);
            }
        }
        self
    }
}

/// Runs `run`, a panic turned into an `InvalidSession` error saying
/// `message` (a bug: the JS side gets an error, never a crash).
pub fn guarded<T>(message: &str, run: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
        .unwrap_or_else(|_| Err(PruneError::new(Code::InvalidSession, message)))
}

/// A file's bytes, or an `Io` error.
pub fn read_file(path: &str) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| PruneError::new(Code::Io, format!("cannot read the file: {e}")))
}

impl fmt::Display for PruneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for PruneError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifting_renames_the_message() {
        let e = PruneError::bad_message(2, "content", "is not an array").shifted(10);
        assert_eq!(e.message_index, Some(12));
        assert_eq!(e.message, "message 12: content is not an array");
        assert_eq!(e.field.as_deref(), Some("content"));
    }
}
