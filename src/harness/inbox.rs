//! [`RunInbox`]: how the owner of an [`AgentSession`](super::AgentSession) keeps listening to
//! its own callers while a run holds the agent. The session actor (`actor.rs`) installs one;
//! the run loop then waits for its next event through [`RunInbox::next`], which answers what
//! can be answered mid-run and keeps the rest for when the session is idle.
//!
//! Plain data below `harness/mod.rs`: the session holds it, so it names nothing above.

use crossbeam_channel::Receiver;

use crate::agent::AgentEvent;
use crate::ai::{Message, StopReason};
use crate::session::{AgentMessage, SessionWriter};

/// What the run loop waits through while a run holds the agent.
pub trait RunInbox: Send {
    /// The run's next event from `events`, doing the owner's own work while none has come;
    /// `None` once the run's channel is closed. `conversation` is the conversation so far,
    /// for what the owner answers meanwhile.
    fn next(
        &mut self,
        events: &Receiver<AgentEvent>,
        conversation: &Conversation<'_>,
    ) -> Option<AgentEvent>;
}

/// The session's conversation (what `AgentSession::agent_messages` gives), read from the
/// session one message at a time. During a run it is current too: every message that has
/// ended is written to the session before anyone hears of it. Never copied whole (issue 35).
#[derive(Clone, Copy)]
pub struct Conversation<'a> {
    pub session: &'a SessionWriter,
    /// Timestamps of failed replies taken out of the live context for a retry.
    pub dropped_replies: &'a [i64],
}

impl Conversation<'_> {
    /// Each message in turn, parsed from the session as it comes.
    pub fn for_each(&self, emit: &mut dyn FnMut(AgentMessage)) {
        self.session.for_each_context_message(&mut |m| {
            if !self.is_dropped(&m) {
                emit(m);
            }
        });
    }

    /// How many messages [`Self::for_each`] gives, without building them (the count is kept
    /// by the session).
    pub fn len(&self) -> usize {
        match self.dropped_replies.is_empty() {
            true => self.session.context_len(),
            false => {
                let mut n = 0;
                self.for_each(&mut |_| n += 1);
                n
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn is_dropped(&self, m: &AgentMessage) -> bool {
        match m {
            AgentMessage::Llm(Message::Assistant(a)) => {
                a.stop_reason == StopReason::Error && self.dropped_replies.contains(&a.timestamp)
            }
            _ => false,
        }
    }
}
