//! Compaction and branch summaries, the LLM part: one summarization request per summary
//! (history and split-turn prefix run on two threads), the `compaction` / `branch_summary`
//! entries they produce, and nothing about when to run — `AgentSession` decides that.

use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;
use serde_json::{json, Value};

use crate::agent::{Agent, StreamFn};
use crate::ai::{
    Abort, AssistantEvent, AssistantMessage, Content, Context, Message, Model, StopReason,
    StreamOptions, ThinkingLevel, Usage,
};
use crate::session::branch_summary::{collect_entries_for_branch_summary, prepare_branch_entries};
use crate::session::compaction::{
    branch_summary_request, estimate_tokens, format_file_operations, history_summary_request,
    join_split_turn, prepare_compaction, serialize_conversation, turn_prefix_request,
    CompactionSettings, Preparation, BRANCH_SUMMARY_PREAMBLE, SUMMARIZATION_SYSTEM_PROMPT,
    SUMMARY_PROMPT, TURN_PREFIX_PROMPT, UPDATE_SUMMARY_PROMPT,
};
use crate::session::{to_llm_messages, AgentMessage, Entry, SessionWriter};

/// How often a waiting summary request re-checks the abort flag.
const ABORT_POLL: Duration = Duration::from_millis(50);

/// A finished compaction, as pi reports it in `compaction_end.result`.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionResult {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    /// `{readFiles, modifiedFiles}`.
    pub details: Value,
    /// What the summary requests used, summed (pi 1.x's compaction `usage`).
    pub usage: Usage,
}

impl CompactionResult {
    pub fn to_json(&self) -> Value {
        json!({
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
            "usage": self.usage,
            "details": self.details,
        })
    }
}

/// Two requests' usage added up, as pi 1.x sums a split turn's two summary requests (the
/// optional counts stay absent unless either side has them).
fn combine_usage(a: &Usage, b: &Usage) -> Usage {
    let opt = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (None, None) => None,
        _ => Some(x.unwrap_or(0) + y.unwrap_or(0)),
    };
    let mut sum = *a;
    sum.input += b.input;
    sum.output += b.output;
    sum.cache_read += b.cache_read;
    sum.cache_write += b.cache_write;
    sum.reasoning = opt(a.reasoning, b.reasoning);
    sum.cache_write_1h = opt(a.cache_write_1h, b.cache_write_1h);
    sum.total_tokens += b.total_tokens;
    sum.cost.input += b.cost.input;
    sum.cost.output += b.cost.output;
    sum.cost.cache_read += b.cost.cache_read;
    sum.cost.cache_write += b.cost.cache_write;
    sum.cost.total += b.cost.total;
    sum
}

/// Why a summary could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryError {
    /// The abort flag was raised.
    Aborted,
    /// The session cannot be compacted now: "Already compacted" or "Nothing to compact
    /// (session too small)".
    Unavailable(String),
    /// The summary request failed (e.g. "Summarization failed: 500 internal error").
    Failed(String),
}

impl std::fmt::Display for SummaryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SummaryError::Aborted => f.write_str("Compaction cancelled"),
            SummaryError::Unavailable(m) | SummaryError::Failed(m) => f.write_str(m),
        }
    }
}

/// The model and request settings summaries are made with.
pub struct Summarizer<'a> {
    pub model: &'a Model,
    /// Key and headers; `max_tokens` and `reasoning` are set per request.
    pub options: &'a StreamOptions,
    pub thinking: ThinkingLevel,
    pub stream_fn: &'a StreamFn,
    pub abort: &'a Abort,
}

impl<'a> Summarizer<'a> {
    /// Summaries made with the agent's own model, credentials and provider entry point.
    pub fn for_agent(agent: &'a Agent, abort: &'a Abort) -> Self {
        Summarizer {
            model: &agent.model,
            options: &agent.options,
            thinking: agent.thinking,
            stream_fn: &agent.stream_fn,
            abort,
        }
    }

