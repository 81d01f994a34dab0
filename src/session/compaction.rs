//! Compaction, the pure part: token estimates, when to compact, where to cut a session path
//! (never between a tool call and its result; a cut inside a turn is a "split turn"), what to
//! summarize, the text form of a conversation the summarizer reads, the prompts, and the
//! read/modified file lists carried from one compaction to the next. The LLM call and the
//! session writes live in `harness::compaction`.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::entry::{
    AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage, Entry,
};
use super::ids::parse_iso_ms;
use super::tree::build_context;
use crate::ai::{Content, Extra, Message, Usage, UserContent};
pub use crate::resources::settings::CompactionSettings;

/// Tool results longer than this (in UTF-16 units, as pi counts) are cut in the summarizer's
/// transcript.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// What an image counts for in the estimate (1200 tokens).
const IMAGE_CHARS: usize = 4800;

/// The length JavaScript's `String#length` reports (UTF-16 code units).
pub fn js_len(s: &str) -> usize {
    s.encode_utf16().count()
}

fn ceil_quarter(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

fn text_and_image_chars(blocks: &[Content]) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            Content::Text(t) => js_len(&t.text),
            Content::Image(_) => IMAGE_CHARS,
            _ => 0,
        })
        .sum()
}

/// Estimated tokens of an LLM message: characters / 4, rounded up.
pub fn estimate_llm_tokens(m: &Message) -> u64 {
    let chars = match m {
        Message::User(u) => match &u.content {
            UserContent::Text(s) => js_len(s),
            // Images in user messages are not counted, as in pi.
            UserContent::Blocks(b) => b
                .iter()
                .map(|c| match c {
                    Content::Text(t) => js_len(&t.text),
                    _ => 0,
                })
                .sum(),
        },
        Message::Assistant(a) => a
            .content
            .iter()
            .map(|c| match c {
                Content::Text(t) => js_len(&t.text),
                Content::Thinking(t) => js_len(&t.thinking),
                Content::ToolCall(tc) => {
                    js_len(&tc.name) + js_len(&super::json::to_js_string(&tc.arguments))
                }
                Content::Image(_) => 0,
            })
            .sum(),
        Message::ToolResult(r) => text_and_image_chars(&r.content),
    };
    ceil_quarter(chars)
}

/// Estimated tokens of a transcript message (pi's `estimateTokens`).
pub fn estimate_tokens(m: &AgentMessage) -> u64 {
    match m {
        AgentMessage::Llm(m) => estimate_llm_tokens(m),
        AgentMessage::Custom(c) => ceil_quarter(match &c.content {
            UserContent::Text(s) => js_len(s),
            UserContent::Blocks(b) => text_and_image_chars(b),
        }),
        AgentMessage::BashExecution(b) => ceil_quarter(js_len(&b.command) + js_len(&b.output)),
        AgentMessage::BranchSummary(b) => ceil_quarter(js_len(&b.summary)),
        AgentMessage::CompactionSummary(c) => ceil_quarter(js_len(&c.summary)),
        AgentMessage::System(m) => ceil_quarter(m.estimated_chars(js_len)),
        AgentMessage::Unknown(_) => 0,
    }
}

/// Context size from a reply's usage: `totalTokens`, else the sum of its parts.
pub fn calculate_context_tokens(u: &Usage) -> u64 {
    if u.total_tokens > 0 {
        u.total_tokens
    } else {
        u.input + u.output + u.cache_read + u.cache_write
    }
}

/// Usage of an assistant reply that has valid usage (not aborted, not an error).
pub fn assistant_usage(m: &Message) -> Option<&Usage> {
    match m {
        Message::Assistant(a)
            if !matches!(
                a.stop_reason,
                crate::ai::StopReason::Aborted | crate::ai::StopReason::Error
            ) =>
        {
            Some(&a.usage)
        }
        _ => None,
    }
}

/// A context-size estimate: the last valid usage plus estimates of what came after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextEstimate {
    pub tokens: u64,
    pub usage_tokens: u64,
    pub trailing_tokens: u64,
    pub last_usage_index: Option<usize>,
}

