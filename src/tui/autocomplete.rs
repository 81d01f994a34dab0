//! Autocomplete for the editor: a provider trait and pi's built-in provider, which
//! completes slash commands (with descriptions and per-command argument completers),
//! `@` file references (fuzzy, over the files under the working directory) and plain paths
//! (`./src/ma` + Tab, directory listing by prefix).
//!
//! Providers are synchronous and called on the UI thread; the file walk is bounded so a
//! huge tree cannot stall typing. Columns are byte offsets into the line.

use std::path::PathBuf;
use std::sync::Arc;

use super::fuzzy::{fuzzy_filter, fuzzy_match};
use crate::util::sort;

/// One entry of the popup: `value` is inserted, `label` shown, `description` dimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutocompleteItem {
    pub value: String,
    pub label: String,
    pub description: Option<String>,
}

impl AutocompleteItem {
    pub fn new(value: impl Into<String>, label: impl Into<String>) -> Self {
        AutocompleteItem {
            value: value.into(),
            label: label.into(),
            description: None,
        }
    }
}

/// Items for the text before the cursor; `prefix` is the part a completion replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestions {
    pub items: Vec<AutocompleteItem>,
    pub prefix: String,
}

/// The editor content after a completion was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub lines: Vec<String>,
    pub cursor_line: usize,
    pub cursor_col: usize,
}

/// Source of completions. `force` means the user pressed Tab (complete paths anywhere).
pub trait AutocompleteProvider {
    fn suggestions(
        &self,
        lines: &[String],
        line: usize,
        col: usize,
        force: bool,
    ) -> Option<Suggestions>;

    fn apply(
        &self,
        lines: &[String],
        line: usize,
        col: usize,
        item: &AutocompleteItem,
        prefix: &str,
    ) -> Completion {
        apply_completion(lines, line, col, item, prefix)
    }

    /// Whether Tab should try file completion here (not inside a bare slash command).
    fn should_trigger_file_completion(&self, lines: &[String], line: usize, col: usize) -> bool {
        let before = before_cursor(lines, line, col).trim();
        !before.starts_with('/') || before.contains(' ')
    }
}

fn before_cursor(lines: &[String], line: usize, col: usize) -> &str {
    let text = lines.get(line).map_or("", String::as_str);
    text.get(..col.min(text.len())).unwrap_or(text)
}

/// Completes arguments of one slash command from the text after its name.
pub type ArgumentCompleter = Arc<dyn Fn(&str) -> Vec<AutocompleteItem> + Send + Sync>;

#[derive(Clone, Default)]
pub struct SlashCommand {
    pub name: String,
    pub description: Option<String>,
    pub argument_hint: Option<String>,
    pub arguments: Option<ArgumentCompleter>,
}

impl SlashCommand {
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        SlashCommand {
            name: name.into(),
            description: Some(description.into()),
            ..Self::default()
        }
    }
}

/// pi's provider: slash commands, `@` files, and paths.
pub struct CombinedProvider {
    pub commands: Vec<SlashCommand>,
    pub base_path: PathBuf,
}

const PATH_DELIMITERS: &[char] = &[' ', '\t', '"', '\'', '='];
/// Entries visited at most by one `@` search.
const WALK_LIMIT: usize = 20_000;

impl CombinedProvider {
    pub fn new(commands: Vec<SlashCommand>, base_path: impl Into<PathBuf>) -> Self {
        CombinedProvider {
            commands,
            base_path: base_path.into(),
        }
    }

    fn command_suggestions(&self, before: &str) -> Option<Suggestions> {
        let rest = &before[1..];
        let Some(space) = rest.find(' ') else {
            let items: Vec<AutocompleteItem> = self
                .commands
                .iter()
                .map(|c| {
                    let desc = c.description.clone().unwrap_or_default();
                    let full = match (&c.argument_hint, desc.is_empty()) {
                        (Some(h), true) => h.clone(),
                        (Some(h), false) => format!("{h} — {desc}"),
                        (None, _) => desc,
                    };
                    AutocompleteItem {
                        value: c.name.clone(),
                        label: c.name.clone(),
                        description: Some(full).filter(|d| !d.is_empty()),
                    }
                })
                .collect();
            let items = fuzzy_filter(items, rest, |i| &i.value);
            return (!items.is_empty()).then(|| Suggestions {
                items,
                prefix: before.to_string(),
            });
        };
        let (name, args) = (&rest[..space], &rest[space + 1..]);
        let command = self.commands.iter().find(|c| c.name == name)?;
        let items = (command.arguments.as_ref()?)(args);
        (!items.is_empty()).then(|| Suggestions {
            items,
            prefix: args.to_string(),
        })
    }

