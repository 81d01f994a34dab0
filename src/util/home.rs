//! The home directory in paths: `shorten_home` shows a path under `$HOME` as `~/…`, the one
//! rule for it, as pi's `shortenHomePath` has it.

use std::path::PathBuf;

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
}
