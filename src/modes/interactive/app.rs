//! [`App`]: the interactive mode's state and its one UI thread. Each [`App::step`] waits (in
//! one `select!`) for terminal input, an event from the agent's worker thread, output of a
//! user bash command, or the next deadline (a frame, a spinner tick, a pending ESC), handles
//! what came, and lets the [`Tui`] draw at most one frame.
//!
//! The [`AgentSession`] is owned here between runs and by a [`SessionTask`] thread during one;
//! the footer keeps a snapshot so it can show the model and token totals meanwhile. Key
//! handling lives in `keys.rs`, agent events in `events.rs`, slash commands in `commands.rs`.

use std::io;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver};

use super::bash_job::{BashJob, BashUpdate};
use super::chat::ChatItem;
use super::deferred::RunState;
use super::events::RetryCountdown;
use super::footer::{display_cwd, git_branch, Footer, FooterInfo};
use super::header::{Header, HeaderInfo};
use super::overlays::{self, ActiveOverlay};
use super::tree_nav::TreeSummaryJob;
use super::view::View;
use super::InteractiveEnv;
use crate::agent::AgentEvent;
use crate::harness::task::SessionTask;
use crate::harness::AgentSession;
use crate::session::entry::BashExecutionMessage;
use crate::tui::components::editor::Editor;
use crate::tui::components::loader::Loader;
use crate::tui::stdin_buffer::{ParsedInput, StdinBuffer, ESCAPE_TIMEOUT};
use crate::tui::terminal::{Terminal, TerminalEvent};
use crate::tui::theme::{self, Token};
use crate::tui::{InputEvent, Tui};

/// How often spinners and elapsed times move.
const TICK: Duration = Duration::from_millis(80);
/// The longest the loop sleeps when nothing is due.
const IDLE_WAIT: Duration = Duration::from_millis(500);

pub struct App<T: Terminal> {
    pub tui: Tui<T>,
    pub view: View,
    pub(super) env: InteractiveEnv,
    parser: StdinBuffer,
    pending_since: Option<Instant>,
    /// `None` while a task holds it.
    pub(super) session: Option<AgentSession>,
    pub(super) task: Option<SessionTask>,
    pub(super) bash: Option<BashJob>,
    /// `!cmd` results finished while a run held the session.
    pub(super) pending_bash: Vec<BashExecutionMessage>,
    pub(super) overlay: Option<ActiveOverlay>,
    /// When Ctrl+C and Escape were last pressed (a second press soon after acts).
    pub(super) presses: super::keys::DoublePresses,
    pub(super) exit: bool,
    pub(super) tools_expanded: bool,
    pub(super) hide_thinking: bool,
    /// Index in the transcript of the assistant reply being streamed.
    pub(super) streaming: Option<usize>,
    /// The reply being streamed, rebuilt from its deltas.
    pub(super) stream: Option<super::events::StreamState>,
    /// Tool-call id → index in the transcript.
    pub(super) tool_items: std::collections::HashMap<String, usize>,
    /// The model while a run holds the session, and changes waiting for it to return.
    pub(super) run_state: Option<RunState>,
    /// The transcript length right after a compaction summary was shown during this run: when
    /// the run ends the transcript is rebuilt around the compaction entry, as pi does.
    pub(super) compacted_in_run: Option<usize>,
    /// When the pending auto-retry fires, for the "Retrying in Ns" countdown.
    pub(super) retry_countdown: Option<RetryCountdown>,
    /// A branch summary being made before a tree navigation (its task is `task`).
    pub(super) tree_summary: Option<TreeSummaryJob>,
    /// The provider whose login dialog is open.
    pub(super) pending_login: Option<super::selectors::login::ProviderOption>,
    /// Until when a reply to the background-colour query may still pick the theme.
    pub(super) background_query: Option<Instant>,
    /// Extension dialogs, helper jobs and the host (see `extensions.rs`).
    pub(super) ext: super::extensions::ExtensionState,
    /// The clipboard read started by the paste-image key.
    pub(super) clipboard_read: Option<Receiver<super::clipboard_image::ClipboardRead>>,
    last_tick: Instant,
    /// Disconnects when a signal starts pi's shutdown (`util::shutdown`).
    shutdown: Receiver<()>,
}

