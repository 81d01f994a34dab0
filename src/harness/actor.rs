//! The session actor: one thread (`pi-session`) owns the [`AgentSession`] from start to exit.
//! Modes hold a [`SessionHandle`] and send it [`Op`]s; what the session does reaches them
//! through their [`Listener`], called on this thread in order.
//!
//! ```text
//!   mode (print, json, rpc, interactive, acp)           pi-session thread
//!   ┌──────────────────────────┐   Op (prompt, steer,   ┌─────────────────────────────┐
//!   │ SessionHandle ───────────┼── abort, compact, ───▶ │ actor loop: owns            │
//!   │   abort flag (shared) ───┼── switch, peek …)      │   AgentSession + ActorEnv    │
//!   │   steering/follow-up  ───┼─ queues (shared) ────▶ │   own queue of waiting Ops   │
//!   │ Listener ◀───────────────┼── SessionEvent ─────── │ (runs stream on pi-agent-run)│
//!   └──────────────────────────┘  (AgentEvent, Idle)    └─────────────────────────────┘
//! ```
//!
//! Between runs an op is handled as it comes. While a run streams, the run loop waits through
//! the actor's [`RunInbox`]: steering, follow-ups, aborts and [`Op::Peek`]s are handled at
//! once (a peek sees the [`RunView`] and the conversation, read from the session); every other op waits in the actor's own queue and is
//! handled when the run is over, before any op sent after it. Ops that arrive while the
//! session is busy outside the run loop (an extension command, compaction, a retry's wait)
//! wait in the channel and are handled next. Abort is the shared [`Abort`] flag, set by
//! [`SessionHandle::abort`] directly, so it is honoured within the run's bound (100 ms).
//!
//! The thread ends at [`Op::Shutdown`] or when every handle is dropped, once the ops before
//! have been handled; [`SessionActor::join`] gives the session back for the mode's last words
//! (write errors, extension shutdown).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crossbeam_channel::{select, Receiver, Sender};

use super::extensions::Disposition;
use super::inbox::{Conversation, RunInbox};
use super::op::{
    Ack, ActorEnv, ActorOptions, Busy, Expand, Idle, Listener, Op, Peek, RunView, SessionEvent,
    WhenBusy, Work,
};
use super::switch_queue::{Switch, Switches};
use super::AgentSession;
use crate::agent::{AgentEvent, MessageQueue};
use crate::ai::{Abort, Message};
use crate::util::reply::{reply, ReplyRx, ReplyTx};

/// A mode's end of the actor. Clones talk to the same actor.
#[derive(Clone)]
pub struct SessionHandle {
    ops: Sender<Op>,
    halted: Arc<Halt>,
    abort: Abort,
    steering: MessageQueue,
    follow_up: MessageQueue,
}

/// The actor's thread, to join once the mode is done.
pub struct SessionActor {
    thread: JoinHandle<AgentSession>,
}

/// Starts the actor on `session`. `listener` hears every event, on the actor's thread.
pub fn spawn(
    session: AgentSession,
    env: ActorEnv,
    options: ActorOptions,
    listener: Listener,
) -> Result<(SessionHandle, SessionActor), String> {
    let (ops_tx, ops) = crossbeam_channel::unbounded();
    let halted = Arc::new(Halt::default());
    let handle = SessionHandle {
        ops: ops_tx,
        halted: Arc::clone(&halted),
        abort: session.abort.clone(),
        steering: session.agent().steering.clone(),
        follow_up: session.agent().follow_up.clone(),
    };
    let mailbox = Arc::new(Mutex::new(Mailbox::default()));
    let actor = Actor {
        session,
        env,
        options,
        listener,
        ops,
        mailbox,
        halted,
    };
    let thread = std::thread::Builder::new()
        .name("pi-session".into())
        .spawn(move || actor.run())
        .map_err(|e| format!("Could not start the session thread: {e}"))?;
    Ok((handle, SessionActor { thread }))
}

impl SessionHandle {
    /// Sends `op`; `false` when the actor has ended.
    pub fn send(&self, op: Op) -> bool {
        self.ops.send(op).is_ok()
    }

    /// Aborts the run in progress now (the flag the run, its retries and compactions watch).
    pub fn abort(&self) {
        self.abort.abort();
    }

