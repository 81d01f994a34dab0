//! What extensions put around the editor, drawn as pi draws it: widgets (lines set with
//! `ui.setWidget`) above or below the editor, each at most ten lines, the statuses of
//! `ui.setStatus` as one line under the footer, sorted by key, and what an extension draws in
//! place of pi's own footer, header or editor.

use std::collections::BTreeMap;

use crate::extensions::ui::WidgetPlacement;
use crate::tui::components::text::Text;
use crate::tui::text::truncate_to_width;
use crate::tui::theme::{self, Token};
use crate::tui::Component;

/// pi caps each widget so an extension cannot push the editor off the screen.
const MAX_WIDGET_LINES: usize = 10;

struct Widget {
    key: String,
    lines: Vec<String>,
}

#[derive(Default)]
pub struct ExtensionChrome {
    /// Footer statuses by key (already flattened to one line and sanitized).
    pub statuses: BTreeMap<String, String>,
    above: Vec<Widget>,
    below: Vec<Widget>,
    /// An extension's footer lines in place of pi's (`ui.setFooter`).
    pub footer: Option<Vec<String>>,
    /// An extension's header lines in place of pi's start-up header (`ui.setHeader`).
    pub header: Option<Vec<String>>,
    /// An extension's editor in place of pi's (`ui.setEditorComponent`).
    pub editor: Option<super::ext_component::RemoteComponent>,
}

impl ExtensionChrome {
    /// Sets, moves or (with `lines: None`) removes the widget `key`.
    pub fn set_widget(
        &mut self,
        key: String,
        lines: Option<Vec<String>>,
        placement: Option<WidgetPlacement>,
    ) {
        self.above.retain(|w| w.key != key);
        self.below.retain(|w| w.key != key);
        let Some(lines) = lines else { return };
        let widget = Widget { key, lines };
        match placement {
            Some(WidgetPlacement::BelowEditor) => self.below.push(widget),
            _ => self.above.push(widget),
        }
    }

    /// Forgets everything (the extensions were restarted).
    pub fn clear(&mut self) {
        *self = ExtensionChrome::default();
    }

    fn render_widgets(widgets: &[Widget], width: usize) -> Vec<String> {
        let theme = theme::current();
        let mut out = Vec::new();
        for w in widgets {
            for line in w.lines.iter().take(MAX_WIDGET_LINES) {
                out.extend(Text::new(super::text_style::safe(line), 1, 0).render(width));
            }
            if w.lines.len() > MAX_WIDGET_LINES {
                let more = theme.fg(Token::Muted, "... (widget truncated)");
                out.extend(Text::new(more, 1, 0).render(width));
            }
        }
        out
    }

    /// Widgets above the editor; `spacer` puts a blank line before them (after a loader).
    pub fn render_above(&self, width: usize, spacer: bool) -> Vec<String> {
        let mut out = Vec::new();
        if spacer && !self.above.is_empty() {
            out.push(String::new());
        }
        out.extend(Self::render_widgets(&self.above, width));
        out
    }

    pub fn render_below(&self, width: usize) -> Vec<String> {
        Self::render_widgets(&self.below, width)
    }

    /// Lines an extension drew, kept to the width (colours kept, nothing else).
    fn drawn(lines: &[String], width: usize) -> Vec<String> {
        lines
            .iter()
            .map(|l| truncate_to_width(&super::ext_component::keep_colours(l), width, "", false))
            .collect()
    }

    /// The extension's footer, if one replaces pi's.
    pub fn render_footer(&self, width: usize) -> Option<Vec<String>> {
        self.footer.as_ref().map(|l| Self::drawn(l, width))
    }

    /// The extension's header, if one replaces pi's.
    pub fn render_header(&self, width: usize) -> Option<Vec<String>> {
        self.header.as_ref().map(|l| Self::drawn(l, width))
    }

    /// The extension's editor, if one replaces pi's.
    pub fn render_editor(&mut self, width: usize) -> Option<Vec<String>> {
        self.editor.as_mut().map(|e| e.render(width))
    }

    /// The status line under the footer, if any extension set a status.
    pub fn render_statuses(&self, width: usize) -> Vec<String> {
        if self.statuses.is_empty() {
            return Vec::new();
        }
        let line: Vec<&str> = self.statuses.values().map(String::as_str).collect();
        let theme = theme::current();
        vec![truncate_to_width(
            &line.join(" "),
            width,
            &theme.fg(Token::Dim, "..."),
            false,
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::{strip_ansi, visible_width};

    #[test]
    fn widgets_are_capped_and_statuses_sorted_by_key() {
        let mut c = ExtensionChrome::default();
        c.set_widget(
            "todo".into(),
            Some((1..=12).map(|i| format!("item {i}")).collect()),
            None,
        );
        c.set_widget(
            "hint".into(),
            Some(vec!["below".into()]),
            Some(WidgetPlacement::BelowEditor),
        );
        let above: Vec<String> = c
            .render_above(40, true)
            .iter()
            .map(|l| strip_ansi(l))
            .collect();
        assert_eq!(above[0], "");
        assert_eq!(above[1].trim(), "item 1");
        assert_eq!(above.len(), 1 + MAX_WIDGET_LINES + 1);
        assert!(above.last().unwrap().contains("widget truncated"));
        assert_eq!(strip_ansi(&c.render_below(40)[0]).trim(), "below");
        c.set_widget("todo".into(), None, None);
        assert!(c.render_above(40, true).is_empty());

        c.statuses.insert("b".into(), "second".into());
        c.statuses.insert("a".into(), "first".into());
        assert_eq!(strip_ansi(&c.render_statuses(80)[0]), "first second");
        assert!(visible_width(&c.render_statuses(5)[0]) <= 5);
    }
}