    /// One summarization request; returns the final message (which may be an error).
    fn complete(&self, request: String, max_tokens: u64) -> Result<AssistantMessage, SummaryError> {
        let context = Context {
            system_prompt: Some(SUMMARIZATION_SYSTEM_PROMPT.to_string()),
            messages: vec![Message::user_text(request)],
            tools: Vec::new(),
        };
        let mut options = self.options.clone();
        options.max_tokens = Some(max_tokens);
        options.reasoning =
            Some(self.thinking).filter(|t| self.model.reasoning && *t != ThinkingLevel::Off);
        let rx = (self.stream_fn)(self.model, &context, &options, self.abort.clone());
        loop {
            match rx.recv_timeout(ABORT_POLL) {
                Ok(AssistantEvent::Done { message, .. }) => return Ok(message),
                Ok(AssistantEvent::Error { error, .. }) => {
                    if error.stop_reason == StopReason::Aborted {
                        return Err(SummaryError::Aborted);
                    }
                    return Ok(error);
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    if self.abort.is_aborted() {
                        // Never wait on the network once aborted; the stream ends on its own.
                        return Err(SummaryError::Aborted);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(SummaryError::Failed(
                        "Provider stream ended without a final event".into(),
                    ))
                }
            }
        }
    }

    /// The reply's text blocks joined by newlines and its usage, or `<label> failed: <error>`.
    fn summary_text(
        &self,
        request: String,
        max_tokens: u64,
        label: &str,
    ) -> Result<(String, Usage), SummaryError> {
        let reply = self.complete(request, max_tokens)?;
        if reply.stop_reason == StopReason::Error {
            let why = reply.error_message.as_deref().unwrap_or("Unknown error");
            return Err(SummaryError::Failed(format!("{label} failed: {why}")));
        }
        // pi 1.6.0: a summary cut at its token cap is incomplete, and one that calls a tool is
        // no summary; neither is stored.
        if reply.stop_reason == StopReason::Length {
            return Err(SummaryError::Failed(format!(
                "{label} failed: generation hit the token cap and the summary is incomplete"
            )));
        }
        if reply.tool_calls().next().is_some() {
            return Err(SummaryError::Failed(
                "Summarization attempted to call a tool".into(),
            ));
        }
        Ok((text_blocks(&reply), reply.usage))
    }
}

fn text_blocks(reply: &AssistantMessage) -> String {
    reply
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn serialize(messages: &[AgentMessage]) -> String {
    serialize_conversation(&to_llm_messages(messages))
}

/// The history summary (updating `previous_summary` when there is one) and its usage.
pub fn generate_summary(
    messages: &[AgentMessage],
    summarizer: &Summarizer,
    reserve_tokens: u64,
    custom_instructions: Option<&str>,
    previous_summary: Option<&str>,
) -> Result<(String, Usage), SummaryError> {
    let max_tokens = (0.8 * reserve_tokens as f64).floor() as u64;
    let request =
        history_summary_request(&serialize(messages), previous_summary, custom_instructions);
    summarizer.summary_text(request, max_tokens, "Summarization")
}

fn turn_prefix_summary(
    messages: &[AgentMessage],
    summarizer: &Summarizer,
    reserve_tokens: u64,
) -> Result<(String, Usage), SummaryError> {
    let max_tokens = (0.5 * reserve_tokens as f64).floor() as u64;
    let request = turn_prefix_request(&serialize(messages));
    summarizer.summary_text(request, max_tokens, "Turn prefix summarization")
}

/// Makes the summary for a prepared compaction (pi's `compact`).
pub fn compact(
    prep: &Preparation,
    summarizer: &Summarizer,
    custom_instructions: Option<&str>,
) -> Result<CompactionResult, SummaryError> {
    let reserve = prep.settings.reserve_tokens;
    let history = || {
        generate_summary(
            &prep.messages_to_summarize,
            summarizer,
            reserve,
            custom_instructions,
            prep.previous_summary.as_deref(),
        )
    };
    let (mut summary, usage) = if prep.is_split_turn && !prep.turn_prefix_messages.is_empty() {
        let (history, prefix) = std::thread::scope(|s| {
            let prefix =
                s.spawn(|| turn_prefix_summary(&prep.turn_prefix_messages, summarizer, reserve));
            let history = if prep.messages_to_summarize.is_empty() {
                Ok(("No prior history.".to_string(), None))
            } else {
                history().map(|(text, usage)| (text, Some(usage)))
            };
            let prefix = prefix.join().unwrap_or_else(|_| {
                Err(SummaryError::Failed(
                    "Turn prefix summarization panicked".into(),
                ))
            });
            (history, prefix)
        });
        let ((history, history_usage), (prefix, prefix_usage)) = (history?, prefix?);
        let usage = match history_usage {
            Some(h) => combine_usage(&h, &prefix_usage),
            None => prefix_usage,
        };
        (join_split_turn(&history, &prefix), usage)
    } else {
        history()?
    };
    let (read, modified) = prep.file_ops.lists();
    summary.push_str(&format_file_operations(&read, &modified));
    if summarizer.abort.is_aborted() {
        return Err(SummaryError::Aborted);
    }
    Ok(CompactionResult {
        summary,
        first_kept_entry_id: prep.first_kept_entry_id.clone(),
        tokens_before: prep.tokens_before,
        details: prep.file_ops.details(),
        usage,
    })
}

/// Whether the session at its current leaf has anything a compaction would summarize (pi 1.x
/// starts no automatic compaction, and reports none, when it has not).
pub fn has_something_to_compact(session: &SessionWriter, settings: &CompactionSettings) -> bool {
    let tree = session.tree();
    let path = session.leaf_id().map(|l| tree.path(l)).unwrap_or_default();
    prepare_compaction(&path, settings)
        .is_some_and(|p| !p.messages_to_summarize.is_empty() || !p.turn_prefix_messages.is_empty())
}

/// Compacts the session at its current leaf and appends the `compaction` entry; the caller
/// rebuilds live context from `session.build_context()`. A failed file write does not undo
/// the compaction (the entry is kept in memory); its text comes back alongside the result.
pub fn compact_session(
    session: &mut SessionWriter,
    summarizer: &Summarizer,
    settings: &CompactionSettings,
    custom_instructions: Option<&str>,
) -> Result<(CompactionResult, Option<String>), SummaryError> {
    let prep = {
        let tree = session.tree();
        let path = session.leaf_id().map(|l| tree.path(l)).unwrap_or_default();
        match prepare_compaction(&path, settings) {
            Some(p) => p,
            None if matches!(path.last(), Some(Entry::Compaction(_))) => {
                return Err(SummaryError::Unavailable("Already compacted".into()))
            }
            None => {
                return Err(SummaryError::Unavailable(
                    "Nothing to compact (session too small)".into(),
                ))
            }
        }
    };
    check_fits(&prep, summarizer.model.context_window)?;
    let result = compact(&prep, summarizer, custom_instructions)?;
    let written = session.append_compaction(
        &result.summary,
        &result.first_kept_entry_id,
        result.tokens_before,
        Some(result.details.clone()),
        serde_json::to_value(result.usage).ok(),
        Some(false),
    );
    // The error names the file and what went wrong.
    let write_error = written.err().map(|e| e.to_string());
    Ok((result, write_error))
}

/// A summary request's fixed part — the system prompt and the instructions around the
/// conversation — in estimated tokens (chars / 4, as the estimates elsewhere).
fn prompt_tokens(instructions_len: usize) -> u64 {
    (SUMMARIZATION_SYSTEM_PROMPT.len() + instructions_len) as u64 / 4
}

/// Refuses a compaction whose summary request cannot succeed: one with nothing to summarize
/// (the kept tail already holds the whole conversation; a request about an empty conversation
/// only costs the user time — pi 1.x refuses it too, manual or automatic), or a request —
/// conversation, prompt and the summary's own budget — larger than the model's window.
fn check_fits(prep: &Preparation, window: u64) -> Result<(), SummaryError> {
    if prep.messages_to_summarize.is_empty() && prep.turn_prefix_messages.is_empty() {
        return Err(SummaryError::Unavailable(
            "Nothing to compact (session too small)".into(),
        ));
    }
    let tokens = |ms: &[AgentMessage]| ms.iter().map(estimate_tokens).sum::<u64>();
    let previous = prep
        .previous_summary
        .as_deref()
        .map_or(0, |s| s.len() as u64 / 4);
    let history = tokens(&prep.messages_to_summarize)
        + previous
        + prompt_tokens(SUMMARY_PROMPT.len().max(UPDATE_SUMMARY_PROMPT.len()))
        + (0.8 * prep.settings.reserve_tokens as f64) as u64;
    let prefix = tokens(&prep.turn_prefix_messages)
        + prompt_tokens(TURN_PREFIX_PROMPT.len())
        + (0.5 * prep.settings.reserve_tokens as f64) as u64;
    let needed = history.max(prefix);
    if window > 0 && needed > window {
        return Err(SummaryError::Unavailable(format!(
            "Compaction skipped: the summary request (about {needed} tokens with its reply) \
             would not fit in the model's {window}-token context window"
        )));
    }
    Ok(())
}

/// A made branch summary.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummary {
    pub summary: String,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

impl BranchSummary {
    /// The `details` stored with the `branch_summary` entry.
    pub fn details(&self) -> Value {
        json!({"readFiles": self.read_files, "modifiedFiles": self.modified_files})
    }
}

/// Options of a branch summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchSummaryOptions<'a> {
    pub custom_instructions: Option<&'a str>,
    /// Use `custom_instructions` instead of the built-in instructions.
    pub replace_instructions: bool,
    /// Budget = context window − this (`branchSummary.reserveTokens`, default 16384).
    pub reserve_tokens: u64,
}

impl Default for BranchSummaryOptions<'_> {
    fn default() -> Self {
        BranchSummaryOptions {
            custom_instructions: None,
            replace_instructions: false,
            reserve_tokens: 16384,
        }
    }
}

