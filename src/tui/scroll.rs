//! [`ScrollView`]: a window of `height` rows over `content` rows that the application scrolls
//! itself (the fullscreen mode owns its viewport; the terminal's scrollback is not used).
//!
//! While it *follows* the end, new content keeps the last rows in view; scrolling up stops
//! following, and reaching the end again (or [`ScrollView::to_end`]) resumes it.

/// Rows a page scroll keeps from the previous page, so the eye can find its place (pi's value).
pub const PAGE_OVERLAP: usize = 4;

#[derive(Debug, Clone)]
pub struct ScrollView {
    top: usize,
    follow: bool,
    content: usize,
    height: usize,
}

impl Default for ScrollView {
    fn default() -> Self {
        ScrollView {
            top: 0,
            follow: true,
            content: 0,
            height: 0,
        }
    }
}

impl ScrollView {
    /// Takes the current sizes: the top is kept in range, or moved to the end when following.
    pub fn layout(&mut self, content: usize, height: usize) {
        self.content = content;
        self.height = height;
        if self.follow {
            self.top = self.max_top();
        } else {
            self.top = self.top.min(self.max_top());
        }
    }

    fn max_top(&self) -> usize {
        self.content.saturating_sub(self.height)
    }

    /// The first content row shown.
    pub fn top(&self) -> usize {
        self.top
    }

    pub fn height(&self) -> usize {
        self.height
    }

    /// Whether new content scrolls into view.
    pub fn is_following(&self) -> bool {
        self.follow
    }

    /// Whether rows below the window are hidden.
    pub fn has_more_below(&self) -> bool {
        self.top < self.max_top()
    }

    /// Moves by `delta` rows (negative: up); returns the rows it could not move.
    pub fn scroll_by(&mut self, delta: isize) -> isize {
        let target = self.top as isize + delta;
        let clamped = target.clamp(0, self.max_top() as isize);
        self.top = clamped as usize;
        self.follow = self.top >= self.max_top();
        target - clamped
    }

    /// Shows `row` at the top (as far as the content allows), without following.
    pub fn scroll_to(&mut self, row: usize) {
        self.top = row.min(self.max_top());
        self.follow = false;
    }

    pub fn to_start(&mut self) {
        self.scroll_to(0);
    }

    pub fn to_end(&mut self) {
        self.top = self.max_top();
        self.follow = true;
    }

    /// Rows a page key moves.
    pub fn page(&self) -> isize {
        self.height.saturating_sub(PAGE_OVERLAP).max(1) as isize
    }

    pub fn half_page(&self) -> isize {
        (self.height / 2).max(1) as isize
    }

    /// The content row shown on window row `y`, if there is one.
    pub fn row_at(&self, y: usize) -> Option<usize> {
        let row = self.top + y;
        (y < self.height && row < self.content).then_some(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_follows_new_content_until_scrolled_up_and_again_at_the_end() {
        let mut view = ScrollView::default();
        view.layout(30, 10);
        assert_eq!(view.top(), 20);
        assert_eq!(view.scroll_by(-view.page()), 0);
        assert_eq!(view.top(), 14);
        assert!(!view.is_following() && view.has_more_below());
        view.layout(40, 10);
        assert_eq!(view.top(), 14, "new rows do not move a scrolled-up view");
        assert_eq!(view.scroll_by(100), 84);
        assert!(view.is_following());
        view.layout(50, 10);
        assert_eq!(view.top(), 40);
        view.to_start();
        assert_eq!((view.top(), view.row_at(3)), (0, Some(3)));
        view.layout(5, 10);
        assert_eq!((view.top(), view.row_at(7)), (0, None));
    }
}
