//! File operations relative to a held directory, each checked by the system call that makes
//! it: a directory is opened with `openat2(2)` and `RESOLVE_BENEATH` (the kernel refuses any
//! `..` or symlink that would leave the root, and walks the path in the same call that opens
//! it), missing directories are made with `mkdirat` relative to the descriptor of their
//! parent, and a file is replaced by a temp file created and renamed relative to the opened
//! parent. Nothing here resolves a path by name between a check and a write, so a process
//! swapping a directory for a symlink cannot redirect the write. Every failure is an error:
//! nothing falls back to a by-path operation.

use std::collections::VecDeque;
use std::ffi::{CString, OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// `struct open_how` of `linux/openat2.h` (libc's is `non_exhaustive`).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// How every open here resolves: never above the directory it starts from, never through
/// `/proc`'s magic links. Symlinks that stay beneath are followed.
const RESOLVE: u64 = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;

fn cstring(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// `openat2(dir, path, flags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | extra)`.
fn openat2(dir: RawFd, path: &Path, flags: i32, extra: u64) -> io::Result<OwnedFd> {
    let path = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    let c = cstring(path.as_os_str())?;
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE | extra,
    };
    // SAFETY: openat2(2) with a NUL-terminated path and an open_how we own, sized exactly.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            c.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor from openat2, owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// The real path of an open descriptor (`/proc/self/fd/N`). An error when `/proc` cannot be
/// read or the directory was removed: a caller that checks paths must not guess.
pub fn fd_path(fd: RawFd) -> io::Result<PathBuf> {
    let p = std::fs::read_link(format!("/proc/self/fd/{fd}"))?;
    if !p.is_absolute() || p.as_os_str().as_bytes().ends_with(b" (deleted)") {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    Ok(p)
}

/// `path` made absolute-looking without touching the file system: `.` dropped, `..` taking
/// away the component before it (never above `/`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

/// Opens the directory `rel` beneath `root` (`O_PATH`; `root_path` is the root's real path),
/// creating missing components one by one when `create` says yes for the real path about to
/// be made. The kernel walks the whole path in one call first; where that fails because a
/// component is missing or a symlink is absolute (which `RESOLVE_BENEATH` refuses even when
/// it leads back beneath), the path is walked one component at a time, each opened beneath
/// the last without following symlinks, and each symlink's target taken from the real path
/// reached so far and kept only while it stays beneath the root. An escape is `EXDEV`.
pub fn open_dir(
    root: RawFd,
    root_path: &Path,
    rel: &Path,
    create: &dyn Fn(&Path) -> io::Result<()>,
) -> io::Result<OwnedFd> {
    match openat2(root, rel, DIR, 0) {
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EXDEV)) => {}
        other => return other,
    }
    let mut pending: VecDeque<OsString> = parts(rel);
    let mut cur = openat2(root, Path::new("."), DIR, 0)?;
    let mut cur_path = root_path.to_path_buf();
    let mut links = 0;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            cur_path.pop();
            let inside = cur_path
                .strip_prefix(root_path)
                .map_err(|_| io::Error::from_raw_os_error(libc::EXDEV))?;
            cur = openat2(root, inside, DIR, libc::RESOLVE_NO_SYMLINKS)?;
            continue;
        }
        let step = Path::new(&name);
        match openat2(cur.as_raw_fd(), step, DIR, libc::RESOLVE_NO_SYMLINKS) {
            Ok(fd) => {
                cur = fd;
                cur_path.push(&name);
            }
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(e);
                }
                let target = readlink_at(cur.as_raw_fd(), &cstring(&name)?)?;
                let next = normalize(&cur_path.join(target));
                let inside = next
                    .strip_prefix(root_path)
                    .map_err(|_| io::Error::from_raw_os_error(libc::EXDEV))?;
                for p in parts(inside).into_iter().rev() {
                    pending.push_front(p);
                }
                cur = openat2(root, Path::new("."), DIR, 0)?;
                cur_path = root_path.to_path_buf();
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                create(&cur_path.join(&name))?;
                let c = cstring(&name)?;
                // SAFETY: mkdirat on a descriptor we hold and a NUL-terminated name.
                if unsafe { libc::mkdirat(cur.as_raw_fd(), c.as_ptr(), 0o777) } != 0 {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EEXIST) {
                        return Err(e);
                    }
                }
                // Just made: no symlink is followed to reach it.
                cur = openat2(cur.as_raw_fd(), step, DIR, libc::RESOLVE_NO_SYMLINKS)?;
                cur_path.push(&name);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(cur)
}

/// How a directory is opened: only to hold it.
const DIR: i32 = libc::O_PATH | libc::O_DIRECTORY;

/// How many symlinks a walk follows (the kernel's limit).
const MAX_LINKS: usize = 40;

/// The named components of `path`, with `..` kept and `.` dropped.
fn parts(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect()
}

