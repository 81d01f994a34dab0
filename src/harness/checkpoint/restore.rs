//! Comparing two workspace states and putting one back. Every write goes through directory
//! descriptors opened from the workspace root with `O_NOFOLLOW`, one component at a time, and
//! lands by `renameat` of a file created beside it with `O_EXCL`: a symlink in the workspace
//! (planted by a command, or swapped in during the restore) is removed or replaced as a link,
//! never followed, so a restore cannot write outside the workspace.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use serde::Serialize;

use super::store::{Node, Store, Tree};

/// What a restore will change, as paths relative to the workspace.
#[derive(Serialize, Default, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    /// Present now, absent in the checkpoint: they will be deleted.
    pub added: Vec<String>,
    /// Absent now, present in the checkpoint: they will be recreated.
    pub removed: Vec<String>,
    /// Different now: the checkpoint's content comes back.
    pub modified: Vec<String>,
    /// A path now holding what another held in the checkpoint (`[from, to]`: `to` is
    /// renamed back to `from`); also listed in `added` and `removed`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub renamed: Vec<[String; 2]>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.modified.is_empty()
    }

    pub fn paths(&self) -> impl Iterator<Item = &String> {
        self.added.iter().chain(&self.removed).chain(&self.modified)
    }
}

fn text(p: &[u8]) -> String {
    String::from_utf8_lossy(p).into_owned()
}

fn content_differs(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Skipped, _) | (_, Node::Skipped) => false,
        (
            Node::File {
                digest: x, mode: m, ..
            },
            Node::File {
                digest: y, mode: n, ..
            },
        ) => x != y || m != n,
        (a, b) => a != b,
    }
}

/// The changes that turn `current` into `target`.
pub fn diff(current: &Tree, target: &Tree) -> Changes {
    let mut c = Changes::default();
    for (path, now) in current {
        match target.get(path) {
            None if !matches!(now, Node::Skipped) => c.added.push(text(path)),
            Some(then) if content_differs(now, then) => c.modified.push(text(path)),
            _ => {}
        }
    }
    for (path, then) in target {
        if !current.contains_key(path) && !matches!(then, Node::Skipped) {
            c.removed.push(text(path));
        }
    }
    let gone: std::collections::HashMap<_, _> = current
        .iter()
        .filter(|(p, _)| !target.contains_key(*p))
        .filter_map(|(p, n)| match n {
            Node::File { digest, .. } => Some((*digest, p)),
            _ => None,
        })
        .collect();
    for (path, then) in target.iter().filter(|(p, _)| !current.contains_key(*p)) {
        if let Node::File { digest, .. } = then {
            if let Some(to) = gone.get(digest) {
                c.renamed.push([text(path), text(to)]);
            }
        }
    }
    c
}

/// Paths whose state differs between two trees (for "changed since the last turn").
pub fn changed_paths(a: &Tree, b: &Tree) -> Vec<String> {
    let c = diff(a, b);
    c.paths().cloned().collect()
}

fn cstr(name: &[u8]) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a path"))
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A folder inside the workspace, reached without following links.
struct DirFd(OwnedFd);

