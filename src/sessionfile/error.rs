//! Why a session file cannot be loaded, and where. pi tolerates most damage
//! (A.2); what it cannot use (a file that is not a session, a parent cycle
//! it would loop on, the crashes of A.7, the reference indexer's throws of
//! B.7) and what this loader will not guess (deep nesting, local times) is a
//! typed error carrying a stable code and the file line.

use std::fmt;

use crate::error::Code;

/// A typed failure: `line` is the 1-based line of the file it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionError {
    /// `InvalidSession` (content pi cannot use or that the loader refuses
    /// to guess about), `TooDeep`, `InvalidArgument` (an unknown leaf id, a
    /// bad dialect) or `Io`.
    pub kind: Code,
    pub line: Option<u32>,
    pub message: String,
}

impl SessionError {
    pub fn at(line: u32, message: impl Into<String>) -> Self {
        SessionError {
            kind: Code::InvalidSession,
            line: Some(line),
            message: message.into(),
        }
    }

    pub fn new(kind: Code, message: impl Into<String>) -> Self {
        SessionError {
            kind,
            line: None,
            message: message.into(),
        }
    }

    pub fn code(&self) -> Code {
        self.kind
    }

    /// As the replay reports it: the code, the message without a line
    /// prefix, and the line as a field.
    pub fn located(self) -> crate::error::PruneError {
        let mut err = crate::error::PruneError::new(self.kind, self.message);
        err.line = self.line.map(|l| l as usize);
        err
    }
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for SessionError {}

impl From<SessionError> for crate::error::PruneError {
    fn from(e: SessionError) -> Self {
        let mut err = crate::error::PruneError::new(e.code(), e.to_string());
        err.line = e.line.map(|l| l as usize);
        err
    }
}

pub type Result<T> = std::result::Result<T, SessionError>;
