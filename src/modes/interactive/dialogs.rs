//! Opening the selectors (`/model`, Ctrl+L, `/scoped-models`, `/resume`, `/fork`) and acting
//! on what they hand back. The tree navigator lives in `tree_nav.rs`, the settings menu in
//! `settings_menu.rs`, login and logout in `login_flow.rs`; this file also routes every
//! overlay result to its handler ([`App::apply_overlay_outcome`]) and asks what to do when a
//! resumed session's folder is gone (`missing_cwd.rs`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::app::App;
use super::ext_state::GatedOp;
use super::missing_cwd::{missing_folder, MissingCwdDialog, MissingCwdTarget};
use super::overlays::{Dialog, OverlayKind, OverlayOutcome};
use super::selectors::model::{ModelOutcome, ModelSelector};
use super::selectors::scoped_models::{ScopedModelsOutcome, ScopedModelsSelector};
use super::selectors::session_picker::{SessionOutcome, SessionPicker};
use super::selectors::user_message::{UserMessageOutcome, UserMessageSelector};
use super::standalone::MissingCwdChoice;
use crate::ai::Model;
use crate::harness::model_control::ScopedModel;
use crate::session::dir::{list_all_sessions, list_sessions};
use crate::session::{ops, SessionWriter};
use crate::tui::terminal::Terminal;
use crate::tui::theme;

