//! pi's built-in slash commands and what the pickers they open hand back. Commands that
//! change the session run between prompts only; while a run is going they say so.

use std::path::Path;

use super::app::App;
use super::ext_state::{GatedOp, JobDone};
use super::selectors::login::PickerMode;
use crate::session::{ops, SessionWriter};
use crate::tui::components::markdown::Markdown;
use crate::tui::terminal::Terminal;
use crate::tui::theme;
use crate::tui::{keybindings, Component};

/// Name and description of every built-in command, in pi's order.
pub const BUILTIN: &[(&str, &str)] = &[
    ("settings", "Open settings menu"),
    ("model", "Select model (opens selector UI)"),
    ("thinking", "Set thinking level"),
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
    (
        "rewind",
        "Go back to before a message: restore its files, its conversation, or both",
    ),
    ("trust", "Save project trust decision for future sessions"),
    ("login", "Configure provider authentication"),
    ("logout", "Remove provider authentication"),
    (
        "mcp",
        "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
    ),
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
        // The model switch waits for the next prompt, logins need no session.
        let needs_idle = !matches!(
            name,
            "quit"
                | "hotkeys"
                | "changelog"
                | "copy"
                | "session"
                | "model"
                | "thinking"
                | "login"
                | "logout"
                | "trust"
                | "mcp"
        );
        if needs_idle && self.turn.is_running() {
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
                self.view
                    .push(super::chat::ChatItem::Block(Box::new(Markdown::new(
                        md,
                        1,
                        1,
                        theme::current(),
                    ))));
                Ok(())
            }
            "changelog" => {
                self.view.push(super::changelog::view());
                Ok(())
            }
            "copy" => self.copy_last_message(),
            "session" => {
                self.show_session_info();
                Ok(())
            }
            "name" => self.set_name(args),
            "new" => self.gated(GatedOp::New),
            "export" => self.export(args),
            "import" => self.import_checked(args),
            "compact" => {
                let instructions = (!args.is_empty()).then(|| args.to_string());
                self.run_task(move |idle| {
                    // Failures arrive as compaction_end events.
                    let _ = idle
                        .session
                        .compact_with_events(instructions.as_deref(), idle.emit);
                });
                Ok(())
            }
            "clone" => self.gated(GatedOp::Clone),
            "fork" => self.open_fork_selector(),
            "tree" => self.open_tree_selector(None),
            "rewind" => self.open_rewind_selector(),
            "resume" => self.open_session_picker(),
            "model" => self.model_command(args),
            "thinking" => self.thinking_command(args),
            "scoped-models" => self.open_scoped_models(),
            "settings" => self.open_settings(),
            "login" => self.open_provider_picker(PickerMode::Login),
            "logout" => self.open_provider_picker(PickerMode::Logout),
            "mcp" => self.mcp_command(args),
            "reload" => {
                self.reload();
                Ok(())
            }
            "share" => self.share(),
            "trust" => {
                self.open_trust_selector();
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(e) = result {
            self.view.error(&e);
        }
        self.report_write_errors();
        self.tui.request_render();
        true
    }

    pub(super) fn session_dir(&self) -> std::path::PathBuf {
        self.session(|s| {
            s.session
                .path()
                .and_then(Path::parent)
                .map(Path::to_path_buf)
        })
        .flatten()
        .unwrap_or_else(|| self.env.session_dir.clone())
    }

    pub(super) fn copy_last_message(&mut self) -> Result<(), String> {
        let text = self
            .session(|s| ops::last_assistant_text(&s.session))
            .flatten()
            .ok_or("No agent messages to copy yet.")?;
        super::external::copy_to_clipboard(self.tui.terminal_mut(), &text);
        self.view
            .status_note("Copied last agent message to clipboard");
        Ok(())
    }

    fn show_session_info(&mut self) {
        let Some((st, name)) = self.session(|s| {
            let st = ops::stats(&s.session, s.agent().model.context_window);
            (st, s.session.tree().name().map(str::to_string))
        }) else {
            self.view
                .status_note("Session info is available when the agent is idle");
            return;
        };
        let theme = theme::current();
        let b = |t: &str| theme.bold(t);
        let row =
            |label: &str, value: &str| format!("{} {value}", theme.fg(theme::Token::Dim, label));
        let count = |n: u64| super::summaries::format_count(n);
        let mut lines = vec![b("Session Info"), String::new()];
        if let Some(name) = &name {
            lines.push(row("Name:", &super::text_style::safe(name)));
        }
        let file = st.session_file.as_deref().unwrap_or("In-memory");
        lines.push(row("File:", &super::text_style::safe(file)));
        lines.push(row("ID:", &st.session_id));
        lines.push(String::new());
        lines.push(b("Messages"));
        lines.push(row("User:", &st.user_messages.to_string()));
        lines.push(row("Assistant:", &st.assistant_messages.to_string()));
        lines.push(row("Tool Calls:", &st.tool_calls.to_string()));
        lines.push(row("Tool Results:", &st.tool_results.to_string()));
        lines.push(row("Total:", &st.total_messages.to_string()));
        lines.push(String::new());
        lines.push(b("Tokens"));
        lines.push(row("Input:", &count(st.tokens.input)));
        lines.push(row("Output:", &count(st.tokens.output)));
        if st.tokens.cache_read > 0 {
            lines.push(row("Cache Read:", &count(st.tokens.cache_read)));
        }
        if st.tokens.cache_write > 0 {
            lines.push(row("Cache Write:", &count(st.tokens.cache_write)));
        }
        lines.push(row("Total:", &count(st.tokens.total)));
        if st.cost > 0.0 {
            lines.push(String::new());
            lines.push(b("Cost"));
            lines.push(row("Total:", &format!("{:.4}", st.cost)));
        } else {
            // pi's text ends with a newline here, which draws as a blank row.
            lines.push(String::new());
        }
        self.view.push(super::chat::ChatItem::Note(
            crate::tui::components::text::Text::new(lines.join("\n"), 1, 0),
        ));
    }

    /// `/name <name>` names the session; `/name` alone says the name. Both are plain notes,
    /// not status lines (a following status does not replace them), as in pi.
    fn set_name(&mut self, args: &str) -> Result<(), String> {
        if args.is_empty() {
            match self.idle_session(|s| s.session.tree().name().map(str::to_string))? {
                Some(name) => self.view.push(super::chat::ChatItem::note(
                    theme::Token::Dim,
                    &format!("Session name: {name}"),
                )),
                None => self.view.warning("Usage: /name <name>"),
            }
            return Ok(());
        }
        let name = args.to_string();
        self.idle_session(move |s| ops::set_name(&mut s.session, &name))??;
        self.view.push(super::chat::ChatItem::note(
            theme::Token::Dim,
            &format!("Session name set: {}", args.trim()),
        ));
        self.refresh_footer();
        Ok(())
    }

    pub(super) fn new_session(&mut self) -> Result<(), String> {
        let (cwd, persisted) =
            self.idle_session(|s| (s.session.header().cwd.clone(), s.session.is_persisted()))?;
        let writer = if persisted {
            SessionWriter::create(&self.session_dir(), &cwd, None)
        } else {
            SessionWriter::new(&cwd, None, None)
        };
        self.adopt(writer)?;
        let theme = theme::current();
        self.view.push(super::chat::ChatItem::Note(
            crate::tui::components::text::Text::new(
                theme.fg(theme::Token::Accent, "✓ New session started"),
                1,
                1,
            ),
        ));
        Ok(())
    }

    fn export(&mut self, args: &str) -> Result<(), String> {
        let out = (!args.is_empty()).then(|| crate::resources::expand_tilde(args));
        let theme = crate::tui::theme::current().name().to_string();
        let path = self.idle_session(move |s| match &out {
            Some(p) if p.extension().is_some_and(|e| e == "jsonl") => s.export_jsonl(Some(p)),
            _ => s.export_html(out.as_deref(), Some(&theme)),
        })??;
        self.view
            .status_note(&format!("Session exported to: {}", path.display()));
        Ok(())
    }

    pub(super) fn import(&mut self, args: &str) -> Result<(), String> {
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

    pub(super) fn clone_session(&mut self) -> Result<(), String> {
        let dir = self.session_dir();
        let Some(writer) = self.idle_session(move |s| {
            s.session.leaf_id()?;
            Some(ops::clone_branch(&s.session, &dir))
        })?
        else {
            self.view.status_note("Nothing to clone yet");
            return Ok(());
        };
        let writer = writer?;
        self.adopt(writer)?;
        self.view.status_note("Cloned to new session");
        Ok(())
    }

    /// `/share`: the session as HTML in a secret gist. `gh` runs on a helper thread; the
    /// link (or why there is none) comes back as a job's result.
    fn share(&mut self) -> Result<(), String> {
        // A private folder of our own, removed with everything in it when `dir` drops.
        let dir = tempfile::Builder::new()
            .prefix("pi-share-")
            .tempdir()
            .map_err(|e| format!("Could not create a temp folder: {e}"))?;
        let html = dir.path().join("session.html");
        let theme = crate::tui::theme::current().name().to_string();
        let file = self.idle_session(move |s| s.export_html(Some(&html), Some(&theme)))??;
        self.ext.spawn("pi-share", move || {
            let shared = share_gist(&file);
            drop(dir);
            JobDone::Shared(shared)
        });
        Ok(())
    }

    pub(super) fn reload(&mut self) {
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
        }
        self.reload_extensions();
        self.list_extensions_in_header();
        self.list_mcp_in_header();
        self.install_autocomplete();
        if let Err(e) = super::env::load_theme(&self.env) {
            self.view.error(&e);
        }
        self.view.invalidate();
        self.tui.invalidate_overlays();
        self.tui.request_full_render();
        self.view
            .status_note("Reloaded keybindings, extensions, skills, prompts, themes");
    }
}