/// Where the symlink `name` in `dir` points.
fn readlink_at(dir: RawFd, name: &CString) -> io::Result<PathBuf> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: readlinkat into a buffer we own, of the length given.
    let n = unsafe { libc::readlinkat(dir, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(PathBuf::from(OsStr::from_bytes(&buf)))
}

/// What a name in a directory is, without following it.
fn lstat_at(dir: RawFd, name: &CString) -> io::Result<libc::stat> {
    // SAFETY: fstatat fills the zeroed stat we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// A file to write: a name in a directory held open. Reads and writes go through the
/// descriptor, never through a path.
#[derive(Debug)]
pub struct Target {
    dir: OwnedFd,
    name: CString,
}

impl Target {
    /// `name` (one component) in the directory `dir`.
    pub fn new(dir: OwnedFd, name: &OsStr) -> io::Result<Target> {
        if name.is_empty() || name.as_bytes().contains(&b'/') || name == ".." || name == "." {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        Ok(Target {
            dir,
            name: cstring(name)?,
        })
    }

    pub fn dir_fd(&self) -> RawFd {
        self.dir.as_raw_fd()
    }

    /// Where the symlink `name` points, when it is one.
    pub fn symlink(&self) -> io::Result<Option<PathBuf>> {
        match lstat_at(self.dir_fd(), &self.name) {
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => {}
            Ok(_) => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(None),
            Err(e) => return Err(e),
        }
        readlink_at(self.dir_fd(), &self.name).map(Some)
    }

    /// The whole content of the file (a symlink there now is an error, not followed).
    pub fn read(&self) -> io::Result<Vec<u8>> {
        // SAFETY: openat on a held directory and a NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                self.dir_fd(),
                self.name.as_ptr(),
                // Non-blocking: a FIFO swapped in must not hang the tool.
                libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor, owned by the File.
        let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
        let kind = file.metadata()?.file_type();
        if kind.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        if !kind.is_file() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let mut out = Vec::new();
        io::Read::read_to_end(&mut file, &mut out)?;
        Ok(out)
    }

    /// Replaces the file with `bytes` like `util::atomic::replace`: a temp file beside it,
    /// renamed over it (readers see the old content or the new), the old permission bits
    /// kept, the temp file removed on every error. `close_old_in_background` as there.
    pub fn replace(&self, bytes: &[u8], close_old_in_background: bool) -> io::Result<()> {
        let existing = match lstat_at(self.dir_fd(), &self.name) {
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFDIR => {
                return Err(io::Error::from_raw_os_error(libc::EISDIR))
            }
            Ok(st) => Some(st.st_mode & 0o7777),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => None,
            Err(e) => return Err(e),
        };
        let (tmp_name, file) = self.create_temp()?;
        let unlink_tmp = || {
            // SAFETY: unlinkat of the temp name we created, in the held directory.
            unsafe { libc::unlinkat(self.dir_fd(), tmp_name.as_ptr(), 0) };
        };
        let written = (|| {
            let mut file = file;
            {
                let mut out = io::BufWriter::new(&mut file);
                out.write_all(bytes)?;
                out.flush()?;
            }
            if let Some(bits) = existing {
                // SAFETY: fchmod on the temp file we hold.
                if unsafe { libc::fchmod(file.as_raw_fd(), bits) } != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        })();
        if let Err(e) = written {
            unlink_tmp();
            return Err(e);
        }
        let old = match close_old_in_background {
            // SAFETY: openat(O_PATH) on a held directory: keeps the old inode for a helper.
            true => {
                let fd = unsafe {
                    libc::openat(
                        self.dir_fd(),
                        self.name.as_ptr(),
                        libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                    )
                };
                (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
            }
            false => None,
        };
        // SAFETY: renameat within one held directory, both names NUL-terminated.
        let renamed = unsafe {
            libc::renameat(
                self.dir_fd(),
                tmp_name.as_ptr(),
                self.dir_fd(),
                self.name.as_ptr(),
            )
        };
        if renamed != 0 {
            let e = io::Error::last_os_error();
            unlink_tmp();
            return Err(e);
        }
        if let Some(old) = old {
            let _ = std::thread::Builder::new()
                .name("pi-close-old".into())
                .spawn(move || drop(old));
        }
        Ok(())
    }

    /// A new temp file `.NAME.XXXXXX.tmp` in the held directory, mode 0666 minus the umask.
    fn create_temp(&self) -> io::Result<(CString, std::fs::File)> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = OsStr::from_bytes(self.name.as_bytes()).to_string_lossy();
        for _ in 0..100 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos() as u64);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let unique = (u64::from(std::process::id()) << 32) ^ (n << 20) ^ nanos;
            let tmp = CString::new(format!(".{name}.{unique:x}.tmp"))
                .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
            // SAFETY: openat on a held directory and a NUL-terminated name.
            let fd = unsafe {
                libc::openat(
                    self.dir_fd(),
                    tmp.as_ptr(),
                    libc::O_WRONLY
                        | libc::O_CREAT
                        | libc::O_EXCL
                        | libc::O_NOFOLLOW
                        | libc::O_CLOEXEC,
                    0o666 as libc::c_uint,
                )
            };
            if fd >= 0 {
                // SAFETY: a fresh descriptor, owned by the File.
                return Ok((tmp, unsafe { std::fs::File::from_raw_fd(fd) }));
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(e);
            }
        }
        Err(io::Error::from_raw_os_error(libc::EEXIST))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn no_check(_: &Path) -> io::Result<()> {
        Ok(())
    }

    fn root_fd(p: &Path) -> OwnedFd {
        let c = CString::new(p.as_os_str().as_bytes()).unwrap();
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY) };
        assert!(fd >= 0);
        unsafe { OwnedFd::from_raw_fd(fd) }
    }

    #[test]
    fn directories_are_created_beneath_and_escapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(top.join("root/in")).unwrap();
        std::fs::create_dir(top.join("outside")).unwrap();
        std::os::unix::fs::symlink(top.join("outside"), top.join("root/abs")).unwrap();
        std::os::unix::fs::symlink("../outside", top.join("root/rel")).unwrap();
        std::os::unix::fs::symlink("in", top.join("root/inner")).unwrap();
        let rp = top.join("root");
        let root = root_fd(&rp);
        std::os::unix::fs::symlink(rp.join("in"), rp.join("abs_in")).unwrap();
        let d = open_dir(root.as_raw_fd(), &rp, Path::new("abs_in/y"), &no_check).unwrap();
        assert_eq!(fd_path(d.as_raw_fd()).unwrap(), rp.join("in/y"));

        let d = open_dir(root.as_raw_fd(), &rp, Path::new("a/b/c"), &no_check).unwrap();
        assert_eq!(fd_path(d.as_raw_fd()).unwrap(), top.join("root/a/b/c"));
        let d = open_dir(root.as_raw_fd(), &rp, Path::new("inner/x"), &no_check).unwrap();
        assert_eq!(fd_path(d.as_raw_fd()).unwrap(), top.join("root/in/x"));
        for escape in ["abs", "rel/x", "../outside", "in/../../outside/y"] {
            let e = open_dir(root.as_raw_fd(), &rp, Path::new(escape), &no_check).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EXDEV), "{escape}");
        }
        assert!(!top.join("outside/x").exists() && !top.join("outside/y").exists());
        let refuse = |_: &Path| Err(io::Error::from_raw_os_error(libc::EACCES));
        assert!(open_dir(root.as_raw_fd(), &rp, Path::new("new/dir"), &refuse).is_err());
        assert!(!top.join("root/new").exists());
    }

    #[test]
    fn a_long_symlink_chain_is_eloop() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        std::fs::create_dir(top.join("d")).unwrap();
        std::os::unix::fs::symlink("d", top.join("l0")).unwrap();
        for i in 1..=41 {
            std::os::unix::fs::symlink(format!("l{}", i - 1), top.join(format!("l{i}"))).unwrap();
        }
        let root = root_fd(&top);
        let e = open_dir(root.as_raw_fd(), &top, Path::new("l41"), &no_check).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
    }

    #[test]
    fn replace_keeps_the_mode_and_leaves_no_temp_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        std::fs::write(top.join("f"), "old").unwrap();
        std::fs::set_permissions(top.join("f"), std::fs::Permissions::from_mode(0o640)).unwrap();
        let root = root_fd(&top);
        let t = Target::new(
            open_dir(root.as_raw_fd(), &top, Path::new(""), &no_check).unwrap(),
            OsStr::new("f"),
        )
        .unwrap();
        assert_eq!(t.read().unwrap(), b"old");
        let fifo = CString::new(top.join("fifo").as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let f = Target::new(
            open_dir(root.as_raw_fd(), &top, Path::new(""), &no_check).unwrap(),
            OsStr::new("fifo"),
        )
        .unwrap();
        assert_eq!(f.read().unwrap_err().raw_os_error(), Some(libc::EINVAL));
        t.replace(b"new", true).unwrap();
        assert_eq!(std::fs::read(top.join("f")).unwrap(), b"new");
        let mode = std::fs::metadata(top.join("f"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o640);
        std::fs::create_dir(top.join("sub")).unwrap();
        let d = Target::new(
            open_dir(root.as_raw_fd(), &top, Path::new(""), &no_check).unwrap(),
            OsStr::new("sub"),
        )
        .unwrap();
        assert_eq!(
            d.replace(b"x", false).unwrap_err().raw_os_error(),
            Some(libc::EISDIR)
        );
        let names: Vec<_> = std::fs::read_dir(&top)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(names.is_empty(), "{names:?}");
        assert_eq!(
            normalize(Path::new("/a/./b/../../../c")),
            PathBuf::from("/c")
        );
    }
}
