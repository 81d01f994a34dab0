//! [`Turn`]: the state of the run the session's thread is doing — the run's queues, the
//! assistant reply being streamed into the transcript, the tool-call boxes by call id, what
//! the footer shows of the model meanwhile ([`RunState`]), where a compaction summary was
//! shown, the auto-retry countdown, and model or thinking changes made meanwhile (handed back
//! as [`Switch`]es for the session actor). It draws only into the [`View`] it is handed;
//! `events.rs` decides which agent event does what.

use std::collections::HashMap;
use std::time::Instant;

use super::chat::{AssistantView, ChatItem};
use super::tool_view::ToolView;
use super::view::View;
use crate::agent::MessageQueue;
use crate::ai::partial_json::parse_partial_json;
use crate::ai::stream::MessageBuilder;
use crate::ai::{
    AssistantEvent, AssistantMessage, Content, Message, Model, StopReason, ThinkingLevel,
};
use crate::harness::model_control::{level_for_switch, Credentials, SavedDefault, ScopedModel};
use crate::harness::switch_queue::Switch;
use crate::harness::AgentSession;
use crate::resources::model_resolve::clamp_thinking;
use crate::tui::keybindings;

/// What a command that needs the session says while a run holds it.
pub(super) const BUSY: &str = "Wait for the current response to finish first";

/// The running turn (everything here is empty between runs).
#[derive(Default)]
pub(super) struct Turn {
    /// The run's steering and follow-up queues; `None` between runs.
    queues: Option<(MessageQueue, MessageQueue)>,
    /// The model while a run holds the session, and changes made meanwhile.
    run_state: Option<RunState>,
    /// The transcript length right after a compaction summary was shown during this run: when
    /// the run ends the transcript is rebuilt around the compaction entry, as pi does.
    compacted_in_run: Option<usize>,
    /// When the pending auto-retry fires, for the "Retrying in Ns" countdown.
    retry_countdown: Option<RetryCountdown>,
    /// Index in the transcript of the assistant reply being streamed.
    streaming: Option<usize>,
    /// The reply being streamed, rebuilt from its deltas.
    stream: Option<StreamState>,
    /// Tool-call id → index in the transcript.
    tool_items: HashMap<String, usize>,
}

/// What the UI knows about the model while a run holds the session (read from the session
/// just before the run started).
pub(super) struct RunState {
    /// The model the next turn uses (the running one unless changed).
    pub model: Model,
    pub thinking: ThinkingLevel,
    pub scoped: Vec<ScopedModel>,
    default_thinking: Option<String>,
}

impl RunState {
    pub fn of(s: &AgentSession) -> RunState {
        RunState {
            model: s.agent().model.clone(),
            thinking: s.agent().thinking,
            scoped: s.scoped_models.clone(),
            default_thinking: s.settings.default_thinking_level().map(str::to_string),
        }
    }
}

/// The assistant reply being streamed, rebuilt from its deltas.
struct StreamState {
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
    pub fn new(attempt: u32, max_attempts: u32, fires_at: Instant) -> RetryCountdown {
        RetryCountdown {
            attempt,
            max_attempts,
            fires_at,
        }
    }

    /// pi's retry line, with the whole seconds left (rounded up).
    pub fn message(&self, now: Instant) -> String {
        let key = keybindings::current().key_text("app.interrupt");
        let left = self.fires_at.saturating_duration_since(now).as_millis() as u64;
        let secs = left.div_ceil(1000);
        format!(
            "Retrying ({}/{}) in {secs}s... ({key} to cancel)",
            self.attempt, self.max_attempts
        )
    }
}

impl Turn {
    /// Whether a run holds the session.
    pub fn is_running(&self) -> bool {
        self.queues.is_some()
    }

    /// A run started with these queues; `run_state` is what the footer shows of it.
    pub fn begin(&mut self, queues: (MessageQueue, MessageQueue), run_state: RunState) {
        self.queues = Some(queues);
        self.run_state = Some(run_state);
    }

    /// The run is over: its queues, with what it never reached still in them (the run state
    /// stays until `end`).
    pub fn finish(&mut self) -> Option<(MessageQueue, MessageQueue)> {
        self.queues.take()
    }

    /// The session is back: the model shown is the session's again.
    pub fn end(&mut self) {
        self.run_state = None;
    }

    /// The model and thinking level the footer shows while a run holds the session.
    pub fn run_state(&self) -> Option<&RunState> {
        self.run_state.as_ref()
    }

