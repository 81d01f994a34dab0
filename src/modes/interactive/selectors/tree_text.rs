//! How `/tree` shows one entry on one line (`user: …`, `assistant: …`, `[bash: git status]`,
//! `[compaction: 12k tokens]`, …), the text its search matches against, and which entries
//! the default view hides.

use std::collections::HashMap;

use serde_json::Value;

use crate::ai::types::{Content, Message, StopReason};
use crate::session::entry::{AgentMessage, Entry};
use crate::session::ops::user_content_text;
use crate::tui::theme::{Theme, Token};

/// What `/tree` knows about a tool call when it shows the call's result.
pub type ToolCalls = HashMap<String, (String, Value)>;

/// Tool calls of every assistant message, by call id.
pub fn tool_calls(entries: &[Entry]) -> ToolCalls {
    let mut map = ToolCalls::new();
    for e in entries {
        if let Entry::Message(m) = e {
            if let AgentMessage::Llm(Message::Assistant(a)) = &m.message {
                for call in a.tool_calls() {
                    map.insert(call.id.clone(), (call.name.clone(), call.arguments.clone()));
                }
            }
        }
    }
    map
}

const MAX_CONTENT: usize = 200;

fn first_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// Up to 200 characters of text blocks.
fn blocks_text(content: &[Content]) -> String {
    let mut out = String::new();
    for c in content {
        if let Content::Text(t) = c {
            out.push_str(&t.text);
            if out.chars().count() >= MAX_CONTENT {
                return first_chars(&out, MAX_CONTENT);
            }
        }
    }
    out
}

fn normalize(s: &str) -> String {
    s.replace(['\n', '\t'], " ").trim().to_string()
}

/// Whether the default views skip this entry: an assistant message with nothing but tool
/// calls (unless it failed) — its tool results stand for it.
pub fn is_silent_assistant(entry: &Entry) -> bool {
    let Entry::Message(m) = entry else {
        return false;
    };
    let AgentMessage::Llm(Message::Assistant(a)) = &m.message else {
        return false;
    };
    let has_text = a
        .content
        .iter()
        .any(|c| matches!(c, Content::Text(t) if !t.text.trim().is_empty()));
    let failed = !matches!(a.stop_reason, StopReason::Stop | StopReason::ToolUse);
    !has_text && !failed
}

/// Settings and bookkeeping entries the default view hides.
pub fn is_bookkeeping(entry: &Entry) -> bool {
    matches!(
        entry,
        Entry::Label(_)
            | Entry::Custom(_)
            | Entry::ModelChange(_)
            | Entry::ThinkingLevelChange(_)
            | Entry::SessionInfo(_)
    )
}

pub fn role(entry: &Entry) -> Option<&str> {
    match entry {
        Entry::Message(m) => Some(m.message.role()),
        _ => None,
    }
}

/// What typing in `/tree` searches: the label, the role and text, commands and names.
pub fn searchable_text(entry: &Entry, label: Option<&str>) -> String {
    let mut parts: Vec<String> = label.map(str::to_string).into_iter().collect();
    match entry {
        Entry::Message(m) => {
            parts.push(m.message.role().to_string());
            match &m.message {
                AgentMessage::Llm(Message::User(u)) => {
                    parts.push(first_chars(&user_content_text(&u.content), MAX_CONTENT))
                }
                AgentMessage::Llm(Message::Assistant(a)) => parts.push(blocks_text(&a.content)),
                AgentMessage::Llm(Message::ToolResult(t)) => parts.push(blocks_text(&t.content)),
                AgentMessage::BashExecution(b) => parts.push(b.command.clone()),
                AgentMessage::Custom(c) => parts.push(user_content_text(&c.content)),
                _ => {}
            }
        }
        Entry::CustomMessage(c) => {
            parts.push(c.custom_type.clone());
            parts.push(user_content_text(&c.content));
        }
        Entry::Compaction(_) => parts.push("compaction".into()),
        Entry::BranchSummary(b) => parts.extend(["branch summary".to_string(), b.summary.clone()]),
        Entry::SessionInfo(i) => {
            parts.push("title".into());
            parts.extend(i.name.clone());
        }
        Entry::ModelChange(c) => parts.extend(["model".to_string(), c.model_id.clone()]),
        Entry::ThinkingLevelChange(c) => {
            parts.extend(["thinking".to_string(), c.thinking_level.clone()])
        }
        Entry::Custom(c) => parts.extend(["custom".to_string(), c.custom_type.clone()]),
        Entry::Label(l) => parts.extend(["label".to_string(), l.label.clone().unwrap_or_default()]),
        Entry::Unknown(_) => {}
    }
    parts.join(" ")
}

use crate::util::home::shorten_home;

