//! `settings.json`: the global file in the agent dir and the project file `.pi/settings.json`,
//! merged as pi merges them (project wins per top-level key; plain objects merged one level).
//! A malformed file is reported as a warning and ignored — settings never stop pi from running.
//!
//! Changes made while pi runs (default model, thinking level, queue modes, auto-retry and
//! auto-compaction toggles) are written back to the global file the way pi writes them: under
//! the file's lock, re-reading it first and changing only the keys set, so concurrent pi
//! processes and hand edits survive. A global file that failed to parse is never overwritten.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::file_lock::FileLock;

/// Why a settings change was not written.
#[derive(Debug)]
pub enum SettingsError {
    /// The file failed to load at startup; writing it would lose what it holds.
    Unreadable(PathBuf),
    /// The project file was not loaded (an untrusted folder).
    NoProjectFile,
    /// The file on disk is no longer a JSON object.
    NotAnObject(PathBuf),
    /// Creating, locking, reading or writing the file failed.
    Save {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingsError::Unreadable(path) => write!(
                f,
                "Not saving settings: {} could not be read; fix it and restart pi",
                path.display()
            ),
            SettingsError::NoProjectFile => {
                f.write_str("Project settings are not loaded for this folder")
            }
            SettingsError::NotAnObject(path) => write!(
                f,
                "Could not save {}: the file is not a JSON object; fix it and retry",
                path.display()
            ),
            SettingsError::Save { path, source } => {
                write!(f, "Could not save {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for SettingsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SettingsError::Save { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// For callers whose own errors are still text.
impl From<SettingsError> for String {
    fn from(e: SettingsError) -> String {
        e.to_string()
    }
}

/// Agent-level retry policy (`retry.*`; the provider level is `retry.provider.*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrySettings {
    pub enabled: bool,
    pub max_retries: u32,
    pub base_delay_ms: u64,
    /// Longest backoff between attempts (`retry.maxAgentDelayMs`, pi 1.x).
    pub max_agent_delay_ms: u64,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 2000,
            max_agent_delay_ms: 60_000,
        }
    }
}

/// Context compaction policy (`compaction.*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactionSettings {
    pub enabled: bool,
    /// Tokens kept free for the reply (and the summary's own budget).
    pub reserve_tokens: u64,
    /// Roughly how many tokens of recent conversation survive a compaction.
    pub keep_recent_tokens: u64,
}

impl CompactionSettings {
    /// The settings for a model with a `window`-token context. pi's defaults are sized for
    /// 128K+ windows; below four times the reserve they would compact after every reply (the
    /// trigger is negative) and ask for a summary longer than the window, so the reserve and
    /// the kept tail shrink to a quarter of the window each.
    pub fn for_window(self, window: u64) -> CompactionSettings {
        if window == 0 {
            return self;
        }
        CompactionSettings {
            reserve_tokens: self.reserve_tokens.min(window / 4),
            keep_recent_tokens: self.keep_recent_tokens.min(window / 4),
            ..self
        }
    }
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: 16384,
            keep_recent_tokens: 20000,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The merged JSON, kept whole so keys we don't model yet are not lost.
    pub merged: Map<String, Value>,
    pub warnings: Vec<String>,
    global: Map<String, Value>,
    project: Map<String, Value>,
    /// Where changes are written; `None` keeps them in memory (tests, embedders).
    global_path: Option<PathBuf>,
    /// The global file exists but could not be read: never overwrite it.
    global_broken: bool,
    /// `.pi/settings.json` when the project file was loaded (a trusted folder).
    project_path: Option<PathBuf>,
    project_broken: bool,
}

impl Settings {
    /// Loads `<agent_dir>/settings.json` and `<cwd>/.pi/settings.json`.
    pub fn load(agent_dir: &Path, cwd: &Path) -> Settings {
        Settings::load_with(agent_dir, cwd, true)
    }