impl<T: Terminal> App<T> {
    /// Shows `component` as the active dialog.
    pub(super) fn show_dialog<C: Dialog + 'static>(&mut self, component: C, kind: OverlayKind) {
        self.dialogs.open(&mut self.view, component, kind);
        self.tui.request_render();
        // An outcome decided at construction (an empty tree) is acted on at once.
        self.drain_overlay();
    }

    /// Acts on one result of the active dialog.
    pub(super) fn apply_overlay_outcome(&mut self, outcome: OverlayOutcome) {
        let result = match outcome {
            OverlayOutcome::Model(ModelOutcome::Selected(model)) => {
                self.change_model(*model, false)
            }
            OverlayOutcome::Model(ModelOutcome::SelectedAsDefault(model)) => {
                self.change_model(*model, true)
            }
            OverlayOutcome::Thinking(o) => {
                self.apply_thinking_outcome(o);
                Ok(())
            }
            OverlayOutcome::ScopedModels(o) => self.apply_scoped_models(o),
            OverlayOutcome::Session(SessionOutcome::Selected(path)) => self.resume_checked(path),
            OverlayOutcome::MissingCwd(choice, target) => self.apply_missing_cwd(choice, target),
            OverlayOutcome::Session(SessionOutcome::Renamed { path, name }) => {
                self.rename_session(&path, &name)
            }
            OverlayOutcome::Fork(UserMessageOutcome::Selected(id)) => self.gated(GatedOp::Fork(id)),
            OverlayOutcome::Tree(o) => self.apply_tree_outcome(o),
            OverlayOutcome::Rewind(UserMessageOutcome::Selected(id)) => self.rewind_chosen(id),
            OverlayOutcome::RewindChoice(scope, id) => self.apply_rewind(scope, id),
            OverlayOutcome::Settings(o) => self.apply_settings_outcome(o),
            OverlayOutcome::AuthMethod(o) => self.apply_auth_method(o),
            OverlayOutcome::Provider(mode, o) => self.apply_provider_outcome(mode, o),
            OverlayOutcome::Login(o) => self.apply_login_outcome(o),
            OverlayOutcome::Trust(o) => self.apply_trust_outcome(o),
            OverlayOutcome::Mcp(o) => {
                self.mcp_screen_closed(o);
                Ok(())
            }
            OverlayOutcome::Model(ModelOutcome::Cancelled)
            | OverlayOutcome::Session(SessionOutcome::Cancelled)
            | OverlayOutcome::Fork(UserMessageOutcome::Cancelled)
            | OverlayOutcome::Rewind(UserMessageOutcome::Cancelled) => Ok(()),
        };
        if let Err(e) = result {
            self.view.error(&e);
        }
        self.report_write_errors();
        self.tui.request_render();
    }

    /// What `/model` and Ctrl+P choose among: the scope when one is set, else every model
    /// that has credentials.
    pub(super) fn model_candidates(&self) -> Vec<Model> {
        let scoped = self.scoped_models();
        if scoped.is_empty() {
            (self.env.available_models)()
        } else {
            scoped.into_iter().map(|s| s.model).collect()
        }
    }

    /// The session's model scope (also while a run holds the session).
    pub(super) fn scoped_models(&self) -> Vec<ScopedModel> {
        match self.turn.run_state() {
            Some(r) => r.scoped.clone(),
            None => self
                .session(|s| s.scoped_models.clone())
                .unwrap_or_default(),
        }
    }

    /// `/model [search]`: an exact match switches at once, anything else opens the selector
    /// with the search filled in.
    pub(super) fn model_command(&mut self, search: &str) -> Result<(), String> {
        if !search.is_empty() {
            if let Some(model) = exact_model_match(search, &self.model_candidates()) {
                return self.change_model(model, false);
            }
        }
        self.open_model_selector(search);
        Ok(())
    }

    pub(super) fn open_model_selector(&mut self, search: &str) {
        let available = (self.env.available_models)();
        let current = self.current_model();
        let scoped = self.scoped_models().into_iter().map(|s| s.model).collect();
        let mut selector =
            ModelSelector::new(available, current.as_ref(), scoped, theme::current());
        if !search.is_empty() {
            selector = selector.with_search(search);
        }
        if let Some(e) = &self.env.models_error {
            selector = selector.with_error(e.clone());
        }
        let default = self.session(|s| {
            s.settings
                .default_provider()
                .zip(s.settings.default_model())
                .map(|(p, id)| (p.to_string(), id.to_string()))
        });
        if let Some((provider, id)) = default.flatten() {
            selector = selector.with_default(&provider, &id);
        }
        self.show_dialog(selector, OverlayKind::Model);
    }

    /// The model in use (or chosen for the next turn while a run goes on).
    pub(super) fn current_model(&self) -> Option<Model> {
        if !self.env.has_model {
            return None;
        }
        match self.turn.run_state() {
            Some(r) => Some(r.model.clone()),
            None => self.session(|s| s.agent().model.clone()),
        }
    }

    pub(super) fn open_scoped_models(&mut self) -> Result<(), String> {
        let all = (self.env.available_models)();
        if all.is_empty() {
            self.view.status_note("No models available");
            return Ok(());
        }
        let scoped = self.scoped_models();
        let enabled = (!scoped.is_empty()).then(|| {
            scoped
                .iter()
                .map(|s| format!("{}/{}", s.model.provider, s.model.id))
                .collect()
        });
        let selector = ScopedModelsSelector::new(all, enabled, theme::current());
        self.show_dialog(selector, OverlayKind::ScopedModels);
        Ok(())
    }

    fn apply_scoped_models(&mut self, outcome: ScopedModelsOutcome) -> Result<(), String> {
        let all = (self.env.available_models)();
        // Every model enabled is the same as no scope at all.
        let narrowing =
            |ids: Option<Vec<String>>| ids.filter(|v| !v.is_empty() && v.len() < all.len());
        match outcome {
            ScopedModelsOutcome::Changed(ids) => {
                let scoped: Vec<ScopedModel> = narrowing(ids)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|id| all.iter().find(|m| full_id(m) == *id))
                    .map(|m| ScopedModel {
                        model: m.clone(),
                        thinking: None,
                    })
                    .collect();
                self.idle_session(move |s| s.scoped_models = scoped)?;
                // `/model`'s completions follow the scope.
                self.install_autocomplete();
                Ok(())
            }
            ScopedModelsOutcome::Saved(ids) => {
                let ids = narrowing(ids);
                self.idle_session(move |s| match ids {
                    Some(ids) => s.settings.set_global(
                        "enabledModels",
                        Value::Array(ids.into_iter().map(Value::String).collect()),
                    ),
                    None => s.settings.remove_global("enabledModels"),
                })??;
                self.view.status_note("Model selection saved to settings");
                Ok(())
            }
            ScopedModelsOutcome::Cancelled => Ok(()),
        }
    }

    pub(super) fn open_session_picker(&mut self) -> Result<(), String> {
        let current = list_sessions(&self.session_dir());
        let agent_dir = self.env.agent_dir.clone();
        let active = self
            .session(|s| s.session.path().map(Path::to_path_buf))
            .flatten();
        let picker = SessionPicker::new(
            current,
            Box::new(move || list_all_sessions(&agent_dir)),
            active,
            theme::current(),
        )
        .with_rename();
        self.show_dialog(picker, OverlayKind::Sessions);
        Ok(())
    }

    /// Ctrl+R in `/resume`: the open session is named as `/name` does; another session's
    /// file gets the name appended.
    fn rename_session(&mut self, path: &Path, name: &str) -> Result<(), String> {
        let (open, name_set) = (path.to_path_buf(), name.to_string());
        let renamed = self.idle_session(move |s| {
            s.session
                .path()
                .is_some_and(|p| p == open)
                .then(|| ops::set_name(&mut s.session, &name_set))
        })?;
        if let Some(renamed) = renamed {
            renamed?;
            self.refresh_footer();
            return Ok(());
        }
        let (mut writer, _) = SessionWriter::open(path)
            .map_err(|e| format!("Could not open session {}: {e}", path.display()))?;
        writer.take_lease().map_err(|e| e.to_string())?;
        ops::set_name(&mut writer, name)
            .map(|_| ())
            .map_err(String::from)
    }

    pub(super) fn resume(&mut self, path: &Path) -> Result<(), String> {
        let (writer, warnings) = SessionWriter::open(path)
            .map_err(|e| format!("Could not open session {}: {e}", path.display()))?;
        self.adopt(writer)?;
        for w in warnings {
            self.view.warning(&w);
        }
        self.view.status_note("Resumed session");
        Ok(())
    }

    pub(super) fn open_fork_selector(&mut self) -> Result<(), String> {
        let messages = self.idle_session(|s| ops::user_messages_for_fork(&s.session))?;
        if messages.is_empty() {
            self.view.status_note("No messages to fork from");
            return Ok(());
        }
        let selector = UserMessageSelector::new(messages, theme::current());
        self.show_dialog(selector, OverlayKind::Fork);
        Ok(())
    }

    pub(super) fn fork_at(&mut self, entry_id: &str) -> Result<(), String> {
        let (id, dir) = (entry_id.to_string(), self.session_dir());
        let (writer, text) = self.idle_session(move |s| ops::fork_at(&s.session, &id, &dir))??;
        self.adopt(writer)?;
        self.view.editor.set_text(&text);
        self.view.status_note("Forked to new session");
        Ok(())
    }
}