/// Uploads `file` as a secret gist with the GitHub CLI; the note with its links.
fn share_gist(file: &Path) -> Result<String, String> {
    let gh = |args: &[&std::ffi::OsStr], timeout_secs| {
        crate::util::process::run(
            std::process::Command::new("gh").args(args),
            &crate::util::process::RunOptions {
                timeout: Some(std::time::Duration::from_secs(timeout_secs)),
                max_output: 1 << 20,
                ..Default::default()
            },
        )
    };
    let gh_available =
        gh(&["--version".as_ref()], 10).is_ok_and(|out| out.status.is_some_and(|st| st.success()));
    if !gh_available {
        return Err("GitHub CLI (gh) is not installed. Install it from https://cli.github.com/ to share sessions.".into());
    }
    let args = [
        "gist".as_ref(),
        "create".as_ref(),
        "--public=false".as_ref(),
        file.as_os_str(),
    ];
    let out = gh(&args, 120).map_err(|e| format!("Could not run gh: {e}"))?;
    if out.timed_out {
        return Err("Failed to create gist: gh did not finish within 120s".into());
    }
    if !out.status.is_some_and(|st| st.success()) {
        return Err(format!(
            "Failed to create gist: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let id = url.rsplit('/').next().unwrap_or("");
    Ok(format!(
        "Share URL: https://pi.dev/session/#{id}\nGist: {url}"
    ))
}
