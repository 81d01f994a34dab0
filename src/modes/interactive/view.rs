//! The root component: everything from the start-up header down to the footer, in pi's
//! order — header, transcript, queued messages, the working/retry/compaction indicator, the
//! editor and the footer. The transcript lives in the terminal's normal scrollback; the
//! renderer only rewrites what changed at the bottom.
//!
//! The view keeps the whole frame stacked and lends it to the [`Tui`](crate::tui::Tui)
//! with the first row that changed ([`Component::render_borrowed`]): the transcript re-renders
//! only the items touched since the last frame (see [`Transcript`]), and the rows below it
//! (queue, indicator, editor, footer) are drawn every frame, so a keystroke costs the editor
//! and footer rows whatever the length of the session.

use super::chat::ChatItem;
use super::dialog::Dialog;
use super::ext_widgets::ExtensionChrome;
use super::footer::Footer;
use super::fullscreen::Fullscreen;
use super::header::Header;
use super::transcript::{first_difference, Transcript};
use crate::tui::components::editor::Editor;
use crate::tui::components::loader::Loader;
use crate::tui::components::text::TruncatedText;
use crate::tui::keybindings;
use crate::tui::theme::{self, Token};
use crate::tui::Component;

pub struct View {
    pub header: Header,
    pub chat: Transcript,
    /// Queued steering and follow-up texts, shown above the editor.
    pub steering: Vec<String>,
    pub follow_up: Vec<String>,
    /// "Working...", "Retrying...", "Compacting..." while something runs.
    pub status: Option<Loader>,
    pub editor: Editor,
    /// A selector shown in the editor's place (pi's `showSelector`); it gets every key.
    dialog: Option<Box<dyn Dialog>>,
    pub footer: Footer,
    /// The last transcript item is a status note (the next one replaces it).
    pub last_is_status: bool,
    pub(super) frame: FrameCache,
    /// Extension widgets around the editor and statuses under the footer.
    pub extension: ExtensionChrome,
    /// Fullscreen mode: the transcript scrolls in a window above the docked editor.
    pub fullscreen: Option<Fullscreen>,
    /// Tool output and summaries shown in full (Ctrl+O); new items start this way.
    pub tools_expanded: bool,
    /// Thinking blocks collapsed to one line (Ctrl+T); new replies start this way.
    pub hide_thinking: bool,
}

/// The stacked frame from the last render and what it was made of.
#[derive(Default)]
pub(super) struct FrameCache {
    width: Option<usize>,
    header: Vec<String>,
    bottom: Vec<String>,
    lines: Vec<String>,
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

    /// Shows the "Working..." indicator (or another message) under the transcript.
    pub fn show_loader(&mut self, spinner: Token, message: String) {
        match &mut self.status {
            Some(loader) => loader.set_message(message),
            None => {
                self.status = Some(Loader::new(
                    theme::current(),
                    spinner,
                    Token::Muted,
                    message,
                ))
            }
        }
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
            add(format!("Steering: {}", super::text_style::safe(m)));
        }
        for m in &self.follow_up {
            add(format!("Follow-up: {}", super::text_style::safe(m)));
        }
        let key =
            keybindings::display_keys(&keybindings::current().key_text("app.message.dequeue"));
        add(format!("↳ {key} to edit all queued messages"));
        lines
    }
}

impl View {
    /// Shows `dialog` where the editor was (the editor keeps its text for when it returns).
    pub fn show_dialog(&mut self, dialog: Box<dyn Dialog>) {
        self.dialog = Some(dialog);
    }

    /// Puts the editor back in place of the dialog.
    pub fn close_dialog(&mut self) {
        self.dialog = None;
    }

    pub fn has_dialog(&self) -> bool {
        self.dialog.is_some()
    }

    /// The dialog in the editor's place.
    pub fn dialog_mut(&mut self) -> Option<&mut (dyn Dialog + 'static)> {
        self.dialog.as_deref_mut()
    }

    pub fn new(header: Header, editor: Editor, footer: Footer) -> View {
        View {
            header,
            chat: Transcript::new(),
            steering: Vec::new(),
            follow_up: Vec::new(),
            status: None,
            editor,
            dialog: None,
            footer,
            last_is_status: false,
            frame: FrameCache::default(),
            extension: Default::default(),
            fullscreen: None,
            tools_expanded: false,
            hide_thinking: false,
        }
    }

    /// The rows under the transcript: queued messages, the indicator, editor and footer.
    fn bottom_lines(&mut self, width: usize) -> Vec<String> {
        let mut lines = self.pending_lines(width);
        if let Some(loader) = &mut self.status {
            lines.extend(loader.render(width));
        }
        // pi's widget row above the editor: a blank row, then the extensions' widgets.
        lines.push(String::new());
        lines.extend(self.extension.render_above(width, false));
        // A selector takes the editor's place, whichever editor (an extension's or ours).
        let editor = match &mut self.dialog {
            Some(dialog) => Some(dialog.render(width)),
            None => self.extension.render_editor(width),
        };
        match editor {
            Some(editor) => lines.extend(editor),
            None => lines.extend(self.editor.render(width)),
        }
        lines.extend(self.extension.render_below(width));
        match self.extension.render_footer(width) {
            Some(footer) => lines.extend(footer),
            None => lines.extend(self.footer.render(width)),
        }
        lines.extend(self.extension.render_statuses(width));
        lines
    }

