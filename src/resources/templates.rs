//! Prompt templates: `*.md` files in `.pi/prompts/` and `<agentDir>/prompts/` (not recursive) or
//! named with `--prompt-template`. `/name args` becomes the template body with `$1`…`$N`,
//! `${@:N}`, `${@:N:L}`, `$ARGUMENTS` and `$@` substituted, in that order.

use std::path::{Path, PathBuf};

use super::frontmatter;
use super::trust::ProjectScope;
use crate::util::sort;

#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// The command name: the file name without `.md`.
    pub name: String,
    /// Front matter `description`, else the first non-empty body line (60 chars + `...`).
    pub description: String,
    pub argument_hint: Option<String>,
    /// The body without front matter.
    pub content: String,
    pub file_path: PathBuf,
}

pub struct TemplateSources<'a> {
    pub agent_dir: &'a Path,
    pub cwd: &'a Path,
    /// `--prompt-template` paths, loaded even with `--no-prompt-templates`.
    pub paths: &'a [String],
    /// `false` with `--no-prompt-templates`.
    pub discover: bool,
}

#[derive(Debug, Default)]
pub struct LoadedTemplates {
    pub templates: Vec<Template>,
    pub warnings: Vec<String>,
    pub skipped: Vec<PathBuf>,
}

pub fn load_file(path: &Path) -> Result<(Template, Option<String>), String> {
    let text =
        crate::util::files::read_limited_string(path, crate::util::files::Limit::PROMPT_RESOURCE)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    let fm = frontmatter::parse(&text);
    let warning = fm
        .error
        .as_ref()
        .map(|e| format!("{}: could not parse frontmatter: {e}", path.display()));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let name = name.strip_suffix(".md").unwrap_or(&name).to_string();
    let mut description = fm.str("description").unwrap_or("").to_string();
    if description.is_empty() {
        if let Some(first) = fm.body.split('\n').find(|l| !l.trim().is_empty()) {
            description = first.chars().take(60).collect();
            if first.chars().count() > 60 {
                description.push_str("...");
            }
        }
    }
    let template = Template {
        name,
        description,
        argument_hint: fm
            .str("argument-hint")
            .filter(|s| !s.is_empty())
            .map(String::from),
        content: fm.body,
        file_path: path.to_path_buf(),
    };
    Ok((template, warning))
}

/// The `*.md` files directly in `dir`, sorted by name.
fn md_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        // Not only regular files: a FIFO or a device named *.md is refused with a warning
        // when it is read, never passed over quietly.
        .filter(|p| p.exists() && !p.is_dir() && p.extension().is_some_and(|e| e == "md"))
        .collect();
    sort::sort(&mut out);
    out
}

/// Loads templates: project `.pi/prompts`, then `<agentDir>/prompts`, then explicit paths;
/// the first template with a name wins, later ones are reported.
pub fn load(src: &TemplateSources, scope: &ProjectScope) -> LoadedTemplates {
    let mut out = LoadedTemplates::default();
    let mut files = Vec::new();
    if src.discover {
        let project = md_files(&src.cwd.join(".pi").join("prompts"));
        if scope.allows(src.cwd) {
            files.extend(project);
        } else {
            out.skipped.extend(project);
        }
        files.extend(md_files(&src.agent_dir.join("prompts")));
    }
    for p in src.paths {
        let path = super::expand_tilde(p.trim());
        let path = if path.is_absolute() {
            path
        } else {
            src.cwd.join(path)
        };
        if path.is_dir() {
            files.extend(md_files(&path));
        } else if path.exists() && path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        } else if !path.exists() {
            out.warnings.push(format!(
                "{}: prompt template path does not exist",
                path.display()
            ));
        }
    }
    let mut collisions = Vec::new();
    for f in files {
        match load_file(&f) {
            Ok((t, warning)) => {
                out.warnings.extend(warning);
                if let Some(winner) = out.templates.iter().find(|w| w.name == t.name) {
                    collisions.push(format!(
                        "{}: prompt template name \"/{}\" already taken by {}; skipped",
                        f.display(),
                        t.name,
                        winner.file_path.display()
                    ));
                } else {
                    out.templates.push(t);
                }
            }
            Err(e) => out.warnings.push(e),
        }
    }
    out.warnings.extend(collisions);
    out
}

