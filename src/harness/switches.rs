//! [`Switches`]: model and thinking-level changes a mode makes while a run holds the session
//! (Shift+Tab, Ctrl+P, the model selector in the middle of a reply).
//!
//! pi changes its agent's state at once and writes `model_change` / `thinking_level_change`
//! to the session right then, but a loop already running keeps the model and level it
//! started with; whatever starts the next loop — an auto-retry, the continuation after an
//! overflow compaction, the next prompt — uses the new ones. Here the run thread owns the
//! agent, so the mode queues the changes in this shared handle; the session thread writes
//! them to the session file at its next event (before that event's message, which is where
//! pi's line lands) and hands them to the agent whenever a loop ends.
//! The queue itself is plain data in `switch_queue`; this file records and hands out what it
//! holds.

pub use super::switch_queue::{Switch, Switches};
use super::AgentSession;
use crate::agent::Agent;

impl AgentSession {
    /// Writes queued changes to the session file and settings; the agent gets them at
    /// [`AgentSession::hand_switches_to`].
    pub(super) fn record_switches(&mut self) {
        for switch in self.switches.take() {
            let written = match &switch {
                Switch::Model { model, .. } => {
                    self.session.append_model_change(&model.provider, &model.id)
                }
                Switch::Thinking(level) => {
                    self.session.append_thinking_level_change(level.as_str())
                }
                Switch::Save(default) => {
                    self.save_default(default);
                    continue;
                }
            };
            if let Err(e) = written {
                self.write_errors.push(e.to_string());
            }
            self.recorded_switches.push(switch);
        }
    }

    /// Gives `agent` the changes recorded so far (between loops, or when a task ends).
    pub(super) fn hand_switches_to(&mut self, agent: &mut Agent) {
        self.record_switches();
        for switch in self.recorded_switches.drain(..) {
            match switch {
                Switch::Model { model, credentials } => {
                    agent.options.api_key = credentials.0;
                    agent.options.headers = credentials.1;
                    agent.model = *model;
                }
                Switch::Thinking(level) => agent.thinking = level,
                Switch::Save(_) => {}
            }
        }
    }

    /// Records and applies every queued change; called when the session comes back from a
    /// task, so nothing made during the run is lost.
    pub fn settle_switches(&mut self) {
        if let Some(mut agent) = self.agent.take() {
            self.hand_switches_to(&mut agent);
            self.agent = Some(agent);
        }
    }
}
