//! The integration point for dialogs shown over the chat (model selector, session picker,
//! tree, settings, login …).
//!
//! A dialog is any [`Component`] shown with `Tui::show_overlay`; the app remembers it as an
//! [`ActiveOverlay`] (its id plus an [`OverlayKind`] naming the concrete type) and, after every
//! key, asks it for its result with `take_outcome()`. When one arrives the app closes the
//! overlay and acts on it (`App::apply_overlay_outcome` in `app.rs`).
//!
//! To plug in a new selector (the `selectors` branch): add a variant to [`OverlayKind`], a
//! matching variant to [`OverlayOutcome`], one arm in [`poll`] that downcasts to the component
//! and maps its `take_outcome()`, and the action in `App::apply_overlay_outcome`. Until those
//! land, [`ListPicker`] — a filterable list — serves `/model` (Ctrl+L), `/resume`, `/fork` and
//! `/tree`.

use crate::tui::components::select_list::{SelectItem, SelectList, SelectResult};
use crate::tui::components::text::Text;
use crate::tui::terminal::Terminal;
use crate::tui::theme::{self, Token};
use crate::tui::{Component, InputEvent, OverlayId, Tui};

/// Which concrete component an overlay is, so its outcome can be read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlayKind {
    /// A [`ListPicker`] choosing what [`PickPurpose`] says.
    List(PickPurpose),
}

/// What a [`ListPicker`] is choosing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickPurpose {
    /// Value: `provider/model-id`.
    Model,
    /// Value: a session file path.
    Resume,
    /// Value: the entry id of a user message to fork before.
    Fork,
    /// Value: the entry id to continue from.
    Tree,
    /// Value: a provider whose stored credentials `/logout` removes.
    Logout,
}

/// The result an overlay handed back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverlayOutcome {
    /// A [`ListPicker`] ended: the chosen value, or `None` when cancelled.
    Picked(PickPurpose, Option<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveOverlay {
    pub id: OverlayId,
    pub kind: OverlayKind,
}

/// Reads the outcome of the active overlay, if it has one.
pub fn poll<T: Terminal>(tui: &mut Tui<T>, active: ActiveOverlay) -> Option<OverlayOutcome> {
    match active.kind {
        OverlayKind::List(purpose) => {
            let picker = tui.overlay_mut::<ListPicker>(active.id)?;
            picker
                .take_outcome()
                .map(|value| OverlayOutcome::Picked(purpose, value))
        }
    }
}

/// A titled, filterable list (type to filter, arrows to move, Enter to choose, Escape to
/// cancel) drawn inside the chat area.
pub struct ListPicker {
    title: String,
    list: SelectList,
    outcome: Option<Option<String>>,
}

impl ListPicker {
    pub fn new(title: &str, items: Vec<SelectItem>, selected: usize) -> ListPicker {
        let theme = theme::current();
        let mut list = SelectList::new(items, 10, theme)
            .with_type_to_filter(true)
            .with_empty_message("No matches");
        list.set_selected_index(selected);
        ListPicker {
            title: title.to_string(),
            list,
            outcome: None,
        }
    }

    /// Narrows the list as if `filter` had been typed.
    pub fn set_filter(&mut self, filter: &str) {
        self.list.set_filter(filter);
    }

    /// `Some(Some(value))` chosen, `Some(None)` cancelled, `None` still open.
    pub fn take_outcome(&mut self) -> Option<Option<String>> {
        self.outcome.take()
    }
}

impl Component for ListPicker {
    fn render(&mut self, width: usize) -> Vec<String> {
        let theme = theme::current();
        let border = theme.fg(Token::BorderAccent, &"─".repeat(width));
        let mut lines = vec![border.clone()];
        let title = format!(
            "{}{}",
            theme.bold(&theme.fg(Token::Accent, &self.title)),
            theme.fg(
                Token::Dim,
                "  (type to search, enter to select, esc to cancel)"
            )
        );
        lines.extend(Text::new(title, 1, 0).render(width));
        if !self.list.filter().is_empty() {
            let filter = theme.fg(Token::Muted, &format!("Search: {}", self.list.filter()));
            lines.extend(Text::new(filter, 1, 0).render(width));
        }
        lines.extend(self.list.render(width));
        lines.push(border);
        lines
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let used = self.list.handle_input(event);
        match self.list.take_result() {
            Some(SelectResult::Selected(item)) => self.outcome = Some(Some(item.value)),
            Some(SelectResult::Cancelled) => self.outcome = Some(None),
            None => {}
        }
        used
    }

    fn invalidate(&mut self) {
        self.list.invalidate();
    }
}
