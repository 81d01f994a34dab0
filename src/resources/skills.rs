//! Skills: `SKILL.md` directories (and root-level `*.md` files in pi's own skill dirs) found in
//! the project and user locations or named with `--skill`, their front matter checked against
//! the Agent Skills rules (problems are warnings naming the file), the `<available_skills>` block
//! for the system prompt, and `/skill:name args` expansion.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::frontmatter;
use super::trust::ProjectScope;
use crate::util::sort;

const MAX_NAME_LEN: usize = 64;
const MAX_DESCRIPTION_LEN: usize = 1024;
const MAX_COMPATIBILITY_LEN: usize = 500;

#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The skill file (`SKILL.md` or a root `*.md`).
    pub file_path: PathBuf,
    /// The directory relative references resolve against.
    pub base_dir: PathBuf,
    /// Hidden from the system prompt; only `/skill:name` uses it.
    pub disable_model_invocation: bool,
}

/// Where to look.
pub struct SkillSources<'a> {
    pub agent_dir: &'a Path,
    pub cwd: &'a Path,
    /// `$HOME` (for `~/.agents/skills`); `None` skips it.
    pub home: Option<&'a Path>,
    /// `--skill` paths (files or directories), loaded even with `--no-skills`.
    pub paths: &'a [String],
    /// `false` with `--no-skills`.
    pub discover: bool,
}

#[derive(Debug, Default)]
pub struct LoadedSkills {
    pub skills: Vec<Skill>,
    /// `<path>: <problem>` lines.
    pub warnings: Vec<String>,
    /// Project skill files not loaded because the folder is not trusted.
    pub skipped: Vec<PathBuf>,
}

/// Lists candidate skill files under `root`: the `SKILL.md` of every directory that has one
/// (not descending further), plus root-level `*.md` files when `root_files` is set and the root
/// itself is not a skill. Hidden entries and `node_modules` are skipped; `.gitignore`,
/// `.ignore` and `.fdignore` are respected.
pub fn scan_dir(root: &Path, root_files: bool) -> Vec<PathBuf> {
    scan_dir_reporting(root, root_files, &mut Vec::new())
}

/// The path an error from the directory walk is about, if it names one.
fn error_path(e: &ignore::Error) -> Option<&Path> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}

/// [`scan_dir`], adding a warning for each `SKILL.md` that is there but cannot be a skill (a
/// directory of that name, a dangling link).
pub fn scan_dir_reporting(
    root: &Path,
    root_files: bool,
    warnings: &mut Vec<String>,
) -> Vec<PathBuf> {
    if !root.is_dir() {
        return Vec::new();
    }
    let walker = ignore::WalkBuilder::new(root)
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
    let mut skill_files = Vec::new();
    let mut root_md = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                if let Some(path) = error_path(&e).filter(|p| p.ends_with("SKILL.md")) {
                    warnings.push(format!("{}: cannot be read ({e}); skipped", path.display()));
                }
                continue;
            }
        };
        // Anything but a directory is a candidate: a FIFO or a link to a device is refused
        // with a warning when it is read, never passed over quietly.
        if entry.file_type().is_none_or(|t| t.is_dir()) {
            if entry.file_name() == "SKILL.md" {
                warnings.push(format!(
                    "{}: is a directory, not a skill file; skipped",
                    entry.path().display()
                ));
            }
            continue;
        }
        let path = entry.path();
        if entry.file_name() == "SKILL.md" {
            skill_files.push(path.to_path_buf());
        } else if root_files && entry.depth() == 1 && path.extension().is_some_and(|e| e == "md") {
            root_md.push(path.to_path_buf());
        }
    }
    let skill_dirs: HashSet<PathBuf> = skill_files
        .iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    let nested = |dir: &Path| {
        dir.ancestors()
            .skip(1)
            .take_while(|a| a.starts_with(root))
            .any(|a| skill_dirs.contains(a))
    };
    if skill_dirs.contains(root) {
        return vec![root.join("SKILL.md")];
    }
    // pi follows directory-entry order; we sort by path for a stable result.
    let mut out = root_md;
    out.extend(
        skill_files
            .into_iter()
            .filter(|p| p.parent().is_some_and(|d| !nested(d))),
    );
    sort::sort(&mut out);
    out
}

