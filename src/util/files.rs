//! Small file-system facts: opening a file that must be a regular file (a FIFO without a
//! writer blocks `open(2)` forever, and `/dev/zero` never ends, so a path that names one of
//! them gets a clear error instead), reading such a file whole up to a stated limit (every
//! configuration and resource file pi reads goes through [`read_limited`]), and whether two
//! paths are the same file.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// How much of one kind of file pi reads before refusing it. A file over its limit is an
/// error naming the limit, never silently cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    /// The kind of file, as the error names it ("a settings file").
    pub what: &'static str,
}

impl Limit {
    /// settings.json, auth.json, models.json, keybindings.json, trust.json, mcp.json and the
    /// other small JSON files pi keeps: a few kilobytes in practice.
    pub const CONFIG: Limit = Limit {
        bytes: 8 << 20,
        what: "a configuration file",
    };
    pub const THEME: Limit = Limit {
        bytes: 1 << 20,
        what: "a theme",
    };
    /// `SKILL.md` and other skill files, prompt templates: their text goes into prompts.
    pub const PROMPT_RESOURCE: Limit = Limit {
        bytes: 1 << 20,
        what: "a skill or prompt template",
    };
    /// `AGENTS.md`, `CLAUDE.md`, `SYSTEM.md`, `APPEND_SYSTEM.md`: all of it goes into the
    /// system prompt.
    pub const CONTEXT_FILE: Limit = Limit {
        bytes: 4 << 20,
        what: "a context file",
    };
    /// `@file` arguments, text or images, attached whole to the first message.
    pub const FILE_ARGUMENT: Limit = Limit {
        bytes: 64 << 20,
        what: "an @file argument",
    };
}

/// Reads the regular file at `path` whole, refusing (without blocking) a FIFO, a device, a
/// socket or a directory, and any file larger than `limit`. The errors do not repeat the path:
/// callers name the file. A missing file keeps `ErrorKind::NotFound`.
pub fn read_limited(path: impl AsRef<Path>, limit: Limit) -> io::Result<Vec<u8>> {
    let file = open_nonblocking(path.as_ref())?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {}, not a regular file", kind_of(&meta)),
        ));
    }
    if meta.len() > limit.bytes {
        return Err(too_large(limit, Some(meta.len())));
    }
    let mut data = Vec::with_capacity(meta.len() as usize);
    // A file that grows while it is read (or a /proc file that reports no size) still stops
    // one byte past the limit.
    (&file).take(limit.bytes + 1).read_to_end(&mut data)?;
    if data.len() as u64 > limit.bytes {
        return Err(too_large(limit, None));
    }
    Ok(data)
}

/// [`read_limited`] for text: invalid UTF-8 is an `InvalidData` error, as `fs::read_to_string`
/// gives.
pub fn read_limited_string(path: impl AsRef<Path>, limit: Limit) -> io::Result<String> {
    String::from_utf8(read_limited(path, limit)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

fn too_large(limit: Limit, size: Option<u64>) -> io::Error {
    let max = format!("{} MiB limit for {}", limit.bytes >> 20, limit.what);
    let message = match size {
        Some(n) => format!(
            "is {:.1} MiB, over the {max}; pi does not read it",
            n as f64 / (1u64 << 20) as f64
        ),
        None => format!("is over the {max}; pi does not read it"),
    };
    io::Error::new(io::ErrorKind::InvalidData, message)
}

fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    options.open(path)
}

/// Opens `path` for reading and checks that it is a regular file (after following symlinks).
/// The open does not block on a FIFO: it is made non-blocking, and refused once `fstat` shows
/// what it is.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    #[cfg(unix)]
    {
        // Reads of a regular file never block, but clear the flag so the handle behaves like
        // any other for whoever reads it.
        use std::os::unix::io::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own; failures leave the flag set, which is harmless
        // for a regular file.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
    }
    Ok(file)
}

/// The error for a path that exists but is not a regular file.
pub fn not_regular(path: &Path, meta: &std::fs::Metadata) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {}, not a regular file",
            path.display(),
            kind_of(meta)
        ),
    )
}

/// What a file that is not a regular file is, with its article ("a FIFO (named pipe)").
pub fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        "a directory"
    } else {
        kind_of_special(&ft)
    }
}

/// Whether two metadata describe the same file (device and inode).
pub fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        a.dev() == b.dev() && a.ino() == b.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

#[cfg(unix)]
fn kind_of_special(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn kind_of_special(_: &std::fs::FileType) -> &'static str {
    "a special file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_open_and_special_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, "x").unwrap();
        assert!(open_regular(&f).is_ok());
        let e = open_regular(dir.path()).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let e = open_regular(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: mkfifo with a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            // No writer: a plain open would block here forever.
            let e = open_regular(&fifo).unwrap_err();
            assert!(e.to_string().contains("FIFO"), "{e}");
            let e = read_limited(&fifo, Limit::CONFIG).unwrap_err();
            assert_eq!(e.to_string(), "is a FIFO (named pipe), not a regular file");
        }
    }

    #[test]
    fn reads_stop_at_the_limit_with_an_error_never_a_cut() {
        let dir = tempfile::tempdir().unwrap();
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = read_limited(&zero, Limit::CONFIG).unwrap_err();
        assert_eq!(e.to_string(), "is a character device, not a regular file");
        let e = read_limited(dir.path(), Limit::CONFIG).unwrap_err();
        assert_eq!(e.to_string(), "is a directory, not a regular file");
        let f = dir.path().join("f");
        std::fs::write(&f, vec![b'x'; 1 << 20]).unwrap();
        assert_eq!(read_limited(&f, Limit::THEME).unwrap().len(), 1 << 20);
        let e = read_limited(dir.path().join("missing"), Limit::CONFIG).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; (1 << 20) + 1]).unwrap();
        let e = read_limited_string(&big, Limit::THEME).unwrap_err();
        assert_eq!(
            e.to_string(),
            "is 1.0 MiB, over the 1 MiB limit for a theme; pi does not read it"
        );
    }
}
