//! What one package directory contributes: the `pi` key of its `package.json` (paths and globs
//! per resource kind, with `!exclude`, `+force-include` and `-force-exclude` entries) or, without
//! a manifest, the conventional `extensions/`, `skills/`, `prompts/` and `themes/` directories;
//! then the per-package filters from settings narrow that down.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::source::{normalize, relative_to};
use super::ResourceKind;
use crate::util::sort;

/// A file found in a package and whether the filters leave it on.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub kind: ResourceKind,
    pub path: PathBuf,
    pub enabled: bool,
}

/// The `pi` object of `<root>/package.json`, if there is one.
fn read_manifest(root: &Path) -> Option<serde_json::Map<String, Value>> {
    let text = crate::util::files::read_limited_string(
        root.join("package.json"),
        crate::util::files::Limit::CONFIG,
    )
    .ok()?;
    match serde_json::from_str::<Value>(&text).ok()?.get("pi")? {
        Value::Object(m) => Some(m.clone()),
        _ => None,
    }
}

fn manifest_entries(
    manifest: &serde_json::Map<String, Value>,
    kind: ResourceKind,
) -> Option<Vec<String>> {
    let list = manifest.get(kind.key())?.as_array()?;
    Some(
        list.iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
    )
}

fn is_override(p: &str) -> bool {
    p.starts_with('!') || p.starts_with('+') || p.starts_with('-')
}

fn has_glob(p: &str) -> bool {
    p.contains('*') || p.contains('?')
}

/// Collects a package's resources; `filters` are the settings entry's per-kind lists
/// (`None` for the plain string form). Returns `None` when the directory has neither a
/// manifest nor any conventional directory (and no filters): it is then not a package.
pub fn collect_package(root: &Path, filters: Option<&super::Filters>) -> Option<Vec<Found>> {
    let manifest = read_manifest(root);
    let mut out = Vec::new();
    if filters.is_none() && manifest.is_none() {
        let mut any = false;
        for kind in ResourceKind::ALL {
            let dir = root.join(kind.key());
            if dir.exists() {
                any = true;
                out.extend(files_in_dir(&dir, kind).into_iter().map(|path| Found {
                    kind,
                    path,
                    enabled: true,
                }));
            }
        }
        return any.then_some(out);
    }
    for kind in ResourceKind::ALL {
        let user = filters.and_then(|f| f.get(kind));
        let declared = manifest.as_ref().and_then(|m| manifest_entries(m, kind));
        match user {
            Some(patterns) => {
                let all = manifest_or_convention_files(root, declared.as_deref(), kind);
                let enabled = if patterns.is_empty() {
                    HashSet::new()
                } else {
                    apply_patterns(&all, patterns, root)
                };
                out.extend(all.into_iter().map(|path| Found {
                    kind,
                    enabled: enabled.contains(&path),
                    path,
                }));
            }
            None => {
                let files = match (&declared, &manifest) {
                    (Some(entries), _) => {
                        let all = files_from_entries(entries, root, kind);
                        let overrides: Vec<String> =
                            entries.iter().filter(|e| is_override(e)).cloned().collect();
                        let on = apply_patterns(&all, &overrides, root);
                        all.into_iter().filter(|f| on.contains(f)).collect()
                    }
                    // A manifest that does not mention this kind contributes none of it.
                    (None, Some(_)) if filters.is_none() => Vec::new(),
                    (None, _) => files_in_dir(&root.join(kind.key()), kind),
                };
                out.extend(files.into_iter().map(|path| Found {
                    kind,
                    path,
                    enabled: true,
                }));
            }
        }
    }
    Some(out)
}

/// Everything of `kind` the manifest allows (its own `!`/`+`/`-` entries applied), or the
/// conventional directory's files without one.
fn manifest_or_convention_files(
    root: &Path,
    declared: Option<&[String]>,
    kind: ResourceKind,
) -> Vec<PathBuf> {
    match declared {
        Some(entries) if !entries.is_empty() => {
            let all = files_from_entries(entries, root, kind);
            let overrides: Vec<String> =
                entries.iter().filter(|e| is_override(e)).cloned().collect();
            if overrides.is_empty() {
                return all;
            }
            let on = apply_patterns(&all, &overrides, root);
            all.into_iter().filter(|f| on.contains(f)).collect()
        }
        _ => files_in_dir(&root.join(kind.key()), kind),
    }
}

