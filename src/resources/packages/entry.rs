//! What a configured package is: its [`Scope`], the entry in `settings.json` with its
//! per-kind [`Filters`], the [`ResourceKind`]s it may contribute, and the [`PackageContext`]
//! (directories and npm command) every package operation runs in.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::source::{self, PackageSource};

/// Which settings file a package is recorded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `<agentDir>/settings.json`.
    User,
    /// `<cwd>/.pi/settings.json`.
    Project,
}

impl Scope {
    /// pi's name for the scope (`sourceInfo.scope`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// The four kinds of resource a package can contribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    Extensions,
    Skills,
    Prompts,
    Themes,
}

impl ResourceKind {
    pub const ALL: [ResourceKind; 4] = [
        ResourceKind::Extensions,
        ResourceKind::Skills,
        ResourceKind::Prompts,
        ResourceKind::Themes,
    ];

    /// The key in `package.json` `pi`, in a settings filter, and the conventional directory.
    pub fn key(self) -> &'static str {
        match self {
            ResourceKind::Extensions => "extensions",
            ResourceKind::Skills => "skills",
            ResourceKind::Prompts => "prompts",
            ResourceKind::Themes => "themes",
        }
    }
}

/// Per-kind filter lists of an object-form entry; `None` for a kind means "all of it".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filters {
    lists: [Option<Vec<String>>; 4],
}

impl Filters {
    pub fn get(&self, kind: ResourceKind) -> Option<&[String]> {
        self.lists[kind as usize].as_deref()
    }
}

/// One element of a `packages` array.
#[derive(Debug, Clone, PartialEq)]
pub struct PackageEntry {
    pub source: String,
    /// Set for the object form (even without any list), which `pi list` shows as filtered.
    pub filters: Option<Filters>,
}

impl PackageEntry {
    /// Reads one array element; `None` for anything without a source string.
    pub fn from_value(v: &Value) -> Option<PackageEntry> {
        match v {
            Value::String(s) => Some(PackageEntry {
                source: s.clone(),
                filters: None,
            }),
            Value::Object(o) => {
                let source = o.get("source")?.as_str()?.to_string();
                let mut filters = Filters::default();
                for kind in ResourceKind::ALL {
                    filters.lists[kind as usize] =
                        o.get(kind.key()).and_then(Value::as_array).map(|a| {
                            a.iter()
                                .filter_map(|x| x.as_str().map(String::from))
                                .collect()
                        });
                }
                Some(PackageEntry {
                    source,
                    filters: Some(filters),
                })
            }
            _ => None,
        }
    }
}

/// The `packages` entries of one settings file's own keys.
pub fn entries_of(settings: &Map<String, Value>) -> Vec<PackageEntry> {
    settings
        .get("packages")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(PackageEntry::from_value).collect())
        .unwrap_or_default()
}

/// The warning shown once when a project's `npmCommand` is not obeyed under the sandbox.
pub const PROJECT_NPM_COMMAND_IGNORED: &str = "the project's .pi/settings.json sets npmCommand; ignored while the sandbox is on (a project may not choose a program pi runs unconfined). Set npmCommand in your own settings (~/.pi/agent/settings.json) instead.";

/// Whether commands are or will be confined: a sandbox is installed, or the user's own
/// settings ask for one (`pi install` and friends run without installing it).
fn sandbox_wanted(settings: &crate::resources::settings::Settings) -> bool {
    use crate::util::sandbox::{active_mode, Config, Mode};
    active_mode() != Mode::Off
        || Config::resolve(settings.global_map().get("sandbox"), None)
            .map_or(true, |c| c.mode != Mode::Off)
}

/// Where packages live and which npm to run; shared by resolution and management.
#[derive(Debug, Clone)]
pub struct PackageContext {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// The `npmCommand` setting (command and leading arguments); empty means `npm`.
    pub npm_command: Vec<String>,
}

impl PackageContext {
    /// Reads `npmCommand` from merged settings; under a sandbox only from the user's own
    /// (issue 29: a project's `npmCommand` would run a program of its choosing unconfined).
    pub fn new(
        cwd: &Path,
        agent_dir: &Path,
        settings: &crate::resources::settings::Settings,
    ) -> Self {
        let npm_command = if sandbox_wanted(settings) {
            crate::resources::settings::Settings::in_memory(settings.global_map().clone())
                .string_list("npmCommand")
        } else {
            settings.string_list("npmCommand")
        };
        PackageContext {
            cwd: cwd.to_path_buf(),
            agent_dir: agent_dir.to_path_buf(),
            npm_command,
        }
    }

    /// The directory relative local sources of a scope resolve against.
    pub fn base_dir(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => self.agent_dir.clone(),
            Scope::Project => self.cwd.join(".pi"),
        }
    }

    /// Identity for matching and de-duplication: npm name, git host/path, or the local path
    /// resolved against the scope's settings directory.
    pub fn identity(&self, source: &str, scope: Scope) -> String {
        match PackageSource::parse(source) {
            PackageSource::Npm { name, .. } => format!("npm:{name}"),
            PackageSource::Git { host, path, .. } => format!("git:{host}/{path}"),
            PackageSource::Local { path } => format!(
                "local:{}",
                source::resolve_from(&path, &self.base_dir(scope)).display()
            ),
        }
    }

    /// Identity of a source typed on the command line (local paths resolve against cwd).
    pub fn input_identity(&self, source: &str) -> String {
        match PackageSource::parse(source) {
            PackageSource::Local { path } => {
                format!("local:{}", source::resolve_from(&path, &self.cwd).display())
            }
            _ => self.identity(source, Scope::User),
        }
    }
}
