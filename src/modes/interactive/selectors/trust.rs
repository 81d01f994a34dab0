//! [`TrustSelector`]: pi 1.x's project-trust choices, in its two forms. At start-up
//! ([`TrustSelector::prompt`]) it asks "Trust project folder?" with the session-only answers
//! too; `/trust` ([`TrustSelector::manage`]) shows the saved and the current decision and
//! offers only what can be saved. [`save`] writes the chosen answer to trust.json.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::common::{border, choice_dialog, fit, key_hint};
use crate::resources::trust::TrustStore;
use crate::tui::components::text::Text;
use crate::tui::theme::{Theme, Token};
use crate::tui::{keybindings, Component, InputEvent, KeyCode, KeyEvent};

/// One answer: what it means for this process and what it writes to trust.json (`None`
/// removes a folder's entry).
#[derive(Debug, Clone, PartialEq)]
pub struct TrustChoice {
    pub trusted: bool,
    pub updates: Vec<(PathBuf, Option<bool>)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TrustOutcome {
    Chosen(TrustChoice),
    Cancelled,
}

struct TrustOption {
    label: String,
    choice: TrustChoice,
    /// The folder whose saved entry this option writes (none for session-only answers).
    saved_path: Option<PathBuf>,
}

/// pi's options for `cwd`: trust it, trust its parent (dropping the folder's own entry), and
/// do not trust; with `session_only`, the answers that save nothing too.
fn trust_options(cwd: &Path, session_only: bool) -> Vec<TrustOption> {
    let here = cwd.to_path_buf();
    let saved = |label: String, trusted: bool, updates, path: &Path| TrustOption {
        label,
        choice: TrustChoice { trusted, updates },
        saved_path: Some(path.to_path_buf()),
    };
    let unsaved = |label: &str, trusted: bool| TrustOption {
        label: label.into(),
        choice: TrustChoice {
            trusted,
            updates: Vec::new(),
        },
        saved_path: None,
    };
    let mut options = vec![saved(
        "Trust".into(),
        true,
        vec![(here.clone(), Some(true))],
        cwd,
    )];
    if let Some(parent) = cwd.parent() {
        options.push(saved(
            format!("Trust parent folder ({})", parent.display()),
            true,
            vec![(parent.to_path_buf(), Some(true)), (here.clone(), None)],
            parent,
        ));
    }
    if session_only {
        options.push(unsaved("Trust (this session only)", true));
    }
    options.push(saved(
        "Do not trust".into(),
        false,
        vec![(here, Some(false))],
        cwd,
    ));
    if session_only {
        options.push(unsaved("Do not trust (this session only)", false));
    }
    options
}

/// The closest saved decision for `cwd`: the folder it was saved for and the answer.
pub fn saved_decision(store: &TrustStore, cwd: &Path) -> Option<(PathBuf, bool)> {
    cwd.ancestors().find_map(|dir| {
        let value = store.map.get(dir.to_string_lossy().as_ref())?.as_bool()?;
        Some((dir.to_path_buf(), value))
    })
}

/// Writes a choice's updates to `<agent_dir>/trust.json` (nothing for a session-only answer).
pub fn save(agent_dir: &Path, choice: &TrustChoice) -> std::io::Result<()> {
    let mut store = TrustStore::load(agent_dir);
    let mut last = None;
    for (path, decision) in &choice.updates {
        let key = path.to_string_lossy().into_owned();
        match decision {
            Some(d) => {
                store.map.insert(key, serde_json::Value::Bool(*d));
                last = Some((path, *d));
            }
            None => {
                store.map.remove(&key);
            }
        }
    }
    // `record` writes the whole map (and refuses to replace a file it could not read).
    match last {
        Some((path, decision)) => store.record(path, decision),
        None => Ok(()),
    }
}

enum Form {
    /// Start-up: the question with the folder and what trusting it allows.
    Prompt,
    /// `/trust`: the saved decision and this process's.
    Manage {
        saved: Option<(PathBuf, bool)>,
        trusted_now: bool,
    },
}

pub struct TrustSelector {
    theme: Arc<Theme>,
    cwd: PathBuf,
    form: Form,
    options: Vec<TrustOption>,
    selected: usize,
    outcome: Option<TrustOutcome>,
}

impl TrustSelector {
    /// The start-up question for a folder with protected resources and no decision yet.
    pub fn prompt(cwd: &Path, theme: Arc<Theme>) -> TrustSelector {
        TrustSelector {
            theme,
            cwd: cwd.to_path_buf(),
            form: Form::Prompt,
            options: trust_options(cwd, true),
            selected: 0,
            outcome: None,
        }
    }

