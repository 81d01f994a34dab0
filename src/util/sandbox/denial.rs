//! Explaining a failed confined command in one line the model can act on.
//!
//! The kernel does not tell pi what it refused, so the explanation is read from the command's
//! error messages and checked against the policy: a write is blamed on the sandbox only when a
//! permission error names a path the sandbox keeps read-only *and* the user could write it
//! without the sandbox; the network only when the sandbox closed it and the failure looks like
//! a connection or name lookup that could not be made. Anything else is left unexplained.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::{paths, Explanation, Sandbox};

/// Error texts of a refused open, write, unlink or mkdir.
const PERMISSION_ERRORS: [&str; 6] = [
    "permission denied",
    "operation not permitted",
    // With namespaces, everything outside the roots is a read-only mount.
    "read-only file system",
    "eacces",
    "eperm",
    "erofs",
];

/// What a failed connection or name lookup prints when `socket` itself was refused.
const NETWORK_FAILURES: [&str; 9] = [
    "couldn't connect to server",
    "failed to connect",
    "could not resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "unable to connect",
    "getaddrinfo",
    "enotfound",
    "eai_again",
];

/// Words that make a bare permission error look like a socket (in the command or output).
const NETWORK_HINTS: [&str; 12] = [
    "socket",
    "connect",
    "curl",
    "wget",
    "http://",
    "https://",
    "ssh",
    "urlopen",
    "requests.",
    "fetch",
    "nc ",
    "telnet",
];

/// How tools say they tried to remove or rename an entry.
const UNLINK_WORDS: [&str; 5] = ["remove", "unlink", "rename", "move", "cannot overwrite"];

/// What shells print before `: Permission denied` when a system call, not a file, failed.
const CALL_NAMES: [&str; 6] = ["socket", "connect", "bind", "fork", "pipe", "exec"];

/// How far back in the output to look (errors are at the end of what a tool shows).
const MAX_LINES: usize = 400;

impl Sandbox {
    /// One line saying what the sandbox refused that made this command fail, or `None` when
    /// its output shows nothing the sandbox can be blamed for.
    pub fn explain_failure(&self, command: &str, output: &str) -> Option<Explanation> {
        let name = self.mode.as_str();
        let lines: Vec<&str> = output.lines().rev().take(MAX_LINES).collect();
        if output.contains("no new privileges") {
            return Some(Explanation {
                line: format!(
                    "Sandbox ({name}): set-user-ID programs such as sudo cannot gain privileges inside the sandbox. Do without them, or ask the user to run the command without the sandbox."
                ),
                summary: "sudo cannot gain privileges inside the sandbox".into(),
            });
        }
        if self.landlock.is_some() {
            let denied: Vec<PathBuf> = lines
                .iter()
                .rev()
                .filter(|l| has_any(l, &PERMISSION_ERRORS))
                .flat_map(|l| candidate_paths(l).into_iter().map(move |p| (*l, p)))
                // bash's network pseudo-files are sockets, not files.
                .filter(|(_, p)| !p.starts_with("/dev/tcp/") && !p.starts_with("/dev/udp/"))
                .map(|(l, p)| (l, paths::resolve_for_write(&paths::absolute(&p, &self.cwd))))
                .filter(|(l, p)| self.refuses_write(p, l) && user_could_write(p))
                .map(|(_, p)| p)
                .fold(Vec::new(), |mut acc, p| {
                    if !acc.contains(&p) {
                        acc.push(p);
                    }
                    acc
                });
            if let Some(first) = denied.first() {
                return Some(self.write_denial(first, denied.len() - 1));
            }
        }
        if self.network_blocked() {
            // Unix sockets stay open: their failures are not the sandbox's doing.
            let failed_lookup = lines
                .iter()
                .any(|l| has_any(l, &NETWORK_FAILURES) && !has_any(l, &["unix", ".sock"]));
            let refused_socket = lines.iter().any(|l| has_any(l, &PERMISSION_ERRORS))
                && (has_any(command, &NETWORK_HINTS)
                    || lines.iter().any(|l| has_any(l, &NETWORK_HINTS)));
            if failed_lookup || refused_socket {
                return Some(Explanation {
                    line: format!(
                        "Sandbox ({name}): network access is blocked (no internet sockets; local Unix sockets work), which is the likely cause of this failure. Work offline, or ask the user to run the command without the sandbox."
                    ),
                    summary: "network access is blocked".into(),
                });
            }
        }
        None
    }

    /// Whether a confined command was refused writing `real`, named in the error `line`:
    /// outside every writable root, inside a protected path, or an entry of a directory split
    /// around one — when the entry is new, or the line speaks of removing or renaming it (an
    /// existing file there can be written; `./script: Permission denied` is its mode).
    fn refuses_write(&self, real: &Path, line: &str) -> bool {
        if self.protected_holding(real).is_some() {
            return true;
        }
        match self.writable_root_holding(real) {
            None => true,
            Some(_) => {
                self.split_parent(real).is_some()
                    && (real.symlink_metadata().is_err() || has_any(line, &UNLINK_WORDS))
            }
        }
    }