impl<T: Terminal> App<T> {
    /// Switches to the session in `path`, first asking what to do when its folder is gone.
    pub(super) fn resume_checked(&mut self, path: PathBuf) -> Result<(), String> {
        self.ask_if_folder_gone(MissingCwdTarget::Resume(path))
    }

    /// `/import <path>`: asks first when the file's recorded folder is gone (pi 1.5.2).
    pub(super) fn import_checked(&mut self, args: &str) -> Result<(), String> {
        let path = crate::resources::expand_tilde(args);
        if args.is_empty() || !path.is_file() {
            // `import` reports the usage or the missing file.
            return self.gated(GatedOp::Import(args.to_string()));
        }
        let typed = args.to_string();
        self.ask_if_folder_gone(MissingCwdTarget::Import { path, typed })
    }

    /// Shows the Continue / Fork / Cancel question when the session's folder is gone, else
    /// goes ahead.
    fn ask_if_folder_gone(&mut self, target: MissingCwdTarget) -> Result<(), String> {
        match missing_folder(target.path()) {
            Some(stored) => {
                let cwd = self.env.cwd.to_string_lossy().into_owned();
                let dialog = MissingCwdDialog::new(target, &stored, &cwd);
                self.show_dialog(dialog, OverlayKind::MissingCwd);
                Ok(())
            }
            None => self.apply_missing_cwd(MissingCwdChoice::Continue, target),
        }
    }

    /// Continue opens the session (or imports the file) here; Fork copies it next to the
    /// current session first, as `/new` places sessions; Cancel keeps the current session.
    pub(super) fn apply_missing_cwd(
        &mut self,
        choice: MissingCwdChoice,
        target: MissingCwdTarget,
    ) -> Result<(), String> {
        match (choice, target) {
            (MissingCwdChoice::Continue, MissingCwdTarget::Resume(path)) => {
                self.gated(GatedOp::Resume(path))
            }
            (MissingCwdChoice::Continue, MissingCwdTarget::Import { typed, .. }) => {
                self.gated(GatedOp::Import(typed))
            }
            (MissingCwdChoice::Fork, target) => {
                let cwd = self.env.cwd.to_string_lossy().into_owned();
                let forked = crate::session::dir::fork(target.path(), &self.session_dir(), &cwd)
                    .map_err(|e| format!("Could not fork session: {e}"))?;
                self.gated(GatedOp::Resume(forked))
            }
            (MissingCwdChoice::Cancel, MissingCwdTarget::Import { .. }) => {
                self.view.status_note("Import cancelled");
                Ok(())
            }
            (MissingCwdChoice::Cancel, MissingCwdTarget::Resume(_)) => Ok(()),
        }
    }
}

fn full_id(m: &Model) -> String {
    format!("{}/{}", m.provider, m.id)
}

/// pi's exact model reference match: `provider/id` (case-insensitive) or a bare id, only
/// when it names exactly one model.
pub(super) fn exact_model_match(reference: &str, models: &[Model]) -> Option<Model> {
    let wanted = reference.trim().to_lowercase();
    if wanted.is_empty() {
        return None;
    }
    let only = |hits: Vec<&Model>| match hits.as_slice() {
        [one] => Some(Some((*one).clone())),
        [] => None,
        _ => Some(None),
    };
    let canonical = models
        .iter()
        .filter(|m| full_id(m).to_lowercase() == wanted)
        .collect();
    if let Some(found) = only(canonical) {
        return found;
    }
    if let Some((provider, id)) = wanted.split_once('/') {
        let (provider, id) = (provider.trim(), id.trim());
        if !provider.is_empty() && !id.is_empty() {
            let hits = models
                .iter()
                .filter(|m| m.provider.to_lowercase() == provider && m.id.to_lowercase() == id)
                .collect();
            if let Some(found) = only(hits) {
                return found;
            }
        }
    }
    let by_id: Vec<&Model> = models
        .iter()
        .filter(|m| m.id.to_lowercase() == wanted)
        .collect();
    only(by_id).flatten()
}