impl<T: Terminal> App<T> {
    /// Builds the screen for `session` (its history included) on `terminal`.
    pub fn new(terminal: T, session: AgentSession, mut env: InteractiveEnv) -> App<T> {
        let cwd = session.agent().cwd.clone();
        let ext = super::extensions::ExtensionState::new(
            env.extension_ui.take(),
            session.extension_host().cloned(),
        );
        let header = Header {
            info: HeaderInfo::from_resources(&env.resources, &cwd),
            expanded: env.verbose,
            quiet: env.quiet_startup && !env.verbose,
            listing: true,
        };
        let footer = Footer {
            info: FooterInfo {
                cwd: display_cwd(&cwd),
                branch: git_branch(&cwd),
                show_provider: env.provider_count > 1,
                ..FooterInfo::default()
            },
        };
        let editor = Editor::new();
        let mut view = View::new(header, editor, footer);
        if env.tui.fullscreen {
            view.fullscreen = Some(super::fullscreen::Fullscreen::new(env.tui.clone()));
        }
        let mut app = App {
            tui: Tui::new(terminal),
            view,
            parser: StdinBuffer::new(),
            pending_since: None,
            session: Some(session),
            task: None,
            bash: None,
            pending_bash: Vec::new(),
            overlay: None,
            presses: Default::default(),
            exit: false,
            tools_expanded: env.verbose,
            hide_thinking: env.hide_thinking,
            streaming: None,
            stream: None,
            tool_items: Default::default(),
            run_state: None,
            compacted_in_run: None,
            retry_countdown: None,
            tree_summary: None,
            pending_login: None,
            background_query: None,
            ext,
            clipboard_read: None,
            last_tick: Instant::now(),
            shutdown: crate::util::shutdown::notice(),
            env,
        };
        // After the history: rendering it starts the chat afresh.
        app.fill_transcript();
        for notice in std::mem::take(&mut app.env.notices) {
            app.view.warning(&notice);
        }
        app.show_untrusted_warning();
        app.refresh_footer();
        app.install_autocomplete();
        app.list_extensions_in_header();
        app.share_terminal_with_extensions();
        app.list_mcp_in_header();
        if let Some(s) = &app.session {
            s.start_extensions("startup");
        }
        app
    }

    /// Enters raw mode and schedules the first frame.
    pub fn start(&mut self) -> io::Result<()> {
        self.tui.start()?;
        if self.view.fullscreen.is_some() {
            self.tui
                .enter_alt_screen(crate::tui::mouse::enable_sequence());
        }
        self.query_background();
        self.apply_editor_style();
        Ok(())
    }

    /// Leaves the terminal as the shell expects it; a running task is aborted and waited for
    /// so its last lines reach the session file.
    pub fn stop(&mut self) -> io::Result<()> {
        if let Some(job) = &self.bash {
            job.abort.abort();
        }
        if let Some(task) = self.task.take() {
            task.abort.abort();
            while task.events.recv().is_ok() {}
            if let Ok(s) = task.join() {
                self.session = Some(s);
            }
        }
        if let Some(fs) = &self.view.fullscreen {
            // pi's `fullscreenExitOutput`: the session stays readable in the scrollback.
            let trailing = if fs.options.exit_transcript {
                self.view.document()
            } else {
                &[]
            };
            self.tui.leave_alt_screen(trailing)?;
        }
        self.tui.stop()
    }

    pub fn exited(&self) -> bool {
        self.exit
    }

    /// Whether input is held back until the parser can tell a lone Escape from a sequence.
    pub fn parser_pending(&self) -> bool {
        self.pending_since.is_some()
    }

