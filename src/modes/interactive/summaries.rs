//! Compaction and branch summaries in the transcript, as pi draws them: on the custom-message
//! background, a `[compaction]` or `[branch]` label, then one line saying what it is until
//! Ctrl+O (`app.tools.expand`) shows the summary itself as Markdown.

use std::sync::Arc;

use super::text_style::safe;
use crate::tui::components::boxed::Boxed;
use crate::tui::components::markdown::{DefaultTextStyle, Markdown};
use crate::tui::components::text::{Fill, Spacer, Text};
use crate::tui::keybindings;
use crate::tui::theme::{self, Token};
use crate::tui::Component;

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Compaction { tokens_before: u64 },
    Branch,
}

pub struct SummaryView {
    kind: Kind,
    summary: String,
    expanded: bool,
    body: Boxed,
}

impl SummaryView {
    /// A compaction's summary (`tokens_before`: the context size it replaced).
    pub fn compaction(summary: &str, tokens_before: u64, expanded: bool) -> SummaryView {
        SummaryView::new(Kind::Compaction { tokens_before }, summary, expanded)
    }

    /// The summary of a branch left through `/tree`.
    pub fn branch(summary: &str, expanded: bool) -> SummaryView {
        SummaryView::new(Kind::Branch, summary, expanded)
    }

    fn new(kind: Kind, summary: &str, expanded: bool) -> SummaryView {
        let mut view = SummaryView {
            kind,
            summary: safe(summary),
            expanded,
            body: Boxed::new(1, 1, None),
        };
        view.build();
        view
    }

    pub fn set_expanded(&mut self, expanded: bool) {
        if self.expanded != expanded {
            self.expanded = expanded;
            self.build();
        }
    }

    fn build(&mut self) {
        let theme = theme::current();
        let mut body = Boxed::new(1, 1, Some(Fill::token(&theme, Token::CustomMessageBg)));
        let (label, heading, collapsed) = match &self.kind {
            Kind::Compaction { tokens_before } => {
                let tokens = format_count(*tokens_before);
                (
                    "[compaction]",
                    format!("**Compacted from {tokens} tokens**"),
                    format!("Compacted from {tokens} tokens ("),
                )
            }
            Kind::Branch => (
                "[branch]",
                "**Branch Summary**".to_string(),
                "Branch summary (".to_string(),
            ),
        };
        let label = theme.fg(Token::CustomMessageLabel, &theme.bold(label));
        body.add_child(Box::new(Text::new(label, 0, 0)));
        body.add_child(Box::new(Spacer::new(1)));
        if self.expanded {
            let text = format!("{heading}\n\n{}", self.summary);
            let md = Markdown::new(text, 0, 0, Arc::clone(&theme)).with_default_style(
                DefaultTextStyle {
                    color: Some(Token::CustomMessageText),
                    ..Default::default()
                },
            );
            body.add_child(Box::new(md));
        } else {
            let key = keybindings::current().key_text("app.tools.expand");
            let line = format!(
                "{}{}{}",
                theme.fg(Token::CustomMessageText, &collapsed),
                theme.fg(Token::Dim, &key),
                theme.fg(Token::CustomMessageText, " to expand)")
            );
            body.add_child(Box::new(Text::new(line, 0, 0)));
        }
        self.body = body;
    }
}

impl Component for SummaryView {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = vec![String::new()];
        lines.extend(self.body.render(width));
        lines
    }

    fn invalidate(&mut self) {
        self.build();
    }
}

/// `12,345`-style grouping, as `toLocaleString` prints it.
pub fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;

    fn screen(view: &mut SummaryView, width: usize) -> Vec<String> {
        view.render(width)
            .iter()
            .map(|l| strip_ansi(l).trim_end().to_string())
            .collect()
    }

    #[test]
    fn a_compaction_is_one_line_until_expanded() {
        let mut view = SummaryView::compaction("## Goal\nShip the **parser**.", 12_345, false);
        assert_eq!(
            screen(&mut view, 60),
            [
                "",
                "",
                " [compaction]",
                "",
                " Compacted from 12,345 tokens (ctrl+o to expand)",
                ""
            ]
        );
        view.set_expanded(true);
        let text = screen(&mut view, 60).join("\n");
        assert!(text.contains(" Compacted from 12,345 tokens\n"), "{text}");
        assert!(text.contains("Goal"), "{text}");
        assert!(text.contains("Ship the parser."), "{text}");
        assert!(!text.contains("to expand"), "{text}");
    }

    #[test]
    fn a_branch_summary_expands_to_its_text() {
        let mut view = SummaryView::branch("Tried the old API.", false);
        assert!(screen(&mut view, 60).contains(&" Branch summary (ctrl+o to expand)".to_string()));
        view.set_expanded(true);
        let text = screen(&mut view, 60).join("\n");
        assert!(text.contains("Branch Summary") && text.contains("Tried the old API."));
    }

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(1_000), "1,000");
        assert_eq!(format_count(1_234_567), "1,234,567");
    }
}
