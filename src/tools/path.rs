//! Turning a path argument into a file-system path the way pi does: a leading `@` is dropped,
//! odd Unicode spaces become plain spaces, `~` is the home directory, and relative paths are
//! taken from the tool's working directory; a file that does not exist is looked for under
//! the spellings macOS uses (the `read` tool and `@file` arguments). Also renders I/O errors
//! in Node's wording, since pi's tool results quote them.

use crate::agent::validate::type_name;
use std::io;
use std::path::{Component, Path, PathBuf};

fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// `@` prefix removal, Unicode-space normalization and `~` expansion (no cwd involved).
pub fn expand_path(raw: &str) -> String {
    let s = raw.strip_prefix('@').unwrap_or(raw);
    let s: String = s
        .chars()
        .map(|c| if is_unicode_space(c) { ' ' } else { c })
        .collect();
    crate::util::home::expand_tilde(&s)
}

/// Removes `.` and resolves `..` lexically, like Node's `path.resolve`.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The absolute path a tool argument names, relative paths taken from `cwd`.
pub fn resolve_to_cwd(raw: &str, cwd: &Path) -> PathBuf {
    let expanded = expand_path(raw);
    let p = Path::new(&expanded);
    if p.is_absolute() {
        normalize_lexically(p)
    } else {
        normalize_lexically(&cwd.join(p))
    }
}

/// `name` with a narrow no-break space before a trailing `AM.`/`PM.` (any case), as macOS
/// writes screenshot names (`Screenshot 2024-01-01 at 10.00.00\u{202F}AM.png`).
fn macos_am_pm(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(i) = rest.find(' ') {
        let after = &rest[i + 1..];
        let meridiem = after.get(..3).filter(|m| {
            let m = m.as_bytes();
            matches!(m[0], b'A' | b'a' | b'P' | b'p') && matches!(m[1], b'M' | b'm') && m[2] == b'.'
        });
        out.push_str(&rest[..i]);
        match meridiem {
            Some(m) => {
                out.push('\u{202F}');
                out.push_str(m);
                rest = &after[3..];
            }
            None => {
                out.push(' ');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Like [`resolve_to_cwd`], but when the file does not exist tries, in pi's order, the
/// spellings macOS uses: a narrow no-break space before AM/PM (screenshot names), the NFD
/// (decomposed) form of the name, a curly apostrophe for a straight one, and NFD plus curly
/// apostrophe (French screenshots, "Capture d’écran"). The first that exists wins; otherwise
/// the plain resolution is returned.
pub fn resolve_read_path(raw: &str, cwd: &Path) -> PathBuf {
    use unicode_normalization::UnicodeNormalization;
    let resolved = resolve_to_cwd(raw, cwd);
    if resolved.exists() {
        return resolved;
    }
    let Some(s) = resolved.to_str() else {
        return resolved;
    };
    let nfd: String = s.nfd().collect();
    let variants = [
        macos_am_pm(s),
        nfd.clone(),
        s.replace('\'', "\u{2019}"),
        nfd.replace('\'', "\u{2019}"),
    ];
    variants
        .into_iter()
        .find(|v| v != s && Path::new(v).exists())
        .map_or(resolved, PathBuf::from)
}

/// Node's name for an I/O error code (`ENOENT`, `EACCES`, ...).
pub fn error_code(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(libc::ENOENT) => "ENOENT".into(),
        Some(libc::EACCES) => "EACCES".into(),
        Some(libc::EPERM) => "EPERM".into(),
        Some(libc::EISDIR) => "EISDIR".into(),
        Some(libc::ENOTDIR) => "ENOTDIR".into(),
        Some(libc::EROFS) => "EROFS".into(),
        Some(libc::ELOOP) => "ELOOP".into(),
        Some(libc::ENAMETOOLONG) => "ENAMETOOLONG".into(),
        Some(libc::EEXIST) => "EEXIST".into(),
        Some(libc::ENOSPC) => "ENOSPC".into(),
        Some(n) => format!("E{n}"),
        None => "EIO".into(),
    }
}

/// An I/O error worded like Node's: `ENOENT: no such file or directory, open '/abs/path'`.
pub fn node_error(err: &io::Error, syscall: &str, path: &Path) -> String {
    let desc = match err.raw_os_error() {
        Some(libc::ENOENT) => "no such file or directory".to_string(),
        Some(libc::EACCES) => "permission denied".to_string(),
        Some(libc::EISDIR) => "illegal operation on a directory".to_string(),
        Some(libc::ENOTDIR) => "not a directory".to_string(),
        Some(libc::EPERM) => "operation not permitted".to_string(),
        Some(libc::EROFS) => "read-only file system".to_string(),
        Some(libc::EEXIST) => "file already exists".to_string(),
        Some(libc::ENOSPC) => "no space left on device".to_string(),
        _ => {
            let s = err.to_string();
            match s.find(" (os error") {
                Some(i) => s[..i].to_lowercase(),
                None => s,
            }
        }
    };
    format!(
        "{}: {desc}, {syscall} '{}'",
        error_code(err),
        path.display()
    )
}

/// `access(2)` with the given mode (`libc::R_OK | libc::W_OK`, ...).
pub fn access(path: &Path, mode: libc::c_int) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::ENOENT))?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::access(c.as_ptr(), mode) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Refuses a path that exists but is neither a regular file nor a directory (a FIFO, a device,
/// a socket): opening one can block forever (a FIFO without a writer) or never end (`/dev/zero`).
/// `stat` itself does not block on them. Missing paths and directories pass, so the caller's
/// usual errors for those stay as they are.
pub fn refuse_special_file(abs: &Path, shown: &str, action: &str) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(abs) else {
        return Ok(());
    };
    let t = meta.file_type();
    let kind = if t.is_file() || t.is_dir() {
        return Ok(());
    } else if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    };
    Err(format!(
        "Cannot {action} {shown}: it is {kind}, not a regular file"
    ))
}

