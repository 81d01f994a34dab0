//! [`SessionPicker`] (`/resume`, `pi -r`): the sessions of the current folder (Tab: of all
//! folders), threaded by fork parent or sorted by recency or relevance (Ctrl+S), optionally
//! only named ones (Ctrl+N); each row shows the name or first message, the message count and
//! the age, plus the cwd when listing all folders and the file path on Ctrl+P. Typing
//! searches (see `session_search`). Ctrl+D (or Ctrl+Backspace on an empty search) deletes
//! the highlighted session's file after a confirmation; in `/resume` (not `pi -r`) Ctrl+R
//! renames it (the app writes the name).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::common::{border, fit, key_hint, key_text, one_line, position_line, scroll_window};
use super::session_search::{parse, score};
use crate::ai::types::now_ms;
use crate::session::dir::SessionInfo;
use crate::tui::components::input::Input;
use crate::tui::keybindings;
use crate::tui::text::{truncate_to_width, visible_width};
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};
use crate::util::sort;

const MAX_VISIBLE: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionOutcome {
    Selected(PathBuf),
    /// A new name for a session (the picker stays open and shows it).
    Renamed {
        path: PathBuf,
        name: String,
    },
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    Threaded,
    Recent,
    Relevance,
}

/// Loads every session of every folder (called the first time Tab asks for them).
pub type LoadAll = Box<dyn FnMut() -> Vec<SessionInfo>>;

struct Row {
    session: usize,
    prefix: String,
}

pub struct SessionPicker {
    theme: Arc<Theme>,
    current: Vec<SessionInfo>,
    all: Option<Vec<SessionInfo>>,
    load_all: LoadAll,
    all_scope: bool,
    sort: Sort,
    named_only: bool,
    show_path: bool,
    active_session: Option<PathBuf>,
    search: Input,
    rows: Vec<Row>,
    selected: usize,
    confirming_delete: Option<PathBuf>,
    /// Ctrl+R offers renaming (only in `/resume`).
    can_rename: bool,
    /// The session being renamed and the name typed so far.
    renaming: Option<(PathBuf, Input)>,
    status: Option<(Token, String)>,
    outcome: Option<SessionOutcome>,
}

/// `now`, `5m`, `3h`, `2d`, `1w`, `4mo`, `2y`.
pub fn relative_age(modified_ms: i64, now_ms: i64) -> String {
    let mins = (now_ms - modified_ms).max(0) / 60_000;
    let (hours, days) = (mins / 60, mins / 1440);
    match () {
        _ if mins < 1 => "now".into(),
        _ if mins < 60 => format!("{mins}m"),
        _ if hours < 24 => format!("{hours}h"),
        _ if days < 7 => format!("{days}d"),
        _ if days < 30 => format!("{}w", days / 7),
        _ if days < 365 => format!("{}mo", days / 30),
        _ => format!("{}y", days / 365),
    }
}

use crate::util::home::shorten_home;

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

impl SessionPicker {
    /// `current`: `list_sessions` of this folder; `load_all`: `list_all_sessions`;
    /// `active_session`: the open session's file (never deletable).
    pub fn new(
        current: Vec<SessionInfo>,
        load_all: LoadAll,
        active_session: Option<PathBuf>,
        theme: Arc<Theme>,
    ) -> SessionPicker {
        let mut s = SessionPicker {
            theme,
            current,
            all: None,
            load_all,
            all_scope: false,
            sort: Sort::Threaded,
            named_only: false,
            show_path: false,
            active_session,
            search: Input::new(),
            rows: Vec::new(),
            selected: 0,
            confirming_delete: None,
            can_rename: false,
            renaming: None,
            status: None,
            outcome: None,
        };
        s.refresh();
        s
    }

    /// Lets Ctrl+R rename the highlighted session (`/resume`).
    pub fn with_rename(mut self) -> SessionPicker {
        self.can_rename = true;
        self
    }

    pub fn take_outcome(&mut self) -> Option<SessionOutcome> {
        self.outcome.take()
    }