/// Files named by manifest entries: plain paths as given, globs matched under `root`.
fn files_from_entries(entries: &[String], root: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for entry in entries.iter().filter(|e| !is_override(e)) {
        if has_glob(entry) {
            paths.extend(glob_under(root, entry));
        } else {
            paths.push(normalize(&root.join(entry)));
        }
    }
    files_from_paths(&paths, kind)
}

/// A file stands for itself; a directory for the resources found in it.
pub fn files_from_paths(paths: &[PathBuf], kind: ResourceKind) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() {
            out.push(p.clone());
        } else if p.is_dir() {
            out.extend(files_in_dir(p, kind));
        }
    }
    out
}

/// Paths under `root` (files and directories, hidden ones skipped) matching `pattern`.
fn glob_under(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let Some(matcher) = glob_matcher(pattern.trim_start_matches("./")) else {
        return Vec::new();
    };
    let enter_node_modules = pattern.trim_start_matches("./").starts_with("node_modules");
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let rel = relative_to(&path, root);
            if matcher.is_match(&rel) {
                out.push(path.clone());
            }
            if path.is_dir() && (name != "node_modules" || enter_node_modules) {
                stack.push(path);
            }
        }
    }
    sort::sort(&mut out);
    out
}

fn glob_matcher(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// The resource files of `kind` in `dir`: skills as pi's skill dirs are scanned (`SKILL.md`
/// folders and root `*.md`), extensions by their entry points, prompts and themes recursively
/// by extension. Hidden entries and `node_modules` are skipped; ignore files respected.
pub fn files_in_dir(dir: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    match kind {
        ResourceKind::Skills => crate::resources::skills::scan_dir(dir, true),
        ResourceKind::Extensions => extension_entries(dir),
        ResourceKind::Prompts => walk_files(dir, "md"),
        ResourceKind::Themes => walk_files(dir, "json"),
    }
}

fn walk_files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    if !dir.is_dir() {
        return Vec::new();
    }
    let walker = ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .hidden(true)
        .ignore(true)
        .git_ignore(true)
        .require_git(false)
        .parents(false)
        .add_custom_ignore_filename(".fdignore")
        .follow_links(true)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != "node_modules")
        .build();
    walker
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect()
}

/// Whether a file in an extensions directory is an extension: pi's `.ts` / `.js` modules (run
/// by the TypeScript compatibility host) or an executable speaking the extension protocol.
pub fn is_extension_file(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e == "ts" || e == "js") {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    false
}

/// The entry points a directory declares for itself: `package.json` `pi.extensions` paths
/// that exist, else `index.ts`, else `index.js`.
fn declared_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    if let Some(list) =
        read_manifest(dir).and_then(|m| manifest_entries(&m, ResourceKind::Extensions))
    {
        let found: Vec<PathBuf> = list
            .iter()
            .map(|e| normalize(&dir.join(e)))
            .filter(|p| p.exists())
            .collect();
        if !found.is_empty() {
            return Some(found);
        }
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.exists())
        .map(|p| vec![p])
}

/// Extensions in `dir`: its own declared entries, else each extension file directly in it and
/// each subdirectory's declared entries.
fn extension_entries(dir: &Path) -> Vec<PathBuf> {
    if !dir.is_dir() {
        return Vec::new();
    }
    if let Some(own) = declared_entries(dir) {
        return own;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            !n.starts_with('.') && n != "node_modules"
        })
        .map(|e| e.path())
        .collect();
    sort::sort(&mut paths);
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() && is_extension_file(&p) {
            out.push(p);
        } else if p.is_dir() {
            out.extend(declared_entries(&p).unwrap_or_default());
        }
    }
    out
}

