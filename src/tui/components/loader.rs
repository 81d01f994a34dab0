//! [`Loader`]: a spinner with a message (pi's "Working..." line), advanced by the app's
//! render tick; [`CancellableLoader`] adds Escape-to-cancel.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::text::Text;
use crate::tui::keybindings;
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};

/// pi's braille spinner.
pub const DEFAULT_FRAMES: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Time between frames.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(80);

/// A spinner frame and a message on one padded line, preceded by an empty line.
pub struct Loader {
    theme: Arc<Theme>,
    spinner_color: Token,
    message_color: Token,
    message: String,
    frames: Vec<String>,
    interval: Duration,
    /// Custom indicators are drawn as given, without the spinner colour.
    verbatim: bool,
    frame: usize,
    text: Text,
}

impl Loader {
    pub fn new(
        theme: Arc<Theme>,
        spinner_color: Token,
        message_color: Token,
        message: impl Into<String>,
    ) -> Loader {
        let mut loader = Loader {
            theme,
            spinner_color,
            message_color,
            message: message.into(),
            frames: DEFAULT_FRAMES.iter().map(|f| f.to_string()).collect(),
            interval: DEFAULT_INTERVAL,
            verbatim: false,
            frame: 0,
            text: Text::new("", 1, 0),
        };
        loader.update();
        loader
    }

    /// Replaces the spinner with custom frames (an empty list shows no indicator); a zero
    /// interval keeps the default.
    pub fn set_indicator(&mut self, frames: Vec<String>, interval: Duration) {
        self.frames = frames;
        self.interval = if interval.is_zero() {
            DEFAULT_INTERVAL
        } else {
            interval
        };
        self.verbatim = true;
        self.frame = 0;
        self.update();
    }

    /// How often the app should call [`Loader::tick`].
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Whether ticking changes anything (more than one frame).
    pub fn is_animated(&self) -> bool {
        self.frames.len() > 1
    }

    /// Advances to the next frame.
    pub fn tick(&mut self) {
        if self.is_animated() {
            self.frame = (self.frame + 1) % self.frames.len();
            self.update();
        }
    }

    pub fn set_message(&mut self, message: impl Into<String>) {
        self.message = message.into();
        self.update();
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    fn update(&mut self) {
        let frame = self
            .frames
            .get(self.frame)
            .map(String::as_str)
            .unwrap_or("");
        let message = self.theme.fg(self.message_color, &self.message);
        let text = if frame.is_empty() {
            message
        } else if self.verbatim {
            format!("{frame} {message}")
        } else {
            format!("{} {message}", self.theme.fg(self.spinner_color, frame))
        };
        self.text.set_text(text);
    }
}

impl Component for Loader {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = vec![String::new()];
        lines.extend(self.text.render(width));
        lines
    }

    fn invalidate(&mut self) {
        self.text.invalidate();
    }
}

/// A loader the user can cancel with `tui.select.cancel` (Escape); the app polls
/// [`CancellableLoader::is_cancelled`] or hands the flag to the work it started.
pub struct CancellableLoader {
    pub loader: Loader,
    cancelled: Arc<AtomicBool>,
}

impl CancellableLoader {
    pub fn new(loader: Loader) -> CancellableLoader {
        CancellableLoader {
            loader,
            cancelled: Arc::new(AtomicBool::new(false)),
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// The flag set on cancel, for worker threads to watch.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.cancelled)
    }
}

impl Component for CancellableLoader {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.loader.render(width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        match event.key() {
            Some(key) if keybindings::matches(key, "tui.select.cancel") => {
                self.cancelled.store(true, Ordering::SeqCst);
                true
            }
            _ => false,
        }
    }

    fn invalidate(&mut self) {
        self.loader.invalidate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;
    use crate::tui::theme::ColorMode;
    use crate::tui::{KeyCode, KeyEvent};

    fn loader() -> Loader {
        let theme = Arc::new(Theme::builtin("dark", ColorMode::TrueColor).unwrap());
        Loader::new(theme, Token::Accent, Token::Muted, "Working...")
    }

    #[test]
    fn spinner_ticks_through_frames() {
        let mut l = loader();
        let lines = l.render(20);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], "");
        assert_eq!(strip_ansi(&lines[1]), " ⠋ Working...       ");
        assert!(lines[1].contains("\x1b[38;2;138;190;183m⠋\x1b[39m"));
        l.tick();
        assert_eq!(strip_ansi(&l.render(20)[1]).trim(), "⠙ Working...");
        for _ in 0..9 {
            l.tick();
        }
        assert_eq!(strip_ansi(&l.render(20)[1]).trim(), "⠋ Working...");
        assert_eq!(l.interval(), Duration::from_millis(80));
        l.set_indicator(vec![], Duration::ZERO);
        l.set_message("Done");
        assert_eq!(strip_ansi(&l.render(20)[1]).trim(), "Done");
    }

    #[test]
    fn escape_cancels() {
        let mut c = CancellableLoader::new(loader());
        assert!(!c.handle_input(&InputEvent::Key(KeyEvent::plain(KeyCode::Char('x')))));
        assert!(!c.is_cancelled());
        assert!(c.handle_input(&InputEvent::Key(KeyEvent::plain(KeyCode::Escape))));
        assert!(c.is_cancelled());
        assert!(c.cancel_flag().load(Ordering::SeqCst));
    }
}
