//! The integration point for the dialogs of `selectors/` (model, scoped models, sessions,
//! tree, fork, settings, login/logout, trust).
//!
//! A dialog is any [`Component`]; as in pi (`showSelector`) it takes the editor's place in the
//! [`View`] — the transcript above it and the footer below stay where they are — and gets every
//! key until it closes. [`Dialogs`] remembers which it is (an [`OverlayKind`] naming the
//! concrete type) and, after every key (and on every tick for the login dialog, whose flow
//! runs on a thread), the app drains its results with [`Dialogs::next_outcome`]. Some results leave the dialog open (a scoped-model toggle, a tree
//! label, a settings change, a theme preview); the rest close it ([`OverlayOutcome::closes`]).
//! The app acts on each in `App::apply_overlay_outcome` (`dialogs.rs`).
//!
//! To plug in another dialog: add a variant to [`OverlayKind`] and [`OverlayOutcome`], one
//! arm in `poll` that downcasts to the component and maps its `take_outcome()`, and the
//! action in `App::apply_overlay_outcome`.

use super::missing_cwd::{MissingCwdDialog, MissingCwdTarget};
use super::selectors::login::{
    LoginDialog, LoginOutcome, PickerMode, ProviderOption, ProviderOutcome, ProviderPicker,
};
use super::selectors::login_method::{AuthMethodOutcome, AuthMethodPicker};
use super::selectors::mcp::{McpOutcome, McpScreen};
use super::selectors::model::{ModelOutcome, ModelSelector};
use super::selectors::scoped_models::{ScopedModelsOutcome, ScopedModelsSelector};
use super::selectors::session_picker::{SessionOutcome, SessionPicker};
use super::selectors::settings::{SettingsOutcome, SettingsSelector};
use super::selectors::thinking::{ThinkingOutcome, ThinkingSelector};
use super::selectors::tree::{TreeOutcome, TreeSelector};
use super::selectors::trust::{TrustOutcome, TrustSelector};
use super::selectors::user_message::{UserMessageOutcome, UserMessageSelector};
use super::standalone::MissingCwdChoice;
use super::view::View;
use crate::tui::Component;

/// Which concrete component an overlay is, so its outcome can be read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlayKind {
    Model,
    Thinking,
    ScopedModels,
    Sessions,
    Tree,
    Fork,
    Settings,
    AuthMethod,
    Providers(PickerMode),
    Login,
    Trust,
    Mcp,
    MissingCwd,
    Rewind,
    RewindChoice,
}

/// A result an overlay handed back.
#[derive(Debug, Clone, PartialEq)]
pub enum OverlayOutcome {
    Model(ModelOutcome),
    Thinking(ThinkingOutcome),
    ScopedModels(ScopedModelsOutcome),
    Session(SessionOutcome),
    Tree(TreeOutcome),
    Fork(UserMessageOutcome),
    Settings(SettingsOutcome),
    AuthMethod(AuthMethodOutcome),
    Provider(PickerMode, ProviderOutcome),
    Login(LoginOutcome),
    Trust(TrustOutcome),
    Mcp(McpOutcome),
    MissingCwd(MissingCwdChoice, MissingCwdTarget),
    Rewind(UserMessageOutcome),
    RewindChoice(Option<crate::harness::rewind::RewindScope>, String),
}

impl OverlayOutcome {
    /// Whether the dialog is done once this result arrived.
    pub fn closes(&self) -> bool {
        !matches!(
            self,
            OverlayOutcome::ScopedModels(
                ScopedModelsOutcome::Changed(_) | ScopedModelsOutcome::Saved(_)
            ) | OverlayOutcome::Tree(TreeOutcome::LabelChanged { .. })
                | OverlayOutcome::Session(SessionOutcome::Renamed { .. })
                | OverlayOutcome::Settings(
                    SettingsOutcome::Changed(_) | SettingsOutcome::PreviewTheme(_)
                )
        )
    }
}

