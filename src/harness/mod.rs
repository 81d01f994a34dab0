//! `AgentSession`: the agent plus the policies every mode shares — automatic retry of
//! transient provider failures (with pi's `auto_retry_*` events) and the system prompt. It
//! knows nothing about terminals or output formats; modes subscribe to its events.

pub mod retry;
pub mod system_prompt;
pub mod tools;

use std::time::{Duration, Instant};

use crate::agent::{Agent, AgentEvent};
use crate::ai::{Abort, Message};
use crate::resources::settings::RetrySettings;
use crate::session::{AgentMessage, SessionWriter};

pub struct AgentSession {
    /// `None` only while a run holds the agent.
    agent: Option<Agent>,
    pub retry: RetrySettings,
    pub abort: Abort,
    /// Where finished messages are appended (in memory for `--no-session`).
    pub session: SessionWriter,
    /// Session writes that failed (disk full, permissions), for the mode to report.
    pub write_errors: Vec<String>,
}

impl AgentSession {
    /// A session kept in memory only.
    pub fn new(agent: Agent, retry: RetrySettings, abort: Abort) -> Self {
        let cwd = agent.cwd.to_string_lossy().into_owned();
        Self::with_session(agent, retry, abort, SessionWriter::in_memory(&cwd))
    }

    pub fn with_session(
        agent: Agent,
        retry: RetrySettings,
        abort: Abort,
        session: SessionWriter,
    ) -> Self {
        AgentSession {
            agent: Some(agent),
            retry,
            abort,
            session,
            write_errors: Vec::new(),
        }
    }

    /// Appends a finished message to the session; a failure is kept for the mode to report
    /// and never stops the run.
    fn persist(&mut self, ev: &AgentEvent) {
        if let AgentEvent::MessageEnd { message } = ev {
            if let Err(e) = self
                .session
                .append_message(AgentMessage::from(message.clone()))
            {
                let path = self
                    .session
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                self.write_errors
                    .push(format!("Could not write session file {path}: {e}"));
            }
        }
    }

    pub fn agent(&self) -> &Agent {
        self.agent.as_ref().expect("agent is held by a run")
    }

    pub fn messages(&self) -> &[Message] {
        &self.agent().messages
    }

    /// Runs one prompt to completion (retries included), passing every event to `on_event`.
    pub fn prompt(&mut self, prompts: Vec<Message>, on_event: &mut dyn FnMut(&AgentEvent)) {
        let agent = self.agent.take().expect("a run is already active");
        let mut run = agent.prompt(prompts, self.abort.clone());
        let mut attempt = 0u32;
        loop {
            let mut last_assistant = None;
            for ev in run.events.iter() {
                // The session line is written before listeners hear of the message, so
                // whatever they show is already on disk.
                self.persist(&ev);
                // pi reports a successful retry after the reply's `message_end`.
                on_event(&ev);
                if let AgentEvent::MessageEnd {
                    message: Message::Assistant(a),
                } = &ev
                {
                    if a.stop_reason != crate::ai::StopReason::Error && attempt > 0 {
                        on_event(&AgentEvent::AutoRetryEnd {
                            success: true,
                            attempt,
                            final_error: None,
                        });
                        attempt = 0;
                    }
                    last_assistant = Some(a.clone());
                }
                let end = matches!(ev, AgentEvent::AgentEnd { .. });
                if end {
                    break;
                }
            }
            let mut agent = run.finish();
            let failed = last_assistant.filter(|a| {
                self.retry.enabled
                    && !self.abort.is_aborted()
                    && retry::is_retryable(a, agent.model.context_window)
            });
            let Some(failed) = failed else {
                self.agent = Some(agent);
                return;
            };
            attempt += 1;
            let error = failed.error_message.clone().unwrap_or_default();
            let delay = retry::retry_delay_ms(&self.retry, attempt, agent.last_retry_after_ms);
            let (Some(delay_ms), true) = (delay, attempt <= self.retry.max_retries) else {
                on_event(&AgentEvent::AutoRetryEnd {
                    success: false,
                    attempt: attempt - 1,
                    final_error: Some(error),
                });
                self.agent = Some(agent);
                return;
            };
            on_event(&AgentEvent::AutoRetryStart {
                attempt,
                max_attempts: self.retry.max_retries,
                delay_ms,
                error_message: error,
            });
            // The failed reply stays out of the live context; the retry continues without it.
            if matches!(agent.messages.last(), Some(Message::Assistant(_))) {
                agent.messages.pop();
            }
            if !sleep_abortable(Duration::from_millis(delay_ms), &self.abort) {
                on_event(&AgentEvent::AutoRetryEnd {
                    success: false,
                    attempt,
                    final_error: Some("Retry cancelled".into()),
                });
                self.agent = Some(agent);
                return;
            }
            run = match agent.continue_run(self.abort.clone()) {
                Ok(run) => run,
                Err(refused) => {
                    // Nothing to retry from (the failed reply was the only message).
                    self.agent = Some(refused.0);
                    return;
                }
            };
        }
    }
}

