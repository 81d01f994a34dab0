//! `/login` and `/logout`: [`ProviderPicker`] chooses a provider (OAuth subscriptions and
//! API-key providers, with their credential status), then [`LoginDialog`] runs the login.
//!
//! For an API key the dialog asks for the key and stores `{"type":"api_key","key":…}` in
//! auth.json. For OAuth the flow runs on a thread the app starts and talks to the dialog
//! through [`DialogLoginUi`], a `LoginUi` backed by channels: the dialog shows the URL,
//! progress and prompts, and answers prompts with what the user types. When the flow returns,
//! the thread hands the result to [`DialogLoginUi::finish`]; the dialog stores the
//! credentials and reports [`LoginOutcome::LoggedIn`].

use std::path::PathBuf;
use std::sync::Arc;

use crossbeam_channel::{unbounded, Receiver, Sender};
use serde_json::{json, Value};

use super::common::{border, fit, key_hint, position_line, scroll_window};
use crate::ai::stream::Abort;
use crate::resources::auth::AuthStorage;
use crate::resources::oauth::{Credentials, LoginUi};
use crate::tui::components::input::Input;
use crate::tui::fuzzy::fuzzy_filter;
use crate::tui::keybindings;
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};

const MAX_VISIBLE: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthKind {
    OAuth,
    ApiKey,
}

/// A row of the provider picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderOption {
    pub id: String,
    pub name: String,
    pub kind: AuthKind,
    /// Shown after the name, e.g. `✓ configured`, `✓ env: ANTHROPIC_API_KEY`, `• unconfigured`.
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderOutcome {
    /// Login: open a [`LoginDialog`] for it. Logout: remove its stored credential.
    Selected(ProviderOption),
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerMode {
    Login,
    Logout,
}

pub struct ProviderPicker {
    theme: Arc<Theme>,
    mode: PickerMode,
    providers: Vec<ProviderOption>,
    filtered: Vec<usize>,
    selected: usize,
    search: Input,
    outcome: Option<ProviderOutcome>,
}

impl ProviderPicker {
    pub fn new(mode: PickerMode, providers: Vec<ProviderOption>, theme: Arc<Theme>) -> Self {
        let mut p = ProviderPicker {
            theme,
            mode,
            filtered: (0..providers.len()).collect(),
            providers,
            selected: 0,
            search: Input::new(),
            outcome: None,
        };
        p.refilter();
        p
    }

    pub fn take_outcome(&mut self) -> Option<ProviderOutcome> {
        self.outcome.take()
    }

    fn refilter(&mut self) {
        let keyed: Vec<(usize, String)> = self
            .providers
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let kind = if p.kind == AuthKind::OAuth {
                    "oauth"
                } else {
                    "api_key"
                };
                (i, format!("{} {} {kind}", p.name, p.id))
            })
            .collect();
        self.filtered = fuzzy_filter(keyed, self.search.value(), |(_, k)| k)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        self.selected = self.selected.min(self.filtered.len().saturating_sub(1));
    }
}

