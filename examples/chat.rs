//! A chat demo of the terminal UI library: an editor at the bottom; Enter appends your text
//! and streams a canned Markdown reply (headings, a list, a table, code) token by token from
//! a timer thread, with a spinner while it streams. Ctrl+L or `/select` opens an overlay to
//! pick the reply speed (shown in the footer); Escape stops a reply; Ctrl+C or Ctrl+D quits.
//! Resizing re-flows everything. It lives in the normal scrollback, so it works in tmux.
//!
//!   cargo run --example chat
//!
//! The loop is the one `pi::tui::tui` documents: `ProcessTerminal` reads stdin and SIGWINCH
//! on its own threads, a `StdinBuffer` frames the bytes into keys, and one `select!` waits on
//! input, the reply stream and the next frame, spinner step or Escape timeout.

#[path = "support/canned_reply.rs"]
mod canned_reply;
#[path = "support/shared.rs"]
mod shared;

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver, Sender};
use pi::tui::components::editor::Editor;
use pi::tui::components::loader::Loader;
use pi::tui::components::markdown::Markdown;
use pi::tui::components::select_list::{SelectItem, SelectList, SelectResult};
use pi::tui::components::text::{Spacer, Text};
use pi::tui::stdin_buffer::{ParsedInput, StdinBuffer, ESCAPE_TIMEOUT};
use pi::tui::text::truncate_to_width;
use pi::tui::theme::{Theme, Token};
use pi::tui::{
    Anchor, Component, Container, InputEvent, OverlayId, OverlayOptions, ProcessTerminal, Terminal,
    TerminalEvent, Tui,
};
use shared::Shared;

const SPEEDS: [u32; 4] = [20, 50, 200, 1000];
const DEFAULT_SPEED: u32 = 200;
/// How long the loop sleeps when nothing is scheduled.
const IDLE: Duration = Duration::from_secs(1);

/// What the reply thread sends.
enum Stream {
    Token(String),
    Done,
}

/// The spinner, shown only while a reply streams.
struct Spinner {
    loader: Loader,
    visible: bool,
}

impl Component for Spinner {
    fn render(&mut self, width: usize) -> Vec<String> {
        if self.visible {
            self.loader.render(width)
        } else {
            Vec::new()
        }
    }
}

/// A bordered box with a title around a [`SelectList`], for the overlay.
struct Picker {
    title: String,
    list: SelectList,
    theme: Arc<Theme>,
}

impl Component for Picker {
    fn render(&mut self, width: usize) -> Vec<String> {
        let inner = width.saturating_sub(4).max(1);
        let border = |s: &str| self.theme.fg(Token::BorderAccent, s);
        let title = truncate_to_width(&format!(" {} ", self.title), inner, "", false);
        let rule = "─".repeat(inner.saturating_sub(pi::tui::text::visible_width(&title)));
        let mut lines = vec![border(&format!("╭─{title}{rule}─╮"))];
        for line in self.list.render(inner) {
            let line = truncate_to_width(&line, inner, "", true);
            lines.push(format!("{} {line} {}", border("│"), border("│")));
        }
        let hint = truncate_to_width("↑↓ move · enter select · esc cancel", inner, "", true);
        let hint = self.theme.fg(Token::Dim, &hint);
        lines.push(format!("{} {hint} {}", border("│"), border("│")));
        lines.push(border(&format!("╰{}╯", "─".repeat(inner + 2))));
        lines
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.list.handle_input(event)
    }
}

struct App {
    theme: Arc<Theme>,
    root: Container,
    editor: Shared<Editor>,
    spinner: Shared<Spinner>,
    footer: Shared<Text>,
    /// The reply being streamed, and the flag that stops its thread.
    reply: Option<(Shared<Markdown>, Arc<AtomicBool>)>,
    stream: Receiver<Stream>,
    stream_tx: Sender<Stream>,
    speed: u32,
    picker: Option<OverlayId>,
    next_spin: Option<Instant>,
    quit: bool,
}