fn validate_name(name: &str, parent: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name != parent {
        errors.push(format!(
            "name \"{name}\" does not match parent directory \"{parent}\""
        ));
    }
    let len = name.chars().count();
    if len > MAX_NAME_LEN {
        errors.push(format!("name exceeds {MAX_NAME_LEN} characters ({len})"));
    }
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        errors.push(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)".into(),
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("name must not start or end with a hyphen".into());
    }
    if name.contains("--") {
        errors.push("name must not contain consecutive hyphens".into());
    }
    errors
}

/// Reads one skill file. Returns the skill (unless it has no description or cannot be read)
/// and its warnings.
pub fn load_skill_file(path: &Path) -> (Option<Skill>, Vec<String>) {
    let mut warnings = Vec::new();
    let warn = |w: &mut Vec<String>, m: &str| w.push(format!("{}: {m}", path.display()));
    let text = match crate::util::files::read_limited_string(
        path,
        crate::util::files::Limit::PROMPT_RESOURCE,
    ) {
        Ok(t) => t,
        Err(e) => {
            warn(&mut warnings, &e.to_string());
            return (None, warnings);
        }
    };
    let fm = frontmatter::parse(&text);
    if let Some(e) = &fm.error {
        warn(&mut warnings, &format!("could not parse frontmatter: {e}"));
        return (None, warnings);
    }
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let parent = base_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let description = fm.str("description").unwrap_or("").to_string();
    if description.trim().is_empty() {
        warn(&mut warnings, "description is required");
    } else if description.chars().count() > MAX_DESCRIPTION_LEN {
        warn(
            &mut warnings,
            &format!(
                "description exceeds {MAX_DESCRIPTION_LEN} characters ({})",
                description.chars().count()
            ),
        );
    }
    if let Some(c) = fm.str("compatibility") {
        let n = c.chars().count();
        if n > MAX_COMPATIBILITY_LEN {
            warn(
                &mut warnings,
                &format!("compatibility exceeds {MAX_COMPATIBILITY_LEN} characters ({n})"),
            );
        }
    }
    let name = fm
        .str("name")
        .filter(|n| !n.is_empty())
        .unwrap_or(&parent)
        .to_string();
    for e in validate_name(&name, &parent) {
        warn(&mut warnings, &e);
    }
    if description.trim().is_empty() {
        return (None, warnings);
    }
    let skill = Skill {
        name,
        description,
        file_path: path.to_path_buf(),
        base_dir,
        disable_model_invocation: fm.bool("disable-model-invocation") == Some(true),
    };
    (Some(skill), warnings)
}

/// `.agents/skills` in `cwd` and each ancestor up to the git root (or `/` outside a repo).
fn ancestor_agents_dirs(cwd: &Path) -> Vec<(PathBuf, PathBuf)> {
    let git_root = cwd.ancestors().find(|d| d.join(".git").exists());
    let mut out = Vec::new();
    for dir in cwd.ancestors() {
        out.push((dir.to_path_buf(), dir.join(".agents").join("skills")));
        if Some(dir) == git_root {
            break;
        }
    }
    out
}

fn resolve_user_path(p: &str, cwd: &Path) -> PathBuf {
    let p = p.trim();
    let expanded = super::expand_tilde(p);
    if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    }
}

/// Loads skills in pi's order — project `.pi/skills`, project `.agents/skills` (cwd up to the
/// git root), `<agentDir>/skills`, `~/.agents/skills`, then `--skill` paths — first name wins.
pub fn load(src: &SkillSources, scope: &ProjectScope) -> LoadedSkills {
    let mut out = LoadedSkills::default();
    let mut files: Vec<PathBuf> = Vec::new();
    if src.discover {
        let mut project: Vec<(PathBuf, PathBuf, bool)> = vec![(
            src.cwd.to_path_buf(),
            src.cwd.join(".pi").join("skills"),
            true,
        )];
        let user_agents = src.home.map(|h| h.join(".agents").join("skills"));
        for (origin, dir) in ancestor_agents_dirs(src.cwd) {
            if Some(&dir) != user_agents.as_ref() {
                project.push((origin, dir, false));
            }
        }
        for (origin, dir, root_files) in project {
            if scope.allows(&origin) {
                files.extend(scan_dir_reporting(&dir, root_files, &mut out.warnings));
            } else {
                out.skipped.extend(scan_dir(&dir, root_files));
            }
        }
        let user_skills = src.agent_dir.join("skills");
        files.extend(scan_dir_reporting(&user_skills, true, &mut out.warnings));
        if let Some(dir) = &user_agents {
            files.extend(scan_dir_reporting(dir, false, &mut out.warnings));
        }
    }
    let mut candidates = files;
    for p in src.paths {
        let path = resolve_user_path(p, src.cwd);
        if !path.exists() {
            out.warnings
                .push(format!("{}: skill path does not exist", path.display()));
        } else if path.is_dir() {
            candidates.extend(scan_dir_reporting(&path, true, &mut out.warnings));
        } else if path.extension().is_some_and(|e| e == "md") {
            candidates.push(path);
        } else {
            out.warnings.push(format!(
                "{}: skill path is not a markdown file",
                path.display()
            ));
        }
    }
    let mut seen_real: HashSet<PathBuf> = HashSet::new();
    let mut collisions = Vec::new();
    for file in candidates {
        let (skill, warnings) = load_skill_file(&file);
        out.warnings.extend(warnings);
        let Some(skill) = skill else { continue };
        let real = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
        if seen_real.contains(&real) {
            continue;
        }
        if let Some(winner) = out.skills.iter().find(|s| s.name == skill.name) {
            collisions.push(format!(
                "{}: skill name \"{}\" already taken by {}; skipped",
                file.display(),
                skill.name,
                winner.file_path.display()
            ));
            continue;
        }
        seen_real.insert(real);
        out.skills.push(skill);
    }
    out.warnings.extend(collisions);
    out
}

