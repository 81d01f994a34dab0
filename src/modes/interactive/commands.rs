//! pi's built-in slash commands and what the pickers they open hand back. Commands that
//! change the session run between prompts only; while a run is going they say so.

use std::path::Path;

use super::app::App;
use super::overlays::{ActiveOverlay, ListPicker, OverlayKind, OverlayOutcome, PickPurpose};
use super::view::text_block;
use crate::harness::task::SessionTask;
use crate::session::dir::list_sessions;
use crate::session::{export_html, ops, Entry, SessionWriter};
use crate::tui::components::markdown::Markdown;
use crate::tui::components::select_list::SelectItem;
use crate::tui::terminal::Terminal;
use crate::tui::theme;
use crate::tui::{keybindings, Anchor, Component, OverlayOptions};

/// Name and description of every built-in command, in pi's order.
pub const BUILTIN: &[(&str, &str)] = &[
    ("settings", "Open settings menu"),
    ("model", "Select model (opens selector UI)"),
    ("scoped-models", "Enable/disable models for Ctrl+P cycling"),
    (
        "export",
        "Export session (HTML default, or specify path: .html/.jsonl)",
    ),
    ("import", "Import and resume a session from a JSONL file"),
    ("share", "Share session as a secret GitHub gist"),
    ("copy", "Copy last agent message to clipboard"),
    ("name", "Set session display name"),
    ("session", "Show session info and stats"),
    ("changelog", "Show changelog entries"),
    ("hotkeys", "Show all keyboard shortcuts"),
    ("fork", "Create a new fork from a previous user message"),
    (
        "clone",
        "Duplicate the current session at the current position",
    ),
    ("tree", "Navigate session tree (switch branches)"),
    ("login", "Configure provider authentication"),
    ("logout", "Remove provider authentication"),
    ("new", "Start a new session"),
    ("compact", "Manually compact the session context"),
    ("resume", "Resume a different session"),
    (
        "reload",
        "Reload keybindings, extensions, skills, prompts, and themes",
    ),
    ("quit", "Quit pi"),
];

impl<T: Terminal> App<T> {
    /// Runs `/name args`; returns false when `name` is no built-in command (the text then
    /// goes to the model, where templates and skills expand).
    pub(super) fn run_command(&mut self, name: &str, args: &str) -> bool {
        if !BUILTIN.iter().any(|(n, _)| *n == name) {
            return false;
        }
        let needs_idle = !matches!(name, "quit" | "hotkeys" | "changelog" | "copy" | "session");
        if needs_idle && self.session.is_none() {
            self.view.warning(&format!(
                "Wait for the current response to finish before /{name}."
            ));
            return true;
        }
        let result = match name {
            "quit" => {
                self.exit = true;
                Ok(())
            }
            "hotkeys" => {
                let md = keybindings::hotkeys_markdown(&keybindings::current());
                self.view.push(super::chat::ChatItem::Block(Box::new(Markdown::new(
                    md,
                    1,
                    1,
                    theme::current(),
                ))));
                Ok(())
            }
            "changelog" => {
                self.view.push(text_block(format!(
                    "pi v{} (Rust). No changelog is bundled with this build.",
                    crate::VERSION
                )));
                Ok(())
            }
            "copy" => self.copy_last_message(),
            "session" => {
                self.show_session_info();
                Ok(())
            }
            "name" => self.set_name(args),
            "new" => self.new_session(),
            "export" => self.export(args),
            "import" => self.import(args),
            "compact" => {
                let instructions = (!args.is_empty()).then(|| args.to_string());
                self.run_task(|s| {
                    SessionTask::spawn(
                        s,
                        Box::new(move |s, emit| {
                            // Failures arrive as compaction_end events.
                            let _ = s.compact_with_events(instructions.as_deref(), emit);
                        }),
                    )
                });
                Ok(())
            }
            "clone" => self.clone_session(),
            "fork" => self.open_fork_picker(),
            "tree" => self.open_tree_picker(),
            "resume" => self.open_resume_picker(),
            "model" => {
                self.open_model_picker(args);
                Ok(())
            }
            "reload" => {
                self.reload();
                Ok(())
            }
            "share" => self.share(),
            "logout" => self.open_logout_picker(),
            // The selectors branch provides these dialogs (see overlays.rs).
            "settings" | "scoped-models" | "login" => Err(format!(
                "/{name} is not available in this build yet. Use `pi --login` or edit settings.json."
            )),
            _ => Ok(()),
        };
        if let Err(e) = result {
            self.view.error(&e);
        }
        self.report_write_errors();
        self.tui.request_render();
        true
    }