/// Summarizes the entries of a branch being left (pi's `generateBranchSummary`).
pub fn generate_branch_summary(
    entries: &[&Entry],
    summarizer: &Summarizer,
    opts: &BranchSummaryOptions,
) -> Result<BranchSummary, SummaryError> {
    let window = match summarizer.model.context_window {
        0 => 128_000,
        w => w,
    };
    let budget = window.saturating_sub(opts.reserve_tokens);
    let prep = prepare_branch_entries(entries, budget);
    if prep.messages.is_empty() {
        return Ok(BranchSummary {
            summary: "No content to summarize".into(),
            read_files: Vec::new(),
            modified_files: Vec::new(),
        });
    }
    let request = branch_summary_request(
        &serialize(&prep.messages),
        opts.custom_instructions,
        opts.replace_instructions,
    );
    let reply = summarizer.complete(request, 2048)?;
    if reply.stop_reason == StopReason::Error {
        return Err(SummaryError::Failed(
            reply
                .error_message
                .unwrap_or_else(|| "Summarization failed".into()),
        ));
    }
    let (read_files, modified_files) = prep.file_ops.lists();
    let mut summary = format!("{BRANCH_SUMMARY_PREAMBLE}{}", text_blocks(&reply));
    summary.push_str(&format_file_operations(&read_files, &modified_files));
    Ok(BranchSummary {
        summary,
        read_files,
        modified_files,
    })
}