impl App {
    fn new() -> App {
        let theme = Arc::new(Theme::dark());
        let editor = Shared::new(Editor::new());
        editor.get().set_border_color(Box::new({
            let theme = Arc::clone(&theme);
            move |s| theme.fg(Token::BorderMuted, s)
        }));
        let spinner = Shared::new(Spinner {
            loader: Loader::new(
                Arc::clone(&theme),
                Token::Accent,
                Token::Muted,
                "Streaming... (esc to stop)",
            ),
            visible: false,
        });
        let footer = Shared::new(Text::new("", 1, 0));
        let mut root = Container::new();
        let welcome = theme.fg(
            Token::Muted,
            "pi tui demo: type and press enter · ctrl+l or /select: reply speed · ctrl+c: quit",
        );
        root.push(Text::new(welcome, 1, 0));
        root.push(spinner.clone());
        root.push(Spacer::new(1));
        root.push(editor.clone());
        root.push(footer.clone());
        let (stream_tx, stream) = crossbeam_channel::unbounded();
        let mut app = App {
            theme,
            root,
            editor,
            spinner,
            footer,
            reply: None,
            stream,
            stream_tx,
            speed: DEFAULT_SPEED,
            picker: None,
            next_spin: None,
            quit: false,
        };
        app.update_footer();
        app
    }

    fn update_footer(&mut self) {
        let state = if self.reply.is_some() {
            "streaming"
        } else {
            "idle"
        };
        let text = format!("reply speed: {} tokens/s · {state}", self.speed);
        self.footer.get().set_text(self.theme.fg(Token::Dim, &text));
    }

    /// Adds a message above the spinner, editor and footer.
    fn push_message(&mut self, component: impl Component + 'static) {
        let at = self.root.children.len() - 4;
        self.root.children.insert(at, Box::new(component));
    }

    fn submit(&mut self, tui: &mut Tui<ProcessTerminal>, text: String) {
        if text.trim() == "/select" {
            self.open_picker(tui);
            return;
        }
        if text.trim().is_empty() {
            return;
        }
        self.stop_stream();
        self.editor.get().add_to_history(&text);
        let user = Text::new(text, 1, 1).with_fill(pi::tui::components::text::Fill::token(
            &self.theme,
            Token::UserMessageBg,
        ));
        self.push_message(Spacer::new(1));
        self.push_message(user);
        let reply = Shared::new(Markdown::new("", 1, 0, Arc::clone(&self.theme)));
        self.push_message(Spacer::new(1));
        self.push_message(reply.clone());
        let stop = Arc::new(AtomicBool::new(false));
        spawn_reply(self.speed, Arc::clone(&stop), self.stream_tx.clone());
        self.reply = Some((reply, stop));
        self.spinner.get().visible = true;
        self.next_spin = Some(Instant::now());
        self.update_footer();
    }

    fn stop_stream(&mut self) {
        if let Some((_, stop)) = self.reply.take() {
            stop.store(true, Ordering::Relaxed);
        }
        // Tokens already queued belong to the stopped reply.
        while self.stream.try_recv().is_ok() {}
        self.spinner.get().visible = false;
        self.next_spin = None;
        self.update_footer();
    }

    fn open_picker(&mut self, tui: &mut Tui<ProcessTerminal>) {
        if self.picker.is_some() {
            return;
        }
        let items = SPEEDS
            .iter()
            .map(|s| {
                let item = SelectItem::new(s.to_string()).label(format!("{s} tokens/s"));
                if *s == self.speed {
                    item.description("current")
                } else {
                    item
                }
            })
            .collect();
        let mut list = SelectList::new(items, 6, Arc::clone(&self.theme));
        let current = SPEEDS.iter().position(|s| *s == self.speed).unwrap_or(0);
        list.set_selected_index(current);
        let picker = Picker {
            title: "Reply speed".into(),
            list,
            theme: Arc::clone(&self.theme),
        };
        let options = OverlayOptions {
            anchor: Anchor::Center,
            width: Some(pi::tui::Extent::Cells(44)),
            ..OverlayOptions::default()
        };
        self.editor.get().set_focused(false);
        self.picker = Some(tui.show_overlay(picker, options));
    }

    /// Reads the picker's answer after each key it got; closes it when done.
    fn poll_picker(&mut self, tui: &mut Tui<ProcessTerminal>) {
        let Some(id) = self.picker else {
            return;
        };
        let result = tui
            .overlay_mut::<Picker>(id)
            .and_then(|p| p.list.take_result());
        let Some(result) = result else {
            return;
        };
        if let SelectResult::Selected(item) = result {
            self.speed = item.value.parse().unwrap_or(DEFAULT_SPEED);
            self.update_footer();
        }
        tui.close_overlay(id);
        self.picker = None;
        self.editor.get().set_focused(true);
    }