    /// The split directory `real` sits directly in, if any: a root or a directory below it
    /// that holds a protected path.
    fn split_parent<'a>(&self, real: &'a Path) -> Option<&'a Path> {
        if self.namespaces {
            return None; // protected paths are read-only mounts: no root is split
        }
        let parent = real.parent()?;
        let holds_protected = self
            .protected
            .iter()
            .any(|p| p.starts_with(parent) && p != parent);
        let in_root = self.roots.iter().any(|r| parent.starts_with(&r.path));
        (holds_protected && in_root).then_some(parent)
    }

    fn write_denial(&self, real: &Path, more: usize) -> Explanation {
        let name = self.mode.as_str();
        let also = match more {
            0 => String::new(),
            1 => " (and 1 more path)".into(),
            n => format!(" (and {n} more paths)"),
        };
        let ask = "or ask the user to run the command without the sandbox.";
        if let Some(p) = self.protected_holding(real) {
            return Explanation {
                line: format!(
                    "Sandbox ({name}): {} is read-only ({}){also}; leave it alone, {ask}",
                    p.display(),
                    self.why_protected(p)
                ),
                summary: format!("{} is read-only", p.display()),
            };
        }
        if let Some(dir) = self.split_parent(real) {
            let kept: Vec<String> = self
                .protected
                .iter()
                .filter(|p| p.starts_with(dir))
                .map(|p| p.display().to_string())
                .collect();
            return Explanation {
                line: format!(
                    "Sandbox ({name}): entries directly in {} cannot be created, removed or renamed (such as {}{also}), because the sandbox keeps {} read-only; existing files there can still be changed. Work in a subdirectory or use the write tool, {ask}",
                    dir.display(),
                    real.display(),
                    kept.join(", ")
                ),
                summary: format!(
                    "entries directly in {} cannot be created, removed or renamed",
                    dir.display()
                ),
            };
        }
        Explanation {
            line: format!(
                "Sandbox ({name}): writing {} is blocked{also}. {} Write there instead, {ask}",
                real.display(),
                self.where_writable()
            ),
            summary: format!("writing {} is blocked", real.display()),
        }
    }
}

fn has_any(text: &str, needles: &[&str]) -> bool {
    let lower = text.to_ascii_lowercase();
    needles.iter().any(|n| lower.contains(n))
}

/// The paths an error line names: quoted ones (`'x'`, `"x"`, `‘x’`, `` `x' ``), and the
/// `path: Permission denied` form of shells and coreutils.
fn candidate_paths(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('\'', '\''), ('"', '"'), ('‘', '’'), ('`', '\'')] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let quoted = &after[..end];
            if !quoted.is_empty() && !quoted.contains('\n') {
                out.push(quoted.to_string());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    // `bash: line 1: /etc/y: Permission denied`: the part just before a bare error (the
    // first part is a program name unless it looks like a path).
    let segments: Vec<&str> = line.split(": ").collect();
    for (i, seg) in segments.iter().enumerate().skip(1) {
        let bare = PERMISSION_ERRORS[..3].contains(&seg.trim().to_ascii_lowercase().as_str());
        if bare {
            let before = segments[i - 1].trim();
            let token = before.rsplit(' ').next().unwrap_or(before);
            let pathish = token.contains('/');
            let bare_name = !before.contains(' ') && i > 1 && !CALL_NAMES.contains(&token);
            if !token.is_empty() && (pathish || bare_name) {
                out.push(token.to_string());
            }
        }
    }
    out
}

/// Whether the user (without the sandbox) could write `real`: the file, or if it does not
/// exist the nearest directory above it that does. A path the user cannot write anyway was
/// not refused by the sandbox.
fn user_could_write(real: &Path) -> bool {
    let mut p = Some(real);
    while let Some(path) = p {
        if path.symlink_metadata().is_ok() {
            let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
                return false;
            };
            // SAFETY: access(2) on a NUL-terminated path we own.
            return unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0;
        }
        p = path.parent();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::candidate_paths;

    #[test]
    fn paths_are_read_from_the_usual_error_shapes() {
        let cases = [
            (
                "touch: cannot touch '/h/outside': Permission denied",
                "/h/outside",
            ),
            ("/bin/bash: line 1: /etc/y: Permission denied", "/etc/y"),
            ("bash: x.txt: Permission denied", "x.txt"),
            (
                "mkdir: cannot create directory ‘build’: Permission denied",
                "build",
            ),
            (
                "rm: cannot remove '../.pi/agent': Permission denied",
                "../.pi/agent",
            ),
            (
                "PermissionError: [Errno 13] Permission denied: '/etc/y'",
                "/etc/y",
            ),
            ("Error: EACCES: permission denied, open '/etc/y'", "/etc/y"),
            (
                "error: could not lock config file .git/config: Permission denied",
                ".git/config",
            ),
        ];
        for (line, want) in cases {
            let got = candidate_paths(line);
            assert!(got.iter().any(|p| p == want), "{line}: {got:?}");
        }
        // Words that are not paths are not taken for one.
        for line in [
            "bash: line 1: Permission denied",
            "PermissionError: [Errno 13] Permission denied",
            "sudo: Operation not permitted",
            "/bin/bash: socket: Permission denied",
        ] {
            assert!(candidate_paths(line).is_empty(), "{line}");
        }
    }
}