fn estimate_with<T>(
    messages: &[T],
    usage: impl Fn(&T) -> Option<&Usage>,
    estimate: impl Fn(&T) -> u64,
) -> ContextEstimate {
    let last = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| usage(m).map(|u| (i, calculate_context_tokens(u))));
    match last {
        None => {
            let t = messages.iter().map(&estimate).sum();
            ContextEstimate {
                tokens: t,
                usage_tokens: 0,
                trailing_tokens: t,
                last_usage_index: None,
            }
        }
        Some((i, usage_tokens)) => {
            let trailing: u64 = messages[i + 1..].iter().map(&estimate).sum();
            ContextEstimate {
                tokens: usage_tokens + trailing,
                usage_tokens,
                trailing_tokens: trailing,
                last_usage_index: Some(i),
            }
        }
    }
}

/// pi's `estimateContextTokens` over a transcript. Without any usage to go by, the system
/// messages count once, as the prompt and tools they replay to (1.x), not patch by patch.
pub fn estimate_context_tokens(messages: &[AgentMessage]) -> ContextEstimate {
    let estimate = estimate_with(
        messages,
        |m| match m {
            AgentMessage::Llm(m) => assistant_usage(m),
            _ => None,
        },
        estimate_tokens,
    );
    if estimate.last_usage_index.is_some() {
        return estimate;
    }
    let systems = messages.iter().filter_map(|m| match m {
        AgentMessage::System(s) => Some(s),
        _ => None,
    });
    let current = crate::agent::system_message::SystemState::replay(systems).checkpoint(0);
    let tokens = current.map_or(0, |s| estimate_tokens(&AgentMessage::System(s)))
        + messages
            .iter()
            .filter(|m| !matches!(m, AgentMessage::System(_)))
            .map(estimate_tokens)
            .sum::<u64>();
    ContextEstimate {
        tokens,
        usage_tokens: 0,
        trailing_tokens: tokens,
        last_usage_index: None,
    }
}

/// The same over the agent's live (LLM) messages.
pub fn estimate_llm_context_tokens(messages: &[Message]) -> ContextEstimate {
    estimate_with(messages, assistant_usage, estimate_llm_tokens)
}

/// Whether a context of `tokens` leaves less than `reserve_tokens` free in the window.
pub fn should_compact(tokens: u64, context_window: u64, s: &CompactionSettings) -> bool {
    s.enabled && (tokens as i128) > context_window as i128 - s.reserve_tokens as i128
}

/// Where a compaction cuts: the first entry kept, and for a cut inside a turn, the entry
/// (user message) that started it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    pub first_kept_entry_index: usize,
    pub turn_start_index: Option<usize>,
    pub is_split_turn: bool,
}

fn role_of(e: &Entry) -> Option<&str> {
    e.message().map(AgentMessage::role)
}

/// Entries a compaction may keep from: any message but a tool result, plus branch summaries
/// and extension messages (both user-side).
fn is_valid_cut_point(e: &Entry) -> bool {
    match e {
        Entry::Message(_) => matches!(
            role_of(e),
            Some(
                "user"
                    | "assistant"
                    | "bashExecution"
                    | "custom"
                    | "branchSummary"
                    | "compactionSummary"
            )
        ),
        Entry::BranchSummary(_) | Entry::CustomMessage(_) => true,
        _ => false,
    }
}

/// The entry that opened the turn containing `index`: a user message, a bash run, a branch
/// summary or an extension message, searching back to `start`.
pub fn find_turn_start_index(entries: &[&Entry], index: usize, start: usize) -> Option<usize> {
    (start..=index).rev().find(|&i| match entries[i] {
        Entry::BranchSummary(_) | Entry::CustomMessage(_) => true,
        e @ Entry::Message(_) => matches!(role_of(e), Some("user" | "bashExecution")),
        _ => false,
    })
}

