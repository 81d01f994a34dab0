//! Project trust, as pi 1.x defines it (`docs/security.md`). A folder may carry resources that
//! run code or steer pi: `.pi/settings.json`, `.pi/mcp.json`, `.pi/extensions|skills|prompts|
//! themes`, `.pi/SYSTEM.md`, `.pi/APPEND_SYSTEM.md`, and `.agents/skills` in the working
//! directory or an ancestor (not `~/.agents/skills`, which is the user's own). Those load only
//! in a trusted folder. Context files (`AGENTS.md`, `CLAUDE.md`, `AGENTS.override.md`) are not
//! protected: they load whatever the decision.
//!
//! The decision, first that applies: `-a/--approve` or `-na/--no-approve` (this process only);
//! a folder without protected resources is trusted unless a saved decision says otherwise;
//! the first extension answering `project_trust`; the closest saved decision in
//! `<agentDir>/trust.json` (`{"<absolute dir>": true|false}`, unknown content kept); the global
//! `defaultProjectTrust` setting (`ask`, `always`, `never`). `ask` means the interactive trust
//! prompt; every other mode treats it as "not trusted".

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// What `.pi/` holds that needs a trust decision.
const PROTECTED_PI_ENTRIES: [&str; 8] = [
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
];

/// Where project resources may come from, and whether they may be loaded.
#[derive(Debug, Clone)]
pub struct ProjectScope {
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
    pub agent_dir: PathBuf,
    /// Project resources may be loaded.
    pub trusted: bool,
    /// A decision applies (flag, extension, saved, `always`/`never`, or nothing to protect);
    /// false when `defaultProjectTrust` is `ask` and nobody answered yet.
    pub decided: bool,
}

impl ProjectScope {
    /// A scope that trusts everything (used by tests and callers without trust handling).
    pub fn trusting(cwd: &Path, agent_dir: &Path) -> ProjectScope {
        ProjectScope {
            cwd: cwd.to_path_buf(),
            home: home_dir(),
            agent_dir: agent_dir.to_path_buf(),
            trusted: true,
            decided: true,
        }
    }

    /// Whether resources found in `dir` (the directory holding `.pi/` or `.agents/`) belong to
    /// the project: `dir` is the working directory, below it or one of its ancestors; never
    /// the agent dir or `$HOME` itself (whose `.agents/skills` are the user's).
    pub fn is_project_dir(&self, dir: &Path) -> bool {
        if dir.starts_with(&self.agent_dir) || self.home.as_deref() == Some(dir) {
            return false;
        }
        self.cwd.starts_with(dir) || dir.starts_with(&self.cwd)
    }

    /// Whether resources found in `dir` may be loaded.
    pub fn allows(&self, dir: &Path) -> bool {
        self.trusted || !self.is_project_dir(dir)
    }
}

pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Whether `cwd` has anything trust protects: a protected entry in `cwd/.pi`, or
/// `.agents/skills` in `cwd` or an ancestor other than `$HOME`. A bare `.pi` needs no decision.
pub fn has_protected_resources(cwd: &Path, home: Option<&Path>) -> bool {
    let pi = cwd.join(".pi");
    if PROTECTED_PI_ENTRIES.iter().any(|e| pi.join(e).exists()) {
        return true;
    }
    cwd.ancestors()
        .filter(|dir| Some(*dir) != home)
        .any(|dir| dir.join(".agents").join("skills").exists())
}

/// The `defaultProjectTrust` setting (read from the global settings only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DefaultTrust {
    #[default]
    Ask,
    Always,
    Never,
}

impl DefaultTrust {
    /// The global settings' value; anything unknown is pi's default, `ask`.
    pub fn from_global(global: &Map<String, Value>) -> DefaultTrust {
        match global.get("defaultProjectTrust").and_then(Value::as_str) {
            Some("always") => DefaultTrust::Always,
            Some("never") => DefaultTrust::Never,
            _ => DefaultTrust::Ask,
        }
    }
}

/// An extension's answer to the `project_trust` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtensionTrust {
    pub trusted: bool,
    /// Save the answer to trust.json for later processes.
    pub remember: bool,
}

/// Asks the run's user-level and command-line extensions about `cwd`; the first that answers
/// decides (`None`: nobody did). The extension host provides it.
pub type ProjectTrustHook<'a> = &'a dyn Fn(&Path) -> Option<ExtensionTrust>;

/// Everything the decision depends on besides trust.json.
#[derive(Clone, Copy, Default)]
pub struct TrustInputs<'a> {
    /// `-a` (`Some(true)`) or `-na` (`Some(false)`).
    pub cli_override: Option<bool>,
    pub default: DefaultTrust,
    pub extension: Option<ProjectTrustHook<'a>>,
}

/// Which rule decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustSource {
    /// `-a` or `-na`.
    CommandLine,
    /// The folder has nothing trust protects.
    NothingProtected,
    Extension,
    /// The closest decision in trust.json.
    Saved,
    /// `defaultProjectTrust: always` or `never`.
    Setting,
    /// `defaultProjectTrust: ask` and nobody answered: interactive mode asks, other modes skip.
    Ask,
}

