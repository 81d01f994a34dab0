//! Extension UI in the terminal: [`ChannelUi`] is the [`ExtensionUi`] the extension host calls
//! from its threads; it hands each request to the UI thread over a channel, and a dialog's
//! caller blocks until the user answers the [`ExtensionDialog`] overlay (or the dialog times
//! out, or the run is aborted — then the overlay is withdrawn and the default applies).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::ext_component::RemoteComponent;
use crate::ai::Abort;
use crate::extensions::ui::{Answer, ComponentHandle, Dialog, ExtensionUi, Notice};
use crate::extensions::{ErrorSink, ExtensionError, StderrSink};
use crate::tui::components::editor::Editor;
use crate::tui::components::input::Input;
use crate::tui::components::select_list::{SelectItem, SelectList, SelectResult};
use crate::tui::components::text::Text;
use crate::tui::theme::{self, Token};
use crate::tui::{Component, InputEvent};
use crate::util::reply::{reply, ReplyTx};

/// How often a waiting dialog looks at its deadline and the abort flag.
const POLL: Duration = Duration::from_millis(50);

/// What the UI thread receives.
pub enum UiRequest {
    /// Show `dialog`; send the answer on `reply`. `withdrawn` turns true when the caller
    /// stopped waiting (timeout, abort): close the overlay without answering.
    Dialog {
        dialog: Dialog,
        reply: ReplyTx<Answer>,
        withdrawn: Arc<AtomicBool>,
    },
    Notice(Notice),
    /// A problem an extension reported or caused (shown in the chat).
    Error(ExtensionError),
    /// A line an extension wrote to its stderr: `(extension name, line)`.
    Stderr(String, String),
}

/// The extension host's handle on the terminal UI.
pub struct ChannelUi {
    tx: Sender<UiRequest>,
}

impl ChannelUi {
    /// The UI and the receiver the app's loop selects on.
    pub fn new() -> (ChannelUi, Receiver<UiRequest>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        (ChannelUi { tx }, rx)
    }

    /// Reports extension errors to the UI thread instead of the terminal.
    pub fn error_sink(&self) -> ErrorSink {
        let tx = self.tx.clone();
        Arc::new(move |e: &ExtensionError| {
            let _ = tx.send(UiRequest::Error(e.clone()));
        })
    }

    /// Hands extensions' stderr lines to the UI thread instead of the terminal.
    pub fn stderr_sink(&self) -> StderrSink {
        let tx = self.tx.clone();
        Arc::new(move |name: &str, line: &str| {
            let _ = tx.send(UiRequest::Stderr(name.into(), line.into()));
        })
    }
}

impl ExtensionUi for ChannelUi {
    fn dialog(&self, dialog: Dialog, abort: &Abort) -> Answer {
        if abort.is_aborted() {
            return Answer::Cancelled;
        }
        let deadline = dialog.timeout().map(|t| Instant::now() + t);
        let (reply, answer) = reply();
        let withdrawn = Arc::new(AtomicBool::new(false));
        let request = UiRequest::Dialog {
            dialog,
            reply,
            withdrawn: Arc::clone(&withdrawn),
        };
        if self.tx.send(request).is_err() {
            return Answer::Cancelled;
        }
        loop {
            let wait = deadline.map_or(POLL, |d| {
                d.saturating_duration_since(Instant::now()).min(POLL)
            });
            match answer.recv_timeout(wait) {
                Ok(a) => return a,
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Answer::Cancelled,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            }
            if abort.is_aborted() || deadline.is_some_and(|d| Instant::now() >= d) {
                withdrawn.store(true, Ordering::SeqCst);
                return Answer::Cancelled;
            }
        }
    }

    fn notice(&self, notice: Notice) {
        let _ = self.tx.send(UiRequest::Notice(notice));
    }
}

enum Body {
    Select(SelectList),
    Confirm(SelectList, String),
    Input(Input),
    Editor(Box<Editor>),
    /// The extension's own component: its lines, keys sent back to it.
    Custom(RemoteComponent),
}

/// The overlay for one extension dialog: a title, then a list (select, and Yes/No for
/// confirm), a one-line input or a multi-line editor.
pub struct ExtensionDialog {
    title: String,
    body: Body,
    outcome: Option<Answer>,
}

