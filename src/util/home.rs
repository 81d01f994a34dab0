//! The home directory in paths: `shorten_home` shows a path under `$HOME` as `~/…` and
//! `expand_tilde` turns a leading `~` back into `$HOME` — the one rule for each, as pi's
//! `shortenHomePath` and `normalizePath` have it.

use std::path::{Path, PathBuf};

/// `$HOME`, when set and not empty.
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// `path` with a leading `$HOME` shown as `~` (`~` alone for the home directory itself).
/// Only a whole path component counts: with `HOME=/home/al`, `/home/alice` stays as it is.
pub fn shorten_home(path: &str) -> String {
    match home_dir() {
        Some(home) => shorten_home_in(path, &home.to_string_lossy()),
        None => path.to_string(),
    }
}

/// [`shorten_home`] against an explicit home directory.
pub fn shorten_home_in(path: &str, home: &str) -> String {
    let home = home.trim_end_matches('/');
    if home.is_empty() {
        return path.to_string();
    }
    match path.strip_prefix(home) {
        Some("") | Some("/") => "~".to_string(),
        Some(rest) if rest.starts_with('/') => format!("~{rest}"),
        _ => path.to_string(),
    }
}

/// `path` with a leading `~` or `~/` replaced by `$HOME`; anything else (`~user`, `a/~`)
/// is returned unchanged, as is everything when `$HOME` is unset.
pub fn expand_tilde(path: &str) -> String {
    match home_dir() {
        Some(home) => expand_tilde_in(path, &home),
        None => path.to_string(),
    }
}

/// [`expand_tilde`] as a path.
pub fn expand_tilde_path(path: &str) -> PathBuf {
    PathBuf::from(expand_tilde(path))
}

/// [`expand_tilde`] against an explicit home directory.
pub fn expand_tilde_in(path: &str, home: &Path) -> String {
    let home = home.to_string_lossy();
    if path == "~" {
        return home.into_owned();
    }
    match path.strip_prefix("~/") {
        Some("") => home.into_owned(),
        Some(rest) => format!("{}/{rest}", home.trim_end_matches('/')),
        None => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortens_only_at_a_component_boundary() {
        assert_eq!(shorten_home_in("/home/alice", "/home/al"), "/home/alice");
        assert_eq!(
            shorten_home_in("/home/alice/x", "/home/al"),
            "/home/alice/x"
        );
        assert_eq!(shorten_home_in("/home/al", "/home/al"), "~");
        assert_eq!(shorten_home_in("/home/al/", "/home/al"), "~");
        assert_eq!(shorten_home_in("/home/al/src/x", "/home/al"), "~/src/x");
        assert_eq!(shorten_home_in("/home/al/src", "/home/al/"), "~/src");
        assert_eq!(
            shorten_home_in("relative/home/al", "/home/al"),
            "relative/home/al"
        );
        assert_eq!(shorten_home_in("/anything", ""), "/anything");
        assert_eq!(shorten_home_in("/anything", "/"), "/anything");
    }

    #[test]
    fn expands_a_bare_tilde_and_tilde_slash_only() {
        let home = Path::new("/home/al");
        assert_eq!(expand_tilde_in("~", home), "/home/al");
        assert_eq!(expand_tilde_in("~/", home), "/home/al");
        assert_eq!(expand_tilde_in("~/x/y", home), "/home/al/x/y");
        assert_eq!(expand_tilde_in("~/x", Path::new("/home/al/")), "/home/al/x");
        assert_eq!(expand_tilde_in("~bob/x", home), "~bob/x");
        assert_eq!(expand_tilde_in("~x", home), "~x");
        assert_eq!(expand_tilde_in("a/~/b", home), "a/~/b");
        assert_eq!(expand_tilde_in("/abs", home), "/abs");
    }
}
