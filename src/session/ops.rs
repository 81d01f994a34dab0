//! Session-level operations behind pi's tree commands (RPC `fork`, `get_fork_messages`,
//! `clone`, `set_session_name`, `get_session_stats`, `get_last_assistant_text`, labels):
//! pure functions over a `SessionWriter`, with pi's semantics and error strings.

use super::error::SessionOpError;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::entry::{AgentMessage, Entry, LabelEntry};
use super::store::SessionWriter;
use crate::ai::{AssistantMessage, Content, Extra, Message, StopReason, UserContent};

/// The text of a user message: a string as is, else its text blocks joined without separator.
pub fn user_content_text(content: &UserContent) -> String {
    match content {
        UserContent::Text(s) => s.clone(),
        UserContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                Content::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect(),
    }
}

/// pi's `get_fork_messages`: every user message of the session (all branches, file order)
/// with non-empty text, as `(entryId, text)`.
pub fn user_messages_for_fork(w: &SessionWriter) -> Vec<(String, String)> {
    w.entries()
        .iter()
        .filter_map(|e| match e.message() {
            Some(AgentMessage::Llm(Message::User(u))) => {
                let text = user_content_text(&u.content);
                (!text.is_empty()).then(|| (e.id().to_string(), text))
            }
            _ => None,
        })
        .collect()
}

/// The live labels in pi's order (a JS `Map`: re-setting keeps the slot, clearing removes it),
/// each with the timestamp of the label entry that set it.
fn labels_in_order(entries: &[Entry]) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    for e in entries {
        let Entry::Label(l) = e else { continue };
        let pos = out.iter().position(|(t, _, _)| *t == l.target_id);
        match (l.label.as_deref().filter(|s| !s.is_empty()), pos) {
            (Some(label), Some(i)) => {
                out[i].1 = label.to_string();
                out[i].2 = l.timestamp.clone();
            }
            (Some(label), None) => {
                out.push((l.target_id.clone(), label.to_string(), l.timestamp.clone()))
            }
            (None, Some(i)) => {
                out.remove(i);
            }
            (None, None) => {}
        }
    }
    out
}

/// pi's `createBranchedSession(leafId)`: a new session (in `session_dir`, or in memory when
/// the source is) holding root → `leaf` without label entries, followed by fresh label entries
/// re-creating the labels of the copied entries. It is written at once if it contains an
/// assistant message, otherwise on the first assistant message as usual.
pub fn branched_session(
    w: &SessionWriter,
    leaf: &str,
    session_dir: &Path,
) -> Result<SessionWriter, SessionOpError> {
    let tree = w.tree();
    let path = tree.path(leaf);
    if path.is_empty() {
        return Err(SessionOpError::EntryNotFound(leaf.to_string()));
    }
    let cwd = w.header().cwd.clone();
    let mut out = match w.path() {
        Some(src) => {
            SessionWriter::create(session_dir, &cwd, Some(src.to_string_lossy().into_owned()))
        }
        None => SessionWriter::in_memory(&cwd),
    };
    let kept: Vec<&Entry> = path
        .into_iter()
        .filter(|e| !matches!(e, Entry::Label(_)))
        .collect();
    // Entries are copied byte for byte, as pi copies them. An entry whose parent was a dropped
    // label would point at a missing id and cut the branch short on load, so that one is
    // re-linked to the previous kept entry (its other fields untouched).
    let mut prev: Option<&str> = None;
    for e in &kept {
        let line = w.line_of(e.id()).unwrap_or_else(|| e.to_line());
        let line = match e.parent_id() {
            Some(p) if prev != Some(p) && !kept.iter().any(|k| k.id() == p) => {
                let mut v: Value =
                    super::lines::parse_json(line.as_bytes()).unwrap_or_else(|_| e.to_value());
                v["parentId"] = prev.map_or(Value::Null, |p| Value::String(p.into()));
                super::json::to_js_string(&v)
            }
            _ => line,
        };
        out.append_line(line)?;
        prev = Some(e.id());
    }
    for (target, label, timestamp) in labels_in_order(w.entries()) {
        if !kept.iter().any(|e| e.id() == target) {
            continue;
        }
        let e = Entry::Label(LabelEntry {
            id: out.new_id(),
            parent_id: out.leaf_id().map(str::to_string),
            timestamp,
            target_id: target,
            label: Some(label),
            extra: Extra::new(),
        });
        out.append(e)?;
    }
    Ok(out)
}

