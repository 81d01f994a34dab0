//! The integration point for the dialogs of `selectors/` (model, scoped models, sessions,
//! tree, fork, settings, login/logout, trust).
//!
//! A dialog is any [`Component`]; as in pi (`showSelector`) it takes the editor's place in the
//! [`View`] — the transcript above it and the footer below stay where they are — and gets every
//! key until it closes. The app remembers it as an [`ActiveOverlay`] (an [`OverlayKind`]
//! naming the concrete type) and, after every key (and on every tick for the login dialog,
//! whose flow runs on a thread), drains its results with [`poll`]. Some results leave the dialog open (a scoped-model toggle, a tree
//! label, a settings change, a theme preview); the rest close it ([`OverlayOutcome::closes`]).
//! The app acts on each in `App::apply_overlay_outcome` (`dialogs.rs`).
//!
//! To plug in another dialog: add a variant to [`OverlayKind`] and [`OverlayOutcome`], one
//! arm in [`poll`] that downcasts to the component and maps its `take_outcome()`, and the
//! action in `App::apply_overlay_outcome`.

use super::missing_cwd::MissingCwdDialog;
use super::selectors::login::{
    LoginDialog, LoginOutcome, PickerMode, ProviderOutcome, ProviderPicker,
};
use super::selectors::login_method::{AuthMethodOutcome, AuthMethodPicker};
use super::selectors::mcp::{McpOutcome, McpScreen};
use super::selectors::model::{ModelOutcome, ModelSelector};
use super::selectors::scoped_models::{ScopedModelsOutcome, ScopedModelsSelector};
use super::selectors::session_picker::{SessionOutcome, SessionPicker};
use super::selectors::settings::{SettingsOutcome, SettingsSelector};
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
}

/// A result an overlay handed back.
#[derive(Debug, Clone, PartialEq)]
pub enum OverlayOutcome {
    Model(ModelOutcome),
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
    MissingCwd(MissingCwdChoice, std::path::PathBuf),
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveOverlay {
    pub kind: OverlayKind,
}

/// Shows `component` in the editor's place (replacing any dialog shown there).
pub fn show<C: Component + 'static>(
    view: &mut View,
    component: C,
    kind: OverlayKind,
) -> ActiveOverlay {
    view.show_dialog(Box::new(component));
    ActiveOverlay { kind }
}

/// Puts the editor back.
pub fn close(view: &mut View) {
    view.close_dialog();
}

/// Reads the next result of the active dialog, if it has one.
pub fn poll(view: &mut View, active: ActiveOverlay) -> Option<OverlayOutcome> {
    match active.kind {
        OverlayKind::Model => view
            .dialog_mut::<ModelSelector>()?
            .take_outcome()
            .map(OverlayOutcome::Model),
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
            .map(|(choice, path)| OverlayOutcome::MissingCwd(choice, path)),
    }
}

/// Lets a dialog fed by another thread (the OAuth login) take what arrived; true when it
/// changed and needs drawing.
pub fn pump(view: &mut View, active: ActiveOverlay) -> bool {
    match active.kind {
        OverlayKind::Login => view.dialog_mut::<LoginDialog>().is_some_and(|d| d.poll()),
        OverlayKind::Mcp => view.dialog_mut::<McpScreen>().is_some_and(|s| s.poll()),
        _ => false,
    }
}