    /// Queues a steering message (`steer`, delivered after the current tool calls) or a
    /// follow-up (delivered when the agent would stop); `text` joins the queue display.
    pub fn queue(&self, view: &mut View, message: Message, text: &str, steer: bool) {
        let Some((steering, follow_up)) = &self.queues else {
            return;
        };
        if steer {
            steering.push(message);
            view.steering.push(text.to_string());
        } else {
            follow_up.push(message);
            view.follow_up.push(text.to_string());
        }
    }

    /// An auto-retry waits to fire (`None`: it is over).
    pub fn set_retry(&mut self, countdown: Option<RetryCountdown>) {
        self.retry_countdown = countdown;
    }

    /// A compaction summary was shown, the transcript being `len` items long then.
    pub fn mark_compaction(&mut self, len: usize) {
        self.compacted_in_run = Some(len);
    }

    /// Where a compaction summary was shown during the run that ended, if one was.
    pub fn take_compaction_mark(&mut self) -> Option<usize> {
        self.compacted_in_run.take()
    }

    /// Forgets the streamed reply and the tool boxes (the transcript is being replaced).
    pub fn forget_transcript(&mut self) {
        self.tool_items.clear();
        self.streaming = None;
        self.stream = None;
    }

    /// The run ended: no reply streams and no retry waits any more.
    pub fn settle(&mut self) {
        self.retry_countdown = None;
        self.streaming = None;
        self.stream = None;
    }

    /// An assistant reply started: it gets its view, and its deltas are rebuilt from here.
    pub fn start_reply(&mut self, view: &mut View, a: AssistantMessage) {
        let mut item = AssistantView::new(view.hide_thinking);
        item.update(&a);
        view.push(ChatItem::Assistant(item));
        self.streaming = Some(view.chat.len() - 1);
        self.stream = Some(StreamState {
            message: MessageBuilder::new(a),
            dirty: false,
        });
    }

    /// The reply is complete: its view shows the final message, its usage goes to the footer,
    /// and tool calls it cut short say why.
    pub fn end_reply(&mut self, view: &mut View, a: &AssistantMessage) {
        self.stream = None;
        self.update_streaming(view, a);
        self.streaming = None;
        view.footer.info.add_usage(a);
        self.fail_unstarted_tools(view, a);
    }

    /// A streamed delta goes into the message being rebuilt; the screen catches up once per
    /// frame (`sync_stream`), so a long reply costs one redraw per frame, not one per delta.
    pub fn on_stream_event(&mut self, view: &mut View, event: &AssistantEvent) {
        let Some(stream) = &mut self.stream else {
            return;
        };
        stream.message.apply(event);
        stream.dirty = true;
        match event {
            // Tool calls get their box as soon as they appear in the stream.
            AssistantEvent::ToolCallStart { id, name, .. } => {
                self.tool_box(view, id, name, &serde_json::json!({}));
            }
            AssistantEvent::ToolCallEnd { tool_call, .. } => {
                let call = tool_call;
                if let Some(t) = self.tool_box(view, &call.id, &call.name, &call.arguments) {
                    if t.is_running() {
                        t.set_args(call.arguments.clone());
                    }
                }
            }
            _ => {}
        }
    }

    /// Brings the streaming reply (and the arguments of tool calls still streaming, parsed
    /// leniently) up to date on screen; called when a frame is about to be drawn.
    pub fn sync_stream(&mut self, view: &mut View) {
        let Some(stream) = self.stream.as_mut().filter(|s| s.dirty) else {
            return;
        };
        stream.dirty = false;
        let message = stream.message.message();
        if let Some(ChatItem::Assistant(item)) = self.streaming.and_then(|i| view.chat.get_mut(i)) {
            item.update(message);
        }
        for (i, c) in message.content.iter().enumerate() {
            let (Content::ToolCall(call), Some(json)) = (c, stream.message.tool_json(i)) else {
                continue;
            };
            let Some(&index) = self.tool_items.get(&call.id) else {
                continue;
            };
            if let Some(ChatItem::Tool(t)) = view.chat.get_mut(index) {
                if t.is_running() {
                    t.set_args(parse_partial_json(json));
                }
            }
        }
    }

    fn update_streaming(&mut self, view: &mut View, a: &AssistantMessage) {
        if let Some(ChatItem::Assistant(item)) = self.streaming.and_then(|i| view.chat.get_mut(i)) {
            item.update(a);
        }
        // Tool calls get their box as soon as they appear in the stream.
        for c in &a.content {
            if let Content::ToolCall(call) = c {
                if let Some(t) = self.tool_box(view, &call.id, &call.name, &call.arguments) {
                    if t.is_running() {
                        t.set_args(call.arguments.clone());
                    }
                }
            }
        }
    }

