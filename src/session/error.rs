//! Why a change to the session tree failed: a branch, fork, clone, name or label.

use std::fmt;

#[derive(Debug)]
pub enum SessionOpError {
    /// No entry with this id in the session.
    EntryNotFound(String),
    /// A fork must start at a user message.
    NotAUserMessage,
    /// Cloning needs a current entry.
    NoCurrentEntry,
    EmptyName,
    /// Writing the new entries failed.
    Write(std::io::Error),
}

impl fmt::Display for SessionOpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionOpError::EntryNotFound(id) => write!(f, "Entry {id} not found"),
            SessionOpError::NotAUserMessage => f.write_str("Invalid entry ID for forking"),
            SessionOpError::NoCurrentEntry => {
                f.write_str("Cannot clone session: no current entry selected")
            }
            SessionOpError::EmptyName => f.write_str("Session name cannot be empty"),
            SessionOpError::Write(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SessionOpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SessionOpError::Write(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for SessionOpError {
    fn from(e: std::io::Error) -> SessionOpError {
        SessionOpError::Write(e)
    }
}

/// For callers whose own errors are still text.
impl From<SessionOpError> for String {
    fn from(e: SessionOpError) -> String {
        e.to_string()
    }
}
