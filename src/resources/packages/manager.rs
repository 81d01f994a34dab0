//! Installing, removing and updating packages with the system tools, and recording them in
//! settings. Git packages are cloned to `<agentDir>/git/<host>/<path>` (project:
//! `.pi/git/<host>/<path>`) and get `npm install` when they have a `package.json`; npm
//! packages go, as in pi 1.x, to a managed npm project: `<agentDir>/npm/` (project:
//! `.pi/npm/`), installed without pi's own packages as peers (pi serves those); a package an
//! older pi installed globally (`npm install -g`) is still found there. The npm program is the
//! `npmCommand` setting when set. A failing tool is reported as the command that failed and its
//! exit code; a missing one as "`<tool>` is not installed".

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::source::{self, PackageSource};
use super::{PackageContext, PackageEntry, PackageError, Scope};
use crate::resources::settings::Settings;
use crate::util::process;

/// Output kept of a package tool's captured stdout or stderr (`npm view`, `git rev-parse`).
const CAPTURE_MAX_OUTPUT: usize = 16 << 20;

/// `PI_OFFLINE` set to `1`, `true` or `yes`: no installs, no updates.
pub use crate::util::offline::offline;

/// Receives each step's start message.
type ProgressFn = Box<dyn FnMut(&str)>;

/// What an update changed: one `source old -> new` line per package.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateReport {
    pub updated: Vec<String>,
}

