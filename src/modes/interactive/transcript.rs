//! [`Transcript`]: the chat items with the lines each rendered last, so a frame re-renders
//! only the items that may have changed and restacks only the rows from the first change
//! down. An item counts as changed whenever it was handed out by `&mut` (`get_mut`,
//! `iter_mut`, indexing) or the list around it changed shape; a keystroke that touches no
//! item costs nothing here however long the session is.

use std::ops::{Index, IndexMut};

use super::chat::ChatItem;
use crate::tui::Component;

#[derive(Default)]
pub struct Transcript {
    items: Vec<ChatItem>,
    /// What each item rendered last, parallel to `items`.
    cached: Vec<Cached>,
    /// The lowest item index that is dirty or where the list changed shape.
    first_dirty: Option<usize>,
    /// The lowest index where items were inserted or removed (rows from its start moved).
    reshaped_from: Option<usize>,
    width: Option<usize>,
    /// How many rows all items take.
    rows: usize,
    /// The first row changed since the last [`Transcript::take_changed_from`].
    changed_from: Option<usize>,
}

#[derive(Default)]
struct Cached {
    lines: Vec<String>,
    dirty: bool,
}

impl Transcript {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, ChatItem> {
        self.items.iter()
    }

    /// Every item, each counted as changed.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, ChatItem> {
        for c in &mut self.cached {
            c.dirty = true;
        }
        if !self.items.is_empty() {
            self.mark(0);
        }
        self.items.iter_mut()
    }

    pub fn get(&self, index: usize) -> Option<&ChatItem> {
        self.items.get(index)
    }

    /// The item at `index`, counted as changed.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut ChatItem> {
        let cached = self.cached.get_mut(index)?;
        cached.dirty = true;
        self.mark(index);
        self.items.get_mut(index)
    }

    pub fn push(&mut self, item: ChatItem) {
        self.items.push(item);
        self.cached.push(Cached {
            lines: Vec::new(),
            dirty: true,
        });
        self.reshaped(self.items.len() - 1);
    }

    pub fn pop(&mut self) -> Option<ChatItem> {
        let item = self.items.pop()?;
        self.cached.pop();
        self.reshaped(self.items.len());
        Some(item)
    }

    pub fn clear(&mut self) {
        self.replace(Vec::new());
    }

    /// Puts `items` in place of everything.
    pub fn replace(&mut self, items: Vec<ChatItem>) {
        self.cached = items
            .iter()
            .map(|_| Cached {
                lines: Vec::new(),
                dirty: true,
            })
            .collect();
        self.items = items;
        self.reshaped(0);
    }

    /// Drops every item's rendered lines (theme change) and has the items drop theirs.
    pub fn invalidate(&mut self) {
        for item in self.iter_mut() {
            item.invalidate();
        }
        self.width = None;
    }

    /// Brings every item's lines up to date at `width`; returns how many rows they take.
    pub fn layout(&mut self, width: usize) -> usize {
        self.relayout(width);
        self.rows
    }

    /// The rows from `from` down, as laid out by the last [`Transcript::layout`].
    pub fn rows_from(&self, from: usize) -> impl Iterator<Item = &String> {
        let mut start = 0;
        self.cached.iter().flat_map(move |c| {
            let skip = from.saturating_sub(start);
            start += c.lines.len();
            c.lines.iter().skip(skip)
        })
    }

    /// The rows the items `want` picks start on, as laid out last.
    pub fn start_rows(&self, want: impl Fn(&ChatItem) -> bool) -> Vec<usize> {
        let mut row = 0;
        let mut rows = Vec::new();
        for (item, cached) in self.items.iter().zip(&self.cached) {
            if want(item) {
                rows.push(row);
            }
            row += cached.lines.len();
        }
        rows
    }

    /// The index of the item that drew transcript row `row` (as last laid out).
    pub fn item_at_row(&self, row: usize) -> Option<usize> {
        let mut end = 0;
        self.cached.iter().position(|cached| {
            end += cached.lines.len();
            row < end
        })
    }

    /// The first row that changed since the last call (`None`: nothing did).
    pub fn take_changed_from(&mut self) -> Option<usize> {
        self.changed_from.take()
    }

    fn mark(&mut self, index: usize) {
        self.first_dirty = Some(self.first_dirty.map_or(index, |d| d.min(index)));
    }

    fn reshaped(&mut self, index: usize) {
        self.mark(index);
        self.reshaped_from = Some(self.reshaped_from.map_or(index, |d| d.min(index)));
    }

    fn relayout(&mut self, width: usize) {
        if self.width != Some(width) {
            self.width = Some(width);
            for c in &mut self.cached {
                c.dirty = true;
            }
            self.reshaped(0);
        }
        let Some(from) = self.first_dirty.take() else {
            return;
        };
        let reshaped_from = self.reshaped_from.take();
        let mut row: usize = self.cached[..from.min(self.cached.len())]
            .iter()
            .map(|c| c.lines.len())
            .sum();
        // The first row whose content may differ from what the last layout had.
        let mut first_changed: Option<usize> = None;
        for i in from..self.items.len() {
            if reshaped_from == Some(i) {
                first_changed.get_or_insert(row);
            }
            let cached = &mut self.cached[i];
            if cached.dirty {
                cached.dirty = false;
                let fresh = self.items[i].render(width);
                if let Some(at) = first_difference(&cached.lines, &fresh) {
                    first_changed.get_or_insert(row + at);
                    cached.lines = fresh;
                }
            }
            row += cached.lines.len();
        }
        if reshaped_from.is_some_and(|r| r >= self.items.len()) || row != self.rows {
            first_changed.get_or_insert(row.min(self.rows));
        }
        self.rows = row;
        if let Some(changed) = first_changed {
            self.changed_from = Some(self.changed_from.map_or(changed, |d| d.min(changed)));
        }
    }
}

