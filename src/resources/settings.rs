//! `settings.json`: the global file in the agent dir and the project file `.pi/settings.json`,
//! merged as pi merges them (project wins per top-level key; plain objects merged one level).
//! A malformed file is reported as a warning and ignored — settings never stop pi from running.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Agent-level retry policy (`retry.*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrySettings {
    pub enabled: bool,
    pub max_retries: u32,
    pub base_delay_ms: u64,
    /// Longest server-requested wait we accept (`retry.provider.maxRetryDelayMs`, 0 = no cap).
    pub max_retry_delay_ms: u64,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 2000,
            max_retry_delay_ms: 60_000,
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
}

impl Settings {
    /// Loads `<agent_dir>/settings.json` and `<cwd>/.pi/settings.json`.
    pub fn load(agent_dir: &Path, cwd: &Path) -> Settings {
        Settings::load_with(agent_dir, cwd, true)
    }

    /// Like `load`; the project file is read only when `include_project` (a trusted folder).
    pub fn load_with(agent_dir: &Path, cwd: &Path, include_project: bool) -> Settings {
        let mut s = Settings::default();
        let global = s.read_file(&agent_dir.join("settings.json"), "global");
        let project = if include_project {
            s.read_file(&cwd.join(".pi").join("settings.json"), "project")
        } else {
            Map::new()
        };
        s.merged = global;
        for (k, v) in project {
            match (s.merged.get_mut(&k), v) {
                (Some(Value::Object(base)), Value::Object(over)) => {
                    for (ik, iv) in over {
                        base.insert(ik, iv);
                    }
                }
                (_, v) => {
                    s.merged.insert(k, v);
                }
            }
        }
        s
    }

    fn read_file(&mut self, path: &PathBuf, scope: &str) -> Map<String, Value> {
        let text = match std::fs::read_to_string(path) {
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
            max_retry_delay_ms: self
                .u64(&["retry", "provider", "maxRetryDelayMs"])
                .unwrap_or(d.max_retry_delay_ms),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_overrides_global_one_level_deep() {
        let dir = std::env::temp_dir().join(format!("pi-settings-{}", std::process::id()));
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
        assert_eq!(s.default_model(), Some("a"));
        std::fs::write(cwd.join(".pi/settings.json"), "{oops").unwrap();
        let s = Settings::load(&agent, &cwd);
        assert_eq!(s.warnings.len(), 1);
        assert!(s.warnings[0].contains("project settings"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
