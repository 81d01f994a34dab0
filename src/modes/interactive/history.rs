//! Showing a session that already has messages (`-c`, `--session`, `/resume`, `/fork`,
//! `/tree`): the transcript is rebuilt from the session's context, and the agent takes over the
//! new session's messages, model and thinking level the way pi restores them.

use super::app::App;
use super::chat::{AssistantView, BashOutcome, BashView, ChatItem, UserView};
use super::summaries::SummaryView;
use super::tool_view::ToolView;
use crate::ai::{Content, Message};
use crate::harness::session_switch::SwitchEnv;
use crate::session::{ops, AgentMessage, SessionWriter};
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
        self.tool_items.clear();
        self.streaming = None;
        self.stream = None;
        let Some(s) = &self.session else { return };
        let messages = s.session.transcript().messages;
        let mut items = Vec::new();
        let mut tools: std::collections::HashMap<String, usize> = Default::default();
        for m in &messages {
            match m {
                AgentMessage::Llm(Message::User(u)) => {
                    let text = ops::user_content_text(&u.content);
                    let first = items.is_empty() && !self.view.header.lists_resources();
                    items.push(ChatItem::User(UserView::new(&text, first)));
                }
                AgentMessage::Llm(Message::Assistant(a)) => {
                    let mut view = AssistantView::new(self.hide_thinking);
                    view.update(a);
                    items.push(ChatItem::Assistant(view));
                    for c in &a.content {
                        if let Content::ToolCall(call) = c {
                            let view = ToolView::new(
                                &call.name,
                                call.arguments.clone(),
                                self.tools_expanded,
                            );
                            items.push(ChatItem::Tool(Box::new(view)));
                            tools.insert(call.id.clone(), items.len() - 1);
                        }
                    }
                }
                AgentMessage::Llm(Message::ToolResult(r)) => {
                    if let Some(ChatItem::Tool(view)) =
                        tools.get(&r.tool_call_id).and_then(|&i| items.get_mut(i))
                    {
                        let result =
                            serde_json::json!({"content": r.content, "details": r.details});
                        view.finish(result, r.is_error);
                    }
                }
                AgentMessage::BashExecution(b) => {
                    let mut view =
                        BashView::new(&b.command, b.exclude_from_context == Some(true), "");
                    view.set_output(&b.output);
                    view.set_expanded(self.tools_expanded);
                    view.finish(BashOutcome {
                        exit_code: b.exit_code.flatten(),
                        cancelled: b.cancelled,
                        full_output_path: b.full_output_path.clone(),
                        truncated: b.truncated,
                    });
                    items.push(ChatItem::Bash(view));
                }
                AgentMessage::CompactionSummary(c) => items.push(ChatItem::Summary(
                    SummaryView::compaction(&c.summary, c.tokens_before, self.tools_expanded),
                )),
                AgentMessage::BranchSummary(b) => items.push(ChatItem::Summary(
                    SummaryView::branch(&b.summary, self.tools_expanded),
                )),
                AgentMessage::Custom(c) => {
                    if c.display {
                        items.push(self.custom_message_item(c));
                    }
                }
                AgentMessage::Unknown(_) => {}
            }
        }
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
    /// shows it.
    pub(super) fn adopt(&mut self, writer: SessionWriter) -> Result<(), String> {
        let Some(s) = self.session.as_mut() else {
            return Err("Wait for the current response to finish first".into());
        };
        let mut env = SwitchEnv {
            available_models: &*self.env.available_models,
            credentials: &*self.env.credentials,
            has_model: &mut self.env.has_model,
            session_dir: &self.env.session_dir,
        };
        s.adopt_session(writer, &mut env)?;
        // As in pi, whose start-up listing lives in the chat it clears.
        self.view.header.listing = false;
        self.render_history();
        self.refresh_footer();
        Ok(())
    }
}