    /// `@query`: files and directories under the base path, best matches first.
    fn fuzzy_file_suggestions(&self, raw: &str, quoted: bool) -> Vec<AutocompleteItem> {
        let (base, query, display_base) = match raw.rfind('/') {
            Some(i) if self.resolve(&raw[..=i]).is_dir() => (
                self.resolve(&raw[..=i]),
                &raw[i + 1..],
                raw[..=i].to_string(),
            ),
            _ => (self.base_path.clone(), raw, String::new()),
        };
        let mut found: Vec<(i32, f64, String, bool)> = Vec::new();
        let walker = ignore::WalkBuilder::new(&base)
            .hidden(false)
            .follow_links(true)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for entry in walker.flatten().take(WALK_LIMIT) {
            let Ok(rel) = entry.path().strip_prefix(&base) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if rel.is_empty() {
                continue;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let name = rel.rsplit('/').next().unwrap_or(&rel);
            let (score, fuzzy) = if query.is_empty() {
                (1, 0.0)
            } else {
                let score = entry_score(&rel, name, query, is_dir);
                let m = fuzzy_match(query, name);
                let m = if m.matches {
                    m
                } else {
                    fuzzy_match(query, &rel)
                };
                if score == 0 && !m.matches {
                    continue;
                }
                (score, m.score)
            };
            found.push((score, fuzzy, rel, is_dir));
        }
        sort::sort_and_truncate_by(&mut found, 20, |a, b| {
            b.0.cmp(&a.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2))
        });
        found
            .into_iter()
            .map(|(_, _, rel, is_dir)| {
                let display = format!("{display_base}{rel}");
                let name = rel.rsplit('/').next().unwrap_or(&rel).to_string();
                let path = if is_dir {
                    format!("{display}/")
                } else {
                    display.clone()
                };
                AutocompleteItem {
                    value: completion_value(&path, true, quoted),
                    label: if is_dir { format!("{name}/") } else { name },
                    description: Some(display),
                }
            })
            .collect()
    }

    fn resolve(&self, p: &str) -> PathBuf {
        self.base_path.join(crate::util::home::expand_tilde(p))
    }

    /// Directory entries starting with the last path component (Tab on `src/ma`).
    fn file_suggestions(&self, prefix: &str) -> Vec<AutocompleteItem> {
        let (raw, at, quoted) = parse_path_prefix(prefix);
        let (dir_part, name_part) = match raw.rfind('/') {
            Some(i) => (&raw[..=i], &raw[i + 1..]),
            None if raw == "~" => ("~/", ""),
            None => ("", raw),
        };
        let dir = if dir_part.is_empty() {
            self.base_path.clone()
        } else {
            self.resolve(dir_part)
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let lower = name_part.to_lowercase();
        let mut items: Vec<(bool, AutocompleteItem)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if !name.to_lowercase().starts_with(&lower) {
                    return None;
                }
                let is_dir = std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir());
                let shown_dir = if raw == "~" { "~/" } else { dir_part };
                let path = format!("{shown_dir}{name}{}", if is_dir { "/" } else { "" });
                let label = format!("{name}{}", if is_dir { "/" } else { "" });
                let item = AutocompleteItem::new(completion_value(&path, at, quoted), label);
                Some((is_dir, item))
            })
            .collect();
        sort::sort_by(&mut items, |a, b| {
            b.0.cmp(&a.0).then_with(|| a.1.label.cmp(&b.1.label))
        });
        items.into_iter().map(|(_, i)| i).collect()
    }
}

fn entry_score(path: &str, name: &str, query: &str, is_dir: bool) -> i32 {
    let (name, query, path) = (
        name.to_lowercase(),
        query.to_lowercase(),
        path.to_lowercase(),
    );
    let score = if name == query {
        100
    } else if name.starts_with(&query) {
        80
    } else if name.contains(&query) {
        50
    } else if path.contains(&query) {
        30
    } else {
        0
    };
    if is_dir && score > 0 {
        score + 10
    } else {
        score
    }
}