/// `[read: src/x.rs:10-29]`, `[bash: git status]`, `[name: {"json":…}]`.
pub fn format_tool_call(name: &str, args: &Value) -> String {
    let s = |k: &str| match args.get(k) {
        Some(Value::String(v)) => v.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let path_arg = || {
        shorten_home(
            &[s("path"), s("file_path")]
                .into_iter()
                .find(|p| !p.is_empty())
                .unwrap_or_default(),
        )
    };
    let dir = || {
        let p = s("path");
        shorten_home(if p.is_empty() { "." } else { &p })
    };
    match name {
        "read" => {
            let mut display = path_arg();
            let offset = args.get("offset").and_then(Value::as_i64);
            let limit = args.get("limit").and_then(Value::as_i64);
            if offset.is_some() || limit.is_some() {
                let start = offset.unwrap_or(1);
                display.push_str(&format!(":{start}"));
                if let Some(limit) = limit {
                    display.push_str(&format!("-{}", start + limit - 1));
                }
            }
            format!("[read: {display}]")
        }
        "write" | "edit" => format!("[{name}: {}]", path_arg()),
        "bash" => {
            let raw = s("command");
            let cmd = first_chars(normalize(&raw).as_str(), 50);
            let more = if raw.chars().count() > 50 { "..." } else { "" };
            format!("[bash: {cmd}{more}]")
        }
        "grep" => format!("[grep: /{}/ in {}]", s("pattern"), dir()),
        "find" => format!("[find: {} in {}]", s("pattern"), dir()),
        "ls" => format!("[ls: {}]", dir()),
        _ => {
            let json = args.to_string();
            let more = if json.chars().count() > 40 { "..." } else { "" };
            format!("[{name}: {}{more}]", first_chars(&json, 40))
        }
    }
}

/// The styled one-line summary of an entry.
pub fn display_text(entry: &Entry, calls: &ToolCalls, t: &Theme) -> String {
    match entry {
        Entry::Message(m) => match &m.message {
            AgentMessage::Llm(Message::User(u)) => {
                let text = normalize(&first_chars(&user_content_text(&u.content), MAX_CONTENT));
                t.fg(Token::Accent, "user: ") + &text
            }
            AgentMessage::Llm(Message::Assistant(a)) => {
                let label = t.fg(Token::Success, "assistant: ");
                let text = normalize(&blocks_text(&a.content));
                if !text.is_empty() {
                    label + &text
                } else if a.stop_reason == StopReason::Aborted {
                    label + &t.fg(Token::Muted, "(aborted)")
                } else if let Some(err) = &a.error_message {
                    label + &t.fg(Token::Error, &first_chars(&normalize(err), 80))
                } else {
                    label + &t.fg(Token::Muted, "(no content)")
                }
            }
            AgentMessage::Llm(Message::ToolResult(r)) => match calls.get(&r.tool_call_id) {
                Some((name, args)) => t.fg(Token::Muted, &format_tool_call(name, args)),
                None => t.fg(Token::Muted, &format!("[{}]", r.tool_name)),
            },
            AgentMessage::BashExecution(b) => {
                t.fg(Token::Dim, &format!("[bash]: {}", normalize(&b.command)))
            }
            other => t.fg(Token::Dim, &format!("[{}]", other.role())),
        },
        Entry::CustomMessage(c) => {
            t.fg(Token::CustomMessageLabel, &format!("[{}]: ", c.custom_type))
                + &normalize(&user_content_text(&c.content))
        }
        Entry::Compaction(c) => {
            let k = (c.tokens_before as f64 / 1000.0).round();
            t.fg(Token::BorderAccent, &format!("[compaction: {k}k tokens]"))
        }
        Entry::BranchSummary(b) => {
            t.fg(Token::Warning, "[branch summary]: ") + &normalize(&b.summary)
        }
        Entry::ModelChange(c) => t.fg(Token::Dim, &format!("[model: {}]", c.model_id)),
        Entry::ThinkingLevelChange(c) => {
            t.fg(Token::Dim, &format!("[thinking: {}]", c.thinking_level))
        }
        Entry::Custom(c) => t.fg(Token::Dim, &format!("[custom: {}]", c.custom_type)),
        Entry::Label(l) => t.fg(
            Token::Dim,
            &format!("[label: {}]", l.label.as_deref().unwrap_or("(cleared)")),
        ),
        Entry::SessionInfo(i) => match i.name.as_deref() {
            Some(name) if !name.is_empty() => t.fg(Token::Dim, &format!("[title: {name}]")),
            _ => {
                t.fg(Token::Dim, "[title: ")
                    + &t.italic(&t.fg(Token::Dim, "empty"))
                    + &t.fg(Token::Dim, "]")
            }
        },
        Entry::Unknown(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_calls_format_like_pi() {
        assert_eq!(
            format_tool_call("read", &json!({"path": "a.rs", "offset": 10, "limit": 20})),
            "[read: a.rs:10-29]"
        );
        assert_eq!(
            format_tool_call("read", &json!({"path": "a.rs"})),
            "[read: a.rs]"
        );
        assert_eq!(
            format_tool_call("grep", &json!({"pattern": "fn"})),
            "[grep: /fn/ in .]"
        );
        let long = "x".repeat(60);
        assert_eq!(
            format_tool_call("bash", &json!({"command": long})),
            format!("[bash: {}...]", "x".repeat(50))
        );
        assert_eq!(
            format_tool_call("custom", &json!({"a": 1})),
            "[custom: {\"a\":1}]"
        );
    }
}
