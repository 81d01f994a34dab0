//! What a confined command may not leave behind: a new repository (`.git`, or a bare
//! repository's `HEAD` + `objects` + `refs`) or pi's project configuration (`.pi`) in a
//! writable root (issue 29). Landlock cannot refuse a *name*, so pi looks after every command
//! ends and removes what the command created: the user's next `git status` would run a new
//! `.git`'s hooks and `core.fsmonitor` with the user's full rights, and the next pi started
//! there would obey a new `.pi`.
//!
//! Cheap by design: when the sandbox starts, the working directory is walked once and every
//! directory's `ctime` remembered (ctime, unlike mtime, cannot be set back by a command).
//! After a command, one `lstat` per directory finds those whose entries changed; only they
//! are listed again, and directories new since are walked whole. Extra writable roots
//! (caches such as `~/.cargo`, often huge) are checked at their top level only. The top level
//! of every root is judged against the moment the command started (two `lstat`s), so a `.pi`
//! pi itself creates between commands (`/settings` in project scope) is left alone.
//!
//! Existing `.git` and `.pi` entries found by the walk are returned to the sandbox, which
//! keeps them read-only.
//!
//! Every path the sweep looks at or removes goes through the roots' descriptors held since
//! start-up (`/proc/self/fd/N/…`), never through the roots' paths: a command that swaps a
//! root for a symlink to `$HOME` must not make pi look at, or remove, `$HOME/.pi`.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::roots::Root;

/// The names a command may not create in a writable root.
const GUARDED: [&str; 2] = [".git", ".pi"];

/// When a directory's entries last changed, as far as `lstat` tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    ino: u64,
    ctime: i64,
    ctime_nsec: i64,
}

/// The stamp of `rel` (relative to the directory `dir_fd` holds; empty: that directory),
/// without going through `/proc` again: one `fstatat` per directory after every command.
fn stamp_at(dir_fd: &OwnedFd, rel: &Path) -> Option<Stamp> {
    use std::os::unix::ffi::OsStrExt;
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let c = std::ffi::CString::new(rel.as_os_str().as_bytes()).ok()?;
    // SAFETY: fstatat on a descriptor we hold and a NUL-terminated path, into a zeroed stat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::fstatat(
            dir_fd.as_raw_fd(),
            c.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    (rc == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR).then_some(Stamp {
        ino: st.st_ino,
        ctime: st.st_ctime,
        ctime_nsec: st.st_ctime_nsec,
    })
}

/// Whether `name` exists (as anything, a dangling symlink too) in the directory `dir_fd` holds.
fn exists_at(dir_fd: &OwnedFd, name: &str) -> bool {
    let Ok(c) = std::ffi::CString::new(name) else {
        return false;
    };
    // SAFETY: fstatat on a descriptor we hold and a NUL-terminated name, into a zeroed stat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    unsafe {
        libc::fstatat(
            dir_fd.as_raw_fd(),
            c.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        ) == 0
    }
}

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::symlink_metadata(path).ok()?;
    m.is_dir().then(|| Stamp {
        ino: m.ino(),
        ctime: m.ctime(),
        ctime_nsec: m.ctime_nsec(),
    })
}

#[derive(Debug, Default)]
struct State {
    /// Every directory under the working directory pi knows, with its stamp.
    dirs: HashMap<PathBuf, Stamp>,
    /// Guarded entries that existed when the sandbox started (below the top level).
    known: HashSet<PathBuf>,
    /// The working directory had more than [`BASELINE_DIRS`] directories at the start.
    truncated: bool,
}

/// How many existing directories of the working directory are watched (the shallowest
/// first): at about 1 µs an `lstat`, a command's check costs at most ~10 ms.
pub const BASELINE_DIRS: usize = 10_000;

/// The post-command check of one sandbox.
#[derive(Debug)]
pub struct Sweep {
    /// The writable roots as paths through their held descriptors (`/proc/self/fd/N`); the
    /// first is the working directory (walked), or none in read-only.
    roots: Vec<PathBuf>,
    /// The descriptors behind `roots` (kept open for as long as the sweep lives) and each
    /// root's real path, for messages and for the sandbox's protected list.
    held: Vec<(OwnedFd, PathBuf)>,
    walked: Option<PathBuf>,
    state: Mutex<State>,
    /// When the sandbox started: a guarded entry born before it is never a command's.
    started: std::time::SystemTime,
}

/// Which guarded names each root's top level held when a command started.
#[derive(Debug, Clone)]
pub struct Before(Vec<[bool; 2]>);