/// The commit a git checkout is at.
fn git_head(dir: &Path) -> Option<String> {
    if !dir.exists() {
        return None;
    }
    capture_git(&["rev-parse", "HEAD"], dir)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Runs package operations for one working directory and agent dir.
pub struct PackageManager {
    ctx: PackageContext,
    global_npm_root: Option<PathBuf>,
    /// Send the tools' stdout to our stderr (stdout belongs to a protocol or is quiet).
    tool_stdout_to_stderr: bool,
    /// Told "Installing <source>..." and the like before each step.
    progress: Option<ProgressFn>,
}

impl PackageManager {
    pub fn new(ctx: PackageContext) -> PackageManager {
        PackageManager {
            ctx,
            global_npm_root: None,
            tool_stdout_to_stderr: false,
            progress: None,
        }
    }

    /// Reports each step's start message (`Installing npm:x...`) to `f`.
    pub fn on_progress(&mut self, f: impl FnMut(&str) + 'static) {
        self.progress = Some(Box::new(f));
    }

    fn report(&mut self, message: &str) {
        if let Some(p) = self.progress.as_mut() {
            p(message);
        }
    }

    pub fn context(&self) -> &PackageContext {
        &self.ctx
    }

    /// Installs a missing package at startup, keeping the tools off stdout.
    pub fn install_quietly(
        &mut self,
        parsed: &PackageSource,
        scope: Scope,
    ) -> Result<(), PackageError> {
        self.tool_stdout_to_stderr = true;
        let r = self.install_parsed(parsed, scope);
        self.tool_stdout_to_stderr = false;
        r
    }

    /// Where an npm or git package is (or would be) installed; a local source's resolved path.
    pub fn install_path(
        &mut self,
        parsed: &PackageSource,
        scope: Scope,
    ) -> Result<PathBuf, PackageError> {
        Ok(match parsed {
            PackageSource::Npm { name, .. } => {
                let managed = self.npm_root(scope).join("node_modules").join(name);
                if scope == Scope::Project || managed.exists() {
                    managed
                } else {
                    // Installed globally by pi before 1.x.
                    match self.global_npm_root() {
                        Ok(root) if root.join(name).exists() => root.join(name),
                        _ => managed,
                    }
                }
            }
            PackageSource::Git { host, path, .. } => self.git_root(scope).join(host).join(path),
            PackageSource::Local { path } => source::resolve_from(path, &self.ctx.base_dir(scope)),
        })
    }

    fn git_root(&self, scope: Scope) -> PathBuf {
        self.ctx.base_dir(scope).join("git")
    }

    /// The managed npm project of a scope: `<agentDir>/npm` or `.pi/npm`.
    fn npm_root(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => self.ctx.agent_dir.join("npm"),
            Scope::Project => self.ctx.cwd.join(".pi").join("npm"),
        }
    }

    /// `npm root -g` (bun: `<bun pm bin -g>/../install/global/node_modules`), asked once.
    fn global_npm_root(&mut self) -> Result<PathBuf, PackageError> {
        if let Some(root) = &self.global_npm_root {
            return Ok(root.clone());
        }
        let root = if self.npm_program()?.0 == "bun" {
            let bin = self.npm_capture(&["pm", "bin", "-g"])?;
            let bin = PathBuf::from(bin.trim());
            bin.parent()
                .unwrap_or(Path::new("/"))
                .join("install/global/node_modules")
        } else {
            PathBuf::from(self.npm_capture(&["root", "-g"])?.trim())
        };
        self.global_npm_root = Some(root.clone());
        Ok(root)
    }

    fn npm_program(&self) -> Result<(String, Vec<String>), PackageError> {
        match self.ctx.npm_command.split_first() {
            None => Ok(("npm".into(), Vec::new())),
            Some((cmd, _)) if cmd.is_empty() => Err(PackageError::InvalidNpmCommand),
            Some((cmd, rest)) => Ok((cmd.clone(), rest.to_vec())),
        }
    }

    fn npm_args(&self, args: &[&str]) -> Result<(String, Vec<String>), PackageError> {
        let (cmd, mut all) = self.npm_program()?;
        all.extend(args.iter().map(|a| a.to_string()));
        Ok((cmd, all))
    }

    fn run_npm(&self, args: &[&str], cwd: Option<&Path>) -> Result<(), PackageError> {
        let (cmd, all) = self.npm_args(args)?;
        self.run(&cmd, &all, cwd)
    }

    fn npm_capture(&self, args: &[&str]) -> Result<String, PackageError> {
        let (cmd, all) = self.npm_args(args)?;
        capture(&cmd, &all, Some(&self.ctx.cwd))
    }

    /// Runs a tool with inherited stdin/stderr; fails with pi's `<cmd> <args> failed with
    /// code N`.
    fn run(&self, cmd: &str, args: &[String], cwd: Option<&Path>) -> Result<(), PackageError> {
        let mut c = Command::new(cmd);
        c.args(args).stdin(Stdio::null());
        if let Some(dir) = cwd {
            c.current_dir(dir);
        }
        if self.tool_stdout_to_stderr {
            c.stdout(std::io::stderr());
        }
        let child = process::spawn(&mut c, process::SpawnOptions::default())
            .map_err(|e| spawn_error(cmd, e))?;
        let command = || format!("{cmd} {}", args.join(" "));
        let status = match wait_for(&child) {
            Ok(Some(status)) => status,
            Ok(None) => return Err(PackageError::StatusLost { command: command() }),
            Err(Stopped) => return Err(PackageError::Stopped { command: command() }),
        };
        if status.success() {
            return Ok(());
        }
        Err(PackageError::Tool {
            command: format!("{cmd} {}", args.join(" ")),
            code: status.code(),
            output: None,
        })
    }

    fn git(&self, args: &[&str], cwd: Option<&Path>) -> Result<(), PackageError> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        self.run("git", &args, cwd)
    }

    /// Installs a source (without recording it). Local sources only have to exist.
    pub fn install(&mut self, source: &str, scope: Scope) -> Result<(), PackageError> {
        self.report(&format!("Installing {source}..."));
        let parsed = PackageSource::parse(source);
        if let PackageSource::Local { path } = &parsed {
            let resolved = source::resolve_from(path, &self.ctx.cwd);
            if !resolved.exists() {
                return Err(PackageError::PathMissing(resolved));
            }
            return Ok(());
        }
        self.install_parsed(&parsed, scope)
    }

    fn install_parsed(&mut self, parsed: &PackageSource, scope: Scope) -> Result<(), PackageError> {
        let refused = |what: &str| PackageError::Offline { what: what.into() };
        match parsed {
            PackageSource::Npm { spec, .. } if offline() => Err(refused(&format!("npm:{spec}"))),
            PackageSource::Npm { spec, .. } => self.install_npm_specs(&[spec], scope),
            PackageSource::Git { repo, git_ref, .. } => {
                let target = self.install_path(parsed, scope)?;
                if target.exists() {
                    return Ok(());
                }
                if offline() {
                    return Err(refused(repo));
                }
                ensure_gitignore(&self.git_root(scope))?;
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| fs_error("create", parent, e))?;
                }
                let target_str = target.to_string_lossy().into_owned();
                self.git(&["clone", repo, &target_str], None)?;
                if let Some(r) = git_ref {
                    self.git(&["checkout", r], Some(&target))?;
                }
                self.install_git_dependencies(&target)
            }
            PackageSource::Local { .. } => Ok(()),
        }
    }

    /// `npm install --omit=dev` (plain `install` with a custom npmCommand) in a checkout that
    /// has a `package.json`.
    fn install_git_dependencies(&self, dir: &Path) -> Result<(), PackageError> {
        if !dir.join("package.json").exists() {
            return Ok(());
        }
        let args: &[&str] = if self.ctx.npm_command.is_empty() {
            &["install", "--omit=dev"]
        } else {
            &["install"]
        };
        self.run_npm(args, Some(dir))
    }

    /// Removes an installed package's files (local sources are left alone).
    pub fn remove(&mut self, source: &str, scope: Scope) -> Result<(), PackageError> {
        self.report(&format!("Removing {source}..."));
        let parsed = PackageSource::parse(source);
        match &parsed {
            PackageSource::Npm { name, .. } => {
                let root = self.npm_root(scope);
                let managed = root.join("node_modules").join(name);
                if scope == Scope::User && !managed.exists() {
                    // Installed globally by pi before 1.x.
                    if let Ok(global) = self.global_npm_root() {
                        if global.join(name).exists() {
                            return self.run_npm(&["uninstall", "-g", name], None);
                        }
                    }
                }
                if !root.exists() {
                    return Ok(());
                }
                let root = std::fs::canonicalize(&root).unwrap_or(root);
                let root = root.to_string_lossy().into_owned();
                let mut args = vec!["uninstall", name.as_str()];
                args.extend(self.prefix_args(&root));
                self.run_npm(&args, None)
            }
            PackageSource::Git { .. } => {
                let target = self.install_path(&parsed, scope)?;
                if !target.exists() {
                    return Ok(());
                }
                std::fs::remove_dir_all(&target).map_err(|e| fs_error("remove", &target, e))?;
                prune_empty_parents(&target, &self.git_root(scope));
                Ok(())
            }
            PackageSource::Local { .. } => Ok(()),
        }
    }

    /// Updates the configured packages (or the one matching `only`): git checkouts are reset
    /// to their upstream, npm packages reinstalled at `@latest` when a newer version exists.
    /// Pinned and local packages are skipped; nothing happens offline. Says what changed
    /// (`npm:foo 1.2.0 -> 1.3.0`, `(project)` after project packages).
    pub fn update(
        &mut self,
        only: Option<&str>,
        global: &[PackageEntry],
        project: &[PackageEntry],
    ) -> Result<UpdateReport, PackageError> {
        let wanted = only.map(|s| self.ctx.input_identity(s));
        let mut targets = Vec::new();
        for (entries, scope) in [(global, Scope::User), (project, Scope::Project)] {
            for e in entries {
                if wanted
                    .as_ref()
                    .is_some_and(|w| *w != self.ctx.identity(&e.source, scope))
                {
                    continue;
                }
                targets.push((e.source.clone(), scope));
            }
        }
        if let Some(source) = only {
            if targets.is_empty() {
                let all: Vec<&PackageEntry> = global.iter().chain(project).collect();
                return Err(no_match_message(source, &all));
            }
        }
        let mut report = UpdateReport::default();
        if offline() {
            return Ok(report);
        }
        let mut npm_batches: [(Scope, Vec<(String, String)>); 2] =
            [(Scope::User, Vec::new()), (Scope::Project, Vec::new())];
        // Versions before the update, to say what changed.
        let mut before: Vec<(String, Scope, PackageSource, Option<String>)> = Vec::new();
        let mut git_updates = Vec::new();
        for (source, scope) in targets {
            let parsed = PackageSource::parse(&source);
            if parsed.pinned() {
                continue;
            }
            let old = self
                .install_path(&parsed, scope)
                .ok()
                .and_then(|dir| match &parsed {
                    PackageSource::Git { .. } => git_head(&dir),
                    _ => installed_version(&dir),
                });
            match &parsed {
                PackageSource::Npm { name, .. } => {
                    if self.npm_needs_update(&parsed, name, scope)? {
                        let batch = &mut npm_batches[usize::from(scope == Scope::Project)].1;
                        batch.push((source.clone(), format!("{name}@latest")));
                        before.push((source.clone(), scope, parsed.clone(), old));
                    }
                }
                PackageSource::Git { .. } => {
                    before.push((source.clone(), scope, parsed.clone(), old));
                    git_updates.push((source, parsed, scope));
                }
                PackageSource::Local { .. } => {}
            }
        }
        for (scope, batch) in npm_batches {
            if batch.is_empty() {
                continue;
            }
            let message = match batch.as_slice() {
                [(source, _)] => format!("Updating {source}..."),
                _ => format!("Updating {} npm packages...", scope.as_str()),
            };
            self.report(&message);
            let specs: Vec<&str> = batch.iter().map(|(_, spec)| spec.as_str()).collect();
            self.install_npm_specs(&specs, scope)?;
        }
        for (source, parsed, scope) in git_updates {
            self.report(&format!("Updating {source}..."));
            self.update_git(&parsed, scope)?;
        }
        for (source, scope, parsed, old) in before {
            let is_git = matches!(parsed, PackageSource::Git { .. });
            let new = self.install_path(&parsed, scope).ok().and_then(|dir| {
                if is_git {
                    git_head(&dir)
                } else {
                    installed_version(&dir)
                }
            });
            if new == old {
                continue;
            }
            let show = |v: &Option<String>| match v {
                None => "(none)".to_string(),
                Some(v) if is_git => v.chars().take(7).collect(),
                Some(v) => v.clone(),
            };
            let where_ = if scope == Scope::Project {
                " (project)"
            } else {
                ""
            };
            report
                .updated
                .push(format!("{source}{where_} {} -> {}", show(&old), show(&new)));
        }
        Ok(report)
    }

    /// `npm install <specs>` into the scope's managed npm project, leaving pi's own packages
    /// (peers of every extension package) for pi to serve.
    fn install_npm_specs(&self, specs: &[&str], scope: Scope) -> Result<(), PackageError> {
        let root = self.npm_root(scope);
        ensure_npm_project(&root)?;
        // npm writes broken nested lockfile paths when --prefix goes through a symlink.
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        let root = root.to_string_lossy().into_owned();
        let mut args = vec!["install"];
        args.extend_from_slice(specs);
        let program = self.npm_program()?.0;
        if program.ends_with("bun") {
            args.extend(["--cwd", root.as_str(), "--omit=peer"]);
        } else {
            args.extend(self.prefix_args(&root));
        }
        self.run_npm(&args, None)
    }

    /// `--prefix <root>` and the options that keep npm (or pnpm) from installing peers.
    fn prefix_args<'a>(&self, root: &'a str) -> Vec<&'a str> {
        let pnpm = self.npm_program().is_ok_and(|(p, _)| p.ends_with("pnpm"));
        if pnpm {
            vec![
                "--prefix",
                root,
                "--config.auto-install-peers=false",
                "--config.strict-peer-dependencies=false",
            ]
        } else {
            vec![
                "--prefix",
                root,
                "--legacy-peer-deps",
                "--no-audit",
                "--no-fund",
            ]
        }
    }

    /// True unless the installed version equals `npm view <name> version` (a failed lookup
    /// updates anyway, as pi does).
    fn npm_needs_update(
        &mut self,
        parsed: &PackageSource,
        name: &str,
        scope: Scope,
    ) -> Result<bool, PackageError> {
        let installed = self.install_path(parsed, scope)?;
        let Some(current) = installed_version(&installed) else {
            return Ok(true);
        };
        let latest = self
            .npm_capture(&["view", name, "version", "--json"])
            .ok()
            .and_then(|out| serde_json::from_str::<Value>(out.trim()).ok())
            .and_then(|v| v.as_str().map(String::from));
        Ok(latest.as_deref() != Some(current.as_str()))
    }

    fn update_git(&mut self, parsed: &PackageSource, scope: Scope) -> Result<(), PackageError> {
        let dir = self.install_path(parsed, scope)?;
        if !dir.exists() {
            return self.install_parsed(parsed, scope);
        }
        let (target_ref, fetch) = self.git_update_target(&dir)?;
        let fetch: Vec<&str> = fetch.iter().map(String::as_str).collect();
        self.git(&fetch, Some(&dir))?;
        let head = capture_git(&["rev-parse", "HEAD"], &dir)?;
        let target = capture_git(&["rev-parse", &target_ref], &dir)?;
        if head.trim() == target.trim() {
            return Ok(());
        }
        self.git(&["reset", "--hard", &target_ref], Some(&dir))?;
        // Packages are kept pristine: nothing the user dropped in survives an update.
        self.git(&["clean", "-fdx"], Some(&dir))?;
        self.install_git_dependencies(&dir)
    }

    /// The ref to reset to and the fetch that refreshes only it: the tracked upstream branch,
    /// else the remote's default branch.
    fn git_update_target(&self, dir: &Path) -> Result<(String, Vec<String>), PackageError> {
        let fetch_branch = |branch: &str| {
            [
                "fetch",
                "--prune",
                "--no-tags",
                "origin",
                &format!("+refs/heads/{branch}:refs/remotes/origin/{branch}"),
            ]
            .map(String::from)
            .to_vec()
        };
        if let Ok(upstream) = capture_git(&["rev-parse", "--abbrev-ref", "@{upstream}"], dir) {
            if let Some(branch) = upstream
                .trim()
                .strip_prefix("origin/")
                .filter(|b| !b.is_empty())
            {
                return Ok(("@{upstream}".into(), fetch_branch(branch)));
            }
        }
        let _ = capture_git(&["remote", "set-head", "origin", "-a"], dir);
        let branch = capture_git(&["symbolic-ref", "refs/remotes/origin/HEAD"], dir)
            .map(|s| {
                s.trim()
                    .trim_start_matches("refs/remotes/origin/")
                    .to_string()
            })
            .unwrap_or_default();
        if branch.is_empty() {
            let fetch = [
                "fetch",
                "--prune",
                "--no-tags",
                "origin",
                "+HEAD:refs/remotes/origin/HEAD",
            ];
            return Ok(("origin/HEAD".into(), fetch.map(String::from).to_vec()));
        }
        Ok(("origin/HEAD".into(), fetch_branch(&branch)))
    }

    /// Adds `source` to the scope's `packages` unless an entry with the same identity is
    /// there. Local paths are recorded relative to the settings directory. Returns whether
    /// settings changed.
    pub fn record(
        &self,
        settings: &mut Settings,
        source: &str,
        scope: Scope,
    ) -> Result<bool, PackageError> {
        let mut list = packages_value(settings, scope);
        let key = self.ctx.input_identity(source);
        if list.iter().any(|v| self.entry_matches(v, &key, scope)) {
            return Ok(false);
        }
        list.push(Value::String(self.normalize_for_settings(source, scope)));
        write_packages(settings, scope, list)?;
        Ok(true)
    }

    /// Drops every entry of the scope matching `source`. Returns whether settings changed.
    pub fn unrecord(
        &self,
        settings: &mut Settings,
        source: &str,
        scope: Scope,
    ) -> Result<bool, PackageError> {
        let list = packages_value(settings, scope);
        let key = self.ctx.input_identity(source);
        let before = list.len();
        let kept: Vec<Value> = list
            .into_iter()
            .filter(|v| !self.entry_matches(v, &key, scope))
            .collect();
        if kept.len() == before {
            return Ok(false);
        }
        write_packages(settings, scope, kept)?;
        Ok(true)
    }

    fn entry_matches(&self, v: &Value, key: &str, scope: Scope) -> bool {
        PackageEntry::from_value(v).is_some_and(|e| self.ctx.identity(&e.source, scope) == key)
    }

    fn normalize_for_settings(&self, source: &str, scope: Scope) -> String {
        let PackageSource::Local { path } = PackageSource::parse(source) else {
            return source.to_string();
        };
        let resolved = source::resolve_from(&path, &self.ctx.cwd);
        let rel = source::relative_to(&resolved, &self.ctx.base_dir(scope));
        if rel.as_os_str().is_empty() {
            ".".into()
        } else {
            rel.to_string_lossy().into_owned()
        }
    }
}

