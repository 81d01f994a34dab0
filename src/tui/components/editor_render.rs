//! Drawing the editor as pi does: a horizontal rule above and below (showing how many
//! rows are scrolled out of view), the wrapped text with a reverse-video fake cursor and
//! [`CURSOR_MARKER`] before it, and the autocomplete popup underneath.

use super::Editor;
use crate::tui::components::editor_layout::{find_visual_line, segments, visual_lines};
use crate::tui::text::{truncate_to_width, visible_width};
use crate::tui::CURSOR_MARKER;

const CURSOR_ON: &str = "\x1b[7m";
const CURSOR_OFF: &str = "\x1b[0m";
/// Below this, the popup's description column is not worth showing.
const MIN_DESCRIPTION_WIDTH: usize = 10;

impl Editor {
    pub(super) fn render_lines(&mut self, width: usize) -> Vec<String> {
        let width = width.max(1);
        let pad = self.padding_x.min(width.saturating_sub(1) / 2);
        let content_width = width.saturating_sub(pad * 2).max(1);
        // Without padding, keep a column free for the cursor at a row's end.
        let layout_width = content_width.saturating_sub(usize::from(pad == 0)).max(1);
        self.layout_width = layout_width;

        let ids = self.marker_ids();
        let vls = visual_lines(&self.state.lines, layout_width, &ids);
        let cursor_row = find_visual_line(&vls, self.state.line, self.state.col);
        let max_rows = self.max_visible_lines();
        if cursor_row < self.scroll_offset {
            self.scroll_offset = cursor_row;
        } else if cursor_row >= self.scroll_offset + max_rows {
            self.scroll_offset = cursor_row + 1 - max_rows;
        }
        self.scroll_offset = self.scroll_offset.min(vls.len().saturating_sub(max_rows));
        let end = (self.scroll_offset + max_rows).min(vls.len());

        let mut out = Vec::new();
        out.push(self.rule(width, "↑", self.scroll_offset));
        let side = " ".repeat(pad);
        let show_marker = self.focused && self.popup.is_none();
        for (row, vl) in vls.iter().enumerate().take(end).skip(self.scroll_offset) {
            let line = &self.state.lines[vl.line];
            let text = &line[vl.start..vl.end];
            let mut shown = text.to_string();
            let mut used = visible_width(text);
            let mut right = side.clone();
            if row == cursor_row {
                let at = self.state.col - vl.start;
                let marker = if show_marker { CURSOR_MARKER } else { "" };
                let under = segments(line, &ids)
                    .into_iter()
                    .find(|s| s.start == self.state.col && s.end <= vl.end);
                shown = match under {
                    Some(s) => format!(
                        "{}{marker}{CURSOR_ON}{}{CURSOR_OFF}{}",
                        &text[..at],
                        s.text(line),
                        &line[s.end..vl.end]
                    ),
                    None => {
                        used += 1;
                        if used > content_width && pad > 0 {
                            right.pop();
                        }
                        format!("{text}{marker}{CURSOR_ON} {CURSOR_OFF}")
                    }
                };
            }
            let fill = " ".repeat(content_width.saturating_sub(used));
            out.push(format!("{side}{shown}{fill}{right}"));
        }
        out.push(self.rule(width, "↓", vls.len() - end));
        if self.popup.is_some() {
            for line in self.render_popup(content_width) {
                let fill = " ".repeat(content_width.saturating_sub(visible_width(&line)));
                out.push(format!("{side}{line}{fill}{side}"));
            }
        }
        out
    }

    /// A border rule, with "↑ N more" / "↓ N more" when rows are scrolled out of view.
    fn rule(&self, width: usize, arrow: &str, hidden: usize) -> String {
        if hidden == 0 {
            return (self.border)(&"─".repeat(width));
        }
        let label = format!("─── {arrow} {hidden} more ");
        let rest = width.saturating_sub(visible_width(&label));
        let text = format!("{label}{}", "─".repeat(rest));
        (self.border)(&truncate_to_width(&text, width, "", false))
    }

    fn render_popup(&self, width: usize) -> Vec<String> {
        let Some(popup) = &self.popup else {
            return Vec::new();
        };
        let n = popup.items.len();
        let max = self.popup_max_visible;
        let start = popup
            .selected
            .saturating_sub(max / 2)
            .min(n.saturating_sub(max));
        let end = (start + max).min(n);
        // As pi: command names get a column between 12 and 32 wide, everything else (files,
        // command arguments) a fixed 32.
        let primary = if popup.prefix.starts_with('/') {
            let widest = popup.items.iter().map(|i| visible_width(&i.label)).max();
            (widest.unwrap_or(0) + 2).clamp(12, 32)
        } else {
            32
        };
        let mut out = Vec::new();
        for (i, item) in popup.items.iter().enumerate().take(end).skip(start) {
            let selected = i == popup.selected;
            let prefix = if selected { "→ " } else { "  " };
            let desc = item
                .description
                .as_deref()
                .map(|d| d.split(['\r', '\n']).collect::<Vec<_>>().join(" "));
            let label = item.label.as_str();
            let line = match desc.filter(|_| width > 40) {
                Some(desc) => {
                    let col = primary.min(width.saturating_sub(6)).max(1);
                    let value = truncate_to_width(label, col.saturating_sub(2).max(1), "…", false);
                    let spacing = " ".repeat(col.saturating_sub(visible_width(&value)).max(1));
                    let used = 2 + visible_width(&value) + spacing.len();
                    let room = width.saturating_sub(used + 2);
                    if room > MIN_DESCRIPTION_WIDTH {
                        let desc = truncate_to_width(&desc, room, "", false);
                        if selected {
                            (self.selected_style)(&format!("{prefix}{value}{spacing}{desc}"))
                        } else {
                            format!(
                                "{prefix}{value}{}",
                                (self.description_style)(&format!("{spacing}{desc}"))
                            )
                        }
                    } else {
                        self.popup_plain(prefix, label, width, selected)
                    }
                }
                None => self.popup_plain(prefix, label, width, selected),
            };
            out.push(line);
        }
        if start > 0 || end < n {
            let info = format!("  ({}/{n})", popup.selected + 1);
            let info = truncate_to_width(&info, width.saturating_sub(2), "", false);
            out.push((self.description_style)(&info));
        }
        out
    }

    fn popup_plain(&self, prefix: &str, label: &str, width: usize, selected: bool) -> String {
        let value = truncate_to_width(label, width.saturating_sub(4).max(1), "…", false);
        if selected {
            (self.selected_style)(&format!("{prefix}{value}"))
        } else {
            format!("{prefix}{value}")
        }
    }
}
