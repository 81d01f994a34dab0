//! `<agent dir>/mcp-auth.json`, pi's store of MCP OAuth state: one entry per server, keyed
//! `mcp__<server>|<url>` (servers sharing a URL sign in separately), holding the registered
//! client, the tokens and their expiry, the discovery results and a sign-in in progress
//! (`codeVerifier`, `oauthState`). Entries of older pi versions, keyed by the URL alone, are
//! read and moved to the new key on the next write. Every write happens under the file's lock
//! (`mcp-auth.json.lock`, as pi's proper-lockfile takes it), atomically, with mode 0600;
//! entries of other servers and fields we do not know are kept. An entry whose `serverUrl` is
//! not the server's is ignored, so credentials never go to another URL.
//!
//! Token refreshes take a second lock per server (`mcp-auth-refresh-<hash>.lock`), so one
//! process refreshes and the others reuse its tokens: with rotating refresh tokens a second
//! refresh would fail and cost the grant.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::OAuthError;
use crate::ai::Abort;
use crate::resources::credential_file::{with_lock, write_private_atomic};
use crate::resources::file_lock::FileLock;

/// How long to wait for `mcp-auth.json`'s lock.
const FILE_LOCK_WAIT: Duration = Duration::from_secs(10);
/// A refresh lock its holder stopped renewing (the process died) is taken over after this.
const REFRESH_LOCK_STALE: Duration = Duration::from_secs(20);
/// How long to wait for another process's refresh: longer than a stale lock lives.
const REFRESH_LOCK_WAIT: Duration = Duration::from_secs(25);
const REFRESH_LOCK_RETRY: Duration = Duration::from_millis(100);
const REFRESH_LOCK_TOUCH: Duration = Duration::from_secs(5);

/// One server's stored state (the JSON object, unknown fields kept).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State(pub Map<String, Value>);

impl State {
    fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    pub fn tokens(&self) -> Option<&Map<String, Value>> {
        self.0.get("tokens").and_then(Value::as_object)
    }