    pub fn is_busy(&self) -> bool {
        self.task.is_some()
    }

    /// The session, when no run holds it.
    pub fn session(&self) -> Option<&AgentSession> {
        self.session.as_ref()
    }

    /// Runs until the user quits.
    pub fn run(&mut self, input: &Receiver<TerminalEvent>) -> io::Result<()> {
        while !self.exit {
            self.step(input, IDLE_WAIT)?;
        }
        Ok(())
    }

    /// Waits for one thing to happen (at most `max_wait`), handles it, and draws if due.
    pub fn step(&mut self, input: &Receiver<TerminalEvent>, max_wait: Duration) -> io::Result<()> {
        let now = Instant::now();
        let mut deadline = now + max_wait;
        if let Some(d) = self.tui.next_deadline() {
            deadline = deadline.min(d);
        }
        if let Some(since) = self.pending_since {
            deadline = deadline.min(since + ESCAPE_TIMEOUT);
        }
        if self.animating() {
            deadline = deadline.min(self.last_tick + TICK);
        }
        if let Some(d) = self
            .view
            .fullscreen
            .as_ref()
            .and_then(|f| f.next_deadline())
        {
            deadline = deadline.min(d);
        }
        if self.ext.dialog_open() {
            // A dialog may time out on the extension's side: notice soon.
            deadline = deadline.min(now + TICK);
        }
        let timeout = deadline.saturating_duration_since(now);
        let never_task = crossbeam_channel::never::<AgentEvent>();
        let never_bash = crossbeam_channel::never::<BashUpdate>();
        let task_events = self.task.as_ref().map(|t| t.events.clone());
        let bash_updates = self.bash.as_ref().map(|b| b.updates.clone());
        let ext_requests = self.ext.requests();
        let ext_actions = self
            .ext
            .actions(self.session.is_some() && self.task.is_none());
        let ext_jobs = self.ext.jobs();
        let never_clipboard = crossbeam_channel::never();
        let clipboard_read = self.clipboard_read.clone();
        select! {
            recv(input) -> ev => match ev {
                Ok(TerminalEvent::Input(bytes)) => self.on_bytes(&bytes),
                Ok(TerminalEvent::Resize) => {
                    self.view.editor.set_terminal_rows(self.tui.terminal().size().1);
                    self.share_terminal_with_extensions();
                    self.tui.request_render();
                }
                // Stdin closed: nobody can type any more.
                Err(_) => self.exit = true,
            },
            recv(task_events.as_ref().unwrap_or(&never_task)) -> ev => match ev {
                Ok(ev) => {
                    self.on_agent_event(ev);
                    // Take what else already arrived so a fast stream costs one frame.
                    while let Some(Ok(ev)) = self.task.as_ref().map(|t| t.events.try_recv()) {
                        self.on_agent_event(ev);
                    }
                }
                Err(_) => self.task_finished(),
            },
            recv(bash_updates.as_ref().unwrap_or(&never_bash)) -> update => {
                self.on_bash_update(update.ok());
            },
            recv(ext_requests) -> request => self.on_extension_request(request),
            recv(ext_actions) -> _ => self.on_extension_actions(),
            recv(ext_jobs) -> done => self.on_extension_job(done),
            recv(clipboard_read.as_ref().unwrap_or(&never_clipboard)) -> read => {
                self.on_clipboard_image(read.ok());
            },
            // A signal: quit as `/quit` does (the run is aborted and waited for, extensions
            // are shut down, the terminal is put back).
            recv(self.shutdown) -> _ => self.exit = true,
            default(timeout) => {}
        }
        self.check_extension_dialog();
        let now = Instant::now();
        if self
            .pending_since
            .is_some_and(|since| now >= since + ESCAPE_TIMEOUT)
        {
            self.pending_since = None;
            let flushed = self.parser.flush_timeout();
            self.on_parsed(flushed);
        }
        if let Some(active) = self.overlay {
            if overlays::pump(&mut self.view, active) {
                self.drain_overlay();
            }
        }
        if self.animating() && now >= self.last_tick + TICK {
            self.last_tick = now;
            self.tick_animations();
        }
        if self.tui.next_deadline().is_some_and(|d| d <= now) {
            self.sync_stream();
        }
        if let Some(fs) = &mut self.view.fullscreen {
            fs.set_height(self.tui.terminal().size().1);
        }
        self.tui.tick(now, &mut self.view)?;
        Ok(())
    }