impl Sweep {
    /// Walks `walked` (the working directory, when writable) once. Returns the sweep and the
    /// guarded entries already there (nested ones included), for the sandbox to protect.
    /// `walk_first`: the first root is the working directory, walked.
    pub fn start(roots: &[&Root], walk_first: bool) -> (Sweep, Vec<PathBuf>) {
        let started = std::time::SystemTime::now();
        // Copying a descriptor fails only when the process is out of them; such a root is
        // then not swept (and the working directory not walked).
        let held: Vec<(OwnedFd, PathBuf)> = roots
            .iter()
            .filter_map(|r| Some((r.fd.try_clone().ok()?, r.path.clone())))
            .collect();
        let through: Vec<PathBuf> = held
            .iter()
            // The trailing `.` makes `lstat` look at the directory, not the magic link.
            .map(|(fd, _)| PathBuf::from(format!("/proc/self/fd/{}/.", fd.as_raw_fd())))
            .collect();
        let walked = (walk_first && held.len() == roots.len())
            .then(|| through.first().cloned())
            .flatten();
        let mut state = State::default();
        let mut found = Vec::new();
        if let Some(root) = &walked {
            if let Some(s) = stamp(root) {
                state.dirs.insert(root.clone(), s);
                walk(root, &mut state, &mut found, true, &through);
            }
        }
        state.known.extend(found.iter().cloned());
        let sweep = Sweep {
            roots: through,
            held,
            walked,
            state: Mutex::new(state),
            started,
        };
        let found = found.iter().map(|p| sweep.real(p)).collect();
        (sweep, found)
    }

    /// The real path of `p`, a path through a held root descriptor.
    fn real(&self, p: &Path) -> PathBuf {
        for (through, (_, real)) in self.roots.iter().zip(&self.held) {
            if let Ok(rest) = p.strip_prefix(through) {
                return real.join(rest);
            }
        }
        p.to_path_buf()
    }

    /// Whether the working directory was too big to watch whole (see [`BASELINE_DIRS`]).
    pub fn truncated(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .truncated
    }

    /// Call before a confined command starts.
    pub fn before(&self) -> Before {
        Before(
            self.held
                .iter()
                .map(|(fd, _)| GUARDED.map(|n| exists_at(fd, n)))
                .collect(),
        )
    }

    /// Call after a confined command ended: the guarded entries it created, already removed
    /// (or, where removal failed, still there), and the message for the model and the user.
    pub fn after(&self, before: &Before) -> Option<String> {
        let mut created = Vec::new();
        for ((root, (fd, _)), had) in self.roots.iter().zip(&self.held).zip(&before.0) {
            for (name, had) in GUARDED.iter().zip(had) {
                if !had && exists_at(fd, name) {
                    created.push(root.join(name));
                }
            }
        }
        if let Some(walked) = &self.walked {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            // One lstat per directory; only the few that changed are copied out.
            let changed: Vec<(PathBuf, Option<Stamp>)> = state
                .dirs
                .iter()
                .filter_map(|(dir, was)| {
                    let now = match (dir.strip_prefix(walked), self.held.first()) {
                        (Ok(rel), Some((fd, _))) => stamp_at(fd, rel),
                        _ => stamp(dir),
                    };
                    (now != Some(*was)).then(|| (dir.clone(), now))
                })
                .collect();
            let mut nested = Vec::new();
            for (dir, now) in changed {
                match now {
                    None => {
                        state.dirs.remove(&dir);
                    }
                    Some(now) => {
                        state.dirs.insert(dir.clone(), now);
                        walk(&dir, &mut state, &mut nested, false, &self.roots);
                    }
                }
            }
            // Beyond the baseline's reach (a huge tree), a folder pi never listed may hold a
            // repository older than the sandbox: its birth time tells; without one, it stays.
            for p in nested {
                let old = match std::fs::symlink_metadata(&p).and_then(|m| m.created()) {
                    Ok(born) => born < self.started,
                    Err(_) => state.truncated,
                };
                if old {
                    state.known.insert(p);
                } else {
                    created.push(p);
                }
            }
        }
        if created.is_empty() {
            return None;
        }
        crate::util::sort::sort(&mut created);
        created.dedup();
        let mut left = Vec::new();
        for p in &created {
            let gone = match p.symlink_metadata() {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(p).is_ok(),
                Ok(_) => std::fs::remove_file(p).is_ok(),
                Err(_) => true,
            };
            if !gone {
                left.push(self.real(p).display().to_string());
            }
        }
        let names: Vec<String> = created
            .iter()
            .map(|p| self.real(p).display().to_string())
            .collect();
        let mut msg = format!(
            "Sandbox: commands may not create a repository (.git) or pi's project configuration (.pi): {} {} removed. A repository made by a command would run its hooks and config with your full rights the next time git runs there, and a .pi would configure the next pi started there; run `git init` (or create .pi) yourself, in your own shell.",
            names.join(", "),
            if names.len() == 1 { "was" } else { "were" },
        );
        if !left.is_empty() {
            msg.push_str(&format!(
                " Could not remove {}: delete it before running git there.",
                left.join(", ")
            ));
        }
        Some(msg)
    }
}

