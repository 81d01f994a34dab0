//! The sandbox for model-written commands: the kernel (Landlock for files, seccomp for
//! sockets) confines every command pi runs for the model or the user, so it can read what the
//! user can but write only where the mode allows and open no internet socket.
//!
//! [`Sandbox::prepare`] checks the kernel once at start-up and refuses (or, with
//! `sandbox.fallback: "warn"`, warns) when it cannot enforce the mode. [`Sandbox::confine`]
//! prepares a command in the parent — a Landlock ruleset built for this spawn (so new entries of
//! split directories are seen), the BPF program, `TMPDIR` — and leaves the child only system
//! calls to make between fork and exec: where the kernel allows, it joins the shared user and
//! mount namespaces and makes its own PID namespace (`namespace.rs`: a read-only view of the
//! disk outside the roots, and a process tree that ends with the command), and it always
//! drops every capability.
//! Writable roots are opened once, in [`Sandbox::prepare`] (`roots.rs`), and never resolved
//! by path again. The process-wide sandbox is [`install`]ed by the CLI and
//! read with [`active`] by whoever starts commands (`util::process` applies what it is given).
//! The in-process `write` and `edit` tools write through [`Sandbox::open_for_write`] (checked
//! by the system calls that write, see `beneath.rs`); failed commands are
//! explained by [`Sandbox::explain_failure`].

mod beneath;
mod child;
mod config;
mod denial;
mod landlock;
mod namespace;
mod paths;
mod roots;
mod seccomp;
mod sweep;

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, RwLock};

pub use beneath::Target;
pub use child::cloexec_inherited;
pub use config::{Config, Fallback, Layered, Mode};
pub use paths::resolve_for_write;
pub use roots::Root;
pub use sweep::Before;

/// Devices every command may write (and read): the usual sinks and sources. Not `/dev/pts`
/// (a confined command must not write into the user's terminals), not `/dev/shm`.
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// How many final symlinks a tool write follows (the kernel's limit).
const MAX_FINAL_LINKS: usize = 40;

/// A resolved sandbox: the mode, the paths it opens and protects, and what the kernel enforces.
#[derive(Debug)]
pub struct Sandbox {
    mode: Mode,
    cwd: PathBuf,
    /// The commands' own temp directory (`TMPDIR`), removed when the sandbox is dropped.
    _temp_dir: tempfile::TempDir,
    temp: PathBuf,
    /// The temp directory, held open like the roots.
    temp_root: Root,
    /// Writable roots besides the temp directory, opened when pi started (real paths): the
    /// working directory and `writableRoots` in workspace-write, none in read-only.
    roots: Vec<Root>,
    /// Read-only even inside a root: each root's `.git` and pi's agent directory.
    protected: Vec<PathBuf>,
    agent_dir: PathBuf,
    network: bool,
    /// The Landlock ABI in force; `None` only after a "warn" fallback.
    landlock: Option<u32>,
    /// Each command gets its own user, mount and PID namespaces (read-only view of the file
    /// system, process tree ended with the command); false where the kernel refuses them.
    namespaces: bool,
    /// The user and mount namespaces commands join (with `namespaces`), built on first use.
    view: Mutex<Option<Arc<namespace::View>>>,
    /// The seccomp program in force (empty when none is needed or, after a "warn" fallback,
    /// none can be had).
    filter: Vec<libc::sock_filter>,
    /// Finds the `.git` and `.pi` entries a command created (issue 29).
    sweep: sweep::Sweep,
}

/// Why a confined command failed, as far as the sandbox is to blame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// One line for the model: what was refused, and what to do instead.
    pub line: String,
    /// A few words for the user ("writing /etc/y is blocked").
    pub summary: String,
}

/// A sandbox ready for use, and the warning to show once when it enforces less than asked.
pub struct Prepared {
    pub sandbox: Option<Sandbox>,
    pub warning: Option<String>,
}

/// What the kernel offers: the Landlock ABI and whether seccomp filters work (or why not).
#[derive(Debug, Clone)]
pub struct Kernel {
    pub landlock: Result<u32, String>,
    pub seccomp: Result<(), String>,
    /// Unprivileged user, mount and PID namespaces with the new mount API (Linux 5.12+, not
    /// forbidden by `kernel.unprivileged_userns_clone=0` or an LSM).
    pub namespaces: Result<(), String>,
}