    fn animating(&self) -> bool {
        self.view.status.is_some()
            || self.bash.is_some()
            || self.task.is_some()
            || self.overlay.is_some_and(|o| {
                matches!(
                    o.kind,
                    overlays::OverlayKind::Login | overlays::OverlayKind::Mcp
                )
            })
    }

    fn tick_animations(&mut self) {
        self.tick_retry_countdown();
        if let Some(loader) = &mut self.view.status {
            loader.tick();
        }
        // Only running items are touched, so the rest of the transcript stays cached.
        let running: Vec<usize> = (0..self.view.chat.len())
            .filter(|&i| match &self.view.chat[i] {
                ChatItem::Bash(b) => b.is_running(),
                ChatItem::Tool(t) => t.is_running(),
                _ => false,
            })
            .collect();
        for i in running {
            match &mut self.view.chat[i] {
                ChatItem::Bash(b) => b.tick(),
                ChatItem::Tool(t) => t.tick(),
                _ => {}
            }
        }
        self.tui.request_render();
    }

    fn on_bytes(&mut self, bytes: &[u8]) {
        let parsed = self.parser.feed(bytes);
        self.pending_since = self.parser.has_pending().then(Instant::now);
        self.on_parsed(parsed);
    }

    fn on_parsed(&mut self, parsed: Vec<ParsedInput>) {
        for p in parsed {
            match p {
                ParsedInput::Event(ev) => self.on_input(&ev),
                ParsedInput::KittyFlags(_) => {
                    self.tui.terminal_mut().kitty_reply_seen();
                    self.parser.set_kitty_active(true);
                }
                ParsedInput::BackgroundColor { r, g, b } => self.on_background(r, g, b),
                ParsedInput::Other(seq) => self.fullscreen_sequence(&seq),
                ParsedInput::CellSize { .. } => {}
            }
        }
    }

    /// One key or paste: overlays first, then the app's keys, then the editor.
    pub fn on_input(&mut self, event: &InputEvent) {
        if self.fullscreen_key(event) {
            return;
        }
        if self.extension_dialog_input(event) {
            return;
        }
        if self.overlay.is_some() {
            self.tui.handle_input(event, &mut self.view);
            self.drain_overlay();
            return;
        }
        // An extension's editor gets every key; it hands pi's own keys back.
        if self.extension_editor_input(event) {
            return;
        }
        if let InputEvent::Key(key) = event {
            if self.handle_app_key(key) || self.run_extension_shortcut(key) {
                self.tui.request_render();
                return;
            }
        }
        self.tui.handle_input(event, &mut self.view);
        if let Some(text) = self.view.editor.take_submitted() {
            self.on_submit(&text);
        }
        self.apply_editor_style();
    }

    /// Acts on every result the active overlay has; closes it on a final one.
    pub(super) fn drain_overlay(&mut self) {
        while let Some(active) = self.overlay {
            let Some(outcome) = overlays::poll(&mut self.view, active) else {
                break;
            };
            if outcome.closes() {
                overlays::close(&mut self.view);
                self.overlay = None;
            }
            self.apply_overlay_outcome(outcome);
        }
        self.tui.request_render();
    }

