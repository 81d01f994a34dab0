//! The theme picked from the terminal's background when the settings name none, `"system"`
//! (pi 1.x's default) or a `"light/dark"` pair, as pi does: start-up installs the theme for
//! the background `COLORFGBG` suggests (no wait, so the first frame is not held back), asks
//! the terminal for its background colour (OSC 11), and switches if the reply, arriving
//! within [`REPLY_WINDOW`], says the other.

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
        if theme::follows_background(self.env.theme.as_deref()) {
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
        if Instant::now() > until || !theme::follows_background(self.env.theme.as_deref()) {
            return;
        }
        let background = theme::background_from_rgb(r, g, b);
        let name = theme::resolve_name(self.env.theme.as_deref(), background);
        if theme::current().name() == name {
            return;
        }
        let global = self.env.agent_dir.join("themes");
        let project = self.env.cwd.join(".pi").join("themes");
        if let Ok(t) = theme::load_named(&name, &[&global, &project], ColorMode::detect()) {
            theme::install(t);
            self.restyle();
        }
    }
}