    fn on_input(&mut self, tui: &mut Tui<ProcessTerminal>, event: &InputEvent) {
        if event.is("ctrl+c") || (event.is("ctrl+d") && self.editor.get().is_empty()) {
            self.quit = true;
            return;
        }
        if self.picker.is_some() {
            tui.handle_input(event, &mut self.editor);
            self.poll_picker(tui);
            return;
        }
        if event.is("ctrl+l") {
            self.open_picker(tui);
            tui.request_render();
            return;
        }
        if event.is("escape")
            && self.reply.is_some()
            && !self.editor.get().is_showing_autocomplete()
        {
            self.stop_stream();
            tui.request_render();
            return;
        }
        tui.handle_input(event, &mut self.editor);
        let submitted = self.editor.get().take_submitted();
        if let Some(text) = submitted {
            self.submit(tui, text);
        }
    }

    fn on_stream(&mut self, message: Stream) {
        match message {
            Stream::Token(token) => {
                if let Some((reply, _)) = &self.reply {
                    reply.get().append(&token);
                }
            }
            Stream::Done => self.stop_stream(),
        }
    }
}

/// The timer thread: sends the canned reply one token every `1/speed` s until done or
/// stopped.
fn spawn_reply(speed: u32, stop: Arc<AtomicBool>, tx: Sender<Stream>) {
    let interval = Duration::from_secs_f64(1.0 / f64::from(speed.max(1)));
    // Detached on purpose: it ends within one interval of `stop` or when the app is gone.
    let _ = std::thread::Builder::new()
        .name("chat-reply".into())
        .spawn(move || {
            let start = Instant::now();
            for (i, token) in canned_reply::tokens(canned_reply::REPLY)
                .into_iter()
                .enumerate()
            {
                let due = start + interval * (i as u32 + 1);
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
                if stop.load(Ordering::Relaxed) || tx.send(Stream::Token(token)).is_err() {
                    return;
                }
            }
            if !stop.load(Ordering::Relaxed) {
                let _ = tx.send(Stream::Done);
            }
        });
}

fn run() -> io::Result<()> {
    let terminal = ProcessTerminal::new();
    let events = terminal.events();
    let mut tui = Tui::new(terminal);
    tui.start()?;
    tui.terminal_mut().set_title("pi tui demo");
    let mut app = App::new();
    let mut parser = StdinBuffer::new();
    let mut pending_since: Option<Instant> = None;
    while !app.quit {
        let now = Instant::now();
        let escape_due = pending_since.map(|t| t + ESCAPE_TIMEOUT);
        let wake = [tui.next_deadline(), app.next_spin, escape_due]
            .into_iter()
            .flatten()
            .min();
        let timeout = wake.map_or(IDLE, |t| t.saturating_duration_since(now));
        let mut parsed = Vec::new();
        select! {
            recv(events) -> event => match event {
                Ok(TerminalEvent::Input(bytes)) => parsed = parser.feed(&bytes),
                Ok(TerminalEvent::Resize) => {
                    let (_, rows) = tui.terminal().size();
                    app.editor.get().set_terminal_rows(rows);
                    tui.request_render();
                }
                Ok(TerminalEvent::Suspend) => {
                    let _ = tui.suspend();
                }
                Err(_) => break,
            },
            recv(app.stream) -> message => {
                if let Ok(message) = message {
                    app.on_stream(message);
                    tui.request_render();
                }
            },
            default(timeout) => {}
        }
        let now = Instant::now();
        if parser.has_pending() {
            let since = *pending_since.get_or_insert(now);
            if parsed.is_empty() && now >= since + ESCAPE_TIMEOUT {
                parsed = parser.flush_timeout();
            }
        }
        if !parser.has_pending() {
            pending_since = None;
        }
        for input in parsed {
            match input {
                ParsedInput::Event(event) => app.on_input(&mut tui, &event),
                ParsedInput::KittyFlags(_) => {
                    tui.terminal_mut().kitty_reply_seen();
                    parser.set_kitty_active(tui.terminal().kitty_protocol_active());
                }
                ParsedInput::CellSize { .. }
                | ParsedInput::BackgroundColor { .. }
                | ParsedInput::Other(_) => {}
            }
        }
        if app.next_spin.is_some_and(|t| now >= t) {
            let mut spinner = app.spinner.get();
            spinner.loader.tick();
            app.next_spin = Some(now + spinner.loader.interval());
            drop(spinner);
            tui.request_render();
        }
        tui.tick(now, &mut app.root)?;
    }
    app.stop_stream();
    tui.render(&mut app.root)?;
    tui.stop()
}

fn main() {
    if let Err(err) = run() {
        pi::tui::terminal::restore_terminal();
        eprintln!("chat: {err}");
        std::process::exit(1);
    }
}