    /// Editor border in the thinking level's colour (bash mode when the text starts with `!`).
    pub(super) fn apply_editor_style(&mut self) {
        let theme = theme::current();
        let token = if self.view.editor.get_text().trim_start().starts_with('!') {
            Token::BashMode
        } else {
            match self.view.footer.info.thinking {
                Some(level) if self.view.footer.info.reasoning => {
                    theme.thinking_border(level.as_str())
                }
                _ => theme.thinking_border("off"),
            }
        };
        let t = std::sync::Arc::clone(&theme);
        self.view
            .editor
            .set_border_color(Box::new(move |s| t.fg(token, s)));
        let (sel, desc) = (std::sync::Arc::clone(&theme), std::sync::Arc::clone(&theme));
        self.view.editor.set_popup_styles(
            Box::new(move |s| sel.fg(Token::Accent, s)),
            Box::new(move |s| desc.fg(Token::Muted, s)),
        );
    }

    /// Shows the "Working..." indicator (or another message) under the transcript.
    pub(super) fn show_loader(&mut self, spinner: Token, message: String) {
        let theme = theme::current();
        match &mut self.view.status {
            Some(loader) => loader.set_message(message),
            None => self.view.status = Some(Loader::new(theme, spinner, Token::Muted, message)),
        }
        self.tui.request_render();
    }

    /// pi's indicator text while a run goes on (the key is in the start-up hints).
    pub(super) fn working_message() -> String {
        "Working...".into()
    }

    /// The task thread ended: take the session back and settle the screen.
    fn task_finished(&mut self) {
        let Some(task) = self.task.take() else { return };
        let leftover: Vec<String> = task
            .steering
            .clear()
            .into_iter()
            .chain(task.follow_up.clear())
            .map(|m| message_text(&m))
            .collect();
        match task.join() {
            Ok(session) => {
                self.session = Some(session);
                self.run_state = None;
            }
            Err(e) => {
                self.view.error(&format!(
                    "{e}; the session file keeps everything written so far. Restart pi to continue."
                ));
                self.exit = true;
                return;
            }
        }
        self.view.status = None;
        self.retry_countdown = None;
        self.streaming = None;
        self.stream = None;
        self.view.steering.clear();
        self.view.follow_up.clear();
        if let Some(shown_at) = self.compacted_in_run.take() {
            self.rebuild_after_compaction(shown_at);
        }
        if !leftover.is_empty() {
            // Queued messages the run never reached go back to the editor, as pi does.
            self.restore_to_editor(leftover);
        }
        self.flush_pending_bash();
        self.report_write_errors();
        self.refresh_footer();
        if let Some(job) = self.tree_summary.take() {
            self.finish_tree_navigation(job);
        }
        // What an extension command asked of the mode (a new session, quitting).
        self.perform_mode_requests();
        self.tui.request_render();
    }

    pub(super) fn restore_to_editor(&mut self, texts: Vec<String>) {
        let current = self.view.editor.get_text();
        let mut parts: Vec<String> = texts.into_iter().filter(|t| !t.trim().is_empty()).collect();
        if !current.trim().is_empty() {
            parts.push(current);
        }
        self.view.editor.set_text(&parts.join("\n\n"));
    }

    pub(super) fn flush_pending_bash(&mut self) {
        if let Some(s) = self.session.as_mut() {
            for msg in self.pending_bash.drain(..) {
                crate::harness::user_bash::record(s, msg);
            }
        }
    }

    pub(super) fn report_write_errors(&mut self) {
        let errors = self
            .session
            .as_mut()
            .map(|s| std::mem::take(&mut s.write_errors))
            .unwrap_or_default();
        for e in errors {
            self.view.warning(&e);
        }
    }

    pub(super) fn refresh_footer(&mut self) {
        if let Some(s) = &self.session {
            self.view.footer.info.refresh(s, self.env.has_model);
        } else if let Some(r) = &self.run_state {
            self.view.footer.info.set_model(Some(&r.model), r.thinking);
        }
        self.apply_editor_style();
        self.tui.request_render();
    }
}

/// The text of a queued user message.
pub(super) fn message_text(m: &crate::ai::Message) -> String {
    match m {
        crate::ai::Message::User(u) => crate::session::ops::user_content_text(&u.content),
        _ => String::new(),
    }
}