    /// `/trust`: the saved decision preselected (and ticked).
    pub fn manage(
        cwd: &Path,
        saved: Option<(PathBuf, bool)>,
        trusted_now: bool,
        theme: Arc<Theme>,
    ) -> TrustSelector {
        let options = trust_options(cwd, false);
        let mut selector = TrustSelector {
            theme,
            cwd: cwd.to_path_buf(),
            form: Form::Manage { saved, trusted_now },
            options,
            selected: 0,
            outcome: None,
        };
        selector.selected = (0..selector.options.len())
            .find(|&i| selector.is_saved(i))
            .unwrap_or(0);
        selector
    }

    pub fn take_outcome(&mut self) -> Option<TrustOutcome> {
        self.outcome.take()
    }

    /// Whether option `i` is what trust.json says now.
    fn is_saved(&self, i: usize) -> bool {
        let Form::Manage {
            saved: Some((path, decision)),
            ..
        } = &self.form
        else {
            return false;
        };
        let option = &self.options[i];
        option.choice.trusted == *decision && option.saved_path.as_ref() == Some(path)
    }

    fn text(&self, text: String, width: usize) -> Vec<String> {
        Text::new(text, 1, 0).render(width)
    }

    /// The start-up question, in pi's small question dialog.
    fn render_prompt(&self, width: usize) -> Vec<String> {
        let title = format!(
            "Trust project folder?\n{}\n\nThis allows pi to load .pi settings and resources, install missing project packages, and execute project extensions.",
            self.cwd.display()
        );
        let options: Vec<String> = self.options.iter().map(|o| o.label.clone()).collect();
        choice_dialog(
            &self.theme,
            &title,
            &options,
            self.selected,
            "select",
            width,
        )
    }

    /// `/trust`: the decisions, then the options with the saved one ticked.
    fn render_manage(
        &self,
        saved: &Option<(PathBuf, bool)>,
        trusted_now: bool,
        width: usize,
    ) -> Vec<String> {
        let t = &self.theme;
        let saved = match saved {
            None => "none".to_string(),
            Some((path, decision)) => {
                let label = if *decision { "trusted" } else { "untrusted" };
                if *path == self.cwd {
                    format!("{label} ({})", path.display())
                } else {
                    format!("{label} (inherited from {})", path.display())
                }
            }
        };
        let now = if trusted_now { "trusted" } else { "untrusted" };
        let muted = |text: &str| self.text(t.fg(Token::Muted, text), width);
        let mut lines = vec![border(t, Token::Border, width), String::new()];
        lines.extend(self.text(t.fg(Token::Accent, &t.bold("Project trust")), width));
        lines.extend(muted(&self.cwd.display().to_string()));
        lines.push(String::new());
        lines.extend(muted(&format!("Saved decision: {saved}")));
        lines.extend(muted(&format!("Current session: {now}")));
        lines.push(String::new());
        for (i, option) in self.options.iter().enumerate() {
            let (prefix, label) = if i == self.selected {
                (
                    t.fg(Token::Accent, "→ "),
                    t.fg(Token::Accent, &option.label),
                )
            } else {
                ("  ".into(), t.fg(Token::Text, &option.label))
            };
            let marker = if self.is_saved(i) {
                t.fg(Token::Accent, "✓ ")
            } else {
                "  ".into()
            };
            lines.extend(self.text(format!("{prefix}{marker}{label}"), width));
        }
        lines.push(String::new());
        let hint = format!(
            "{}{}  {}  {}",
            t.fg(Token::Dim, "↑↓"),
            t.fg(Token::Muted, " navigate"),
            key_hint(t, "tui.select.confirm", "save"),
            key_hint(t, "tui.select.cancel", "cancel"),
        );
        lines.extend(self.text(hint, width));
        lines.push(String::new());
        lines.push(border(t, Token::Border, width));
        fit(lines, width)
    }
}

impl Component for TrustSelector {
    fn render(&mut self, width: usize) -> Vec<String> {
        match &self.form {
            Form::Prompt => self.render_prompt(width),
            Form::Manage { saved, trusted_now } => self.render_manage(saved, *trusted_now, width),
        }
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let kb = keybindings::current();
        let Some(key) = event.key() else {
            return false;
        };
        let plain = |c: char| *key == KeyEvent::plain(KeyCode::Char(c));
        if kb.matches(key, "tui.select.up") || plain('k') {
            self.selected = self.selected.saturating_sub(1);
        } else if kb.matches(key, "tui.select.down") || plain('j') {
            self.selected = (self.selected + 1).min(self.options.len() - 1);
        } else if kb.matches(key, "tui.select.confirm") {
            let choice = self.options[self.selected].choice.clone();
            self.outcome = Some(TrustOutcome::Chosen(choice));
        } else if kb.matches(key, "tui.select.cancel") {
            self.outcome = Some(TrustOutcome::Cancelled);
        } else {
            return false;
        }
        true
    }
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
