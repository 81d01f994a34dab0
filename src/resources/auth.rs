//! `auth.json` credentials: `{provider: {type:"api_key", key} | {type:"oauth", access, refresh,
//! expires, ...}}`. Unknown providers and fields are preserved on rewrite; the file is created
//! with mode 0600 (its directory 0700) and rewritten under pi's lock (a `auth.json.lock`
//! directory, as proper-lockfile makes). Also the runtime `--api-key` overrides.
//!
//! A file that cannot be used — not JSON, not an object, unreadable — and entries of the wrong
//! shape are reported once as warnings naming the file and the problem; the file is never
//! rewritten while broken.

use super::config_value::resolve_config_value;
use super::credential_file::{with_lock, write_private_atomic};
use crate::ai::catalog;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Credentials from auth.json plus runtime overrides.
#[derive(Debug, Default)]
pub struct AuthStorage {
    path: Option<PathBuf>,
    data: Map<String, Value>,
    runtime: HashMap<String, String>,
    load_error: Option<String>,
    /// Entries of the wrong shape (the file itself loaded).
    entry_problems: Vec<String>,
}

impl AuthStorage {
    /// Reads `path` (a missing file is empty). A malformed file is remembered as
    /// [`AuthStorage::load_error`] and never overwritten.
    pub fn load(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let mut s = AuthStorage {
            path: Some(path),
            ..Default::default()
        };
        s.reload();
        s
    }

    /// Storage that never touches disk.
    pub fn in_memory(data: Map<String, Value>) -> Self {
        AuthStorage {
            data,
            ..Default::default()
        }
    }

    /// Re-reads the file. A missing or blank file is empty; a broken one keeps the logins
    /// read before (none at first) and sets [`AuthStorage::load_error`].
    pub fn reload(&mut self) {
        let Some(path) = &self.path else { return };
        self.entry_problems.clear();
        match read_auth_file(path) {
            Ok(data) => {
                self.entry_problems = data
                    .iter()
                    .filter_map(|(provider, cred)| {
                        credential_problem(cred)
                            .map(|p| format!("{}: \"{provider}\" {p}; ignored", path.display()))
                    })
                    .collect();
                self.data = data;
                self.load_error = None;
            }
            Err(problem) => self.load_error = Some(format!("{}: {problem}", path.display())),
        }
    }

    /// What is wrong with the file, one line each, for the user: the file as a whole (its
    /// logins are then unused) or single entries.
    pub fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .load_error
            .iter()
            .map(|e| format!("{e}. Its logins are not used; the file is left as it is."))
            .collect();
        out.extend(self.entry_problems.iter().cloned());
        out
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn load_error(&self) -> Option<&str> {
        self.load_error.as_deref()
    }

    /// The stored credential of a provider (for a renamed provider, under its old id when
    /// the file has nothing under the current one).
    pub fn get(&self, provider: &str) -> Option<&Value> {
        let stored = |id: &str| self.data.get(id).filter(|v| !v.is_null());
        stored(provider).or_else(|| catalog::former_provider_id(provider).and_then(stored))
    }

    /// Providers with stored credentials.
    pub fn list(&self) -> Vec<String> {
        self.data.keys().cloned().collect()
    }

    /// Stores a credential and persists it (other providers are re-read and kept).
    pub fn set(&mut self, provider: &str, credential: Value) -> Result<(), String> {
        self.data.insert(provider.to_string(), credential.clone());
        self.persist(provider, Some(credential))
    }

    /// Removes a provider's credential and persists the change.
    pub fn remove(&mut self, provider: &str) -> Result<(), String> {
        self.data.remove(provider);
        if let Some(old) = catalog::former_provider_id(provider) {
            if self.data.remove(old).is_some() {
                self.persist(old, None)?;
            }
        }
        self.persist(provider, None)
    }

    /// A runtime key (`--api-key`), never persisted.
    pub fn set_runtime_api_key(&mut self, provider: &str, key: &str) {
        self.runtime.insert(provider.to_string(), key.to_string());
    }

    pub fn remove_runtime_api_key(&mut self, provider: &str) {
        self.runtime.remove(provider);
    }

    /// Whether any auth is configured: runtime key, stored credential or environment.
    pub fn has_auth(&self, provider: &str) -> bool {
        self.runtime.contains_key(provider)
            || self.get(provider).is_some()
            || catalog::env_api_key(provider).is_some()
    }