    /// Brings the stacked frame up to date; returns the first row that changed.
    fn update_frame(&mut self, width: usize) -> Option<usize> {
        let header = match self.extension.render_header(width) {
            Some(lines) => lines,
            None => self.header.render(width),
        };
        let transcript_len = self.chat.layout(width);
        let transcript_changed = self.chat.take_changed_from();
        let bottom = self.bottom_lines(width);
        let frame = &mut self.frame;
        let mut changed: Option<usize> = None;
        let mut note = |row: usize| changed = Some(changed.map_or(row, |c: usize| c.min(row)));
        if frame.width != Some(width) {
            frame.width = Some(width);
            note(0);
        }
        if let Some(at) = first_difference(&frame.header, &header) {
            note(at);
            frame.header = header;
        }
        let header_len = frame.header.len();
        if let Some(at) = transcript_changed {
            note(header_len + at);
        }
        let bottom_start = header_len + transcript_len;
        if let Some(at) = first_difference(&frame.bottom, &bottom) {
            note(bottom_start + at);
            frame.bottom = bottom;
        }
        if frame.lines.len() != bottom_start + frame.bottom.len() {
            note(bottom_start.min(frame.lines.len()));
        }
        let from = changed?.min(frame.lines.len());
        frame.lines.truncate(from);
        if from < header_len {
            frame.lines.extend_from_slice(&frame.header[from..]);
        }
        if from < bottom_start {
            let skip = from.saturating_sub(header_len);
            frame.lines.extend(self.chat.rows_from(skip).cloned());
        }
        let skip = from.saturating_sub(bottom_start);
        frame.lines.extend_from_slice(&frame.bottom[skip..]);
        Some(from)
    }
}

/// Fullscreen mode's view of the frame: the rows above the dock scroll, the dock stays.
impl View {
    /// The header and transcript rows of the last frame.
    pub fn content_lines(&self) -> &[String] {
        let end = self
            .frame
            .lines
            .len()
            .saturating_sub(self.frame.bottom.len());
        &self.frame.lines[..end]
    }

    /// The whole last frame, as regular mode would print it.
    pub fn document(&self) -> &[String] {
        &self.frame.lines
    }

    /// Fullscreen state and the content rows it selects and searches in (fullscreen only).
    pub fn fullscreen_and_content(&mut self) -> (&mut Fullscreen, &[String]) {
        let end = self
            .frame
            .lines
            .len()
            .saturating_sub(self.frame.bottom.len());
        let fs = self.fullscreen.as_mut().expect("fullscreen mode");
        (fs, &self.frame.lines[..end])
    }

    /// A click on content row `row`: a finished tool call's block there expands or collapses
    /// (pi 1.x's fullscreen click regions).
    pub fn toggle_tool_at(&mut self, row: usize) {
        let Some(index) = row
            .checked_sub(self.frame.header.len())
            .and_then(|r| self.chat.item_at_row(r))
        else {
            return;
        };
        if matches!(self.chat.get(index), Some(ChatItem::Tool(_))) {
            if let Some(ChatItem::Tool(tool)) = self.chat.get_mut(index) {
                tool.toggle_expanded();
            }
        }
    }

    /// The content rows user messages start on (the prompt-jump targets).
    pub fn prompt_rows(&self) -> Vec<usize> {
        let header = self.frame.header.len();
        self.chat
            .start_rows(|item| matches!(item, ChatItem::User(_)))
            .into_iter()
            .map(|row| header + row)
            .collect()
    }

    fn compose_fullscreen(&mut self, width: usize) -> Option<&[String]> {
        let fs = self.fullscreen.as_mut()?;
        let end = self
            .frame
            .lines
            .len()
            .saturating_sub(self.frame.bottom.len());
        Some(fs.compose(&self.frame.lines[..end], &self.frame.bottom, width))
    }
}

impl Component for View {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.update_frame(width);
        match self.compose_fullscreen(width) {
            Some(screen) => screen.to_vec(),
            None => self.frame.lines.clone(),
        }
    }

    fn render_borrowed(&mut self, width: usize) -> Option<(&[String], usize)> {
        let since = self.update_frame(width).unwrap_or(self.frame.lines.len());
        if self.fullscreen.is_some() {
            // The screen is recomposed each frame; the renderer diffs its rows.
            return self.compose_fullscreen(width).map(|s| (s, 0));
        }
        Some((&self.frame.lines, since))
    }

    fn handle_input(&mut self, event: &crate::tui::InputEvent) -> bool {
        match &mut self.dialog {
            Some(dialog) => dialog.handle_input(event),
            None => self.editor.handle_input(event),
        }
    }

    fn invalidate(&mut self) {
        self.chat.invalidate();
        self.editor.invalidate();
        if let Some(dialog) = &mut self.dialog {
            dialog.invalidate();
        }
        self.frame = FrameCache::default();
    }
}
