//! The transcript rebuilt from a session's messages (start-up, `/resume`, `/tree`, after a
//! compaction): each message becomes the item a live run would have left, tool results go
//! into their call's box, and extensions' custom messages are drawn by their renderers.

use std::collections::HashMap;

use super::chat::{AssistantView, BashOutcome, BashView, ChatItem, UserView};
use super::ext_state::ExtensionState;
use super::summaries::SummaryView;
use super::tool_view::ToolView;
use super::view::View;
use crate::ai::{Content, Message};
use crate::session::{ops, AgentMessage};

/// The transcript items for `messages`, drawn the way `screen` shows items now (expanded tool
/// output, hidden thinking, whether the start-up listing sits above the first message).
pub(super) fn transcript_items(
    messages: &[AgentMessage],
    screen: &View,
    ext: &ExtensionState,
) -> Vec<ChatItem> {
    let mut items = Vec::new();
    let mut tools: HashMap<String, usize> = Default::default();
    for m in messages {
        match m {
            AgentMessage::Llm(Message::User(u)) => {
                let text = ops::user_content_text(&u.content);
                let first = items.is_empty() && !screen.header.lists_resources();
                items.push(ChatItem::User(UserView::new(&text, first)));
            }
            AgentMessage::Llm(Message::Assistant(a)) => {
                let mut view = AssistantView::new(screen.hide_thinking);
                view.update(a);
                items.push(ChatItem::Assistant(view));
                for c in &a.content {
                    if let Content::ToolCall(call) = c {
                        let view = ToolView::new(
                            &call.name,
                            call.arguments.clone(),
                            screen.tools_expanded,
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
                    let result = serde_json::json!({"content": r.content, "details": r.details});
                    view.finish(result, r.is_error);
                }
            }
            AgentMessage::BashExecution(b) => {
                let mut view = BashView::new(&b.command, b.exclude_from_context == Some(true), "");
                view.set_output(&b.output);
                view.set_expanded(screen.tools_expanded);
                view.finish(BashOutcome {
                    exit_code: b.exit_code.flatten(),
                    cancelled: b.cancelled,
                    full_output_path: b.full_output_path.clone(),
                    truncated: b.truncated,
                });
                items.push(ChatItem::Bash(view));
            }
            AgentMessage::CompactionSummary(c) => items.push(ChatItem::Summary(
                SummaryView::compaction(&c.summary, c.tokens_before, screen.tools_expanded),
            )),
            AgentMessage::BranchSummary(b) => items.push(ChatItem::Summary(SummaryView::branch(
                &b.summary,
                screen.tools_expanded,
            ))),
            AgentMessage::Custom(c) => {
                if c.display {
                    items.push(ext.message_item(c, screen.tools_expanded));
                }
            }
            AgentMessage::System(_) | AgentMessage::Unknown(_) => {}
        }
    }
    items
}
