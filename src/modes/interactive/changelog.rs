//! `/changelog`: this build's CHANGELOG.md, bundled into the binary, shown as pi shows its
//! own — every version entry (`## [x.y.z] …` up to the next one), oldest first, as Markdown
//! between two rules under a "What's New" title.

use std::sync::Arc;

use super::chat::ChatItem;
use crate::tui::components::markdown::Markdown;
use crate::tui::components::text::Text;
use crate::tui::theme::{self, Theme, Token};
use crate::tui::Component;
use crate::util::packed::Pack;

/// The changelog shipped with this build (deflated by build.rs).
static BUNDLED: Pack = include!(concat!(env!("OUT_DIR"), "/changelog.pack.rs"));

/// The version entries of a changelog, newest first as written: each from its `## [x.y.z]`
/// heading up to the next `## ` line. Headings without a version end the entry before them
/// and start nothing.
pub fn entries(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in text.lines() {
        if line.starts_with("## ") {
            if let Some(lines) = current.take() {
                out.push(lines.join("\n").trim().to_string());
            }
            if has_version(line) {
                current = Some(vec![line]);
            }
        } else if let Some(lines) = &mut current {
            lines.push(line);
        }
    }
    if let Some(lines) = current {
        out.push(lines.join("\n").trim().to_string());
    }
    out
}

/// `## 1.2.3` or `## [1.2.3]`, as pi's changelog parser accepts.
fn has_version(heading: &str) -> bool {
    let rest = heading[2..].trim_start();
    let rest = rest.strip_prefix('[').unwrap_or(rest);
    let parts: Vec<&str> = rest.splitn(3, '.').collect();
    parts.len() == 3
        && parts[..2]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && parts[2].starts_with(|c: char| c.is_ascii_digit())
}

/// What `/changelog` shows: every entry, oldest first.
pub fn markdown(text: &str) -> String {
    let mut all = entries(text);
    if all.is_empty() {
        return "No changelog entries found.".into();
    }
    all.reverse();
    all.join("\n\n")
}

/// The `/changelog` block of the transcript.
pub fn view() -> ChatItem {
    let bundled = BUNDLED.unpack();
    ChatItem::Block(Box::new(ChangelogView {
        theme: theme::current(),
        body: Markdown::new(
            markdown(bundled.file("CHANGELOG.md")),
            1,
            1,
            theme::current(),
        ),
    }))
}

struct ChangelogView {
    theme: Arc<Theme>,
    body: Markdown,
}

impl Component for ChangelogView {
    fn render(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let rule = t.fg(Token::Border, &"─".repeat(width.max(1)));
        let mut lines = vec![String::new(), rule.clone()];
        let title = t.bold(&t.fg(Token::Accent, "What's New"));
        lines.extend(Text::new(title, 1, 0).render(width));
        lines.push(String::new());
        lines.extend(self.body.render(width));
        lines.push(rule);
        lines
    }

    fn invalidate(&mut self) {
        self.theme = theme::current();
        self.body.invalidate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;

    #[test]
    fn entries_are_the_versioned_sections_shown_oldest_first() {
        let text = "# Changelog\n\nintro\n\n## [Unreleased]\n\nnot shown\n\n## [1.2.0] - 2026-01-02\n\n- newer\n\n## 1.1.9\n\n- older\n";
        assert_eq!(
            entries(text),
            ["## [1.2.0] - 2026-01-02\n\n- newer", "## 1.1.9\n\n- older"]
        );
        assert_eq!(
            markdown(text),
            "## 1.1.9\n\n- older\n\n## [1.2.0] - 2026-01-02\n\n- newer"
        );
        assert_eq!(markdown("# nothing"), "No changelog entries found.");
    }

    #[test]
    fn the_bundled_changelog_has_this_version() {
        let all = entries(BUNDLED.unpack().file("CHANGELOG.md"));
        assert!(
            all[0].starts_with(&format!("## [{}]", crate::VERSION)),
            "{:?}",
            all.first()
        );
        let mut view = view();
        let lines: Vec<String> = view.render(80).iter().map(|l| strip_ansi(l)).collect();
        assert_eq!(lines[2].trim_end(), " What's New");
        assert!(
            lines.iter().any(|l| l.contains("New Features")),
            "{lines:#?}"
        );
        assert_eq!(
            lines.last().map(String::as_str),
            Some("─".repeat(80).as_str())
        );
    }
}
