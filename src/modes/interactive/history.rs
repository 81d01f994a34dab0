//! Showing a session that already has messages (`-c`, `--session`, `/resume`, `/fork`,
//! `/tree`): the transcript is rebuilt from the session's context, and the agent takes over the
//! new session's messages, model and thinking level the way pi restores them.

use super::app::App;
use super::chat::{AssistantView, BashOutcome, BashView, ChatItem, UserView};
use super::summaries::SummaryView;
use super::tool_view::ToolView;
use crate::ai::{Content, Message, ThinkingLevel};
use crate::resources::model_resolve::clamp_thinking;
use crate::session::{ops, to_llm_messages, AgentMessage, SessionWriter};
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
                AgentMessage::System(_) | AgentMessage::Unknown(_) => {}
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
    pub(super) fn adopt(&mut self, mut writer: SessionWriter) -> Result<(), String> {
        let Some(s) = self.session.as_mut() else {
            return Err("Wait for the current response to finish first".into());
        };
        let ctx = writer.build_context();
        let existing = !ctx.messages.is_empty();
        if existing {
            if let Some((provider, id)) = &ctx.model {
                let found = (self.env.available_models)()
                    .into_iter()
                    .find(|m| &m.provider == provider && &m.id == id);
                if let Some(model) = found {
                    if let Ok((key, headers)) = (self.env.credentials)(&model) {
                        let agent = s.agent_mut();
                        agent.options.api_key = key;
                        agent.options.headers = headers;
                        agent.model = model;
                        self.env.has_model = true;
                    }
                }
            }
        }
        let mut thinking = s.agent().thinking;
        if let Some(level) = ctx
            .thinking_level
            .as_deref()
            .and_then(ThinkingLevel::parse)
            .filter(|_| existing)
        {
            thinking = level;
        }
        let thinking = if self.env.has_model {
            clamp_thinking(&s.agent().model, thinking)
        } else {
            ThinkingLevel::Off
        };
        if self.env.has_model {
            let io = |e: std::io::Error| format!("Could not write session: {e}");
            let model = s.agent().model.clone();
            if !existing {
                writer
                    .append_model_change(&model.provider, &model.id)
                    .map_err(io)?;
                writer
                    .append_thinking_level_change(thinking.as_str())
                    .map_err(io)?;
            } else if ctx.thinking_level.is_none() {
                writer
                    .append_thinking_level_change(thinking.as_str())
                    .map_err(io)?;
            }
        }
        let agent = s.agent_mut();
        agent.thinking = thinking;
        agent.messages = to_llm_messages(&ctx.messages);
        agent.options.session_id = Some(writer.session_id().to_string());
        agent.steering.clear();
        agent.follow_up.clear();
        s.session = writer;
        // As in pi, whose start-up listing lives in the chat it clears.
        self.view.header.listing = false;
        self.render_history();
        self.refresh_footer();
        Ok(())
    }
}
