//! The sign-in page of `/mcp`: the sign-in runs on its own thread (`McpManager::sign_in`) and
//! talks to this page through a [`LoginUi`]: first "Contacting the authorization server…",
//! then the authorization URL (a terminal hyperlink, also opened in the browser when there is
//! a desktop) with a field for the redirected URL when the browser runs elsewhere, then
//! "Connecting…". Escape cancels at every step.

use std::sync::Arc;

use crossbeam_channel::{unbounded, Receiver, Sender};

use super::common::{border, key_hint};
use super::login::FlowMessage;
use crate::ai::Abort;
use crate::mcp::McpManager;
use crate::resources::oauth::LoginUi;
use crate::tui::components::input::Input;
use crate::tui::keybindings;
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};
use crate::util::reply::{reply, ReplyRx};

/// `Err` holds pi's message (`Sign-in cancelled.`, `Sign-in failed: …`, `Signed in, but …`).
pub type SignInResult = Result<(), String>;

/// The sign-in thread's side.
struct PageUi {
    to_page: Sender<FlowMessage>,
}

impl LoginUi for PageUi {
    fn on_auth(&self, url: &str, _instructions: Option<&str>) {
        let _ = self.to_page.send(FlowMessage::Auth {
            url: url.to_string(),
            instructions: None,
        });
        crate::util::browser::open(url);
    }

    fn prompt(&self, _message: &str, _placeholder: Option<&str>) -> Result<String, String> {
        Err("Sign-in cancelled".into())
    }

    fn progress(&self, message: &str) {
        let _ = self
            .to_page
            .send(FlowMessage::Progress(message.to_string()));
    }

    fn manual_input(&self) -> Option<Receiver<String>> {
        let (tx, rx) = unbounded();
        self.to_page.send(FlowMessage::ManualInput(tx)).ok()?;
        Some(rx)
    }
}

pub struct SignInPage {
    server: String,
    theme: Arc<Theme>,
    from_flow: Receiver<FlowMessage>,
    done: ReplyRx<SignInResult>,
    abort: Abort,
    status: String,
    url: Option<String>,
    paste: Option<Sender<String>>,
    input: Input,
    result: Option<SignInResult>,
}

impl SignInPage {
    /// Starts signing in to `server` on a thread.
    pub fn start(manager: Arc<McpManager>, server: &str, theme: Arc<Theme>) -> SignInPage {
        let (tx, rx) = unbounded();
        let (done_tx, done) = reply();
        let abort = Abort::new();
        let page = SignInPage {
            server: server.to_string(),
            theme,
            from_flow: rx,
            done,
            abort: abort.clone(),
            status: "Contacting the authorization server…".into(),
            url: None,
            paste: None,
            input: Input::new(),
            result: None,
        };
        let name = server.to_string();
        let ui = PageUi { to_page: tx };
        // Detached: the sign-in ends on its own (callback, pasted URL, the abort flag Escape
        // raises, or its requests' time limits) and only reports to this page.
        let spawned = std::thread::Builder::new()
            .name("pi-mcp-signin".into())
            .spawn(move || {
                let result = manager.sign_in(&name, &ui, &abort);
                let _ = done_tx.send(result);
            });
        let mut page = page;
        if let Err(e) = spawned {
            page.result = Some(Err(format!("Sign-in failed: {e}")));
        }
        page
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    /// Applies what the sign-in thread sent; true when something changed.
    pub fn poll(&mut self) -> bool {
        // The result first: the messages sent before it are then all here too.
        let finished = self.done.try_recv().ok();
        let messages: Vec<FlowMessage> = self.from_flow.try_iter().collect();
        let changed = !messages.is_empty() || finished.is_some();
        for m in messages {
            match m {
                FlowMessage::Auth { url, .. } => self.url = Some(url),
                FlowMessage::Progress(text) => self.status = text,
                FlowMessage::ManualInput(tx) => {
                    self.input.set_value("");
                    self.paste = Some(tx);
                }
                // `PageUi` never prompts, and the result comes over `done`.
                FlowMessage::Prompt { .. } | FlowMessage::Finished(_) => {}
            }
        }
        if finished.is_some() {
            self.result = finished;
        }
        changed
    }

    pub fn take_result(&mut self) -> Option<SignInResult> {
        self.result.take()
    }

    fn waiting_for_browser(&self) -> bool {
        self.url.is_some() && self.paste.is_some() && self.status != "Connecting…"
    }
}

impl Component for SignInPage {
    fn render(&mut self, width: usize) -> Vec<String> {
        let t = Arc::clone(&self.theme);
        let title = format!("Sign in to {}", self.server);
        let mut lines = vec![border(&t, Token::Accent, width)];
        lines.push(format!(" {}", t.fg(Token::Accent, &t.bold(&title))));
        lines.push(String::new());
        let footer = if self.waiting_for_browser() {
            let url = self.url.clone().unwrap_or_default();
            lines.push(format!(
                " {}",
                t.fg(
                    Token::Muted,
                    "Approve access in your browser. If it did not open, visit:"
                )
            ));
            // Wrapped, every piece a hyperlink to the whole URL, so it can be clicked and
            // copied at any width.
            let chars: Vec<char> = url.chars().collect();
            for piece in chars.chunks(width.saturating_sub(2).max(10)) {
                let text: String = piece.iter().collect();
                lines.push(format!(
                    " {}",
                    t.fg(
                        Token::Accent,
                        &format!("\x1b]8;;{url}\x07{text}\x1b]8;;\x07")
                    )
                ));
            }
            lines.push(String::new());
            lines.push(format!(
                " {}",
                t.fg(
                    Token::Muted,
                    "If the browser runs on another machine, paste the URL it was redirected to:"
                )
            ));
            lines.extend(
                self.input
                    .render(width.saturating_sub(1))
                    .into_iter()
                    .map(|l| format!(" {l}")),
            );
            format!(
                "{} • {}",
                key_hint(&t, "tui.select.confirm", "submit"),
                key_hint(&t, "tui.select.cancel", "cancel")
            )
        } else {
            lines.push(format!(" {}", t.fg(Token::Muted, &self.status)));
            key_hint(&t, "tui.select.cancel", "cancel")
        };
        lines.push(String::new());
        lines.push(format!(" {footer}"));
        lines.push(border(&t, Token::Accent, width));
        lines
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.poll();
        let is = |id: &str| event.key().is_some_and(|k| keybindings::matches(k, id));
        if is("tui.select.cancel") {
            self.abort.abort();
            self.status = "Cancelling…".into();
            self.paste = None;
        } else if self.waiting_for_browser() {
            if is("tui.select.confirm") {
                let value = self.input.value().trim().to_string();
                if !value.is_empty() {
                    if let Some(tx) = self.paste.take() {
                        let _ = tx.send(value);
                    }
                    self.status = "Connecting…".into();
                }
            } else {
                self.input.handle_input(event);
            }
        }
        true
    }
}
