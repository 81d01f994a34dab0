//! pi's config value resolution for API keys and header values: `!command` runs the rest via
//! `sh -c` (trimmed stdout, 10 s timeout, cached per process in the cached form); otherwise the
//! name of a set, non-empty environment variable; otherwise the literal text.

use std::collections::HashMap;
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::util::process::{self, RunOptions};

const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

fn cache() -> &'static Mutex<HashMap<String, Option<String>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Resolves `config`, caching `!command` results for the life of the process.
pub fn resolve_config_value(config: &str) -> Option<String> {
    if let Some(cmd) = config.strip_prefix('!') {
        if let Some(hit) = cache().lock().ok().and_then(|c| c.get(config).cloned()) {
            return hit;
        }
        let value = run_command(cmd);
        if let Ok(mut c) = cache().lock() {
            c.insert(config.to_string(), value.clone());
        }
        return value;
    }
    Some(env_or_literal(config))
}

/// Resolves `config` without the command cache (models.json values, resolved per request).
pub fn resolve_config_value_uncached(config: &str) -> Option<String> {
    match config.strip_prefix('!') {
        Some(cmd) => run_command(cmd),
        None => Some(env_or_literal(config)),
    }
}

/// Like [`resolve_config_value_uncached`] but a failure is an error naming `description`.
pub fn resolve_config_value_or_err(config: &str, description: &str) -> Result<String, String> {
    match resolve_config_value_uncached(config) {
        Some(v) => Ok(v),
        None => match config.strip_prefix('!') {
            Some(cmd) => Err(format!(
                "Failed to resolve {description} from shell command: {cmd}"
            )),
            None => Err(format!("Failed to resolve {description}")),
        },
    }
}

/// Forgets cached command results.
pub fn clear_config_value_cache() {
    if let Ok(mut c) = cache().lock() {
        c.clear();
    }
}

fn env_or_literal(config: &str) -> String {
    match std::env::var(config) {
        Ok(v) if !v.is_empty() => v,
        _ => config.to_string(),
    }
}

/// Runs `cmd` through `sh -c`; trimmed stdout on success, `None` on failure, empty output or
/// timeout (the whole process group is killed).
fn run_command(cmd: &str) -> Option<String> {
    let out = process::run(
        Command::new("sh").arg("-c").arg(cmd),
        &RunOptions {
            timeout: Some(COMMAND_TIMEOUT),
            capture_stderr: false,
            ..Default::default()
        },
    )
    .ok()?;
    if out.killed() || !out.status?.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_values_are_trimmed_and_cached() {
        let dir = tempfile::tempdir().unwrap();
        let counter = dir.path().join("n");
        let cfg = format!(
            "!echo x >> {0}; printf '  secret-key \\n'",
            counter.display()
        );
        assert_eq!(resolve_config_value(&cfg).as_deref(), Some("secret-key"));
        assert_eq!(resolve_config_value(&cfg).as_deref(), Some("secret-key"));
        let runs = std::fs::read_to_string(&counter).unwrap();
        assert_eq!(runs.lines().count(), 1, "cached after the first run");
        assert_eq!(
            resolve_config_value_uncached(&cfg).as_deref(),
            Some("secret-key")
        );
        let runs = std::fs::read_to_string(&counter).unwrap();
        assert_eq!(runs.lines().count(), 2);
    }

    #[test]
    fn failing_or_empty_commands_resolve_to_none() {
        assert_eq!(resolve_config_value_uncached("!exit 3"), None);
        assert_eq!(resolve_config_value_uncached("!true"), None);
        assert_eq!(
            resolve_config_value_or_err("!false", "API key for provider \"x\"").unwrap_err(),
            "Failed to resolve API key for provider \"x\" from shell command: false"
        );
    }

    #[test]
    fn env_names_then_literals() {
        std::env::set_var("PI_TEST_CONFIG_VALUE_VAR", "from-env");
        assert_eq!(
            resolve_config_value("PI_TEST_CONFIG_VALUE_VAR").as_deref(),
            Some("from-env")
        );
        assert_eq!(
            resolve_config_value("PI_TEST_CONFIG_VALUE_UNSET_VAR").as_deref(),
            Some("PI_TEST_CONFIG_VALUE_UNSET_VAR")
        );
        assert_eq!(
            resolve_config_value("sk-literal").as_deref(),
            Some("sk-literal")
        );
    }
}
