//! Context files and the `SYSTEM.md` / `APPEND_SYSTEM.md` overrides. One context file per
//! directory — `AGENTS.override.md` (pi 1.x) before `AGENTS.md` before `CLAUDE.md` — from the
//! agent dir first, then every ancestor of the working directory from `/` down to the working
//! directory itself; the same path is never listed twice. Context files load whatever the
//! project-trust decision (pi: they are instructions, not code); only the `.pi/` prompt files
//! are trust-gated.

use std::path::{Path, PathBuf};

use super::trust::ProjectScope;

const CANDIDATES: [&str; 5] = [
    "AGENTS.override.md",
    "AGENTS.md",
    "AGENTS.MD",
    "CLAUDE.md",
    "CLAUDE.MD",
];

#[derive(Debug, Clone, PartialEq)]
pub struct ContextFile {
    pub path: PathBuf,
    pub content: String,
}

/// The first candidate file in `dir`; a directory of that name is passed over, an unreadable
/// (or special, or too large) file is a warning and the next candidate is tried.
fn from_dir(dir: &Path, warnings: &mut Vec<String>) -> Option<ContextFile> {
    for name in CANDIDATES {
        let path = dir.join(name);
        // A directory of that name is not a context file; anything else that is there (a
        // FIFO, a link to a device) is read, and refused with a warning, never skipped quietly.
        match std::fs::metadata(&path) {
            Ok(m) if !m.is_dir() => {}
            _ => continue,
        }
        match crate::util::files::read_limited_string(
            &path,
            crate::util::files::Limit::CONTEXT_FILE,
        ) {
            Ok(content) => {
                let content = match content.strip_prefix('\u{feff}') {
                    Some(rest) => rest.to_string(),
                    None => content,
                };
                return Some(ContextFile { path, content });
            }
            Err(e) => warnings.push(format!("Could not read {}: {e}", path.display())),
        }
    }
    None
}

/// Context files in prompt order, and warnings about unreadable ones.
pub fn discover(agent_dir: &Path, cwd: &Path) -> (Vec<ContextFile>, Vec<String>) {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let mut seen = std::collections::HashSet::new();
    if let Some(f) = from_dir(agent_dir, &mut warnings) {
        seen.insert(f.path.clone());
        files.push(f);
    }
    let mut ancestors: Vec<&Path> = cwd.ancestors().collect();
    ancestors.reverse();
    for dir in ancestors {
        if let Some(f) = from_dir(dir, &mut warnings) {
            if seen.insert(f.path.clone()) {
                files.push(f);
            }
        }
    }
    (files, warnings)
}

/// Which prompt file applies: the project's `.pi/<name>` (when allowed) before
/// `<agentDir>/<name>`. Returns the chosen path and the project path skipped for trust.
pub fn find_prompt_file(
    name: &str,
    agent_dir: &Path,
    cwd: &Path,
    scope: &ProjectScope,
) -> (Option<PathBuf>, Option<PathBuf>) {
    let project = cwd.join(".pi").join(name);
    let mut skipped = None;
    if project.is_file() {
        if scope.allows(cwd) {
            return (Some(project), None);
        }
        skipped = Some(project);
    }
    let global = agent_dir.join(name);
    (global.is_file().then_some(global), skipped)
}

/// The `project_context` section of the system prompt: an introduction, then each file in a
/// `<project_instructions path="…">` element (1.x dropped the Markdown headings for tags).
pub fn render(files: &[ContextFile]) -> String {
    let mut parts = vec!["Instructions and conventions provided for this project:".to_string()];
    for f in files {
        parts.push(format!(
            "<project_instructions path=\"{}\">\n{}\n</project_instructions>",
            f.path.display(),
            f.content
        ));
    }
    parts.join("\n\n")
}
