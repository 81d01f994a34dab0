//! Where a write really lands: a path resolved the way the kernel walks it, so a check on the
//! result cannot be dodged with `..` or a symlink.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// How many symlinks a walk follows before giving up (the kernel's limit).
const MAX_LINKS: usize = 40;

/// The real path a write to the absolute `path` lands on. Symlinks are followed wherever they
/// are — a dangling one too, since writing through it creates its target — and `..` is taken
/// from the real directory reached so far. Components that do not exist yet are kept as
/// written (a writer creates them as directories, so a later `..` leads back up).
pub fn resolve_for_write(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    let mut pending: VecDeque<OsString> = parts(path);
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        let is_link = std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
        if is_link && links < MAX_LINKS {
            if let Ok(target) = std::fs::read_link(&next) {
                links += 1;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                for p in parts(&target).into_iter().rev() {
                    pending.push_front(p);
                }
                continue;
            }
        }
        out = next;
    }
    out
}

/// `path` with its longest existing ancestor replaced by that ancestor's real path (`None`
/// when none can be resolved).
pub fn real_prefix(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = at.canonicalize() {
            return Some(rest.iter().rev().fold(real, |p, c| p.join(c)));
        }
        rest.push(at.file_name()?);
        at = at.parent()?;
    }
}

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

/// `path` made absolute against `cwd`, with a leading `~` taken as the home directory.
pub fn absolute(path: &str, cwd: &Path) -> PathBuf {
    let expanded = crate::util::home::expand_tilde_path(path);
    if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotdot_and_symlinks_resolve_like_the_kernel() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("work")).unwrap();
        std::fs::create_dir(root.join("outside")).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), root.join("work/link")).unwrap();
        std::os::unix::fs::symlink("../outside/new.txt", root.join("work/dangling")).unwrap();

        assert_eq!(
            resolve_for_write(&root.join("work/sub/../a.txt")),
            root.join("work/a.txt")
        );
        assert_eq!(
            resolve_for_write(&root.join("work/link/x")),
            root.join("outside/x")
        );
        // `link/..` is the parent of the link's target, not `work`.
        assert_eq!(
            resolve_for_write(&root.join("work/link/../outside/y")),
            root.join("outside/y")
        );
        assert_eq!(
            resolve_for_write(&root.join("work/dangling")),
            root.join("outside/new.txt")
        );
        assert_eq!(
            resolve_for_write(Path::new("/../../etc/x")),
            PathBuf::from("/etc/x")
        );
    }

    #[test]
    fn a_symlink_loop_ends() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(root.join("b"), root.join("a")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("b")).unwrap();
        let _ = resolve_for_write(&root.join("a/x"));
    }
}
