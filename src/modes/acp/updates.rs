//! What the editor sees of a conversation: pi's agent events and stored messages translated
//! into ACP `session/update` payloads. [`replay`] is a pure translation of a session's
//! messages (for `session/load`); [`LiveTranslator`] follows a run's events, and keeps the one
//! piece of state a run needs: each file an `edit` or `write` is about to change, as it was
//! before, so the result can be shown as a diff of the whole file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::agent::AgentEvent;
use crate::ai::{AssistantEvent, Content, Message, StopReason, UserContent};
use crate::session::AgentMessage;

/// Files larger than this are not read for a diff (the tool's own text result is shown).
const DIFF_LIMIT: u64 = 2 * 1024 * 1024;

/// ACP's tool kind for one of our tools.
pub fn tool_kind(name: &str) -> &'static str {
    match name {
        "read" => "read",
        "edit" | "write" => "edit",
        "bash" => "execute",
        "grep" | "find" | "ls" | "tool_search" => "search",
        _ => "other",
    }
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// The title an editor shows for a tool call: the tool and what it works on.
pub fn tool_title(name: &str, args: &Value) -> String {
    let subject = match name {
        "bash" => str_arg(args, "command").map(|c| c.lines().next().unwrap_or("").to_string()),
        "grep" | "find" => str_arg(args, "pattern").map(|p| match str_arg(args, "path") {
            Some(path) => format!("{p} in {path}"),
            None => p.to_string(),
        }),
        _ => str_arg(args, "path").map(str::to_string),
    };
    match subject {
        Some(s) if !s.is_empty() => format!("{name} {s}"),
        _ => name.to_string(),
    }
}

fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// The files a tool call touches, for the editor to follow.
pub fn tool_locations(name: &str, args: &Value, cwd: &Path) -> Vec<Value> {
    let path = match name {
        "read" | "edit" | "write" | "ls" | "grep" | "find" => str_arg(args, "path"),
        _ => None,
    };
    match path {
        Some(p) => {
            let mut loc = json!({"path": absolute(cwd, p).to_string_lossy()});
            if let Some(line) = args.get("offset").and_then(Value::as_u64) {
                loc["line"] = json!(line);
            }
            vec![loc]
        }
        None => Vec::new(),
    }
}

