//! pi packages: bundles of extensions, skills, prompt templates and themes installed from npm,
//! git or a local path and recorded in the `packages` array of the global or project
//! `settings.json` (a source string, or `{source, extensions?, skills?, prompts?, themes?}` with
//! filters).
//!
//! `source` parses sources, `collect` finds what one package directory contributes,
//! `manager` installs / removes / updates them with the system `git` and `npm`, and this file
//! resolves the configured packages into resource paths for the loader, the extension host and
//! the TUI ([`resolve`]).

pub mod collect;
pub mod config;
pub mod manager;
pub mod source;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use manager::PackageManager;
pub use source::PackageSource;

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

/// Where packages live and which npm to run; shared by resolution and management.
#[derive(Debug, Clone)]
pub struct PackageContext {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// The `npmCommand` setting (command and leading arguments); empty means `npm`.
    pub npm_command: Vec<String>,
}

impl PackageContext {
    /// Reads `npmCommand` from merged settings.
    pub fn new(cwd: &Path, agent_dir: &Path, settings: &super::settings::Settings) -> Self {
        PackageContext {
            cwd: cwd.to_path_buf(),
            agent_dir: agent_dir.to_path_buf(),
            npm_command: settings.string_list("npmCommand"),
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

/// One resource a package contributes, with what pi reports as its `sourceInfo`.
#[derive(Debug, Clone, PartialEq)]
pub struct PackageResource {
    pub kind: ResourceKind,
    pub path: PathBuf,
    /// Left on by the filters (disabled ones are kept for `pi config`).
    pub enabled: bool,
    /// The source string as recorded in settings.
    pub source: String,
    pub scope: Scope,
    /// The package root (or the file's directory for a single-file local source).
    pub base_dir: PathBuf,
}

/// Everything configured packages contribute, in pi's order (project packages first).
#[derive(Debug, Clone, Default)]
pub struct PackageResources {
    pub resources: Vec<PackageResource>,
    /// Packages that could not be found or installed.
    pub warnings: Vec<String>,
}

impl PackageResources {
    /// Enabled paths of one kind, first occurrence of a path kept.
    pub fn enabled(&self, kind: ResourceKind) -> Vec<PathBuf> {
        let mut seen = std::collections::HashSet::new();
        self.resources
            .iter()
            .filter(|r| r.kind == kind && r.enabled)
            .filter(|r| seen.insert(r.path.clone()))
            .map(|r| r.path.clone())
            .collect()
    }

    /// The package resource at `path`, if any.
    pub fn find(&self, path: &Path) -> Option<&PackageResource> {
        self.resources.iter().find(|r| r.path == path)
    }
}

/// How [`resolve`] treats packages recorded in settings but missing on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Install them (pi's startup behaviour, skipped when offline).
    Install,
    /// Leave them out with a warning.
    Skip,
}

/// Resolves the packages of the global settings and — only for a trusted project, so pass
/// `None` otherwise — the project settings into resources. A package in both scopes counts
/// once, from the project.
pub fn resolve(
    ctx: &PackageContext,
    global: &[PackageEntry],
    project: Option<&[PackageEntry]>,
    missing: Missing,
) -> PackageResources {
    let mut out = PackageResources::default();
    let mut ordered: Vec<(&PackageEntry, Scope)> = Vec::new();
    let mut identities: Vec<String> = Vec::new();
    let scoped = project
        .unwrap_or_default()
        .iter()
        .map(|e| (e, Scope::Project))
        .chain(global.iter().map(|e| (e, Scope::User)));
    for (entry, scope) in scoped {
        let id = ctx.identity(&entry.source, scope);
        if !identities.contains(&id) {
            identities.push(id);
            ordered.push((entry, scope));
        }
    }
    let mut manager = PackageManager::new(ctx.clone());
    let offline = manager::offline();
    for (entry, scope) in ordered {
        let parsed = PackageSource::parse(&entry.source);
        let root = match &parsed {
            PackageSource::Local { path } => {
                let resolved = source::resolve_from(path, &ctx.base_dir(scope));
                if !resolved.exists() {
                    out.warnings.push(format!(
                        "Package {} not found: {}",
                        entry.source,
                        resolved.display()
                    ));
                    continue;
                }
                resolved
            }
            _ => {
                let installed = match manager.install_path(&parsed, scope) {
                    Ok(p) => p,
                    Err(e) => {
                        out.warnings.push(format!("Package {}: {e}", entry.source));
                        continue;
                    }
                };
                if !installed.exists() {
                    if missing == Missing::Skip || offline {
                        out.warnings.push(format!(
                            "Package {} is not installed (run `pi install {}`)",
                            entry.source, entry.source
                        ));
                        continue;
                    }
                    if let Err(e) = manager.install_quietly(&parsed, scope) {
                        out.warnings
                            .push(format!("Could not install {}: {e}", entry.source));
                        continue;
                    }
                }
                installed
            }
        };
        let make = |kind, path, enabled, base: &Path| PackageResource {
            kind,
            path,
            enabled,
            source: entry.source.clone(),
            scope,
            base_dir: base.to_path_buf(),
        };
        if root.is_file() {
            let base = root.parent().map(Path::to_path_buf).unwrap_or_default();
            out.resources
                .push(make(ResourceKind::Extensions, root.clone(), true, &base));
            continue;
        }
        match collect::collect_package(&root, entry.filters.as_ref()) {
            Some(found) => out.resources.extend(
                found
                    .into_iter()
                    .map(|f| make(f.kind, f.path, f.enabled, &root)),
            ),
            // A local directory that is no package is loaded as one extension.
            None if matches!(parsed, PackageSource::Local { .. }) => {
                out.resources
                    .push(make(ResourceKind::Extensions, root.clone(), true, &root))
            }
            None => {}
        }
    }
    out
}

/// Resolves the packages a run may load: global ones always, project ones only when the
/// folder is trusted. Reads the settings files itself; installs missing packages like pi.
pub fn resolve_for_run(
    agent_dir: &Path,
    cwd: &Path,
    project_trusted: bool,
    missing: Missing,
) -> PackageResources {
    let settings = super::settings::Settings::load_with(agent_dir, cwd, project_trusted);
    let ctx = PackageContext::new(cwd, agent_dir, &settings);
    let global = entries_of(settings.global_map());
    let project = entries_of(settings.project_map());
    resolve(
        &ctx,
        &global,
        project_trusted.then_some(project.as_slice()),
        missing,
    )
}

#[cfg(test)]
mod tests;
