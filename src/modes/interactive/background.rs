//! The theme picked from the terminal's background when the settings name none, `"system"`
//! (pi 1.x's default) or a `"light/dark"` pair, as pi does: start-up installs the theme for
//! the background `COLORFGBG` suggests (no wait, so the first frame is not held back), asks
//! the terminal for its background colour (OSC 11), and switches if the reply, arriving
//! within [`REPLY_WINDOW`], says the other.

use std::path::Path;
use std::time::{Duration, Instant};

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

/// The background-colour query in flight, if any.
#[derive(Default)]
pub(super) struct BackgroundQuery {
    /// Until when a reply may still pick the theme.
    until: Option<Instant>,
}

impl BackgroundQuery {
    /// Sends the query when the theme is ours to choose (`setting`: the `theme` setting).
    pub fn send(&mut self, terminal: &mut dyn Terminal, setting: Option<&str>) {
        if theme::follows_background(setting) {
            terminal.write(QUERY);
            // Sent at once: the reply should beat the user's first keys.
            let _ = terminal.flush();
            self.until = Some(Instant::now() + REPLY_WINDOW);
        }
    }

    /// Whether a reply is still awaited.
    #[cfg(test)]
    pub fn waiting(&self) -> bool {
        self.until.is_some()
    }

    /// The terminal answered: installs the theme for that background from the agent's or the
    /// project's themes (`dirs`) and returns true when the screen must be restyled.
    pub fn on_reply(
        &mut self,
        (r, g, b): (u8, u8, u8),
        setting: Option<&str>,
        dirs: [&Path; 2],
    ) -> bool {
        let Some(until) = self.until.take() else {
            return false;
        };
        if Instant::now() > until || !theme::follows_background(setting) {
            return false;
        }
        let background = theme::background_from_rgb(r, g, b);
        let name = theme::resolve_name(setting, background);
        if theme::current().name() == name {
            return false;
        }
        match theme::load_named(&name, &dirs, ColorMode::detect()) {
            Ok(t) => {
                theme::install(t);
                true
            }
            Err(_) => false,
        }
    }
}
