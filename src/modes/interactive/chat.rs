//! The transcript's items, each a component: user messages on their background, assistant
//! replies (Markdown streamed as it arrives, thinking collapsed or shown), tool calls with
//! their results (see `tool_view`), user bash runs (`!cmd`), and one-line status, warning
//! and error notes, and extensions' custom messages. All text from models and tools is cleaned of escape sequences before it
//! is styled, so nothing they send can move the cursor or change the terminal's modes.

use std::sync::Arc;

use super::summaries::SummaryView;
use super::text_style::{key_hint, safe};
use super::tool_view::ToolView;
use crate::ai::{AssistantMessage, Content, StopReason, UserContent};
use crate::tui::components::boxed::Boxed;
use crate::tui::components::loader::Loader;
use crate::tui::components::markdown::{DefaultTextStyle, Markdown};
use crate::tui::components::text::{tail_rows, Fill, Spacer, Text};
use crate::tui::theme::{self, Theme, Token};
use crate::tui::Component;

/// Lines shown of a user bash run's output until expanded.
const BASH_PREVIEW_LINES: usize = 20;

/// One entry of the transcript.
pub enum ChatItem {
    User(UserView),
    Assistant(AssistantView),
    Tool(Box<ToolView>),
    Bash(BashView),
    /// A status, warning or error line (a blank row above it).
    Note(Text),
    /// A compaction or branch summary (Ctrl+O expands it).
    Summary(SummaryView),
    /// Anything else that is just lines (the start-up resource listing).
    Block(Box<dyn Component>),
}

impl ChatItem {
    pub fn note(token: Token, text: &str) -> ChatItem {
        let theme = theme::current();
        ChatItem::Note(Text::new(theme.fg(token, &safe(text)), 1, 0))
    }

    pub fn set_expanded(&mut self, expanded: bool) {
        match self {
            ChatItem::Tool(t) => t.set_expanded(expanded),
            ChatItem::Bash(b) => b.set_expanded(expanded),
            ChatItem::Summary(s) => s.set_expanded(expanded),
            ChatItem::User(_) | ChatItem::Assistant(_) | ChatItem::Note(_) | ChatItem::Block(_) => {
            }
        }
    }

    pub fn set_hide_thinking(&mut self, hide: bool) {
        if let ChatItem::Assistant(a) = self {
            a.set_hide_thinking(hide);
        }
    }
}

impl Component for ChatItem {
    fn render(&mut self, width: usize) -> Vec<String> {
        match self {
            ChatItem::User(u) => u.render(width),
            ChatItem::Assistant(a) => a.render(width),
            ChatItem::Tool(t) => t.render(width),
            ChatItem::Bash(b) => b.render(width),
            ChatItem::Note(t) => {
                let mut lines = vec![String::new()];
                lines.extend(t.render(width));
                lines
            }
            ChatItem::Summary(s) => s.render(width),
            ChatItem::Block(b) => b.render(width),
        }
    }

    fn invalidate(&mut self) {
        match self {
            ChatItem::User(u) => u.invalidate(),
            ChatItem::Assistant(a) => a.invalidate(),
            ChatItem::Tool(t) => t.invalidate(),
            ChatItem::Bash(b) => b.invalidate(),
            ChatItem::Note(t) => t.invalidate(),
            ChatItem::Summary(s) => s.invalidate(),
            ChatItem::Block(b) => b.invalidate(),
        }
    }
}

/// A user message: Markdown on the `userMessageBg` background, a blank row above unless it
/// opens the chat right under the header.
pub struct UserView {
    body: Boxed,
    spaced: bool,
}

impl UserView {
    /// `first`: the message opens the chat (pi adds its blank row only after other items).
    pub fn new(text: &str, first: bool) -> UserView {
        let theme = theme::current();
        let mut body = Boxed::new(1, 1, Some(Fill::token(&theme, Token::UserMessageBg)));
        let md = Markdown::new(safe(text), 0, 0, Arc::clone(&theme)).with_default_style(
            DefaultTextStyle {
                color: Some(Token::UserMessageText),
                ..Default::default()
            },
        );
        body.add_child(Box::new(md));
        UserView {
            body,
            spaced: !first,
        }
    }
}

impl Component for UserView {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = Vec::new();
        if self.spaced {
            lines.push(String::new());
        }
        lines.extend(self.body.render(width));
        lines
    }

    fn invalidate(&mut self) {
        self.body.invalidate();
    }
}

/// An extension's custom message shown with pi's default look: a `[customType]` label and
/// its text as Markdown, on the `customMessageBg` background, a blank row above.
pub struct CustomMessageView {
    body: Boxed,
}

