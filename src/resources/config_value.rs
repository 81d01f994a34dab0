//! pi's config value resolution for API keys and header values: `!command` runs the rest via
//! `sh -c` (trimmed stdout, 10 s timeout, cached per process in the cached form); a value with
//! a `$` is a pi 1.x template (`$NAME`, `${NAME}`, `$$`, `$!`, below); otherwise the name of a
//! set, non-empty environment variable (0.73.1; 1.x takes it literally); otherwise the literal
//! text.
//!
//! pi 1.x's template form (`mcp.json` `env` and `headers`) is [`resolve_template_or_err`]:
//! `${NAME}` and `$NAME` expand environment variables inside the text, `$$` and `$!` are a
//! literal `$` and `!`, and a value starting with `!` is a command.

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
    env_or_literal(config)
}

/// Resolves `config` without the command cache (models.json values, resolved per request).
pub fn resolve_config_value_uncached(config: &str) -> Option<String> {
    match config.strip_prefix('!') {
        Some(cmd) => run_command(cmd),
        None => env_or_literal(config),
    }
}

/// Like [`resolve_config_value_uncached`] but a failure is an error naming `description`.
pub fn resolve_config_value_or_err(config: &str, description: &str) -> Result<String, String> {
    if is_template(config) {
        return resolve_template_or_err(config, description);
    }
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

/// One piece of a template value.
enum Part<'a> {
    Literal(std::borrow::Cow<'a, str>),
    Env(&'a str),
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits a template into literal text and `$NAME` / `${NAME}` references, as pi 1.x does: an
/// invalid `${…}` or a `$` not followed by a name stays literal.
fn template_parts(config: &str) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    let mut rest = config;
    while let Some(at) = rest.find('$') {
        if at > 0 {
            parts.push(Part::Literal(rest[..at].into()));
        }
        let after = &rest[at + 1..];
        match after.chars().next() {
            Some(c @ ('$' | '!')) => {
                parts.push(Part::Literal(c.to_string().into()));
                rest = &after[1..];
            }
            Some('{') => match after.find('}') {
                Some(end) if is_env_name(&after[1..end]) => {
                    parts.push(Part::Env(&after[1..end]));
                    rest = &after[end + 1..];
                }
                Some(end) => {
                    parts.push(Part::Literal(rest[at..at + end + 2].into()));
                    rest = &after[end + 1..];
                }
                None => {
                    parts.push(Part::Literal("$".into()));
                    rest = after;
                }
            },
            _ => {
                let len = after
                    .char_indices()
                    .find(|&(i, c)| {
                        !(c.is_ascii_alphabetic() || c == '_' || (i > 0 && c.is_ascii_digit()))
                    })
                    .map_or(after.len(), |(i, _)| i);
                if len > 0 {
                    parts.push(Part::Env(&after[..len]));
                } else {
                    parts.push(Part::Literal("$".into()));
                }
                rest = &after[len..];
            }
        }
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest.into()));
    }
    parts
}

/// Resolves a pi 1.x template value (`mcp.json` `env` and `headers`): `!command` when the whole
/// value starts with `!` (run every time), otherwise the text with `${NAME}` / `$NAME` replaced
/// by set, non-empty environment variables. A failure names `description` and what is missing.
pub fn resolve_template_or_err(config: &str, description: &str) -> Result<String, String> {
    if let Some(cmd) = config.strip_prefix('!') {
        return run_command(cmd)
            .ok_or_else(|| format!("Failed to resolve {description} from shell command: {cmd}"));
    }
    let mut out = String::new();
    let mut missing: Vec<&str> = Vec::new();
    for part in template_parts(config) {
        match part {
            Part::Literal(text) => out.push_str(&text),
            Part::Env(name) => match std::env::var(name) {
                Ok(v) if !v.is_empty() => out.push_str(&v),
                _ if !missing.contains(&name) => missing.push(name),
                _ => {}
            },
        }
    }
    match missing.len() {
        0 => Ok(out),
        1 => Err(format!(
            "Failed to resolve {description} from environment variable: {}",
            missing[0]
        )),
        _ => Err(format!(
            "Failed to resolve {description} from environment variables: {}",
            missing.join(", ")
        )),
    }
}

