//! Extensions in the terminal UI: what they show (dialogs as overlays, notices as chat notes,
//! footer statuses, widgets, the title, editor text), what they add to the editor (slash
//! commands in autocomplete, keyboard shortcuts), prompts through the session's pipeline
//! (extension `/command` → `input` hooks → template expansion), the session changes they
//! queue, the `session_before_*` questions asked before `/fork`, `/clone`, `/resume`, `/new`,
//! `/import` and `/tree` act, and restarting them on `/reload`.
//!
//! Nothing here blocks the UI thread on an extension: questions, commands run while the agent
//! works, and shortcuts run on short-lived helper threads that report back on a channel the
//! app's loop selects on, so an extension may open a dialog while it decides.

use std::path::Path;
use std::sync::Arc;

use super::app::App;
use super::chat::ChatItem;
use super::ext_state::{GatedOp, JobDone};
use super::ext_ui::{ExtensionDialog, UiRequest};
use super::footer::display_cwd;
use super::selectors::tree::BranchSummary;
use super::text_style::safe;
use crate::ai::Abort;
use crate::extensions::ui::{Answer, Notice};
use crate::extensions::ExtensionHost;
use crate::harness::extensions::{InputSource, UserInput};
use crate::resources::loader::Resources;
use crate::tui::autocomplete::{CombinedProvider, SlashCommand};
use crate::tui::terminal::Terminal;
use crate::tui::theme::Token;
use crate::tui::KeyEvent;

/// Skills and templates expansion that can travel to the session's worker thread.
fn expander(resources: &Resources) -> impl Fn(&str) -> String + Send + 'static {
    let copy = Resources {
        skills: resources.skills.clone(),
        templates: resources.templates.clone(),
        ..Resources::default()
    };
    move |text: &str| copy.expand_input(text)
}

/// pi's footer status text: one line, runs of spaces collapsed.
fn status_text(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\r' | '\n' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    safe(
        &flat
            .split(' ')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
    )
}

impl<T: Terminal> App<T> {
    /// One request from an extension.
    pub(super) fn on_extension_request(
        &mut self,
        request: Result<UiRequest, crossbeam_channel::RecvError>,
    ) {
        let Ok(request) = request else {
            // Every sender is gone: stop watching.
            self.ext.stop_requests();
            return;
        };
        match request {
            UiRequest::Dialog {
                dialog,
                reply,
                withdrawn,
            } => {
                self.ext
                    .queue_dialog(&mut self.tui, dialog, reply, withdrawn);
            }
            UiRequest::Notice(notice) => self.apply_notice(notice),
            UiRequest::Error(e) => self.view.push(ChatItem::note(
                Token::Error,
                &format!("Extension \"{}\" error: {}", e.extension_path, e.error),
            )),
            UiRequest::Stderr(name, line) => self
                .view
                .push(ChatItem::note(Token::Warning, &format!("[{name}] {line}"))),
        }
        self.tui.request_render();
    }

    fn apply_notice(&mut self, notice: Notice) {
        match notice {
            Notice::Notify { message, kind } => match kind.as_deref() {
                Some("error") => self.view.error(&message),
                Some("warning") => self.view.warning(&message),
                _ => self.view.status_note(&message),
            },
            Notice::Status { key, text } => {
                let statuses = &mut self.view.extension.statuses;
                match text {
                    Some(t) => {
                        statuses.insert(key, status_text(&t));
                    }
                    None => {
                        statuses.remove(&key);
                    }
                }
            }
            Notice::Widget {
                key,
                lines,
                placement,
            } => self.view.extension.set_widget(key, lines, placement),
            Notice::Title(title) => self.tui.terminal_mut().set_title(&safe(&title)),
            Notice::EditorText(text) => {
                self.view.editor.set_text(&text);
                self.apply_editor_style();
            }
            other => self.apply_component_notice(other),
        }
    }

    /// The dialog showing now, if it is the extension component `handle`.
    pub(super) fn open_custom_dialog(
        &mut self,
        handle: &crate::extensions::ui::ComponentHandle,
    ) -> Option<&mut ExtensionDialog> {
        self.ext.open_custom_dialog(&mut self.tui, handle)
    }

    /// Ends the dialog showing now with `answer`.
    pub(super) fn answer_open_dialog(&mut self, answer: Answer) {
        self.ext.answer_open_dialog(&mut self.tui, answer);
    }

    /// Extensions queued session changes while pi was idle: apply them (and run the prompts
    /// they start) on the worker.
    pub(super) fn on_extension_actions(&mut self) {
        self.perform_mode_requests();
        let pending = self.ext.host.as_ref().is_some_and(|h| h.has_actions());
        if pending && !self.turn.is_running() {
            self.run_task(|idle| idle.session.run_extension_work(idle.emit));
        }
    }

