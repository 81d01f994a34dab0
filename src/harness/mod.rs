//! `AgentSession`: the agent plus the policies every mode shares — automatic retry of
//! transient provider failures (with pi's `auto_retry_*` events), compaction when the context
//! fills up or overflows (`compaction_*` events), and the system prompt. It knows nothing about
//! terminals or output formats; modes subscribe to its events.

pub mod actor;
pub mod approval;
pub mod checkpoint;
pub mod compaction;
mod export;
pub mod extension_binding;
pub mod extensions;
pub mod inbox;
mod mcp;
pub mod model_control;
pub mod model_cycle;
pub mod op;
pub mod retry;
pub mod rewind;
pub mod session_hooks;
pub mod session_switch;
pub mod session_target;
pub mod switch_queue;
pub mod switches;
pub mod system_checkpoint;
pub mod system_prompt;
pub mod tools;
pub mod user_bash;

use std::time::Duration;

use crate::agent::{Agent, AgentEvent, CompactionReason, Run};
use crate::ai::overflow::is_context_overflow_from;
use crate::ai::{Abort, AssistantMessage, Message, ProviderError, StopReason};
use crate::resources::settings::{CompactionSettings, RetrySettings, Settings};
use crate::session::compaction::{
    calculate_context_tokens, estimate_llm_context_tokens, should_compact,
};
use crate::session::{AgentMessage, SessionWriter};
use compaction::{
    compact_session, has_something_to_compact, CompactionResult, Summarizer, SummaryError,
};

/// pi's message when an overflow persists after one compact-and-retry.
pub const OVERFLOW_RECOVERY_FAILED: &str = "Context overflow recovery failed after one \
compact-and-retry attempt. Try reducing context or switching to a larger-context model.";

