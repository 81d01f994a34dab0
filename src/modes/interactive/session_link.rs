//! [`SessionLink`]: the interactive mode's end of the session actor (`harness/actor.rs`). The
//! session lives on the actor's thread from start to exit; the UI thread sends it work
//! ([`SessionLink::start`]: a prompt, a compaction, a branch summary, extension work) and
//! reads or changes it between runs ([`SessionLink::idle`], answered at once since nothing else
//! holds it then). What the work reports comes back, in order, on [`SessionLink::events`].
//!
//! The UI never waits for a run: while one goes on it asks nothing of the session and keeps
//! what the footer shows in `turn.rs`; model and thinking changes go to the actor as
//! [`Op::ModelSwitch`], which the run picks up.

use crossbeam_channel::{Receiver, Sender};

use crate::agent::{AgentEvent, MessageQueue};
use crate::harness::actor::{self, SessionActor, SessionHandle};
use crate::harness::op::{ActorEnv, ActorOptions, Idle, Listener, Op, Peek, SessionEvent};
use crate::harness::switch_queue::Switch;
use crate::harness::AgentSession;

/// What a command says when the session's thread is gone (it failed; the session file keeps
/// every line written).
pub(super) const SESSION_GONE: &str =
    "The session stopped unexpectedly; restart pi to continue (the session file keeps everything written so far)";

/// What the session's thread tells the UI.
// Boxing the event would add an allocation per streamed delta.
#[allow(clippy::large_enum_variant)]
pub(super) enum FromSession {
    Agent(AgentEvent),
    /// The work started by [`SessionLink::start`] is over: the session is idle again, or
    /// (`failed`) the work failed unexpectedly and took the session's thread with it.
    WorkDone {
        failed: bool,
    },
}

/// The handle, the actor's thread and the events it sends.
pub(super) struct SessionLink {
    handle: SessionHandle,
    actor: Option<SessionActor>,
    events: Receiver<FromSession>,
    /// For the work's own "done", in order after its events.
    done: Sender<FromSession>,
}

impl SessionLink {
    /// Starts the actor on `session`. `Err` (with the session's reason) when its thread could
    /// not start.
    pub fn spawn(
        session: AgentSession,
        has_model: bool,
        session_dir: std::path::PathBuf,
    ) -> Result<SessionLink, String> {
        let (tx, events) = crossbeam_channel::unbounded();
        let forward = tx.clone();
        let listener: Listener = Box::new(move |ev| {
            if let SessionEvent::Agent(ev) = ev {
                // A UI that stopped listening is ending; the session goes on to its end.
                let _ = forward.send(FromSession::Agent(ev.clone()));
            }
        });
        // The models and their credentials stay with the UI (they are not `Send`); a switch of
        // session is made with what the UI looked up (`history.rs`).
        let mut env = ActorEnv::fixed(session_dir);
        env.has_model = has_model;
        let options = ActorOptions::default();
        let (handle, actor) = actor::spawn(session, env, options, listener)?;
        Ok(SessionLink {
            handle,
            actor: Some(actor),
            events,
            done: tx,
        })
    }

    /// Events of the work in progress, then its [`FromSession::WorkDone`].
    pub fn events(&self) -> &Receiver<FromSession> {
        &self.events
    }

    /// Runs `f` on the session now and returns what it gives. Only between runs (the caller
    /// knows: it started them); `None` when the session's thread is gone or a run holds it.
    pub fn idle<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut AgentSession) -> R + Send + 'static,
    ) -> Option<R> {
        self.handle
            .peek(move |p| match p {
                Peek::Idle(idle) => Some(f(idle.session)),
                Peek::Running(..) => None,
            })
            .recv()
            .ok()
            .flatten()
    }

    /// Starts `work` on the session; its events and then `WorkDone` arrive on
    /// [`events`](Self::events). `false` when the session's thread is gone.
    pub fn start(&self, work: impl FnOnce(Idle<'_>) + Send + 'static) -> bool {
        let done = Done(self.done.clone());
        self.handle.run(move |idle| {
            work(idle);
            drop(done);
        })
    }

    /// Model and thinking changes while a run may hold the session (see
    /// [`Op::ModelSwitch`]).
    pub fn switch_all(&self, switches: impl IntoIterator<Item = Switch>) {
        for switch in switches {
            self.handle.send(Op::ModelSwitch(switch));
        }
    }

    /// Aborts the run in progress (its retries and compactions included).
    pub fn abort(&self) {
        self.handle.abort();
    }

    /// The run's steering and follow-up queues (shared with the session's agent).
    pub fn queues(&self) -> (&MessageQueue, &MessageQueue) {
        self.handle.queues()
    }

    /// Ends the actor once what was sent is handled and takes the session back (for the
    /// mode's last words); `None` when its thread failed.
    pub fn finish(&mut self) -> Option<AgentSession> {
        self.handle.shutdown();
        self.actor.take()?.join().ok()
    }
}

/// Says [`FromSession::WorkDone`] when dropped: after the work, or while a panic in it
/// unwinds (the UI must not wait for a run that will never end).
struct Done(Sender<FromSession>);

impl Drop for Done {
    fn drop(&mut self) {
        let failed = std::thread::panicking();
        let _ = self.0.send(FromSession::WorkDone { failed });
    }
}
