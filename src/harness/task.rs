//! [`SessionTask`]: one piece of work on the [`AgentSession`] (a prompt, a compaction) run on
//! its own thread so the caller's loop stays responsive. The thread owns the session while it
//! runs and hands it back when the work is done; meanwhile the caller sees every event on a
//! channel and can steer, queue follow-ups or abort through the shared queues and flag.
//!
//! Threads: one `pi-session-task` per task. It ends when the work ends; [`SessionTask::join`]
//! waits for it (after the event channel disconnected, that wait is immediate).

use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

use super::switches::Switches;
use super::AgentSession;
use crate::agent::{AgentEvent, MessageQueue};
use crate::ai::{Abort, Message};
use crate::util::reply::{reply, ReplyRx};

/// A task that could not start hands the session back with the reason.
pub type SpawnError = Box<(AgentSession, String)>;

/// The work a task runs: the session and a sink for the events it produces.
pub type TaskWork = Box<dyn FnOnce(&mut AgentSession, &mut dyn FnMut(&AgentEvent)) + Send>;

/// A running task. Events arrive on [`SessionTask::events`]; when that channel disconnects the
/// work is over and [`SessionTask::join`] returns the session.
pub struct SessionTask {
    handle: JoinHandle<AgentSession>,
    pub events: Receiver<AgentEvent>,
    /// The agent's steering queue (shared with the run).
    pub steering: MessageQueue,
    /// The agent's follow-up queue (shared with the run).
    pub follow_up: MessageQueue,
    /// Aborts the run (and any retry wait or compaction in it).
    pub abort: Abort,
    /// Model and thinking changes for the session while the task holds it.
    pub switches: Switches,
}

impl SessionTask {
    /// Runs `work` on a new thread. If the thread cannot be started the session is handed
    /// back with the error.
    pub fn spawn(session: AgentSession, work: TaskWork) -> Result<SessionTask, SpawnError> {
        let (events_tx, events) = crossbeam_channel::unbounded();
        // The session travels through a channel so a failed spawn leaves it with us.
        let (session_tx, session_rx) = reply::<AgentSession>();
        let spawned = std::thread::Builder::new()
            .name("pi-session-task".into())
            .spawn(move || run_task(&session_rx, &events_tx, work));
        let handle = match spawned {
            Ok(h) => h,
            Err(e) => {
                return Err(Box::new((
                    session,
                    format!("Could not start the agent thread: {e}"),
                )))
            }
        };
        let (steering, follow_up, abort, switches) = (
            session.agent().steering.clone(),
            session.agent().follow_up.clone(),
            session.abort.clone(),
            session.switches.clone(),
        );
        if let Err(returned) = session_tx.send(session) {
            return Err(Box::new((
                returned,
                "The agent thread ended before it started".into(),
            )));
        }
        Ok(SessionTask {
            handle,
            events,
            steering,
            follow_up,
            abort,
            switches,
        })
    }

    /// Runs one prompt (retries and compactions included).
    pub fn prompt(session: AgentSession, prompts: Vec<Message>) -> Result<SessionTask, SpawnError> {
        Self::spawn(session, Box::new(move |s, emit| s.prompt(prompts, emit)))
    }

    /// Waits for the thread and returns the session, its abort flag reset for the next run.
    /// `Err` when the work panicked: the session is gone (its file keeps every line written).
    pub fn join(self) -> Result<AgentSession, String> {
        match self.handle.join() {
            Ok(session) => {
                session.abort.reset();
                Ok(session)
            }
            Err(_) => Err("the agent run failed unexpectedly".into()),
        }
    }
}

fn run_task(
    session_rx: &ReplyRx<AgentSession>,
    events: &Sender<AgentEvent>,
    work: TaskWork,
) -> AgentSession {
    let Ok(mut session) = session_rx.recv() else {
        // The spawner kept the session after all; nothing to hand back. This cannot happen
        // (the spawner sends right after a successful spawn), so a panic names the bug.
        unreachable!("session task started without a session");
    };
    work(&mut session, &mut |ev| {
        // A caller that stopped listening still gets the session back from join.
        let _ = events.send(ev.clone());
    });
    // Changes made after the last event still reach the session and the agent.
    session.settle_switches();
    session
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Agent;
    use crate::ai::providers::scripted::{push_reply, Reply};
    use crate::ai::{Model, ModelCost};
    use crate::resources::settings::RetrySettings;

    fn session(id: &str) -> AgentSession {
        let model = Model {
            id: id.into(),
            name: id.into(),
            api: "scripted".into(),
            provider: "test".into(),
            base_url: String::new(),
            reasoning: false,
            input: vec!["text".into()],
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            thinking_level_map: None,
            headers: None,
            compat: None,
        };
        AgentSession::new(
            Agent::new(model, String::new(), Default::default()),
            RetrySettings::default(),
            Abort::new(),
        )
    }

    #[test]
    fn a_prompt_streams_events_and_returns_the_session() {
        push_reply("task-basic", Reply::text("hello"));
        let task = SessionTask::prompt(session("task-basic"), vec![Message::user_text("hi")])
            .map_err(|b| b.1)
            .unwrap();
        let kinds: Vec<String> = task
            .events
            .iter()
            .map(|e| e.to_json()["type"].as_str().unwrap_or("").to_string())
            .collect();
        assert_eq!(kinds.first().map(String::as_str), Some("agent_start"));
        assert!(kinds.iter().any(|k| k == "agent_end"), "{kinds:?}");
        let s = task.join().unwrap();
        assert_eq!(s.messages().len(), 2);
    }
}