/// Finds where to cut `entries[start..end]` so that about `keep_recent_tokens` of the newest
/// messages are kept (pi's `findCutPoint`).
pub fn find_cut_point(
    entries: &[&Entry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    let cut_points: Vec<usize> = (start..end)
        .filter(|&i| is_valid_cut_point(entries[i]))
        .collect();
    let Some(&first) = cut_points.first() else {
        return CutPoint {
            first_kept_entry_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };
    let mut cut = first;
    let mut acc = 0u64;
    for i in (start..end).rev() {
        let Some(m) = entries[i].message() else {
            continue;
        };
        acc += estimate_tokens(m);
        if acc >= keep_recent_tokens {
            if let Some(&c) = cut_points.iter().find(|&&c| c >= i) {
                cut = c;
            }
            break;
        }
    }
    // Keep the settings changes and other non-message entries just before the cut.
    while cut > start {
        let prev = entries[cut - 1];
        if matches!(prev, Entry::Compaction(_) | Entry::Message(_)) {
            break;
        }
        cut -= 1;
    }
    let is_user = role_of(entries[cut]) == Some("user");
    let turn_start = if is_user {
        None
    } else {
        find_turn_start_index(entries, cut, start)
    };
    CutPoint {
        first_kept_entry_index: cut,
        turn_start_index: turn_start,
        is_split_turn: !is_user && turn_start.is_some(),
    }
}

/// Files touched by `read`, `write` and `edit` tool calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOps {
    pub read: BTreeSet<String>,
    pub written: BTreeSet<String>,
    pub edited: BTreeSet<String>,
}

impl FileOps {
    /// Adds the files of an earlier (pi-generated) summary's `details`.
    pub fn add_details(&mut self, details: Option<&Value>) {
        let list = |k: &str| {
            details
                .and_then(|d| d.get(k))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        self.read.extend(list("readFiles"));
        self.edited.extend(list("modifiedFiles"));
    }

    /// Adds the files of an assistant message's tool calls.
    pub fn add_message(&mut self, m: &AgentMessage) {
        let AgentMessage::Llm(Message::Assistant(a)) = m else {
            return;
        };
        for tc in a.tool_calls() {
            let Some(path) = tc.arguments.get("path").and_then(Value::as_str) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            let set = match tc.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            set.insert(path.to_string());
        }
    }

    /// `(readFiles, modifiedFiles)`: modified = written ∪ edited; read excludes modified;
    /// both sorted.
    pub fn lists(&self) -> (Vec<String>, Vec<String>) {
        // `union` walks both sorted sets in order, so no sort is needed (collecting into a
        // `BTreeSet` would compile one more copy of the standard sort).
        let modified = self.written.union(&self.edited).cloned().collect();
        let read = self
            .read
            .iter()
            .filter(|f| !self.written.contains(*f) && !self.edited.contains(*f))
            .cloned()
            .collect();
        (read, modified)
    }

    /// The `details` object a compaction or branch summary stores.
    pub fn details(&self) -> Value {
        let (read, modified) = self.lists();
        json!({"readFiles": read, "modifiedFiles": modified})
    }
}

/// The `<read-files>` / `<modified-files>` blocks appended to a summary ("" if none).
pub fn format_file_operations(read: &[String], modified: &[String]) -> String {
    let mut sections = Vec::new();
    if !read.is_empty() {
        sections.push(format!("<read-files>\n{}\n</read-files>", read.join("\n")));
    }
    if !modified.is_empty() {
        sections.push(format!(
            "<modified-files>\n{}\n</modified-files>",
            modified.join("\n")
        ));
    }
    if sections.is_empty() {
        String::new()
    } else {
        format!("\n\n{}", sections.join("\n\n"))
    }
}

fn entry_ms(iso: &str) -> i64 {
    parse_iso_ms(iso).unwrap_or(0)
}

/// The transcript message an entry contributes, compaction summaries included.
pub fn message_of_entry(e: &Entry) -> Option<AgentMessage> {
    match e {
        Entry::Message(m) => Some(m.message.clone()),
        Entry::CustomMessage(c) => Some(AgentMessage::Custom(CustomMessage {
            custom_type: c.custom_type.clone(),
            content: c.content.clone(),
            display: c.display,
            details: c.details.clone(),
            timestamp: entry_ms(&c.timestamp),
            extra: Extra::new(),
        })),
        Entry::BranchSummary(b) => Some(AgentMessage::BranchSummary(BranchSummaryMessage {
            summary: b.summary.clone(),
            from_id: b.from_id.clone(),
            timestamp: entry_ms(&b.timestamp),
            extra: Extra::new(),
        })),
        Entry::Compaction(c) => Some(AgentMessage::CompactionSummary(CompactionSummaryMessage {
            summary: c.summary.clone(),
            tokens_before: c.tokens_before,
            timestamp: entry_ms(&c.timestamp),
            extra: Extra::new(),
        })),
        _ => None,
    }
}

/// Everything a compaction needs, computed from the session path alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Preparation {
    pub first_kept_entry_id: String,
    /// History before the cut (or before the split turn), to be replaced by the summary.
    pub messages_to_summarize: Vec<AgentMessage>,
    /// The dropped start of a split turn.
    pub turn_prefix_messages: Vec<AgentMessage>,
    pub is_split_turn: bool,
    pub tokens_before: u64,
    pub previous_summary: Option<String>,
    pub file_ops: FileOps,
    pub settings: CompactionSettings,
}

/// pi's `prepareCompaction` over a root→leaf path. `None` when the path already ends in a
/// compaction, or the cut entry has no id.
pub fn prepare_compaction(path: &[&Entry], settings: &CompactionSettings) -> Option<Preparation> {
    if matches!(path.last(), Some(Entry::Compaction(_))) {
        return None;
    }
    let prev = path.iter().rposition(|e| matches!(e, Entry::Compaction(_)));
    let mut previous_summary = None;
    let mut boundary_start = 0;
    let mut file_ops = FileOps::default();
    if let Some(pi) = prev {
        let Entry::Compaction(c) = path[pi] else {
            unreachable!()
        };
        previous_summary = Some(c.summary.clone());
        boundary_start = path
            .iter()
            .position(|e| Some(e.id()) == c.first_kept_entry_id.as_deref())
            .unwrap_or(pi + 1);
        if c.from_hook != Some(true) {
            file_ops.add_details(c.details.as_ref());
        }
    }
    let owned: Vec<Entry> = path.iter().map(|e| (*e).clone()).collect();
    let leaf = owned.last().map(|e| e.id().to_string());
    let tokens_before =
        estimate_context_tokens(&build_context(&owned, leaf.as_deref()).messages).tokens;
    let cut = find_cut_point(
        path,
        boundary_start,
        path.len(),
        settings.keep_recent_tokens,
    );
    let first_kept = path.get(cut.first_kept_entry_index)?.id();
    if first_kept.is_empty() {
        return None;
    }
    let history_end = match (cut.is_split_turn, cut.turn_start_index) {
        (true, Some(t)) => t,
        _ => cut.first_kept_entry_index,
    };
    let for_summary = |range: std::ops::Range<usize>| -> Vec<AgentMessage> {
        path[range]
            .iter()
            .filter(|e| !matches!(e, Entry::Compaction(_)))
            .filter_map(|e| message_of_entry(e))
            // pi 1.x: system messages are prompt state, not conversation; the compaction
            // entry carries their replay.
            .filter(|m| !matches!(m, AgentMessage::System(_)))
            .collect()
    };
    let messages_to_summarize = for_summary(boundary_start..history_end.max(boundary_start));
    let turn_prefix_messages = if cut.is_split_turn {
        for_summary(history_end..cut.first_kept_entry_index)
    } else {
        Vec::new()
    };
    for m in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.add_message(m);
    }
    Some(Preparation {
        first_kept_entry_id: first_kept.to_string(),
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_ops,
        settings: *settings,
    })
}