    fn session_dir(&self) -> std::path::PathBuf {
        self.session
            .as_ref()
            .and_then(|s| s.session.path())
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.env.session_dir.clone())
    }

    fn copy_last_message(&mut self) -> Result<(), String> {
        let text = self
            .session
            .as_ref()
            .and_then(|s| ops::last_assistant_text(&s.session))
            .ok_or("No agent messages to copy yet.")?;
        super::external::copy_to_clipboard(self.tui.terminal_mut(), &text);
        self.view
            .status_note("Copied last agent message to clipboard");
        Ok(())
    }

    fn show_session_info(&mut self) {
        let Some(s) = &self.session else {
            self.view
                .status_note("Session info is available when the agent is idle");
            return;
        };
        let st = ops::stats(&s.session, s.agent().model.context_window);
        let theme = theme::current();
        let b = |t: &str| theme.bold(t);
        let mut lines = vec![b("Session Info"), String::new()];
        if let Some(name) = s.session.tree().name() {
            lines.push(format!("{} {}", b("Name:"), super::chat::safe(name)));
        }
        lines.push(format!(
            "{} {}",
            b("File:"),
            super::chat::safe(st.session_file.as_deref().unwrap_or("In-memory"))
        ));
        lines.push(format!("{} {}", b("ID:"), st.session_id));
        lines.push(String::new());
        lines.push(b("Messages"));
        lines.push(format!("{} {}", b("User:"), st.user_messages));
        lines.push(format!("{} {}", b("Assistant:"), st.assistant_messages));
        lines.push(format!("{} {}", b("Tool Calls:"), st.tool_calls));
        lines.push(format!("{} {}", b("Tool Results:"), st.tool_results));
        lines.push(format!("{} {}", b("Total:"), st.total_messages));
        lines.push(String::new());
        lines.push(b("Tokens"));
        lines.push(format!("{} {}", b("Input:"), st.tokens.input));
        lines.push(format!("{} {}", b("Output:"), st.tokens.output));
        if st.tokens.cache_read > 0 {
            lines.push(format!("{} {}", b("Cache Read:"), st.tokens.cache_read));
        }
        if st.tokens.cache_write > 0 {
            lines.push(format!("{} {}", b("Cache Write:"), st.tokens.cache_write));
        }
        lines.push(format!("{} {}", b("Total:"), st.tokens.total));
        if st.cost > 0.0 {
            lines.push(String::new());
            lines.push(b("Cost"));
            lines.push(format!("{} {:.4}", b("Total:"), st.cost));
        }
        self.view.push(super::chat::ChatItem::Note(
            crate::tui::components::text::Text::new(lines.join("\n"), 1, 0),
        ));
    }

    fn set_name(&mut self, args: &str) -> Result<(), String> {
        if args.is_empty() {
            return Err("Usage: /name <name>".into());
        }
        let s = self.session.as_mut().ok_or("busy")?;
        ops::set_name(&mut s.session, args)?;
        self.view
            .status_note(&format!("Session name set: {}", args.trim()));
        self.refresh_footer();
        Ok(())
    }

    fn new_session(&mut self) -> Result<(), String> {
        let s = self.session.as_ref().ok_or("busy")?;
        let cwd = s.session.header().cwd.clone();
        let writer = if s.session.is_persisted() {
            SessionWriter::create(&self.session_dir(), &cwd, None)
        } else {
            SessionWriter::new(&cwd, None, None)
        };
        self.adopt(writer)?;
        self.view.status_note("New session started");
        Ok(())
    }

    fn export(&mut self, args: &str) -> Result<(), String> {
        let s = self.session.as_ref().ok_or("busy")?;
        let out = (!args.is_empty()).then(|| crate::resources::expand_tilde(args));
        let path = match &out {
            Some(p) if p.extension().is_some_and(|e| e == "jsonl") => {
                let source = s
                    .session
                    .path()
                    .filter(|p| p.exists())
                    .ok_or("Nothing to export yet: the session has no file.")?;
                std::fs::copy(source, p)
                    .map_err(|e| format!("Could not export to {}: {e}", p.display()))?;
                p.clone()
            }
            _ => export_html::export_session_html(&s.session, out.as_deref())?,
        };
        self.view
            .status_note(&format!("Session exported to: {}", path.display()));
        Ok(())
    }

    fn import(&mut self, args: &str) -> Result<(), String> {
        if args.is_empty() {
            return Err("Usage: /import <path.jsonl>".into());
        }
        let path = crate::resources::expand_tilde(args);
        let (writer, warnings) = SessionWriter::open(&path)
            .map_err(|e| format!("Could not import {}: {e}", path.display()))?;
        self.adopt(writer)?;
        for w in warnings {
            self.view.warning(&w);
        }
        self.view
            .status_note(&format!("Session imported from: {}", path.display()));
        Ok(())
    }

    fn clone_session(&mut self) -> Result<(), String> {
        let s = self.session.as_ref().ok_or("busy")?;
        if s.session.leaf_id().is_none() {
            self.view.status_note("Nothing to clone yet");
            return Ok(());
        }
        let writer = ops::clone_branch(&s.session, &self.session_dir())?;
        self.adopt(writer)?;
        self.view.status_note("Cloned to new session");
        Ok(())
    }

    fn show_picker(
        &mut self,
        title: &str,
        purpose: PickPurpose,
        items: Vec<SelectItem>,
        selected: usize,
    ) {
        let picker = ListPicker::new(title, items, selected);
        let options = OverlayOptions {
            anchor: Anchor::BottomCenter,
            ..OverlayOptions::default()
        };
        let id = self.tui.show_overlay(picker, options);
        self.overlay = Some(ActiveOverlay {
            id,
            kind: OverlayKind::List(purpose),
        });
    }

    fn open_fork_picker(&mut self) -> Result<(), String> {
        let s = self.session.as_ref().ok_or("busy")?;
        let messages = ops::user_messages_for_fork(&s.session);
        if messages.is_empty() {
            self.view.status_note("No messages to fork from");
            return Ok(());
        }
        let n = messages.len();
        let items = messages
            .into_iter()
            .map(|(id, text)| SelectItem::new(id).label(one_line(&text)))
            .collect();
        self.show_picker("Fork from message", PickPurpose::Fork, items, n - 1);
        Ok(())
    }

    fn open_tree_picker(&mut self) -> Result<(), String> {
        let s = self.session.as_ref().ok_or("busy")?;
        let items: Vec<SelectItem> = s
            .session
            .entries()
            .iter()
            .filter_map(|e| match e {
                Entry::Message(m) => match &m.message {
                    crate::session::AgentMessage::Llm(crate::ai::Message::User(u)) => Some(
                        SelectItem::new(m.id.clone())
                            .label(one_line(&ops::user_content_text(&u.content))),
                    ),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        if items.is_empty() {
            self.view.status_note("No entries in session");
            return Ok(());
        }
        let n = items.len();
        self.show_picker(
            "Go back to a message (its text returns to the editor)",
            PickPurpose::Tree,
            items,
            n - 1,
        );
        Ok(())
    }

    fn open_resume_picker(&mut self) -> Result<(), String> {
        let mut sessions = list_sessions(&self.session_dir());
        sessions.sort_by_key(|s| std::cmp::Reverse(s.modified_ms));
        let current = self
            .session
            .as_ref()
            .and_then(|s| s.session.path().map(Path::to_path_buf));
        sessions.retain(|s| Some(&s.path) != current.as_ref());
        if sessions.is_empty() {
            self.view.status_note("No other sessions in this project");
            return Ok(());
        }
        let items = sessions
            .into_iter()
            .map(|s| {
                let label = s.name.clone().unwrap_or_else(|| one_line(&s.first_message));
                SelectItem::new(s.path.to_string_lossy().into_owned())
                    .label(label)
                    .description(format!("{} messages", s.message_count))
            })
            .collect();
        self.show_picker("Resume session", PickPurpose::Resume, items, 0);
        Ok(())
    }

    pub(super) fn open_model_picker(&mut self, search: &str) {
        let models = (self.env.available_models)();
        if models.is_empty() {
            self.view.status_note("No models available");
            return;
        }
        let current = self.session.as_ref().map(|s| {
            let m = &s.agent().model;
            format!("{}/{}", m.provider, m.id)
        });
        if !search.is_empty() {
            let exact: Vec<_> = models
                .iter()
                .filter(|m| m.id == search || format!("{}/{}", m.provider, m.id) == search)
                .collect();
            if exact.len() == 1 {
                let value = format!("{}/{}", exact[0].provider, exact[0].id);
                self.apply_overlay_outcome(OverlayOutcome::Picked(PickPurpose::Model, Some(value)));
                return;
            }
        }
        let selected = models
            .iter()
            .position(|m| Some(format!("{}/{}", m.provider, m.id)) == current)
            .unwrap_or(0);
        let items = models
            .iter()
            .map(|m| {
                SelectItem::new(format!("{}/{}", m.provider, m.id))
                    .label(m.id.clone())
                    .description(format!("[{}]", m.provider))
            })
            .collect();
        self.show_picker("Select model", PickPurpose::Model, items, selected);
        // A search given with the command starts the list filtered.
        if let Some(active) = self.overlay {
            if let Some(picker) = self.tui.overlay_mut::<ListPicker>(active.id) {
                picker.set_filter(search);
            }
        }
    }

    fn open_logout_picker(&mut self) -> Result<(), String> {
        let auth = crate::resources::auth::AuthStorage::load(self.env.agent_dir.join("auth.json"));
        let providers = auth.list();
        if providers.is_empty() {
            self.view.status_note("No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged.");
            return Ok(());
        }
        let items = providers.into_iter().map(SelectItem::new).collect();
        self.show_picker("Remove credentials for", PickPurpose::Logout, items, 0);
        Ok(())
    }

    fn share(&mut self) -> Result<(), String> {
        let s = self.session.as_ref().ok_or("busy")?;
        let gh_available = std::process::Command::new("gh")
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|st| st.success());
        if !gh_available {
            return Err("GitHub CLI (gh) is not installed. Install it from https://cli.github.com/ to share sessions.".into());
        }
        let dir = std::env::temp_dir().join(format!("pi-share-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let file = export_html::export_session_html(&s.session, Some(&dir.join("session.html")))?;
        let out = std::process::Command::new("gh")
            .args(["gist", "create", "--public=false"])
            .arg(&file)
            .output()
            .map_err(|e| format!("Could not run gh: {e}"))?;
        let _ = std::fs::remove_dir_all(&dir);
        if !out.status.success() {
            return Err(format!(
                "Failed to create gist: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let id = url.rsplit('/').next().unwrap_or("");
        self.view.status_note(&format!(
            "Share URL: https://pi.dev/session/#{id}\nGist: {url}"
        ));
        Ok(())
    }

    fn reload(&mut self) {
        let loaded = keybindings::load(&self.env.agent_dir);
        for w in &loaded.warnings {
            self.view.warning(w);
        }
        keybindings::install(loaded.bindings);
        if let Some(reload) = &self.env.reload_resources {
            self.env.resources = reload();
            let cwd = self.env.cwd.clone();
            self.view.header.info =
                super::header::HeaderInfo::from_resources(&self.env.resources, &cwd);
            self.view.editor.set_autocomplete_provider(Box::new(
                crate::tui::autocomplete::CombinedProvider::new(
                    super::app::slash_commands(&self.env),
                    cwd,
                ),
            ));
        }
        if let Err(e) = super::load_theme(&self.env) {
            self.view.error(&e);
        }
        self.view.invalidate();
        self.tui.invalidate_overlays();
        self.tui.request_full_render();
        self.view
            .status_note("Reloaded keybindings, skills, prompts, context files, themes");
    }

    /// Acts on what an overlay handed back.
    pub(super) fn apply_overlay_outcome(&mut self, outcome: OverlayOutcome) {
        let OverlayOutcome::Picked(purpose, value) = outcome;
        let Some(value) = value else {
            self.tui.request_render();
            return;
        };
        let result = match purpose {
            PickPurpose::Model => self.switch_model(&value),
            PickPurpose::Resume => SessionWriter::open(Path::new(&value))
                .map_err(|e| format!("Could not open session {value}: {e}"))
                .and_then(|(w, _)| self.adopt(w))
                .map(|_| self.view.status_note("Resumed session")),
            PickPurpose::Fork => self.fork_at(&value),
            PickPurpose::Tree => self.navigate_to(&value),
            PickPurpose::Logout => {
                let mut auth =
                    crate::resources::auth::AuthStorage::load(self.env.agent_dir.join("auth.json"));
                auth.remove(&value).map(|_| {
                    self.view.status_note(&format!("Logged out of {value}"));
                })
            }
        };
        if let Err(e) = result {
            self.view.error(&e);
        }
        self.report_write_errors();
        self.tui.request_render();
    }

    fn switch_model(&mut self, value: &str) -> Result<(), String> {
        let model = (self.env.available_models)()
            .into_iter()
            .find(|m| format!("{}/{}", m.provider, m.id) == value)
            .ok_or_else(|| format!("Model not found: {value}"))?;
        let credentials = (self.env.credentials)(&model)?;
        let s = self
            .session
            .as_mut()
            .ok_or("Wait for the current response to finish first")?;
        s.set_model(model.clone(), credentials)?;
        self.env.has_model = true;
        self.view.status_note(&format!("Model: {}", model.id));
        self.refresh_footer();
        Ok(())
    }

    fn fork_at(&mut self, entry_id: &str) -> Result<(), String> {
        let s = self.session.as_ref().ok_or("busy")?;
        let (writer, text) = ops::fork_at(&s.session, entry_id, &self.session_dir())?;
        self.adopt(writer)?;
        self.view.editor.set_text(&text);
        self.view.status_note("Forked to new session");
        Ok(())
    }

    fn navigate_to(&mut self, entry_id: &str) -> Result<(), String> {
        let s = self.session.as_mut().ok_or("busy")?;
        let (parent, text) = match s.session.tree().get(entry_id) {
            Some(Entry::Message(m)) => (
                m.parent_id.clone(),
                match &m.message {
                    crate::session::AgentMessage::Llm(crate::ai::Message::User(u)) => {
                        ops::user_content_text(&u.content)
                    }
                    _ => String::new(),
                },
            ),
            _ => return Err(format!("Entry {entry_id} not found")),
        };
        match parent {
            Some(p) => s.session.branch(&p)?,
            None => s.session.reset_leaf(),
        }
        let ctx = s.session.build_context();
        s.agent_mut().messages = crate::session::to_llm_messages(&ctx.messages);
        self.render_history();
        self.view.editor.set_text(&text);
        self.view.status_note("Navigated to selected point");
        self.refresh_footer();
        Ok(())
    }
}

/// The first line of `text`, for list labels.
fn one_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    super::chat::safe(line.trim())
}