impl Component for ProviderPicker {
    fn render(&mut self, width: usize) -> Vec<String> {
        let t = self.theme.clone();
        let title = match self.mode {
            PickerMode::Login => "Select provider to configure:",
            PickerMode::Logout => "Select provider to logout:",
        };
        let mut lines = vec![border(&t, Token::Border, width), String::new()];
        lines.push(format!(" {}", t.fg(Token::Accent, &t.bold(title))));
        lines.push(String::new());
        lines.extend(self.search.render(width));
        lines.push(String::new());
        let (start, end) = scroll_window(self.selected, self.filtered.len(), MAX_VISIBLE);
        for row in start..end {
            let p = &self.providers[self.filtered[row]];
            let status = if p.status.starts_with('✓') {
                t.fg(Token::Success, &format!(" {}", p.status))
            } else {
                t.fg(Token::Muted, &format!(" {}", p.status))
            };
            lines.push(if row == self.selected {
                format!(
                    " {}{}{status}",
                    t.fg(Token::Accent, "→ "),
                    t.fg(Token::Accent, &p.name)
                )
            } else {
                format!("   {}{status}", t.fg(Token::Text, &p.name))
            });
        }
        if start > 0 || end < self.filtered.len() {
            lines.push(format!(
                " {}",
                position_line(&t, self.selected, self.filtered.len())
            ));
        }
        if self.filtered.is_empty() {
            let message = match (self.providers.is_empty(), self.mode) {
                (true, PickerMode::Login) => "No providers available",
                (true, PickerMode::Logout) => "No providers logged in. Use /login first.",
                (false, _) => "No matching providers",
            };
            lines.push(t.fg(Token::Muted, &format!("   {message}")));
        }
        lines.push(String::new());
        lines.push(border(&t, Token::Border, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let is = |id: &str| event.key().is_some_and(|k| keybindings::matches(k, id));
        if is("tui.select.up") {
            self.selected = self.selected.saturating_sub(1);
        } else if is("tui.select.down") {
            self.selected = (self.selected + 1).min(self.filtered.len().saturating_sub(1));
        } else if is("tui.select.confirm") {
            if let Some(&i) = self.filtered.get(self.selected) {
                self.outcome = Some(ProviderOutcome::Selected(self.providers[i].clone()));
            }
        } else if is("tui.select.cancel") {
            self.outcome = Some(ProviderOutcome::Cancelled);
        } else {
            self.search.handle_input(event);
            self.refilter();
        }
        true
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginOutcome {
    /// Credentials for this provider are stored in auth.json.
    LoggedIn(String),
    Cancelled,
    Failed(String),
}

/// What the flow thread tells the dialog (and `/mcp`'s sign-in page, which never prompts and
/// gets its result another way).
pub(super) enum FlowMessage {
    Auth {
        url: String,
        instructions: Option<String>,
    },
    Progress(String),
    Prompt {
        message: String,
        placeholder: Option<String>,
        /// Gets the typed answer; dropped when the user cancels.
        reply: Sender<String>,
    },
    ManualInput(Sender<String>),
    Finished(Result<Credentials, String>),
}

/// The [`LoginUi`] an OAuth flow thread uses to reach a [`LoginDialog`].
pub struct DialogLoginUi {
    to_dialog: Sender<FlowMessage>,
}

impl DialogLoginUi {
    /// Hands the flow's result to the dialog (call once the flow returns).
    pub fn finish(&self, result: Result<Credentials, String>) {
        let _ = self.to_dialog.send(FlowMessage::Finished(result));
    }
}

impl LoginUi for DialogLoginUi {
    fn on_auth(&self, url: &str, instructions: Option<&str>) {
        let message = FlowMessage::Auth {
            url: url.into(),
            instructions: instructions.map(str::to_string),
        };
        let _ = self.to_dialog.send(message);
    }

    fn prompt(&self, message: &str, placeholder: Option<&str>) -> Result<String, String> {
        let (reply, answer) = unbounded();
        let prompt = FlowMessage::Prompt {
            message: message.into(),
            placeholder: placeholder.map(str::to_string),
            reply,
        };
        self.to_dialog
            .send(prompt)
            .map_err(|_| "Login cancelled".to_string())?;
        answer.recv().map_err(|_| "Login cancelled".to_string())
    }

    fn progress(&self, message: &str) {
        let _ = self.to_dialog.send(FlowMessage::Progress(message.into()));
    }

    fn manual_input(&self) -> Option<Receiver<String>> {
        let (tx, rx) = unbounded();
        self.to_dialog.send(FlowMessage::ManualInput(tx)).ok()?;
        Some(rx)
    }
}

/// Where typed input goes right now.
enum Answer {
    None,
    Prompt(Sender<String>),
    Manual(Sender<String>),
    ApiKey,
    /// Only text to read (setup instructions); Enter or Escape closes.
    Info,
}

pub struct LoginDialog {
    theme: Arc<Theme>,
    provider: String,
    title: String,
    auth_path: PathBuf,
    /// Rendered content under the title (already styled).
    content: Vec<String>,
    input: Input,
    answer: Answer,
    from_flow: Option<Receiver<FlowMessage>>,
    abort: Abort,
    outcome: Option<LoginOutcome>,
}

impl LoginDialog {
    fn base(provider: &str, name: &str, auth_path: PathBuf, theme: Arc<Theme>) -> LoginDialog {
        LoginDialog {
            theme,
            provider: provider.into(),
            title: format!("Login to {name}"),
            auth_path,
            content: Vec::new(),
            input: Input::new(),
            answer: Answer::None,
            from_flow: None,
            abort: Abort::new(),
            outcome: None,
        }
    }

    /// Asks for an API key and stores it in `auth_path` on Enter.
    pub fn api_key(
        provider: &str,
        name: &str,
        auth_path: PathBuf,
        theme: Arc<Theme>,
    ) -> LoginDialog {
        let mut d = Self::base(provider, name, auth_path, theme);
        d.show_prompt("Enter API key:", None);
        d.answer = Answer::ApiKey;
        d
    }

    /// Shows setup instructions instead of asking for anything (pi's Amazon Bedrock setup,
    /// whose credentials come from AWS, not from one key).
    pub fn info(provider: &str, title: &str, lines: Vec<String>, theme: Arc<Theme>) -> LoginDialog {
        let mut d = Self::base(provider, provider, PathBuf::new(), theme);
        d.title = title.into();
        d.content.push(String::new());
        d.content.extend(lines.into_iter().map(|l| format!(" {l}")));
        d.content.push(String::new());
        d.answer = Answer::Info;
        d
    }

    /// A dialog for an OAuth login plus the UI handle to move onto the flow thread:
    ///
    /// ```ignore
    /// let (dialog, ui) = LoginDialog::oauth("anthropic", "Anthropic (Claude Pro/Max)", auth_path, theme);
    /// let abort = dialog.abort_handle();
    /// std::thread::spawn(move || ui.finish(flow.login(&ui, &abort)));
    /// ```
    pub fn oauth(
        provider: &str,
        name: &str,
        auth_path: PathBuf,
        theme: Arc<Theme>,
    ) -> (LoginDialog, DialogLoginUi) {
        let (tx, rx) = unbounded();
        let mut d = Self::base(provider, name, auth_path, theme);
        d.from_flow = Some(rx);
        (d, DialogLoginUi { to_dialog: tx })
    }

    /// Set when the user cancels; the flow thread should pass it to the flow.
    pub fn abort_handle(&self) -> Abort {
        self.abort.clone()
    }

    /// Applies what the flow thread sent; returns whether anything changed (the app calls
    /// this on its tick and re-renders when true).
    pub fn poll(&mut self) -> bool {
        let Some(rx) = &self.from_flow else {
            return false;
        };
        let messages: Vec<FlowMessage> = rx.try_iter().collect();
        let changed = !messages.is_empty();
        for m in messages {
            self.apply(m);
        }
        changed
    }

    pub fn take_outcome(&mut self) -> Option<LoginOutcome> {
        self.poll();
        self.outcome.take()
    }

    fn apply(&mut self, message: FlowMessage) {
        let t = self.theme.clone();
        match message {
            FlowMessage::Auth { url, instructions } => {
                self.content.clear();
                self.content.push(String::new());
                self.content.push(format!(
                    " {}",
                    t.fg(
                        Token::Accent,
                        &format!("\x1b]8;;{url}\x07{url}\x1b]8;;\x07")
                    )
                ));
                let hint = format!("\x1b]8;;{url}\x07Ctrl+click to open\x1b]8;;\x07");
                self.content.push(format!(" {}", t.fg(Token::Dim, &hint)));
                if let Some(instructions) = instructions {
                    self.content.push(String::new());
                    self.content
                        .push(format!(" {}", t.fg(Token::Warning, &instructions)));
                }
            }
            FlowMessage::Progress(text) => {
                self.content.push(format!(" {}", t.fg(Token::Dim, &text)))
            }
            FlowMessage::Prompt {
                message,
                placeholder,
                reply,
            } => {
                self.show_prompt(&message, placeholder.as_deref());
                self.answer = Answer::Prompt(reply);
            }
            FlowMessage::ManualInput(tx) => {
                self.content.push(String::new());
                let prompt = "Paste redirect URL below, or complete login in browser:";
                self.content.push(format!(" {}", t.fg(Token::Dim, prompt)));
                self.input.set_value("");
                self.answer = Answer::Manual(tx);
            }
            FlowMessage::Finished(result) => {
                self.answer = Answer::None;
                self.outcome = Some(match result {
                    Ok(creds) => self.store(creds.to_json()),
                    Err(e) if self.abort.is_aborted() || e == "Login cancelled" => {
                        LoginOutcome::Cancelled
                    }
                    Err(e) => LoginOutcome::Failed(e),
                });
            }
        }
    }

    fn show_prompt(&mut self, message: &str, placeholder: Option<&str>) {
        let t = &self.theme;
        self.content.push(String::new());
        self.content
            .push(format!(" {}", t.fg(Token::Text, message)));
        if let Some(p) = placeholder {
            self.content
                .push(format!(" {}", t.fg(Token::Dim, &format!("e.g., {p}"))));
        }
        self.input.set_value("");
    }

    fn store(&self, credential: Value) -> LoginOutcome {
        let mut auth = AuthStorage::load(self.auth_path.clone());
        match auth.set(&self.provider, credential) {
            Ok(()) => LoginOutcome::LoggedIn(self.provider.clone()),
            Err(e) => LoginOutcome::Failed(e),
        }
    }

    fn cancel(&mut self) {
        self.abort.abort();
        if matches!(self.answer, Answer::Prompt(_)) {
            // Dropping the reply tells the waiting flow that the prompt was cancelled.
            self.answer = Answer::None;
        }
        self.outcome = Some(LoginOutcome::Cancelled);
    }

    fn submit(&mut self) {
        let value = self.input.value().to_string();
        match std::mem::replace(&mut self.answer, Answer::None) {
            Answer::None => {}
            Answer::Info => self.outcome = Some(LoginOutcome::Cancelled),
            Answer::Prompt(reply) => {
                let _ = reply.send(value);
            }
            Answer::Manual(tx) => {
                let _ = tx.send(value);
            }
            Answer::ApiKey => {
                let key = value.trim();
                self.outcome = Some(if key.is_empty() {
                    LoginOutcome::Failed("API key cannot be empty.".into())
                } else {
                    self.store(json!({"type": "api_key", "key": key}))
                });
            }
        }
    }
}

impl Component for LoginDialog {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.poll();
        let t = self.theme.clone();
        let mut lines = vec![border(&t, Token::Border, width)];
        lines.push(format!(" {}", t.fg(Token::Accent, &t.bold(&self.title))));
        lines.extend(self.content.iter().cloned());
        let hint = match self.answer {
            Answer::None => key_hint(&t, "tui.select.cancel", "to cancel"),
            Answer::Info => key_hint(&t, "tui.select.cancel", "to close"),
            Answer::Manual(_) => key_hint(&t, "tui.select.cancel", "to cancel"),
            Answer::Prompt(_) | Answer::ApiKey => format!(
                "{} {}",
                key_hint(&t, "tui.select.cancel", "to cancel,"),
                key_hint(&t, "tui.select.confirm", "to submit")
            ),
        };
        if !matches!(self.answer, Answer::None | Answer::Info) {
            lines.extend(
                self.input
                    .render(width.saturating_sub(1))
                    .into_iter()
                    .map(|l| format!(" {l}")),
            );
        }
        lines.push(format!(" ({hint})"));
        lines.push(border(&t, Token::Border, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.poll();
        let is = |id: &str| event.key().is_some_and(|k| keybindings::matches(k, id));
        if is("tui.select.cancel") {
            self.cancel();
        } else if is("tui.select.confirm") {
            self.submit();
        } else if !matches!(self.answer, Answer::None | Answer::Info) {
            self.input.handle_input(event);
        }
        true
    }
}

#[cfg(test)]
#[path = "login_tests.rs"]
mod tests;
