//! The hand-written dispatch on `type` (entries) and `role` (messages) against serde's
//! internally tagged enums it replaced, kept here as the reference: every fixture line and a
//! set of odd shapes (unknown fields anywhere, tags out of place, unknown tags, wrong types,
//! missing fields, non-objects) must read the same, and fail with the same error text.

use serde::Deserialize;
use serde_json::{json, Value};

use super::entry::*;
use crate::agent::message::{
    BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage,
    SystemMessage,
};
use crate::ai::{AssistantMessage, Extra, Message, ToolResultMessage, UserContent, UserMessage};

#[derive(Debug, Deserialize)]
#[serde(tag = "role")]
enum RefMessage {
    #[serde(rename = "user")]
    User(UserMessage),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
}

impl From<RefMessage> for Message {
    fn from(m: RefMessage) -> Message {
        match m {
            RefMessage::User(m) => Message::User(m),
            RefMessage::Assistant(m) => Message::Assistant(m),
            RefMessage::ToolResult(m) => Message::ToolResult(m),
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "role")]
enum RefExtraRole {
    #[serde(rename = "bashExecution")]
    BashExecution(BashExecutionMessage),
    #[serde(rename = "custom")]
    Custom(CustomMessage),
    #[serde(rename = "branchSummary")]
    BranchSummary(BranchSummaryMessage),
    #[serde(rename = "compactionSummary")]
    CompactionSummary(CompactionSummaryMessage),
    #[serde(rename = "system")]
    System(SystemMessage),
}

/// `AgentMessage::from_value` as it was, on the derived enums.
fn ref_agent_message(mut v: Value) -> AgentMessage {
    crate::agent::normalize::message(&mut v);
    let role = v.get("role").and_then(Value::as_str).unwrap_or("");
    let parsed = match role {
        "user" | "assistant" | "toolResult" => RefMessage::deserialize(&v)
            .ok()
            .map(|m| AgentMessage::Llm(m.into())),
        "bashExecution" | "custom" | "branchSummary" | "compactionSummary" | "system" => {
            RefExtraRole::deserialize(&v).ok().map(|r| match r {
                RefExtraRole::BashExecution(m) => AgentMessage::BashExecution(m),
                RefExtraRole::Custom(m) => AgentMessage::Custom(m),
                RefExtraRole::BranchSummary(m) => AgentMessage::BranchSummary(m),
                RefExtraRole::CompactionSummary(m) => AgentMessage::CompactionSummary(m),
                RefExtraRole::System(m) => AgentMessage::System(m),
            })
        }
        _ => None,
    };
    parsed.unwrap_or(AgentMessage::Unknown(v))
}

/// `MessageEntry` as it was read: its message through the old `AgentMessage` reader.
#[derive(Deserialize)]
struct RefMessageEntry {
    id: String,
    #[serde(rename = "parentId")]
    parent_id: Option<String>,
    timestamp: String,
    message: Value,
    #[serde(flatten)]
    extra: Extra,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum RefKnown {
    #[serde(rename = "message")]
    Message(RefMessageEntry),
    #[serde(rename = "model_change")]
    ModelChange(ModelChangeEntry),
    #[serde(rename = "thinking_level_change")]
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    #[serde(rename = "compaction")]
    Compaction(CompactionEntry),
    #[serde(rename = "branch_summary")]
    BranchSummary(BranchSummaryEntry),
    #[serde(rename = "custom")]
    Custom(CustomEntry),
    #[serde(rename = "custom_message")]
    CustomMessage(CustomMessageEntry),
    #[serde(rename = "label")]
    Label(LabelEntry),
    #[serde(rename = "session_info")]
    SessionInfo(SessionInfoEntry),
}

/// `Entry::from_value` as it was, on the derived enum.
fn ref_entry(v: Value) -> Entry {
    const KNOWN: [&str; 9] = [
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    ];
    let known = v
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| KNOWN.contains(&t));
    if !known || crate::session::normalize::unusable_entry(&v).is_some() {
        return Entry::Unknown(v);
    }
    let mut v = v;
    crate::session::normalize::entry(&mut v);
    match RefKnown::deserialize(&v) {
        Ok(RefKnown::Message(e)) => Entry::Message(MessageEntry {
            id: e.id,
            parent_id: e.parent_id,
            timestamp: e.timestamp,
            message: ref_agent_message(e.message),
            extra: e.extra,
        }),
        Ok(RefKnown::ModelChange(e)) => Entry::ModelChange(e),
        Ok(RefKnown::ThinkingLevelChange(e)) => Entry::ThinkingLevelChange(e),
        Ok(RefKnown::Compaction(e)) => Entry::Compaction(e),
        Ok(RefKnown::BranchSummary(e)) => Entry::BranchSummary(e),
        Ok(RefKnown::Custom(e)) => Entry::Custom(e),
        Ok(RefKnown::CustomMessage(e)) => Entry::CustomMessage(e),
        Ok(RefKnown::Label(e)) => Entry::Label(e),
        Ok(RefKnown::SessionInfo(e)) => Entry::SessionInfo(e),
        Err(_) => Entry::Unknown(v),
    }
}

fn assert_same_entry(v: Value) {
    let old = ref_entry(v.clone());
    let new = Entry::from_value(v.clone());
    assert_eq!(new, old, "line: {v}");
    assert_eq!(new.to_line(), old.to_line(), "line: {v}");
}

fn fixture_lines() -> Vec<Value> {
    let files = [
        include_str!("../../../fixtures/sessions/ts-all-entries.jsonl"),
        include_str!("../../../fixtures/sessions/ts-v1.jsonl"),
        include_str!("../../../fixtures/sessions/ts-v2.jsonl"),
        include_str!("../../../fixtures/sessions/ts-v1-migrated-by-pi.jsonl"),
        include_str!("../../../fixtures/sessions/ts-v2-migrated-by-pi.jsonl"),
        include_str!("../../../fixtures/sessions/export-branched.jsonl"),
        include_str!("../../../fixtures/sessions/pi-0.87.1-rpc.jsonl"),
        include_str!("../../../fixtures/sessions/pi-mono-large-session.jsonl"),
    ];
    files
        .iter()
        .flat_map(|f| f.lines())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// One line of every entry type and one message of every role, each with an unknown field
/// before and after the tag.
fn every_variant() -> Vec<Value> {
    let base = |kind: &str, fields: Value| {
        let mut o = json!({"before": 1, "type": kind, "id": "e1", "parentId": null,
                           "timestamp": "2026-01-01T00:00:00.000Z"});
        for (k, v) in fields.as_object().unwrap() {
            o[k] = v.clone();
        }
        o["after"] = json!({"x": [1, "two"]});
        o
    };
    let message = |m: Value| base("message", json!({ "message": m }));
    let usage = json!({"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0,
                       "totalTokens": 3, "cost": {"input": 0, "output": 0, "cacheRead": 0,
                       "cacheWrite": 0, "total": 0}});
    vec![
        message(json!({"x": 0, "role": "user", "content": "hi", "timestamp": 1, "y": 2})),
        message(
            json!({"role": "user", "content": [{"type": "text", "text": "hi"},
                      {"type": "image", "data": "AA==", "mimeType": "image/png"}],
                      "timestamp": 1}),
        ),
        message(json!({"role": "assistant", "content": [
                          {"type": "thinking", "thinking": "t", "thinkingSignature": "s"},
                          {"type": "text", "text": "a", "textSignature": "ts"},
                          {"type": "toolCall", "id": "c", "name": "bash",
                           "arguments": {"command": "ls"}}],
                      "api": "a", "provider": "p", "model": "m", "usage": usage,
                      "stopReason": "toolUse", "timestamp": 2, "responseId": "r",
                      "unknownField": true})),
        message(
            json!({"role": "toolResult", "toolCallId": "c", "toolName": "bash",
                      "content": [{"type": "text", "text": "out"}], "details": {"d": 1},
                      "isError": false, "timestamp": 3, "extraField": "kept"}),
        ),
        message(
            json!({"role": "bashExecution", "command": "ls", "output": "o",
                      "exitCode": null, "cancelled": false, "truncated": false,
                      "timestamp": 4, "z": 1}),
        ),
        message(
            json!({"role": "custom", "customType": "ext", "content": "c",
                      "display": true, "details": null, "timestamp": 5, "z": 1}),
        ),
        message(
            json!({"role": "hookMessage", "customType": "ext", "content": "c",
                      "display": true, "timestamp": 5}),
        ),
        message(
            json!({"role": "branchSummary", "summary": "s", "fromId": "f",
                      "timestamp": 6, "z": 1}),
        ),
        message(
            json!({"role": "compactionSummary", "summary": "s", "tokensBefore": 9,
                      "timestamp": 7, "z": 1}),
        ),
        message(
            json!({"role": "system", "content": "", "sections": {"a": "b", "c": null},
                      "timestamp": 8, "toolsAdded": [{"name": "t"}], "z": 1}),
        ),
        message(json!({"role": "someday", "content": "kept as it is"})),
        message(json!({"content": "no role"})),
        base("model_change", json!({"provider": "p", "modelId": "m"})),
        base("thinking_level_change", json!({"thinkingLevel": "high"})),
        base(
            "compaction",
            json!({"summary": "s", "firstKeptEntryId": "k", "tokensBefore": 5,
                   "details": null, "usage": usage, "fromHook": true}),
        ),
        base(
            "branch_summary",
            json!({"fromId": "root", "summary": "s", "details": {"a": 1}}),
        ),
        base("custom", json!({"customType": "c", "data": null})),
        base(
            "custom_message",
            json!({"customType": "c", "content": [{"type": "text", "text": "x"}],
                   "display": false, "details": [1]}),
        ),
        base("label", json!({"targetId": "t", "label": "l"})),
        base("session_info", json!({"name": "n"})),
        base("context_edit", json!({"edits": []})),
    ]
}

/// Lines that do not fit their type: each must end the same way (typed, shaped or `Unknown`).
fn malformed() -> Vec<Value> {
    let mut out = Vec::new();
    for v in every_variant() {
        for (key, bad) in [
            ("id", json!(5)),
            ("parentId", json!(["x"])),
            ("timestamp", json!({"t": 1})),
            ("tokensBefore", json!(-3)),
            ("tokensBefore", json!("12")),
            ("details", json!(1.5)),
            ("content", json!(7)),
            ("content", json!([{"type": "video"}])),
            ("content", json!([{"type": "text"}])),
            ("display", json!("yes")),
            ("name", json!(3)),
            ("label", json!(false)),
            ("thinkingLevel", json!(null)),
            ("message", json!("text")),
        ] {
            let mut bad_line = v.clone();
            bad_line[key] = bad.clone();
            out.push(bad_line);
            if v.get("message").is_some_and(Value::is_object) {
                let mut bad_message = v.clone();
                bad_message["message"][key] = bad.clone();
                out.push(bad_message);
            }
        }
        let mut no_type = v.clone();
        no_type.as_object_mut().unwrap().shift_remove("type");
        out.push(no_type);
        let mut type_last = v.clone();
        let kind = type_last
            .as_object_mut()
            .unwrap()
            .shift_remove("type")
            .unwrap();
        type_last["type"] = kind;
        out.push(type_last);
    }
    out.extend([
        json!(null),
        json!("message"),
        json!([1, 2]),
        json!({"type": 5}),
    ]);
    out
}

#[test]
fn entries_read_as_the_tagged_enums_read_them() {
    let lines = fixture_lines();
    assert!(lines.len() > 100, "fixtures found: {}", lines.len());
    for v in lines.into_iter().chain(every_variant()).chain(malformed()) {
        assert_same_entry(v);
    }
}

#[test]
fn every_entry_type_and_role_is_typed_with_its_unknown_fields_kept() {
    let typed: Vec<Entry> = every_variant().into_iter().map(Entry::from_value).collect();
    let kinds: Vec<&str> = typed.iter().map(Entry::kind).collect();
    assert_eq!(
        &kinds[11..],
        [
            "message",
            "model_change",
            "thinking_level_change",
            "compaction",
            "branch_summary",
            "custom",
            "custom_message",
            "label",
            "session_info",
            "context_edit"
        ]
    );
    for e in &typed[..typed.len() - 1] {
        assert!(!matches!(e, Entry::Unknown(_)), "typed: {e:?}");
        let line: Value = serde_json::from_str(&e.to_line()).unwrap();
        assert_eq!(line["before"], 1, "{line}");
        assert_eq!(line["after"], json!({"x": [1, "two"]}), "{line}");
    }
    assert!(matches!(typed.last(), Some(Entry::Unknown(_))));
    let roles: Vec<&str> = typed[..12]
        .iter()
        .map(|e| e.message().map_or("-", AgentMessage::role))
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "user",
            "assistant",
            "toolResult",
            "bashExecution",
            "custom",
            "hookMessage",
            "branchSummary",
            "compactionSummary",
            "system",
            "someday",
            ""
        ]
    );
    // Unknown fields inside a message stay, in place; the role is not duplicated.
    let line = typed[0].to_line();
    let keys: Vec<String> = serde_json::from_str::<Value>(&line).unwrap()["message"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["role", "content", "timestamp", "x", "y"], "{line}");
    assert_eq!(line.matches("\"role\"").count(), 1, "{line}");
    assert_eq!(line.matches("\"type\":\"message\"").count(), 1, "{line}");
}