/// The dialog in the editor's place, if any, and what its flow remembers between dialogs.
#[derive(Default)]
pub struct Dialogs {
    active: Option<OverlayKind>,
    /// The provider whose login dialog is open.
    pub(super) pending_login: Option<ProviderOption>,
}

impl Dialogs {
    /// Shows `component` in the editor's place (replacing any dialog shown there).
    pub fn open<C: Component + 'static>(
        &mut self,
        view: &mut View,
        component: C,
        kind: OverlayKind,
    ) {
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
        let outcome = poll(view, self.active?)?;
        if outcome.closes() {
            view.close_dialog();
            self.active = None;
        }
        Some(outcome)
    }

    /// Lets a dialog fed by another thread take what arrived; true when it changed and
    /// needs drawing.
    pub fn pump(&self, view: &mut View) -> bool {
        self.active.is_some_and(|kind| pump(view, kind))
    }
}

/// Reads the next result of the dialog of `kind`, if it has one.
fn poll(view: &mut View, kind: OverlayKind) -> Option<OverlayOutcome> {
    match kind {
        OverlayKind::Model => view
            .dialog_mut::<ModelSelector>()?
            .take_outcome()
            .map(OverlayOutcome::Model),
        OverlayKind::Thinking => view
            .dialog_mut::<ThinkingSelector>()?
            .take_outcome()
            .map(OverlayOutcome::Thinking),
        OverlayKind::ScopedModels => view
            .dialog_mut::<ScopedModelsSelector>()?
            .take_outcome()
            .map(OverlayOutcome::ScopedModels),
        OverlayKind::Sessions => view
            .dialog_mut::<SessionPicker>()?
            .take_outcome()
            .map(OverlayOutcome::Session),
        OverlayKind::Tree => view
            .dialog_mut::<TreeSelector>()?
            .take_outcome()
            .map(OverlayOutcome::Tree),
        OverlayKind::Fork => view
            .dialog_mut::<UserMessageSelector>()?
            .take_outcome()
            .map(OverlayOutcome::Fork),
        OverlayKind::Settings => view
            .dialog_mut::<SettingsSelector>()?
            .take_outcome()
            .map(OverlayOutcome::Settings),
        OverlayKind::AuthMethod => view
            .dialog_mut::<AuthMethodPicker>()?
            .take_outcome()
            .map(OverlayOutcome::AuthMethod),
        OverlayKind::Providers(mode) => view
            .dialog_mut::<ProviderPicker>()?
            .take_outcome()
            .map(|o| OverlayOutcome::Provider(mode, o)),
        OverlayKind::Login => view
            .dialog_mut::<LoginDialog>()?
            .take_outcome()
            .map(OverlayOutcome::Login),
        OverlayKind::Trust => view
            .dialog_mut::<TrustSelector>()?
            .take_outcome()
            .map(OverlayOutcome::Trust),
        OverlayKind::Mcp => view
            .dialog_mut::<McpScreen>()?
            .take_outcome()
            .map(OverlayOutcome::Mcp),
        OverlayKind::MissingCwd => view
            .dialog_mut::<MissingCwdDialog>()?
            .take_outcome()
            .map(|(choice, target)| OverlayOutcome::MissingCwd(choice, target)),
        OverlayKind::Rewind => view
            .dialog_mut::<UserMessageSelector>()?
            .take_outcome()
            .map(OverlayOutcome::Rewind),
        OverlayKind::RewindChoice => view
            .dialog_mut::<super::rewind_dialog::RewindChoiceDialog>()?
            .take_outcome()
            .map(|(scope, entry)| OverlayOutcome::RewindChoice(scope, entry)),
    }
}

/// Lets a dialog fed by another thread (the OAuth login) take what arrived; true when it
/// changed and needs drawing.
fn pump(view: &mut View, kind: OverlayKind) -> bool {
    match kind {
        OverlayKind::Login => view.dialog_mut::<LoginDialog>().is_some_and(|d| d.poll()),
        OverlayKind::Mcp => view.dialog_mut::<McpScreen>().is_some_and(|s| s.poll()),
        _ => false,
    }
}