/// Splits `@"`, `"` and `@` off a path prefix: (raw path, is @, is quoted).
fn parse_path_prefix(prefix: &str) -> (&str, bool, bool) {
    if let Some(r) = prefix.strip_prefix("@\"") {
        (r, true, true)
    } else if let Some(r) = prefix.strip_prefix('"') {
        (r, false, true)
    } else if let Some(r) = prefix.strip_prefix('@') {
        (r, true, false)
    } else {
        (prefix, false, false)
    }
}

/// Paths with spaces are quoted; `@` references keep their `@`.
fn completion_value(path: &str, at: bool, quoted: bool) -> String {
    let at = if at { "@" } else { "" };
    if quoted || path.contains(' ') {
        format!("{at}\"{path}\"")
    } else {
        format!("{at}{path}")
    }
}

fn last_delimiter(text: &str) -> Option<usize> {
    text.rfind(PATH_DELIMITERS)
}

/// Start of an unclosed quoted token (`"foo` or `@"foo`) at the end of `text`.
fn quoted_prefix(text: &str) -> Option<&str> {
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c == '"' {
            start = if start.is_some() { None } else { Some(i) };
        }
    }
    let q = start?;
    let token_start = |i: usize| i == 0 || text[..i].ends_with(PATH_DELIMITERS);
    if q > 0 && text[..q].ends_with('@') {
        return token_start(q - 1).then(|| &text[q - 1..]);
    }
    token_start(q).then(|| &text[q..])
}

fn at_prefix(text: &str) -> Option<&str> {
    if let Some(q) = quoted_prefix(text).filter(|q| q.starts_with("@\"")) {
        return Some(q);
    }
    let start = last_delimiter(text).map_or(0, |i| i + 1);
    text[start..].starts_with('@').then(|| &text[start..])
}

fn path_prefix(text: &str, force: bool) -> Option<&str> {
    if let Some(q) = quoted_prefix(text) {
        return Some(q);
    }
    let prefix = &text[last_delimiter(text).map_or(0, |i| i + 1)..];
    if force
        || prefix.contains('/')
        || prefix.starts_with('.')
        || prefix.starts_with("~/")
        || (prefix.is_empty() && text.ends_with(' '))
    {
        return Some(prefix);
    }
    None
}

impl AutocompleteProvider for CombinedProvider {
    fn suggestions(
        &self,
        lines: &[String],
        line: usize,
        col: usize,
        force: bool,
    ) -> Option<Suggestions> {
        let before = before_cursor(lines, line, col);
        if let Some(prefix) = at_prefix(before) {
            let (raw, _, quoted) = parse_path_prefix(prefix);
            let items = self.fuzzy_file_suggestions(raw, quoted);
            return (!items.is_empty()).then(|| Suggestions {
                items,
                prefix: prefix.to_string(),
            });
        }
        if !force && before.starts_with('/') {
            return self.command_suggestions(before);
        }
        let prefix = path_prefix(before, force)?;
        let items = self.file_suggestions(prefix);
        (!items.is_empty()).then(|| Suggestions {
            items,
            prefix: prefix.to_string(),
        })
    }
}