impl CustomMessageView {
    pub fn new(custom_type: &str, content: &UserContent) -> CustomMessageView {
        let theme = theme::current();
        let mut body = Boxed::new(1, 1, Some(Fill::token(&theme, Token::CustomMessageBg)));
        let label = theme.fg(
            Token::CustomMessageLabel,
            &theme.bold(&format!("[{}]", safe(custom_type))),
        );
        body.add_child(Box::new(Text::new(label, 0, 0)));
        body.add_child(Box::new(Spacer::new(1)));
        let text = match content {
            UserContent::Text(s) => s.clone(),
            UserContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    Content::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        };
        let md = Markdown::new(safe(&text), 0, 0, Arc::clone(&theme)).with_default_style(
            DefaultTextStyle {
                color: Some(Token::CustomMessageText),
                ..Default::default()
            },
        );
        body.add_child(Box::new(md));
        CustomMessageView { body }
    }
}

impl Component for CustomMessageView {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = vec![String::new()];
        lines.extend(self.body.render(width));
        lines
    }

    fn invalidate(&mut self) {
        self.body.invalidate();
    }
}

enum Block {
    Text(Markdown),
    Thinking { shown: Markdown, text: String },
}

/// An assistant reply; [`AssistantView::update`] is called with each streamed snapshot.
pub struct AssistantView {
    blocks: Vec<Block>,
    hide_thinking: bool,
    /// What ends the reply when it has no tool calls (abort or error note).
    ending: Option<String>,
    theme: Arc<Theme>,
}

impl AssistantView {
    pub fn new(hide_thinking: bool) -> AssistantView {
        AssistantView {
            blocks: Vec::new(),
            hide_thinking,
            ending: None,
            theme: theme::current(),
        }
    }

    /// Takes the latest snapshot of the message; unchanged blocks keep their layout.
    pub fn update(&mut self, message: &AssistantMessage) {
        let visible: Vec<&Content> = message
            .content
            .iter()
            .filter(|c| match c {
                Content::Text(t) => !t.text.trim().is_empty(),
                Content::Thinking(t) => !t.thinking.trim().is_empty(),
                _ => false,
            })
            .collect();
        self.blocks.truncate(visible.len());
        for (i, content) in visible.iter().enumerate() {
            let (text, thinking) = match content {
                Content::Text(t) => (safe(t.text.trim()), false),
                Content::Thinking(t) => (safe(t.thinking.trim()), true),
                _ => continue,
            };
            let same_kind = match self.blocks.get(i) {
                Some(Block::Text(_)) => !thinking,
                Some(Block::Thinking { .. }) => thinking,
                None => false,
            };
            if !same_kind {
                self.blocks.truncate(i);
                self.blocks.push(self.new_block(thinking));
            }
            match &mut self.blocks[i] {
                Block::Text(md) => md.set_text(text),
                Block::Thinking { shown, text: t } => {
                    shown.set_text(text.clone());
                    *t = text;
                }
            }
        }
        let has_tools = message
            .content
            .iter()
            .any(|c| matches!(c, Content::ToolCall(_)));
        self.ending = match (has_tools, message.stop_reason) {
            (false, StopReason::Aborted) => Some(match message.error_message.as_deref() {
                Some(e) if e != "Request was aborted" => safe(e),
                _ => "Operation aborted".into(),
            }),
            (false, StopReason::Error) => Some(format!(
                "Error: {}",
                safe(message.error_message.as_deref().unwrap_or("Unknown error"))
            )),
            _ => None,
        };
    }

    fn new_block(&self, thinking: bool) -> Block {
        let theme = Arc::clone(&self.theme);
        if thinking {
            Block::Thinking {
                shown: Markdown::new("", 1, 0, theme)
                    .with_default_style(DefaultTextStyle::thinking()),
                text: String::new(),
            }
        } else {
            Block::Text(Markdown::new("", 1, 0, theme))
        }
    }

    pub fn set_hide_thinking(&mut self, hide: bool) {
        self.hide_thinking = hide;
    }
}

impl Component for AssistantView {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = Vec::new();
        let count = self.blocks.len();
        if count > 0 {
            lines.push(String::new());
        }
        for (i, block) in self.blocks.iter_mut().enumerate() {
            match block {
                Block::Text(md) => lines.extend(md.render(width)),
                Block::Thinking { shown, .. } => {
                    if self.hide_thinking {
                        let label = self
                            .theme
                            .italic(&self.theme.fg(Token::ThinkingText, "Thinking..."));
                        lines.extend(Text::new(label, 1, 0).render(width));
                    } else {
                        lines.extend(shown.render(width));
                    }
                    if i + 1 < count {
                        lines.push(String::new());
                    }
                }
            }
        }
        if let Some(ending) = &self.ending {
            lines.push(String::new());
            lines.extend(Text::new(self.theme.fg(Token::Error, ending), 1, 0).render(width));
        }
        lines
    }

    fn invalidate(&mut self) {
        self.theme = theme::current();
        for block in &mut self.blocks {
            match block {
                Block::Text(md) | Block::Thinking { shown: md, .. } => md.invalidate(),
            }
        }
    }
}

/// A command the user ran with `!` (or `!!`, dimmed: not added to the context), its output
/// live while it runs, then how it ended.
pub struct BashView {
    command: String,
    excluded: bool,
    output: String,
    loader: Loader,
    /// `None` while running.
    outcome: Option<BashOutcome>,
    expanded: bool,
}