    /// [`abort`](Self::abort), answered once no run is in progress any more.
    pub fn abort_and_wait(&self) -> ReplyRx<()> {
        self.abort.abort();
        let (tx, rx) = reply();
        self.send(Op::Abort { done: Some(tx) });
        rx
    }

    /// Whether an abort is pending (set and not yet taken back by the end of a run).
    pub fn is_aborted(&self) -> bool {
        self.abort.is_aborted()
    }

    /// The abort flag itself, for a signal handler.
    pub fn abort_flag(&self) -> Abort {
        self.abort.clone()
    }

    /// Queues a steering message for the run in progress (or the next); never waits.
    pub fn steer(&self, message: Message) {
        self.steering.push(message);
    }

    /// Queues a follow-up message for after the run in progress (or the next); never waits.
    pub fn follow_up(&self, message: Message) {
        self.follow_up.push(message);
    }

    /// The steering and follow-up queues (shared with the session's agent).
    pub fn queues(&self) -> (&MessageQueue, &MessageQueue) {
        (&self.steering, &self.follow_up)
    }

    /// Sends a prompt (see [`Op::Prompt`]).
    pub fn prompt(
        &self,
        input: super::extensions::UserInput,
        expand: Expand,
        when_busy: WhenBusy,
        ack: Option<Ack>,
    ) -> bool {
        self.send(Op::Prompt {
            input,
            expand,
            when_busy,
            ack,
        })
    }

