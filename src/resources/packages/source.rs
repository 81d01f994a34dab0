//! Package source strings as pi reads them: `npm:<name>[@version]`, git sources (`git:` plus
//! shorthand such as `github.com/user/repo@v1` or `git@host:user/repo`, or a plain
//! `https://` / `http://` / `ssh://` URL, optionally `@ref`) and local paths. Also the identity
//! pi uses to match a typed source against recorded ones (npm name, git host/path, resolved
//! local path).

use std::path::{Path, PathBuf};

/// One parsed source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageSource {
    Npm {
        /// What follows `npm:`, e.g. `@scope/pkg@1.2.3`.
        spec: String,
        /// The package name without version.
        name: String,
        /// A version was given: `update` leaves the package alone.
        pinned: bool,
    },
    Git {
        /// What `git clone` is given (without the ref).
        repo: String,
        /// Host part, the first directory under `git/`.
        host: String,
        /// `user/repo` (no `.git`), the directories under the host.
        path: String,
        /// `@ref` checked out after cloning; pins the package.
        git_ref: Option<String>,
    },
    Local {
        path: String,
    },
}

impl PackageSource {
    /// Parses a source as pi does. Anything that is neither npm nor a recognisable git
    /// source is a local path.
    pub fn parse(source: &str) -> PackageSource {
        if let Some(spec) = source.strip_prefix("npm:") {
            let spec = spec.trim().to_string();
            let (name, version) = split_npm_spec(&spec);
            return PackageSource::Npm {
                pinned: version.is_some(),
                name,
                spec,
            };
        }
        if is_local_path(source) {
            return PackageSource::Local {
                path: source.to_string(),
            };
        }
        parse_git(source).unwrap_or_else(|| PackageSource::Local {
            path: source.to_string(),
        })
    }

    /// Versioned npm specs and git refs are pinned.
    pub fn pinned(&self) -> bool {
        match self {
            PackageSource::Npm { pinned, .. } => *pinned,
            PackageSource::Git { git_ref, .. } => git_ref.is_some(),
            PackageSource::Local { .. } => false,
        }
    }
}

/// `name` and optional version of an npm spec (`@scope/name@1.0` → `@scope/name`, `1.0`).
pub fn split_npm_spec(spec: &str) -> (String, Option<String>) {
    let search_from = usize::from(spec.starts_with('@'));
    match spec[search_from..].find('@').map(|i| i + search_from) {
        Some(at) if at + 1 < spec.len() && at > search_from => {
            (spec[..at].to_string(), Some(spec[at + 1..].to_string()))
        }
        Some(_) => (spec.to_string(), None),
        None => (spec.to_string(), None),
    }
}

