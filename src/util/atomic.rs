//! The one way pi replaces a file's content: write a temporary file beside the target, then
//! rename it over the target, so a reader (another pi, the TypeScript pi, an editor) sees the
//! old content or the new, never a mix, and a failed write leaves the old file as it was.
//!
//! * A symlink is followed: the link stays a link and its target gets the new content
//!   (dotfile managers link `settings.json`, `auth.json` and friends into a repository).
//! * The file keeps its permission bits (or gets exactly the ones asked for, e.g. `0600` for
//!   credentials); a new file gets `0666` minus the umask, like any other new file.
//! * [`Durability::Durable`] also fsyncs the file before the rename and the directory after
//!   it, so after a crash the file holds the old content or the new one, never nothing. Use it
//!   where the data matters (sessions, credentials, settings).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What survives a crash right after the replacement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Readers never see a torn file; a crash may undo the change.
    Atomic,
    /// As `Atomic`, and once the call returns the new content is on disk.
    Durable,
}

/// The permission bits of the replaced file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Keep the existing file's bits; a new file gets `0666` minus the umask.
    Keep,
    /// Exactly these bits, whatever the file had (credentials: `0o600`).
    Exactly(u32),
}

/// How to replace a file; `Options::default()` is atomic, mode kept.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub durability: Durability,
    pub mode: Mode,
    /// Close the replaced file on a helper thread: freeing a large file's pages happens inside
    /// `rename(2)` otherwise (the `edit` tool on a 10 MB file spent ~6 ms there).
    pub close_old_in_background: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            durability: Durability::Atomic,
            mode: Mode::Keep,
            close_old_in_background: false,
        }
    }
}

impl Options {
    /// Durable, mode kept: sessions and settings.
    pub fn durable() -> Self {
        Options {
            durability: Durability::Durable,
            ..Options::default()
        }
    }
}

/// Replaces the content of `path` (or of the file its symlinks lead to) with `bytes`. The
/// parent directory must exist.
pub fn replace(path: &Path, bytes: &[u8], options: Options) -> io::Result<()> {
    replace_with(path, options, &mut |w| w.write_all(bytes))
}

/// [`replace`], with the new content produced by `write` (for content too big to build in
/// memory first). An error from `write` leaves the file as it was.
pub fn replace_with(
    path: &Path,
    options: Options,
    write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    write_then_place(path, options, write, Place::Replace)
}

/// Creates `path` with `bytes`, complete or not at all, only if nothing is there yet: the
/// temporary file is linked into place (link-if-absent), so of two processes creating the
/// same file one wins and the other gets [`io::ErrorKind::AlreadyExists`]; an existing file
/// is never replaced.
pub fn create_new(path: &Path, bytes: &[u8], options: Options) -> io::Result<()> {
    write_then_place(path, options, &mut |w| w.write_all(bytes), Place::IfAbsent)
}

#[derive(PartialEq)]
enum Place {
    Replace,
    IfAbsent,
}

fn write_then_place(
    path: &Path,
    options: Options,
    write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    place: Place,
) -> io::Result<()> {
    let target = follow_symlinks(path)?;
    let existing = match fs::metadata(&target) {
        Ok(m) if m.is_dir() => return Err(io::Error::from_raw_os_error(libc::EISDIR)),
        Ok(_) if place == Place::IfAbsent => {
            return Err(io::Error::from_raw_os_error(libc::EEXIST))
        }
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let create_mode = match options.mode {
            Mode::Exactly(m) => m,
            Mode::Keep => 0o666,
        };
        builder.permissions(fs::Permissions::from_mode(create_mode));
    }
    let mut tmp = builder.tempfile_in(&dir)?;
    {
        let mut out = io::BufWriter::new(tmp.as_file_mut());
        write(&mut out)?;
        out.flush()?;
    }
    set_mode(tmp.as_file(), options.mode, existing.as_ref())?;
    if options.durability == Durability::Durable {
        tmp.as_file().sync_all()?;
    }
    let old = match options.close_old_in_background {
        true => File::open(&target).ok(),
        false => None,
    };
    match place {
        Place::Replace => drop(tmp.persist(&target).map_err(|e| e.error)?),
        Place::IfAbsent => drop(tmp.persist_noclobber(&target).map_err(|e| e.error)?),
    }
    if let Some(old) = old {
        // Detached on purpose: it only closes a file descriptor.
        let _ = std::thread::Builder::new()
            .name("pi-close-old".into())
            .spawn(move || drop(old));
    }
    if options.durability == Durability::Durable {
        sync_dir(&dir)?;
    }
    Ok(())
}

