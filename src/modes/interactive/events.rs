//! What the agent's events do to the screen: user messages appear when the agent takes them
//! (so steered messages show up where they were delivered), assistant replies stream into
//! their view, tool calls get a box that fills in as they run, and retries and compactions
//! show as the indicator line and then as status notes; extensions' custom messages appear
//! when sent, if they are for display.

use std::time::{Duration, Instant};

use super::app::{message_text, App};
use super::chat::{AssistantView, ChatItem, UserView};
use super::summaries::SummaryView;
use super::tool_view::ToolView;
use crate::agent::{AgentEvent, CompactionReason};
use crate::ai::partial_json::parse_partial_json;
use crate::ai::stream::MessageBuilder;
use crate::ai::{AssistantEvent, AssistantMessage, Content, Message, StopReason};
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
                self.sync_queues();
            }
            AgentEvent::MessageStart {
                message: Message::Assistant(a),
            } => {
                let mut view = AssistantView::new(self.hide_thinking);
                view.update(&a);
                self.view.push(ChatItem::Assistant(view));
                self.streaming = Some(self.view.chat.len() - 1);
                self.stream = Some(StreamState {
                    message: MessageBuilder::new(a),
                    dirty: false,
                });
            }
            AgentEvent::CustomMessageStart { message } => {
                if message.display {
                    let item = self.custom_message_item(&message);
                    self.view.push(item);
                }
            }
            AgentEvent::MessageUpdate { event, .. } => self.on_stream_event(&event),
            AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } => {
                self.stream = None;
                self.update_streaming(&a);
                self.streaming = None;
                self.view.footer.info.add_usage(&a);
                self.fail_unstarted_tools(&a);
            }
            AgentEvent::ToolExecutionStart { id, name, args } => {
                let index = self.tool_view(&id, &name, &args);
                if let Some(ChatItem::Tool(t)) = self.view.chat.get_mut(index) {
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
                let index = self.tool_view(&id, &name, &args);
                if let Some(ChatItem::Tool(t)) = self.view.chat.get_mut(index) {
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
                let index = self.tool_view(&id, &name, &serde_json::Value::Null);
                if let Some(ChatItem::Tool(t)) = self.view.chat.get_mut(index) {
                    t.finish(result, is_error);
                }
            }
            AgentEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                ..
            } => {
                let countdown = RetryCountdown {
                    attempt,
                    max_attempts,
                    fires_at: Instant::now() + Duration::from_millis(delay_ms),
                };
                self.show_loader(Token::Warning, countdown.message(Instant::now()));
                self.retry_countdown = Some(countdown);
            }
            AgentEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => {
                self.retry_countdown = None;
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
                        self.tools_expanded,
                    )));
                    // The transcript is rebuilt around the compaction entry once the run
                    // gives the session back (see `task_finished`).
                    self.compacted_in_run = Some(self.view.chat.len());
                }
                self.show_loader(Token::Accent, Self::working_message());
            }
            AgentEvent::SessionWriteError { error } => self.view.warning(&error),
            AgentEvent::AgentStart
            | AgentEvent::EntryAppended { .. }
            | AgentEvent::AgentEnd { .. }
            | AgentEvent::AgentSettled { .. }
            | AgentEvent::TurnStart
            | AgentEvent::TurnEnd { .. }
            | AgentEvent::MessageStart { .. }
            | AgentEvent::MessageEnd { .. }
            | AgentEvent::CustomMessageEnd { .. } => {}
        }
    }

    /// Moves the "Retrying in Ns" line on as the wait runs down.
    pub(super) fn tick_retry_countdown(&mut self) {
        let Some(countdown) = &self.retry_countdown else {
            return;
        };
        let message = countdown.message(Instant::now());
        if let Some(loader) = &mut self.view.status {
            loader.set_message(message);
        }
    }

    /// A streamed delta goes into the message being rebuilt; the screen catches up once per
    /// frame (`sync_stream`), so a long reply costs one redraw per frame, not one per delta.
    fn on_stream_event(&mut self, event: &AssistantEvent) {
        let Some(stream) = &mut self.stream else {
            return;
        };
        stream.message.apply(event);
        stream.dirty = true;
        match event {
            // Tool calls get their box as soon as they appear in the stream.
            AssistantEvent::ToolCallStart { id, name, .. } => {
                self.tool_view(id, name, &serde_json::json!({}));
            }
            AssistantEvent::ToolCallEnd { tool_call, .. } => {
                let index = self.tool_view(&tool_call.id, &tool_call.name, &tool_call.arguments);
                if let Some(ChatItem::Tool(t)) = self.view.chat.get_mut(index) {
                    if t.is_running() {
                        t.set_args(tool_call.arguments.clone());
                    }
                }
            }
            _ => {}
        }
    }

    /// Brings the streaming reply (and the arguments of tool calls still streaming, parsed
    /// leniently) up to date on screen; called when a frame is about to be drawn.
    pub(super) fn sync_stream(&mut self) {
        let Some(stream) = self.stream.as_mut().filter(|s| s.dirty) else {
            return;
        };
        stream.dirty = false;
        let message = stream.message.message();
        if let Some(ChatItem::Assistant(view)) =
            self.streaming.and_then(|i| self.view.chat.get_mut(i))
        {
            view.update(message);
        }
        for (i, c) in message.content.iter().enumerate() {
            let (Content::ToolCall(call), Some(json)) = (c, stream.message.tool_json(i)) else {
                continue;
            };
            let Some(&index) = self.tool_items.get(&call.id) else {
                continue;
            };
            if let Some(ChatItem::Tool(t)) = self.view.chat.get_mut(index) {
                if t.is_running() {
                    t.set_args(parse_partial_json(json));
                }
            }
        }
    }

    fn update_streaming(&mut self, a: &AssistantMessage) {
        if let Some(ChatItem::Assistant(view)) =
            self.streaming.and_then(|i| self.view.chat.get_mut(i))
        {
            view.update(a);
        }
        // Tool calls get their box as soon as they appear in the stream.
        for c in &a.content {
            if let Content::ToolCall(call) = c {
                let index = self.tool_view(&call.id, &call.name, &call.arguments);
                if let Some(ChatItem::Tool(t)) = self.view.chat.get_mut(index) {
                    if t.is_running() {
                        t.set_args(call.arguments.clone());
                    }
                }
            }
        }
    }

    /// A reply that ended aborted or failed while a tool call was still streaming: pi shows
    /// why in that call's box (which would otherwise stay pending, and the abort unsaid).
    fn fail_unstarted_tools(&mut self, a: &AssistantMessage) {
        let why = match a.stop_reason {
            StopReason::Aborted => "Operation aborted".to_string(),
            StopReason::Error => a.error_message.clone().unwrap_or_else(|| "Error".into()),
            _ => return,
        };
        for c in &a.content {
            let Content::ToolCall(call) = c else { continue };
            let item = self.tool_items.get(&call.id).copied();
            if let Some(ChatItem::Tool(t)) = item.and_then(|i| self.view.chat.get_mut(i)) {
                if t.is_running() {
                    let result = serde_json::json!({"content": [{"type": "text", "text": why}]});
                    t.finish(result, true);
                }
            }
        }
    }

    /// The transcript index of the tool call `id`, creating its box if new.
    fn tool_view(&mut self, id: &str, name: &str, args: &serde_json::Value) -> usize {
        if let Some(&i) = self.tool_items.get(id) {
            return i;
        }
        let view = ToolView::new(name, args.clone(), self.tools_expanded);
        self.view.push(ChatItem::Tool(Box::new(view)));
        let index = self.view.chat.len() - 1;
        self.tool_items.insert(id.to_string(), index);
        index
    }

    /// The queued-message display follows the queues (a delivered message leaves them).
    fn sync_queues(&mut self) {
        if let Some(task) = &self.task {
            self.view.steering = task.steering.peek().iter().map(message_text).collect();
            self.view.follow_up = task.follow_up.peek().iter().map(message_text).collect();
        }
    }
}

/// The assistant reply being streamed, rebuilt from its deltas.
pub(super) struct StreamState {
    message: MessageBuilder,
    /// Changed since the screen last showed it.
    dirty: bool,
}

/// An auto-retry waiting to fire.
pub(super) struct RetryCountdown {
    attempt: u32,
    max_attempts: u32,
    fires_at: Instant,
}

impl RetryCountdown {
    /// pi's retry line, with the whole seconds left (rounded up).
    fn message(&self, now: Instant) -> String {
        let key = keybindings::current().key_text("app.interrupt");
        let left = self.fires_at.saturating_duration_since(now).as_millis() as u64;
        let secs = left.div_ceil(1000);
        format!(
            "Retrying ({}/{}) in {secs}s... ({key} to cancel)",
            self.attempt, self.max_attempts
        )
    }
}