    pub(super) fn on_extension_job(&mut self, done: Result<JobDone, crossbeam_channel::RecvError>) {
        match done {
            Ok(JobDone::Gate { op, cancelled }) => {
                self.ext.gate_pending = false;
                if cancelled {
                    if matches!(op, GatedOp::Tree { .. }) {
                        self.view.status_note("Navigation cancelled");
                    }
                } else if let Err(e) = self.perform_gated(op) {
                    self.view.error(&e);
                }
                self.report_write_errors();
            }
            Ok(JobDone::Shared(Ok(note))) => self.view.status_note(&note),
            Ok(JobDone::Shared(Err(e))) => self.view.error(&e),
            // Whatever the command or shortcut queued arrives as actions.
            Ok(JobDone::Finished) | Err(_) => {}
        }
        self.tui.request_render();
    }

    /// A prompt typed in the editor, through the session's pipeline on the worker.
    pub(super) fn submit_prompt(&mut self, text: &str) {
        let expand = expander(&self.env.resources);
        let input = UserInput {
            text: text.to_string(),
            images: Vec::new(),
            source: InputSource::Interactive,
        };
        self.run_task(move |idle| idle.session.submit(input, &expand, idle.emit));
    }

    /// Whether `text` is `/name …` for an extension command.
    pub(super) fn is_extension_command(&self, text: &str) -> bool {
        let name = text.strip_prefix('/').and_then(|r| r.split(' ').next());
        match (&self.ext.host, name) {
            (Some(h), Some(n)) => h.has_command(n),
            _ => false,
        }
    }

    /// While the agent works, an extension command runs at once (as in pi) on a helper
    /// thread; the session changes it asks for are applied when the run ends.
    pub(super) fn run_extension_command_now(&mut self, text: &str) -> bool {
        if !self.is_extension_command(text) {
            return false;
        }
        let Some(host) = self.ext.host.clone() else {
            return false;
        };
        let text = text.to_string();
        self.ext.spawn("pi-ext-command", move || {
            host.run_command(&text, &Abort::new(), &mut || {});
            JobDone::Finished
        });
        true
    }

    /// A key an extension registered as a shortcut; true when one did.
    pub(super) fn run_extension_shortcut(&mut self, key: &KeyEvent) -> bool {
        let Some(host) = self.ext.host.clone() else {
            return false;
        };
        let Some((id, _, _)) = host
            .shortcuts()
            .into_iter()
            .find(|(k, _, _)| key.matches(k))
        else {
            return false;
        };
        self.ext.spawn("pi-ext-shortcut", move || {
            host.run_shortcut(&id, &Abort::new(), &mut || {});
            JobDone::Finished
        });
        true
    }

    /// Lists the running extensions in the start-up header, as pi does.
    pub(super) fn list_extensions_in_header(&mut self) {
        self.view.header.info.extensions = self
            .ext
            .host
            .as_ref()
            .map(|h| {
                h.active()
                    .map(|e| (extension_label(&e.source.path), display_cwd(&e.source.path)))
                    .collect()
            })
            .unwrap_or_default();
    }

    /// Built-in commands, templates, skills, then extension commands, for the `/` popup.
    pub(super) fn install_autocomplete(&mut self) {
        let mut commands = super::completions::slash_commands(&self.env, self.model_candidates());
        if let Some(host) = &self.ext.host {
            for c in host.commands() {
                if !commands.iter().any(|b| b.name == c.name) {
                    let arguments = c.completions.then(|| {
                        let (host, name) = (Arc::clone(host), c.name.clone());
                        let complete: crate::tui::autocomplete::ArgumentCompleter =
                            Arc::new(move |prefix: &str| {
                                host.complete_arguments(&name, prefix)
                                    .into_iter()
                                    .map(|(value, label, description)| {
                                        let mut item =
                                            crate::tui::autocomplete::AutocompleteItem::new(
                                                value, label,
                                            );
                                        item.description = description;
                                        item
                                    })
                                    .collect()
                            });
                        complete
                    });
                    commands.push(SlashCommand {
                        name: c.name,
                        description: c.description,
                        arguments,
                        ..SlashCommand::default()
                    });
                }
            }
        }
        let cwd = self.env.cwd.clone();
        self.view
            .editor
            .set_autocomplete_provider(Box::new(CombinedProvider::new(commands, cwd)));
    }