impl DirFd {
    fn open_root(root: &Path) -> io::Result<DirFd> {
        let c = cstr(std::os::unix::ffi::OsStrExt::as_bytes(root.as_os_str()))?;
        // SAFETY: a valid C string; the returned descriptor is owned below.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_DIRECTORY | libc::O_RDONLY | libc::O_CLOEXEC,
            )
        };
        check(fd)?;
        // SAFETY: `fd` is a fresh descriptor we own.
        Ok(DirFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn raw(&self) -> libc::c_int {
        self.0.as_raw_fd()
    }

    /// The child folder `name`, created when `create`; a link or file there is an error.
    fn child(&self, name: &[u8], create: bool) -> io::Result<DirFd> {
        let c = cstr(name)?;
        let open = || {
            // SAFETY: valid descriptor and C string.
            unsafe {
                libc::openat(
                    self.raw(),
                    c.as_ptr(),
                    libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_RDONLY | libc::O_CLOEXEC,
                )
            }
        };
        let mut fd = open();
        if fd < 0 && create && io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT) {
            // SAFETY: valid descriptor and C string.
            check(unsafe { libc::mkdirat(self.raw(), c.as_ptr(), 0o755) })?;
            fd = open();
        }
        check(fd)?;
        // SAFETY: `fd` is a fresh descriptor we own.
        Ok(DirFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// What `name` is, without following it.
    fn kind(&self, name: &[u8]) -> io::Result<Option<libc::mode_t>> {
        let c = cstr(name)?;
        // SAFETY: zeroed stat is a valid out-parameter.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid descriptor, C string and out-pointer.
        let rc =
            unsafe { libc::fstatat(self.raw(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::ENOENT) {
                Ok(None)
            } else {
                Err(e)
            };
        }
        Ok(Some(st.st_mode & libc::S_IFMT))
    }

    fn remove(&self, name: &[u8]) -> io::Result<()> {
        let c = cstr(name)?;
        let is_dir = self.kind(name)? == Some(libc::S_IFDIR);
        let flags = if is_dir { libc::AT_REMOVEDIR } else { 0 };
        // SAFETY: valid descriptor and C string.
        let rc = unsafe { libc::unlinkat(self.raw(), c.as_ptr(), flags) };
        match check(rc) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
            r => r,
        }
    }

    fn temp_name(name: &[u8]) -> Vec<u8> {
        let mut t = b".pi-rewind-".to_vec();
        t.extend_from_slice(&name[..name.len().min(64)]);
        t.extend_from_slice(format!(".{}", std::process::id()).as_bytes());
        t
    }

    /// Puts `name` in place with `rename`, replacing whatever is there (a folder is removed
    /// first, when empty).
    fn replace_with(&self, tmp: &[u8], name: &[u8]) -> io::Result<()> {
        if self.kind(name)? == Some(libc::S_IFDIR) {
            self.remove(name)?;
        }
        let (t, n) = (cstr(tmp)?, cstr(name)?);
        // SAFETY: valid descriptors and C strings.
        let rc = unsafe { libc::renameat(self.raw(), t.as_ptr(), self.raw(), n.as_ptr()) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            let _ = self.remove(tmp);
            return Err(e);
        }
        Ok(())
    }

    fn write_file(&self, name: &[u8], source: &mut File, mode: u32) -> io::Result<()> {
        let tmp = Self::temp_name(name);
        let _ = self.remove(&tmp);
        let c = cstr(&tmp)?;
        // SAFETY: valid descriptor and C string.
        let fd = unsafe {
            libc::openat(
                self.raw(),
                c.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o600 as libc::c_uint,
            )
        };
        check(fd)?;
        // SAFETY: `fd` is a fresh descriptor we own.
        let mut out = unsafe { File::from_raw_fd(fd) };
        let copied = io::copy(source, &mut out).and_then(|_| {
            use std::os::unix::fs::PermissionsExt;
            out.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))
        });
        drop(out);
        if let Err(e) = copied {
            let _ = self.remove(&tmp);
            return Err(e);
        }
        self.replace_with(&tmp, name)
    }

    fn symlink(&self, target: &[u8], name: &[u8]) -> io::Result<()> {
        let tmp = Self::temp_name(name);
        let _ = self.remove(&tmp);
        let (t, c) = (cstr(target)?, cstr(&tmp)?);
        // SAFETY: valid descriptor and C strings.
        check(unsafe { libc::symlinkat(t.as_ptr(), self.raw(), c.as_ptr()) })?;
        self.replace_with(&tmp, name)
    }
}

/// Opens the folder holding `path` (creating folders on the way when `create`), and the last
/// component's name.
fn parent_of<'a>(root: &DirFd, path: &'a [u8], create: bool) -> io::Result<(DirFd, &'a [u8])> {
    let mut parts: Vec<&[u8]> = path.split(|b| *b == b'/').collect();
    let name = parts.pop().unwrap_or_default();
    let mut dir = DirFd(root.0.try_clone()?);
    for part in parts {
        dir = dir.child(part, create)?;
    }
    Ok((dir, name))
}

/// Puts the workspace at `root` from `current` back to `target`. Skipped paths are left alone;
/// failures are collected (`path: error`) and the rest goes on.
pub fn apply(
    store: &Store,
    root: &Path,
    current: &Tree,
    target: &Tree,
) -> Result<Vec<String>, String> {
    let root_fd = DirFd::open_root(root)
        .map_err(|e| format!("cannot open the workspace {}: {e}", root.display()))?;
    let mut failures = Vec::new();
    let mut fail = |path: &[u8], e: io::Error| failures.push(format!("{}: {e}", text(path)));
    // 1. Remove what the checkpoint does not have, or has as another kind; deepest first.
    for (path, now) in current.iter().rev() {
        let remove = match (now, target.get(path)) {
            (Node::Skipped, _) | (_, Some(Node::Skipped)) => false,
            (_, None) => true,
            (Node::Dir, Some(Node::Dir)) => false,
            (Node::Dir, Some(_)) | (_, Some(Node::Dir)) => true,
            (Node::Symlink { .. }, Some(Node::File { .. })) => true,
            (Node::File { .. }, Some(Node::Symlink { .. })) => true,
            _ => false,
        };
        if remove {
            let r = parent_of(&root_fd, path, false).and_then(|(dir, name)| dir.remove(name));
            match r {
                // A folder still holding ignored files stays.
                Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                Err(e) => fail(path, e),
                Ok(()) => {}
            }
        }
    }
    // 2. Put back folders, files and links; shallowest first (the tree is in path order).
    for (path, then) in target {
        let changed = current
            .get(path)
            .is_none_or(|now| content_differs(now, then));
        if !changed {
            continue;
        }
        let result = parent_of(&root_fd, path, true).and_then(|(dir, name)| match then {
            Node::Dir => dir.child(name, true).map(|_| ()),
            Node::File { digest, mode, .. } => {
                let mut source = store.open(digest)?;
                dir.write_file(name, &mut source, *mode)
            }
            Node::Symlink { digest } => dir.symlink(&store.read(digest)?, name),
            Node::Skipped => Ok(()),
        });
        if let Err(e) = result {
            fail(path, e);
        }
    }
    Ok(failures)
}
