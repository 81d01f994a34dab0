//! One ACP session over issue 30's session actor: the `AgentSession` lives on its own thread
//! (`harness::actor`) and this holds its [`SessionHandle`]. A prompt or a built-in command is
//! sent as an op; the actor's listener (on the actor's thread) translates each event of the
//! run into `session/update`s, and once the actor is idle again says how the turn ended. Every
//! other look at the session is a query the actor answers between runs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crossbeam_channel::{Receiver, Sender};
use serde_json::Value;

use crate::harness::actor::{self, SessionActor, SessionHandle};
use crate::harness::extensions::UserInput;
use crate::harness::op::{ActorEnv, ActorOptions, Expand, Op, SessionEvent, WhenBusy};
use crate::harness::AgentSession;

use super::builtin::Builtin;
use super::updates::{stop_reason, LiveTranslator};

/// How a prompt ended: ACP's stop reason, or the error the model request failed with.
pub type RunEnd = Result<&'static str, String>;

/// Where a turn's updates go.
pub type OnUpdate = Box<dyn FnMut(Value) + Send>;

/// The turn in progress, as the actor's listener follows it.
#[derive(Default)]
struct Turn {
    translator: Option<LiveTranslator>,
    on_update: Option<OnUpdate>,
    /// What a built-in command said (its error too: it has still ended its turn).
    said: Option<Result<String, String>>,
}

impl Turn {
    fn emit(&mut self, update: Value) {
        if let Some(f) = self.on_update.as_mut() {
            f(update);
        }
    }

    /// The turn's ops are done: how it ended (and what a command said, said now).
    fn end(&mut self, cancelled: bool) -> RunEnd {
        let translator = self.translator.take();
        let aborted = cancelled || translator.as_ref().is_some_and(|t| t.aborted);
        let end = match self.said.take() {
            Some(text) => {
                let text = text.unwrap_or_else(|e| format!("Error: {e}"));
                self.emit(serde_json::json!({"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text}}));
                Ok(if aborted { "cancelled" } else { "end_turn" })
            }
            None => stop_reason(
                translator.as_ref().and_then(|t| t.last_assistant.as_ref()),
                aborted,
            ),
        };
        self.on_update = None;
        end
    }
}

fn lock(turn: &Mutex<Turn>) -> MutexGuard<'_, Turn> {
    turn.lock().unwrap_or_else(|p| p.into_inner())
}

pub struct SessionSlot {
    handle: SessionHandle,
    actor: Option<SessionActor>,
    turn: Arc<Mutex<Turn>>,
    cancelled: Arc<AtomicBool>,
    done_tx: Sender<RunEnd>,
    done: Receiver<RunEnd>,
    running: bool,
}

impl SessionSlot {
    /// Starts the session's actor.
    pub fn new(session: AgentSession, env: ActorEnv) -> Result<SessionSlot, String> {
        let turn = Arc::new(Mutex::new(Turn::default()));
        let cancelled = Arc::new(AtomicBool::new(false));
        let (done_tx, done) = crossbeam_channel::unbounded();
        let listener = {
            let turn = Arc::clone(&turn);
            Box::new(move |ev: SessionEvent<'_>| {
                if let SessionEvent::Agent(ev) = ev {
                    let mut turn = lock(&turn);
                    let Turn {
                        translator,
                        on_update,
                        ..
                    } = &mut *turn;
                    if let (Some(t), Some(f)) = (translator.as_mut(), on_update.as_mut()) {
                        for u in t.translate(ev) {
                            f(u);
                        }
                    }
                }
            })
        };
        let (handle, actor) = actor::spawn(session, env, ActorOptions::default(), listener)?;
        // What extensions asked for on `session_start` is in place before the first prompt.
        handle.send(Op::RunExtensionWork);
        Ok(SessionSlot {
            handle,
            actor: Some(actor),
            turn,
            cancelled,
            done_tx,
            done,
            running: false,
        })
    }

    pub fn is_running(&self) -> bool {
        self.running
    }

    /// Ready once the turn in progress has ended.
    pub fn done(&self) -> Receiver<RunEnd> {
        self.done.clone()
    }

    /// The turn that `done` said has ended is over.
    pub fn finish(&mut self, end: RunEnd) -> RunEnd {
        self.running = false;
        end
    }

    /// Stops the turn in progress; every wait in a run honours this within 100 ms.
    pub fn cancel(&self) {
        if self.running {
            self.cancelled.store(true, Ordering::SeqCst);
            self.handle.abort();
        }
    }

    /// Runs `query` on the session between runs and waits for its answer.
    pub fn query<T: Send + 'static>(
        &self,
        query: impl FnOnce(&mut AgentSession, &mut ActorEnv) -> T + Send + 'static,
    ) -> Result<T, String> {
        self.handle
            .query(move |idle| query(idle.session, idle.env))
            .recv()
            .map_err(|_| "the session has ended unexpectedly; open it again".to_string())
    }

    /// Starts a turn: its updates go to `on_update`.
    fn start(&mut self, cwd: std::path::PathBuf, on_update: OnUpdate) -> Result<(), String> {
        if self.running {
            return Err("a prompt is already running in this session; cancel it first".into());
        }
        let window = self.query(|s, _| s.agent().model.context_window)?;
        let mut turn = lock(&self.turn);
        turn.translator = Some(LiveTranslator::new(cwd, window));
        turn.on_update = Some(on_update);
        turn.said = None;
        drop(turn);
        self.cancelled.store(false, Ordering::SeqCst);
        self.running = true;
        Ok(())
    }

    /// Sends a prompt (an extension command or template too, as pi's `submit` does).
    pub fn prompt(
        &mut self,
        cwd: std::path::PathBuf,
        input: UserInput,
        expand: Expand,
        on_update: OnUpdate,
    ) -> Result<(), String> {
        self.start(cwd, on_update)?;
        self.handle.prompt(input, expand, WhenBusy::Wait, None);
        self.end_turn_after();
        Ok(())
    }

    /// Runs a built-in command (`/compact`, `/session`, `/export`) as a turn.
    pub fn command(
        &mut self,
        cwd: std::path::PathBuf,
        command: Builtin,
        on_update: OnUpdate,
    ) -> Result<(), String> {
        self.start(cwd, on_update)?;
        let turn = Arc::clone(&self.turn);
        self.handle.run(move |idle| {
            let said = command.run(idle.session, idle.emit);
            lock(&turn).said = Some(said);
        });
        self.end_turn_after();
        Ok(())
    }

    /// Ops are handled in order, so one sent after the turn's runs when they are all done
    /// (its events all heard): it says how the turn ended.
    fn end_turn_after(&self) {
        let (turn, cancelled, done) = (
            Arc::clone(&self.turn),
            Arc::clone(&self.cancelled),
            self.done_tx.clone(),
        );
        self.handle.run(move |_| {
            let end = lock(&turn).end(cancelled.swap(false, Ordering::SeqCst));
            let _ = done.send(end);
        });
    }

    /// Ends the session: stops a running turn, then the actor, then the session's extensions
    /// and MCP servers, so no child outlives it.
    pub fn close(mut self) {
        self.handle.abort();
        self.handle.shutdown();
        let Some(actor) = self.actor.take() else {
            return;
        };
        if let Ok(s) = actor.join() {
            if let Some(host) = s.extension_host() {
                host.shutdown();
            }
            if let Some(mcp) = &s.mcp {
                mcp.shutdown();
            }
        }
    }
}
