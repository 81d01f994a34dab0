//! Configuration read from disk: settings, auth, models.json.

pub mod settings;

/// The agent dir: `$PI_CODING_AGENT_DIR` (with `~` expanded) or `~/.pi/agent`.
pub fn agent_dir() -> std::path::PathBuf {
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_default();
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(v) if v == "~" => home,
        Ok(v) if v.starts_with("~/") => home.join(&v[2..]),
        Ok(v) if !v.is_empty() => v.into(),
        _ => home.join(".pi").join("agent"),
    }
}
