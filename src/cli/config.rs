//! What every run reads before anything else: the working directory, the project-trust
//! decision (from `-a/-na`, trust.json and the global `defaultProjectTrust`), the settings it
//! allows, and the model registry. Warnings are collected, not printed: each mode decides
//! where they go (stderr, or the TUI once it owns the screen).

use std::path::PathBuf;

use super::args::Args;
use crate::resources::settings::Settings;
use crate::resources::trust::{self, DefaultTrust, TrustDecision, TrustInputs};

/// pi's words when the directory pi was started in has been deleted.
pub const MISSING_CWD: &str = "Error: The current working directory no longer exists. Change to an existing directory and try again.";

/// The working directory, or pi's instruction to `cd` somewhere that exists.
pub fn current_dir() -> Result<PathBuf, String> {
    std::env::current_dir().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => MISSING_CWD.to_string(),
        _ => format!("Error: cannot read the current directory: {e}"),
    })
}

pub struct Config {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    pub trust: TrustDecision,
    pub settings: Settings,
    pub models: super::models::Models,
    /// Unreadable trust.json or settings, for the mode to show.
    pub warnings: Vec<String>,
}

/// Decides project trust for `cwd` from the flags, the user's and CLI extensions
/// (`project_trust`), trust.json and the global settings.
pub fn decide_trust(
    args: &Args,
    agent_dir: &std::path::Path,
    cwd: &std::path::Path,
) -> TrustDecision {
    let global = Settings::load_with(agent_dir, cwd, false);
    trust::resolve(
        agent_dir,
        cwd,
        TrustInputs {
            cli_override: args.trust_override,
            default: DefaultTrust::from_global(global.global_map()),
            extension: Some(&|cwd| super::project_trust::ask_extensions(args, agent_dir, cwd)),
        },
    )
}

pub fn load(args: &Args) -> Result<Config, String> {
    let cwd = current_dir()?;
    let agent_dir = crate::resources::agent_dir();
    let trust = decide_trust(args, &agent_dir, &cwd);
    let settings = Settings::load_with(&agent_dir, &cwd, trust.scope.trusted);
    let mut warnings = trust.warnings.clone();
    warnings.extend(settings.warnings.iter().cloned());
    let models = super::models::load(&agent_dir);
    warnings.extend(models.auth_warnings());
    Ok(Config {
        cwd,
        agent_dir,
        trust,
        settings,
        models,
        warnings,
    })
}