impl Kernel {
    pub fn probe() -> Kernel {
        Kernel {
            landlock: landlock::abi_version(),
            seccomp: seccomp::available(),
            namespaces: namespace::available(),
        }
    }
}

impl Sandbox {
    /// Checks `config` against this kernel. `Ok(None)` sandbox for `off`; an error (the
    /// reason pi will not start) when the kernel lacks what the mode needs and the fallback
    /// is not "warn".
    pub fn prepare(config: &Config, cwd: &Path, agent_dir: &Path) -> Result<Prepared, String> {
        if config.mode == Mode::Off {
            return Ok(Prepared {
                sandbox: None,
                warning: None,
            });
        }
        Sandbox::prepare_on(config, cwd, agent_dir, Kernel::probe())
    }

    /// [`Sandbox::prepare`] against a given kernel.
    pub fn prepare_on(
        config: &Config,
        cwd: &Path,
        agent_dir: &Path,
        kernel: Kernel,
    ) -> Result<Prepared, String> {
        if config.mode == Mode::Off {
            return Ok(Prepared {
                sandbox: None,
                warning: None,
            });
        }
        let name = config.mode.as_str();
        let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
        let agent_dir = agent_dir
            .canonicalize()
            .unwrap_or_else(|_| agent_dir.to_path_buf());
        let mut roots: Vec<Root> = Vec::new();
        if config.mode == Mode::WorkspaceWrite {
            let cwd_root = Root::open(&cwd).map_err(|e| {
                format!(
                    "Error: cannot open the working directory {}: {e}",
                    cwd.display()
                )
            })?;
            roots.push(cwd_root);
            for raw in &config.writable_roots {
                // A root that does not exist is left out: that only confines more. Opened
                // now, once: every command's rules come from this descriptor.
                if let Ok(root) = paths::absolute(raw, &cwd)
                    .canonicalize()
                    .and_then(|real| Root::open(&real))
                {
                    roots.push(root);
                }
            }
        }
        // Read-only even inside a root (issue 29): pi's agent directory, each root's `.git`
        // and `.pi` (existing or not), any `.git`/`.pi` deeper in the working directory, and
        // pi's cache, whose files pi runs later (the Node.js bridge, jiti).
        let held: Vec<&Root> = roots.iter().collect();
        let (sweep, nested) = sweep::Sweep::start(&held, config.mode == Mode::WorkspaceWrite);
        let mut protected = vec![agent_dir.clone()];
        protected.extend(roots.iter().map(|r| r.path.join(".git")));
        protected.extend(roots.iter().map(|r| r.path.join(".pi")));
        protected.extend(nested);
        let cache = pi_cache_dir();
        let cache = cache.canonicalize().unwrap_or(cache);
        if roots.iter().any(|r| cache.starts_with(&r.path)) {
            // Made now if missing: Landlock keeps only an existing directory read-only, and a
            // command must not plant a bridge or jiti there before pi writes its own.
            let _ = std::fs::create_dir_all(&cache);
            protected.push(cache);
        }
        if let Some((root, p)) = roots.iter().find_map(|r| {
            protected
                .iter()
                .find(|p| r.path.starts_with(p))
                .map(|p| (&r.path, p))
        }) {
            return Err(format!(
                "sandbox.writableRoots: {} is inside {}, which the sandbox keeps read-only",
                root.display(),
                p.display()
            ));
        }

        let mut missing = Vec::new();
        let landlock = match kernel.landlock {
            Ok(abi) => Some(abi),
            Err(why) => {
                missing.push(format!("file-system rules: {why}"));
                None
            }
        };
        // seccomp closes the network, and covers truncate(2) where Landlock is older than 3.
        let policy = seccomp::Policy {
            block_network: !config.network,
            block_truncate: landlock.is_some_and(|abi| abi < 3),
            block_tty_injection: true,
        };
        let mut filter = seccomp::program(policy);
        if let Err(why) = kernel.seccomp {
            // TIOCSTI alone does not need it: commands have no controlling terminal.
            if policy.block_network || policy.block_truncate {
                missing.push(format!("system-call filter: {why}"));
            }
            filter.clear();
        }
        // Without namespaces the sandbox still holds what it held before them (metadata
        // outside the roots and process trees are then not confined: docs/sandbox.md).
        let namespaces = kernel.namespaces.is_ok() && landlock.is_some();
        let warning = if missing.is_empty() {
            None
        } else if config.fallback == Fallback::Warn {
            Some(format!(
                "the {name} sandbox is only partly enforced on this kernel (sandbox.fallback is \"warn\"); missing {}",
                missing.join("; ")
            ))
        } else {
            return Err(format!(
                "Error: cannot start with the {name} sandbox: this kernel cannot enforce it.\n  missing {}\npi does not run commands less confined than asked. Run with --sandbox off, or set \"sandbox\": {{\"mode\": \"{name}\", \"fallback\": \"warn\"}} to accept what the kernel offers.",
                missing.join("\n  missing ")
            ));
        };
        let warning = match (warning, sweep.truncated()) {
            (w, false) => w,
            (w, true) => Some(
                w.into_iter()
                    .chain([format!(
                        "{} has more than {} folders: the sandbox watches the {1} nearest the top for repositories (.git) a command creates, not the deeper ones that already exist",
                        cwd.display(),
                        sweep::BASELINE_DIRS
                    )])
                    .collect::<Vec<_>>()
                    .join("\nWarning: "),
            ),
        };
        let temp_dir = tempfile::Builder::new()
            .prefix("pi-sandbox-")
            .tempdir()
            .map_err(|e| format!("Error: cannot create the sandbox's temp directory: {e}"))?;
        let temp = temp_dir
            .path()
            .canonicalize()
            .unwrap_or_else(|_| temp_dir.path().to_path_buf());
        let temp_root = Root::open(&temp)
            .map_err(|e| format!("Error: cannot open the sandbox's temp directory: {e}"))?;
        Ok(Prepared {
            sandbox: Some(Sandbox {
                mode: config.mode,
                cwd,
                _temp_dir: temp_dir,
                temp,
                temp_root,
                roots,
                protected,
                agent_dir,
                network: config.network,
                landlock,
                namespaces,
                view: Mutex::new(None),
                filter,
                sweep,
            }),
            warning,
        })
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The commands' temp directory (their `TMPDIR`).
    pub fn temp_dir(&self) -> &Path {
        &self.temp
    }

    /// Sets `cmd` up to run confined: `TMPDIR`, and a `pre_exec` step that enforces the rules
    /// prepared here. Everything that allocates or walks the file system happens now, in the
    /// parent; the child only makes system calls. Must be the last `pre_exec` step: with
    /// namespaces, the step forks, and only the command's process goes on to exec.
    pub fn confine(&self, cmd: &mut Command) -> io::Result<()> {
        cmd.env("TMPDIR", &self.temp);
        let ruleset: Option<OwnedFd> = match self.landlock {
            Some(abi) => Some(self.ruleset(abi)?),
            None => None,
        };
        let filter = self.filter.clone();
        let view = match self.namespaces {
            true => Some(self.view()?),
            false => None,
        };
        // The working directory, entered again inside the view.
        let cwd = std::env::current_dir()
            .map(|here| cmd.get_current_dir().map_or(here.clone(), |d| here.join(d)))
            .ok()
            .and_then(|c| std::ffi::CString::new(c.into_os_string().into_vec()).ok());
        // SAFETY: getpid cannot fail.
        let parent = unsafe { libc::getpid() };
        let apply = move || -> io::Result<()> {
            child::cloexec_inherited();
            if let Some(view) = &view {
                namespace::join(view, cwd.as_ref())?;
                namespace::fork_command(parent)?;
            } else {
                child::fork_command_reaped(parent)?;
            }
            child::drop_capabilities()?;
            // SAFETY: prctl with integer arguments only; async-signal-safe.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(fd) = &ruleset {
                landlock::restrict_self(fd.as_raw_fd())?;
            }
            if !filter.is_empty() {
                seccomp::install(&filter)?;
            }
            Ok(())
        };
        // SAFETY: the closure only makes system calls (unshare, mounts, fork, wait, prctl,
        // landlock_restrict_self, seccomp) on data prepared before the fork; it neither
        // allocates nor locks.
        unsafe {
            cmd.pre_exec(apply);
        }
        Ok(())
    }

