//! What the agent's events do to the screen: user messages appear when the agent takes them
//! (so steered messages show up where they were delivered), assistant replies stream into
//! their view, tool calls get a box that fills in as they run, and retries and compactions
//! show as the indicator line and then as status notes; extensions' custom messages appear
//! when sent, if they are for display. The streamed reply and the tool boxes are kept by
//! [`Turn`](super::turn::Turn); this file decides what each event does.

use std::time::{Duration, Instant};

use super::chat::{ChatItem, UserView};
use super::ext_state::ExtensionState;
use super::summaries::SummaryView;
use super::turn::{working_message, RetryCountdown, Turn};
use super::view::View;
use crate::agent::{AgentEvent, CompactionReason};
use crate::ai::Message;
use crate::tui::keybindings;
use crate::tui::theme::Token;

/// What `ev` does to the running turn and the screen (`ext` draws extensions' messages).
pub(super) fn on_agent_event(
    turn: &mut Turn,
    view: &mut View,
    ext: &ExtensionState,
    ev: AgentEvent,
) {
    match ev {
        AgentEvent::MessageStart {
            message: Message::User(u),
        } => {
            let text = crate::session::ops::user_content_text(&u.content);
            let first = view.chat.is_empty() && !view.header.lists_resources();
            view.push(ChatItem::User(UserView::new(&text, first)));
            turn.sync_queues(view);
        }
        AgentEvent::MessageStart {
            message: Message::Assistant(a),
        } => turn.start_reply(view, a),
        AgentEvent::CustomMessageStart { message } => {
            if message.display {
                let item = ext.message_item(&message, view.tools_expanded);
                view.push(item);
            }
        }
        AgentEvent::MessageUpdate { event, .. } => turn.on_stream_event(view, &event),
        AgentEvent::MessageEnd {
            message: Message::Assistant(a),
        } => turn.end_reply(view, &a),
        // A script's own calls show inside its row (its result's `calls`), as pi shows them.
        AgentEvent::ToolExecutionStart {
            parent_id: Some(_), ..
        }
        | AgentEvent::ToolExecutionUpdate {
            parent_id: Some(_), ..
        }
        | AgentEvent::ToolExecutionEnd {
            parent_id: Some(_), ..
        } => {}
        AgentEvent::ToolExecutionStart { id, name, args, .. } => {
            if let Some(t) = turn.tool_box(view, &id, &name, &args) {
                t.set_args(args);
                t.start();
            }
        }
        AgentEvent::ToolExecutionUpdate {
            id,
            name,
            args,
            partial_result,
            ..
        } => {
            if let Some(t) = turn.tool_box(view, &id, &name, &args) {
                t.update(partial_result);
            }
        }
        AgentEvent::ToolExecutionEnd {
            id,
            name,
            result,
            is_error,
            ..
        } => {
            let null = serde_json::Value::Null;
            if let Some(t) = turn.tool_box(view, &id, &name, &null) {
                t.finish(result, is_error);
            }
        }
        AgentEvent::AutoRetryStart {
            attempt,
            max_attempts,
            delay_ms,
            ..
        } => {
            let fires_at = Instant::now() + Duration::from_millis(delay_ms);
            let countdown = RetryCountdown::new(attempt, max_attempts, fires_at);
            view.show_loader(Token::Warning, countdown.message(Instant::now()));
            turn.set_retry(Some(countdown));
        }
        AgentEvent::AutoRetryEnd {
            success,
            attempt,
            final_error,
        } => {
            turn.set_retry(None);
            if !success {
                let error = final_error.unwrap_or_else(|| "Unknown error".into());
                view.error(&format!("Retry failed after {attempt} attempts: {error}"));
            }
            view.show_loader(Token::Accent, working_message());
        }
        AgentEvent::CompactionStart { reason } => {
            let key = keybindings::current().key_text("app.interrupt");
            let message = match reason {
                CompactionReason::Manual => format!("Compacting context... ({key} to cancel)"),
                CompactionReason::Overflow => {
                    format!("Context overflow detected, Auto-compacting... ({key} to cancel)")
                }
                CompactionReason::Threshold => format!("Auto-compacting... ({key} to cancel)"),
            };
            view.show_loader(Token::Accent, message);
        }
        AgentEvent::CompactionEnd {
            reason,
            result,
            aborted,
            error_message,
            ..
        } => {
            if aborted {
                if reason == CompactionReason::Manual {
                    view.error("Compaction cancelled");
                } else {
                    view.status_note("Auto-compaction cancelled");
                }
            } else if let Some(e) = error_message {
                view.error(&e);
            } else if let Some(r) = result {
                let tokens = r["tokensBefore"].as_u64().unwrap_or(0);
                let summary = r["summary"].as_str().unwrap_or_default();
                view.push(ChatItem::Summary(SummaryView::compaction(
                    summary,
                    tokens,
                    view.tools_expanded,
                )));
                // The transcript is rebuilt around the compaction entry once the run
                // gives the session back (see `task_finished`).
                turn.mark_compaction(view.chat.len());
            }
            view.show_loader(Token::Accent, working_message());
        }
        AgentEvent::SessionWriteError { error } => view.warning(&error),
        AgentEvent::AgentStart
        | AgentEvent::EntryAppended { .. }
        | AgentEvent::AgentEnd { .. }
        | AgentEvent::AgentSettled { .. }
        | AgentEvent::TurnStart
        | AgentEvent::TurnEnd { .. }
        | AgentEvent::MessageStart { .. }
        | AgentEvent::MessageEnd { .. }
        | AgentEvent::CustomMessageEnd { .. }
        // The transcript does not show the prompt checkpoints.
        | AgentEvent::SystemMessageStart { .. }
        | AgentEvent::SystemMessageEnd { .. } => {}
    }
}