impl ExtensionDialog {
    pub fn new(dialog: &Dialog) -> ExtensionDialog {
        let theme = theme::current();
        let list = |items: Vec<SelectItem>| {
            SelectList::new(items, 10, Arc::clone(&theme)).with_type_to_filter(true)
        };
        let (title, body) = match dialog {
            Dialog::Select { title, options, .. } => (
                title.clone(),
                Body::Select(list(options.iter().map(SelectItem::new).collect())),
            ),
            Dialog::Confirm { title, message, .. } => (
                title.clone(),
                Body::Confirm(
                    list(vec![SelectItem::new("Yes"), SelectItem::new("No")]),
                    message.clone(),
                ),
            ),
            Dialog::Input {
                title, placeholder, ..
            } => {
                let mut input = Input::new();
                input.set_focused(true);
                let title = match placeholder {
                    Some(p) if !p.is_empty() => format!("{title} ({p})"),
                    _ => title.clone(),
                };
                (title, Body::Input(input))
            }
            Dialog::Editor { title, prefill } => {
                let mut editor = Editor::new();
                if let Some(text) = prefill {
                    editor.set_text(text);
                }
                (title.clone(), Body::Editor(Box::new(editor)))
            }
            Dialog::Custom { handle, lines, .. } => (
                String::new(),
                Body::Custom(RemoteComponent::new(handle.clone(), lines.clone())),
            ),
        };
        ExtensionDialog {
            title,
            body,
            outcome: None,
        }
    }

    /// The answer once the user has given one (Escape gives `Cancelled`).
    pub fn take_outcome(&mut self) -> Option<Answer> {
        self.outcome.take()
    }

    /// The extension component this dialog shows, if it is one.
    pub fn custom_handle(&self) -> Option<&ComponentHandle> {
        match &self.body {
            Body::Custom(c) => Some(&c.handle),
            _ => None,
        }
    }

    /// New lines for the component `handle`; false when this dialog shows another.
    pub fn set_custom_lines(&mut self, handle: &ComponentHandle, lines: Vec<String>) -> bool {
        match &mut self.body {
            Body::Custom(c) if c.handle.same(handle) => {
                c.set_lines(lines);
                true
            }
            _ => false,
        }
    }

    fn hint(&self) -> &'static str {
        match self.body {
            Body::Custom(_) => "",
            Body::Select(_) | Body::Confirm(..) => "enter to select, esc to cancel",
            Body::Input(_) => "enter to submit, esc to cancel",
            Body::Editor(_) => "enter to submit, shift+enter for a new line, esc to cancel",
        }
    }
}