    /// Like `load`; the project file is read only when `include_project` (a trusted folder).
    pub fn load_with(agent_dir: &Path, cwd: &Path, include_project: bool) -> Settings {
        let mut s = Settings::default();
        let global_path = agent_dir.join("settings.json");
        let warnings_before = s.warnings.len();
        s.global = s.read_file(&global_path, "global");
        s.global_broken = s.warnings.len() > warnings_before;
        s.global_path = Some(global_path);
        if include_project {
            let project_path = cwd.join(".pi").join("settings.json");
            let warnings_before = s.warnings.len();
            s.project = s.read_file(&project_path, "project");
            s.project_broken = s.warnings.len() > warnings_before;
            s.project_path = Some(project_path);
        }
        s.remerge();
        s
    }

    /// Settings from JSON values, kept in memory only.
    pub fn in_memory(global: Map<String, Value>) -> Settings {
        let mut s = Settings {
            global,
            ..Settings::default()
        };
        s.remerge();
        s
    }

    fn remerge(&mut self) {
        self.merged = self.global.clone();
        for (k, v) in &self.project {
            match (self.merged.get_mut(k), v) {
                (Some(Value::Object(base)), Value::Object(over)) => {
                    for (ik, iv) in over {
                        base.insert(ik.clone(), iv.clone());
                    }
                }
                (_, v) => {
                    self.merged.insert(k.clone(), v.clone());
                }
            }
        }
    }

    /// Sets a top-level key in the global settings and writes it to disk.
    pub fn set_global(&mut self, key: &str, value: Value) -> Result<(), SettingsError> {
        self.global.insert(key.to_string(), value.clone());
        self.remerge();
        self.persist(|file| {
            file.insert(key.to_string(), value);
        })
    }

    /// Removes a top-level key from the global settings and writes the file.
    pub fn remove_global(&mut self, key: &str) -> Result<(), SettingsError> {
        self.global.remove(key);
        self.remerge();
        self.persist(|file| {
            file.remove(key);
        })
    }

    /// Sets `key.nested` in the global settings (keeping the object's other keys) and
    /// writes it to disk.
    pub fn set_global_nested(
        &mut self,
        key: &str,
        nested: &str,
        value: Value,
    ) -> Result<(), SettingsError> {
        set_nested(&mut self.global, key, nested, value.clone());
        self.remerge();
        self.persist(|file| set_nested(file, key, nested, value))
    }

    /// Appends `item` to the list at `key.nested` in the global settings (keeping what the
    /// file holds now, and not adding it twice) and writes the file.
    pub fn push_global_list(
        &mut self,
        key: &str,
        nested: &str,
        item: &str,
    ) -> Result<(), SettingsError> {
        fn push(map: &mut Map<String, Value>, key: &str, nested: &str, item: &str) {
            let entry = map
                .entry(key.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            if let Value::Object(obj) = entry {
                let list = obj
                    .entry(nested.to_string())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if !list.is_array() {
                    *list = Value::Array(Vec::new());
                }
                if let Value::Array(a) = list {
                    if !a.iter().any(|v| v.as_str() == Some(item)) {
                        a.push(Value::String(item.to_string()));
                    }
                }
            }
        }
        push(&mut self.global, key, nested, item);
        self.remerge();
        self.persist(|file| push(file, key, nested, item))
    }

    /// Sets a top-level key in the project settings (`.pi/settings.json`) and writes it to
    /// disk under the same lock discipline as the global file. Fails when the project file
    /// was not loaded (an untrusted folder) so a change is never silently dropped.
    pub fn set_project(&mut self, key: &str, value: Value) -> Result<(), SettingsError> {
        let Some(path) = self.project_path.clone() else {
            return Err(SettingsError::NoProjectFile);
        };
        self.project.insert(key.to_string(), value.clone());
        self.remerge();
        write_locked(&path, self.project_broken, |file| {
            file.insert(key.to_string(), value);
        })
    }

    /// The global file's own keys, before merging.
    pub fn global_map(&self) -> &Map<String, Value> {
        &self.global
    }

    /// The project file's own keys (empty when it was not loaded).
    pub fn project_map(&self) -> &Map<String, Value> {
        &self.project
    }

    /// Re-reads the global file under its lock, applies `change` and writes it back.
    fn persist(
        &mut self,
        change: impl FnOnce(&mut Map<String, Value>),
    ) -> Result<(), SettingsError> {
        let Some(path) = self.global_path.clone() else {
            return Ok(());
        };
        write_locked(&path, self.global_broken, change)
    }

    fn read_file(&mut self, path: &PathBuf, scope: &str) -> Map<String, Value> {
        let text = match crate::util::files::read_limited_string(
            path,
            crate::util::files::Limit::CONFIG,
        ) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Map::new(),
            Err(e) => {
                self.warnings.push(format!(
                    "(reading, {scope} settings) {}: {e}",
                    path.display()
                ));
                return Map::new();
            }
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => {
                self.warnings.push(format!(
                    "(parsing, {scope} settings) {}: expected a JSON object",
                    path.display()
                ));
                Map::new()
            }
            Err(e) => {
                self.warnings.push(format!(
                    "(parsing, {scope} settings) {}: {e}",
                    path.display()
                ));
                Map::new()
            }
        }
    }