/// Splits arguments like a shell, minus escapes: spaces and tabs separate, `'…'` and `"…"`
/// group (quotes removed).
pub fn parse_args(s: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ' ' || c == '\t' => {
                if !cur.is_empty() {
                    args.push(std::mem::take(&mut cur));
                }
            }
            None => cur.push(c),
        }
    }
    if !cur.is_empty() {
        args.push(cur);
    }
    args
}

/// The number of ASCII digits at the start of `s`.
fn digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// Substitutes the argument placeholders in `content` in one left-to-right pass, as pi 1.x
/// does, so argument values are never rescanned: `${N:-default}` and `${@:-default}` (also
/// `${ARGUMENTS:-default}`; the default when the value is empty), `${@:N}` and `${@:N:L}`
/// (1-based; 0 counts as 1), `$ARGUMENTS`, `$@` and `$N` (missing → empty). Anything else
/// stays as written.
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        match placeholder(after, args, &all) {
            Some((value, used)) => {
                out.push_str(&value);
                rest = &after[used..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The value of the placeholder starting right after a `$` in `s`, and how many bytes of `s`
/// it spans; `None` when no placeholder starts there.
fn placeholder(s: &str, args: &[String], all: &str) -> Option<(String, usize)> {
    let positional = |number: &str| {
        let index: usize = number.parse().unwrap_or(usize::MAX);
        index
            .checked_sub(1)
            .and_then(|i| args.get(i))
            .map_or("", String::as_str)
    };
    let Some(inner) = s.strip_prefix('{') else {
        // `$ARGUMENTS`, `$@`, `$N`.
        if s.starts_with("ARGUMENTS") {
            return Some((all.to_string(), "ARGUMENTS".len()));
        }
        if s.starts_with('@') {
            return Some((all.to_string(), 1));
        }
        let n = digits(s);
        return (n > 0).then(|| (positional(&s[..n]).to_string(), n));
    };
    // `${N:-default}`, `${@:-default}`, `${ARGUMENTS:-default}`: the default runs to the
    // first `}` and stands in for an empty value.
    let n = digits(inner);
    let target = if n > 0 {
        Some((positional(&inner[..n]), n))
    } else if inner.starts_with("ARGUMENTS:-") {
        Some((all, "ARGUMENTS".len()))
    } else if inner.starts_with("@:-") {
        Some((all, 1))
    } else {
        None
    };
    if let Some((value, target_len)) = target {
        let default = inner[target_len..].strip_prefix(":-")?;
        let close = default.find('}')?;
        let used = 1 + target_len + 2 + close + 1;
        let value = if value.is_empty() {
            &default[..close]
        } else {
            value
        };
        return Some((value.to_string(), used));
    }
    // `${@:N}` and `${@:N:L}`.
    let slice = inner.strip_prefix("@:")?;
    let n = digits(slice);
    if n == 0 {
        return None;
    }
    let start: usize = slice[..n].parse().unwrap_or(usize::MAX);
    let mut end = n;
    let mut len = None;
    if let Some(more) = slice[n..].strip_prefix(':') {
        let m = digits(more);
        if m == 0 {
            return None;
        }
        len = Some(more[..m].parse::<usize>().unwrap_or(usize::MAX));
        end += 1 + m;
    }
    if !slice[end..].starts_with('}') {
        return None;
    }
    let from = start.saturating_sub(1).min(args.len());
    let to = len.map_or(args.len(), |l| from.saturating_add(l).min(args.len()));
    Some((args[from..to].join(" "), 1 + 2 + end + 1))
}

/// Expands `/name args` when `name` is a template; otherwise returns `text` unchanged.
pub fn expand(text: &str, templates: &[Template]) -> String {
    let Some(rest) = text.strip_prefix('/') else {
        return text.to_string();
    };
    let (name, args) = match rest.find(' ') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    match templates.iter().find(|t| t.name == name) {
        Some(t) => substitute_args(&t.content, &parse_args(args)),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_front_matter_is_named_with_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("review.md");
        std::fs::write(&path, "---\ndescription: Review: the diff\n---\nReview $1").unwrap();
        let (template, warning) = load_file(&path).unwrap();
        let warning = warning.expect("a warning");
        assert!(
            warning.starts_with(&format!(
                "{}: could not parse frontmatter: line 1:",
                path.display()
            )),
            "{warning}"
        );
        assert_eq!(template.content, "Review $1", "the body still works");
        std::fs::write(&path, "---\ndescription: fine\n").unwrap();
        let (_, warning) = load_file(&path).unwrap();
        assert!(warning.unwrap().contains("no closing"));
    }
}