    /// Whether the stored credential is OAuth.
    pub fn is_oauth(&self, provider: &str) -> bool {
        self.cred_type(provider) == Some("oauth")
    }

    fn cred_type(&self, provider: &str) -> Option<&str> {
        self.get(provider)?.get("type")?.as_str()
    }

    /// The API key: runtime override → auth.json (`api_key` resolved, or an unexpired OAuth
    /// `access` token) → environment. An expired OAuth credential yields `None` (refreshing is
    /// the OAuth layer's job).
    pub fn api_key(&self, provider: &str) -> Option<String> {
        if let Some(k) = self.runtime.get(provider).filter(|k| !k.is_empty()) {
            return Some(k.clone());
        }
        match self.cred_type(provider) {
            Some("api_key") => {
                let key = self.get(provider)?.get("key")?.as_str()?;
                return resolve_config_value(key);
            }
            Some("oauth") => {
                let cred = self.get(provider)?;
                let expires = cred.get("expires").and_then(Value::as_f64).unwrap_or(0.0);
                if (crate::ai::types::now_ms() as f64) < expires {
                    return cred.get("access")?.as_str().map(str::to_string);
                }
                return None;
            }
            _ => {}
        }
        catalog::env_api_key(provider)
    }

    /// [`AuthStorage::api_key`] for a request: an expired OAuth login is refreshed first (once
    /// across processes, see `oauth::refresh`), and a failed refresh is an `Err` rather than a
    /// fall back to some other credential.
    pub fn resolve_api_key(&self, provider: &str) -> Result<Option<String>, String> {
        if self.runtime.get(provider).is_some_and(|k| !k.is_empty()) || !self.is_oauth(provider) {
            return Ok(self.api_key(provider));
        }
        if let Some(key) = self.api_key(provider) {
            return Ok(Some(key));
        }
        match &self.path {
            Some(path) => Ok(super::oauth::request_credentials(path, provider)?.map(|(k, _)| k)),
            None => Ok(None),
        }
    }

    fn persist(&mut self, provider: &str, credential: Option<Value>) -> Result<(), String> {
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        if let Some(e) = &self.load_error {
            return Err(format!("not writing auth.json after a load error: {e}"));
        }
        with_lock(&path, Duration::from_secs(1), || {
            let mut current = match crate::util::files::read_limited_string(
                &path,
                crate::util::files::Limit::CONFIG,
            ) {
                Ok(t) if !t.trim().is_empty() => match serde_json::from_str::<Value>(&t) {
                    Ok(Value::Object(m)) => m,
                    _ => return Err(format!("{}: malformed, not rewritten", path.display())),
                },
                Ok(_) => Map::new(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
                // Unreadable is not empty: rewriting it would drop every login in it.
                Err(e) => return Err(format!("{}: {e}, not rewritten", path.display())),
            };
            match &credential {
                Some(c) => {
                    current.insert(provider.to_string(), c.clone());
                }
                None => {
                    current.remove(provider);
                }
            }
            let text = serde_json::to_string_pretty(&Value::Object(current.clone()))
                .map_err(|e| e.to_string())?;
            write_private_atomic(&path, &text)?;
            self.data = current;
            Ok(())
        })
    }
}

/// The credentials in an auth.json: empty when missing or blank, `Err` with the problem when
/// the file cannot be used.
fn read_auth_file(path: &Path) -> Result<Map<String, Value>, String> {
    let bytes = match crate::util::files::read_limited(path, crate::util::files::Limit::CONFIG) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) if path.is_dir() => return Err(format!("is a directory, not a file ({e})")),
        Err(e) => return Err(format!("cannot be read ({e})")),
    };
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return Err("starts with a byte-order mark, which JSON does not allow; remove it".into());
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| format!("is not UTF-8 text ({e})"))?;
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(format!(
            "must hold a JSON object of providers, not {}",
            json_kind(&other)
        )),
        Err(e) if e.is_eof() => Err(format!("is cut short, not valid JSON ({e})")),
        Err(e) => Err(format!("is not valid JSON ({e})")),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Why a stored credential cannot be used, if it cannot.