/// Lists `dir`, then the directories pi does not know yet below it, breadth first: guarded
/// names below the top level not known from the start are `found` (with `baseline`, all
/// guarded names are), new directories are stamped. The `baseline` walk stops tracking at
/// [`BASELINE_DIRS`]; directories made later are always tracked. Symlinks are never followed,
/// guarded directories never entered.
fn walk(
    dir: &Path,
    state: &mut State,
    found: &mut Vec<PathBuf>,
    baseline: bool,
    roots: &[PathBuf],
) {
    let mut queue = std::collections::VecDeque::from([dir.to_path_buf()]);
    while let Some(dir) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let top = roots.contains(&dir);
        let mut bare = [false; 3];
        for entry in entries.flatten() {
            let name = entry.file_name();
            let path = dir.join(&name);
            if GUARDED.iter().any(|g| OsStr::new(g) == name) {
                if !top && (baseline || !state.known.contains(&path)) {
                    found.push(path);
                }
                continue;
            }
            for (i, n) in ["HEAD", "objects", "refs"].iter().enumerate() {
                bare[i] |= OsStr::new(n) == name;
            }
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && !state.dirs.contains_key(&path) {
                if baseline && state.dirs.len() >= BASELINE_DIRS {
                    state.truncated = true;
                    continue;
                }
                if let Some(s) = stamp(&path) {
                    state.dirs.insert(path.clone(), s);
                    queue.push_back(path);
                }
            }
        }
        // A bare repository: git takes a directory holding these for a repository of its own.
        if bare == [true; 3] && !top && (baseline || !state.known.contains(&dir)) {
            found.push(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep_of(root: &Path) -> (Sweep, Vec<PathBuf>) {
        let root = Root::open(&root.canonicalize().unwrap()).unwrap();
        Sweep::start(&[&root], true)
    }

    #[test]
    fn new_repositories_and_configuration_are_found_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("old/.git")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        let (sweep, existing) = sweep_of(&root);
        assert_eq!(existing, vec![root.join("old/.git")]);
        let before = sweep.before();
        assert_eq!(sweep.after(&before), None, "nothing changed");
        let before = sweep.before();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("src/deep/sub/.git")).unwrap();
        std::fs::create_dir_all(root.join("src/.pi")).unwrap();
        std::fs::write(root.join("src/deep/.git"), "gitdir: /x\n").unwrap();
        for d in ["bare/objects", "bare/refs"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("bare/HEAD"), "ref: refs/heads/main\n").unwrap();
        let msg = sweep.after(&before).expect("found");
        for p in [
            ".git",
            "src/deep/sub/.git",
            "src/.pi",
            "src/deep/.git",
            "bare",
        ] {
            assert!(
                msg.contains(&root.join(p).display().to_string()),
                "{p}: {msg}"
            );
            assert!(!root.join(p).exists(), "{p} still there");
        }
        assert!(root.join("old/.git").exists() && root.join("src/deep/sub").exists());
        assert_eq!(sweep.after(&sweep.before()), None);
    }

    #[test]
    fn a_huge_tree_is_watched_from_the_top_and_new_folders_always() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for i in 0..BASELINE_DIRS + 5 {
            std::fs::create_dir_all(root.join(format!("d{}/n{i}", i % 3))).unwrap();
        }
        // An existing repository too deep for the baseline walk.
        let deep = root.join(format!(
            "d2/n{}/.git",
            BASELINE_DIRS + 4 - (BASELINE_DIRS + 4) % 3 + 2
        ));
        std::fs::create_dir_all(&deep).unwrap();
        let (sweep, _) = sweep_of(&root);
        assert!(sweep.truncated());
        // The top-level folders are watched, and a folder made now is tracked too.
        let before = sweep.before();
        std::fs::create_dir_all(root.join("d1/new/deeper")).unwrap();
        assert_eq!(sweep.after(&before), None);
        let before = sweep.before();
        std::fs::create_dir(root.join("d1/new/deeper/.git")).unwrap();
        std::fs::create_dir(root.join("d2/new")).unwrap();
        let msg = sweep.after(&before).unwrap();
        assert!(!root.join("d1/new/deeper/.git").exists());
        // Listed only now, but older than the sandbox: kept.
        assert!(deep.is_dir(), "{msg}");
        assert!(!msg.contains(&deep.display().to_string()), "{msg}");
    }

    #[test]
    fn a_top_level_entry_present_when_the_command_started_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (sweep, _) = sweep_of(&root);
        // pi itself made .pi between commands.
        std::fs::create_dir(root.join(".pi")).unwrap();
        let before = sweep.before();
        assert_eq!(sweep.after(&before), None);
        assert!(root.join(".pi").exists());
    }
}