    /// Runs `work` on the idle session (see [`Op::Run`]).
    pub fn run(&self, work: impl FnOnce(Idle<'_>) + Send + 'static) -> bool {
        self.send(Op::Run(Box::new(work)))
    }

    /// Runs `query` on the idle session and answers what it returns (after the run in progress
    /// and the ops sent before).
    pub fn query<T: Send + 'static>(
        &self,
        query: impl FnOnce(Idle<'_>) -> T + Send + 'static,
    ) -> ReplyRx<T> {
        let (tx, rx) = reply();
        self.run(move |idle| {
            let _ = tx.send(query(idle));
        });
        rx
    }

    /// Runs `peek` now: on the idle session, or on the view of the run in progress.
    pub fn peek<T: Send + 'static>(
        &self,
        peek: impl FnOnce(Peek<'_>) -> T + Send + 'static,
    ) -> ReplyRx<T> {
        let (tx, rx) = reply();
        self.send(Op::Peek(Box::new(move |p| {
            let _ = tx.send(peek(p));
        })));
        rx
    }

    /// Waits until every op sent before has been handled.
    pub fn barrier(&self) {
        let _ = self.query(|_| ()).recv();
    }

    /// Ends the actor once the ops sent before are handled.
    pub fn shutdown(&self) {
        self.send(Op::Shutdown);
    }

    /// Ends the actor after the op in hand (a signal's shutdown): the run in progress is
    /// aborted, nothing sent but not yet handled is, and the replies it waited for are
    /// dropped (their receivers disconnect).
    pub fn halt(&self) {
        self.halted.flag.store(true, Ordering::SeqCst);
        self.abort.abort();
        self.send(Op::Shutdown);
    }

    /// [`halt`](Self::halt), then `last` on the idle session before the actor ends (what a
    /// signal's shutdown still records, such as a killed command's result).
    pub fn halt_then(&self, last: impl FnOnce(Idle<'_>) + Send + 'static) {
        *self.halted.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(Box::new(last));
        self.halt();
    }
}

impl SessionActor {
    /// Waits for the actor to end (after [`SessionHandle::shutdown`], or once every handle is
    /// dropped) and takes the session back. `Err` when its thread panicked: the session file
    /// keeps every line written.
    pub fn join(self) -> Result<AgentSession, String> {
        self.thread
            .join()
            .map_err(|_| "the session thread failed unexpectedly".to_string())
    }
}

/// What the actor and its run inbox share: both only ever touch it on the actor's thread.
#[derive(Default)]
struct Mailbox {
    /// Ops that arrived during a run and wait for the session, in arrival order.
    waiting: VecDeque<Op>,
    /// What is known of the run in progress (set while an op may be running).
    view: Option<RunView>,
    /// `abort` callers to answer once the run is over.
    aborts: Vec<ReplyTx<()>>,
    /// A run streamed during the op in hand.
    ran: bool,
}

fn lock(m: &Mutex<Mailbox>) -> MutexGuard<'_, Mailbox> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

struct Actor {
    session: AgentSession,
    env: ActorEnv,
    options: ActorOptions,
    listener: Listener,
    ops: Receiver<Op>,
    mailbox: Arc<Mutex<Mailbox>>,
    /// Set by [`SessionHandle::halt`]: no op is handled any more.
    halted: Arc<Halt>,
}

/// A halt ([`SessionHandle::halt`]) and the work still to do before the actor ends.
#[derive(Default)]
struct Halt {
    flag: AtomicBool,
    last: Mutex<Option<Work>>,
}

impl Actor {
    fn run(mut self) -> AgentSession {
        self.session.inbox = Some(Box::new(ActorInbox {
            ops: self.ops.clone(),
            mailbox: Arc::clone(&self.mailbox),
            abort: self.session.abort.clone(),
            steering: self.session.agent().steering.clone(),
            follow_up: self.session.agent().follow_up.clone(),
            switches: self.session.switches.clone(),
            closed: false,
        }));
        loop {
            let waiting = lock(&self.mailbox).waiting.pop_front();
            let op = match waiting {
                Some(op) => op,
                None => match self.ops.recv() {
                    Ok(op) => op,
                    Err(_) => break,
                },
            };
            if matches!(op, Op::Shutdown) || self.halted.flag.load(Ordering::SeqCst) {
                break;
            }
            self.handle(op);
            let idle = lock(&self.mailbox).waiting.is_empty() && self.ops.is_empty();
            if idle {
                (self.listener)(SessionEvent::Idle);
            }
        }
        let last = self
            .halted
            .last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(last) = last {
            self.work(Op::Run(last));
        }
        self.session.inbox = None;
        self.session
    }

    /// One op, with the session idle.
    fn handle(&mut self, op: Op) {
        match op {
            Op::Steer(m) => self.session.agent().steering.push(m),
            Op::FollowUp(m) => self.session.agent().follow_up.push(m),
            Op::ModelSwitch(switch) => {
                if matches!(switch, Switch::Model { .. }) {
                    self.env.has_model = true;
                }
                self.session.switches.push(switch);
                self.session.settle_switches();
            }
            // No run is in progress: nothing to abort, and the flag set for it is taken back
            // so the next run does not start aborted.
            Op::Abort { done } => {
                self.session.abort.reset();
                if let Some(done) = done {
                    let _ = done.send(());
                }
            }
            Op::Shutdown => {}
            work => self.work(work),
        }
    }

    /// An op that may start a run (a peek may too): handled with the run view in place, then
    /// the abort flag is taken back and waiting `abort` callers answered.
    fn work(&mut self, op: Op) {
        {
            let view = RunView::of(&self.session, self.env.has_model);
            lock(&self.mailbox).view = Some(view);
        }
        let Actor {
            session,
            env,
            listener,
            mailbox,
            options,
            ..
        } = self;
        let mut emit = |ev: &AgentEvent| listener(SessionEvent::Agent(ev));
        match op {
            Op::Prompt {
                input, expand, ack, ..
            } => {
                let mut ack = ack;
                session.submit_reporting(input, &*expand, &mut emit, &mut |d| {
                    if let Some(ack) = ack.take() {
                        ack(Ok(d));
                    }
                });
                if let Some(ack) = ack.take() {
                    ack(Ok(Disposition::Handled));
                }
            }
            Op::Compact {
                instructions,
                reply,
            } => {
                let result = session
                    .compact_with_events(instructions.as_deref(), &mut emit)
                    .map(|r| session.compaction_json(&r));
                let _ = reply.send(result);
            }
            Op::Switch { to, reply } => {
                let _ = reply.send(session.switch_to(&to, &mut env.switch_env()));
            }
            Op::SetModel {
                model,
                credentials,
                reply,
            } => {
                let result = session.set_model(*model, credentials);
                if result.is_ok() {
                    env.has_model = true;
                }
                let _ = reply.send(result);
            }
            Op::SetThinkingLevel { level, reply } => {
                let changed = session.set_thinking_level(level);
                if let Some(reply) = reply {
                    let _ = reply.send(changed);
                }
            }
            Op::RunExtensionWork => session.run_extension_work(&mut emit),
            Op::Run(work) => run_work(work, session, env, &mut emit),
            // A peek at the idle session may start a run too (an RPC prompt does).
            Op::Peek(peek) => peek(Peek::Idle(Idle {
                session,
                env,
                emit: &mut emit,
            })),
            Op::Steer(_)
            | Op::FollowUp(_)
            | Op::ModelSwitch(_)
            | Op::Abort { .. }
            | Op::Shutdown => {}
        }
        if options.apply_session_requests {
            session.apply_session_requests(&mut env.switch_env());
        }
        let (aborts, ran) = {
            let mut mailbox = lock(mailbox);
            mailbox.view = None;
            (
                std::mem::take(&mut mailbox.aborts),
                std::mem::take(&mut mailbox.ran),
            )
        };
        if ran {
            // Each request's transient copies are gone: give their pages back, so RSS follows
            // what the session holds (issue 35).
            crate::util::heap::release_free_memory();
        }
        session.abort.reset();
        for done in aborts {
            let _ = done.send(());
        }
    }
}

fn run_work(
    work: Work,
    session: &mut AgentSession,
    env: &mut ActorEnv,
    emit: &mut dyn FnMut(&AgentEvent),
) {
    work(Idle { session, env, emit });
}

/// The actor's side of a run: what the run loop waits through while it streams.
struct ActorInbox {
    ops: Receiver<Op>,
    mailbox: Arc<Mutex<Mailbox>>,
    abort: Abort,
    steering: MessageQueue,
    follow_up: MessageQueue,
    /// Model and thinking changes for the run in progress (recorded at its next event).
    switches: Switches,
    /// Every handle is gone: only the run's events are left to wait for.
    closed: bool,
}

impl RunInbox for ActorInbox {
    fn next(
        &mut self,
        events: &Receiver<AgentEvent>,
        conversation: &Conversation<'_>,
    ) -> Option<AgentEvent> {
        lock(&self.mailbox).ran = true;
        loop {
            if self.closed {
                return events.recv().ok();
            }
            select! {
                recv(events) -> ev => return ev.ok(),
                recv(self.ops) -> op => match op {
                    Ok(op) => self.during_run(op, conversation),
                    Err(_) => self.closed = true,
                },
            }
        }
    }
}

impl ActorInbox {
    /// An op that arrived while the run streams: what concerns the run is handled now, the
    /// rest waits (behind whatever already waits, so order is kept; and after an abort).
    fn during_run(&mut self, op: Op, conversation: &Conversation<'_>) {
        let mut mailbox = lock(&self.mailbox);
        let op = match op {
            Op::Abort { done } => {
                self.abort.abort();
                if let Some(done) = done {
                    mailbox.aborts.push(done);
                }
                return;
            }
            Op::Steer(m) => return self.steering.push(m),
            Op::FollowUp(m) => return self.follow_up.push(m),
            Op::ModelSwitch(switch) => return self.switches.push(switch),
            // The run applies what extensions queued when it ends.
            Op::RunExtensionWork => return,
            // After an abort, what comes next sees the session the run leaves behind.
            op if !mailbox.waiting.is_empty() || self.abort.is_aborted() => op,
            Op::Prompt {
                input,
                expand,
                when_busy,
                ack,
            } => match when_busy {
                WhenBusy::Wait => Op::Prompt {
                    input,
                    expand,
                    when_busy,
                    ack,
                },
                WhenBusy::Refuse => {
                    drop(mailbox);
                    if let Some(ack) = ack {
                        ack(Err(Busy));
                    }
                    return;
                }
                WhenBusy::Steer | WhenBusy::FollowUp => {
                    let message =
                        super::extensions::user_message(expand(&input.text), input.images);
                    match when_busy {
                        WhenBusy::Steer => &self.steering,
                        _ => &self.follow_up,
                    }
                    .push(message);
                    drop(mailbox);
                    if let Some(ack) = ack {
                        ack(Ok(Disposition::Queued));
                    }
                    return;
                }
            },
            Op::Peek(peek) => match mailbox.view.as_ref() {
                Some(view) => return peek(Peek::Running(view, *conversation)),
                None => Op::Peek(peek),
            },
            op => op,
        };
        mailbox.waiting.push_back(op);
    }
}

#[cfg(test)]
#[path = "tests/actor.rs"]
mod tests;