/// Forgets cached command results.
pub fn clear_config_value_cache() {
    if let Ok(mut c) = cache().lock() {
        c.clear();
    }
}

/// A plain value (not a command) that pi 1.x reads as a template.
fn is_template(config: &str) -> bool {
    !config.starts_with('!') && config.contains('$')
}

fn env_or_literal(config: &str) -> Option<String> {
    if is_template(config) {
        return resolve_template_or_err(config, "value").ok();
    }
    Some(match std::env::var(config) {
        Ok(v) if !v.is_empty() => v,
        _ => config.to_string(),
    })
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
    fn templates_expand_env_references_inside_text() {
        std::env::set_var("PI_TEST_TEMPLATE_TOKEN", "t0k");
        let r = |c: &str| resolve_template_or_err(c, "header \"A\"");
        assert_eq!(r("Bearer ${PI_TEST_TEMPLATE_TOKEN}").unwrap(), "Bearer t0k");
        assert_eq!(r("$PI_TEST_TEMPLATE_TOKEN/x").unwrap(), "t0k/x");
        assert_eq!(
            r("cost $$5 $!x ${not valid} ${open").unwrap(),
            "cost $5 !x ${not valid} ${open"
        );
        assert_eq!(
            r("plain PI_TEST_TEMPLATE_TOKEN").unwrap(),
            "plain PI_TEST_TEMPLATE_TOKEN"
        );
        assert_eq!(r("a $ b $1").unwrap(), "a $ b $1");
        assert_eq!(
            r("${PI_TEST_TEMPLATE_UNSET_A}").unwrap_err(),
            "Failed to resolve header \"A\" from environment variable: PI_TEST_TEMPLATE_UNSET_A"
        );
        assert_eq!(
            r("${PI_TEST_TEMPLATE_UNSET_A}:$PI_TEST_TEMPLATE_UNSET_B").unwrap_err(),
            "Failed to resolve header \"A\" from environment variables: \
             PI_TEST_TEMPLATE_UNSET_A, PI_TEST_TEMPLATE_UNSET_B"
        );
        assert_eq!(r("!printf ' v '").unwrap(), "v");
        assert_eq!(
            r("!false").unwrap_err(),
            "Failed to resolve header \"A\" from shell command: false"
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

    #[test]
    fn api_keys_take_pi_1x_templates_and_still_read_bare_env_names() {
        std::env::set_var("PI_TEST_CONFIG_VALUE_TPL", "tpl-key");
        // 1.x: `$NAME` / `${NAME}` in models.json and auth.json values.
        for cfg in ["$PI_TEST_CONFIG_VALUE_TPL", "${PI_TEST_CONFIG_VALUE_TPL}"] {
            assert_eq!(resolve_config_value(cfg).as_deref(), Some("tpl-key"));
            assert_eq!(
                resolve_config_value_or_err(cfg, "API key").as_deref(),
                Ok("tpl-key")
            );
        }
        assert_eq!(
            resolve_config_value_uncached("Bearer $PI_TEST_CONFIG_VALUE_TPL").as_deref(),
            Some("Bearer tpl-key")
        );
        assert_eq!(resolve_config_value("sk-$$1").as_deref(), Some("sk-$1"));
        assert_eq!(
            resolve_config_value_or_err("$PI_TEST_CONFIG_VALUE_TPL_UNSET", "API key").unwrap_err(),
            "Failed to resolve API key from environment variable: PI_TEST_CONFIG_VALUE_TPL_UNSET"
        );
        assert_eq!(
            resolve_config_value("$PI_TEST_CONFIG_VALUE_TPL_UNSET"),
            None
        );
        // 0.73.1 files keep working: a bare name of a set variable is still read.
        assert_eq!(
            resolve_config_value("PI_TEST_CONFIG_VALUE_TPL").as_deref(),
            Some("tpl-key")
        );
    }
}