    fn sessions(&self) -> &[SessionInfo] {
        match (&self.all, self.all_scope) {
            (Some(all), true) => all,
            _ => &self.current,
        }
    }

    fn refresh(&mut self) {
        let sessions = self.sessions();
        let candidates: Vec<usize> = (0..sessions.len())
            .filter(|i| {
                !self.named_only
                    || sessions[*i]
                        .name
                        .as_deref()
                        .is_some_and(|n| !n.trim().is_empty())
            })
            .collect();
        let query = self.search.value().trim().to_string();
        self.rows = if query.is_empty() && self.sort == Sort::Threaded {
            threaded(sessions, &candidates)
        } else {
            let mut order: Vec<usize> = candidates;
            sort::sort_by(&mut order, |a, b| {
                sessions[*b].modified_ms.cmp(&sessions[*a].modified_ms)
            });
            if !query.is_empty() {
                let parsed = parse(&query);
                let mut scored: Vec<(f64, usize)> = order
                    .into_iter()
                    .filter_map(|i| score(&sessions[i], &parsed).map(|s| (s, i)))
                    .collect();
                if self.sort == Sort::Relevance {
                    sort::sort_by(&mut scored, |a, b| a.0.total_cmp(&b.0));
                }
                order = scored.into_iter().map(|(_, i)| i).collect();
            }
            order
                .into_iter()
                .map(|session| Row {
                    session,
                    prefix: String::new(),
                })
                .collect()
        };
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    fn selected_path(&self) -> Option<PathBuf> {
        self.rows
            .get(self.selected)
            .map(|r| self.sessions()[r.session].path.clone())
    }

    fn is_active(&self, path: &Path) -> bool {
        self.active_session
            .as_deref()
            .is_some_and(|a| same_file(a, path))
    }

    fn start_delete(&mut self) {
        let Some(path) = self.selected_path() else {
            return;
        };
        if self.is_active(&path) {
            self.status = Some((
                Token::Error,
                "Cannot delete the currently active session".into(),
            ));
        } else {
            self.confirming_delete = Some(path);
        }
    }

    fn delete(&mut self, path: &Path) {
        match std::fs::remove_file(path) {
            Ok(()) => {
                self.current.retain(|s| s.path != path);
                if let Some(all) = &mut self.all {
                    all.retain(|s| s.path != path);
                }
                self.status = Some((Token::Accent, "Session deleted".into()));
                self.refresh();
            }
            Err(e) => self.status = Some((Token::Error, format!("Failed to delete: {e}"))),
        }
    }

    fn start_rename(&mut self) {
        let Some(row) = self.rows.get(self.selected) else {
            return;
        };
        let session = &self.sessions()[row.session];
        let mut input = Input::new();
        input.set_value(session.name.as_deref().unwrap_or(""));
        input.set_focused(true);
        self.renaming = Some((session.path.clone(), input));
    }

    /// A key while renaming: Enter hands a non-empty name to the app, Escape goes back.
    fn rename_input(&mut self, event: &InputEvent) {
        let Some((path, input)) = &mut self.renaming else {
            return;
        };
        if event
            .key()
            .is_some_and(|k| keybindings::matches(k, "tui.select.cancel"))
        {
            self.renaming = None;
            return;
        }
        input.handle_input(event);
        let Some(value) = input.take_submitted() else {
            return;
        };
        let name = value.trim().to_string();
        if name.is_empty() {
            return;
        }
        let path = path.clone();
        for s in self.current.iter_mut().chain(self.all.iter_mut().flatten()) {
            if same_file(&s.path, &path) {
                s.name = Some(name.clone());
            }
        }
        self.renaming = None;
        self.refresh();
        self.outcome = Some(SessionOutcome::Renamed { path, name });
    }

    fn rename_panel(&mut self, width: usize) -> Vec<String> {
        let t = self.theme.clone();
        let Some((_, input)) = &mut self.renaming else {
            return Vec::new();
        };
        let hint = format!(
            "{} to save · {} to cancel",
            key_text("tui.select.confirm"),
            key_text("tui.select.cancel")
        );
        let mut lines = vec![format!(" {}", t.bold("Rename Session")), String::new()];
        lines.extend(input.render(width));
        lines.push(String::new());
        lines.push(format!(" {}", t.fg(Token::Muted, &hint)));
        lines
    }

    fn header(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let title = if self.all_scope {
            "Resume Session (All)"
        } else {
            "Resume Session (Current Folder)"
        };
        let scope = if self.all_scope {
            t.fg(Token::Muted, "○ Current Folder | ") + &t.fg(Token::Accent, "◉ All")
        } else {
            t.fg(Token::Accent, "◉ Current Folder") + &t.fg(Token::Muted, " | ○ All")
        };
        let sort = match self.sort {
            Sort::Threaded => "Threaded",
            Sort::Recent => "Recent",
            Sort::Relevance => "Fuzzy",
        };
        let name = if self.named_only { "Named" } else { "All" };
        let right = format!(
            "{scope}  {}{}  {}{}",
            t.fg(Token::Muted, "Name: "),
            t.fg(Token::Accent, name),
            t.fg(Token::Muted, "Sort: "),
            t.fg(Token::Accent, sort)
        );
        let right = truncate_to_width(&right, width, "", false);
        let left = truncate_to_width(
            &t.bold(title),
            width.saturating_sub(visible_width(&right) + 1),
            "",
            false,
        );
        let gap = width.saturating_sub(visible_width(&left) + visible_width(&right));
        let first = format!("{left}{}{right}", " ".repeat(gap));
        let sep = t.fg(Token::Muted, " · ");
        let (hint1, hint2) = if self.confirming_delete.is_some() {
            let text = format!(
                "Delete session? {} confirm · {} cancel",
                key_text("tui.select.confirm"),
                key_text("tui.select.cancel")
            );
            (t.fg(Token::Error, &text), String::new())
        } else if let Some((token, message)) = &self.status {
            (t.fg(*token, message), String::new())
        } else {
            let path_state = if self.show_path { "(on)" } else { "(off)" };
            (
                key_hint(t, "tui.input.tab", "scope")
                    + &sep
                    + &t.fg(Token::Muted, "re:<pattern> regex · \"phrase\" exact"),
                [
                    key_hint(t, "app.session.toggleSort", "sort"),
                    key_hint(t, "app.session.toggleNamedFilter", "named"),
                    key_hint(t, "app.session.delete", "delete"),
                    key_hint(t, "app.session.togglePath", &format!("path {path_state}")),
                ]
                .into_iter()
                .chain(
                    self.can_rename
                        .then(|| key_hint(t, "app.session.rename", "rename")),
                )
                .collect::<Vec<_>>()
                .join(&sep),
            )
        };
        vec![
            first,
            truncate_to_width(&hint1, width, "…", false),
            truncate_to_width(&hint2, width, "…", false),
        ]
    }

    fn list(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        if self.rows.is_empty() {
            let toggle = key_text("app.session.toggleNamedFilter");
            let message = match (self.named_only, self.all_scope) {
                (true, true) => format!("  No named sessions found. Press {toggle} to show all."),
                (true, false) => format!(
                    "  No named sessions in current folder. Press {toggle} to show all, or Tab to view all."
                ),
                (false, true) => "  No sessions found".into(),
                (false, false) => "  No sessions in current folder. Press Tab to view all.".into(),
            };
            return vec![t.fg(
                Token::Muted,
                &truncate_to_width(&message, width, "…", false),
            )];
        }
        let now = now_ms();
        let (start, end) = scroll_window(self.selected, self.rows.len(), MAX_VISIBLE);
        let mut lines = Vec::new();
        for r in start..end {
            let row = &self.rows[r];
            let session = &self.sessions()[row.session];
            let selected = r == self.selected;
            let mut right = format!(
                "{} {}",
                session.message_count,
                relative_age(session.modified_ms, now)
            );
            if self.all_scope && !session.cwd.is_empty() {
                right = format!("{} {right}", shorten_home(&session.cwd));
            }
            if self.show_path {
                right = format!("{} {right}", shorten_home(&session.path.to_string_lossy()));
            }
            let deleting = self.confirming_delete.as_deref() == Some(session.path.as_path());
            let named = session.name.is_some();
            let text = one_line(session.name.as_deref().unwrap_or(&session.first_message));
            let room =
                width.saturating_sub(2 + visible_width(&row.prefix) + visible_width(&right) + 2);
            let text = truncate_to_width(&text, room.max(10), "…", false);
            let colour = if deleting {
                Some(Token::Error)
            } else if self.is_active(&session.path) {
                Some(Token::Accent)
            } else if named {
                Some(Token::Warning)
            } else {
                None
            };
            let mut text = colour.map_or(text.clone(), |c| t.fg(c, &text));
            if selected {
                text = t.bold(&text);
            }
            let cursor = if selected {
                t.fg(Token::Accent, "› ")
            } else {
                "  ".into()
            };
            let left = format!("{cursor}{}{text}", t.fg(Token::Dim, &row.prefix));
            let gap = width
                .saturating_sub(visible_width(&left) + visible_width(&right))
                .max(1);
            let right = t.fg(if deleting { Token::Error } else { Token::Dim }, &right);
            let line = truncate_to_width(
                &format!("{left}{}{right}", " ".repeat(gap)),
                width,
                "",
                false,
            );
            lines.push(if selected {
                t.bg(Token::SelectedBg, &line)
            } else {
                line
            });
        }
        if start > 0 || end < self.rows.len() {
            lines.push(position_line(t, self.selected, self.rows.len()));
        }
        lines
    }
}

/// Sessions nested under the session they were forked from, newest first at every level.
fn threaded(sessions: &[SessionInfo], candidates: &[usize]) -> Vec<Row> {
    let mut forks = ForkParents::new(sessions, candidates);
    let mut children: HashMap<Option<usize>, Vec<usize>> = Default::default();
    for &i in candidates {
        children
            .entry(forks.parent_of(i).filter(|p| *p != i))
            .or_default()
            .push(i);
    }
    for list in children.values_mut() {
        sort::sort_by(list, |a, b| {
            sessions[*b].modified_ms.cmp(&sessions[*a].modified_ms)
        });
    }
    let mut rows = Vec::new();
    // (session, depth, ancestors-continue flags, is last)
    let mut stack: Vec<(usize, usize, Vec<bool>, bool)> = Vec::new();
    let roots = children.get(&None).cloned().unwrap_or_default();
    for (k, &r) in roots.iter().enumerate().rev() {
        stack.push((r, 0, Vec::new(), k + 1 == roots.len()));
    }
    let mut seen = HashSet::new();
    while let Some((i, depth, continues, last)) = stack.pop() {
        if !seen.insert(i) {
            continue;
        }
        let prefix = if depth == 0 {
            String::new()
        } else {
            let mut p: String = continues
                .iter()
                .map(|c| if *c { "│  " } else { "   " })
                .collect();
            p.push_str(if last { "└─ " } else { "├─ " });
            p
        };
        rows.push(Row { session: i, prefix });
        let kids = children.get(&Some(i)).cloned().unwrap_or_default();
        for (k, &c) in kids.iter().enumerate().rev() {
            let mut next = continues.clone();
            next.push(depth > 0 && !last);
            stack.push((c, depth + 1, next, k + 1 == kids.len()));
        }
    }
    rows
}

/// Finds the session each one was forked from among the candidates, with the candidates'
/// paths indexed once so threading stays linear in the number of sessions.
struct ForkParents<'a> {
    sessions: &'a [SessionInfo],
    candidates: &'a [usize],
    /// Each path's first position in `candidates` (owned keys, like `by_file`'s, so the
    /// binary holds one map type instead of two).
    by_path: HashMap<PathBuf, usize>,
    /// Each file's (canonical path's) first position in `candidates`, built on first need.
    by_file: Option<HashMap<PathBuf, usize>>,
}