/// Replaces `prefix` before the cursor with the item: a slash command gets a trailing
/// space, a file reference a space unless it is a directory (so Tab can continue).
pub fn apply_completion(
    lines: &[String],
    line: usize,
    col: usize,
    item: &AutocompleteItem,
    prefix: &str,
) -> Completion {
    let current = lines.get(line).map_or("", String::as_str);
    let col = col.min(current.len());
    let start = col.saturating_sub(prefix.len());
    let before = current.get(..start).unwrap_or("");
    let mut after = current.get(col..).unwrap_or("");
    let quoted = prefix.starts_with('"') || prefix.starts_with("@\"");
    if quoted && item.value.ends_with('"') && after.starts_with('"') {
        after = &after[1..];
    }
    let is_dir = item.label.ends_with('/');
    let closing_quote = usize::from(is_dir && item.value.ends_with('"'));
    let (new_line, cursor) =
        if prefix.starts_with('/') && before.trim().is_empty() && !prefix[1..].contains('/') {
            (
                format!("{before}/{} {after}", item.value),
                before.len() + item.value.len() + 2,
            )
        } else if prefix.starts_with('@') {
            let suffix = if is_dir { "" } else { " " };
            (
                format!("{before}{}{suffix}{after}", item.value),
                before.len() + item.value.len() - closing_quote + suffix.len(),
            )
        } else {
            (
                format!("{before}{}{after}", item.value),
                before.len() + item.value.len() - closing_quote,
            )
        };
    let mut lines = lines.to_vec();
    if let Some(l) = lines.get_mut(line) {
        *l = new_line;
    }
    Completion {
        lines,
        cursor_line: line,
        cursor_col: cursor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn provider(dir: &Path) -> CombinedProvider {
        CombinedProvider::new(
            vec![
                SlashCommand::new("model", "Select model"),
                SlashCommand::new("settings", "Open settings"),
                SlashCommand::new("session", "Show session info"),
            ],
            dir,
        )
    }

    fn lines(s: &str) -> Vec<String> {
        vec![s.to_string()]
    }

    #[test]
    fn slash_commands_filter_fuzzily_and_complete_with_a_space() {
        let dir = tempfile::tempdir().unwrap();
        let p = provider(dir.path());
        let s = p.suggestions(&lines("/se"), 0, 3, false).unwrap();
        let values: Vec<&str> = s.items.iter().map(|i| i.value.as_str()).collect();
        assert_eq!(values, ["settings", "session"]);
        assert_eq!(s.items[0].description.as_deref(), Some("Open settings"));
        let done = p.apply(&lines("/se"), 0, 3, &s.items[1], &s.prefix);
        assert_eq!(done.lines, lines("/session "));
        assert_eq!(done.cursor_col, 9);
        assert!(p.suggestions(&lines("/zzz"), 0, 4, false).is_none());
    }

    #[test]
    fn at_references_find_files_fuzzily() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/tui")).unwrap();
        std::fs::write(dir.path().join("src/tui/editor.rs"), "").unwrap();
        std::fs::write(dir.path().join("README.md"), "").unwrap();
        std::fs::write(dir.path().join("my notes.txt"), "").unwrap();
        let p = provider(dir.path());
        let s = p
            .suggestions(&lines("look at @edito"), 0, 14, false)
            .unwrap();
        assert_eq!(s.prefix, "@edito");
        assert_eq!(s.items[0].value, "@src/tui/editor.rs");
        let done = p.apply(&lines("look at @edito"), 0, 14, &s.items[0], &s.prefix);
        assert_eq!(done.lines, lines("look at @src/tui/editor.rs "));
        let s = p.suggestions(&lines("@notes"), 0, 6, false).unwrap();
        assert_eq!(s.items[0].value, "@\"my notes.txt\"");
        let s = p.suggestions(&lines("@tui"), 0, 4, false).unwrap();
        assert_eq!(s.items[0].value, "@src/tui/");
        let done = p.apply(&lines("@tui"), 0, 4, &s.items[0], &s.prefix);
        assert_eq!(done.lines, lines("@src/tui/"));
    }

    #[test]
    fn at_references_list_the_best_twenty_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for i in (0..30).rev() {
            std::fs::write(dir.path().join(format!("f{i:02}.txt")), "").unwrap();
        }
        let p = provider(dir.path());
        let s = p.suggestions(&lines("@f"), 0, 2, false).unwrap();
        let values: Vec<&str> = s.items.iter().map(|i| i.value.as_str()).collect();
        let expected: Vec<String> = (0..20).map(|i| format!("@f{i:02}.txt")).collect();
        assert_eq!(values, expected);
    }

    #[test]
    fn tab_completes_paths_by_prefix() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/map.rs"), "").unwrap();
        let p = provider(dir.path());
        let s = p.suggestions(&lines("cat src/ma"), 0, 10, true).unwrap();
        let values: Vec<&str> = s.items.iter().map(|i| i.value.as_str()).collect();
        assert_eq!(values, ["src/main.rs", "src/map.rs"]);
        let s = p.suggestions(&lines("sr"), 0, 2, true).unwrap();
        assert_eq!(s.items[0].value, "src/");
        assert!(!p.should_trigger_file_completion(&lines("/mod"), 0, 4));
    }
}
