//! Why a login or a token refresh failed, worded as pi words it (users and tests read it).

use std::fmt;

use crate::resources::credential_file::CredentialFileError;
use crate::util::random::NoSecureRandom;

#[derive(Debug)]
pub enum LoginError {
    /// The user (or the abort flag) stopped the login.
    Cancelled,
    /// The UI's prompt failed; its own text.
    Prompt(String),
    /// A pasted answer carried another login's `state`.
    StateMismatch,
    MissingCode,
    NoSecureRandom(NoSecureRandom),
    /// The request did not get an answer.
    Request {
        url: String,
        detail: String,
    },
    /// A non-2xx answer, with its body.
    Http {
        url: String,
        status: u16,
        body: String,
    },
    InvalidJson {
        url: String,
        source: serde_json::Error,
    },
    /// An answer without a field the flow needs; the text says which.
    BadResponse(String),
    /// GitHub's device flow answered with an OAuth `error`.
    DeviceFlow {
        error: String,
        description: Option<String>,
    },
    /// The device code expired before the user finished (`slowed_down`: after `slow_down`s).
    TimedOut {
        slowed_down: bool,
    },
    InvalidEnterpriseDomain,
    /// A named step ("Anthropic token exchange") failed.
    Step {
        step: &'static str,
        source: Box<LoginError>,
    },
    /// No stored OAuth login for the provider.
    NoCredentials {
        provider: String,
    },
    /// An expired token, and pi is offline.
    Offline {
        provider: String,
    },
    /// Refreshing the provider's token failed; the stored login was kept.
    RefreshFailed {
        provider: String,
        source: Box<LoginError>,
    },
    /// auth.json could not be read, locked or written.
    AuthFile(CredentialFileError),
}

impl fmt::Display for LoginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoginError::Cancelled => f.write_str("Login cancelled"),
            LoginError::Prompt(text) | LoginError::BadResponse(text) => f.write_str(text),
            LoginError::StateMismatch => f.write_str("OAuth state mismatch"),
            LoginError::MissingCode => f.write_str("Missing authorization code"),
            LoginError::NoSecureRandom(e) => e.fmt(f),
            LoginError::Request { url, detail } => write!(f, "request to {url} failed: {detail}"),
            LoginError::Http { url, status, body } => write!(f, "HTTP {status} from {url}: {body}"),
            LoginError::InvalidJson { url, source } => write!(f, "invalid JSON from {url}: {source}"),
            LoginError::DeviceFlow { error, description } => match description {
                Some(d) => write!(f, "Device flow failed: {error}: {d}"),
                None => write!(f, "Device flow failed: {error}"),
            },
            LoginError::TimedOut { slowed_down: false } => f.write_str("Device flow timed out"),
            LoginError::TimedOut { slowed_down: true } => f.write_str(
                "Device flow timed out after one or more slow_down responses. This is \
                 often caused by clock drift in WSL or VM environments. Please sync or \
                 restart the VM clock and try again.",
            ),
            LoginError::InvalidEnterpriseDomain => f.write_str("Invalid GitHub Enterprise URL/domain"),
            LoginError::Step { step, source } => write!(f, "{step} failed: {source}"),
            LoginError::NoCredentials { provider } => {
                write!(f, "No OAuth credentials for {provider} in auth.json")
            }
            LoginError::Offline { provider } => write!(
                f,
                "The OAuth token for {provider} has expired, and pi is offline (PI_OFFLINE or \
                 --offline), so it was not refreshed. Your stored login was kept; start pi without \
                 PI_OFFLINE to refresh it."
            ),
            LoginError::RefreshFailed { provider, source } => write!(
                f,
                "Failed to refresh OAuth token for {provider}: {source}\n\nYour stored login was kept. \
                 Sign in again with `pi auth login {provider}` (or /login)."
            ),
            LoginError::AuthFile(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LoginError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoginError::NoSecureRandom(e) => Some(e),
            LoginError::InvalidJson { source, .. } => Some(source),
            LoginError::Step { source, .. } | LoginError::RefreshFailed { source, .. } => {
                Some(source.as_ref())
            }
            LoginError::AuthFile(e) => Some(e),
            _ => None,
        }
    }
}

impl LoginError {
    /// This error as the failure of a named step.
    pub(crate) fn in_step(self, step: &'static str) -> LoginError {
        LoginError::Step {
            step,
            source: Box::new(self),
        }
    }
}

impl From<NoSecureRandom> for LoginError {
    fn from(e: NoSecureRandom) -> LoginError {
        LoginError::NoSecureRandom(e)
    }
}

impl From<CredentialFileError> for LoginError {
    fn from(e: CredentialFileError) -> LoginError {
        LoginError::AuthFile(e)
    }
}

/// For callers whose own errors are still text.
impl From<LoginError> for String {
    fn from(e: LoginError) -> String {
        e.to_string()
    }
}
