//! Project trust in the terminal UI (pi 1.x, `docs/security.md`): the start-up question for a
//! folder with protected resources and no decision ([`ask_at_start_up`], before the chat
//! exists), `/trust` to save a decision for later processes, and the warning shown in the chat
//! when the folder's protected resources were left out.

use std::io;
use std::path::Path;

use super::app::App;
use super::overlays::OverlayKind;
use super::selectors::trust::{save, saved_decision, TrustOutcome, TrustSelector};
use crate::resources::trust::TrustStore;
use crate::tui::terminal::Terminal;
use crate::tui::theme::{self, Token};

/// pi's warning for a folder whose protected resources were not loaded.
pub const UNTRUSTED_WARNING: &str = "This project is not trusted. Project .pi resources and packages are ignored. Use /trust to save a trust decision, then restart pi.";

/// Asks whether to trust `cwd` on the terminal, before the chat starts (the screen is left
/// blank afterwards). Saves the answer unless it was for this session only; cancelling
/// trusts nothing and saves nothing. Returns whether the folder is trusted for this process.
pub fn ask_at_start_up(cwd: &Path, agent_dir: &Path) -> io::Result<bool> {
    super::standalone::prepare_screen(agent_dir, cwd);
    let terminal = crate::tui::terminal::ProcessTerminal::new();
    let input = terminal.events();
    ask_on(terminal, &input, cwd, agent_dir)
}

/// [`ask_at_start_up`] on a given terminal.
pub fn ask_on<T: Terminal>(
    terminal: T,
    input: &crossbeam_channel::Receiver<crate::tui::terminal::TerminalEvent>,
    cwd: &Path,
    agent_dir: &Path,
) -> io::Result<bool> {
    let selector = TrustSelector::prompt(cwd, theme::current());
    let answer = super::standalone::run_until(terminal, input, selector, |s| s.take_outcome())?;
    match answer {
        Some(TrustOutcome::Chosen(choice)) => {
            save(agent_dir, &choice)?;
            Ok(choice.trusted)
        }
        Some(TrustOutcome::Cancelled) | None => Ok(false),
    }
}

impl<T: Terminal> App<T> {
    /// `/trust`: the saved decision and this process's, and the answers that can be saved.
    pub(super) fn open_trust_selector(&mut self) {
        let cwd = self.env.cwd.clone();
        let store = TrustStore::load(&self.env.agent_dir);
        let saved = saved_decision(&store, &cwd);
        let selector =
            TrustSelector::manage(&cwd, saved, self.env.project_trusted, theme::current());
        self.show_dialog(selector, OverlayKind::Trust);
    }

    pub(super) fn apply_trust_outcome(&mut self, outcome: TrustOutcome) -> Result<(), String> {
        let TrustOutcome::Chosen(choice) = outcome else {
            return Ok(());
        };
        save(&self.env.agent_dir, &choice)
            .map_err(|e| format!("Could not save the trust decision: {e}"))?;
        let label = if choice.trusted {
            "trusted"
        } else {
            "untrusted"
        };
        self.view.status_note(&format!(
            "Saved trust decision: {label}. Restart pi for this to take effect."
        ));
        Ok(())
    }

    /// The warning under the history when the folder's protected resources were left out.
    pub(super) fn show_untrusted_warning(&mut self) {
        if !self.env.untrusted_warning {
            return;
        }
        self.view.push(super::chat::ChatItem::note(
            Token::Warning,
            UNTRUSTED_WARNING,
        ));
    }
}
