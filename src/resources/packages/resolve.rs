//! Turning the configured packages into resource paths for the loader, the extension host and
//! the TUI ([`resolve`]), installing what is missing when asked.

use std::path::{Path, PathBuf};

use super::collect;
use super::entry::{entries_of, PackageContext, PackageEntry, ResourceKind, Scope};
use super::manager::{self, PackageManager};
use super::source::{self, PackageSource};

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
    let settings = crate::resources::settings::Settings::load_with(agent_dir, cwd, project_trusted);
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
