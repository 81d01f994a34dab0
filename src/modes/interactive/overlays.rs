//! The integration point for the dialogs of `selectors/` (model, scoped models, sessions,
//! tree, fork, settings, login/logout, trust).
//!
//! A dialog is a [`Dialog`]: a component that hands back its own results. As in pi
//! (`showSelector`) it takes the editor's place in the [`View`] — the transcript above it and
//! the footer below stay where they are — and gets every key until it closes. [`Dialogs`]
//! remembers which it is (an [`OverlayKind`]) and, after every key (and on every tick for the
//! dialogs fed by another thread), the app drains its results with
//! [`Dialogs::next_outcome`]. Some results leave the dialog open (a scoped-model toggle, a
//! tree label, a settings change, a theme preview); the rest close it
//! ([`OverlayOutcome::closes`]). The app acts on each in `App::apply_overlay_outcome`
//! (`dialogs.rs`).
//!
//! To plug in another dialog: a variant of [`OverlayKind`] and [`OverlayOutcome`] and its
//! `Dialog` impl (`dialog.rs`), and the action in `App::apply_overlay_outcome`.

pub use super::dialog::{Dialog, OverlayKind, OverlayOutcome};
use super::selectors::login::ProviderOption;
use super::view::View;

/// The dialog in the editor's place, if any, and what its flow remembers between dialogs.
#[derive(Default)]
pub struct Dialogs {
    active: Option<OverlayKind>,
    /// The provider whose login dialog is open.
    pub(super) pending_login: Option<ProviderOption>,
}

impl Dialogs {
    /// Shows `component` in the editor's place (replacing any dialog shown there).
    pub fn open<C: Dialog + 'static>(&mut self, view: &mut View, component: C, kind: OverlayKind) {
        view.show_dialog(Box::new(component));
        self.active = Some(kind);
    }

    /// Which dialog is open.
    pub fn kind(&self) -> Option<OverlayKind> {
        self.active
    }

    pub fn is_open(&self) -> bool {
        self.active.is_some()
    }

    /// The open dialog's next result, if it has one; a final one closes it (the editor comes
    /// back).
    pub fn next_outcome(&mut self, view: &mut View) -> Option<OverlayOutcome> {
        let kind = self.active?;
        let outcome = view.dialog_mut()?.next_outcome(kind)?;
        if outcome.closes() {
            view.close_dialog();
            self.active = None;
        }
        Some(outcome)
    }

    /// Lets a dialog fed by another thread take what arrived; true when it changed and
    /// needs drawing.
    pub fn pump(&self, view: &mut View) -> bool {
        self.active.is_some() && view.dialog_mut().is_some_and(|d| d.pump())
    }
}