impl Component for ExtensionDialog {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Body::Custom(c) = &mut self.body {
            return c.render(width);
        }
        let theme = theme::current();
        let border = theme.fg(Token::BorderAccent, &"─".repeat(width));
        let mut lines = vec![border.clone()];
        let title = theme.bold(&theme.fg(Token::Accent, &super::text_style::safe(&self.title)));
        lines.extend(Text::new(title, 1, 0).render(width));
        if let Body::Confirm(_, message) = &self.body {
            lines.extend(Text::new(super::text_style::safe(message), 1, 0).render(width));
        }
        match &mut self.body {
            Body::Select(list) | Body::Confirm(list, _) => lines.extend(list.render(width)),
            Body::Input(input) => lines.extend(input.render(width)),
            Body::Editor(editor) => lines.extend(editor.render(width)),
            Body::Custom(_) => {}
        }
        lines.extend(Text::new(theme.fg(Token::Dim, self.hint()), 1, 0).render(width));
        lines.push(border);
        lines
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let escape = event.is("escape");
        match &mut self.body {
            // The extension decides when it is done (it says so with `ui.customDone`).
            Body::Custom(c) => c.handle_input(event),
            Body::Select(list) | Body::Confirm(list, _) => {
                let used = list.handle_input(event);
                let confirm = matches!(self.body, Body::Confirm(..));
                let (Body::Select(list) | Body::Confirm(list, _)) = &mut self.body else {
                    unreachable!()
                };
                self.outcome = match list.take_result() {
                    Some(SelectResult::Selected(item)) if confirm => {
                        Some(Answer::Confirmed(item.value == "Yes"))
                    }
                    Some(SelectResult::Selected(item)) => Some(Answer::Value(item.value)),
                    Some(SelectResult::Cancelled) => Some(Answer::Cancelled),
                    None => None,
                };
                used
            }
            Body::Input(input) => {
                let used = input.handle_input(event);
                if let Some(value) = input.take_submitted() {
                    self.outcome = Some(Answer::Value(value));
                } else if input.take_cancelled() || (escape && !used) {
                    self.outcome = Some(Answer::Cancelled);
                }
                true
            }
            Body::Editor(editor) => {
                if escape {
                    self.outcome = Some(Answer::Cancelled);
                    return true;
                }
                editor.handle_input(event);
                if let Some(value) = editor.take_submitted() {
                    self.outcome = Some(Answer::Value(value));
                }
                true
            }
        }
    }

    fn invalidate(&mut self) {
        match &mut self.body {
            Body::Select(list) | Body::Confirm(list, _) => list.invalidate(),
            Body::Input(input) => input.invalidate(),
            Body::Editor(editor) => editor.invalidate(),
            Body::Custom(c) => c.invalidate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;
    use crate::tui::{KeyCode, KeyEvent};

    fn key(code: KeyCode) -> InputEvent {
        InputEvent::Key(KeyEvent::plain(code))
    }

    fn typed(dialog: &mut ExtensionDialog, text: &str) {
        for c in text.chars() {
            dialog.handle_input(&key(KeyCode::Char(c)));
        }
    }

    #[test]
    fn select_confirm_input_and_editor_answer() {
        let mut select = ExtensionDialog::new(&Dialog::Select {
            title: "Pick one".into(),
            options: vec!["alpha".into(), "beta".into()],
            timeout: None,
        });
        let screen = select
            .render(40)
            .iter()
            .map(|l| strip_ansi(l))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            screen.contains("Pick one") && screen.contains("beta"),
            "{screen}"
        );
        select.handle_input(&key(KeyCode::Down));
        select.handle_input(&key(KeyCode::Enter));
        assert_eq!(select.take_outcome(), Some(Answer::Value("beta".into())));

        let mut confirm = ExtensionDialog::new(&Dialog::Confirm {
            title: "Run it?".into(),
            message: "rm -rf build".into(),
            timeout: None,
        });
        let screen = confirm
            .render(40)
            .iter()
            .map(|l| strip_ansi(l))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(screen.contains("rm -rf build"), "{screen}");
        confirm.handle_input(&key(KeyCode::Enter));
        assert_eq!(confirm.take_outcome(), Some(Answer::Confirmed(true)));

        let mut input = ExtensionDialog::new(&Dialog::Input {
            title: "Name".into(),
            placeholder: None,
            timeout: None,
        });
        typed(&mut input, "Ada");
        input.handle_input(&key(KeyCode::Enter));
        assert_eq!(input.take_outcome(), Some(Answer::Value("Ada".into())));

        let mut editor = ExtensionDialog::new(&Dialog::Editor {
            title: "Edit".into(),
            prefill: Some("draft".into()),
        });
        typed(&mut editor, "!");
        editor.handle_input(&key(KeyCode::Enter));
        assert_eq!(editor.take_outcome(), Some(Answer::Value("draft!".into())));

        let mut cancelled = ExtensionDialog::new(&Dialog::Input {
            title: "Name".into(),
            placeholder: None,
            timeout: None,
        });
        cancelled.handle_input(&key(KeyCode::Escape));
        assert_eq!(cancelled.take_outcome(), Some(Answer::Cancelled));
        for w in 1..60 {
            for line in select.render(w) {
                assert!(crate::tui::text::visible_width(&line) <= w);
            }
        }
    }

    #[test]
    fn a_dialog_waits_for_the_ui_thread_and_gives_up_on_timeout() {
        let (ui, rx) = ChannelUi::new();
        let ui = Arc::new(ui);
        let asking = Arc::clone(&ui);
        let answer = std::thread::spawn(move || {
            asking.dialog(
                Dialog::Confirm {
                    title: "t".into(),
                    message: "m".into(),
                    timeout: None,
                },
                &Abort::new(),
            )
        });
        match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            UiRequest::Dialog { reply, .. } => reply.send(Answer::Confirmed(false)).unwrap(),
            _ => panic!("expected a dialog"),
        }
        assert_eq!(answer.join().unwrap(), Answer::Confirmed(false));

        let started = Instant::now();
        let timed_out = ui.dialog(
            Dialog::Select {
                title: "t".into(),
                options: vec!["a".into()],
                timeout: Some(Duration::from_millis(80)),
            },
            &Abort::new(),
        );
        assert_eq!(timed_out, Answer::Cancelled);
        assert!(started.elapsed() < Duration::from_secs(2));
        match rx.try_recv().unwrap() {
            UiRequest::Dialog { withdrawn, .. } => assert!(withdrawn.load(Ordering::SeqCst)),
            _ => panic!("expected a dialog"),
        }
        ui.notice(Notice::Title("x".into()));
        assert!(matches!(rx.try_recv().unwrap(), UiRequest::Notice(Notice::Title(t)) if t == "x"));
    }
}
