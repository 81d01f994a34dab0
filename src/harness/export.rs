//! Exporting the live session (`/export`, `/share`, RPC `export_html`): the HTML viewer in
//! the user's theme with the agent's system prompt and tools, or the current branch as JSONL.

use std::path::{Path, PathBuf};

use super::AgentSession;
use crate::session::export::{self, ExportOptions, ExportTheme};

impl AgentSession {
    /// Writes the session viewer to `out` (default: `pi-session-<name>.html` in the cwd). The
    /// colours are `theme`'s when it names a theme that loads (interactive mode passes the
    /// theme on screen), else the `theme` setting's, else pi's default for the terminal.
    pub fn export_html(&self, out: Option<&Path>, theme: Option<&str>) -> Result<PathBuf, String> {
        let setting = self.settings.str(&["theme"]);
        let names: Vec<&str> = theme.into_iter().chain(setting).collect();
        let agent_themes = crate::resources::agent_dir().join("themes");
        let project_themes = Path::new(&self.session.header().cwd)
            .join(".pi")
            .join("themes");
        let theme = ExportTheme::pick(&names, &[&agent_themes, &project_themes]);
        // A run holds the agent; the export then goes without the prompt and tools.
        let specs: Option<Vec<_>> = self
            .agent
            .as_ref()
            .map(|a| a.tools.iter().map(|t| t.spec()).collect());
        let opts = ExportOptions {
            theme: Some(theme),
            system_prompt: self.agent.as_ref().map(|a| a.system_prompt.as_str()),
            tools: specs.as_deref(),
        };
        export::export_session_html(&self.session, out, &opts)
    }

    /// Writes the current branch as a linear session file (pi 1.x's `/export <file>.jsonl`).
    pub fn export_jsonl(&self, out: Option<&Path>) -> Result<PathBuf, String> {
        export::jsonl::export_session_jsonl(&self.session, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::{Abort, Message, Model, ModelCost};
    use crate::resources::settings::{RetrySettings, Settings};
    use crate::session::export::read_session_data;
    use crate::session::{AgentMessage, SessionWriter};

    fn session(dir: &Path) -> AgentSession {
        let model = Model {
            id: "m".into(),
            name: "m".into(),
            api: "scripted".into(),
            provider: "test".into(),
            base_url: String::new(),
            reasoning: false,
            input: vec!["text".into()],
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            thinking_level_map: None,
            headers: None,
            compat: None,
        };
        let mut reply = crate::ai::AssistantMessage::empty(&model);
        reply.content.push(crate::ai::Content::text("hello"));
        let agent = crate::agent::Agent::new(model, "SYSTEM PROMPT".into(), Default::default());
        let w = SessionWriter::create(dir, "/w", None);
        let mut s = AgentSession::with_session(agent, RetrySettings::default(), Abort::new(), w);
        s.session
            .append_message(AgentMessage::Llm(Message::user_text("hi")))
            .unwrap();
        s.session
            .append_message(AgentMessage::assistant(reply))
            .unwrap();
        s
    }

    #[test]
    fn the_theme_on_screen_wins_over_the_setting() {
        let d = tempfile::tempdir().unwrap();
        let mut s = session(d.path());
        let mut global = serde_json::Map::new();
        global.insert("theme".into(), "light".into());
        s.settings = Settings::in_memory(global);
        let out = d.path().join("a.html");
        s.export_html(Some(&out), None).unwrap();
        let light = std::fs::read_to_string(&out).unwrap();
        assert!(light.contains("--page-bg: #f8f8f8;"), "the setting");
        s.export_html(Some(&out), Some("dark")).unwrap();
        let dark = std::fs::read_to_string(&out).unwrap();
        assert!(dark.contains("--page-bg: #18181e;"), "the theme on screen");
        s.export_html(Some(&out), Some("no-such-theme")).unwrap();
        let fallback = std::fs::read_to_string(&out).unwrap();
        assert!(
            fallback.contains("--page-bg: #f8f8f8;"),
            "an unknown theme falls back"
        );
        let data = read_session_data(&dark).unwrap();
        assert_eq!(data["systemPrompt"], "SYSTEM PROMPT");
        assert_eq!(data["tools"], serde_json::json!([]));
    }

    #[test]
    fn jsonl_export_writes_the_branch() {
        let d = tempfile::tempdir().unwrap();
        let s = session(d.path());
        let out = d.path().join("b.jsonl");
        assert_eq!(s.export_jsonl(Some(&out)).unwrap(), out);
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text.lines().count(), 3);
        assert!(text.contains("\"hi\""));
    }
}