/// pi's `fork(entryId)` (position "before"): a new session with everything before the user
/// message `entry_id`, plus that message's text (for the editor). Forking at the first
/// message gives an empty session whose header still names the source as `parentSession`.
pub fn fork_at(
    w: &SessionWriter,
    entry_id: &str,
    session_dir: &Path,
) -> Result<(SessionWriter, String), SessionOpError> {
    let entry = w
        .tree()
        .get(entry_id)
        .ok_or(SessionOpError::NotAUserMessage)?;
    let Some(AgentMessage::Llm(Message::User(u))) = entry.message() else {
        return Err(SessionOpError::NotAUserMessage);
    };
    let text = user_content_text(&u.content);
    let new = match entry.parent_id() {
        Some(parent) => branched_session(w, parent, session_dir)?,
        None => match w.path() {
            Some(src) => SessionWriter::create(
                session_dir,
                &w.header().cwd,
                Some(src.to_string_lossy().into_owned()),
            ),
            None => SessionWriter::in_memory(&w.header().cwd),
        },
    };
    Ok((new, text))
}

/// pi's `clone`: a new session holding the active branch (root → leaf).
pub fn clone_branch(
    w: &SessionWriter,
    session_dir: &Path,
) -> Result<SessionWriter, SessionOpError> {
    let leaf = w.leaf_id().ok_or(SessionOpError::NoCurrentEntry)?;
    branched_session(w, leaf, session_dir)
}

/// pi's `set_session_name`: appends a `session_info` entry with the trimmed name.
pub fn set_name(w: &mut SessionWriter, name: &str) -> Result<String, SessionOpError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(SessionOpError::EmptyName);
    }
    Ok(w.append_session_info(name)?)
}

/// Sets (`Some`) or clears (`None`/empty) the label of `target_id` with a `label` entry.
pub fn set_label(
    w: &mut SessionWriter,
    target_id: &str,
    label: Option<&str>,
) -> Result<String, SessionOpError> {
    let label = label.filter(|l| !l.is_empty());
    Ok(w.append_label(target_id, label)?)
}

/// pi's `getLastAssistantText`: the text of the last assistant reply in context, trimmed;
/// `None` when there is none or it is empty. Which messages count is [`counts_as_reply`].
pub fn last_assistant_text(w: &SessionWriter) -> Option<String> {
    last_reply_text_of(&mut |each| w.for_each_context_message(each))
}

/// A source of messages: calls its argument with each message in turn.
pub type EachMessage<'a> = &'a mut dyn FnMut(&mut dyn FnMut(AgentMessage));

/// [`last_reply_text`] of the messages `messages` gives, one at a time (only the last reply
/// is kept, not the conversation).
pub fn last_reply_text_of(messages: EachMessage<'_>) -> Option<String> {
    let mut last = None;
    messages(&mut |m| {
        if let AgentMessage::Llm(Message::Assistant(a)) = m {
            if counts_as_reply(&a) {
                last = Some(AgentMessage::Llm(Message::Assistant(a)));
            }
        }
    });
    last_reply_text(std::slice::from_ref(&last?))
}