/// pi's rule: everything except the known remote prefixes is a local path.
fn is_local_path(value: &str) -> bool {
    let t = value.trim();
    !["npm:", "git:", "github:", "http:", "https:", "ssh:"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// Splits a trailing `@ref` off the repository part of `url`.
fn split_ref(url: &str) -> (String, Option<String>) {
    let split_path = |path: &str| -> Option<(String, String)> {
        let at = path.find('@')?;
        let (repo, git_ref) = (&path[..at], &path[at + 1..]);
        (!repo.is_empty() && !git_ref.is_empty()).then(|| (repo.to_string(), git_ref.to_string()))
    };
    if let Some((host, path)) = scp_like(url) {
        return match split_path(path) {
            Some((repo, r)) => (format!("git@{host}:{repo}"), Some(r)),
            None => (url.to_string(), None),
        };
    }
    if let Some(scheme_end) = url.find("://") {
        let after = &url[scheme_end + 3..];
        let (authority, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        let path = path.trim_start_matches('/');
        return match split_path(path) {
            Some((repo, r)) => (
                format!("{}{authority}/{repo}", &url[..scheme_end + 3])
                    .trim_end_matches('/')
                    .to_string(),
                Some(r),
            ),
            None => (url.to_string(), None),
        };
    }
    let Some(slash) = url.find('/') else {
        return (url.to_string(), None);
    };
    match split_path(&url[slash + 1..]) {
        Some((repo, r)) => (format!("{}/{repo}", &url[..slash]), Some(r)),
        None => (url.to_string(), None),
    }
}

/// `git@host:path` → (`host`, `path`).
fn scp_like(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("git@")?;
    let colon = rest.find(':')?;
    let (host, path) = (&rest[..colon], &rest[colon + 1..]);
    (!host.is_empty() && !path.is_empty()).then_some((host, path))
}

/// Host name and path of `scheme://[user@]host[:port]/path`.
fn url_host_and_path(url: &str) -> Option<(String, String)> {
    let after = &url[url.find("://")? + 3..];
    let (authority, path) = match after.find('/') {
        Some(i) => (&after[..i], &after[i..]),
        None => (after, ""),
    };
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let host = match host_port.rfind(':') {
        Some(i) if !host_port.ends_with(']') => &host_port[..i],
        _ => host_port,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), path.to_string()))
}

fn has_protocol(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    ["https://", "http://", "ssh://", "git://"]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// A git source: with `git:` any shorthand, without it only protocol URLs.
fn parse_git(source: &str) -> Option<PackageSource> {
    let trimmed = source.trim();
    let (has_prefix, url) = match trimmed.strip_prefix("git:") {
        Some(rest) => (true, rest.trim()),
        None => (false, trimmed),
    };
    if !has_prefix && !has_protocol(url) {
        return None;
    }
    let (repo_no_ref, git_ref) = split_ref(url);
    let (mut repo, host, path) = if let Some((host, path)) = scp_like(&repo_no_ref) {
        (repo_no_ref.clone(), host.to_string(), path.to_string())
    } else if has_protocol(&repo_no_ref) {
        let (host, path) = url_host_and_path(&repo_no_ref)?;
        (repo_no_ref.clone(), host, path)
    } else {
        let slash = repo_no_ref.find('/')?;
        let host = &repo_no_ref[..slash];
        if !host.contains('.') && host != "localhost" {
            return None;
        }
        (
            format!("https://{repo_no_ref}"),
            host.to_string(),
            repo_no_ref[slash + 1..].to_string(),
        )
    };
    let path = path.trim_start_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).to_string();
    if host.is_empty() || path.split('/').filter(|s| !s.is_empty()).count() < 2 {
        return None;
    }
    if repo.ends_with('/') {
        repo.pop();
    }
    Some(PackageSource::Git {
        repo,
        host,
        path,
        git_ref,
    })
}

/// `~` and `~/x` expand to `$HOME`; anything else is resolved against `base`.
pub fn resolve_from(input: &str, base: &Path) -> PathBuf {
    let joined = base.join(crate::util::home::expand_tilde(input.trim()));
    normalize(&joined)
}

/// Lexically removes `.` and `..` components (like Node's `path.resolve`).
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `path` relative to `base` (`..` steps where needed), like Node's `path.relative`.
pub fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let p: Vec<_> = path.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c.as_os_str());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(repo: &str, host: &str, path: &str, r: Option<&str>) -> PackageSource {
        PackageSource::Git {
            repo: repo.into(),
            host: host.into(),
            path: path.into(),
            git_ref: r.map(String::from),
        }
    }

    #[test]
    fn parses_npm_specs() {
        assert_eq!(
            PackageSource::parse("npm:@foo/bar@1.0.0"),
            PackageSource::Npm {
                spec: "@foo/bar@1.0.0".into(),
                name: "@foo/bar".into(),
                pinned: true
            }
        );
        assert_eq!(
            PackageSource::parse("npm:pkg"),
            PackageSource::Npm {
                spec: "pkg".into(),
                name: "pkg".into(),
                pinned: false
            }
        );
        assert_eq!(split_npm_spec("@scope/x"), ("@scope/x".into(), None));
    }

    #[test]
    fn parses_git_shorthands_and_urls() {
        assert_eq!(
            PackageSource::parse("git:github.com/user/repo@v1"),
            git(
                "https://github.com/user/repo",
                "github.com",
                "user/repo",
                Some("v1")
            )
        );
        assert_eq!(
            PackageSource::parse("git:git@github.com:user/repo.git"),
            git(
                "git@github.com:user/repo.git",
                "github.com",
                "user/repo",
                None
            )
        );
        assert_eq!(
            PackageSource::parse("https://github.com/user/repo"),
            git(
                "https://github.com/user/repo",
                "github.com",
                "user/repo",
                None
            )
        );
        assert_eq!(
            PackageSource::parse("ssh://git@example.com:2222/team/tools@main"),
            git(
                "ssh://git@example.com:2222/team/tools",
                "example.com",
                "team/tools",
                Some("main")
            )
        );
    }

    #[test]
    fn everything_else_is_local() {
        for s in [
            "./pkg",
            "/abs/pkg",
            "github:user/repo",
            "git:nohost/x",
            "https://h/only",
        ] {
            assert!(
                matches!(PackageSource::parse(s), PackageSource::Local { .. }),
                "{s}"
            );
        }
    }

    #[test]
    fn relative_paths_walk_up_when_needed() {
        assert_eq!(
            relative_to(Path::new("/a/b/c"), Path::new("/a/x")),
            PathBuf::from("../b/c")
        );
        assert_eq!(
            relative_to(Path::new("/a"), Path::new("/a")),
            PathBuf::new()
        );
        assert_eq!(
            resolve_from("../p/./q", Path::new("/a/b")),
            PathBuf::from("/a/p/q")
        );
    }
}