    /// The Landlock ruleset for one spawn: read everywhere, write the devices, the temp
    /// directory and the roots — from the descriptors opened at start-up. Without namespaces
    /// the roots are split around the protected paths; with them, those are read-only mounts.
    fn ruleset(&self, abi: u32) -> io::Result<OwnedFd> {
        let mut rules = landlock::Ruleset::new(landlock::Rights::for_abi(abi))?;
        rules.allow_read_everywhere()?;
        for dev in DEVICES {
            rules.allow_file(Path::new(dev))?;
        }
        rules.allow_tree(&self.temp, self.temp_root.fd.as_fd(), &[])?;
        let split: &[PathBuf] = if self.namespaces {
            &[]
        } else {
            &self.protected
        };
        for root in &self.roots {
            match rules.allow_tree(&root.path, root.fd.as_fd(), split) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                other => other?,
            }
        }
        Ok(rules.into_fd())
    }

    /// The shared file-system view, built again when the protected paths that exist changed
    /// (a command created a `.git`, say) so that each one is a read-only mount.
    fn view(&self) -> io::Result<Arc<namespace::View>> {
        use std::os::unix::fs::MetadataExt;
        // Which protected paths exist, and as what: one replaced by another directory of the
        // same name (outside a command) needs its mount again, too.
        let existing: Vec<(PathBuf, (u64, u64))> = self
            .protected
            .iter()
            .filter_map(|p| {
                let m = p.symlink_metadata().ok()?;
                Some((p.clone(), (m.dev(), m.ino())))
            })
            .collect();
        let mut current = self.view.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(view) = current.as_ref().filter(|v| v.protected == existing) {
            return Ok(Arc::clone(view));
        }
        let protected: Vec<&Path> = existing.iter().map(|(p, _)| p.as_path()).collect();
        let mut plan = namespace::Plan::new(
            std::iter::once(&self.temp_root).chain(&self.roots),
            &protected,
        );
        let view = Arc::new(
            namespace::View::build(&mut plan, existing.clone()).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot build the sandbox's read-only view of the file system: {e}"),
                )
            })?,
        );
        *current = Some(Arc::clone(&view));
        Ok(view)
    }

    /// Whether each command runs in its own namespaces (see `namespace.rs`).
    pub fn has_namespaces(&self) -> bool {
        self.namespaces
    }

    /// Opens the file the `write` and `edit` tools change at `path` (absolute) for them, or
    /// an error for the model. The root lexically holding `path` is the start; the parent is
    /// opened beneath that root's descriptor by the kernel (`beneath.rs`), missing
    /// directories made relative to descriptors, a final symlink followed only while its
    /// target stays beneath the same root, and the opened directory's real path checked
    /// against the protected paths. Anything that cannot be resolved is refused.
    pub fn open_for_write(&self, path: &Path) -> Result<Target, String> {
        let name = self.mode.as_str();
        let mut want = beneath::normalize(path);
        let mut via_link: Option<usize> = None;
        for hop in 0..=MAX_FINAL_LINKS {
            if self.writable_root_fd_holding(&want).is_none() {
                // An alias of a root (a symlinked parent of the project, say) names the root
                // it leads to. This only picks the root: the write still happens beneath it.
                if let Some(real) = paths::real_prefix(&want) {
                    if self.writable_root_fd_holding(&real).is_some() {
                        want = real;
                    }
                }
            }
            let root = self
                .writable_root_fd_holding(&want)
                .filter(|r| via_link.is_none() || via_link == Some(r.0))
                .ok_or_else(|| self.not_allowed(path, &want))?;
            if let Some(p) = self.refused_entry(&want) {
                return Err(self.read_only(&want, &p));
            }
            let rel = want.strip_prefix(&root.1.path).unwrap_or(Path::new(""));
            let file = rel.file_name().ok_or_else(|| {
                format!(
                    "Sandbox ({name}): {} is a writable root, a directory, not a file. Give a file path inside it.",
                    want.display()
                )
            })?;
            let parent = rel.parent().unwrap_or(Path::new(""));
            let may_create = |dir: &Path| match self.refused_entry(dir) {
                Some(_) => Err(io::Error::from_raw_os_error(libc::EROFS)),
                None => Ok(()),
            };
            let dir = beneath::open_dir(root.1.raw_fd(), &root.1.path, parent, &may_create)
                .map_err(|e| self.unresolvable(path, &want, &e))?;
            let target = Target::new(dir, file).map_err(|e| self.unresolvable(path, &want, &e))?;
            let dir_real = beneath::fd_path(target.dir_fd())
                .map_err(|e| self.unresolvable(path, &want, &e))?;
            let real = dir_real.join(file);
            if let Some(p) = self.refused_entry(&real) {
                return Err(self.read_only(&real, &p));
            }
            if !real.starts_with(&root.1.path) {
                return Err(self.not_allowed(path, &real));
            }
            match target
                .symlink()
                .map_err(|e| self.unresolvable(path, &want, &e))?
            {
                // pi writes through a final symlink into its target: kept while the target
                // stays beneath the same root.
                Some(link) if hop < MAX_FINAL_LINKS => {
                    want = beneath::normalize(&dir_real.join(link));
                    via_link = Some(root.0);
                }
                Some(_) => {
                    return Err(self.unresolvable(
                        path,
                        &want,
                        &io::Error::from_raw_os_error(libc::ELOOP),
                    ))
                }
                None => return Ok(target),
            }
        }
        Err(self.unresolvable(path, &want, &io::Error::from_raw_os_error(libc::ELOOP)))
    }

    /// The writable root (index, root) lexically holding `path`, the temp root first.
    fn writable_root_fd_holding(&self, path: &Path) -> Option<(usize, &Root)> {
        std::iter::once(&self.temp_root)
            .chain(&self.roots)
            .enumerate()
            .find(|(_, r)| path.starts_with(&r.path))
    }

    fn not_allowed(&self, asked: &Path, at: &Path) -> String {
        // For the message only: where the path would have led.
        let shown =
            if at.starts_with(&self.temp) || self.roots.iter().any(|r| at.starts_with(&r.path)) {
                resolve_for_write(asked)
            } else {
                at.to_path_buf()
            };
        format!(
            "Sandbox ({}): writing {} is not allowed. {}",
            self.mode.as_str(),
            shown.display(),
            self.where_writable()
        )
    }

    fn read_only(&self, real: &Path, p: &Path) -> String {
        format!(
            "Sandbox ({}): {} is read-only ({}). {}",
            self.mode.as_str(),
            real.display(),
            self.why_protected(p),
            self.where_writable()
        )
    }

    /// The refusal for a path the kernel would not resolve beneath its root.
    fn unresolvable(&self, asked: &Path, at: &Path, e: &io::Error) -> String {
        let name = self.mode.as_str();
        let shown = asked.display();
        let why = match e.raw_os_error() {
            Some(libc::EXDEV) => return self.not_allowed(asked, at),
            Some(libc::EROFS) => {
                let p = self.protected_holding(at).unwrap_or(&self.agent_dir);
                return self.read_only(at, p);
            }
            Some(libc::ELOOP) => "it goes through too many symbolic links (ELOOP). Write to the file's real path instead".to_string(),
            Some(libc::ENAMETOOLONG) => "its real path is too long (ENAMETOOLONG). Write to a shorter real path instead".to_string(),
            Some(libc::EAGAIN) => "it changed while being resolved (EAGAIN). Try again once nothing is renaming its directories".to_string(),
            Some(libc::ENOSYS) => "this kernel lacks openat2(2) (Linux 5.6 or later), which the sandbox needs to check tool writes. Write with the bash tool instead".to_string(),
            Some(libc::ENOENT) if at.starts_with(&self.temp) || self.roots.iter().any(|r| at.starts_with(&r.path)) => {
                return format!("ENOENT: no such file or directory, open '{}'", asked.display())
            }
            _ => format!("{e}"),
        };
        format!("Sandbox ({name}): cannot write {shown}: {why}. Nothing was written.")
    }

    fn protected_holding(&self, real: &Path) -> Option<&Path> {
        self.protected
            .iter()
            .find(|p| real.starts_with(p))
            .map(PathBuf::as_path)
    }

    fn writable_root_holding(&self, real: &Path) -> Option<&Path> {
        std::iter::once(&self.temp)
            .chain(self.roots.iter().map(|r| &r.path))
            .find(|r| real.starts_with(r))
            .map(PathBuf::as_path)
    }

    fn why_protected(&self, p: &Path) -> &'static str {
        if p == self.agent_dir {
            "pi's agent directory, with its credentials"
        } else if p.file_name().is_some_and(|n| n == ".pi") {
            "pi's project configuration: the next pi started here would obey it"
        } else if p.file_name().is_some_and(|n| n == ".git") {
            "a repository's .git: its hooks and config would run with the user's full rights"
        } else {
            "pi's cache: pi runs the code kept there"
        }
    }

    /// The protected path, or the `.git`/`.pi` at any depth, that holds `path`: the write
    /// and edit tools never write there.
    fn refused_entry(&self, path: &Path) -> Option<PathBuf> {
        self.protected_holding(path)
            .map(Path::to_path_buf)
            .or_else(|| self.guarded_entry(path))
    }

    /// The `.git` or `.pi` (at any depth in a writable root, existing or not) that holds
    /// `real`: the write/edit tools never write one (issue 29).
    fn guarded_entry(&self, real: &Path) -> Option<PathBuf> {
        let root = &self.roots.iter().find(|r| real.starts_with(&r.path))?.path;
        let mut at = root.clone();
        for part in real.strip_prefix(root).ok()?.components() {
            at.push(part);
            if part.as_os_str() == ".git" || part.as_os_str() == ".pi" {
                return Some(at);
            }
        }
        None
    }

    /// Call before a confined command starts; hand the result to [`Sandbox::after_command`].
    pub fn before_command(&self) -> Before {
        self.sweep.before()
    }

    /// Call after a confined command ended: removes any repository (`.git`) or `.pi` it
    /// created in a writable root and returns the error to show the model and the user
    /// (issue 29). The write/edit tools need no such check: [`Sandbox::open_for_write`] refuses
    /// any path through a `.git` or `.pi`.
    pub fn after_command(&self, before: &Before) -> Option<String> {
        self.sweep.after(before)
    }

    /// One sentence naming where writes may go.
    fn where_writable(&self) -> String {
        let temp = format!("$TMPDIR ({})", self.temp.display());
        if self.roots.is_empty() {
            return format!("Commands and the write/edit tools may write only in {temp}.");
        }
        let roots: Vec<String> = self
            .roots
            .iter()
            .map(|r| r.path.display().to_string())
            .collect();
        format!(
            "Commands and the write/edit tools may write only under {} and in {temp}.",
            roots.join(", ")
        )
    }

    /// Whether the kernel blocks internet sockets for confined commands.
    fn network_blocked(&self) -> bool {
        !self.network && !self.filter.is_empty()
    }
}

/// pi's cache directory (`$XDG_CACHE_HOME/pi`, else `~/.cache/pi`), where the Node.js
/// bridge and jiti live; the sandbox keeps it read-only when it lies inside a writable root.
pub fn pi_cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        // Node starts in the session's directory, so a relative cache must be made absolute.
        .map(|p| match std::env::current_dir() {
            Ok(cwd) if p.is_relative() => cwd.join(p),
            _ => p,
        })
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("pi")
}

static ACTIVE: RwLock<Option<Arc<Sandbox>>> = RwLock::new(None);

/// Makes `sandbox` the one every command pi starts from now on is confined by (`None`: no
/// sandbox); returns the previous one.
pub fn install(sandbox: Option<Arc<Sandbox>>) -> Option<Arc<Sandbox>> {
    std::mem::replace(
        &mut *ACTIVE.write().unwrap_or_else(|p| p.into_inner()),
        sandbox,
    )
}

/// The process's sandbox, if commands are confined.
pub fn active() -> Option<Arc<Sandbox>> {
    ACTIVE.read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The process's sandbox mode (`Off` when none is installed).
pub fn active_mode() -> Mode {
    active().map_or(Mode::Off, |s| s.mode)
}

#[cfg(test)]
mod tests;