/// Sleeps for `d` unless `abort` is set first; returns false if aborted.
fn sleep_abortable(d: Duration, abort: &Abort) -> bool {
    let end = Instant::now() + d;
    loop {
        if abort.is_aborted() {
            return false;
        }
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(20)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::providers::scripted::{push_reply, Reply};
    use crate::ai::{Model, ModelCost, StopReason};

    fn session(id: &str, max_retries: u32) -> AgentSession {
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
        let retry = RetrySettings {
            base_delay_ms: 1,
            max_retries,
            ..Default::default()
        };
        AgentSession::new(
            Agent::new(model, String::new(), Default::default()),
            retry,
            Abort::new(),
        )
    }

    fn run(s: &mut AgentSession) -> Vec<serde_json::Value> {
        let mut events = Vec::new();
        s.prompt(vec![Message::user_text("hi")], &mut |e| {
            events.push(e.to_json())
        });
        events
    }

    fn types(events: &[serde_json::Value]) -> Vec<&str> {
        events.iter().map(|e| e["type"].as_str().unwrap()).collect()
    }

    #[test]
    fn transient_error_is_retried_then_succeeds() {
        push_reply("retry-ok", Reply::error("503 service unavailable"));
        push_reply("retry-ok", Reply::text("fine"));
        let mut s = session("retry-ok", 3);
        let events = run(&mut s);
        let t = types(&events);
        let start = t.iter().position(|x| *x == "auto_retry_start").unwrap();
        assert_eq!(t[start - 1], "agent_end");
        assert_eq!(t[start + 1], "agent_start");
        let end_at = t.iter().position(|x| *x == "auto_retry_end").unwrap();
        assert_eq!(
            t[end_at - 1],
            "message_end",
            "reported after the reply ends"
        );
        let end = events
            .iter()
            .find(|e| e["type"] == "auto_retry_end")
            .unwrap();
        assert_eq!(end["success"], true);
        assert_eq!(end["attempt"], 1);
        // The failed reply is not in the live context.
        assert_eq!(s.messages().len(), 2);
        match s.messages().last().unwrap() {
            Message::Assistant(a) => assert_eq!(a.text(), "fine"),
            m => panic!("{m:?}"),
        }
    }

    #[test]
    fn retries_are_bounded_and_permanent_errors_are_not_retried() {
        for _ in 0..3 {
            push_reply("retry-exhaust", Reply::error("429 rate limit"));
        }
        let mut s = session("retry-exhaust", 2);
        let events = run(&mut s);
        let end = events
            .iter()
            .find(|e| e["type"] == "auto_retry_end")
            .unwrap();
        assert_eq!(end["success"], false);
        assert_eq!(end["attempt"], 2);
        assert_eq!(end["finalError"], "429 rate limit");
        assert_eq!(
            types(&events)
                .iter()
                .filter(|t| **t == "auto_retry_start")
                .count(),
            2
        );

        push_reply("no-retry", Reply::error("400 bad request"));
        let mut s = session("no-retry", 3);
        let events = run(&mut s);
        assert!(!types(&events).contains(&"auto_retry_start"));
        match s.messages().last().unwrap() {
            Message::Assistant(a) => assert_eq!(a.stop_reason, StopReason::Error),
            m => panic!("{m:?}"),
        }
    }
}
