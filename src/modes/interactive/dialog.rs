//! [`Dialog`]: a component shown in the editor's place that hands the app its own results as
//! [`OverlayOutcome`]s, so nothing downcasts it to read them (`overlays.rs` shows it, the app
//! acts on the results). Every dialog's impl is here, beside the two enums they fill.

use super::missing_cwd::{MissingCwdDialog, MissingCwdTarget};
use super::rewind_dialog::RewindChoiceDialog;
use super::selectors::login::{
    LoginDialog, LoginOutcome, PickerMode, ProviderOutcome, ProviderPicker,
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
use crate::tui::Component;

/// A component in the editor's place that says what the user chose.
pub trait Dialog: Component {
    /// The next result, if one is ready. `kind` is what the dialog was opened as (one
    /// component serves `/fork` and `/rewind`, the provider picker both login and logout).
    fn next_outcome(&mut self, kind: OverlayKind) -> Option<OverlayOutcome>;

    /// Takes what another thread sent it (a login flow, MCP sign-ins); true when it changed
    /// and needs drawing.
    fn pump(&mut self) -> bool {
        false
    }
}

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

impl Dialog for ModelSelector {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome().map(OverlayOutcome::Model)
    }
}

impl Dialog for ThinkingSelector {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome().map(OverlayOutcome::Thinking)
    }
}

impl Dialog for ScopedModelsSelector {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome().map(OverlayOutcome::ScopedModels)
    }
}

impl Dialog for SessionPicker {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome().map(OverlayOutcome::Session)
    }
}

impl Dialog for TreeSelector {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome().map(OverlayOutcome::Tree)
    }
}

impl Dialog for UserMessageSelector {
    fn next_outcome(&mut self, kind: OverlayKind) -> Option<OverlayOutcome> {
        let outcome = self.take_outcome()?;
        Some(match kind {
            OverlayKind::Rewind => OverlayOutcome::Rewind(outcome),
            _ => OverlayOutcome::Fork(outcome),
        })
    }
}

impl Dialog for SettingsSelector {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome().map(OverlayOutcome::Settings)
    }
}

impl Dialog for AuthMethodPicker {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome().map(OverlayOutcome::AuthMethod)
    }
}

impl Dialog for ProviderPicker {
    fn next_outcome(&mut self, kind: OverlayKind) -> Option<OverlayOutcome> {
        let mode = match kind {
            OverlayKind::Providers(mode) => mode,
            _ => PickerMode::Login,
        };
        self.take_outcome()
            .map(|o| OverlayOutcome::Provider(mode, o))
    }
}

impl Dialog for LoginDialog {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome().map(OverlayOutcome::Login)
    }

    fn pump(&mut self) -> bool {
        self.poll()
    }
}

impl Dialog for TrustSelector {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome().map(OverlayOutcome::Trust)
    }
}

impl Dialog for McpScreen {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome().map(OverlayOutcome::Mcp)
    }

    fn pump(&mut self) -> bool {
        self.poll()
    }
}

impl Dialog for MissingCwdDialog {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome()
            .map(|(choice, target)| OverlayOutcome::MissingCwd(choice, target))
    }
}

impl Dialog for RewindChoiceDialog {
    fn next_outcome(&mut self, _: OverlayKind) -> Option<OverlayOutcome> {
        self.take_outcome()
            .map(|(scope, entry)| OverlayOutcome::RewindChoice(scope, entry))
    }
}