fn packages_value(settings: &Settings, scope: Scope) -> Vec<Value> {
    let map = match scope {
        Scope::User => settings.global_map(),
        Scope::Project => settings.project_map(),
    };
    map.get("packages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn write_packages(
    settings: &mut Settings,
    scope: Scope,
    list: Vec<Value>,
) -> Result<(), PackageError> {
    Ok(match scope {
        Scope::User => settings.set_global("packages", Value::Array(list)),
        Scope::Project => settings.set_project("packages", Value::Array(list)),
    }?)
}

/// pi's "No matching package found for X" with a "Did you mean" for a bare npm name or git
/// shorthand that matches a configured source.
fn no_match_message(source: &str, configured: &[&PackageEntry]) -> PackageError {
    let typed = source.trim();
    let suggestion = configured.iter().find_map(|e| {
        let hit = match PackageSource::parse(&e.source) {
            PackageSource::Npm { name, spec, .. } => typed == name || typed == spec,
            PackageSource::Git {
                host,
                path,
                git_ref,
                ..
            } => {
                let short = format!("{host}/{path}");
                typed == short || git_ref.is_some_and(|r| typed == format!("{short}@{r}"))
            }
            PackageSource::Local { .. } => false,
        };
        hit.then(|| e.source.clone())
    });
    PackageError::NoMatch {
        source: source.to_string(),
        suggestion,
    }
}

fn installed_version(dir: &Path) -> Option<String> {
    let text = crate::util::files::read_limited_string(
        dir.join("package.json"),
        crate::util::files::Limit::CONFIG,
    )
    .ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v.get("version")?.as_str().map(String::from)
}

fn spawn_error(cmd: &str, source: std::io::Error) -> PackageError {
    PackageError::Spawn {
        cmd: cmd.to_string(),
        source,
    }
}

fn fs_error(action: &'static str, path: &Path, source: std::io::Error) -> PackageError {
    PackageError::Fs {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Waits for a package tool to exit; a shutdown stops it (its whole process group).
/// pi is shutting down: a tool it was waiting for was killed.
struct Stopped;

/// Waits for a tool, killing it if pi starts shutting down; `None` when its exit status was lost.
fn wait_for(child: &process::OwnedChild) -> Result<Option<std::process::ExitStatus>, Stopped> {
    loop {
        if let Some(status) = child.wait_timeout(std::time::Duration::from_millis(50)) {
            return Ok(status);
        }
        if crate::util::shutdown::signal().is_some() {
            child.kill();
            return Err(Stopped);
        }
    }
}

/// Runs a tool and returns its stdout; stderr goes into the error.
fn capture(cmd: &str, args: &[String], cwd: Option<&Path>) -> Result<String, PackageError> {
    let mut c = Command::new(cmd);
    c.args(args).stdin(Stdio::null());
    if let Some(dir) = cwd {
        c.current_dir(dir);
    }
    let out = process::run(
        &mut c,
        &process::RunOptions {
            max_output: CAPTURE_MAX_OUTPUT,
            cancelled: &|| crate::util::shutdown::signal().is_some(),
            ..Default::default()
        },
    )
    .map_err(|e| spawn_error(cmd, e))?;
    if out.cancelled {
        return Err(PackageError::Stopped {
            command: format!("{cmd} {}", args.join(" ")),
        });
    }
    let Some(status) = out.status else {
        return Err(PackageError::StatusLost {
            command: format!("{cmd} {}", args.join(" ")),
        });
    };
    let out = std::process::Output {
        status,
        stdout: out.stdout,
        stderr: out.stderr,
    };
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    let detail = if out.stderr.is_empty() {
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    Err(PackageError::Tool {
        command: format!("{cmd} {}", args.join(" ")),
        code: out.status.code(),
        output: Some(detail.trim().to_string()),
    })
}

fn capture_git(args: &[&str], dir: &Path) -> Result<String, PackageError> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    capture("git", &args, Some(dir))
}

/// Creates `dir` with a `.gitignore` that ignores everything in it.
fn ensure_gitignore(dir: &Path) -> Result<(), PackageError> {
    std::fs::create_dir_all(dir).map_err(|e| fs_error("create", dir, e))?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(&ignore, "*\n!.gitignore\n").map_err(|e| fs_error("write", &ignore, e))?;
    }
    Ok(())
}

/// `.pi/npm` as a private npm project so `npm install --prefix` has a home.
fn ensure_npm_project(root: &Path) -> Result<(), PackageError> {
    ensure_gitignore(root)?;
    let manifest = root.join("package.json");
    if !manifest.exists() {
        std::fs::write(
            &manifest,
            "{\n  \"name\": \"pi-extensions\",\n  \"private\": true\n}",
        )
        .map_err(|e| fs_error("write", &manifest, e))?;
    }
    Ok(())
}

/// Removes now-empty directories between a removed checkout and the git root.
fn prune_empty_parents(removed: &Path, root: &Path) {
    for dir in removed.ancestors().skip(1) {
        if !dir.starts_with(root) || dir == root {
            break;
        }
        let empty = std::fs::read_dir(dir).map(|mut d| d.next().is_none());
        match empty {
            Ok(true) => {
                if std::fs::remove_dir(dir).is_err() {
                    break;
                }
            }
            Ok(false) => break,
            Err(_) => continue,
        }
    }
}