pub struct AgentSession {
    /// `None` only while a run holds the agent.
    agent: Option<Agent>,
    pub retry: RetrySettings,
    /// `compaction.*` settings (defaults until the mode sets them).
    pub compaction: CompactionSettings,
    pub abort: Abort,
    /// Where finished messages are appended (in memory for `--no-session`).
    pub session: SessionWriter,
    /// Session or settings writes that failed (disk full, permissions), for the mode to
    /// report.
    pub write_errors: Vec<String>,
    /// Settings, where model and mode changes are remembered (in memory unless loaded).
    pub settings: Settings,
    /// The `--models` / `enabledModels` scope that model cycling goes through.
    pub scoped_models: Vec<model_cycle::ScopedModel>,
    /// Loaded extensions, once a mode attaches them (`attach_extensions`).
    pub extensions: Option<extension_binding::ExtensionBinding>,
    /// Model and thinking changes made while a run holds the agent.
    pub switches: switch_queue::Switches,
    /// Changes written to the session but not yet given to the agent.
    recorded_switches: Vec<switch_queue::Switch>,
    /// The `PI_*` variables the built-in bash tool gives the model's commands; kept current
    /// at the start of every run.
    pub tool_env: crate::tools::bash::SessionEnv,
    /// MCP servers of this session, when any are configured (see `mcp.rs`).
    pub mcp: Option<std::sync::Arc<crate::mcp::McpManager>>,
    /// What the system prompt is built from, so it follows tool changes extensions make.
    pub prompt_source: Option<system_prompt::PromptSource>,
    /// The `mcp_servers` section for the next prompt (wrapped in its tags).
    mcp_section: Option<String>,
    /// The prompt an extension's `before_agent_start` chose for this run: sent, not recorded.
    forced_prompt: Option<String>,
    /// Timestamps of failed replies taken out of the live context for a retry; they stay in
    /// the session file, and out of `agent_messages`.
    dropped_replies: Vec<i64>,
    /// Approval rules (issue 34), when a `permissions` setting or `--approval` sets any.
    pub approvals: Option<std::sync::Arc<approval::Approvals>>,
    /// The owner's inbox, read while a run streams (the session actor's; none for a session
    /// driven directly).
    pub(crate) inbox: Option<Box<dyn inbox::RunInbox>>,
    /// The workspace snapshot taken before this prompt, until its user message is recorded.
    pending_checkpoint: Option<checkpoint::PendingCheckpoint>,
    /// Whether this prompt's turn has a checkpoint (so one is taken when it settles).
    turn_checkpointed: bool,
    /// The last checkpoint that could not be taken, for the mode to show.
    checkpoint_error: Option<String>,
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
            compaction: CompactionSettings::default(),
            abort,
            session,
            write_errors: Vec::new(),
            settings: Settings::default(),
            scoped_models: Vec::new(),
            extensions: None,
            switches: Default::default(),
            recorded_switches: Vec::new(),
            tool_env: Default::default(),
            mcp: None,
            prompt_source: None,
            mcp_section: None,
            forced_prompt: None,
            dropped_replies: Vec::new(),
            approvals: None,
            inbox: None,
            pending_checkpoint: None,
            turn_checkpointed: false,
            checkpoint_error: None,
        }
    }

    /// Reports the write failures collected so far as `session_write_error` events, so every
    /// mode hears of them as they happen (failures outside a run stay in `write_errors` for
    /// the mode to report).
    fn report_write_errors(&mut self, on_event: &mut dyn FnMut(&AgentEvent)) {
        for error in std::mem::take(&mut self.write_errors) {
            on_event(&AgentEvent::SessionWriteError { error });
        }
    }

    /// Appends a finished message to the session; a failure is kept for the mode to report
    /// and never stops the run.
    fn persist(&mut self, ev: &AgentEvent) {
        // Approval decisions go in before the message that follows them (a call's result).
        if matches!(ev, AgentEvent::MessageEnd { .. }) {
            self.persist_decisions();
        }
        if let AgentEvent::ToolExecutionEnd { .. } = ev {
            self.persist_codemode_store();
        }
        let written = match ev {
            AgentEvent::SystemMessageEnd { message } => Some(
                self.session
                    .append_message(AgentMessage::System(message.clone())),
            ),
            AgentEvent::MessageEnd { message } => Some(
                self.session
                    .append_message(AgentMessage::from(message.clone())),
            ),
            // An extension message a run added (actionable `turn_end`).
            AgentEvent::CustomMessageEnd { message } => Some(self.session.append_custom_message(
                &message.custom_type,
                message.content.clone(),
                message.display,
                message.details.clone(),
            )),
            _ => None,
        };
        // The error names the file and what went wrong.
        if let Some(Err(e)) = written {
            self.write_errors.push(e.to_string());
        } else if let AgentEvent::MessageEnd { message } = ev {
            if self.pending_checkpoint.is_some() {
                self.attach_checkpoint(message);
            }
        }
    }

    /// Writes the approval decisions made so far (one `custom` entry each).
    pub fn persist_decisions(&mut self) {
        let Some(approvals) = &self.approvals else {
            return;
        };
        for data in approvals.take_decisions() {
            if let Err(e) = self
                .session
                .append_custom(approval::DECISION_ENTRY, Some(data))
            {
                self.write_errors.push(e.to_string());
            }
        }
    }

    /// Puts approval rules in force: on the agent's tool calls and on the built-in tools
    /// extensions run.
    pub fn set_approvals(&mut self, approvals: std::sync::Arc<approval::Approvals>) {
        let gate = approvals.gate();
        self.agent_mut().tool_gate = Some(gate.clone());
        if let Some(host) = self.extension_host() {
            host.set_services(|s| s.gate = Some(gate));
        }
        self.approvals = Some(approvals);
    }

    /// The agent, for changing its model, thinking level or queues between runs.
    pub fn agent_mut(&mut self) -> &mut Agent {
        self.agent.as_mut().expect("agent is held by a run")
    }

    pub fn agent(&self) -> &Agent {
        self.agent.as_ref().expect("agent is held by a run")
    }

    pub fn messages(&self) -> &[Message] {
        &self.agent().messages
    }

    /// The conversation as pi's `get_messages` shows it: the session's context, pi's own
    /// message roles kept as they are (`bashExecution`, `compactionSummary`, `branchSummary`,
    /// `custom`), without the failed replies a retry took out of the live context.
    pub fn agent_messages(&self) -> Vec<AgentMessage> {
        let mut messages = Vec::new();
        self.for_each_agent_message(&mut |m| messages.push(m));
        messages
    }

    /// The conversation, read from the session one message at a time.
    pub fn conversation(&self) -> inbox::Conversation<'_> {
        inbox::Conversation {
            session: &self.session,
            dropped_replies: &self.dropped_replies,
        }
    }

    /// Each of [`Self::agent_messages`] in turn, read one at a time from the session.
    pub fn for_each_agent_message(&self, emit: &mut dyn FnMut(AgentMessage)) {
        self.conversation().for_each(emit)
    }

    /// How many messages [`Self::agent_messages`] gives, without building them (clients ask
    /// for the count with every `get_state`; a long session's conversation is not copied
    /// for it).
    pub fn message_count(&self) -> usize {
        self.conversation().len()
    }

    /// Takes a failed reply at the end of the context out of it (it stays in the file).
    fn drop_failed_reply(&mut self, agent: &mut Agent) {
        if let Some(Message::Assistant(a)) = agent.messages.last() {
            self.dropped_replies.push(a.timestamp);
            agent.messages.pop();
        }
    }

    fn restore_failed_reply(&mut self, failed: Option<Message>) {
        if let (Some(agent), Some(Message::Assistant(a))) = (self.agent.as_mut(), failed) {
            self.dropped_replies.retain(|t| *t != a.timestamp);
            agent.messages.push(Message::Assistant(a));
        }
    }

    /// Runs one prompt to completion (retries included), passing every event to `on_event`;
    /// extensions see `before_agent_start` first and may queue more work, which runs after.
    pub fn prompt(&mut self, prompts: Vec<Message>, on_event: &mut dyn FnMut(&AgentEvent)) {
        self.prompt_reporting(prompts, on_event, &mut || {});
    }

    /// [`prompt`](Self::prompt), calling `on_started` once the run's messages are ready and
    /// before its first request.
    pub fn prompt_reporting(
        &mut self,
        prompts: Vec<Message>,
        on_event: &mut dyn FnMut(&AgentEvent),
        on_started: &mut dyn FnMut(),
    ) {
        self.checkpoint_before_turn();
        self.compact_before_prompt(on_event);
        self.forced_prompt = None;
        self.before_agent_start(&prompts);
        self.prepare_mcp();
        self.declare_system();
        on_started();
        let agent = self.agent.take().expect("a run is already active");
        self.refresh_tool_env(&agent);
        let run = agent.prompt(prompts, self.abort.clone());
        self.drive(run, on_event);
        self.settle_run(on_event);
        self.run_extension_work(on_event);
        self.checkpoint_after_turn();
        self.report_write_errors(on_event);
    }

    /// The end of a run and of everything it set off (retries, compaction recovery, queued
    /// messages, extensions' `agent_before_settle` continuations): extensions hear
    /// `agent_settled`, then the mode (today's pi's event).
    pub(crate) fn settle_run(&mut self, on_event: &mut dyn FnMut(&AgentEvent)) {
        // Decisions no message followed (an aborted run) are written too.
        self.persist_decisions();
        self.settle(on_event);
        on_event(&AgentEvent::AgentSettled {
            aborted: self.abort.is_aborted(),
        });
    }

    /// The variables the model's bash commands see, for a run of `agent` (pi reads them from
    /// the session when a command starts; model and thinking changes wait for the next run).
    pub(crate) fn refresh_tool_env(&self, agent: &Agent) {
        let mut vars = vec![("PI_SESSION_ID", self.session.session_id().to_string())];
        if let Some(path) = self.session.path() {
            vars.push(("PI_SESSION_FILE", path.to_string_lossy().into_owned()));
        }
        vars.push(("PI_PROVIDER", agent.model.provider.clone()));
        vars.push(("PI_MODEL", agent.model.id.clone()));
        vars.push(("PI_REASONING_LEVEL", agent.thinking.as_str().to_string()));
        self.tool_env.set(vars);
        self.refresh_codemode_store();
    }

    /// `load()`'s values for the next scripts: the `codemode-store` entries on the current
    /// branch.
    fn refresh_codemode_store(&self) {
        use crate::session::entry::Entry;
        use crate::tools::codemode::store::{read_store, STORE_ENTRY_TYPE};
        let tree = self.session.tree();
        let path = self
            .session
            .leaf_id()
            .map(|leaf| tree.path(leaf))
            .unwrap_or_default();
        let values = read_store(path.iter().filter_map(|e| match e {
            Entry::Custom(c) if c.custom_type == STORE_ENTRY_TYPE => c.data.as_ref(),
            _ => None,
        }));
        self.tool_env.codemode_store().set_values(values);
    }

    /// Each successful script's `store()` writes become one `codemode-store` entry, written
    /// when its call ends (before its tool result).
    fn persist_codemode_store(&mut self) {
        for data in self.tool_env.codemode_store().take_pending() {
            let kind = crate::tools::codemode::store::STORE_ENTRY_TYPE;
            if let Err(e) = self.session.append_custom(kind, Some(data)) {
                self.write_errors.push(e.to_string());
            }
        }
    }

    /// Follows a run (and its retries and compactions) to the end, handing the agent back.
    fn drive(&mut self, run: Run, on_event: &mut dyn FnMut(&AgentEvent)) {
        let host = self.extension_host().cloned();
        if let Some(h) = &host {
            h.set_running(true);
        }
        self.drive_run(run, on_event);
        if let Some(h) = &host {
            h.set_running(false);
        }
        self.refresh_extension_view();
    }

    fn drive_run(&mut self, mut run: Run, on_event: &mut dyn FnMut(&AgentEvent)) {
        let mut attempt = 0u32;
        // One compact-and-retry per overflow; a successful reply re-arms it.
        let mut overflow_attempted = false;
        loop {
            let mut last_assistant = None;
            let mut end = None;
            while let Some(ev) = run.next_event_with(&mut |events| match self.inbox.as_mut() {
                Some(inbox) => {
                    let conversation = inbox::Conversation {
                        session: &self.session,
                        dropped_replies: &self.dropped_replies,
                    };
                    inbox.next(events, &conversation)
                }
                None => events.recv().ok(),
            }) {
                // A model or thinking change made meanwhile goes in before this message.
                self.record_switches();
                // The session line is written before listeners hear of the message, so
                // whatever they show is already on disk (or they hear first that it is not).
                self.persist(&ev);
                self.report_write_errors(on_event);
                self.forward_event(&ev);
                if let AgentEvent::AgentEnd { messages, .. } = ev {
                    // Told once it is known whether a retry follows.
                    end = Some(messages);
                    break;
                }
                // pi reports a successful retry after the reply's `message_end`.
                on_event(&ev);
                if let AgentEvent::MessageEnd {
                    message: Message::Assistant(a),
                } = &ev
                {
                    if a.stop_reason != StopReason::Error {
                        overflow_attempted = false;
                    }
                    if a.stop_reason != StopReason::Error && attempt > 0 {
                        on_event(&AgentEvent::AutoRetryEnd {
                            success: true,
                            attempt,
                            final_error: None,
                        });
                        attempt = 0;
                    }
                    last_assistant = Some(a.clone());
                }
            }
            let mut agent = run.finish();
            // What starts next (a retry, a continuation) uses the model chosen meanwhile.
            self.hand_switches_to(&mut agent);
            let failed = last_assistant.as_ref().filter(|a| {
                self.retry.enabled
                    && !self.abort.is_aborted()
                    && retry::is_retryable(
                        a,
                        retry::cause_of(a, agent.last_error.as_ref()),
                        agent.model.context_window,
                    )
            });
            // Known before `agent_end`, which says whether a retry follows.
            let retry_delay = failed.and_then(|failed| {
                let next = attempt + 1;
                (next <= self.retry.max_retries)
                    .then(|| {
                        retry::auto_retry_wait_ms(
                            &self.retry,
                            next,
                            retry::cause_of(failed, agent.last_error.as_ref())
                                .and_then(ProviderError::retry_after_ms),
                            agent.options.provider_retry.max_retry_delay_ms,
                        )
                    })
                    .flatten()
            });
            on_event(&AgentEvent::AgentEnd {
                messages: end.unwrap_or_default(),
                will_retry: retry_delay.is_some(),
            });
            let Some(failed) = failed else {
                match self.check_compaction(
                    agent,
                    last_assistant,
                    &mut overflow_attempted,
                    false,
                    on_event,
                ) {
                    Some(next) => {
                        run = next;
                        continue;
                    }
                    None => return,
                }
            };
            attempt += 1;
            let error = failed.error_message.clone().unwrap_or_default();
            let Some(delay_ms) = retry_delay else {
                on_event(&AgentEvent::AutoRetryEnd {
                    success: false,
                    attempt: attempt - 1,
                    final_error: Some(error),
                });
                match self.check_compaction(
                    agent,
                    last_assistant,
                    &mut overflow_attempted,
                    false,
                    on_event,
                ) {
                    Some(next) => {
                        run = next;
                        continue;
                    }
                    None => return,
                }
            };
            on_event(&AgentEvent::AutoRetryStart {
                attempt,
                max_attempts: self.retry.max_retries,
                delay_ms,
                error_message: error,
            });
            // The failed reply stays out of the live context; the retry continues without it.
            self.drop_failed_reply(&mut agent);
            if !self.abort.sleep(Duration::from_millis(delay_ms)) {
                on_event(&AgentEvent::AutoRetryEnd {
                    success: false,
                    attempt,
                    final_error: Some("Retry cancelled".into()),
                });
                self.agent = Some(agent);
                return;
            }
            self.refresh_tool_env(&agent);
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

impl AgentSession {
    /// Compacts the session now (pi's `/compact`), discarding the events.
    pub fn compact(
        &mut self,
        custom_instructions: Option<&str>,
    ) -> Result<CompactionResult, String> {
        self.compact_with_events(custom_instructions, &mut |_| {})
    }

    /// Compacts the session now, reporting `compaction_start` / `compaction_end` (reason
    /// `manual`). Errors are pi's: "Already compacted", "Nothing to compact (session too
    /// small)", "Compaction cancelled", or the summarizer's failure.
    pub fn compact_with_events(
        &mut self,
        custom_instructions: Option<&str>,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<CompactionResult, String> {
        let reason = CompactionReason::Manual;
        on_event(&AgentEvent::CompactionStart { reason });
        if self
            .before_compact(custom_instructions)
            .is_some_and(|g| g.cancelled())
        {
            on_event(&AgentEvent::CompactionEnd {
                reason,
                result: None,
                aborted: true,
                will_retry: false,
                error_message: None,
            });
            return Err("Compaction cancelled".into());
        }
        let mut agent = self.agent.take().expect("a run is active");
        let outcome = {
            let summarizer = Summarizer::for_agent(&agent, &self.abort);
            compact_session(
                &mut self.session,
                &summarizer,
                &self.compaction.for_window(agent.model.context_window),
                custom_instructions,
            )
        };
        let out = match outcome {
            Ok((result, write_error)) => {
                self.write_errors.extend(write_error);
                self.report_write_errors(on_event);
                agent.messages =
                    crate::agent::into_llm_messages(self.session.build_context().messages);
                on_event(&AgentEvent::CompactionEnd {
                    reason,
                    result: Some(self.compaction_json(&result)),
                    aborted: false,
                    will_retry: false,
                    error_message: None,
                });
                Ok(result)
            }
            Err(e) => {
                let aborted = e == SummaryError::Aborted;
                on_event(&AgentEvent::CompactionEnd {
                    reason,
                    result: None,
                    aborted,
                    will_retry: false,
                    error_message: (!aborted).then(|| format!("Compaction failed: {e}")),
                });
                Err(e.to_string())
            }
        };
        self.agent = Some(agent);
        out
    }

    /// A compaction's result as today's pi reports it: with `estimatedTokensAfter`, the
    /// estimated size of the context it left (pi's heuristic over the rebuilt messages).
    pub fn compaction_json(&self, result: &CompactionResult) -> serde_json::Value {
        let after: u64 = self
            .agent_messages()
            .iter()
            .map(crate::session::compaction::estimate_tokens)
            .sum();
        let mut out = serde_json::Map::new();
        if let serde_json::Value::Object(fields) = result.to_json() {
            for (k, v) in fields {
                let before = k == "tokensBefore";
                out.insert(k, v);
                if before {
                    out.insert("estimatedTokensAfter".into(), after.into());
                }
            }
        }
        serde_json::Value::Object(out)
    }

    /// The timestamp (ms) of the latest compaction on the current branch.
    fn latest_compaction_ms(&self) -> Option<i64> {
        self.session
            .latest_compaction()
            .map(|c| crate::session::ids::parse_iso_ms(&c.timestamp).unwrap_or(0))
    }

    /// pi's check before a prompt is sent: a session already over the threshold (one just
    /// resumed, or whose last reply was aborted) is compacted first, so the prompt goes out
    /// with the summary instead of the whole history.
    fn compact_before_prompt(&mut self, on_event: &mut dyn FnMut(&AgentEvent)) {
        let last = self.agent().messages.iter().rev().find_map(|m| match m {
            Message::Assistant(a) => Some(a.clone()),
            _ => None,
        });
        if last.is_none() {
            return;
        }
        let agent = self.agent.take().expect("no run is active before a prompt");
        let mut overflow_attempted = false;
        let next = self.check_compaction(agent, last, &mut overflow_attempted, true, on_event);
        // Messages queued meanwhile go out before the prompt.
        if let Some(run) = next {
            self.drive(run, on_event);
        }
    }

    /// After a run (or before a prompt, `before_prompt`): compact on overflow (then retry,
    /// unless a prompt is about to be sent anyway) or when over the threshold (pi's
    /// `_checkCompaction`; before a prompt, aborted replies count too). Returns the continued
    /// run, or hands the agent back and `None`.
    fn check_compaction(
        &mut self,
        mut agent: Agent,
        last: Option<AssistantMessage>,
        overflow_attempted: &mut bool,
        before_prompt: bool,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Option<Run> {
        let settings = self.compaction.for_window(agent.model.context_window);
        let Some(a) = last.filter(|a| {
            settings.enabled
                && (before_prompt || a.stop_reason != StopReason::Aborted)
                && !self.abort.is_aborted()
        }) else {
            self.agent = Some(agent);
            return None;
        };
        let window = agent.model.context_window;
        let same_model = a.provider == agent.model.provider && a.model == agent.model.id;
        // A reply from before the latest compaction says nothing about the context now.
        let compacted_at = self.latest_compaction_ms();
        if compacted_at.is_some_and(|c| a.timestamp <= c) {
            self.agent = Some(agent);
            return None;
        }
        let cause = retry::cause_of(&a, agent.last_error.as_ref());
        if same_model && is_context_overflow_from(&a, cause, window) {
            if *overflow_attempted {
                on_event(&AgentEvent::CompactionEnd {
                    reason: CompactionReason::Overflow,
                    result: None,
                    aborted: false,
                    will_retry: false,
                    error_message: Some(OVERFLOW_RECOVERY_FAILED.into()),
                });
                self.agent = Some(agent);
                return None;
            }
            *overflow_attempted = true;
            // The failed reply stays in the file but leaves the live context.
            let failed = agent.messages.last().cloned();
            self.drop_failed_reply(&mut agent);
            let compacted_before = self.latest_compaction_ms();
            let next =
                self.auto_compact(agent, CompactionReason::Overflow, !before_prompt, on_event);
            if next.is_none() && self.latest_compaction_ms() == compacted_before {
                // Nothing could be compacted (a single prompt larger than the window): the
                // server's error is the answer, so it ends the run where everyone sees it.
                self.restore_failed_reply(failed);
            }
            return next;
        }
        let tokens = if a.stop_reason == StopReason::Error {
            // No usage on an error: the last valid usage plus estimates of what followed.
            let est = estimate_llm_context_tokens(&agent.messages);
            let stale = match est.last_usage_index.map(|i| &agent.messages[i]) {
                None => true,
                Some(Message::Assistant(u)) => compacted_at.is_some_and(|c| u.timestamp <= c),
                Some(_) => false,
            };
            if stale {
                self.agent = Some(agent);
                return None;
            }
            est.tokens
        } else {
            calculate_context_tokens(&a.usage)
        };
        if should_compact(tokens, window, &settings) {
            return self.auto_compact(agent, CompactionReason::Threshold, false, on_event);
        }
        self.agent = Some(agent);
        None
    }

    /// Runs an automatic compaction with its events; continues the run when retrying (or when
    /// messages were queued meanwhile).
    fn auto_compact(
        &mut self,
        mut agent: Agent,
        reason: CompactionReason,
        will_retry: bool,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Option<Run> {
        let settings = self.compaction.for_window(agent.model.context_window);
        if !has_something_to_compact(&self.session, &settings) {
            // As pi 1.x: no compaction events at all then.
            self.agent = Some(agent);
            return None;
        }
        on_event(&AgentEvent::CompactionStart { reason });
        let end = |result, aborted, error_message| AgentEvent::CompactionEnd {
            reason,
            result,
            aborted,
            will_retry: false,
            error_message,
        };
        // An extension may veto it; pi reports that as an aborted compaction.
        if self.before_compact(None).is_some_and(|g| g.cancelled()) {
            on_event(&end(None, true, None));
            self.agent = Some(agent);
            return None;
        }
        let outcome = {
            let summarizer = Summarizer::for_agent(&agent, &self.abort);
            compact_session(&mut self.session, &summarizer, &settings, None)
        };
        match outcome {
            Ok((result, write_error)) => {
                self.write_errors.extend(write_error);
                self.report_write_errors(on_event);
                agent.messages =
                    crate::agent::into_llm_messages(self.session.build_context().messages);
                on_event(&AgentEvent::CompactionEnd {
                    reason,
                    result: Some(self.compaction_json(&result)),
                    aborted: false,
                    will_retry,
                    error_message: None,
                });
                if will_retry {
                    if let Some(Message::Assistant(last)) = agent.messages.last() {
                        if last.stop_reason == StopReason::Error {
                            self.drop_failed_reply(&mut agent);
                        }
                    }
                }
                let queued = !agent.steering.is_empty() || !agent.follow_up.is_empty();
                if will_retry || queued {
                    self.refresh_tool_env(&agent);
                    match agent.continue_run(self.abort.clone()) {
                        Ok(run) => return Some(run),
                        Err(refused) => agent = refused.0,
                    }
                }
            }
            Err(SummaryError::Aborted) => on_event(&end(None, true, None)),
            // pi ends quietly when there is nothing to compact.
            Err(SummaryError::Unavailable(_)) => on_event(&end(None, false, None)),
            Err(SummaryError::Failed(e)) => {
                let msg = match reason {
                    CompactionReason::Overflow => format!("Context overflow recovery failed: {e}"),
                    _ => format!("Auto-compaction failed: {e}"),
                };
                on_event(&end(None, false, Some(msg)));
            }
        }
        self.agent = Some(agent);
        None
    }
}

#[cfg(test)]
#[path = "tests/compaction.rs"]
mod compaction_tests;

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
    fn agent_messages_keep_pis_roles_and_leave_out_a_retried_failure() {
        push_reply("agent-msgs", Reply::error("503 service unavailable"));
        push_reply("agent-msgs", Reply::text("fine"));
        let mut s = session("agent-msgs", 3);
        s.session
            .append_message(AgentMessage::BashExecution(
                crate::session::entry::BashExecutionMessage {
                    command: "ls".into(),
                    output: "a\n".into(),
                    exit_code: Some(Some(0)),
                    cancelled: false,
                    truncated: false,
                    full_output_path: None,
                    timestamp: 1,
                    exclude_from_context: None,
                    extra: Default::default(),
                },
            ))
            .unwrap();
        run(&mut s);
        let roles: Vec<String> = s
            .agent_messages()
            .iter()
            .map(|m| m.role().to_string())
            .collect();
        assert_eq!(roles, ["bashExecution", "user", "assistant"]);
        // The failed reply is still in the file.
        let stored = s.session.build_context().messages.len();
        assert_eq!(stored, 4);
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
