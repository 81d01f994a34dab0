//! Project trust. Resources that come from the project — `.pi/settings.json`, `.pi/skills`,
//! `.pi/prompts`, `.pi/SYSTEM.md`, `.pi/APPEND_SYSTEM.md`, `.agents/skills` and context files in
//! the working directory or its ancestors — are only loaded once the user trusts the folder.
//! Directories that are `$HOME` or above it count as the user's own, not the project's.
//!
//! Decisions live in `<agentDir>/trust.json` as `{"<absolute dir>": true|false}`; the nearest
//! recorded ancestor of the working directory decides. Unknown content in the file is kept.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// What the command line asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrustChoice {
    /// `--approve`: trust the folder for this run and record it.
    Approve,
    /// `--no-approve`: ignore project resources for this run.
    Deny,
    /// Neither flag: use the recorded decision, else treat the folder as untrusted.
    #[default]
    Recorded,
}

/// Where project resources may come from, and whether they may be loaded.
#[derive(Debug, Clone)]
pub struct ProjectScope {
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
    pub agent_dir: PathBuf,
    /// Project resources may be loaded.
    pub trusted: bool,
    /// The folder has a decision in trust.json (or one was just recorded).
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

    /// Whether resources found in `dir` (the directory holding `.pi/`, `.agents/` or a
    /// context file) belong to the project: `dir` is the working directory, below it, or one
    /// of its ancestors below `$HOME`; never the agent dir.
    pub fn is_project_dir(&self, dir: &Path) -> bool {
        if dir.starts_with(&self.agent_dir) {
            return false;
        }
        if !self.cwd.starts_with(dir) && !dir.starts_with(&self.cwd) {
            return false;
        }
        match &self.home {
            Some(home) => !home.starts_with(dir),
            None => true,
        }
    }

    /// Whether the working directory itself is a project folder (not `$HOME` or above).
    pub fn cwd_is_project(&self) -> bool {
        match &self.home {
            Some(home) => !home.starts_with(&self.cwd),
            None => true,
        }
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
        match std::fs::read_to_string(&path) {
            Ok(text) => match serde_json::from_str::<Value>(&text) {
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
        let tmp = self.path.with_extension("json.tmp");
        std::fs::write(&tmp, format!("{text}\n"))?;
        std::fs::rename(&tmp, &self.path)
    }
}

/// Decides trust for `cwd` from the flag and trust.json, recording `--approve`. Returns the
/// scope and warnings (unreadable or unwritable trust.json).
pub fn resolve(agent_dir: &Path, cwd: &Path, choice: TrustChoice) -> (ProjectScope, Vec<String>) {
    let mut warnings = Vec::new();
    let mut store = TrustStore::load(agent_dir);
    if let Some(w) = store.warning.clone() {
        warnings.push(format!("Could not read trust decisions: {w}"));
    }
    let mut scope = ProjectScope {
        cwd: cwd.to_path_buf(),
        home: home_dir(),
        agent_dir: agent_dir.to_path_buf(),
        trusted: false,
        decided: false,
    };
    if !scope.cwd_is_project() {
        scope.trusted = true;
        scope.decided = true;
        return (scope, warnings);
    }
    match choice {
        TrustChoice::Approve => {
            scope.trusted = true;
            scope.decided = true;
            if store.map.get(cwd.to_string_lossy().as_ref()) != Some(&Value::Bool(true)) {
                if let Err(e) = store.record(cwd, true) {
                    warnings.push(format!("Could not record trust for {}: {e}", cwd.display()));
                }
            }
        }
        TrustChoice::Deny => scope.decided = true,
        TrustChoice::Recorded => {
            let d = store.decision(cwd);
            scope.trusted = d == Some(true);
            scope.decided = d.is_some();
        }
    }
    (scope, warnings)
}

/// The one note printed when project resources were skipped because the folder is untrusted.
pub fn untrusted_note(cwd: &Path, skipped: &[PathBuf]) -> String {
    let list: Vec<String> = skipped.iter().map(|p| p.display().to_string()).collect();
    format!(
        "Note: {} is not a trusted folder, so its project resources were not loaded ({}). \
         Run pi with --approve to trust it (recorded in trust.json), or --no-approve to silence this.",
        cwd.display(),
        list.join(", ")
    )
}
