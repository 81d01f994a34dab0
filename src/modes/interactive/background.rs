//! The theme picked from the terminal's background when the settings name none, as pi does:
//! start-up installs dark or light from `COLORFGBG` (no wait, so the first frame is not held
//! back), asks the terminal for its background colour (OSC 11), and switches to the other
//! built-in theme if the reply, arriving within [`REPLY_WINDOW`], says so.

use std::time::{Duration, Instant};

use super::app::App;
use crate::tui::terminal::Terminal;
use crate::tui::theme::{self, background_from_colorfgbg, ColorMode};

/// The query: "what is your background colour?"; terminals without it stay silent.
const QUERY: &str = "\x1b]11;?\x07";

/// Replies later than this are ignored (the user may have started typing in that theme).
pub(super) const REPLY_WINDOW: Duration = Duration::from_secs(1);

/// The built-in theme for the background `COLORFGBG` suggests.
pub(super) fn initial_theme_name() -> &'static str {
    background_from_colorfgbg(std::env::var("COLORFGBG").ok().as_deref()).theme_name()
}

impl<T: Terminal> App<T> {
    /// Sends the background query when the theme is ours to choose.
    pub(super) fn query_background(&mut self) {
        if self.env.theme.is_none() {
            let terminal = self.tui.terminal_mut();
            terminal.write(QUERY);
            // Sent at once: the reply should beat the user's first keys.
            let _ = terminal.flush();
            self.background_query = Some(Instant::now() + REPLY_WINDOW);
        }
    }

    /// The terminal answered the background query.
    pub(super) fn on_background(&mut self, r: u8, g: u8, b: u8) {
        let Some(until) = self.background_query.take() else {
            return;
        };
        if Instant::now() > until || self.env.theme.is_some() {
            return;
        }
        let name = theme::background_from_rgb(r, g, b).theme_name();
        if theme::current().name() == name {
            return;
        }
        if let Some(t) = theme::Theme::builtin(name, ColorMode::detect()) {
            theme::install(t);
            self.restyle();
        }
    }
}
