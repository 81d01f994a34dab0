//! The integration point for dialogs shown over the chat: the selectors of `selectors/`
//! (model, scoped models, sessions, tree, fork, settings, login/logout).
//!
//! A dialog is any [`Component`] shown with `Tui::show_overlay`; the app remembers it as an
//! [`ActiveOverlay`] (its id plus an [`OverlayKind`] naming the concrete type) and, after every
//! key (and on every tick for the login dialog, whose flow runs on a thread), drains its
//! results with [`poll`]. Some results leave the dialog open (a scoped-model toggle, a tree
//! label, a settings change, a theme preview); the rest close it ([`OverlayOutcome::closes`]).
//! The app acts on each in `App::apply_overlay_outcome` (`dialogs.rs`).
//!
//! To plug in another dialog: add a variant to [`OverlayKind`] and [`OverlayOutcome`], one
//! arm in [`poll`] that downcasts to the component and maps its `take_outcome()`, and the
//! action in `App::apply_overlay_outcome`.

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
use super::selectors::user_message::{UserMessageOutcome, UserMessageSelector};
use crate::tui::overlay::Extent;
use crate::tui::terminal::Terminal;
use crate::tui::{Anchor, Component, OverlayId, OverlayOptions, Tui};

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
    Mcp,
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
    Mcp(McpOutcome),
}

impl OverlayOutcome {
    /// Whether the dialog is done once this result arrived.
    pub fn closes(&self) -> bool {
        !matches!(
            self,
            OverlayOutcome::ScopedModels(
                ScopedModelsOutcome::Changed(_) | ScopedModelsOutcome::Saved(_)
            ) | OverlayOutcome::Tree(TreeOutcome::LabelChanged { .. })
                | OverlayOutcome::Settings(
                    SettingsOutcome::Changed(_) | SettingsOutcome::PreviewTheme(_)
                )
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveOverlay {
    pub id: OverlayId,
    pub kind: OverlayKind,
}

/// Shows `component` as a full-width dialog at the bottom of the screen (where pi puts its
/// selectors, in place of the editor).
pub fn show<T: Terminal, C: Component + 'static>(
    tui: &mut Tui<T>,
    component: C,
    kind: OverlayKind,
) -> ActiveOverlay {
    let options = OverlayOptions {
        anchor: Anchor::BottomCenter,
        width: Some(Extent::Percent(100.0)),
        ..OverlayOptions::default()
    };
    ActiveOverlay {
        id: tui.show_overlay(component, options),
        kind,
    }
}

/// Reads the next result of the active overlay, if it has one.
pub fn poll<T: Terminal>(tui: &mut Tui<T>, active: ActiveOverlay) -> Option<OverlayOutcome> {
    let id = active.id;
    match active.kind {
        OverlayKind::Model => tui
            .overlay_mut::<ModelSelector>(id)?
            .take_outcome()
            .map(OverlayOutcome::Model),
        OverlayKind::ScopedModels => tui
            .overlay_mut::<ScopedModelsSelector>(id)?
            .take_outcome()
            .map(OverlayOutcome::ScopedModels),
        OverlayKind::Sessions => tui
            .overlay_mut::<SessionPicker>(id)?
            .take_outcome()
            .map(OverlayOutcome::Session),
        OverlayKind::Tree => tui
            .overlay_mut::<TreeSelector>(id)?
            .take_outcome()
            .map(OverlayOutcome::Tree),
        OverlayKind::Fork => tui
            .overlay_mut::<UserMessageSelector>(id)?
            .take_outcome()
            .map(OverlayOutcome::Fork),
        OverlayKind::Settings => tui
            .overlay_mut::<SettingsSelector>(id)?
            .take_outcome()
            .map(OverlayOutcome::Settings),
        OverlayKind::AuthMethod => tui
            .overlay_mut::<AuthMethodPicker>(id)?
            .take_outcome()
            .map(OverlayOutcome::AuthMethod),
        OverlayKind::Providers(mode) => tui
            .overlay_mut::<ProviderPicker>(id)?
            .take_outcome()
            .map(|o| OverlayOutcome::Provider(mode, o)),
        OverlayKind::Login => tui
            .overlay_mut::<LoginDialog>(id)?
            .take_outcome()
            .map(OverlayOutcome::Login),
        OverlayKind::Mcp => tui
            .overlay_mut::<McpScreen>(id)?
            .take_outcome()
            .map(OverlayOutcome::Mcp),
    }
}

/// Lets a dialog fed by another thread (the OAuth login) take what arrived; true when it
/// changed and needs drawing.
pub fn pump<T: Terminal>(tui: &mut Tui<T>, active: ActiveOverlay) -> bool {
    match active.kind {
        OverlayKind::Login => tui
            .overlay_mut::<LoginDialog>(active.id)
            .is_some_and(|d| d.poll()),
        OverlayKind::Mcp => tui
            .overlay_mut::<McpScreen>(active.id)
            .is_some_and(|s| s.poll()),
        _ => false,
    }
}