/// Leaves the current branch for `new_leaf` (`None`: before the root) with a summary of what
/// is left behind, written as a `branch_summary` entry there. `target` is the entry the user
/// picked (the common-ancestor search runs against it). Returns the new entry's id, or `None`
/// when nothing was left behind (the leaf is then simply moved).
pub fn summarize_branch(
    session: &mut SessionWriter,
    target: &str,
    new_leaf: Option<&str>,
    summarizer: &Summarizer,
    opts: &BranchSummaryOptions,
) -> Result<Option<String>, SummaryError> {
    let old_leaf = session.leaf_id().map(str::to_string);
    let summary = {
        let (entries, _) =
            collect_entries_for_branch_summary(session.entries(), old_leaf.as_deref(), target);
        if entries.is_empty() {
            None
        } else {
            Some(generate_branch_summary(&entries, summarizer, opts)?)
        }
    };
    let Some(summary) = summary.filter(|s| !s.summary.is_empty()) else {
        match new_leaf {
            Some(id) => session
                .branch(id)
                .map_err(|e| SummaryError::Failed(e.to_string()))?,
            None => session.reset_leaf(),
        }
        return Ok(None);
    };
    session
        .branch_with_summary(
            new_leaf,
            &summary.summary,
            Some(summary.details()),
            Some(false),
        )
        .map(Some)
        .map_err(|e| SummaryError::Failed(e.to_string()))
}

#[cfg(test)]
mod fit_tests {
    use super::*;
    use crate::ai::Message;

    fn prep(history_chars: usize, settings: CompactionSettings) -> Preparation {
        let history = if history_chars == 0 {
            Vec::new()
        } else {
            vec![AgentMessage::Llm(Message::user_text(
                "x".repeat(history_chars),
            ))]
        };
        Preparation {
            first_kept_entry_id: "e".into(),
            messages_to_summarize: history,
            turn_prefix_messages: Vec::new(),
            is_split_turn: false,
            tokens_before: 0,
            previous_summary: None,
            file_ops: Default::default(),
            settings,
        }
    }

    #[test]
    fn a_summary_request_must_fit_the_window_and_have_something_to_summarize() {
        let small = CompactionSettings::default().for_window(4096);
        assert!(check_fits(&prep(4000, small), 4096).is_ok());
        // pi's reserve on a 4K model: the summary alone asks for more than the window.
        let err = check_fits(&prep(4000, CompactionSettings::default()), 4096).unwrap_err();
        assert!(
            format!("{err:?}").contains("4096-token context window"),
            "{err:?}"
        );
        let err = check_fits(&prep(40_000, small), 4096).unwrap_err();
        assert!(format!("{err:?}").contains("would not fit"), "{err:?}");
        // A compaction of nothing is not attempted, requested or automatic (pi 1.x).
        let err = check_fits(&prep(0, small), 4096).unwrap_err();
        assert!(format!("{err:?}").contains("Nothing to compact"), "{err:?}");
    }

    #[test]
    fn a_split_turns_two_summary_requests_add_up() {
        let a = Usage {
            input: 10,
            output: 2,
            total_tokens: 12,
            reasoning: Some(1),
            ..Default::default()
        };
        let b = Usage {
            input: 5,
            output: 1,
            total_tokens: 6,
            ..Default::default()
        };
        let sum = combine_usage(&a, &b);
        assert_eq!((sum.input, sum.output, sum.total_tokens), (15, 3, 18));
        assert_eq!(sum.reasoning, Some(1));
        assert_eq!(sum.cache_write_1h, None);
    }
}