/// Cuts `text` to `max` UTF-16 units and says how much was left out.
fn truncate_for_summary(text: &str, max: usize) -> String {
    let len = js_len(text);
    if len <= max {
        return text.to_string();
    }
    let mut units = 0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        if units + c.len_utf16() > max {
            break;
        }
        units += c.len_utf16();
        end = i + c.len_utf8();
    }
    format!(
        "{}\n\n[... {} more characters truncated]",
        &text[..end],
        len - max
    )
}

/// The conversation as labelled plain text, so the summarizer reads it instead of continuing
/// it. Call on `to_llm_messages` output.
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut parts = Vec::new();
    for m in messages {
        match m {
            Message::User(u) => {
                let text = match &u.content {
                    UserContent::Text(s) => s.clone(),
                    UserContent::Blocks(b) => b
                        .iter()
                        .filter_map(|c| match c {
                            Content::Text(t) => Some(t.text.as_str()),
                            _ => None,
                        })
                        .collect(),
                };
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Message::Assistant(a) => {
                // pi 1.6.0 leaves thinking out: the summary records what was said and done.
                let mut texts = Vec::new();
                let mut calls = Vec::new();
                for c in &a.content {
                    match c {
                        Content::Text(t) => texts.push(t.text.as_str()),
                        Content::Thinking(_) => {}
                        Content::ToolCall(tc) => {
                            let args = match &tc.arguments {
                                Value::Object(o) => o
                                    .iter()
                                    .map(|(k, v)| format!("{k}={}", super::json::to_js_string(v)))
                                    .collect::<Vec<_>>()
                                    .join(", "),
                                _ => String::new(),
                            };
                            calls.push(format!("{}({args})", tc.name));
                        }
                        Content::Image(_) => {}
                    }
                }
                if !texts.is_empty() {
                    parts.push(format!("[Assistant]: {}", texts.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Message::ToolResult(r) => {
                let text: String = r
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        Content::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                if !text.is_empty() {
                    parts.push(format!(
                        "[Tool result]: {}",
                        truncate_for_summary(&text, TOOL_RESULT_MAX_CHARS)
                    ));
                }
            }
        }
    }
    parts.join("\n\n")
}

/// System prompt of every summarization call.
pub const SUMMARIZATION_SYSTEM_PROMPT: &str = "You write context checkpoints. You are given a \
transcript of a session between a user and an AI coding assistant; condense it into the \
structured summary the instructions describe.\n\nThe transcript is material to summarize, not a \
conversation you are part of: do not answer its questions or carry on its work. Reply with the \
summary and nothing else.";

const SECTIONS_HINT: &str = "Keep every section short. Quote file paths, function names and \
error messages exactly as they appear.";

/// Instructions for a first summary.
pub const SUMMARY_PROMPT: &str = "Above, inside <conversation>, is the session so far. Write a \
checkpoint summary of it from which another model can pick the work up.

Follow exactly this layout:

## Goal
[What the user wants done; list several goals if the session moved between tasks.]

## Constraints & Preferences
- [Requirements, limits or preferences the user stated]
- [\"(none)\" when there are none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [What is being worked on now]

### Blocked
- [Anything stopping progress, if there is something]

## Key Decisions
- **[Decision]**: [Why, in a few words]

## Next Steps
1. [What to do next, in order]

## Critical Context
- [Data, examples or references the next model will need]
- [\"(none)\" when nothing applies]

";

/// Instructions for folding new messages into an earlier summary.
pub const UPDATE_SUMMARY_PROMPT: &str = "Above, inside <conversation>, are the messages that \
came AFTER the checkpoint given in <previous-summary>. Produce the updated checkpoint.

Rules:
- Keep everything the previous summary records unless it no longer matters
- Add the new progress, decisions and context
- Move tasks that are now finished from \"In Progress\" to \"Done\"
- Rewrite \"Next Steps\" to match where the work stands now
- Keep file paths, function names and error messages verbatim

Follow exactly this layout:

## Goal
[Earlier goals, plus any new ones]

## Constraints & Preferences
- [Earlier ones, plus any newly stated]

## Progress
### Done
- [x] [Items done before and items finished since]

### In Progress
- [ ] [Current work, as it stands now]

### Blocked
- [Blockers that still apply]

## Key Decisions
- **[Decision]**: [Why, in a few words] (keep earlier decisions too)

## Next Steps
1. [What to do next, given the current state]

## Critical Context
- [Important context, old and new]

";

/// Instructions for the dropped start of a split turn.
pub const TURN_PREFIX_PROMPT: &str = "Above, inside <conversation>, is the FIRST PART of a turn \
that no longer fits in context. Its later part is kept and follows your summary.

Summarize this first part so the kept part makes sense:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions made and work done in this part]

## Context for Suffix
- [What the reader needs to understand the kept later part]

Stay brief; cover only what the kept part depends on.";

/// Instructions for summarizing a branch the user navigated away from.
pub const BRANCH_SUMMARY_PROMPT: &str = "Above, inside <conversation>, is a branch of the \
session that the user is leaving. Summarize it so the work can be recalled later.

Follow exactly this layout:

## Goal
[What the user was trying to do on this branch]

## Constraints & Preferences
- [Requirements, limits or preferences stated]
- [\"(none)\" when there are none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work started but not finished]

### Blocked
- [Anything stopping progress, if there is something]

## Key Decisions
- **[Decision]**: [Why, in a few words]

## Next Steps
1. [What to do to carry this work on]

";

/// Put before a branch summary's text.
pub const BRANCH_SUMMARY_PREAMBLE: &str =
    "The user worked on another branch of this conversation and then came back here.\nWhat happened on that branch:\n\n";

fn with_hint(base: &str) -> String {
    format!("{base}{SECTIONS_HINT}")
}

fn conversation_block(conversation: &str) -> String {
    format!("<conversation>\n{conversation}\n</conversation>\n\n")
}

/// The user text of a history summary request.
pub fn history_summary_request(
    conversation: &str,
    previous_summary: Option<&str>,
    custom_instructions: Option<&str>,
) -> String {
    let mut base = with_hint(if previous_summary.is_some() {
        UPDATE_SUMMARY_PROMPT
    } else {
        SUMMARY_PROMPT
    });
    if let Some(ci) = custom_instructions.filter(|c| !c.is_empty()) {
        base = format!("{base}\n\nAdditional focus: {ci}");
    }
    let mut text = conversation_block(conversation);
    if let Some(prev) = previous_summary {
        text.push_str(&format!(
            "<previous-summary>\n{prev}\n</previous-summary>\n\n"
        ));
    }
    text.push_str(&base);
    text
}

/// The user text of a turn-prefix summary request.
pub fn turn_prefix_request(conversation: &str) -> String {
    format!("{}{TURN_PREFIX_PROMPT}", conversation_block(conversation))
}

/// The user text of a branch summary request; `replace` makes custom instructions the whole
/// instruction part.
pub fn branch_summary_request(
    conversation: &str,
    custom_instructions: Option<&str>,
    replace: bool,
) -> String {
    let instructions = match custom_instructions.filter(|c| !c.is_empty()) {
        Some(ci) if replace => ci.to_string(),
        Some(ci) => format!(
            "{}\n\nAdditional focus: {ci}",
            with_hint(BRANCH_SUMMARY_PROMPT)
        ),
        None => with_hint(BRANCH_SUMMARY_PROMPT),
    };
    format!("{}{instructions}", conversation_block(conversation))
}

/// Joins the history summary and the turn-prefix summary of a split turn.
pub fn join_split_turn(history: &str, turn_prefix: &str) -> String {
    format!("{history}\n\n---\n\n**Turn Context (split turn):**\n\n{turn_prefix}")
}

/// The latest compaction entry on a path.
pub fn latest_compaction<'a>(path: &[&'a Entry]) -> Option<&'a super::entry::CompactionEntry> {
    path.iter().rev().find_map(|e| match e {
        Entry::Compaction(c) => Some(c),
        _ => None,
    })
}