    /// A reply that ended aborted or failed while a tool call was still streaming: pi shows
    /// why in that call's box (which would otherwise stay pending, and the abort unsaid).
    fn fail_unstarted_tools(&mut self, view: &mut View, a: &AssistantMessage) {
        let why = match a.stop_reason {
            StopReason::Aborted => "Operation aborted".to_string(),
            StopReason::Error => a.error_message.clone().unwrap_or_else(|| "Error".into()),
            _ => return,
        };
        for c in &a.content {
            let Content::ToolCall(call) = c else { continue };
            let item = self.tool_items.get(&call.id).copied();
            if let Some(ChatItem::Tool(t)) = item.and_then(|i| view.chat.get_mut(i)) {
                if t.is_running() {
                    let result = serde_json::json!({"content": [{"type": "text", "text": why}]});
                    t.finish(result, true);
                }
            }
        }
    }

    /// The box of the tool call `id`, created (with `name` and `args`) if new.
    pub fn tool_box<'v>(
        &mut self,
        view: &'v mut View,
        id: &str,
        name: &str,
        args: &serde_json::Value,
    ) -> Option<&'v mut ToolView> {
        let index = match self.tool_items.get(id) {
            Some(&i) => i,
            None => {
                let item = ToolView::new(name, args.clone(), view.tools_expanded);
                view.push(ChatItem::Tool(Box::new(item)));
                let index = view.chat.len() - 1;
                self.tool_items.insert(id.to_string(), index);
                index
            }
        };
        match view.chat.get_mut(index) {
            Some(ChatItem::Tool(t)) => Some(t),
            _ => None,
        }
    }

    /// The queued-message display follows the queues (a delivered message leaves them).
    pub fn sync_queues(&self, view: &mut View) {
        if let Some((steering, follow_up)) = &self.queues {
            view.steering = steering.peek().iter().map(message_text).collect();
            view.follow_up = follow_up.peek().iter().map(message_text).collect();
        }
    }

    /// Whether a model or thinking change can wait for the running turn (a run holds the
    /// session).
    pub fn can_defer(&self) -> bool {
        self.run_state.is_some() && self.queues.is_some()
    }

    /// Chooses `model` for what the run starts next (`level`: the thinking level a scope
    /// pattern named); the changes for the session actor, which records them at once.
    pub fn defer_model(
        &mut self,
        model: Model,
        credentials: Credentials,
        level: Option<ThinkingLevel>,
    ) -> Vec<Switch> {
        if !self.can_defer() {
            return Vec::new();
        }
        let Some(r) = self.run_state.as_mut() else {
            return Vec::new();
        };
        let level = level_for_switch(level, r.thinking, r.default_thinking.as_deref());
        r.model = model.clone();
        let mut switches = vec![Switch::Model {
            model: Box::new(model),
            credentials,
        }];
        switches.extend(self.defer_thinking(level));
        switches
    }

    /// Sets the thinking level (clamped to the chosen model) while a run holds the session;
    /// like pi, only a level that differs is recorded.
    pub fn defer_thinking(&mut self, level: ThinkingLevel) -> Option<Switch> {
        if !self.can_defer() {
            return None;
        }
        let r = self.run_state.as_mut()?;
        let level = clamp_thinking(&r.model, level);
        if level == r.thinking {
            return None;
        }
        r.thinking = level;
        Some(Switch::Thinking(level))
    }

    /// Saves a start-up default (Ctrl+S in a selector) while a run holds the session: the
    /// session's thread writes it with the other changes.
    pub fn defer_save(&mut self, default: SavedDefault) -> Option<Switch> {
        if !self.can_defer() {
            return None;
        }
        let r = self.run_state.as_mut()?;
        if let SavedDefault::Thinking(level) = &default {
            r.default_thinking = Some(level.as_str().to_string());
        }
        Some(Switch::Save(default))
    }

    /// The saved `defaultThinkingLevel` as the run started with it (or saved since).
    pub fn default_thinking(&self) -> Option<&str> {
        self.run_state.as_ref()?.default_thinking.as_deref()
    }

    /// Moves the "Retrying in Ns" line on as the wait runs down.
    pub fn tick_retry_countdown(&self, view: &mut View) {
        let Some(countdown) = &self.retry_countdown else {
            return;
        };
        let message = countdown.message(Instant::now());
        if let Some(loader) = &mut view.status {
            loader.set_message(message);
        }
    }
}

/// pi's indicator text while a run goes on (the key is in the start-up hints).
pub(super) fn working_message() -> String {
    "Working...".into()
}

/// The text of a queued user message.
pub(super) fn message_text(m: &crate::ai::Message) -> String {
    match m {
        crate::ai::Message::User(u) => crate::session::ops::user_content_text(&u.content),
        _ => String::new(),
    }
}