fn tool_call(id: &str, name: &str, args: &Value, cwd: &Path, status: &str) -> Value {
    let mut call = json!({
        "sessionUpdate": "tool_call",
        "toolCallId": id,
        "title": tool_title(name, args),
        "kind": tool_kind(name),
        "status": status,
        "rawInput": args,
    });
    let locations = tool_locations(name, args, cwd);
    if !locations.is_empty() {
        call["locations"] = json!(locations);
    }
    call
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// `{type: "content", content: text}`: tool output as an editor shows plain text.
fn text_content(text: &str) -> Value {
    json!({"type": "content", "content": text_block(text)})
}

/// `{type: "terminal", terminalId}`: the editor's terminal a command runs in.
fn terminal_content(terminal_id: &str) -> Value {
    json!({"type": "terminal", "terminalId": terminal_id})
}

/// The text of a tool result (`{content: [...]}` as the tool returned it).
fn result_text(result: &Value) -> String {
    let blocks = result.get("content").and_then(Value::as_array);
    let texts: Vec<&str> = blocks
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    texts.join("\n")
}

/// Diff content from the edit's own arguments (replay: the file as it was is not kept).
fn diffs_from_args(name: &str, args: &Value, cwd: &Path) -> Vec<Value> {
    let Some(path) = str_arg(args, "path") else {
        return Vec::new();
    };
    let path = absolute(cwd, path).to_string_lossy().into_owned();
    match name {
        "write" => vec![json!({"type": "diff", "path": path, "oldText": null,
            "newText": str_arg(args, "content").unwrap_or("")})],
        "edit" => {
            let single = [json!({"oldText": args.get("oldText"), "newText": args.get("newText")})];
            let edits = match args.get("edits").and_then(Value::as_array) {
                Some(list) => list.as_slice(),
                None if args.get("oldText").is_some() => &single[..],
                None => &[],
            };
            edits
                .iter()
                .map(|e| {
                    json!({"type": "diff", "path": path,
                        "oldText": e.get("oldText").and_then(Value::as_str).unwrap_or(""),
                        "newText": e.get("newText").and_then(Value::as_str).unwrap_or("")})
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

fn tool_update(id: &str, is_error: bool, content: Vec<Value>, raw: Option<&Value>) -> Value {
    let mut u = json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": id,
        "status": if is_error { "failed" } else { "completed" },
        "content": content,
    });
    if let Some(raw) = raw {
        u["rawOutput"] = raw.clone();
    }
    u
}

fn user_chunks(content: &UserContent) -> Vec<Value> {
    let blocks: Vec<Value> = match content {
        UserContent::Text(t) => vec![text_block(t)],
        UserContent::Blocks(list) => list.iter().filter_map(content_block).collect(),
    };
    blocks
        .into_iter()
        .map(|b| json!({"sessionUpdate": "user_message_chunk", "content": b}))
        .collect()
}

fn content_block(c: &Content) -> Option<Value> {
    match c {
        Content::Text(t) => Some(text_block(&t.text)),
        Content::Image(i) => {
            Some(json!({"type": "image", "data": i.data, "mimeType": i.mime_type}))
        }
        _ => None,
    }
}

/// The whole conversation of a session as the `session/update`s a client would have seen,
/// in order: user text and images, thoughts, answers, tool calls and their results. Pure.
pub fn replay(messages: &[AgentMessage], cwd: &Path) -> Vec<Value> {
    let mut updates = Vec::new();
    let mut calls: HashMap<String, (String, Value)> = HashMap::new();
    for m in messages {
        let AgentMessage::Llm(m) = m else { continue };
        match m {
            Message::User(u) => updates.extend(user_chunks(&u.content)),
            Message::Assistant(a) => {
                for c in &a.content {
                    match c {
                        Content::Text(t) if !t.text.is_empty() => updates.push(json!({
                            "sessionUpdate": "agent_message_chunk", "content": text_block(&t.text)})),
                        Content::Thinking(t) if !t.thinking.is_empty() => updates.push(json!({
                            "sessionUpdate": "agent_thought_chunk", "content": text_block(&t.thinking)})),
                        Content::ToolCall(call) => {
                            updates.push(tool_call(&call.id, &call.name, &call.arguments, cwd, "pending"));
                            calls.insert(call.id.clone(), (call.name.clone(), call.arguments.clone()));
                        }
                        _ => {}
                    }
                }
            }
            Message::ToolResult(r) => {
                let (name, args) = calls.remove(&r.tool_call_id).unwrap_or_default();
                let text: Vec<&str> = r
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        Content::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                let mut content = if r.is_error {
                    Vec::new()
                } else {
                    diffs_from_args(&name, &args, cwd)
                };
                if content.is_empty() {
                    content.push(text_content(&text.join("\n")));
                }
                updates.push(tool_update(&r.tool_call_id, r.is_error, content, None));
            }
        }
    }
    updates
}

/// Every message on the session's current branch, from its first entry: what the editor
/// shows, compactions notwithstanding (they change only what the model sees).
pub fn branch_messages(session: &crate::session::SessionWriter) -> Vec<AgentMessage> {
    let Some(leaf) = session.leaf_id() else {
        return Vec::new();
    };
    session
        .tree()
        .path(leaf)
        .into_iter()
        .filter_map(|e| match e {
            crate::session::entry::Entry::Message(m) => Some(m.message.clone()),
            _ => None,
        })
        .collect()
}

/// ACP's stop reason for how a run's last answer ended; `Err` with the provider's message
/// when it failed.
pub fn stop_reason(last: Option<&Message>, aborted: bool) -> Result<&'static str, String> {
    if aborted {
        return Ok("cancelled");
    }
    match last {
        Some(Message::Assistant(a)) => match a.stop_reason {
            StopReason::Length => Ok("max_tokens"),
            StopReason::Aborted => Ok("cancelled"),
            StopReason::Error => {
                let msg = a.error_message.clone().unwrap_or_default();
                if msg.to_ascii_lowercase().contains("refus") {
                    Ok("refusal")
                } else {
                    Err(if msg.is_empty() {
                        "The model request failed".into()
                    } else {
                        msg
                    })
                }
            }
            _ => Ok("end_turn"),
        },
        _ => Ok("end_turn"),
    }
}

/// Follows one run's events and says what the editor should see of each.
pub struct LiveTranslator {
    cwd: PathBuf,
    context_window: u64,
    /// Files an `edit`/`write` is changing, as they were when it started (`None`: absent).
    before: HashMap<String, (String, Option<String>)>,
    /// The absolute path each running `edit`/`write` works on.
    edited: HashMap<String, String>,
    /// The editor's terminal each `bash` call runs in, when it does.
    terminals: HashMap<String, String>,
    /// The last assistant message of the run (for the stop reason).
    pub last_assistant: Option<Message>,
    pub aborted: bool,
    cost: f64,
}

impl LiveTranslator {
    pub fn new(cwd: PathBuf, context_window: u64) -> LiveTranslator {
        LiveTranslator {
            cwd,
            context_window,
            before: HashMap::new(),
            edited: HashMap::new(),
            terminals: HashMap::new(),
            last_assistant: None,
            aborted: false,
            cost: 0.0,
        }
    }

    /// A file's text for a diff: as the editor has it when it offers its buffers, else from
    /// the disk.
    fn read_small(path: &Path) -> Option<String> {
        if let Some(text) = crate::tools::editor_files::current().and_then(|e| e.read(path)) {
            return text.ok();
        }
        let meta = std::fs::metadata(path).ok()?;
        if meta.len() > DIFF_LIMIT {
            return None;
        }
        std::fs::read_to_string(path).ok()
    }

    /// The updates for one event (often none).
    pub fn translate(&mut self, ev: &AgentEvent) -> Vec<Value> {
        match ev {
            AgentEvent::MessageUpdate { event, .. } => match event {
                AssistantEvent::TextDelta { delta, .. } => vec![json!({
                    "sessionUpdate": "agent_message_chunk", "content": text_block(delta)})],
                AssistantEvent::ThinkingDelta { delta, .. } => vec![json!({
                    "sessionUpdate": "agent_thought_chunk", "content": text_block(delta)})],
                _ => Vec::new(),
            },
            AgentEvent::MessageEnd {
                message: message @ Message::Assistant(a),
            } => {
                self.last_assistant = Some(message.clone());
                self.cost += a.usage.cost.total;
                let u = &a.usage;
                let used = u.input + u.output + u.cache_read + u.cache_write;
                vec![json!({"sessionUpdate": "usage_update", "used": used,
                    "size": self.context_window,
                    "cost": {"amount": self.cost, "currency": "USD"}})]
            }
            // A script's own calls are part of its tool call, not calls of their own.
            AgentEvent::ToolExecutionStart {
                parent_id: Some(_), ..
            }
            | AgentEvent::ToolExecutionUpdate {
                parent_id: Some(_), ..
            }
            | AgentEvent::ToolExecutionEnd {
                parent_id: Some(_), ..
            } => Vec::new(),
            AgentEvent::ToolExecutionStart { id, name, args, .. } => {
                if matches!(name.as_str(), "edit" | "write") {
                    if let Some(path) = str_arg(args, "path") {
                        let path = absolute(&self.cwd, path);
                        let old = Self::read_small(&path);
                        let path = path.to_string_lossy().into_owned();
                        self.edited.insert(id.clone(), path.clone());
                        self.before.insert(id.clone(), (path, old));
                    }
                }
                vec![tool_call(id, name, args, &self.cwd, "in_progress")]
            }
            AgentEvent::ToolExecutionUpdate {
                id, partial_result, ..
            } => {
                // `bash` in the editor's terminal: the tool call shows that terminal.
                if let Some(terminal) = partial_result
                    .pointer("/details/terminalId")
                    .and_then(Value::as_str)
                {
                    self.terminals.insert(id.clone(), terminal.to_string());
                    return vec![
                        json!({"sessionUpdate": "tool_call_update", "toolCallId": id,
                        "status": "in_progress", "content": [terminal_content(terminal)]}),
                    ];
                }
                let text = result_text(partial_result);
                if text.is_empty() {
                    return Vec::new();
                }
                vec![
                    json!({"sessionUpdate": "tool_call_update", "toolCallId": id,
                    "status": "in_progress", "content": [text_content(&text)]}),
                ]
            }
            AgentEvent::ToolExecutionEnd {
                id,
                result,
                is_error,
                ..
            } => {
                let mut content = Vec::new();
                if let Some((path, old)) = self.before.remove(id) {
                    if !is_error {
                        if let Some(new) = Self::read_small(Path::new(&path)) {
                            content.push(json!({"type": "diff", "path": path,
                                "oldText": old, "newText": new}));
                        }
                    }
                }
                if let Some(terminal) = self.terminals.remove(id) {
                    content.push(terminal_content(&terminal));
                }
                if content.is_empty() {
                    content.push(text_content(&result_text(result)));
                }
                let mut update = tool_update(id, *is_error, content, Some(result));
                // An edit's first changed line, for the editor to jump to.
                let line = result
                    .pointer("/details/firstChangedLine")
                    .and_then(Value::as_u64);
                if let (Some(line), Some(path)) = (line, self.edited.remove(id)) {
                    update["locations"] = json!([{"path": path, "line": line}]);
                }
                vec![update]
            }
            AgentEvent::AgentSettled { aborted } => {
                self.aborted |= *aborted;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "updates_tests.rs"]
mod tests;
