//! Where extensions come from and how each one is started. Sources, in load order: the global
//! folder `<agentDir>/extensions/`, the project folder `.pi/extensions/` (only when the project
//! is trusted), the settings `extensions` array, paths contributed by pi packages, and
//! `-e/--extension` paths. `--no-extensions` drops every discovered source but keeps `-e`.
//!
//! Inside an extensions folder an entry is an extension when it is
//! * an executable file (any language; started directly),
//! * a `*.ts`, `*.mts`, `*.js`, `*.mjs` file (run through the Node.js bridge), or
//! * a directory holding an executable `extension` or `index`, else an `index.{ts,js,mjs}`,
//!   else a `package.json` whose `pi.extensions` lists entry files.
//!
//! Everything else (READMEs, data files, non-executable scripts) is ignored.

use std::path::{Path, PathBuf};

use crate::resources::trust::ProjectScope;
use crate::util::sort;

/// Where an extension was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
    /// `-e` on the command line.
    Temporary,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Temporary => "temporary",
        }
    }
}

/// How an extension is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    Executable(PathBuf),
    /// A TypeScript/JavaScript module for the Node.js bridge.
    Node(PathBuf),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExtensionSource {
    /// Position in load order (also the host's key for the process).
    pub index: usize,
    /// The path as discovered or given (file or directory).
    pub path: PathBuf,
    pub launch: Launch,
    pub scope: Scope,
}

impl ExtensionSource {
    /// A short name for messages: the file name, or the directory name for `dir/index.ts`.
    pub fn name(&self) -> String {
        let p = &self.path;
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
        match stem.as_deref() {
            Some("index" | "extension") => p
                .parent()
                .and_then(Path::file_name)
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            Some(s) => s.to_string(),
            None => p.to_string_lossy().into_owned(),
        }
    }

    /// The command line that starts it (a Node module runs in the session's shared bridge).
    pub fn command(&self) -> Result<Vec<String>, String> {
        match &self.launch {
            Launch::Executable(p) => Ok(vec![p.to_string_lossy().into_owned()]),
            Launch::Node(_) => super::node_bridge::command(),
        }
    }
}

/// What to look for.
pub struct DiscoveryOptions<'a> {
    pub agent_dir: &'a Path,
    pub cwd: &'a Path,
    pub scope: &'a ProjectScope,
    /// Settings `extensions` entries.
    pub settings_paths: Vec<String>,
    /// Extension paths contributed by installed pi packages.
    pub package_paths: Vec<PathBuf>,
    /// `-e/--extension` values.
    pub cli_paths: Vec<String>,
    pub no_extensions: bool,
}

/// All extension sources in load order, without duplicates, plus warnings (missing `-e`
/// paths, unusable entries) and the project folders skipped because the project is not
/// trusted.
pub fn discover(o: &DiscoveryOptions) -> (Vec<ExtensionSource>, Vec<String>, Vec<PathBuf>) {
    let mut found: Vec<(PathBuf, Launch, Scope)> = Vec::new();
    let mut warnings = Vec::new();
    let mut skipped = Vec::new();
    if !o.no_extensions {
        scan_dir(&o.agent_dir.join("extensions"), Scope::User, &mut found);
        let project = o.cwd.join(".pi").join("extensions");
        if project.is_dir() {
            if o.scope.trusted {
                scan_dir(&project, Scope::Project, &mut found);
            } else {
                skipped.push(project);
            }
        }
        for p in &o.settings_paths {
            add_path(&resolve(o.cwd, p), Scope::User, &mut found, &mut warnings);
        }
        for p in &o.package_paths {
            add_path(p, Scope::User, &mut found, &mut warnings);
        }
    }
    for p in &o.cli_paths {
        add_path(
            &resolve(o.cwd, p),
            Scope::Temporary,
            &mut found,
            &mut warnings,
        );
    }
    let mut seen = std::collections::HashSet::new();
    let sources = found
        .into_iter()
        .filter(|(p, _, _)| seen.insert(p.canonicalize().unwrap_or_else(|_| p.clone())))
        .enumerate()
        .map(|(index, (path, launch, scope))| ExtensionSource {
            index,
            path,
            launch,
            scope,
        })
        .collect();
    (sources, warnings, skipped)
}

/// The absolute path an entry names (`./x` as `x`, as pi resolves it).
fn resolve(cwd: &Path, p: &str) -> PathBuf {
    let p = crate::resources::expand_tilde(p);
    crate::tools::path::normalize_lexically(&if p.is_absolute() { p } else { cwd.join(p) })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn is_module(p: &Path) -> bool {
    p.is_file()
        && p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "ts" | "mts" | "js" | "mjs"))
}

