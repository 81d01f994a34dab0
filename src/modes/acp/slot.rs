//! The one seam between ACP and pi's session: [`SessionSlot`] holds the `AgentSession`, idle
//! or lent to a run on its own thread, and is the only code here that touches the session's
//! run. It stands in for issue 30's `SessionHandle` (one thread owns the session; typed
//! operations in, events out) until that lands; the server only asks it to prompt, cancel,
//! hand back the finished run and lend the idle session for a setting, so swapping it for the
//! handle changes this file alone.

use std::path::PathBuf;

use crossbeam_channel::Receiver;
use serde_json::Value;

use crate::agent::AgentEvent;
use crate::ai::Abort;
use crate::harness::extensions::UserInput;
use crate::harness::AgentSession;

use super::builtin::Builtin;
use super::updates::{stop_reason, LiveTranslator};

/// How a prompt ended: ACP's stop reason, or the error the model request failed with.
pub type RunEnd = Result<&'static str, String>;

struct Running {
    done: Receiver<(AgentSession, RunEnd)>,
    abort: Abort,
}

pub struct SessionSlot {
    idle: Option<AgentSession>,
    running: Option<Running>,
}

impl SessionSlot {
    pub fn new(session: AgentSession) -> SessionSlot {
        SessionSlot {
            idle: Some(session),
            running: None,
        }
    }

    /// The session while no prompt runs.
    pub fn idle(&mut self) -> Option<&mut AgentSession> {
        self.idle.as_mut()
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Ready once the running prompt has ended; never while none runs.
    pub fn done(&self) -> Receiver<(AgentSession, RunEnd)> {
        match &self.running {
            Some(r) => r.done.clone(),
            None => crossbeam_channel::never(),
        }
    }

    /// Stops the running prompt; every wait in a run honours this within 100 ms.
    pub fn cancel(&self) {
        if let Some(r) = &self.running {
            r.abort.abort();
        }
    }

    /// Takes back the session of the prompt that ended (what `done` delivered).
    pub fn finish(&mut self, (session, end): (AgentSession, RunEnd)) -> RunEnd {
        self.running = None;
        session.abort.reset();
        self.idle = Some(session);
        crate::util::heap::release_free_memory();
        end
    }

    /// Runs a prompt on its own thread (an extension command or template too, as pi's
    /// `submit` does), handing each `session/update` to `on_update` as it happens.
    pub fn prompt(
        &mut self,
        input: UserInput,
        expand: Box<dyn Fn(&str) -> String + Send>,
        on_update: Box<dyn FnMut(Value) + Send>,
    ) -> Result<(), String> {
        self.run(on_update, move |session, on_event| {
            session.submit(input, &*expand, on_event);
            None
        })
    }

    /// Runs one of the built-in commands (`/compact`, `/session`, `/export`): what it says is
    /// the answer's text.
    pub fn command(
        &mut self,
        command: Builtin,
        on_update: Box<dyn FnMut(Value) + Send>,
    ) -> Result<(), String> {
        self.run(on_update, move |session, on_event| {
            Some(command.run(session, on_event))
        })
    }

    /// Lends the session to `work` on its own thread; `work` may return text to say (its
    /// `Err` is said too: a command that failed has still ended its turn).
    fn run<F>(&mut self, mut on_update: Box<dyn FnMut(Value) + Send>, work: F) -> Result<(), String>
    where
        F: FnOnce(&mut AgentSession, &mut dyn FnMut(&AgentEvent)) -> Option<Result<String, String>>
            + Send
            + 'static,
    {
        let Some(mut session) = self.idle.take() else {
            return Err("a prompt is already running in this session; cancel it first".into());
        };
        let agent = session.agent();
        let mut translator =
            LiveTranslator::new(PathBuf::from(&agent.cwd), agent.model.context_window);
        let abort = session.abort.clone();
        let (tx, done) = crossbeam_channel::bounded(1);
        let run_abort = abort.clone();
        // Detached on purpose: it hands the session back over `done`; if it dies, `done`
        // disconnects and the server reports it.
        std::thread::Builder::new()
            .name("pi-acp-run".into())
            .spawn(move || {
                let said = work(&mut session, &mut |ev| {
                    for u in translator.translate(ev) {
                        on_update(u);
                    }
                });
                let aborted = translator.aborted || run_abort.is_aborted();
                let end = match said {
                    Some(text) => {
                        let text = text.unwrap_or_else(|e| format!("Error: {e}"));
                        on_update(serde_json::json!({"sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": text}}));
                        Ok(if aborted { "cancelled" } else { "end_turn" })
                    }
                    None => stop_reason(translator.last_assistant.as_ref(), aborted),
                };
                let _ = tx.send((session, end));
            })
            .map_err(|e| format!("could not start the agent run: {e}"))?;
        self.running = Some(Running { done, abort });
        Ok(())
    }

    /// Ends the session: stops a running prompt (waiting for it to hand the session back),
    /// then its extensions and MCP servers, so no child outlives it.
    pub fn close(mut self) {
        if let Some(r) = self.running.take() {
            r.abort.abort();
            if let Ok((s, _)) = r.done.recv() {
                self.idle = Some(s);
            }
        }
        if let Some(s) = self.idle.take() {
            if let Some(host) = s.extension_host() {
                host.shutdown();
            }
            if let Some(mcp) = &s.mcp {
                mcp.shutdown();
            }
        }
    }
}
