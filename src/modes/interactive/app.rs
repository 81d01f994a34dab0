//! [`App`]: the interactive mode's state and its one UI thread. Each [`App::step`] waits (in
//! one `select!`) for terminal input, an event from the agent's worker thread, output of a
//! user bash command, or the next deadline (a frame, a spinner tick, a pending ESC), handles
//! what came, and lets the [`Tui`] draw at most one frame.
//!
//! The [`AgentSession`] lives on the session actor's thread; the app reaches it only through
//! its [`SessionLink`] (work to run, reads and changes between runs, the events coming back).
//! While a run goes on the footer shows what `turn.rs` keeps of the model. Key
//! handling lives in `keys.rs`, agent events in `events.rs`, slash commands in `commands.rs`;
//! the state they share is grouped in `turn`, `jobs`, `overlays`, `input` and `ext_state`.

use std::io;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use super::app_event::{AppEvent, Sources};
use super::background::BackgroundQuery;
use super::chat::ChatItem;
use super::env::InteractiveEnv;
use super::events;
use super::ext_state::ExtensionState;
use super::external::copy_to_clipboard;
use super::footer::{display_cwd, git_branch, Footer, FooterInfo};
use super::fullscreen::Fullscreen;
use super::header::{Header, HeaderInfo, QuietStartup};
use super::input::InputState;
use super::jobs::Jobs;
use super::overlays::{Dialogs, OverlayKind};
use super::session_link::{FromSession, SessionLink};
use super::turn::{message_text, Turn};
use super::view::View;
use crate::harness::AgentSession;
use crate::tui::components::editor::Editor;
use crate::tui::mouse;
use crate::tui::stdin_buffer::ParsedInput;
use crate::tui::terminal::{Terminal, TerminalEvent};
use crate::tui::theme::{self, Token};
use crate::tui::{InputEvent, Tui};

/// How often spinners and elapsed times move.
const TICK: Duration = Duration::from_millis(80);
/// The longest the loop sleeps when nothing is due.
const IDLE_WAIT: Duration = Duration::from_millis(500);

/// The interactive mode: the screen, the session between runs, and one state group per
/// concern, each owning its methods — [`Turn`] (the run in progress), [`Jobs`] (background
/// work), [`Dialogs`] (the dialog in the editor's place), [`InputState`] (parsing keys),
/// [`ExtensionState`] and [`BackgroundQuery`]. Feature files (`keys.rs`, `commands.rs`, …)
/// add methods that combine them; this file composes them and runs the loop.
pub struct App<T: Terminal> {
    pub tui: Tui<T>,
    pub view: View,
    pub(super) env: InteractiveEnv,
    /// The session actor (see `session_link.rs`).
    pub(super) link: SessionLink,
    pub(super) turn: Turn,
    pub(super) jobs: Jobs,
    pub(super) dialogs: Dialogs,
    pub(super) input: InputState,
    /// Extension dialogs, helper jobs and the host (see `ext_state.rs`, `extensions.rs`).
    pub(super) ext: ExtensionState,
    pub(super) background: BackgroundQuery,
    pub(super) exit: bool,
    last_tick: Instant,
    /// Disconnects when a signal starts pi's shutdown (`util::shutdown`).
    shutdown: Receiver<()>,
    /// The terminal title last written; `None` until the terminal is started.
    title: Option<String>,
}