/// Where the content of `path` lives: `path` itself, or what its chain of symlinks points at
/// (which need not exist yet: a dangling link gets its target created).
pub fn follow_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    // Linux gives up after 40 links too.
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = fs::read_link(&p)?;
                p = match p.parent() {
                    Some(parent) if link.is_relative() => parent.join(link),
                    _ => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

#[cfg(unix)]
fn set_mode(file: &File, mode: Mode, existing: Option<&fs::Metadata>) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let bits = match (mode, existing) {
        (Mode::Exactly(m), _) => m,
        (Mode::Keep, Some(m)) => m.permissions().mode() & 0o7777,
        // Created with 0666 through the umask, like `File::create`.
        (Mode::Keep, None) => return Ok(()),
    };
    file.set_permissions(fs::Permissions::from_mode(bits))
}

#[cfg(not(unix))]
fn set_mode(file: &File, _: Mode, existing: Option<&fs::Metadata>) -> io::Result<()> {
    match existing {
        Some(m) => file.set_permissions(m.permissions()),
        None => Ok(()),
    }
}

/// Makes a rename in `dir` durable. Filesystems that cannot sync a directory say so with
/// `EINVAL`; the rename itself is done, so that is not an error.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir).and_then(|d| d.sync_all()) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    fn mode_of(p: &Path) -> u32 {
        #[cfg(unix)]
        return fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        #[cfg(not(unix))]
        return 0;
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn creates_and_replaces_keeping_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        replace(&p, b"one", Options::durable()).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"one");
        #[cfg(unix)]
        {
            fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
            replace(&p, b"two", Options::default()).unwrap();
            assert_eq!(fs::read(&p).unwrap(), b"two");
            assert_eq!(mode_of(&p), 0o640);
        }
        assert!(leftovers(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn exact_mode_is_applied_to_new_and_existing_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("auth.json");
        let private = Options {
            mode: Mode::Exactly(0o600),
            ..Options::durable()
        };
        replace(&p, b"{}", private).unwrap();
        assert_eq!(mode_of(&p), 0o600);
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        replace(&p, b"{\"a\":1}", private).unwrap();
        assert_eq!(mode_of(&p), 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_stays_a_link_and_its_target_gets_the_content() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().join("dotfiles");
        fs::create_dir(&real_dir).unwrap();
        let real = real_dir.join("settings.json");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o604)).unwrap();
        let link = dir.path().join("settings.json");
        // A relative link, resolved against the link's own directory.
        std::os::unix::fs::symlink("dotfiles/settings.json", &link).unwrap();
        replace(&link, b"new", Options::durable()).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"new");
        assert_eq!(mode_of(&real), 0o604);
        assert!(leftovers(&real_dir).is_empty() && leftovers(dir.path()).is_empty());

        // A dangling link: its target is created.
        let dangling = dir.path().join("trust.json");
        std::os::unix::fs::symlink(real_dir.join("trust.json"), &dangling).unwrap();
        replace(&dangling, b"{}", Options::default()).unwrap();
        assert_eq!(fs::read(real_dir.join("trust.json")).unwrap(), b"{}");
        assert!(fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_loop_and_a_directory_are_errors_that_leave_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        assert_eq!(
            replace(&a, b"x", Options::default())
                .unwrap_err()
                .raw_os_error(),
            Some(libc::ELOOP)
        );
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        assert!(replace(&sub, b"x", Options::default()).is_err());
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_failed_write_keeps_the_old_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("missing-dir").join("f");
        assert!(replace(&p, b"x", Options::default()).is_err());
        assert!(!p.exists());
    }
}