impl<'a> ForkParents<'a> {
    fn new(sessions: &'a [SessionInfo], candidates: &'a [usize]) -> Self {
        let mut by_path = HashMap::with_capacity(candidates.len());
        for (position, &i) in candidates.iter().enumerate() {
            by_path.entry(sessions[i].path.clone()).or_insert(position);
        }
        ForkParents {
            sessions,
            candidates,
            by_path,
            by_file: None,
        }
    }

    /// The first candidate that is the parent's file, by the same path or another one
    /// (a symlinked folder), as [`same_file`] decides.
    fn parent_of(&mut self, session: usize) -> Option<usize> {
        let parent = Path::new(self.sessions[session].parent_session_path.as_deref()?);
        let same_path = self.by_path.get(parent).copied();
        let (sessions, candidates) = (self.sessions, self.candidates);
        let by_file = self.by_file.get_or_insert_with(|| {
            let mut by_file = HashMap::new();
            for (position, &i) in candidates.iter().enumerate() {
                if let Ok(file) = sessions[i].path.canonicalize() {
                    by_file.entry(file).or_insert(position);
                }
            }
            by_file
        });
        let same_file = match parent.canonicalize() {
            Ok(file) => by_file.get(&file).copied(),
            Err(_) => None,
        };
        let position = match (same_path, same_file) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(candidates[position])
    }
}