    /// Runs `op` now, or once the extensions that subscribe to its `session_before_*` event
    /// have answered (on a helper thread) and none cancelled.
    pub(super) fn gated(&mut self, op: GatedOp) -> Result<(), String> {
        let gating = op.clone();
        let gate = self.idle_session(move |s| match &gating {
            GatedOp::Fork(id) => s.before_fork(id, "before"),
            // Nothing to clone: `clone_session` says so without asking anyone.
            GatedOp::Clone => s
                .session
                .leaf_id()
                .and_then(|leaf| s.before_fork(leaf, "at")),
            GatedOp::Resume(path) => s.before_switch("resume", path.to_str()),
            GatedOp::Import(args) => {
                let path = crate::resources::expand_tilde(args);
                s.before_switch("resume", path.to_str())
            }
            GatedOp::New => s.before_switch("new", None),
            GatedOp::Tree { entry_id, summary } => {
                let custom = match summary {
                    BranchSummary::Custom(text) => Some(text.as_str()),
                    _ => None,
                };
                s.before_tree(entry_id, *summary != BranchSummary::None, custom)
            }
        })?;
        let Some(gate) = gate else {
            return self.perform_gated(op);
        };
        if self.ext.gate_pending {
            return Err("Waiting for extensions to answer the previous request".into());
        }
        self.ext.gate_pending = true;
        self.ext.spawn("pi-ext-gate", move || JobDone::Gate {
            cancelled: gate.cancelled(),
            op,
        });
        Ok(())
    }

    fn perform_gated(&mut self, op: GatedOp) -> Result<(), String> {
        let before = self.session(|s| {
            let file = s.session.path().map(|p| p.to_string_lossy().into_owned());
            (s.session.session_id().to_string(), file)
        });
        let reason = op.start_reason();
        match op {
            GatedOp::Fork(id) => self.fork_at(&id)?,
            GatedOp::Clone => self.clone_session()?,
            GatedOp::Resume(path) => self.resume(&path)?,
            GatedOp::New => self.new_session()?,
            GatedOp::Import(args) => self.import(&args)?,
            GatedOp::Tree { entry_id, summary } => self.navigate_tree(&entry_id, summary)?,
        }
        if let (Some(reason), Some((id, previous))) = (reason, before) {
            let replaced = self.session(move |s| {
                let replaced = s.session.session_id() != id;
                if replaced {
                    s.session_replaced(reason, previous);
                }
                replaced
            });
            if replaced == Some(true) {
                // The extensions restarted: what their old instances drew goes away.
                self.view.extension.clear();
            }
        }
        Ok(())
    }

    /// `/reload`: stops the extensions and starts them again (with the reloaded resources),
    /// then says what changed. Extension UI state (statuses, widgets, dialogs) is reset.
    pub(super) fn reload_extensions(&mut self) {
        let Some(reload) = &self.env.reload_extensions else {
            return;
        };
        let Some((before, file)) = self.session(|session| {
            let before = session
                .extension_host()
                .map(|h| extension_names(h))
                .unwrap_or_default();
            if let Some(old) = session.extension_host() {
                old.shutdown_for("reload");
            }
            let file = session
                .session
                .path()
                .map(|p| p.to_string_lossy().into_owned());
            (before, file)
        }) else {
            return;
        };
        self.view.extension.clear();
        self.ext.cancel_dialogs(&mut self.tui);
        let reloaded = match reload(&self.env.resources, file) {
            Ok(r) => r,
            Err(e) => {
                self.ext.set_host(None);
                self.view.error(&format!("Reload failed: {e}"));
                return;
            }
        };
        let (tools, system_prompt) = (reloaded.tools, reloaded.system_prompt);
        let (host, registry, models) = (
            Arc::clone(&reloaded.host),
            reloaded.registry,
            reloaded.models,
        );
        self.session(move |session| {
            let agent = session.agent_mut();
            agent.tools = tools;
            agent.system_prompt = system_prompt;
            session.attach_extensions(host, registry, models);
        });
        self.share_terminal_with_extensions();
        self.session(|session| session.start_extensions("reload"));
        let after = extension_names(&reloaded.host);
        self.ext.set_host(Some(reloaded.host));
        for w in &reloaded.warnings {
            self.view.warning(w);
        }
        let added: Vec<&String> = after.iter().filter(|n| !before.contains(n)).collect();
        let removed: Vec<&String> = before.iter().filter(|n| !after.contains(n)).collect();
        let mut change = Vec::new();
        if !added.is_empty() {
            change.push(format!("added {}", join(&added)));
        }
        if !removed.is_empty() {
            change.push(format!("removed {}", join(&removed)));
        }
        if !change.is_empty() {
            self.view.push(ChatItem::note(
                Token::Dim,
                &format!("Extensions: {}", change.join("; ")),
            ));
        }
    }
}

/// An extension's short name: its file name, or its folder's for an `index`/`extension`
/// entry point.
fn extension_label(path: &Path) -> String {
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    match stem.as_deref() {
        Some("index" | "extension") => path
            .parent()
            .and_then(Path::file_name)
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default(),
        _ => file.unwrap_or_default(),
    }
}

fn join(names: &[&String]) -> String {
    names
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The names of the live extensions (their registered name, else the file name).
fn extension_names(host: &ExtensionHost) -> Vec<String> {
    host.active()
        .map(|e| {
            e.registration()
                .name
                .clone()
                .unwrap_or_else(|| e.source.name())
        })
        .collect()
}