    fn path(&self, keys: &[&str]) -> Option<&Value> {
        let mut v = self.merged.get(keys[0])?;
        for k in &keys[1..] {
            v = v.get(k)?;
        }
        Some(v)
    }

    pub fn str(&self, keys: &[&str]) -> Option<&str> {
        self.path(keys)?.as_str()
    }

    pub fn bool(&self, keys: &[&str]) -> Option<bool> {
        self.path(keys)?.as_bool()
    }

    pub fn u64(&self, keys: &[&str]) -> Option<u64> {
        let v = self.path(keys)?;
        v.as_u64()
            .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
    }

    /// `httpIdleTimeoutMs` (pi 1.6.0): how long a request may wait on silent headers or body,
    /// in ms; `0` or `"disabled"` turns the limit off (`Some(0)`). `None` when absent or not a
    /// non-negative number, as pi ignores it then.
    pub fn http_idle_timeout_ms(&self) -> Option<u64> {
        match self.path(&["httpIdleTimeoutMs"])? {
            Value::String(s) if s.trim().eq_ignore_ascii_case("disabled") => Some(0.0),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            v => v.as_f64(),
        }
        .filter(|f| f.is_finite() && *f >= 0.0)
        .map(|f| f.floor() as u64)
    }

    /// `httpProxy` (pi 1.6.0): a proxy for pi's HTTP requests, read from the agent directory's
    /// settings only (a project cannot route your keys through its proxy).
    pub fn http_proxy(&self) -> Option<String> {
        self.global_map()
            .get("httpProxy")?
            .as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }

    pub fn retry(&self) -> RetrySettings {
        let d = RetrySettings::default();
        RetrySettings {
            enabled: self.bool(&["retry", "enabled"]).unwrap_or(d.enabled),
            max_retries: self
                .u64(&["retry", "maxRetries"])
                .map(|n| n as u32)
                .unwrap_or(d.max_retries),
            base_delay_ms: self
                .u64(&["retry", "baseDelayMs"])
                .unwrap_or(d.base_delay_ms),
            max_agent_delay_ms: self
                .u64(&["retry", "maxAgentDelayMs"])
                .unwrap_or(d.max_agent_delay_ms),
        }
    }

    /// `retry.provider.*`: provider-level retries (default none, as in pi 1.x), the longest
    /// server-requested wait (the legacy `retry.maxDelayMs` counts when the new key is
    /// absent, as pi migrates it) and the answer timeout.
    pub fn provider_retry(&self) -> crate::ai::provider_retry::ProviderRetry {
        let d = crate::ai::provider_retry::ProviderRetry::default();
        crate::ai::provider_retry::ProviderRetry {
            max_retries: self
                .u64(&["retry", "provider", "maxRetries"])
                .map(|n| n.min(u64::from(u32::MAX)) as u32)
                .unwrap_or(d.max_retries),
            max_retry_delay_ms: self
                .u64(&["retry", "provider", "maxRetryDelayMs"])
                .or_else(|| self.u64(&["retry", "maxDelayMs"]))
                .unwrap_or(d.max_retry_delay_ms),
            timeout_ms: self
                .u64(&["retry", "provider", "timeoutMs"])
                .or(d.timeout_ms),
        }
    }

    pub fn compaction(&self) -> CompactionSettings {
        let d = CompactionSettings::default();
        CompactionSettings {
            enabled: self.bool(&["compaction", "enabled"]).unwrap_or(d.enabled),
            reserve_tokens: self
                .u64(&["compaction", "reserveTokens"])
                .unwrap_or(d.reserve_tokens),
            keep_recent_tokens: self
                .u64(&["compaction", "keepRecentTokens"])
                .unwrap_or(d.keep_recent_tokens),
        }
    }

