//! Configuration files under the agent dir: `auth.json` credentials, `models.json` custom
//! models, the model registry built from them plus the built-in catalog, model selection and
//! `--list-models`. Also the JSONC reader and pi's `!command` / env-name / literal value
//! resolution that these files share. Project resources — context files, skills, prompt
//! templates, `SYSTEM.md` — are gathered by `loader`, gated by project `trust`.

pub mod auth;
pub mod config_value;
pub mod context_files;
pub mod credential_file;
pub mod file_lock;
pub mod frontmatter;
pub mod jsonc;
pub mod list_models;
pub mod loader;
pub mod local_server;
pub mod model_registry;
pub mod model_resolve;
pub mod model_source;
pub mod models_json;
pub mod oauth;
pub mod packages;
pub mod provider_names;
pub mod settings;
pub mod skills;
pub mod templates;
pub mod trust;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

/// Expands a leading `~` (alone or followed by `/`) to `$HOME`.
pub fn expand_tilde(path: &str) -> PathBuf {
    crate::util::home::expand_tilde_path(path)
}

/// The agent dir: `$PI_CODING_AGENT_DIR` (with `~` expansion) else `$HOME/.pi/agent`.
pub fn agent_dir() -> PathBuf {
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(dir) if !dir.is_empty() => expand_tilde(&dir),
        _ => {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".pi").join("agent")
        }
    }
}