impl<T: Terminal> App<T> {
    /// Builds the screen for `session` (its history included) on `terminal`, and hands the
    /// session to its actor. `Err` when the actor's thread could not start.
    pub fn new(
        terminal: T,
        session: AgentSession,
        mut env: InteractiveEnv,
    ) -> Result<App<T>, String> {
        let cwd = session.agent().cwd.clone();
        let ext = ExtensionState::new(env.extension_ui.take(), session.extension_host().cloned());
        let link = SessionLink::spawn(session, env.has_model, env.session_dir.clone())?;
        let header = Header {
            info: HeaderInfo::from_resources(&env.resources, &cwd),
            expanded: env.verbose,
            quiet: env.quiet_startup == QuietStartup::On && !env.verbose,
            details: env.quiet_startup == QuietStartup::Off || env.verbose,
            logo: super::header::supports_logo(),
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
        view.tools_expanded = env.verbose;
        view.hide_thinking = env.hide_thinking;
        if env.tui.fullscreen {
            view.fullscreen = Some(Fullscreen::new(env.tui.clone()));
        }
        let mut app = App {
            tui: Tui::new(terminal),
            view,
            link,
            turn: Turn::default(),
            jobs: Jobs::default(),
            dialogs: Dialogs::default(),
            input: InputState::new(),
            ext,
            background: BackgroundQuery::default(),
            exit: false,
            last_tick: Instant::now(),
            shutdown: crate::util::shutdown::notice(),
            title: None,
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
        app.session(|s| s.start_extensions("startup"));
        Ok(app)
    }

    /// Enters raw mode and schedules the first frame.
    pub fn start(&mut self) -> io::Result<()> {
        self.tui.start()?;
        if self.view.fullscreen.is_some() {
            self.tui
                .enter_alt_screen(crate::tui::mouse::enable_sequence());
        }
        self.background
            .send(self.tui.terminal_mut(), self.env.theme.as_deref());
        self.apply_editor_style();
        self.title = Some(String::new());
        self.update_title();
        Ok(())
    }

    /// pi's terminal title, `π - <session name> - <folder>` (`π - <folder>` without a name),
    /// written when it changes: at start-up, on a rename, on a session switch. The terminal
    /// replaces the control characters a name may carry.
    fn update_title(&mut self) {
        let Some(last) = &self.title else {
            return;
        };
        let folder = self
            .env
            .cwd
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let title = match &self.view.footer.info.session_name {
            Some(name) => format!("π - {name} - {folder}"),
            None => format!("π - {folder}"),
        };
        if *last != title {
            self.tui.terminal_mut().set_title(&title);
            self.title = Some(title);
        }
    }

    /// Leaves the terminal as the shell expects it; a running task is aborted and waited for
    /// so its last lines reach the session file.
    pub fn stop(&mut self) -> io::Result<()> {
        self.jobs.abort_bash();
        if self.turn.finish().is_some() {
            self.link.abort();
            // Until the work is over, so its last lines reach the session file.
            while let Ok(ev) = self.link.events().recv() {
                if matches!(ev, FromSession::WorkDone { .. }) {
                    break;
                }
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
        self.input.pending()
    }

    pub fn is_busy(&self) -> bool {
        self.turn.is_running()
    }

    /// Runs `f` on the session (on its actor's thread) and returns what it gives; `None` while
    /// a run holds it (the app then asks nothing of it) or once its thread is gone.
    pub fn session<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut AgentSession) -> R + Send + 'static,
    ) -> Option<R> {
        if self.turn.is_running() {
            return None;
        }
        self.link.idle(f)
    }

    /// [`session`](Self::session), saying why not when it cannot be reached (a run holds it,
    /// or its thread is gone).
    pub(super) fn idle_session<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut AgentSession) -> R + Send + 'static,
    ) -> Result<R, String> {
        if self.turn.is_running() {
            return Err(super::turn::BUSY.into());
        }
        self.link
            .idle(f)
            .ok_or_else(|| super::session_link::SESSION_GONE.into())
    }