/// The decision for one working directory.
#[derive(Debug, Clone)]
pub struct TrustDecision {
    pub scope: ProjectScope,
    pub source: TrustSource,
    /// An unreadable trust.json, a failed save of an extension's remembered answer.
    pub warnings: Vec<String>,
}

impl TrustDecision {
    /// Whether interactive mode should show the trust prompt.
    pub fn needs_prompt(&self) -> bool {
        self.source == TrustSource::Ask
    }
}

/// `<agentDir>/trust.json`, read whole so unknown content survives a rewrite.
#[derive(Debug, Clone, Default)]
pub struct TrustStore {
    pub path: PathBuf,
    pub map: Map<String, Value>,
    pub warning: Option<String>,
}

impl TrustStore {
    pub fn load(agent_dir: &Path) -> TrustStore {
        let path = agent_dir.join("trust.json");
        let mut store = TrustStore {
            path: path.clone(),
            ..Default::default()
        };
        match crate::util::files::read_limited_string(&path, crate::util::files::Limit::CONFIG) {
            Ok(text) => match serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}')) {
                Ok(Value::Object(m)) => store.map = m,
                Ok(_) => {
                    store.warning = Some(format!("{}: expected a JSON object", path.display()))
                }
                Err(e) => store.warning = Some(format!("{}: {e}", path.display())),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => store.warning = Some(format!("{}: {e}", path.display())),
        }
        store
    }

    /// The decision recorded for `dir` or its nearest ancestor.
    pub fn decision(&self, dir: &Path) -> Option<bool> {
        dir.ancestors()
            .find_map(|d| self.map.get(d.to_string_lossy().as_ref())?.as_bool())
    }

    /// Records a decision for `dir` and writes the file (creating the agent dir if needed).
    /// A file we could not parse is not overwritten.
    pub fn record(&mut self, dir: &Path, trusted: bool) -> std::io::Result<()> {
        if self.warning.is_some() && self.path.exists() {
            return Err(std::io::Error::other(format!(
                "not rewriting unreadable {}",
                self.path.display()
            )));
        }
        self.map
            .insert(dir.to_string_lossy().into_owned(), Value::Bool(trusted));
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let text = serde_json::to_string_pretty(&Value::Object(self.map.clone()))
            .unwrap_or_else(|_| "{}".into());
        crate::util::atomic::replace(
            &self.path,
            format!("{text}\n").as_bytes(),
            crate::util::atomic::Options::default(),
        )
    }
}

/// Decides trust for `cwd`. Nothing is written unless an extension asks to remember its answer.
pub fn resolve(agent_dir: &Path, cwd: &Path, inputs: TrustInputs) -> TrustDecision {
    let home = home_dir();
    let mut decision = TrustDecision {
        scope: ProjectScope {
            cwd: cwd.to_path_buf(),
            home: home.clone(),
            agent_dir: agent_dir.to_path_buf(),
            trusted: false,
            decided: true,
        },
        source: TrustSource::CommandLine,
        warnings: Vec::new(),
    };
    if let Some(trusted) = inputs.cli_override {
        decision.scope.trusted = trusted;
        return decision;
    }
    let mut store = TrustStore::load(agent_dir);
    if let Some(w) = &store.warning {
        decision
            .warnings
            .push(format!("Could not read trust decisions: {w}"));
    }
    let saved = store.decision(cwd);
    let (trusted, source) = if !has_protected_resources(cwd, home.as_deref()) {
        (saved.unwrap_or(true), TrustSource::NothingProtected)
    } else if let Some(answer) = inputs.extension.and_then(|ask| ask(cwd)) {
        if answer.remember {
            if let Err(e) = store.record(cwd, answer.trusted) {
                decision
                    .warnings
                    .push(format!("Could not save trust for {}: {e}", cwd.display()));
            }
        }
        (answer.trusted, TrustSource::Extension)
    } else if let Some(saved) = saved {
        (saved, TrustSource::Saved)
    } else {
        match inputs.default {
            DefaultTrust::Always => (true, TrustSource::Setting),
            DefaultTrust::Never => (false, TrustSource::Setting),
            DefaultTrust::Ask => (false, TrustSource::Ask),
        }
    };
    decision.scope.trusted = trusted;
    decision.scope.decided = source != TrustSource::Ask;
    decision.source = source;
    decision
}

/// The one note about project resources left out because the folder is not trusted. For a UI
/// to show; print, JSON and RPC modes skip them silently, as pi does.
pub fn untrusted_note(cwd: &Path, skipped: &[PathBuf]) -> String {
    let list: Vec<String> = skipped.iter().map(|p| p.display().to_string()).collect();
    format!(
        "{} is not a trusted folder, so its project resources were not loaded ({}). \
         Use /trust to trust it, or start pi with --approve for this run.",
        cwd.display(),
        list.join(", ")
    )
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