/// The trimmed text of the last message in `messages` that [`counts_as_reply`], if any text.
pub fn last_reply_text(messages: &[AgentMessage]) -> Option<String> {
    let last = messages.iter().rev().find_map(|m| match m {
        AgentMessage::Llm(Message::Assistant(a)) if counts_as_reply(a) => Some(a),
        _ => None,
    })?;
    let text: String = last
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// pi 1.6.0 (#12119): an assistant message from a turn that did not end normally (aborted,
/// failed, or only calling tools) counts as the last reply only when it has some text; one
/// that ended normally counts even without text. `/copy` and `get_last_assistant_text` then
/// find the previous answer after an Esc during a tool call or a provider error.
pub fn counts_as_reply(a: &AssistantMessage) -> bool {
    a.stop_reason == StopReason::Stop
        || a.content
            .iter()
            .any(|c| matches!(c, Content::Text(t) if !t.text.trim().is_empty()))
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TokenTotals {
    pub input: u64,
    pub output: u64,
    #[serde(rename = "cacheRead")]
    pub cache_read: u64,
    #[serde(rename = "cacheWrite")]
    pub cache_write: u64,
    pub total: u64,
}

/// `contextUsage` of `get_session_stats`: `tokens`/`percent` are `null` right after a
/// compaction, until an assistant answers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ContextUsage {
    pub tokens: Option<u64>,
    #[serde(rename = "contextWindow")]
    pub context_window: u64,
    pub percent: Option<f64>,
}

/// pi's `get_session_stats` data. Serialize with `session::json::to_js_string` for pi's
/// number formatting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionStats {
    #[serde(rename = "sessionFile", skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    #[serde(rename = "sessionId")]
    pub session_id: String,
    #[serde(rename = "userMessages")]
    pub user_messages: usize,
    #[serde(rename = "assistantMessages")]
    pub assistant_messages: usize,
    #[serde(rename = "toolCalls")]
    pub tool_calls: usize,
    #[serde(rename = "toolResults")]
    pub tool_results: usize,
    #[serde(rename = "totalMessages")]
    pub total_messages: usize,
    pub tokens: TokenTotals,
    pub cost: f64,
    #[serde(rename = "contextUsage", skip_serializing_if = "Option::is_none")]
    pub context_usage: Option<ContextUsage>,
}

/// JavaScript `string.length`.
fn js_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// pi's chars/4 token estimate of one message (`estimateTokens`).
pub fn estimate_tokens(m: &AgentMessage) -> u64 {
    let blocks_chars = |blocks: &[Content], images: bool| -> usize {
        blocks
            .iter()
            .map(|b| match b {
                Content::Text(t) => js_len(&t.text),
                Content::Image(_) if images => 4800,
                _ => 0,
            })
            .sum()
    };
    let content_chars = |c: &UserContent, images: bool| match c {
        UserContent::Text(s) => js_len(s),
        UserContent::Blocks(b) => blocks_chars(b, images),
    };
    let chars = match m {
        AgentMessage::Llm(Message::User(u)) => content_chars(&u.content, false),
        AgentMessage::Llm(Message::Assistant(a)) => a
            .content
            .iter()
            .map(|b| match b {
                Content::Text(t) => js_len(&t.text),
                Content::Thinking(t) => js_len(&t.thinking),
                Content::ToolCall(c) => {
                    js_len(&c.name) + js_len(&super::json::to_js_string(&c.arguments))
                }
                Content::Image(_) => 0,
            })
            .sum(),
        AgentMessage::Llm(Message::ToolResult(r)) => blocks_chars(&r.content, true),
        AgentMessage::Custom(c) => content_chars(&c.content, true),
        AgentMessage::BashExecution(b) => js_len(&b.command) + js_len(&b.output),
        AgentMessage::BranchSummary(b) => js_len(&b.summary),
        AgentMessage::CompactionSummary(c) => js_len(&c.summary),
        AgentMessage::System(m) => m.estimated_chars(js_len),
        AgentMessage::Unknown(_) => 0,
    };
    (chars as u64).div_ceil(4)
}

/// The usage of an assistant message that counts (not aborted, not an error).
fn valid_usage(m: &AgentMessage) -> Option<&crate::ai::Usage> {
    match m {
        AgentMessage::Llm(Message::Assistant(a))
            if !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error) =>
        {
            Some(&a.usage)
        }
        _ => None,
    }
}

fn context_tokens(u: &crate::ai::Usage) -> u64 {
    if u.total_tokens > 0 {
        u.total_tokens
    } else {
        u.input + u.output + u.cache_read + u.cache_write
    }
}