pub fn escape_xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The skills section of the system prompt (empty when no skill is visible to the model);
/// `reader` is the tool that loads a skill file (`read`, else `bash`).
pub fn format_for_prompt(skills: &[Skill], reader: &str) -> String {
    let visible: Vec<&Skill> = skills
        .iter()
        .filter(|s| !s.disable_model_invocation)
        .collect();
    if visible.is_empty() {
        return String::new();
    }
    let mut lines = vec![
        "\n\nSkills give you specialized instructions for particular kinds of tasks.".to_string(),
        if reader == "read" {
            "When a task fits a skill's description, load its file with the read tool first.".into()
        } else {
            "When a task fits a skill's description, load its file with bash first.".into()
        },
        "Relative paths inside a skill file are relative to the skill's directory (the folder holding the file); use the resulting absolute paths in tool calls.".into(),
        String::new(),
        "<available_skills>".into(),
    ];
    for s in visible {
        lines.push("  <skill>".into());
        lines.push(format!("    <name>{}</name>", escape_xml(&s.name)));
        lines.push(format!(
            "    <description>{}</description>",
            escape_xml(&s.description)
        ));
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&s.file_path.to_string_lossy())
        ));
        lines.push("  </skill>".into());
    }
    lines.push("</available_skills>".into());
    lines.join("\n")
}

/// Expands `/skill:name [args]` into the skill's body wrapped in a `<skill>` element, followed
/// by the arguments. Anything else — including an unknown skill or an unreadable file — is
/// returned unchanged.
pub fn expand_command(text: &str, skills: &[Skill]) -> String {
    let Some(rest) = text.strip_prefix("/skill:") else {
        return text.to_string();
    };
    let (name, args) = match rest.find(' ') {
        Some(i) => (&rest[..i], rest[i + 1..].trim()),
        None => (rest, ""),
    };
    let Some(skill) = skills.iter().find(|s| s.name == name) else {
        return text.to_string();
    };
    let Ok(content) = crate::util::files::read_limited_string(
        &skill.file_path,
        crate::util::files::Limit::PROMPT_RESOURCE,
    ) else {
        return text.to_string();
    };
    let body = frontmatter::strip(&content);
    let block = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.file_path.display(),
        skill.base_dir.display(),
        body.trim()
    );
    if args.is_empty() {
        block
    } else {
        format!("{block}\n\n{args}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_md_that_cannot_be_a_skill_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("odd/SKILL.md")).unwrap();
        std::fs::create_dir_all(root.join("gone")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere.md"), root.join("gone/SKILL.md")).unwrap();
        std::fs::create_dir_all(root.join("fine")).unwrap();
        std::fs::write(root.join("fine/SKILL.md"), "---\ndescription: d\n---\n").unwrap();
        let mut warnings = Vec::new();
        let found = scan_dir_reporting(root, true, &mut warnings);
        assert_eq!(found, [root.join("fine/SKILL.md")]);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        let dir_warning = format!("{}: is a directory", root.join("odd/SKILL.md").display());
        assert!(
            warnings.iter().any(|w| w.starts_with(&dir_warning)),
            "{warnings:?}"
        );
        let link = root.join("gone/SKILL.md").display().to_string();
        assert!(
            warnings.iter().any(|w| w.starts_with(&link)),
            "{warnings:?}"
        );
    }
}
