//! The typed messages a mode sends to the session actor ([`Op`]), what the actor gives a
//! mode's code that runs on it ([`Idle`], [`Peek`], [`RunView`]) and what it tells the mode
//! ([`SessionEvent`]). The actor itself is `actor.rs`; this file is data.

use std::path::PathBuf;
use std::sync::Arc;

use super::extensions::{Disposition, UserInput};
use super::inbox::Conversation;
use super::model_cycle::Credentials;
use super::session_switch::SwitchEnv;
use super::switch_queue::Switch;
use super::AgentSession;
use crate::agent::{AgentEvent, MessageQueue, QueueMode};
use crate::ai::{Message, Model, ThinkingLevel};
use crate::util::reply::ReplyTx;

/// Skill and template expansion of a prompt's text (the mode's resources).
pub type Expand = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// Code a mode runs on the session, on the actor's thread, once no run holds it.
pub type Work = Box<dyn FnOnce(Idle<'_>) + Send>;

/// Code a mode runs on the actor's thread at once: with the idle session, or with what is
/// known of the run in progress.
pub type PeekFn = Box<dyn FnOnce(Peek<'_>) + Send>;

/// Told what became of a prompt, on the actor's thread, as soon as that is known (before the
/// run's first event when it starts one), so a reply written from here precedes the events.
pub type Ack = Box<dyn FnOnce(Result<Disposition, Busy>) + Send>;

/// What the mode listens with: called on the actor's thread for every event, in order.
pub type Listener = Box<dyn FnMut(SessionEvent<'_>) + Send>;

/// A prompt refused because a run is in progress ([`WhenBusy::Refuse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy;

/// What a prompt that arrives during a run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenBusy {
    /// Waits in the actor's queue and runs after the run in progress.
    Wait,
    /// Joins the steering queue of the run in progress (acknowledged `Queued`).
    Steer,
    /// Joins the follow-up queue of the run in progress (acknowledged `Queued`).
    FollowUp,
    /// Is refused: the ack gets `Err(Busy)`.
    Refuse,
}

/// The session an [`Op::Switch`] goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionTarget {
    /// A new, empty session (`parent`: the session it was started from).
    New { parent: Option<String> },
    /// An existing session file (or a new one at that path).
    Resume(PathBuf),
    /// A new session with what came before this user message.
    Fork { entry_id: String },
    /// A new session holding the active branch.
    Clone,
}

/// What became of an [`Op::Switch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switched {
    /// An extension cancelled it (`session_before_switch` / `session_before_fork`).
    pub cancelled: bool,
    /// A fork: the text of the user message forked at (for the editor).
    pub text: Option<String>,
}

/// One request to the session actor. Ops are handled in the order sent; an op that needs the
/// session while a run holds it waits in the actor's queue and is handled when the run ends,
/// before anything sent after it.
pub enum Op {
    /// A user's input: extension commands and `input` hooks see it first, then it runs.
    Prompt {
        input: UserInput,
        expand: Expand,
        when_busy: WhenBusy,
        ack: Option<Ack>,
    },
    /// A message for the run in progress (or the next run).
    Steer(Message),
    /// A message for after the run in progress (or the next run).
    FollowUp(Message),
    /// Aborts the run in progress (the flag is also set by [`SessionHandle::abort`] at once);
    /// `done` is answered once no run is in progress.
    ///
    /// [`SessionHandle::abort`]: super::actor::SessionHandle::abort
    Abort { done: Option<ReplyTx<()>> },
    /// A manual compaction (`/compact`): its events, then the result as pi reports it.
    Compact {
        instructions: Option<String>,
        reply: ReplyTx<Result<serde_json::Value, String>>,
    },
    /// Replaces the session (extensions asked first and told afterwards).
    Switch {
        to: SessionTarget,
        reply: ReplyTx<Result<Switched, String>>,
    },
    /// Switches the model; answers the thinking level when the switch changed it.
    SetModel {
        model: Box<Model>,
        credentials: Credentials,
        reply: ReplyTx<Result<Option<ThinkingLevel>, String>>,
    },
    /// Sets the thinking level (clamped to the model); answers the level when it changed.
    SetThinkingLevel {
        level: ThinkingLevel,
        reply: Option<ReplyTx<Option<ThinkingLevel>>>,
    },
    /// A model, thinking-level or start-up default change made while a run may hold the
    /// session (the terminal UI's Shift+Tab, Ctrl+P, selectors in the middle of a reply):
    /// applied at once when idle; during a run it is recorded at the run's next event and
    /// used by whatever the run starts next (a retry, a compaction's continuation), as pi's
    /// running loop keeps the model it started with.
    ModelSwitch(Switch),
    /// Applies what extensions queued (session changes, prompts) and runs it. Dropped when it
    /// arrives during a run: the run applies what extensions queued when it ends.
    RunExtensionWork,
    /// Runs `Work` on the idle session; whatever runs it starts streams to the listener.
    Run(Work),
    /// Runs `PeekFn` now: on the idle session, or on the view of the run in progress.
    Peek(PeekFn),
    /// Ends the actor once everything sent before has been handled.
    Shutdown,
}