fn credential_problem(cred: &Value) -> Option<String> {
    let Value::Object(fields) = cred else {
        return Some(format!(
            "must be an object such as {{\"type\": \"api_key\", \"key\": \"…\"}}, not {}",
            json_kind(cred)
        ));
    };
    let field_is = |name: &str, ok: fn(&Value) -> bool, want: &str| {
        let v = fields.get(name)?;
        (!ok(v)).then(|| format!("has \"{name}\" as {}, not {want}", json_kind(v)))
    };
    let missing = |name: &str| (!fields.contains_key(name)).then(|| format!("has no \"{name}\""));
    match fields.get("type") {
        None => Some("has no \"type\" (\"api_key\" or \"oauth\")".into()),
        Some(Value::String(t)) if t == "api_key" => {
            missing("key").or_else(|| field_is("key", Value::is_string, "a string"))
        }
        Some(Value::String(t)) if t == "oauth" => missing("access")
            .or_else(|| field_is("access", Value::is_string, "a string"))
            .or_else(|| field_is("refresh", Value::is_string, "a string"))
            .or_else(|| field_is("expires", Value::is_number, "a number")),
        Some(Value::String(t)) => Some(format!(
            "has an unknown \"type\" \"{t}\" (\"api_key\" or \"oauth\")"
        )),
        Some(other) => Some(format!(
            "has \"type\" as {}, not \"api_key\" or \"oauth\"",
            json_kind(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn set_creates_file_0600_and_preserves_unknown_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent").join("auth.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            r#"{"anthropic":{"type":"oauth","access":"a","refresh":"r","expires":1,"extra":{"x":1}}}"#,
        )
        .unwrap();
        let mut auth = AuthStorage::load(&path);
        auth.set("openai", json!({"type": "api_key", "key": "sk-1"}))
            .unwrap();
        let back: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back["anthropic"]["extra"], json!({"x": 1}));
        assert_eq!(back["openai"]["key"], "sk-1");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        auth.remove("openai").unwrap();
        let back: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(back.get("openai").is_none());
        assert!(!PathBuf::from(format!("{}.lock", path.display())).exists());
    }

    #[test]
    fn a_symlinked_auth_json_stays_a_link_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles-auth.json");
        std::fs::write(&real, r#"{"a":{"type":"api_key","key":"k"}}"#).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o644)).unwrap();
        let link = dir.path().join("auth.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut auth = AuthStorage::load(&link);
        auth.set("b", json!({"type": "api_key", "key": "k2"}))
            .unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let back: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
        assert_eq!(back["a"]["key"], "k");
        assert_eq!(back["b"]["key"], "k2");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn an_unreadable_auth_json_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        // A directory where the file should be: reading fails with something other than
        // "not found", and nothing may replace it.
        std::fs::create_dir(&path).unwrap();
        let mut auth = AuthStorage::load(&path);
        auth.load_error = None;
        assert!(auth
            .set("b", json!({"type": "api_key", "key": "k2"}))
            .is_err());
        assert!(path.is_dir());
    }

    #[test]
    fn every_broken_file_is_named_once_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        let whole_file: &[(&[u8], &str)] = &[
            (br#"{"anthropic": {"type": "api_k"#, "is cut short"),
            (br#"{"anthropic": {"type": "api_key"}"#, "is cut short"),
            (b"\xEF\xBB\xBF{}", "byte-order mark"),
            (b"null", "not null"),
            (b"[]", "not an array"),
            (b"[{\"type\": \"api_key\"}]", "not an array"),
            (b"\"sk-ant-123\"", "not a string"),
            (b"42", "not a number"),
            (b"true", "not a boolean"),
            (
                br#"{"anthropic": {"type": "api_key", "key": "k"},}"#,
                "not valid JSON",
            ),
            (b"// my keys\n{}", "not valid JSON"),
            (b"{\"a\": \"\xff\"}", "not UTF-8"),
        ];
        for (bytes, expected) in whole_file {
            std::fs::write(&path, bytes).unwrap();
            let auth = AuthStorage::load(&path);
            let warnings = auth.warnings();
            assert_eq!(warnings.len(), 1, "{expected}: {warnings:?}");
            assert!(warnings[0].contains(expected), "{expected}: {warnings:?}");
            assert!(warnings[0].starts_with(&path.display().to_string()));
            assert!(auth.list().is_empty());
            assert_eq!(std::fs::read(&path).unwrap(), *bytes, "a read never writes");
        }
        let sub = dir.path().join("as-dir.json");
        std::fs::create_dir(&sub).unwrap();
        let warnings = AuthStorage::load(&sub).warnings();
        assert!(warnings[0].contains("is a directory"), "{warnings:?}");
        for fine in [&b""[..], b"  \n", b"{}"] {
            std::fs::write(&path, fine).unwrap();
            assert!(AuthStorage::load(&path).warnings().is_empty());
        }
    }

    #[test]
    fn entries_of_the_wrong_shape_are_named_and_the_rest_still_work() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        let text = r#"{
            "openai": {"type": "api_key", "key": "sk-good", "env": {"X": "1"}},
            "anthropic": "sk-ant-bare-string",
            "google": {"key": "g"},
            "groq": {"type": "apikey", "key": "g"},
            "xai": {"type": "api_key", "key": 42},
            "mistral": {"type": 1},
            "openai-codex": {"type": "oauth", "access": "a", "refresh": "r", "expires": "soon"},
            "github-copilot": {"type": "oauth", "refresh": "r", "expires": 1},
            "cerebras": null
        }"#;
        std::fs::write(&path, text).unwrap();
        let auth = AuthStorage::load(&path);
        let warnings = auth.warnings();
        let expect = [
            ("\"anthropic\" must be an object", "not a string"),
            ("\"google\" has no \"type\"", ""),
            ("\"groq\" has an unknown \"type\" \"apikey\"", ""),
            ("\"xai\" has \"key\" as a number, not a string", ""),
            ("\"mistral\" has \"type\" as a number", ""),
            (
                "\"openai-codex\" has \"expires\" as a string, not a number",
                "",
            ),
            ("\"github-copilot\" has no \"access\"", ""),
            ("\"cerebras\" must be an object", "not null"),
        ];
        assert_eq!(warnings.len(), expect.len(), "{warnings:#?}");
        for (a, b) in expect {
            assert!(
                warnings.iter().any(|w| w.contains(a) && w.contains(b)),
                "{a}: {warnings:#?}"
            );
        }
        assert_eq!(auth.api_key("openai").as_deref(), Some("sk-good"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }

    #[test]
    fn fresh_file_in_new_dir() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new").join("auth.json");
        let mut auth = AuthStorage::load(&path);
        assert!(auth.list().is_empty());
        auth.set("google", json!({"type": "api_key", "key": "g"}))
            .unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            AuthStorage::load(&path).api_key("google").as_deref(),
            Some("g")
        );
    }

    #[test]
    fn key_precedence_runtime_then_file_then_env() {
        std::env::set_var("XIAOMI_TOKEN_PLAN_AMS_API_KEY", "env-key");
        let mut auth = AuthStorage::in_memory(Map::new());
        assert_eq!(
            auth.api_key("xiaomi-token-plan-ams").as_deref(),
            Some("env-key")
        );
        assert!(auth.has_auth("xiaomi-token-plan-ams"));
        let mut data = Map::new();
        data.insert(
            "xiaomi-token-plan-ams".into(),
            json!({"type": "api_key", "key": "!printf file-key"}),
        );
        auth = AuthStorage::in_memory(data);
        assert_eq!(
            auth.api_key("xiaomi-token-plan-ams").as_deref(),
            Some("file-key")
        );
        auth.set_runtime_api_key("xiaomi-token-plan-ams", "runtime");
        assert_eq!(
            auth.api_key("xiaomi-token-plan-ams").as_deref(),
            Some("runtime")
        );
        std::env::remove_var("XIAOMI_TOKEN_PLAN_AMS_API_KEY");
    }

    #[test]
    fn oauth_access_token_until_expiry() {
        let mut data = Map::new();
        let future = crate::ai::types::now_ms() + 60_000;
        data.insert(
            "anthropic".into(),
            json!({"type":"oauth","access":"tok","refresh":"r","expires":future}),
        );
        data.insert(
            "openai-codex".into(),
            json!({"type":"oauth","access":"old","refresh":"r","expires":1}),
        );
        let auth = AuthStorage::in_memory(data);
        assert_eq!(auth.api_key("anthropic").as_deref(), Some("tok"));
        assert_eq!(auth.api_key("openai-codex"), None);
        assert!(auth.has_auth("openai-codex"));
    }
}
