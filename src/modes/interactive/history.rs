//! Showing a session that already has messages (`-c`, `--session`, `/resume`, `/fork`,
//! `/tree`): the transcript is rebuilt from the session's context (see `replay`), and the agent
//! takes over the new session's messages, model and thinking level the way pi restores them.

use super::app::App;
use super::replay;
use crate::harness::session_switch::SwitchEnv;
use crate::session::SessionWriter;
use crate::tui::terminal::Terminal;

impl<T: Terminal> App<T> {
    /// Replaces the transcript with the current session's messages and repaints the screen
    /// from the top (the renderer cannot edit lines that scrolled away).
    pub(super) fn render_history(&mut self) {
        self.fill_transcript();
        self.tui.request_full_render();
    }

    /// Fills the transcript with the current session's messages. At start-up this is all: the
    /// first frame is painted below what the terminal already shows, as pi does, so nothing
    /// printed before it (the shell's lines, a warning) is erased.
    pub(super) fn fill_transcript(&mut self) {
        self.view.chat.clear();
        self.turn.forget_transcript();
        let Some(messages) = self.session(|s| s.session.transcript().messages) else {
            return;
        };
        let items = replay::transcript_items(&messages, &self.view, &self.ext);
        self.view.chat.replace(items);
        self.view.last_is_status = false;
    }

    /// After a compaction: the session's context (the compaction summary, then the messages
    /// it kept and any that came after) and, if nothing came after the compaction, its summary
    /// once more at the end — pi's rebuild around the compaction entry.
    pub(super) fn rebuild_after_compaction(&mut self, shown_at: usize) {
        let last = (self.view.chat.len() == shown_at)
            .then(|| self.view.chat.pop())
            .flatten();
        self.view.header.listing = false;
        self.render_history();
        if let Some(summary) = last {
            self.view.push(summary);
        }
    }

    /// Makes `writer` the current session (new, resumed, forked, cloned or imported) and
    /// shows it. A session file another pi process is writing is refused (issue 35).
    pub(super) fn adopt(&mut self, mut writer: SessionWriter) -> Result<(), String> {
        // The models and their credentials live with the UI: looked up here for the switch.
        let available = (self.env.available_models)();
        let credentials: Vec<_> = available
            .iter()
            .map(|m| (m.clone(), (self.env.credentials)(m)))
            .collect();
        let (mut has_model, session_dir) = (self.env.has_model, self.env.session_dir.clone());
        self.env.has_model = self.idle_session(move |s| {
            writer.adopt_lease_from(&mut s.session);
            writer.take_lease().map_err(|e| e.to_string())?;
            let lookup = |m: &crate::ai::Model| {
                credentials
                    .iter()
                    .find(|(c, _)| c.provider == m.provider && c.id == m.id)
                    .map(|(_, r)| r.clone())
                    .unwrap_or_else(|| Err(format!("No API key for {}/{}", m.provider, m.id)))
            };
            let mut env = SwitchEnv {
                available_models: &|| available.clone(),
                credentials: &lookup,
                has_model: &mut has_model,
                session_dir: &session_dir,
            };
            s.adopt_session(writer, &mut env)?;
            Ok::<_, String>(has_model)
        })??;
        // As in pi, whose start-up listing lives in the chat it clears.
        self.view.header.listing = false;
        self.render_history();
        self.refresh_footer();
        Ok(())
    }
}
