//! [`RunInbox`]: how the owner of an [`AgentSession`](super::AgentSession) keeps listening to
//! its own callers while a run holds the agent. The session actor (`actor.rs`) installs one;
//! the run loop then waits for its next event through [`RunInbox::next`], which answers what
//! can be answered mid-run and keeps the rest for when the session is idle.
//!
//! Plain data below `harness/mod.rs`: the session holds it, so it names nothing above.

use crossbeam_channel::Receiver;

use crate::agent::AgentEvent;
use crate::session::AgentMessage;

/// What the run loop waits through while a run holds the agent.
pub trait RunInbox: Send {
    /// The run's next event from `events`, doing the owner's own work while none has come;
    /// `None` once the run's channel is closed.
    fn next(&mut self, events: &Receiver<AgentEvent>) -> Option<AgentEvent>;

    /// A run is about to stream; `messages` gives the conversation as it is now, should the
    /// owner keep a view of it.
    fn run_starting(&mut self, messages: &dyn Fn() -> Vec<AgentMessage>);
}