/// pi's `estimateContextTokens`: the last valid assistant usage plus estimates for what follows.
pub fn estimate_context_tokens(messages: &[AgentMessage]) -> u64 {
    match messages.iter().rposition(|m| valid_usage(m).is_some()) {
        Some(i) => {
            let usage = valid_usage(&messages[i]).map(context_tokens).unwrap_or(0);
            usage + messages[i + 1..].iter().map(estimate_tokens).sum::<u64>()
        }
        None => messages.iter().map(estimate_tokens).sum(),
    }
}

/// pi's `getContextUsage` for a model with `context_window` tokens (0: unknown → `None`).
pub fn context_usage(w: &SessionWriter, context_window: u64) -> Option<ContextUsage> {
    if context_window == 0 {
        return None;
    }
    let branch = w.leaf_id().map(|l| w.tree().path(l)).unwrap_or_default();
    if let Some(ci) = branch
        .iter()
        .rposition(|e| matches!(e, Entry::Compaction(_)))
    {
        let after = branch[ci + 1..]
            .iter()
            .rev()
            .find_map(|e| e.message().and_then(valid_usage));
        if after.is_none_or(|u| context_tokens(u) == 0) {
            return Some(ContextUsage {
                tokens: None,
                context_window,
                percent: None,
            });
        }
    }
    let tokens = estimate_context_tokens(&w.build_context().messages);
    Some(ContextUsage {
        tokens: Some(tokens),
        context_window,
        percent: Some(tokens as f64 / context_window as f64 * 100.0),
    })
}

/// Adds a usage object as pi 1.x's `addUsageToTotals` does (missing numbers count as 0).
fn add_usage(tokens: &mut TokenTotals, cost: &mut f64, usage: Option<&Value>) {
    let Some(u) = usage else { return };
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    tokens.input += n("input");
    tokens.output += n("output");
    tokens.cache_read += n("cacheRead");
    tokens.cache_write += n("cacheWrite");
    *cost += u
        .pointer("/cost/total")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
}

/// pi 1.x's `getSessionStats`: every message entry of the file (all branches, system
/// checkpoints included) is counted, and the tokens and cost add up every usage the session
/// recorded — replies, tool results, compaction and branch summaries, `usage` entries.
pub fn stats(w: &SessionWriter, context_window: u64) -> SessionStats {
    let mut tokens = TokenTotals::default();
    let mut cost = 0.0;
    let (mut user, mut assistant, mut tool_calls, mut tool_results, mut total) = (0, 0, 0, 0, 0);
    for entry in w.entries() {
        match entry {
            Entry::Message(e) => {
                total += 1;
                match &e.message {
                    AgentMessage::Llm(Message::User(_)) => user += 1,
                    AgentMessage::Llm(Message::Assistant(a)) => {
                        assistant += 1;
                        tool_calls += a
                            .content
                            .iter()
                            .filter(|c| matches!(c, Content::ToolCall(_)))
                            .count();
                        let usage = serde_json::to_value(a.usage).ok();
                        add_usage(&mut tokens, &mut cost, usage.as_ref());
                    }
                    AgentMessage::Llm(Message::ToolResult(r)) => {
                        tool_results += 1;
                        add_usage(&mut tokens, &mut cost, r.extra.get("usage"));
                    }
                    _ => {}
                }
            }
            Entry::Compaction(c) => add_usage(&mut tokens, &mut cost, c.usage.as_ref()),
            Entry::BranchSummary(b) => add_usage(&mut tokens, &mut cost, b.extra.get("usage")),
            Entry::Unknown(v) if entry.kind() == "usage" => {
                add_usage(&mut tokens, &mut cost, v.get("usage"))
            }
            _ => {}
        }
    }
    tokens.total = tokens.input + tokens.output + tokens.cache_read + tokens.cache_write;
    SessionStats {
        session_file: w.path().map(|p| p.to_string_lossy().into_owned()),
        session_id: w.session_id().to_string(),
        user_messages: user,
        assistant_messages: assistant,
        tool_calls,
        tool_results,
        total_messages: total,
        tokens,
        cost,
        context_usage: context_usage(w, context_window),
    }
}
