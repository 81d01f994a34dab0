//! [`TreeSelector`] (`/tree`): the session tree as in pi-tree-view.png — one row per entry
//! with `├─`/`└─` connectors, `•` on the active path, `[labels]`, the selected row
//! highlighted and `(n/m)` plus the filter underneath. ↑/↓ move, ←/→ page, Ctrl/Alt+←/→ fold
//! or jump between branch segments, typing searches, Shift+L edits a label, Ctrl+D/T/U/L/A
//! pick a filter and Ctrl+O cycles. Choosing an entry other than the current leaf asks
//! whether to summarize the branch being left (pi's follow-up prompt), unless told to skip.

use std::collections::VecDeque;
use std::sync::Arc;

use super::common::{border, choice_dialog, fit, key_hint, scroll_window, step_wrapping};
use super::tree_layout::{TreeFilter, TreeModel};
use super::tree_text::{display_text, tool_calls, ToolCalls};
use crate::ai::types::now_ms;
use crate::session::entry::Entry;
use crate::session::ids::iso_timestamp;
use crate::tui::components::input::Input;
use crate::tui::components::select_list::{SelectItem, SelectList, SelectResult};
use crate::tui::keybindings;
use crate::tui::text::truncate_to_width;
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent, KeyEvent};

/// What to do with the branch being left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchSummary {
    None,
    Summarize,
    /// Summarize following these instructions.
    Custom(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeOutcome {
    /// Navigate to `entry_id` (the app calls the session's tree navigation).
    Selected {
        entry_id: String,
        summary: BranchSummary,
    },
    /// The current leaf was chosen: nothing to do (pi says "Already at this point").
    AlreadyAtLeaf,
    /// A label was set (`Some`) or removed (`None`); the app appends a label entry. The
    /// selector stays open.
    LabelChanged {
        entry_id: String,
        label: Option<String>,
    },
    Cancelled,
}

enum Mode {
    Browse,
    EditLabel { node: usize, input: Input },
    AskSummary { entry_id: String, list: SelectList },
    CustomInstructions { entry_id: String, input: Input },
}

pub struct TreeSelector {
    theme: Arc<Theme>,
    model: TreeModel,
    calls: ToolCalls,
    filter: TreeFilter,
    search: String,
    selected: usize,
    /// Node kept selected across filter changes.
    anchor: Option<usize>,
    max_visible: usize,
    show_label_times: bool,
    skip_summary_prompt: bool,
    mode: Mode,
    outcomes: VecDeque<TreeOutcome>,
}

const SUMMARY_CHOICES: [&str; 3] = ["No summary", "Summarize", "Summarize with custom prompt"];

impl TreeSelector {
    /// `entries`: the session's entries (header excluded); `leaf_id`: the current leaf;
    /// `terminal_rows`: the list shows half of them (at least 5); `filter`: the
    /// `treeFilterMode` setting. An empty session cancels at once.
    pub fn new(
        entries: &[Entry],
        leaf_id: Option<&str>,
        terminal_rows: usize,
        filter: TreeFilter,
        theme: Arc<Theme>,
    ) -> TreeSelector {
        let mut outcomes = VecDeque::new();
        if entries.is_empty() {
            outcomes.push_back(TreeOutcome::Cancelled);
        }
        let model = TreeModel::new(entries, leaf_id);
        let anchor = model.leaf.or(model.nodes.len().checked_sub(1));
        let mut s = TreeSelector {
            theme,
            calls: tool_calls(entries),
            model,
            filter,
            search: String::new(),
            selected: 0,
            anchor,
            max_visible: (terminal_rows / 2).max(5),
            show_label_times: false,
            skip_summary_prompt: false,
            mode: Mode::Browse,
            outcomes,
        };
        s.refilter();
        s
    }

    /// `branchSummary.skipPrompt`: never ask, always navigate without a summary.
    pub fn with_skip_summary_prompt(mut self, skip: bool) -> TreeSelector {
        self.skip_summary_prompt = skip;
        self
    }

    /// Starts on `entry_id` instead of the leaf (reopening after a cancelled summary).
    pub fn with_selected(mut self, entry_id: &str) -> TreeSelector {
        if let Some(&i) = self.model.by_id.get(entry_id) {
            self.selected = self.model.nearest_visible_row(i);
            self.anchor = self.model.visible.get(self.selected).copied();
        }
        self
    }

    pub fn take_outcome(&mut self) -> Option<TreeOutcome> {
        self.outcomes.pop_front()
    }

    fn refilter(&mut self) {
        self.model.apply(self.filter, &self.search);
        if let Some(anchor) = self.anchor {
            self.selected = self.model.nearest_visible_row(anchor);
        }
        self.selected = self
            .selected
            .min(self.model.visible.len().saturating_sub(1));
        if let Some(&node) = self.model.visible.get(self.selected) {
            self.anchor = Some(node);
        }
    }

    fn set_filter(&mut self, filter: TreeFilter) {
        self.filter = filter;
        self.model.folded.clear();
        self.refilter();
    }

    fn toggle_filter(&mut self, filter: TreeFilter) {
        let next = if self.filter == filter {
            TreeFilter::Default
        } else {
            filter
        };
        self.set_filter(next);
    }

    fn choose(&mut self, node: usize) {
        let entry_id = self.model.nodes[node].entry.id().to_string();
        if Some(node) == self.model.leaf {
            self.outcomes.push_back(TreeOutcome::AlreadyAtLeaf);
        } else if self.skip_summary_prompt {
            self.outcomes.push_back(TreeOutcome::Selected {
                entry_id,
                summary: BranchSummary::None,
            });
        } else {
            let items = SUMMARY_CHOICES
                .iter()
                .map(|c| SelectItem::new(*c))
                .collect();
            let list = SelectList::new(items, SUMMARY_CHOICES.len(), self.theme.clone());
            self.mode = Mode::AskSummary { entry_id, list };
        }
    }

    fn browse_key(&mut self, key: &KeyEvent) {
        let is = |id: &str| keybindings::matches(key, id);
        let n = self.model.visible.len();
        let current = self.model.visible.get(self.selected).copied();
        if is("tui.select.up") || is("tui.select.down") {
            self.selected = step_wrapping(self.selected, n, is("tui.select.down"));
        } else if is("app.tree.foldOrUp") {
            match current {
                Some(i) if self.model.is_foldable(i) && !self.model.folded.contains(&i) => {
                    self.model.folded.insert(i);
                    self.refilter();
                }
                _ => self.selected = self.model.segment_start(self.selected, false),
            }
        } else if is("app.tree.unfoldOrDown") {
            match current {
                Some(i) if self.model.folded.contains(&i) => {
                    self.model.folded.remove(&i);
                    self.refilter();
                }
                _ => self.selected = self.model.segment_start(self.selected, true),
            }
        } else if is("tui.editor.cursorLeft") || is("tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(self.max_visible);
        } else if is("tui.editor.cursorRight") || is("tui.select.pageDown") {
            self.selected = (self.selected + self.max_visible).min(n.saturating_sub(1));
        } else if is("tui.select.confirm") {
            if let Some(i) = current {
                self.choose(i);
            }
        } else if is("tui.select.cancel") {
            if self.search.is_empty() {
                self.outcomes.push_back(TreeOutcome::Cancelled);
            } else {
                self.search.clear();
                self.model.folded.clear();
                self.refilter();
            }
        } else if is("app.tree.filter.default") {
            self.set_filter(TreeFilter::Default);
        } else if is("app.tree.filter.noTools") {
            self.toggle_filter(TreeFilter::NoTools);
        } else if is("app.tree.filter.userOnly") {
            self.toggle_filter(TreeFilter::UserOnly);
        } else if is("app.tree.filter.labeledOnly") {
            self.toggle_filter(TreeFilter::LabeledOnly);
        } else if is("app.tree.filter.all") {
            self.toggle_filter(TreeFilter::All);
        } else if is("app.tree.filter.cycleBackward") || is("app.tree.filter.cycleForward") {
            self.set_filter(self.filter.step(is("app.tree.filter.cycleForward")));
        } else if is("tui.editor.deleteCharBackward") {
            if self.search.pop().is_some() {
                self.model.folded.clear();
                self.refilter();
            }
        } else if is("app.tree.editLabel") {
            if let Some(node) = current {
                let mut input = Input::new();
                input.set_value(self.model.nodes[node].label.as_deref().unwrap_or(""));
                self.mode = Mode::EditLabel { node, input };
            }
        } else if is("app.tree.toggleLabelTimestamp") {
            self.show_label_times = !self.show_label_times;
        } else if let Some(c) = key.text() {
            self.search.push(c);
            self.model.folded.clear();
            self.refilter();
        }
        if let Some(&node) = self.model.visible.get(self.selected) {
            self.anchor = Some(node);
        }
    }

    fn row(&self, row: usize, width: usize) -> String {
        let t = &self.theme;
        let i = self.model.visible[row];
        let node = &self.model.nodes[i];
        let layout = self.model.layout.get(&i).cloned().unwrap_or_default();
        let selected = row == self.selected;
        let display = if self.model.multiple_roots {
            layout.indent.saturating_sub(1)
        } else {
            layout.indent
        };
        let connector = layout.show_connector && !layout.virtual_root_child;
        let connector_level = if connector {
            display.checked_sub(1)
        } else {
            None
        };
        let folded = self.model.folded.contains(&i);
        let mut prefix = String::new();
        for level in 0..display {
            if let Some((_, show)) = layout.gutters.iter().find(|(l, _)| *l == level) {
                prefix.push_str(if *show { "│  " } else { "   " });
            } else if Some(level) == connector_level {
                prefix.push(if layout.is_last { '└' } else { '├' });
                prefix.push(if folded {
                    '⊞'
                } else if self.model.is_foldable(i) {
                    '⊟'
                } else {
                    '─'
                });
                prefix.push(' ');
            } else {
                prefix.push_str("   ");
            }
        }
        let mut line = if selected {
            t.fg(Token::Accent, "› ")
        } else {
            "  ".to_string()
        };
        line.push_str(&t.fg(Token::Dim, &prefix));
        if folded && !connector {
            line.push_str(&t.fg(Token::Accent, "⊞ "));
        }
        if self.model.active.contains(&i) {
            line.push_str(&t.fg(Token::Accent, "• "));
        }
        if let Some(label) = &node.label {
            line.push_str(&t.fg(Token::Warning, &format!("[{label}] ")));
            if let (true, Some(ts)) = (self.show_label_times, &node.label_time) {
                line.push_str(&t.fg(Token::Muted, &format!("{} ", short_time(ts))));
            }
        }
        let text = display_text(&node.entry, &self.calls, t);
        line.push_str(&if selected { t.bold(&text) } else { text });
        let line = truncate_to_width(&line, width, "...", false);
        if selected {
            t.bg(Token::SelectedBg, &line)
        } else {
            line
        }
    }

    fn header(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let mut search = format!("  {}", t.fg(Token::Muted, "Type to search:"));
        if !self.search.is_empty() {
            search.push_str(&format!(" {}", t.fg(Token::Accent, &self.search)));
        }
        let mut lines = vec![
            String::new(),
            border(t, Token::Border, width),
            format!(" {}", t.bold("  Session Tree")),
        ];
        lines.extend(
            help_lines(width)
                .into_iter()
                .map(|l| t.fg(Token::Muted, &l)),
        );
        lines.extend([search, border(t, Token::Border, width), String::new()]);
        lines
    }

    fn list(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let n = self.model.visible.len();
        let mut status = self.filter.status().to_string();
        if self.show_label_times {
            status.push_str(" [+label time]");
        }
        if n == 0 {
            return vec![
                t.fg(Token::Muted, "  No entries found"),
                t.fg(Token::Muted, &format!("  (0/0){status}")),
            ];
        }
        let (start, end) = scroll_window(self.selected, n, self.max_visible);
        let mut lines: Vec<String> = (start..end).map(|r| self.row(r, width)).collect();
        lines.push(t.fg(
            Token::Muted,
            &format!("  ({}/{n}){status}", self.selected + 1),
        ));
        lines
    }
}

/// `HH:MM` of an ISO timestamp (the date part is dropped).
fn short_time(iso: &str) -> String {
    iso.split('T')
        .nth(1)
        .map(|t| t.chars().take(5).collect())
        .unwrap_or_else(|| iso.to_string())
}

impl Component for TreeSelector {
    fn render(&mut self, width: usize) -> Vec<String> {
        let t = self.theme.clone();
        let mut lines = Vec::new();
        match &mut self.mode {
            Mode::AskSummary { list, .. } => {
                // pi asks with its extension selector; Escape goes back to the tree.
                let options: Vec<String> = SUMMARY_CHOICES.iter().map(|c| c.to_string()).collect();
                let selected = list.selected_index();
                return choice_dialog(&t, "Summarize branch?", &options, selected, "select", width);
            }
            Mode::CustomInstructions { input, .. } => {
                lines.push(border(&t, Token::Border, width));
                lines.push(format!(
                    " {}",
                    t.fg(Token::Accent, &t.bold("Custom summarization instructions"))
                ));
                lines.push(String::new());
                lines.extend(
                    input
                        .render(width.saturating_sub(1))
                        .into_iter()
                        .map(|l| format!(" {l}")),
                );
                lines.push(String::new());
                lines.push(format!(
                    " {}  {}",
                    key_hint(&t, "tui.select.confirm", "submit"),
                    key_hint(&t, "tui.select.cancel", "cancel")
                ));
                lines.push(border(&t, Token::Border, width));
                return fit(lines, width);
            }
            _ => {}
        }
        lines.extend(self.header(width));
        if let Mode::EditLabel { input, .. } = &mut self.mode {
            lines.push(format!(
                "  {}",
                t.fg(Token::Muted, "Label (empty to remove):")
            ));
            lines.extend(
                input
                    .render(width.saturating_sub(2))
                    .into_iter()
                    .map(|l| format!("  {l}")),
            );
            lines.push(format!(
                "  {}  {}",
                key_hint(&t, "tui.select.confirm", "save"),
                key_hint(&t, "tui.select.cancel", "cancel")
            ));
        } else {
            lines.extend(self.list(width));
        }
        lines.push(String::new());
        lines.push(border(&t, Token::Border, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let key = event.key().copied();
        let is = |id: &str| key.is_some_and(|k| keybindings::matches(&k, id));
        match std::mem::replace(&mut self.mode, Mode::Browse) {
            Mode::Browse => {
                if let Some(key) = key {
                    self.browse_key(&key);
                }
            }
            Mode::EditLabel { node, mut input } => {
                if is("tui.select.confirm") {
                    let label = Some(input.value().trim().to_string()).filter(|l| !l.is_empty());
                    self.model.nodes[node].label = label.clone();
                    self.model.nodes[node].label_time =
                        label.as_ref().map(|_| iso_timestamp(now_ms()));
                    let entry_id = self.model.nodes[node].entry.id().to_string();
                    self.outcomes
                        .push_back(TreeOutcome::LabelChanged { entry_id, label });
                    self.refilter();
                } else if !is("tui.select.cancel") {
                    input.handle_input(event);
                    self.mode = Mode::EditLabel { node, input };
                }
            }
            Mode::AskSummary { entry_id, mut list } => {
                list.handle_input(event);
                match list.take_result() {
                    Some(SelectResult::Selected(item)) => {
                        let summary = match item.value.as_str() {
                            "Summarize" => BranchSummary::Summarize,
                            "No summary" => BranchSummary::None,
                            _ => {
                                self.mode = Mode::CustomInstructions {
                                    entry_id,
                                    input: Input::new(),
                                };
                                return true;
                            }
                        };
                        self.outcomes
                            .push_back(TreeOutcome::Selected { entry_id, summary });
                    }
                    // Back to the tree, same selection.
                    Some(SelectResult::Cancelled) => {}
                    None => self.mode = Mode::AskSummary { entry_id, list },
                }
            }
            Mode::CustomInstructions {
                entry_id,
                mut input,
            } => {
                if is("tui.select.confirm") {
                    let summary = BranchSummary::Custom(input.value().to_string());
                    self.outcomes
                        .push_back(TreeOutcome::Selected { entry_id, summary });
                } else if is("tui.select.cancel") {
                    let items = SUMMARY_CHOICES
                        .iter()
                        .map(|c| SelectItem::new(*c))
                        .collect();
                    let mut list =
                        SelectList::new(items, SUMMARY_CHOICES.len(), self.theme.clone());
                    list.set_selected_index(2);
                    self.mode = Mode::AskSummary { entry_id, list };
                } else {
                    input.handle_input(event);
                    self.mode = Mode::CustomInstructions { entry_id, input };
                }
            }
        }
        true
    }
}

/// pi 1.6.0's `/tree` help: `keys label` items joined by ` · `, wrapped to the width with a
/// two-space indent (two lines at 80 columns).
fn help_lines(width: usize) -> Vec<String> {
    const ITEMS: &[(&[&str], &str, bool)] = &[
        (&["tui.select.up", "tui.select.down"], "move", false),
        (
            &["tui.editor.cursorLeft", "tui.editor.cursorRight"],
            "page",
            false,
        ),
        (
            &["app.tree.foldOrUp", "app.tree.unfoldOrDown"],
            "branch",
            false,
        ),
        (&["app.message.copy"], "copy", false),
        (&["app.tree.editLabel"], "label", false),
        (&["app.tree.toggleLabelTimestamp"], "label time", false),
        (
            &[
                "app.tree.filter.default",
                "app.tree.filter.noTools",
                "app.tree.filter.userOnly",
                "app.tree.filter.labeledOnly",
                "app.tree.filter.all",
            ],
            "filters",
            true,
        ),
        (
            &[
                "app.tree.filter.cycleForward",
                "app.tree.filter.cycleBackward",
            ],
            "cycle",
            true,
        ),
    ];
    let bindings = keybindings::current();
    let items = ITEMS.iter().map(|(ids, label, label_first)| {
        let keys: Vec<&str> = ids
            .iter()
            .filter_map(|id| bindings.keys(id).first().map(String::as_str))
            .collect();
        let text = help_keys(&keys);
        match (text.is_empty(), label_first) {
            (true, _) => label.to_string(),
            (false, true) => format!("{label} {text}"),
            (false, false) => format!("{text} {label}"),
        }
    });
    let width = width.max(1);
    let fits = |s: &str| crate::tui::text::visible_width(s) <= width;
    let mut lines = Vec::new();
    let mut current = String::new();
    for item in items {
        let indented = format!("  {item}");
        let start = if fits(&indented) {
            indented
        } else {
            item.clone()
        };
        if current.is_empty() {
            current = start;
            continue;
        }
        let candidate = format!("{current} · {item}");
        if fits(&candidate) {
            current = candidate;
        } else {
            lines.push(truncate_to_width(current.trim_end(), width, "", false));
            current = start;
        }
    }
    if !current.is_empty() {
        lines.push(truncate_to_width(current.trim_end(), width, "", false));
    }
    lines
}

/// Several keys as one hint: a shared modifier written once (`ctrl+←/→`), arrows as arrows.
fn help_keys(keys: &[&str]) -> String {
    let joined = match keys {
        [] => return String::new(),
        [one] => one.to_string(),
        _ => {
            let split = |k: &str| match k.rfind('+') {
                Some(i) => (k[..=i].to_string(), k[i + 1..].to_string()),
                None => (String::new(), k.to_string()),
            };
            let parts: Vec<(String, String)> = keys.iter().map(|k| split(k)).collect();
            let prefix = &parts[0].0;
            if !prefix.is_empty() && parts.iter().all(|(p, _)| p == prefix) {
                let suffixes: Vec<&str> = parts.iter().map(|(_, s)| s.as_str()).collect();
                format!("{prefix}{}", suffixes.join("/"))
            } else {
                keys.join("/")
            }
        }
    };
    let word = |w: &str| {
        match w {
            "pageUp" => "pgup",
            "pageDown" => "pgdn",
            "up" => "↑",
            "down" => "↓",
            "left" => "←",
            "right" => "→",
            other => other,
        }
        .to_string()
    };
    // Replace whole words only, as pi's `\b…\b` does.
    let mut out = String::new();
    let mut token = String::new();
    for c in joined.chars() {
        if c.is_alphanumeric() || c == '_' {
            token.push(c);
        } else {
            out.push_str(&word(&token));
            token.clear();
            out.push(c);
        }
    }
    out.push_str(&word(&token));
    out
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
