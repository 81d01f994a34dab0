//! [`Boxed`], pi's `Box`: a container that pads its children and paints one background
//! behind all of their lines (tool-call boxes, user messages).

use super::text::{frame_lines, Fill};
use crate::tui::Component;

/// Children rendered one after another inside padding and an optional background.
pub struct Boxed {
    children: Vec<Box<dyn Component>>,
    padding_x: usize,
    padding_y: usize,
    fill: Option<Fill>,
    cache: Option<Cache>,
}

struct Cache {
    width: usize,
    fill: Option<Fill>,
    child_lines: Vec<String>,
    lines: Vec<String>,
}

impl Boxed {
    /// pi's defaults are one column and one row of padding.
    pub fn new(padding_x: usize, padding_y: usize, fill: Option<Fill>) -> Boxed {
        Boxed {
            children: Vec::new(),
            padding_x,
            padding_y,
            fill,
            cache: None,
        }
    }

    pub fn add_child(&mut self, child: Box<dyn Component>) {
        self.children.push(child);
        self.cache = None;
    }

    /// Removes and returns the child at `index`.
    pub fn remove_child(&mut self, index: usize) -> Option<Box<dyn Component>> {
        self.cache = None;
        (index < self.children.len()).then(|| self.children.remove(index))
    }

    pub fn clear(&mut self) {
        self.children.clear();
        self.cache = None;
    }

    pub fn children_mut(&mut self) -> &mut [Box<dyn Component>] {
        &mut self.children
    }

    /// Changes the background (e.g. a tool box turning from pending to success).
    pub fn set_fill(&mut self, fill: Option<Fill>) {
        self.fill = fill;
    }
}

impl Component for Boxed {
    fn render(&mut self, width: usize) -> Vec<String> {
        if self.children.is_empty() {
            return Vec::new();
        }
        let content_width = width.saturating_sub(self.padding_x * 2).max(1);
        let child_lines: Vec<String> = self
            .children
            .iter_mut()
            .flat_map(|c| c.render(content_width))
            .collect();
        if child_lines.is_empty() {
            return Vec::new();
        }
        if let Some(c) = &self.cache {
            if c.width == width && c.fill == self.fill && c.child_lines == child_lines {
                return c.lines.clone();
            }
        }
        let lines = frame_lines(
            child_lines.clone(),
            width,
            self.padding_x,
            self.padding_y,
            self.fill.as_ref(),
        );
        self.cache = Some(Cache {
            width,
            fill: self.fill.clone(),
            child_lines,
            lines: lines.clone(),
        });
        lines
    }

    fn handle_input(&mut self, event: &crate::tui::InputEvent) -> bool {
        self.children.iter_mut().any(|c| c.handle_input(event))
    }

    fn invalidate(&mut self) {
        self.cache = None;
        for c in &mut self.children {
            c.invalidate();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::components::text::{Spacer, Text};

    #[test]
    fn box_pads_and_fills_children() {
        let mut b = Boxed::new(1, 1, Some(Fill::raw("\x1b[44m", "\x1b[49m")));
        b.add_child(Box::new(Text::new("hi", 0, 0)));
        b.add_child(Box::new(Spacer::new(1)));
        let lines = b.render(6);
        let blank = "\x1b[44m      \x1b[49m";
        assert_eq!(lines, [blank, "\x1b[44m hi   \x1b[49m", blank, blank]);
        // Cached output is reused and the fill change is noticed.
        b.set_fill(None);
        assert_eq!(b.render(6)[1], " hi   ");
        assert!(Boxed::new(1, 1, None).render(10).is_empty());
    }
}
