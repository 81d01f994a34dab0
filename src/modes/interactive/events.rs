//! What the agent's events do to the screen: user messages appear when the agent takes them
//! (so steered messages show up where they were delivered), assistant replies stream into
//! their view, tool calls get a box that fills in as they run, and retries and compactions
//! show as the indicator line and then as status notes; extensions' custom messages appear
//! when sent, if they are for display. The streamed reply and the tool boxes are kept by
//! [`Turn`](super::turn::Turn); this file decides what each event does.

use std::time::{Duration, Instant};

use super::app::App;
use super::chat::{ChatItem, UserView};
use super::summaries::SummaryView;
use super::turn::RetryCountdown;
use crate::agent::{AgentEvent, CompactionReason};
use crate::ai::Message;
use crate::tui::keybindings;
use crate::tui::terminal::Terminal;
use crate::tui::theme::Token;

impl<T: Terminal> App<T> {
    pub(super) fn on_agent_event(&mut self, ev: AgentEvent) {
        self.tui.request_render();
        match ev {
            AgentEvent::MessageStart {
                message: Message::User(u),
            } => {
                let text = crate::session::ops::user_content_text(&u.content);
                let first = self.view.chat.is_empty() && !self.view.header.lists_resources();
                self.view.push(ChatItem::User(UserView::new(&text, first)));
                self.turn.sync_queues(&mut self.view);
            }
            AgentEvent::MessageStart {
                message: Message::Assistant(a),
            } => self.turn.start_reply(&mut self.view, a),
            AgentEvent::CustomMessageStart { message } => {
                if message.display {
                    let item = self.custom_message_item(&message);
                    self.view.push(item);
                }
            }
            AgentEvent::MessageUpdate { event, .. } => {
                self.turn.on_stream_event(&mut self.view, &event)
            }
            AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } => self.turn.end_reply(&mut self.view, &a),
            AgentEvent::ToolExecutionStart { id, name, args } => {
                if let Some(t) = self.turn.tool_box(&mut self.view, &id, &name, &args) {
                    t.set_args(args);
                    t.start();
                }
            }
            AgentEvent::ToolExecutionUpdate {
                id,
                name,
                args,
                partial_result,
            } => {
                if let Some(t) = self.turn.tool_box(&mut self.view, &id, &name, &args) {
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
                if let Some(t) = self.turn.tool_box(&mut self.view, &id, &name, &null) {
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
                self.show_loader(Token::Warning, countdown.message(Instant::now()));
                self.turn.retry_countdown = Some(countdown);
            }
            AgentEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => {
                self.turn.retry_countdown = None;
                if !success {
                    let error = final_error.unwrap_or_else(|| "Unknown error".into());
                    self.view
                        .error(&format!("Retry failed after {attempt} attempts: {error}"));
                }
                self.show_loader(Token::Accent, Self::working_message());
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
                self.show_loader(Token::Accent, message);
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
                        self.view.error("Compaction cancelled");
                    } else {
                        self.view.status_note("Auto-compaction cancelled");
                    }
                } else if let Some(e) = error_message {
                    self.view.error(&e);
                } else if let Some(r) = result {
                    let tokens = r["tokensBefore"].as_u64().unwrap_or(0);
                    let summary = r["summary"].as_str().unwrap_or_default();
                    self.view.push(ChatItem::Summary(SummaryView::compaction(
                        summary,
                        tokens,
                        self.view.tools_expanded,
                    )));
                    // The transcript is rebuilt around the compaction entry once the run
                    // gives the session back (see `task_finished`).
                    self.turn.compacted_in_run = Some(self.view.chat.len());
                }
                self.show_loader(Token::Accent, Self::working_message());
            }
            AgentEvent::SessionWriteError { error } => self.view.warning(&error),
            AgentEvent::AgentStart
            | AgentEvent::AgentEnd { .. }
            | AgentEvent::AgentSettled { .. }
            | AgentEvent::TurnStart
            | AgentEvent::TurnEnd { .. }
            | AgentEvent::MessageStart { .. }
            | AgentEvent::MessageEnd { .. }
            | AgentEvent::CustomMessageEnd { .. } => {}
        }
    }
}