/// Looks up the credentials of a model, or says why there are none.
pub type CredentialsFn = Box<dyn Fn(&Model) -> Result<Credentials, String> + Send>;

/// What a switch of session needs that the session does not hold, owned by the actor: the
/// models and their credentials (model lookup lives with the CLI), where new sessions go.
pub struct ActorEnv {
    pub available_models: Box<dyn Fn() -> Vec<Model> + Send>,
    pub credentials: CredentialsFn,
    /// False while the session runs on a placeholder model.
    pub has_model: bool,
    /// Where new sessions go when the current one has no file (pi's per-cwd directory).
    pub session_dir: PathBuf,
}

impl ActorEnv {
    /// No other models, the session's own model counted as chosen.
    pub fn fixed(session_dir: PathBuf) -> Self {
        ActorEnv {
            available_models: Box::new(Vec::new),
            credentials: Box::new(|m| Err(format!("No API key for {}/{}", m.provider, m.id))),
            has_model: true,
            session_dir,
        }
    }

    /// What a session switch needs of this environment.
    pub fn switch_env(&mut self) -> SwitchEnv<'_> {
        SwitchEnv {
            available_models: &*self.available_models,
            credentials: &*self.credentials,
            has_model: &mut self.has_model,
            session_dir: &self.session_dir,
        }
    }
}

/// The session as [`Work`] and [`Peek::Idle`] get it: no run holds it.
pub struct Idle<'a> {
    pub session: &'a mut AgentSession,
    pub env: &'a mut ActorEnv,
    /// Reports events to the mode's listener, in order with everything else.
    pub emit: &'a mut dyn FnMut(&AgentEvent),
}

/// What a [`PeekFn`] sees.
pub enum Peek<'a> {
    Idle(Idle<'a>),
    /// A run holds the agent: what is known of it, and the conversation so far (read from
    /// the session, which holds every message that has ended).
    Running(&'a RunView, Conversation<'a>),
}

/// What is known of the session while a run holds its agent, taken as the run starts.
pub struct RunView {
    /// The model and thinking level the run started with.
    pub model: Model,
    pub thinking: ThinkingLevel,
    pub has_model: bool,
    pub steering: MessageQueue,
    pub follow_up: MessageQueue,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
    pub session_file: Option<PathBuf>,
    pub session_id: String,
    pub session_name: Option<String>,
    pub auto_compaction: bool,
}

impl RunView {
    /// The view of `session` as it is now.
    pub fn of(session: &AgentSession, has_model: bool) -> RunView {
        let agent = session.agent();
        RunView {
            model: agent.model.clone(),
            thinking: agent.thinking,
            has_model,
            steering: agent.steering.clone(),
            follow_up: agent.follow_up.clone(),
            steering_mode: agent.steering.mode(),
            follow_up_mode: agent.follow_up.mode(),
            session_file: session.session.path().map(PathBuf::from),
            session_id: session.session.session_id().to_string(),
            session_name: session.session.name(),
            auto_compaction: session.compaction.enabled,
        }
    }
}

/// What the actor tells the mode's [`Listener`].
pub enum SessionEvent<'a> {
    /// An event of the agent or the session, as every mode has always seen them.
    Agent(&'a AgentEvent),
    /// Everything sent so far has been handled: no run, nothing waiting.
    Idle,
}

/// A [`SessionEvent`] of its own, for a mode that reads events from a channel
/// ([`channel_listener`]).
// Boxing the event would add an allocation per event; `Idle` is the rare one.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum OwnedEvent {
    Agent(AgentEvent),
    Idle,
}

/// A listener that sends every event, cloned, down a channel: for a mode whose own loop
/// `select!`s over events (the terminal UI). An event's clone is the size of the event (a
/// delta, a finished message; the run's new messages at `agent_end`), never the conversation.
pub fn channel_listener() -> (Listener, crossbeam_channel::Receiver<OwnedEvent>) {
    let (tx, rx) = crossbeam_channel::unbounded();
    let listener: Listener = Box::new(move |ev| {
        let owned = match ev {
            SessionEvent::Agent(ev) => OwnedEvent::Agent(ev.clone()),
            SessionEvent::Idle => OwnedEvent::Idle,
        };
        // A mode that stopped listening is ending; the session goes on to its end.
        let _ = tx.send(owned);
    });
    (listener, rx)
}

/// How the actor starts.
#[derive(Default)]
pub struct ActorOptions {
    /// After each op, carry out the session switches extensions asked for
    /// ([`AgentSession::apply_session_requests`]); for modes without their own (not the
    /// terminal UI, which also navigates the tree and reloads).
    pub apply_session_requests: bool,
}