/// The first row where `old` and `new` differ, counting a length change; `None` if equal.
pub(super) fn first_difference(old: &[String], new: &[String]) -> Option<usize> {
    let common = old.len().min(new.len());
    match (0..common).find(|&i| old[i] != new[i]) {
        Some(i) => Some(i),
        None if old.len() != new.len() => Some(common),
        None => None,
    }
}

impl Index<usize> for Transcript {
    type Output = ChatItem;
    fn index(&self, index: usize) -> &ChatItem {
        &self.items[index]
    }
}

impl IndexMut<usize> for Transcript {
    fn index_mut(&mut self, index: usize) -> &mut ChatItem {
        self.get_mut(index)
            .unwrap_or_else(|| panic!("transcript index {index} out of range"))
    }
}

impl<'a> IntoIterator for &'a mut Transcript {
    type Item = &'a mut ChatItem;
    type IntoIter = std::slice::IterMut<'a, ChatItem>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<'a> IntoIterator for &'a Transcript {
    type Item = &'a ChatItem;
    type IntoIter = std::slice::Iter<'a, ChatItem>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl From<Vec<ChatItem>> for Transcript {
    fn from(items: Vec<ChatItem>) -> Self {
        let mut t = Transcript::new();
        t.replace(items);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::theme::Token;

    fn note(text: &str) -> ChatItem {
        ChatItem::note(Token::Dim, text)
    }

    /// What rendering every item afresh gives.
    fn fresh(t: &mut Transcript, width: usize) -> Vec<String> {
        let mut lines = Vec::new();
        for item in t.items.iter_mut() {
            lines.extend(item.render(width));
        }
        lines
    }

    fn lines(t: &mut Transcript, width: usize) -> Vec<String> {
        t.layout(width);
        t.rows_from(0).cloned().collect()
    }

    fn plain(lines: &[String]) -> Vec<String> {
        lines
            .iter()
            .map(|l| crate::tui::text::strip_ansi(l).trim().to_string())
            .collect()
    }

    #[test]
    fn an_untouched_transcript_reports_no_change_and_edits_report_their_first_row() {
        let mut t = Transcript::new();
        for i in 0..5 {
            t.push(note(&format!("note {i}")));
        }
        assert_eq!(t.layout(40), 10, "each note is a blank row and its text");
        assert_eq!(t.take_changed_from(), Some(0));
        t.layout(40);
        assert_eq!(t.take_changed_from(), None);

        t[3] = note("changed\nand longer");
        let lines = lines(&mut t, 40);
        assert_eq!(t.take_changed_from(), Some(7), "the text row of item 3");
        assert_eq!(lines, fresh(&mut t, 40));
        assert_eq!(plain(&lines)[7..9], ["changed", "and longer"]);
    }

    #[test]
    fn shape_changes_and_width_changes_match_a_fresh_render() {
        let mut t = Transcript::new();
        for i in 0..4 {
            t.push(note(&format!("item {i}")));
        }
        t.layout(30);
        t.take_changed_from();
        t.pop();
        assert_eq!(lines(&mut t, 30), fresh(&mut t, 30));
        assert_eq!(t.take_changed_from(), Some(6));
        t.push(note("new last"));
        t.push(note("another"));
        assert_eq!(lines(&mut t, 30), fresh(&mut t, 30));
        assert_eq!(t.take_changed_from(), Some(6));
        t.replace(vec![note("only")]);
        assert_eq!(plain(&lines(&mut t, 30)), ["", "only"]);
        assert_eq!(t.take_changed_from(), Some(0));
        t.push(note("a rather long note that wraps at a narrow width"));
        t.layout(30);
        t.take_changed_from();
        let narrow = lines(&mut t, 12);
        assert_eq!(narrow, fresh(&mut t, 12));
        assert_eq!(t.take_changed_from(), Some(0));
        t.clear();
        assert_eq!(t.layout(12), 0);
    }

    #[test]
    fn touching_an_item_without_changing_it_reports_nothing() {
        let mut t = Transcript::from(vec![note("a"), note("b")]);
        t.layout(20);
        t.take_changed_from();
        let _ = t.get_mut(1);
        t.layout(20);
        assert_eq!(t.take_changed_from(), None);
    }
}