    fn token_field(&self, key: &str) -> Option<&str> {
        self.tokens()
            .and_then(|t| t.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }

    pub fn access_token(&self) -> Option<&str> {
        self.token_field("access_token")
    }

    pub fn refresh_token(&self) -> Option<&str> {
        self.token_field("refresh_token")
    }

    pub fn granted_scope(&self) -> Option<&str> {
        self.token_field("scope")
    }

    /// When the access token expires (ms since the epoch), if the server said.
    pub fn expires_at(&self) -> Option<i64> {
        self.0
            .get("tokensExpireAt")
            .and_then(Value::as_f64)
            .map(|v| v as i64)
    }

    pub fn client(&self) -> Option<&Map<String, Value>> {
        self.0.get("clientInformation").and_then(Value::as_object)
    }

    pub fn client_id(&self) -> Option<&str> {
        self.client()
            .and_then(|c| c.get("client_id"))
            .and_then(Value::as_str)
    }

    /// The redirect URIs the stored client was registered with.
    pub fn registered_redirect_urls(&self) -> Vec<String> {
        self.client()
            .and_then(|c| c.get("redirect_uris"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn discovery(&self) -> Option<&Map<String, Value>> {
        self.0.get("discovery").and_then(Value::as_object)
    }

    pub fn oauth_state(&self) -> Option<&str> {
        self.str("oauthState")
    }

    /// Stores a token response: `tokensExpireAt` from its `expires_in`.
    pub fn set_tokens(&mut self, tokens: Map<String, Value>) {
        let expires = tokens.get("expires_in").and_then(Value::as_f64);
        self.0.insert("tokens".into(), Value::Object(tokens));
        match expires {
            Some(secs) => {
                let at = crate::ai::types::now_ms() + (secs * 1000.0) as i64;
                self.0.insert("tokensExpireAt".into(), json!(at));
            }
            None => {
                self.0.remove("tokensExpireAt");
            }
        }
    }

    pub fn set_client(&mut self, client: Map<String, Value>) {
        self.0
            .insert("clientInformation".into(), Value::Object(client));
    }

    /// Forgets parts of the state: `client`, `tokens`, `discovery`, `verifier`, `all`.
    pub fn invalidate(&mut self, what: &str) {
        let all = what == "all";
        if all || what == "client" {
            self.0.remove("clientInformation");
        }
        if all || what == "tokens" {
            self.0.remove("tokens");
            self.0.remove("tokensExpireAt");
        }
        if all || what == "verifier" {
            self.0.remove("codeVerifier");
        }
        if all || what == "discovery" {
            self.0.remove("discovery");
        }
        if all {
            self.0.remove("oauthState");
        }
    }
}

/// The whole file.
pub struct CredentialStore {
    path: PathBuf,
    lock_dir: PathBuf,
}

fn keys(name: &str, server_url: &str) -> (String, String) {
    let legacy = crate::mcp::url::normalize(server_url);
    (
        format!("{}|{legacy}", crate::mcp::config::namespace(name)),
        legacy,
    )
}

fn read_states(path: &Path) -> Result<Map<String, Value>, String> {
    match crate::util::files::read_limited_string(path, crate::util::files::Limit::CONFIG) {
        Ok(t) if t.trim().is_empty() => Ok(Map::new()),
        Ok(t) => match serde_json::from_str::<Value>(&t) {
            Ok(Value::Object(m)) => Ok(m),
            // pi reads anything but an object as empty; we refuse to overwrite it instead.
            Ok(_) => Err(format!("{}: not a JSON object", path.display())),
            Err(e) => Err(format!("{}: {e}", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

impl CredentialStore {
    pub fn new(agent_dir: &Path) -> Arc<CredentialStore> {
        Arc::new(CredentialStore {
            path: agent_dir.join("mcp-auth.json"),
            lock_dir: agent_dir.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entry of one server.
    pub fn server(self: &Arc<Self>, name: &str, server_url: &str) -> ServerStore {
        let (key, legacy_key) = keys(name, server_url);
        ServerStore {
            store: Arc::clone(self),
            key,
            legacy_key,
            server_url: crate::mcp::url::normalize(server_url),
        }
    }

    /// Runs `edit` on the file's content under its lock; writes when it returns true.
    fn edit<T>(
        &self,
        edit: impl FnOnce(&mut Map<String, Value>) -> (T, bool),
    ) -> Result<T, String> {
        with_lock(&self.path, FILE_LOCK_WAIT, || {
            let mut states = read_states(&self.path)?;
            let (result, write) = edit(&mut states);
            if write {
                let text = serde_json::to_string_pretty(&Value::Object(states))
                    .map_err(|e| e.to_string())?;
                write_private_atomic(&self.path, &format!("{text}\n"))?;
            }
            Ok(result)
        })
    }

    /// The stored tokens of a server (legacy entries included), to notice a sign-in done by
    /// another process. Reads only.
    pub fn tokens(&self, name: &str, server_url: &str) -> Option<Value> {
        let (key, legacy) = keys(name, server_url);
        let states = read_states(&self.path).ok()?;
        states
            .get(&key)
            .or_else(|| states.get(&legacy))
            .and_then(|s| s.get("tokens"))
            .cloned()
    }

    /// Deletes a server's credentials; `Ok(true)` when there were some.
    pub fn remove(&self, name: &str, server_url: &str) -> Result<bool, String> {
        if !self.path.exists() {
            return Ok(false);
        }
        let (key, legacy) = keys(name, server_url);
        self.edit(|states| {
            let stored = if states.contains_key(&key) {
                key
            } else if states.contains_key(&legacy) {
                legacy
            } else {
                return (false, false);
            };
            states.shift_remove(&stored);
            (true, true)
        })
    }
}

/// One server's entry.
#[derive(Clone)]
pub struct ServerStore {
    store: Arc<CredentialStore>,
    key: String,
    legacy_key: String,
    server_url: String,
}

impl ServerStore {
    pub fn server_url(&self) -> &str {
        &self.server_url
    }

    fn own(&self, value: Option<&Value>) -> State {
        match value.and_then(Value::as_object) {
            Some(m) if m.get("serverUrl").and_then(Value::as_str) == Some(&self.server_url) => {
                State(m.clone())
            }
            _ => {
                let mut m = Map::new();
                m.insert("serverUrl".into(), json!(self.server_url));
                State(m)
            }
        }
    }

    /// The current state (a legacy entry if that is all there is). Reads only: writes are
    /// atomic, so an unlocked read sees one whole version.
    pub fn load(&self) -> Result<State, String> {
        let states = read_states(&self.store.path)?;
        Ok(self.own(
            states
                .get(&self.key)
                .or_else(|| states.get(&self.legacy_key)),
        ))
    }

    /// Changes the state under the file's lock and returns the new one. A legacy entry moves
    /// to this server's key.
    pub fn update(&self, change: impl FnOnce(&mut State)) -> Result<State, String> {
        // One copy of the locked read-modify-write for every caller's closure.
        self.update_with(Box::new(change))
    }

    fn update_with(&self, change: Box<dyn FnOnce(&mut State) + '_>) -> Result<State, String> {
        self.store.edit(|states| {
            let current = states
                .get(&self.key)
                .or_else(|| states.get(&self.legacy_key));
            let mut state = self.own(current);
            change(&mut state);
            states.shift_remove(&self.legacy_key);
            states.insert(self.key.clone(), Value::Object(state.0.clone()));
            (state, true)
        })
    }

    fn refresh_lock_path(&self) -> PathBuf {
        let digest = ring::digest::digest(&ring::digest::SHA256, self.key.as_bytes());
        let hex: String = digest.as_ref()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        self.store.lock_dir.join(format!("mcp-auth-refresh-{hex}"))
    }

    /// Runs `f` holding this server's refresh lock, waiting up to 25 s for another process's
    /// refresh (or until `abort`).
    pub fn with_refresh_lock<T>(
        &self,
        abort: &Abort,
        f: impl FnOnce() -> Result<T, OAuthError>,
    ) -> Result<T, OAuthError> {
        let path = self.refresh_lock_path();
        if let Some(dir) = path.parent() {
            use std::os::unix::fs::DirBuilderExt;
            let _ = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir);
        }
        let deadline = Instant::now() + REFRESH_LOCK_WAIT;
        let mut lock = loop {
            match FileLock::acquire_with_stale(&path, 1, REFRESH_LOCK_RETRY, REFRESH_LOCK_STALE) {
                Ok(l) => break l,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err(OAuthError::RefreshLockBusy);
                    }
                    let until = Instant::now() + REFRESH_LOCK_RETRY;
                    while Instant::now() < until {
                        if abort.is_aborted() {
                            return Err(OAuthError::Cancelled);
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                Err(e) => return Err(OAuthError::Other(format!("{}.lock: {e}", path.display()))),
            }
        };
        lock.keep_fresh(REFRESH_LOCK_TOUCH);
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn entries_are_keyed_by_name_and_url_and_kept_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-auth.json");
        std::fs::write(
            &path,
            r#"{"other":{"x":1},"https://h/mcp":{"serverUrl":"https://h/mcp","tokens":{"access_token":"old"}}}"#,
        )
        .unwrap();
        let store = CredentialStore::new(dir.path());
        let a = store.server("dev-a", "HTTPS://H/mcp");
        // The legacy entry is read, and moved on the first write.
        assert_eq!(a.load().unwrap().access_token(), Some("old"));
        assert!(
            !std::fs::read_to_string(&path)
                .unwrap()
                .contains("mcp__dev_a"),
            "a read never writes"
        );
        a.update(|s| {
            let mut t = Map::new();
            t.insert("access_token".into(), json!("new"));
            t.insert("expires_in".into(), json!(60));
            s.set_tokens(t);
        })
        .unwrap();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["other"], json!({"x": 1}));
        assert!(doc.get("https://h/mcp").is_none());
        let entry = &doc["mcp__dev_a|https://h/mcp"];
        assert_eq!(entry["tokens"]["access_token"], "new");
        assert!(entry["tokensExpireAt"].as_i64().unwrap() > crate::ai::types::now_ms());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Another name with the same URL has its own sign-in.
        assert_eq!(
            store
                .server("b", "https://h/mcp")
                .load()
                .unwrap()
                .access_token(),
            None
        );
        assert!(store.remove("dev-a", "https://h/mcp").unwrap());
        assert!(!store.remove("dev-a", "https://h/mcp").unwrap());
    }

    #[test]
    fn state_for_another_url_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("mcp-auth.json"),
            r#"{"mcp__a|https://h/mcp":{"serverUrl":"https://evil/mcp","tokens":{"access_token":"t"}}}"#,
        )
        .unwrap();
        let s = CredentialStore::new(dir.path()).server("a", "https://h/mcp");
        assert_eq!(s.load().unwrap().access_token(), None);
    }

    #[test]
    fn a_broken_file_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-auth.json");
        std::fs::write(&path, "{oops").unwrap();
        let s = CredentialStore::new(dir.path()).server("a", "https://h/mcp");
        assert!(s.update(|_| {}).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{oops");
    }

    #[test]
    fn the_refresh_lock_excludes_and_honours_abort() {
        let dir = tempfile::tempdir().unwrap();
        let s = CredentialStore::new(dir.path()).server("a", "https://h/mcp");
        let inner = s.clone();
        let abort = Abort::new();
        let result = s.with_refresh_lock(&abort, || {
            let waiter = Abort::new();
            waiter.abort();
            // Held here: a second taker gives up on its abort instead of waiting 25 s.
            Ok(inner.with_refresh_lock(&waiter, || Ok(())))
        });
        assert_eq!(result.unwrap(), Err(OAuthError::Cancelled));
        // Released afterwards.
        assert!(s.with_refresh_lock(&abort, || Ok(1)).is_ok());
    }
}