    /// A setting holding an array of strings (non-strings skipped); empty when absent.
    pub fn string_list(&self, key: &str) -> Vec<String> {
        self.merged
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn default_provider(&self) -> Option<&str> {
        self.str(&["defaultProvider"])
    }

    pub fn default_model(&self) -> Option<&str> {
        self.str(&["defaultModel"])
    }

    pub fn default_thinking_level(&self) -> Option<&str> {
        self.str(&["defaultThinkingLevel"])
    }
}

/// Re-reads the settings file at `path` under its lock, applies `change` and writes it back
/// atomically. A file that failed to parse when loaded (`broken`) is never overwritten.
fn write_locked(
    path: &Path,
    broken: bool,
    change: impl FnOnce(&mut Map<String, Value>),
) -> Result<(), SettingsError> {
    if broken {
        return Err(SettingsError::Unreadable(path.to_path_buf()));
    }
    let io = |source: std::io::Error| SettingsError::Save {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let _lock = FileLock::acquire_quick(path).map_err(io)?;
    let mut file =
        match crate::util::files::read_limited_string(path, crate::util::files::Limit::CONFIG) {
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(m)) => m,
                _ => return Err(SettingsError::NotAnObject(path.to_path_buf())),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
            Err(e) => return Err(io(e)),
        };
    change(&mut file);
    let text = serde_json::to_string_pretty(&Value::Object(file)).map_err(|e| io(e.into()))?;
    crate::util::atomic::replace(
        path,
        text.as_bytes(),
        crate::util::atomic::Options::durable(),
    )
    .map_err(io)
}

fn set_nested(map: &mut Map<String, Value>, key: &str, nested: &str, value: Value) {
    let entry = map
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    if let Value::Object(obj) = entry {
        obj.insert(nested.to_string(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_reserve_and_kept_tail_scale_down_with_a_small_window() {
        let d = CompactionSettings::default();
        assert_eq!(d.for_window(200_000), d);
        let small = d.for_window(4096);
        assert_eq!(
            (small.reserve_tokens, small.keep_recent_tokens),
            (1024, 1024)
        );
        // The trigger is three quarters of the window, not "always".
        assert!(!crate::session::compaction::should_compact(
            3000, 4096, &small
        ));
        assert!(crate::session::compaction::should_compact(
            3100, 4096, &small
        ));
        assert_eq!(d.for_window(0), d);
    }

    #[test]
    fn writes_only_changed_keys_and_keeps_concurrent_edits() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let cwd = dir.path().join("proj");
        std::fs::create_dir_all(&agent).unwrap();
        let file = agent.join("settings.json");
        std::fs::write(
            &file,
            r#"{"theme":"light","retry":{"maxRetries":7},"unknown":{"x":1}}"#,
        )
        .unwrap();
        let mut s = Settings::load(&agent, &cwd);
        // Another process edits the file after we loaded it.
        std::fs::write(
            &file,
            r#"{"theme":"dark","retry":{"maxRetries":7},"unknown":{"x":1},"other":true}"#,
        )
        .unwrap();
        s.set_global("defaultModel", "m1".into()).unwrap();
        s.set_global_nested("retry", "enabled", false.into())
            .unwrap();
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            written,
            serde_json::json!({"theme": "dark", "retry": {"maxRetries": 7, "enabled": false},
                "unknown": {"x": 1}, "other": true, "defaultModel": "m1"})
        );
        assert!(std::fs::read_to_string(&file)
            .unwrap()
            .starts_with("{\n  \""));
        assert_eq!(s.default_model(), Some("m1"));
        assert!(!s.retry().enabled);
        assert!(!agent.join("settings.json.lock").exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_settings_json_stays_a_link_with_the_new_setting_in_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let dotfiles = dir.path().join("dotfiles");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&dotfiles).unwrap();
        let real = dotfiles.join("pi-settings.json");
        std::fs::write(&real, r#"{"theme":"light"}"#).unwrap();
        let link = agent.join("settings.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut s = Settings::load(&agent, dir.path());
        s.set_global("defaultModel", "m1".into()).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
        assert_eq!(
            written,
            serde_json::json!({"theme": "light", "defaultModel": "m1"})
        );
    }

    #[test]
    fn http_idle_timeout_and_proxy_as_pi_reads_them() {
        let with = |global: serde_json::Value, project: serde_json::Value| Settings {
            merged: {
                let mut m = global.as_object().unwrap().clone();
                m.extend(project.as_object().unwrap().clone());
                m
            },
            global: global.as_object().unwrap().clone(),
            ..Default::default()
        };
        let idle = |v: serde_json::Value| {
            with(
                serde_json::json!({"httpIdleTimeoutMs": v}),
                serde_json::json!({}),
            )
            .http_idle_timeout_ms()
        };
        assert_eq!(idle(serde_json::json!(120000)), Some(120000));
        assert_eq!(idle(serde_json::json!("disabled")), Some(0));
        assert_eq!(idle(serde_json::json!(" 3000 ")), Some(3000));
        assert_eq!(idle(serde_json::json!(1500.7)), Some(1500));
        assert_eq!(idle(serde_json::json!(-1)), None);
        assert_eq!(idle(serde_json::json!("soon")), None);
        let proxy = with(
            serde_json::json!({"httpProxy": " http://proxy:3128 "}),
            serde_json::json!({}),
        );
        assert_eq!(proxy.http_proxy().as_deref(), Some("http://proxy:3128"));
        // A project's settings cannot set it.
        let project = with(
            serde_json::json!({}),
            serde_json::json!({"httpProxy": "http://evil"}),
        );
        assert_eq!(project.http_proxy(), None);
    }

    #[test]
    fn provider_retry_settings_and_the_legacy_max_delay() {
        use crate::ai::provider_retry::ProviderRetry;
        let with = |v: serde_json::Value| Settings {
            merged: v.as_object().unwrap().clone(),
            ..Default::default()
        };
        assert_eq!(
            with(serde_json::json!({})).provider_retry(),
            ProviderRetry::default()
        );
        let s = with(
            serde_json::json!({"retry": {"maxDelayMs": 5000, "maxAgentDelayMs": 9,
            "provider": {"maxRetries": 2, "timeoutMs": 1500}}}),
        );
        assert_eq!(
            s.provider_retry(),
            ProviderRetry {
                max_retries: 2,
                max_retry_delay_ms: 5000,
                timeout_ms: Some(1500)
            }
        );
        assert_eq!(s.retry().max_agent_delay_ms, 9);
        let s = with(serde_json::json!({"retry": {"maxDelayMs": 5000,
            "provider": {"maxRetryDelayMs": 0}}}));
        assert_eq!(s.provider_retry().max_retry_delay_ms, 0);
    }

    #[test]
    fn never_overwrites_a_broken_global_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, "{broken").unwrap();
        let mut s = Settings::load(dir.path(), dir.path());
        let err = s
            .set_global("defaultModel", "m".into())
            .unwrap_err()
            .to_string();
        assert!(err.contains("could not be read"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{broken");
        // The change still applies for this run.
        assert_eq!(s.default_model(), Some("m"));
    }

    #[test]
    fn project_overrides_global_one_level_deep() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let agent = dir.join("agent");
        let cwd = dir.join("proj");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(cwd.join(".pi")).unwrap();
        std::fs::write(
            agent.join("settings.json"),
            r#"{"retry":{"maxRetries":5,"baseDelayMs":10},"defaultModel":"a"}"#,
        )
        .unwrap();
        std::fs::write(
            cwd.join(".pi/settings.json"),
            r#"{"retry":{"baseDelayMs":20}}"#,
        )
        .unwrap();
        let s = Settings::load(&agent, &cwd);
        assert_eq!(s.compaction(), CompactionSettings::default());
        assert_eq!(s.retry().max_retries, 5);
        assert_eq!(s.retry().base_delay_ms, 20);
        assert_eq!(s.retry().max_agent_delay_ms, 60_000);
        assert_eq!(s.default_model(), Some("a"));
        std::fs::write(cwd.join(".pi/settings.json"), "{oops").unwrap();
        let s = Settings::load(&agent, &cwd);
        assert_eq!(s.warnings.len(), 1);
        assert!(s.warnings[0].contains("project settings"));
    }
}