/// Whether a glob pattern matches the file's path relative to `base`, its name, or its
/// absolute path; a `SKILL.md` also matches through its directory.
fn matches_any(file: &Path, patterns: &[&str], base: &Path) -> bool {
    let candidates = match_candidates(file, base);
    patterns
        .iter()
        .any(|p| glob_matcher(p).is_some_and(|m| candidates.iter().any(|c| m.is_match(c))))
}

fn match_candidates(file: &Path, base: &Path) -> Vec<PathBuf> {
    let mut c = vec![relative_to(file, base), file.to_path_buf()];
    if let Some(name) = file.file_name() {
        c.push(PathBuf::from(name));
    }
    if file.file_name().is_some_and(|n| n == "SKILL.md") {
        if let Some(dir) = file.parent() {
            c.push(relative_to(dir, base));
            c.push(dir.to_path_buf());
            if let Some(name) = dir.file_name() {
                c.push(PathBuf::from(name));
            }
        }
    }
    c
}

/// `+path` / `-path` compare exactly against the path relative to `base` or the absolute path
/// (for a `SKILL.md`, its directory too).
fn matches_exact(file: &Path, patterns: &[&str], base: &Path) -> bool {
    let mut candidates = vec![relative_to(file, base), file.to_path_buf()];
    if file.file_name().is_some_and(|n| n == "SKILL.md") {
        if let Some(dir) = file.parent() {
            candidates.push(relative_to(dir, base));
            candidates.push(dir.to_path_buf());
        }
    }
    patterns.iter().any(|p| {
        let p = Path::new(p.strip_prefix("./").unwrap_or(p));
        candidates.iter().any(|c| c == p)
    })
}

/// The subset of `all` that `patterns` enable: plain patterns include (all when there are
/// none), `!` excludes, `+` adds back exact paths, `-` removes exact paths last.
pub fn apply_patterns(all: &[PathBuf], patterns: &[String], base: &Path) -> HashSet<PathBuf> {
    let mut includes = Vec::new();
    let mut excludes = Vec::new();
    let mut force_in = Vec::new();
    let mut force_out = Vec::new();
    for p in patterns {
        if let Some(r) = p.strip_prefix('+') {
            force_in.push(r);
        } else if let Some(r) = p.strip_prefix('-') {
            force_out.push(r);
        } else if let Some(r) = p.strip_prefix('!') {
            excludes.push(r);
        } else {
            includes.push(p.as_str());
        }
    }
    all.iter()
        .filter(|f| {
            let mut on = includes.is_empty() || matches_any(f, &includes, base);
            if on && !excludes.is_empty() && matches_any(f, &excludes, base) {
                on = false;
            }
            if !on && matches_exact(f, &force_in, base) {
                on = true;
            }
            on && !matches_exact(f, &force_out, base)
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_include_exclude_and_force() {
        let base = Path::new("/pkg");
        let all: Vec<PathBuf> = ["/pkg/ext/a.ts", "/pkg/ext/legacy.ts", "/pkg/ext/sub/b.ts"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let on = |p: &[&str]| {
            let pats: Vec<String> = p.iter().map(|s| s.to_string()).collect();
            let mut v: Vec<PathBuf> = apply_patterns(&all, &pats, base).into_iter().collect();
            sort::sort(&mut v);
            v
        };
        assert_eq!(on(&["ext/*.ts", "!ext/legacy.ts"]), vec![all[0].clone()]);
        assert_eq!(on(&["!*.ts", "+ext/sub/b.ts"]), vec![all[2].clone()]);
        assert_eq!(on(&["-./ext/a.ts"]), vec![all[1].clone(), all[2].clone()]);
        assert_eq!(on(&["legacy.ts"]), vec![all[1].clone()]);
    }

    #[test]
    fn skill_files_match_through_their_directory() {
        let base = Path::new("/pkg");
        let all = vec![PathBuf::from("/pkg/skills/lint/SKILL.md")];
        let set = apply_patterns(&all, &["-skills/lint".into()], base);
        assert!(set.is_empty());
        let set = apply_patterns(&all, &["lint".into()], base);
        assert_eq!(set.len(), 1);
    }
}