/// How a file or directory entry would be launched, or `None` if it is no extension.
fn launch_for(p: &Path) -> Vec<Launch> {
    if p.is_dir() {
        for name in ["extension", "index"] {
            if is_executable(&p.join(name)) {
                return vec![Launch::Executable(p.join(name))];
            }
        }
        for name in ["index.ts", "index.mts", "index.js", "index.mjs"] {
            if p.join(name).is_file() {
                return vec![Launch::Node(p.join(name))];
            }
        }
        return package_entries(p);
    }
    if is_module(p) {
        vec![Launch::Node(p.to_path_buf())]
    } else if is_executable(p) {
        vec![Launch::Executable(p.to_path_buf())]
    } else {
        Vec::new()
    }
}

/// `package.json` `pi.extensions` entries of a directory.
fn package_entries(dir: &Path) -> Vec<Launch> {
    let Ok(text) = crate::util::files::read_limited_string(
        dir.join("package.json"),
        crate::util::files::Limit::CONFIG,
    ) else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    v["pi"]["extensions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str())
        .map(|e| dir.join(e))
        .flat_map(|p| launch_for(&p))
        .collect()
}

fn scan_dir(dir: &Path, scope: Scope, found: &mut Vec<(PathBuf, Launch, Scope)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'))
        })
        .collect();
    sort::sort(&mut paths);
    for p in paths {
        for launch in launch_for(&p) {
            found.push((p.clone(), launch, scope));
        }
    }
}

fn add_path(
    p: &Path,
    scope: Scope,
    found: &mut Vec<(PathBuf, Launch, Scope)>,
    warnings: &mut Vec<String>,
) {
    if !p.exists() {
        warnings.push(format!("Extension not found: {}", p.display()));
        return;
    }
    let launches = launch_for(p);
    if launches.is_empty() {
        warnings.push(format!(
            "Not an extension (not executable, and no .ts/.js module): {}",
            p.display()
        ));
    }
    for launch in launches {
        found.push((p.to_path_buf(), launch, scope));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(p: &Path, text: &str, exec: bool) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        let mode = if exec { 0o755 } else { 0o644 };
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn opts<'a>(agent: &'a Path, cwd: &'a Path, scope: &'a ProjectScope) -> DiscoveryOptions<'a> {
        DiscoveryOptions {
            agent_dir: agent,
            cwd,
            scope,
            settings_paths: Vec::new(),
            package_paths: Vec::new(),
            cli_paths: Vec::new(),
            no_extensions: false,
        }
    }

    #[test]
    fn folder_rules_trust_and_flags() {
        let tmp = tempfile::tempdir().unwrap();
        let agent = tmp.path().join("agent");
        let cwd = tmp.path().join("proj");
        let ext = agent.join("extensions");
        write(&ext.join("tool.py"), "#!/bin/sh\n", true);
        write(&ext.join("notes.md"), "x", false);
        write(&ext.join("script.sh"), "not executable", false);
        write(&ext.join("gate.ts"), "export default () => {}", false);
        write(&ext.join("dir/extension"), "#!/bin/sh\n", true);
        write(&ext.join("tsdir/index.ts"), "", false);
        write(
            &ext.join("pkg/package.json"),
            r#"{"pi":{"extensions":["a.js"]}}"#,
            false,
        );
        write(&ext.join("pkg/a.js"), "", false);
        write(&cwd.join(".pi/extensions/local"), "#!/bin/sh\n", true);
        write(&cwd.join("cli-ext"), "#!/bin/sh\n", true);

        let mut scope = ProjectScope::trusting(&cwd, &agent);
        scope.trusted = false;
        let mut o = opts(&agent, &cwd, &scope);
        o.cli_paths = vec!["cli-ext".into(), "missing".into()];
        let (sources, warnings, skipped) = discover(&o);
        let names: Vec<String> = sources.iter().map(|s| s.name()).collect();
        assert_eq!(names, ["dir", "gate", "pkg", "tool", "tsdir", "cli-ext"]);
        assert_eq!(
            sources[0].launch,
            Launch::Executable(ext.join("dir/extension"))
        );
        assert_eq!(sources[1].launch, Launch::Node(ext.join("gate.ts")));
        assert_eq!(sources[5].scope, Scope::Temporary);
        assert_eq!(skipped, [cwd.join(".pi/extensions")]);
        assert!(warnings[0].contains("missing"), "{warnings:?}");

        let trusted = ProjectScope::trusting(&cwd, &agent);
        let (sources, _, skipped) = discover(&opts(&agent, &cwd, &trusted));
        assert!(sources
            .iter()
            .any(|s| s.scope == Scope::Project && s.name() == "local"));
        assert!(skipped.is_empty());

        let mut o = opts(&agent, &cwd, &trusted);
        o.no_extensions = true;
        o.cli_paths = vec!["cli-ext".into(), "./cli-ext".into()];
        let (sources, _, _) = discover(&o);
        assert_eq!(sources.len(), 1, "duplicates are dropped");
    }
}
