//! What can go wrong installing, removing, updating or recording a package. The text is pi's
//! (`npm install x failed with code 1`, `No matching package found for x`), so users and tests
//! read the same messages as before.

use std::fmt;
use std::path::PathBuf;

use crate::resources::settings::SettingsError;

#[derive(Debug)]
pub enum PackageError {
    /// `npmCommand` is set but its first entry is empty.
    InvalidNpmCommand,
    /// `git`/`npm` could not be started (NotFound: it is not on PATH).
    Spawn { cmd: String, source: std::io::Error },
    /// A tool ran and failed. `output` is what it said (only when it was captured).
    Tool {
        command: String,
        code: Option<i32>,
        output: Option<String>,
    },
    /// A tool was stopped before it finished: pi is shutting down.
    Stopped { command: String },
    /// A tool ended but its exit status could not be read.
    StatusLost { command: String },
    /// A local source that does not exist.
    PathMissing(PathBuf),
    /// The step needs the network and pi is offline; `what` is the source.
    Offline { what: String },
    /// Creating, writing or removing a directory or file failed.
    Fs {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// `pi update <source>` matched no configured package.
    NoMatch {
        source: String,
        suggestion: Option<String>,
    },
    /// A resource toggle for a package that is not in that scope's settings.
    NotConfigured { source: String, scope: &'static str },
    /// Writing the `packages` list to settings failed.
    Settings(SettingsError),
}

impl fmt::Display for PackageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackageError::InvalidNpmCommand => {
                f.write_str("Invalid npmCommand: first array entry must be a non-empty command")
            }
            PackageError::Spawn { cmd, source }
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                write!(f, "{cmd} is not installed (not found on PATH)")
            }
            PackageError::Spawn { cmd, source } => write!(f, "Could not run {cmd}: {source}"),
            PackageError::Tool {
                command,
                code,
                output: None,
            } => match code {
                Some(c) => write!(f, "{command} failed with code {c}"),
                None => write!(f, "{command} failed with code null"),
            },
            PackageError::Tool {
                command,
                code,
                output: Some(out),
            } => match code {
                Some(c) => write!(f, "{command} failed with code {c}: {out}"),
                None => write!(f, "{command} failed with a signal: {out}"),
            },
            PackageError::Stopped { command } => {
                write!(f, "{command} was stopped: pi is shutting down")
            }
            PackageError::StatusLost { command } => {
                write!(f, "{command}: its exit status was lost")
            }
            PackageError::PathMissing(p) => write!(f, "Path does not exist: {}", p.display()),
            PackageError::Offline { what } => f.write_str(&crate::util::offline::refused(
                &format!("Installing {what}"),
            )),
            PackageError::Fs {
                action,
                path,
                source,
            } => write!(f, "Could not {action} {}: {source}", path.display()),
            PackageError::NoMatch {
                source,
                suggestion: Some(s),
            } => write!(
                f,
                "No matching package found for {source}. Did you mean {s}?"
            ),
            PackageError::NoMatch { source, .. } => {
                write!(f, "No matching package found for {source}")
            }
            PackageError::NotConfigured { source, scope } => {
                write!(f, "{source} is not in the {scope} settings")
            }
            PackageError::Settings(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for PackageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PackageError::Spawn { source, .. } | PackageError::Fs { source, .. } => Some(source),
            PackageError::Settings(e) => Some(e),
            _ => None,
        }
    }
}

impl From<SettingsError> for PackageError {
    fn from(e: SettingsError) -> PackageError {
        PackageError::Settings(e)
    }
}

/// For callers whose own errors are still text.
impl From<PackageError> for String {
    fn from(e: PackageError) -> String {
        e.to_string()
    }
}