    /// Ends the session's actor and takes the session back, for the mode's last words (after
    /// [`stop`](Self::stop)); `None` when its thread failed.
    pub fn finish_session(&mut self) -> Option<AgentSession> {
        self.link.finish()
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
        if let Some(due) = self.input.deadline() {
            deadline = deadline.min(due);
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
        let sources = Sources {
            input,
            session: self.link.events(),
            bash: self.jobs.bash_updates(),
            ext_requests: self.ext.requests(),
            ext_actions: self.ext.actions(!self.turn.is_running()),
            jobs: self.ext.jobs(),
            clipboard: self.jobs.clipboard(),
            shutdown: &self.shutdown,
        };
        let event = AppEvent::next(&sources, timeout);
        self.handle(event);
        self.ext.check_withdrawn(&mut self.tui);
        let now = Instant::now();
        if let Some(flushed) = self.input.flush_due(now) {
            self.on_parsed(flushed);
        }
        if self.dialogs.pump(&mut self.view) {
            self.drain_overlay();
        }
        if self.animating() && now >= self.last_tick + TICK {
            self.last_tick = now;
            self.tick_animations();
        }
        if self.tui.next_deadline().is_some_and(|d| d <= now) {
            self.turn.sync_stream(&mut self.view);
        }
        if let Some(fs) = &mut self.view.fullscreen {
            fs.set_height(self.tui.terminal().size().1);
        }
        self.tui.tick(now, &mut self.view)?;
        Ok(())
    }

    /// Acts on one event: the one place every event of the mode is handled.
    fn handle(&mut self, event: AppEvent) {
        match event {
            AppEvent::Terminal(Some(TerminalEvent::Input(bytes))) => self.on_bytes(&bytes),
            AppEvent::Terminal(Some(TerminalEvent::Resize)) => {
                self.view
                    .editor
                    .set_terminal_rows(self.tui.terminal().size().1);
                self.share_terminal_with_extensions();
                self.tui.request_render();
            }
            AppEvent::Terminal(Some(TerminalEvent::Suspend)) => {
                if let Err(e) = self.tui.suspend() {
                    self.view.error(&format!("Could not suspend: {e}"));
                }
            }
            // Stdin closed: nobody can type any more.
            AppEvent::Terminal(None) => self.exit = true,
            AppEvent::Session(ev) => {
                self.tui.request_render();
                let mut next = ev;
                // Take what else already arrived so a fast stream costs one frame.
                while let Some(ev) = next.take() {
                    match ev {
                        FromSession::Agent(ev) => {
                            events::on_agent_event(&mut self.turn, &mut self.view, &self.ext, ev);
                            next = self.link.events().try_recv().ok();
                        }
                        FromSession::WorkDone { failed } => self.task_finished(failed),
                    }
                }
            }
            AppEvent::Bash(update) => self.on_bash_update(update),
            AppEvent::ExtensionRequest(request) => self.on_extension_request(request),
            AppEvent::ExtensionActions => self.on_extension_actions(),
            AppEvent::Job(done) => self.on_extension_job(done),
            AppEvent::ClipboardImage(read) => {
                self.jobs
                    .on_clipboard_image(&mut self.view, &self.env.clipboard, read);
                self.tui.request_render();
            }
            // A signal: quit as `/quit` does (the run is aborted and waited for, extensions
            // are shut down, the terminal is put back).
            AppEvent::Shutdown => self.exit = true,
            AppEvent::Timeout => {}
        }
    }

    fn animating(&self) -> bool {
        self.view.status.is_some()
            || self.jobs.bash_running()
            || self.turn.is_running()
            || matches!(
                self.dialogs.kind(),
                Some(OverlayKind::Login | OverlayKind::Mcp)
            )
    }

    fn tick_animations(&mut self) {
        self.turn.tick_retry_countdown(&mut self.view);
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
        let parsed = self.input.feed(bytes);
        self.on_parsed(parsed);
    }

    fn on_parsed(&mut self, parsed: Vec<ParsedInput>) {
        for p in parsed {
            match p {
                ParsedInput::Event(ev) => self.on_input(&ev),
                ParsedInput::KittyFlags(_) => {
                    self.tui.terminal_mut().kitty_reply_seen();
                    self.input.set_kitty_active();
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
        if self.ext.dialog_input(&mut self.tui, &mut self.view, event) {
            return;
        }
        if self.dialogs.is_open() {
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
        while let Some(outcome) = self.dialogs.next_outcome(&mut self.view) {
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
        self.view.show_loader(spinner, message);
        self.tui.request_render();
    }

    /// The work on the session is over: settle the screen (`failed`: it failed and took the
    /// session's thread with it).
    fn task_finished(&mut self, failed: bool) {
        let Some((steering, follow_up)) = self.turn.finish() else {
            return;
        };
        let leftover: Vec<String> = steering
            .clear()
            .into_iter()
            .chain(follow_up.clear())
            .map(|m| message_text(&m))
            .collect();
        if failed {
            self.view.error(
                "the agent run failed unexpectedly; the session file keeps everything written so far. Restart pi to continue.",
            );
            self.exit = true;
            return;
        }
        self.turn.end();
        self.view.status = None;
        self.turn.settle();
        self.view.steering.clear();
        self.view.follow_up.clear();
        if let Some(shown_at) = self.turn.take_compaction_mark() {
            self.rebuild_after_compaction(shown_at);
        }
        if !leftover.is_empty() {
            // Queued messages the run never reached go back to the editor, as pi does.
            self.restore_to_editor(leftover);
        }
        self.flush_pending_bash();
        self.report_write_errors();
        self.refresh_footer();
        if let Some(job) = self.jobs.take_tree_summary() {
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
        if self.turn.is_running() {
            return;
        }
        let pending = self.jobs.take_pending_bash();
        if !pending.is_empty() {
            self.session(move |s| {
                for msg in pending {
                    crate::harness::user_bash::record(s, msg);
                }
            });
        }
    }

    pub(super) fn report_write_errors(&mut self) {
        let errors = self
            .session(|s| std::mem::take(&mut s.write_errors))
            .unwrap_or_default();
        for e in errors {
            self.view.warning(&e);
        }
    }

    pub(super) fn refresh_footer(&mut self) {
        if let Some(r) = self.turn.run_state() {
            self.view.footer.info.set_model(Some(&r.model), r.thinking);
        } else {
            let mut info = self.view.footer.info.clone();
            let has_model = self.env.has_model;
            if let Some(info) = self.session(move |s| {
                info.refresh(s, has_model);
                info
            }) {
                self.view.footer.info = info;
            }
        }
        self.apply_editor_style();
        self.update_title();
        self.tui.request_render();
    }

    /// Keys the fullscreen transcript takes before anyone else (search, scrolling). Returns
    /// whether the key was taken.
    fn fullscreen_key(&mut self, event: &InputEvent) -> bool {
        if self.view.fullscreen.is_none() {
            return false;
        }
        let list_has_focus = self.dialogs.is_open()
            || self.ext.dialog_open()
            || self.view.has_dialog()
            || self.view.editor.is_showing_autocomplete();
        // Taken out for the call so the prompt rows can be read from the view meanwhile.
        let Some(mut fs) = self.view.fullscreen.take() else {
            return false;
        };
        let taken = fs.handle_key(event, list_has_focus, || self.view.prompt_rows());
        self.view.fullscreen = Some(fs);
        if taken {
            self.tui.request_render();
        }
        taken
    }

    /// A sequence the input parser did not interpret: a mouse report in fullscreen mode.
    fn fullscreen_sequence(&mut self, seq: &str) {
        if self.view.fullscreen.is_none() || seq == mouse::FOCUS_IN || seq == mouse::FOCUS_OUT {
            return;
        }
        let Some(event) = mouse::parse_sgr(seq) else {
            return;
        };
        let (copied, clicked) = {
            let (fs, content) = self.view.fullscreen_and_content();
            let copied = fs.handle_mouse(event, content);
            (copied, fs.take_click())
        };
        if let Some(row) = clicked {
            self.view.toggle_tool_at(row);
        }
        if let Some(text) = copied {
            self.copy_selection(&text);
        }
        self.tui.request_render();
    }

    /// `app.message.copy` in fullscreen mode with copy-on-select off: the selection, if any.
    pub(super) fn copy_fullscreen_selection(&mut self) -> bool {
        let text = {
            let (fs, content) = self.view.fullscreen_and_content();
            if fs.options.copy_on_select {
                return false;
            }
            fs.selection_text(content)
        };
        match text {
            Some(text) => {
                self.copy_selection(&text);
                true
            }
            None => false,
        }
    }

    fn copy_selection(&mut self, text: &str) {
        copy_to_clipboard(self.tui.terminal_mut(), text);
        if let Some(fs) = &mut self.view.fullscreen {
            fs.flash("Copied!");
        }
        self.tui.request_render();
    }

    /// The terminal answered the background query: the theme may follow it.
    fn on_background(&mut self, r: u8, g: u8, b: u8) {
        let global = self.env.agent_dir.join("themes");
        let project = self.env.cwd.join(".pi").join("themes");
        let setting = self.env.theme.as_deref();
        if self
            .background
            .on_reply((r, g, b), setting, [&global, &project])
        {
            self.restyle();
        }
    }
}