/// An argument error worded like pi's schema validation.
pub fn validation_error(
    tool: &str,
    field: &str,
    problem: &str,
    args: &serde_json::Value,
) -> String {
    let json = serde_json::to_string_pretty(args).unwrap_or_default();
    format!("Validation failed for tool \"{tool}\":\n  - {field}: {problem}\n\nReceived arguments:\n{json}")
}

/// A required string argument (for direct callers: the agent has already validated).
pub fn str_arg<'a>(
    tool: &str,
    args: &'a serde_json::Value,
    field: &str,
) -> Result<&'a str, String> {
    match args.get(field) {
        Some(serde_json::Value::String(s)) => Ok(s),
        None => Err(validation_error(tool, field, "missing", args)),
        Some(other) => Err(validation_error(
            tool,
            field,
            &format!("expected string, got {}", type_name(other)),
            args,
        )),
    }
}

/// An optional number argument (`null` counts as absent; numeric strings are accepted, as
/// pi's argument coercion does).
pub fn num_arg(tool: &str, args: &serde_json::Value, field: &str) -> Result<Option<f64>, String> {
    match args.get(field) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) => Ok(n.as_f64()),
        Some(serde_json::Value::String(s)) if s.trim().parse::<f64>().is_ok_and(f64::is_finite) => {
            Ok(s.trim().parse().ok())
        }
        Some(other) => Err(validation_error(
            tool,
            field,
            &format!("expected number, got {}", type_name(other)),
            args,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_tilde_at_and_dots() {
        let cwd = Path::new("/work/proj");
        assert_eq!(
            resolve_to_cwd("a/b.txt", cwd),
            PathBuf::from("/work/proj/a/b.txt")
        );
        assert_eq!(
            resolve_to_cwd("@src/x.rs", cwd),
            PathBuf::from("/work/proj/src/x.rs")
        );
        assert_eq!(resolve_to_cwd("../x/./y", cwd), PathBuf::from("/work/x/y"));
        assert_eq!(
            resolve_to_cwd("/etc/hosts", cwd),
            PathBuf::from("/etc/hosts")
        );
        let home = std::env::var("HOME").unwrap_or_default();
        assert_eq!(
            resolve_to_cwd("~/f", cwd),
            normalize_lexically(Path::new(&format!("{home}/f")))
        );
        assert_eq!(expand_path("a\u{00A0}b"), "a b");
    }

    /// pi-mono's `test/path-utils.test.ts` `resolveReadPath` cases.
    #[test]
    fn read_path_fallbacks_for_macos_names() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let touch = |name: &str| std::fs::write(cwd.join(name), "content").unwrap();
        touch("test-file.txt");
        assert_eq!(
            resolve_read_path("test-file.txt", cwd),
            cwd.join("test-file.txt")
        );
        // NFD on disk (e + U+0301), NFC typed (U+00E9).
        touch("file\u{0065}\u{0301}.txt");
        assert_eq!(
            resolve_read_path("file\u{00e9}.txt", cwd),
            cwd.join("file\u{0065}\u{0301}.txt")
        );
        // Curly apostrophe on disk, straight one typed; with NFC letters too.
        touch("Capture d\u{2019}cran.txt");
        assert_eq!(
            resolve_read_path("Capture d'cran.txt", cwd),
            cwd.join("Capture d\u{2019}cran.txt")
        );
        touch("Capture d\u{2019}\u{00e9}cran.txt");
        assert_eq!(
            resolve_read_path("Capture d'\u{00e9}cran.txt", cwd),
            cwd.join("Capture d\u{2019}\u{00e9}cran.txt")
        );
        // NFD and curly together (a French macOS screenshot on a file system keeping NFD).
        touch("Capture d\u{2019}e\u{0301}cran 2.txt");
        assert_eq!(
            resolve_read_path("Capture d'\u{00e9}cran 2.txt", cwd),
            cwd.join("Capture d\u{2019}e\u{0301}cran 2.txt")
        );
        // macOS screenshots: a narrow no-break space before AM/PM, whatever was typed there.
        touch("Screenshot 2024-01-01 at 10.00.00\u{202F}AM.png");
        for typed in [
            "Screenshot 2024-01-01 at 10.00.00 AM.png",
            "Screenshot 2024-01-01 at 10.00.00\u{202F}AM.png",
            "Screenshot 2024-01-01 at 10.00.00\u{00A0}AM.png",
        ] {
            assert_eq!(
                resolve_read_path(typed, cwd),
                cwd.join("Screenshot 2024-01-01 at 10.00.00\u{202F}AM.png"),
                "{typed:?}"
            );
        }
        touch("Shot at 1.02.03\u{202F}pm.png");
        assert_eq!(
            resolve_read_path("Shot at 1.02.03 pm.png", cwd),
            cwd.join("Shot at 1.02.03\u{202F}pm.png")
        );
        // Nothing matches: the plain resolution.
        assert_eq!(
            resolve_read_path("missing's.txt", cwd),
            cwd.join("missing's.txt")
        );
    }

    #[test]
    fn am_pm_spelling() {
        assert_eq!(
            macos_am_pm("a 1 AM.png b PM. c am. Pm x"),
            "a 1\u{202F}AM.png b\u{202F}PM. c\u{202F}am. Pm x"
        );
        assert_eq!(macos_am_pm("no meridiem"), "no meridiem");
        assert_eq!(macos_am_pm("ends with "), "ends with ");
        assert_eq!(macos_am_pm("é AM."), "é\u{202F}AM.");
    }

    #[test]
    fn node_style_errors() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(
            node_error(&e, "access", Path::new("/x/y")),
            "ENOENT: no such file or directory, access '/x/y'"
        );
        assert_eq!(
            error_code(&io::Error::from_raw_os_error(libc::EACCES)),
            "EACCES"
        );
    }
}