pub struct BashOutcome {
    pub exit_code: Option<i64>,
    pub cancelled: bool,
    pub full_output_path: Option<String>,
    pub truncated: bool,
}

impl BashView {
    pub fn new(command: &str, excluded: bool, cancel_key: &str) -> BashView {
        let theme = theme::current();
        let color = if excluded {
            Token::Dim
        } else {
            Token::BashMode
        };
        BashView {
            command: safe(command),
            excluded,
            output: String::new(),
            loader: Loader::new(
                theme,
                color,
                Token::Muted,
                format!("Running... ({cancel_key} to cancel)"),
            ),
            outcome: None,
            expanded: false,
        }
    }

    pub fn set_output(&mut self, output: &str) {
        self.output = safe(output);
    }

    pub fn finish(&mut self, outcome: BashOutcome) {
        self.outcome = Some(outcome);
    }

    pub fn tick(&mut self) {
        if self.outcome.is_none() {
            self.loader.tick();
        }
    }

    pub fn is_running(&self) -> bool {
        self.outcome.is_none()
    }

    pub fn set_expanded(&mut self, expanded: bool) {
        self.expanded = expanded;
    }
}

impl Component for BashView {
    fn render(&mut self, width: usize) -> Vec<String> {
        let theme = theme::current();
        let color = if self.excluded {
            Token::Dim
        } else {
            Token::BashMode
        };
        let border = theme.fg(color, &"─".repeat(width));
        let mut lines = vec![String::new(), border.clone()];
        let header = theme.fg(color, &theme.bold(&format!("$ {}", self.command)));
        lines.extend(Text::new(header, 1, 0).render(width));
        let trimmed = self.output.trim_end_matches('\n');
        let all: Vec<&str> = if trimmed.is_empty() {
            Vec::new()
        } else {
            trimmed.split('\n').collect()
        };
        let shown = if self.expanded {
            &all[..]
        } else {
            &all[all.len().saturating_sub(BASH_PREVIEW_LINES)..]
        };
        let hidden = all.len() - shown.len();
        if !shown.is_empty() {
            let body: Vec<String> = shown.iter().map(|l| theme.fg(Token::Muted, l)).collect();
            let body = format!("\n{}", body.join("\n"));
            if self.expanded {
                lines.extend(Text::new(body, 1, 0).render(width));
            } else {
                // As pi: the preview's lines also fit in as many screen rows.
                lines.extend(tail_rows(&body, BASH_PREVIEW_LINES, width, 1).0);
            }
        }
        match &self.outcome {
            None => lines.extend(self.loader.render(width)),
            Some(o) => {
                let mut status = Vec::new();
                if hidden > 0 {
                    status.push(format!(
                        "{} ({})",
                        theme.fg(Token::Muted, &format!("... {hidden} more lines")),
                        key_hint(&theme, "app.tools.expand", "to expand")
                    ));
                }
                if o.cancelled {
                    status.push(theme.fg(Token::Warning, "(cancelled)"));
                } else if let Some(code) = o.exit_code.filter(|c| *c != 0) {
                    status.push(theme.fg(Token::Error, &format!("(exit {code})")));
                }
                if o.truncated {
                    if let Some(p) = &o.full_output_path {
                        status.push(theme.fg(
                            Token::Warning,
                            &format!("Output truncated. Full output: {}", safe(p)),
                        ));
                    }
                }
                if !status.is_empty() {
                    lines.push(String::new());
                    lines.extend(Text::new(status.join("\n"), 1, 0).render(width));
                }
            }
        }
        lines.push(border);
        lines
    }
}

/// An extension's custom message its renderer draws (`registerMessageRenderer`): a blank row,
/// then the lines the extension sends for the width; pi's default look when it draws nothing.
pub struct RenderedMessageView {
    render: Box<dyn FnMut(usize) -> Option<Vec<String>>>,
    fallback: CustomMessageView,
    /// The lines last drawn and their width (asking the extension again only on a resize).
    cached: Option<(usize, Option<Vec<String>>)>,
}

impl RenderedMessageView {
    pub fn new(
        render: Box<dyn FnMut(usize) -> Option<Vec<String>>>,
        fallback: CustomMessageView,
    ) -> RenderedMessageView {
        RenderedMessageView {
            render,
            fallback,
            cached: None,
        }
    }
}

impl Component for RenderedMessageView {
    fn render(&mut self, width: usize) -> Vec<String> {
        if self.cached.as_ref().is_none_or(|(w, _)| *w != width) {
            let lines = (self.render)(width);
            self.cached = Some((width, lines));
        }
        match &self.cached {
            Some((_, Some(lines))) => {
                let mut out = vec![String::new()];
                out.extend(lines.iter().cloned());
                out
            }
            _ => self.fallback.render(width),
        }
    }

    fn invalidate(&mut self) {
        self.cached = None;
        self.fallback.invalidate();
    }
}