impl Component for SessionPicker {
    fn render(&mut self, width: usize) -> Vec<String> {
        let t = self.theme.clone();
        let mut lines = vec![
            String::new(),
            border(&t, Token::Accent, width),
            String::new(),
        ];
        if self.renaming.is_some() {
            lines.extend(self.rename_panel(width));
        } else {
            lines.extend(self.header(width));
            lines.push(String::new());
            lines.extend(self.search.render(width));
            lines.push(String::new());
            lines.extend(self.list(width));
        }
        lines.push(String::new());
        lines.push(border(&t, Token::Accent, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        if self.renaming.is_some() {
            self.rename_input(event);
            return true;
        }
        let key = event.key();
        let is = |id: &str| key.is_some_and(|k| keybindings::matches(k, id));
        if let Some(path) = self.confirming_delete.clone() {
            if is("tui.select.confirm") {
                self.confirming_delete = None;
                self.delete(&path);
            } else if is("tui.select.cancel") {
                self.confirming_delete = None;
            }
            return true;
        }
        if key.is_some() {
            self.status = None;
        }
        let n = self.rows.len();
        if is("tui.input.tab") {
            self.all_scope = !self.all_scope;
            if self.all_scope && self.all.is_none() {
                self.all = Some((self.load_all)());
            }
            self.refresh();
        } else if is("app.session.toggleSort") {
            self.sort = match self.sort {
                Sort::Threaded => Sort::Recent,
                Sort::Recent => Sort::Relevance,
                Sort::Relevance => Sort::Threaded,
            };
            self.refresh();
        } else if is("app.session.toggleNamedFilter") {
            self.named_only = !self.named_only;
            self.refresh();
        } else if is("app.session.togglePath") {
            self.show_path = !self.show_path;
        } else if is("app.session.delete")
            || (is("app.session.deleteNoninvasive") && self.search.value().is_empty())
        {
            self.start_delete();
        } else if self.can_rename && is("app.session.rename") {
            self.start_rename();
        } else if is("tui.select.up") {
            self.selected = self.selected.saturating_sub(1);
        } else if is("tui.select.down") {
            self.selected = (self.selected + 1).min(n.saturating_sub(1));
        } else if is("tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(MAX_VISIBLE);
        } else if is("tui.select.pageDown") {
            self.selected = (self.selected + MAX_VISIBLE).min(n.saturating_sub(1));
        } else if is("tui.select.confirm") {
            if let Some(path) = self.selected_path() {
                self.outcome = Some(SessionOutcome::Selected(path));
            }
        } else if is("tui.select.cancel") {
            self.outcome = Some(SessionOutcome::Cancelled);
        } else {
            self.search.handle_input(event);
            self.refresh();
        }
        true
    }
}

#[cfg(test)]
#[path = "session_picker_tests.rs"]
mod tests;