/// The reference enum's error text, naming the enum it stands for.
fn same_name(e: &serde_json::Error) -> String {
    e.to_string()
        .replace("RefMessage", "Message")
        .replace("RefUserContent", "UserContent")
}

/// `Message`'s reader against the derived enum, result and error text, from a borrowed and an
/// owned `Value` (extensions hand messages over as owned JSON).
#[test]
fn messages_read_and_fail_as_the_tagged_enum() {
    let mut cases: Vec<Value> = every_variant()
        .into_iter()
        .filter_map(|e| e.get("message").cloned())
        .collect();
    cases.extend(
        malformed()
            .into_iter()
            .filter_map(|e| e.get("message").cloned()),
    );
    let user = json!({"role": "user", "content": "hi", "timestamp": 1});
    for role in [
        json!(0),
        json!(1),
        json!(2),
        json!(3),
        json!(-1),
        json!(1.5),
        json!(null),
        json!(true),
        json!(["user"]),
        json!({"r": 1}),
        json!("User"),
        json!(""),
    ] {
        let mut m = user.clone();
        m["role"] = role;
        cases.push(m);
    }
    cases.extend([
        json!(null),
        json!(true),
        json!(12),
        json!(-12),
        json!(1.25),
        json!("user"),
        json!([]),
        json!(["user"]),
        json!(["user", "hi", 1]),
        json!([5]),
        json!(["nope"]),
        json!({}),
        json!({"content": "x", "timestamp": 1, "role": "user"}),
        json!({"role": "assistant"}),
    ]);
    for v in cases {
        let old = RefMessage::deserialize(&v).map(Message::from);
        let new = Message::from_json(&v);
        match (&old, &new) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{v}"),
            (Err(a), Err(b)) => assert_eq!(same_name(a), b.to_string(), "{v}"),
            _ => panic!("{v}: old {old:?}, new {new:?}"),
        }
        let list = Value::Array(vec![v.clone()]);
        let old = serde_json::from_value::<Vec<RefMessage>>(list.clone())
            .map(|l| l.into_iter().map(Message::from).collect::<Vec<_>>());
        let new = serde_json::from_value::<Vec<Message>>(list);
        match (&old, &new) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{v}"),
            (Err(a), Err(b)) => assert_eq!(same_name(a), b.to_string(), "{v}"),
            _ => panic!("{v}: old {old:?}, new {new:?}"),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RefUserContent {
    Text(String),
    Blocks(Vec<crate::ai::Content>),
}

impl From<RefUserContent> for UserContent {
    fn from(c: RefUserContent) -> UserContent {
        match c {
            RefUserContent::Text(s) => UserContent::Text(s),
            RefUserContent::Blocks(b) => UserContent::Blocks(b),
        }
    }
}

/// `UserContent`'s reader against the derived untagged enum, from a borrowed and an owned
/// `Value`.
#[test]
fn user_content_reads_and_fails_as_the_untagged_enum() {
    let cases = [
        json!("text"),
        json!(""),
        json!([]),
        json!([{"type": "text", "text": "a"}, {"type": "image", "data": "d", "mimeType": "m"}]),
        json!([{"text": "a", "type": "text", "extra": 1}]),
        json!([{"type": "video"}]),
        json!([{"type": "text"}]),
        json!(["text"]),
        json!([1]),
        json!(null),
        json!(5),
        json!(-5),
        json!(1.5),
        json!(true),
        json!({"type": "text", "text": "a"}),
    ];
    for v in cases {
        let old = RefUserContent::deserialize(&v).map(UserContent::from);
        let new = UserContent::deserialize(&v);
        match (&old, &new) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{v}"),
            (Err(a), Err(b)) => assert_eq!(same_name(a), b.to_string(), "{v}"),
            _ => panic!("{v}: old {old:?}, new {new:?}"),
        }
        let old = serde_json::from_value::<RefUserContent>(v.clone()).map(UserContent::from);
        let new = serde_json::from_value::<UserContent>(v.clone());
        match (&old, &new) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{v}"),
            (Err(a), Err(b)) => assert_eq!(same_name(a), b.to_string(), "{v}"),
            _ => panic!("{v}: old {old:?}, new {new:?}"),
        }
    }
}
