//! The root component: everything from the start-up header down to the footer, in pi's
//! order — header, transcript, queued messages, the working/retry/compaction indicator, the
//! editor and the footer. The transcript lives in the terminal's normal scrollback; the
//! renderer only rewrites what changed at the bottom.

use super::chat::ChatItem;
use super::ext_widgets::ExtensionChrome;
use super::footer::Footer;
use super::header::Header;
use crate::tui::components::editor::Editor;
use crate::tui::components::loader::Loader;
use crate::tui::components::text::{Text, TruncatedText};
use crate::tui::keybindings;
use crate::tui::theme::{self, Token};
use crate::tui::Component;

pub struct View {
    pub header: Header,
    pub chat: Vec<ChatItem>,
    /// Queued steering and follow-up texts, shown above the editor.
    pub steering: Vec<String>,
    pub follow_up: Vec<String>,
    /// "Working...", "Retrying...", "Compacting..." while something runs.
    pub status: Option<Loader>,
    pub editor: Editor,
    pub footer: Footer,
    /// The last transcript item is a status note (the next one replaces it).
    pub last_is_status: bool,
    /// Extension widgets around the editor and statuses under the footer.
    pub extension: ExtensionChrome,
}

impl View {
    pub fn push(&mut self, item: ChatItem) {
        self.chat.push(item);
        self.last_is_status = false;
    }

    /// Adds a status line, replacing the previous one if nothing came in between (pi's
    /// anti-spam rule).
    pub fn status_note(&mut self, text: &str) {
        if self.last_is_status {
            self.chat.pop();
        }
        self.push(ChatItem::note(Token::Dim, text));
        self.last_is_status = true;
    }

    pub fn error(&mut self, text: &str) {
        self.push(ChatItem::note(Token::Error, &format!("Error: {text}")));
    }

    pub fn warning(&mut self, text: &str) {
        self.push(ChatItem::note(Token::Warning, &format!("Warning: {text}")));
    }

    fn pending_lines(&self, width: usize) -> Vec<String> {
        if self.steering.is_empty() && self.follow_up.is_empty() {
            return Vec::new();
        }
        let theme = theme::current();
        let mut lines = vec![String::new()];
        let mut add = |text: String| {
            lines.extend(TruncatedText::new(theme.fg(Token::Dim, &text), 1, 0).render(width));
        };
        for m in &self.steering {
            add(format!("Steering: {}", super::chat::safe(m)));
        }
        for m in &self.follow_up {
            add(format!("Follow-up: {}", super::chat::safe(m)));
        }
        let key = keybindings::current().key_text("app.message.dequeue");
        add(format!("↳ {key} to edit all queued messages"));
        lines
    }
}

impl Component for View {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = self.header.render(width);
        for item in &mut self.chat {
            lines.extend(item.render(width));
        }
        lines.extend(self.pending_lines(width));
        match &mut self.status {
            Some(loader) => lines.extend(loader.render(width)),
            None => lines.push(String::new()),
        }
        let spacer = self.status.is_some();
        lines.extend(self.extension.render_above(width, spacer));
        lines.extend(self.editor.render(width));
        lines.extend(self.extension.render_below(width));
        lines.extend(self.footer.render(width));
        lines.extend(self.extension.render_statuses(width));
        lines
    }

    fn handle_input(&mut self, event: &crate::tui::InputEvent) -> bool {
        self.editor.handle_input(event)
    }

    fn invalidate(&mut self) {
        for item in &mut self.chat {
            item.invalidate();
        }
        self.editor.invalidate();
    }
}

/// A plain text block for the transcript (e.g. `/session`, `/hotkeys`).
pub fn text_block(text: String) -> ChatItem {
    ChatItem::Block(Box::new(Text::new(text, 1, 0)))
}
