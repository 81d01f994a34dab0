//! Small file-system facts: opening a file that must be a regular file (a FIFO without a
//! writer blocks `open(2)` forever, and `/dev/zero` never ends, so a session path that names
//! one of them gets a clear error instead), and whether two paths are the same file.

use std::fs::File;
use std::io;
use std::path::Path;

/// Opens `path` for reading and checks that it is a regular file (after following symlinks).
/// The open does not block on a FIFO: it is made non-blocking, and refused once `fstat` shows
/// what it is.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
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
    let ft = meta.file_type();
    let what = if ft.is_dir() {
        "a directory"
    } else {
        kind_of_special(&ft)
    };
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{} is {what}, not a regular file", path.display()),
    )
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
        }
    }
}
