//! Fresh OAuth tokens for requests. An unexpired stored token is used as is; an expired one is
//! refreshed at most once across threads and processes: under auth.json's lock the file is
//! re-read, a token another process already refreshed is reused, otherwise the provider's
//! refresh runs and the result is written back atomically (0600, other providers and unknown
//! fields kept). A failed refresh is an error naming the provider — never a silent fallback to
//! another credential.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::error::LoginError;
use super::flow::{Credentials, OAuthProvider};
use crate::resources::credential_file::{with_lock, write_private_atomic, CredentialFileError};

/// How long to wait for another process's refresh before giving up.
const REFRESH_LOCK_WAIT: Duration = Duration::from_secs(90);

/// The stored credentials of `provider`, refreshed first if they have expired.
/// `Ok(None)` when auth.json holds no OAuth credential for it.
pub fn fresh_credentials(
    auth_path: &Path,
    provider: &dyn OAuthProvider,
) -> Result<Option<Credentials>, LoginError> {
    fresh_credentials_within(auth_path, provider, 0)
}

/// [`fresh_credentials`], also refreshing a token with less than `min_valid_ms` left
/// (`pi auth print-bearer-token --min-expiry`).
pub fn fresh_credentials_within(
    auth_path: &Path,
    provider: &dyn OAuthProvider,
    min_valid_ms: i64,
) -> Result<Option<Credentials>, LoginError> {
    let stored = read_auth(auth_path)?
        .get(provider.id())
        .and_then(Credentials::from_json);
    match stored {
        None => Ok(None),
        Some(c) if !c.expires_within(min_valid_ms) => Ok(Some(c)),
        Some(_) => refresh_locked_within(auth_path, provider, min_valid_ms).map(Some),
    }
}

/// Refreshes under the lock (see the module doc). Fails if there is nothing to refresh.
pub fn refresh_locked(
    auth_path: &Path,
    provider: &dyn OAuthProvider,
) -> Result<Credentials, LoginError> {
    refresh_locked_within(auth_path, provider, 0)
}

fn refresh_locked_within(
    auth_path: &Path,
    provider: &dyn OAuthProvider,
    min_valid_ms: i64,
) -> Result<Credentials, LoginError> {
    let id = provider.id();
    with_lock(auth_path, REFRESH_LOCK_WAIT, || {
        let mut data = read_auth(auth_path)?;
        let entry = data.get(id).cloned().unwrap_or(Value::Null);
        let stored = Credentials::from_json(&entry).ok_or_else(|| LoginError::NoCredentials {
            provider: id.to_string(),
        })?;
        if !stored.expires_within(min_valid_ms) {
            // Another thread or process refreshed while we waited for the lock.
            return Ok(stored);
        }
        if crate::util::offline::offline() {
            return Err(LoginError::Offline {
                provider: id.to_string(),
            });
        }
        let fresh = provider
            .refresh(&stored)
            .map_err(|e| refresh_failed(id, e))?;
        // Fields the refresh does not produce (written by other tools) are kept.
        let mut merged = entry.as_object().cloned().unwrap_or_default();
        if let Value::Object(new) = fresh.to_json() {
            merged.extend(new);
        }
        let merged = Value::Object(merged);
        data.insert(id.to_string(), merged.clone());
        let text = serde_json::to_string_pretty(&Value::Object(data))
            .map_err(|e| LoginError::BadResponse(e.to_string()))?;
        write_private_atomic(auth_path, &text)?;
        Credentials::from_json(&merged)
            .ok_or_else(|| refresh_failed(id, LoginError::BadResponse("bad credentials".into())))
    })
}

/// The user-facing error for a failed refresh.
pub fn refresh_failed(provider: &str, source: LoginError) -> LoginError {
    LoginError::RefreshFailed {
        provider: provider.to_string(),
        source: Box::new(source),
    }
}

/// auth.json as a map (missing or blank: empty). A malformed file is an error: it is never
/// rewritten.
fn read_auth(path: &Path) -> Result<Map<String, Value>, CredentialFileError> {
    let path_buf = || path.to_path_buf();
    match crate::util::files::read_limited_string(path, crate::util::files::Limit::CONFIG) {
        Ok(t) if t.trim().is_empty() => Ok(Map::new()),
        Ok(t) => match serde_json::from_str::<Value>(&t) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(CredentialFileError::NotAnObject(path_buf())),
            Err(source) => Err(CredentialFileError::Parse {
                path: path_buf(),
                source,
            }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(source) => Err(CredentialFileError::Io {
            path: path_buf(),
            source,
        }),
    }
}
