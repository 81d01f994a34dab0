//! Entry and message serialization against lines written by the TypeScript pi.

use super::entry::*;
use super::*;
use crate::ai::{Message, UserContent};
use serde_json::{json, Value};

pub(crate) const ALL_ENTRIES: &str =
    include_str!("../../../fixtures/sessions/ts-all-entries.jsonl");

fn entry(line: &str) -> Entry {
    serde_json::from_str(line).expect("entry parses")
}

#[test]
fn ts_lines_round_trip_byte_for_byte() {
    let mut lines = ALL_ENTRIES.lines();
    let header_line = lines.next().unwrap();
    let h: SessionHeader = serde_json::from_str(header_line).unwrap();
    assert_eq!(serde_json::to_string(&h).unwrap(), header_line);
    let mut kinds = std::collections::BTreeSet::new();
    let mut roles = std::collections::BTreeSet::new();
    for line in lines {
        let e = entry(line);
        assert!(!matches!(e, Entry::Unknown(_)), "typed: {line}");
        if let Some(m) = e.message() {
            assert!(
                !matches!(m, AgentMessage::Unknown(_)),
                "typed message: {line}"
            );
            roles.insert(m.role().to_string());
        }
        kinds.insert(e.kind().to_string());
        assert_eq!(e.to_line(), line);
    }
    let all: Vec<&str> = vec![
        "branch_summary",
        "compaction",
        "custom",
        "custom_message",
        "label",
        "message",
        "model_change",
        "session_info",
        "thinking_level_change",
    ];
    assert_eq!(kinds.iter().map(String::as_str).collect::<Vec<_>>(), all);
    for r in ["user", "assistant", "toolResult", "bashExecution"] {
        assert!(roles.contains(r), "{r}");
    }
}

#[test]
fn unknown_entry_types_and_fields_survive() {
    let line = r#"{"type":"future_thing","id":"abcd1234","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","x":[1,{"y":2.5}]}"#;
    let e = entry(line);
    assert!(matches!(e, Entry::Unknown(_)));
    assert_eq!(e.id(), "abcd1234");
    assert_eq!(e.parent_id(), None);
    assert_eq!(e.to_line(), line);

    let line = r#"{"type":"model_change","id":"a","parentId":"b","timestamp":"t","provider":"p","modelId":"m","newField":{"k":true}}"#;
    let e = entry(line);
    assert!(matches!(e, Entry::ModelChange(_)));
    assert_eq!(e.to_line(), line);

    let line = r#"{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"user","content":"plain","timestamp":5,"meta":1},"tag":"z"}"#;
    assert_eq!(entry(line).to_line(), line);

    // An unknown role is kept verbatim; a known role of an odd shape is read with pi's
    // defaults (its line is copied as it was, see `store`).
    let line = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"alien","x":1}}"#;
    let e = entry(line);
    assert!(matches!(e.message(), Some(AgentMessage::Unknown(_))));
    assert_eq!(e.to_line(), line);
    let line = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","content":"bad"}}"#;
    let Some(AgentMessage::Llm(Message::Assistant(a))) = entry(line).message().cloned() else {
        panic!("read as an assistant message")
    };
    assert_eq!(a.text(), "bad");

    // A known type missing a field is read with the default (a label on nothing).
    let line = r#"{"type":"label","id":"a","parentId":null,"timestamp":"t"}"#;
    let Entry::Label(l) = entry(line) else {
        panic!("read as a label")
    };
    assert_eq!(l.target_id, "");
}

#[test]
fn optional_fields_are_omitted_and_nulls_kept() {
    let line = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"bashExecution","command":"sleep 9","output":"","cancelled":true,"truncated":false,"timestamp":1}}"#;
    let e = entry(line);
    let Some(AgentMessage::BashExecution(b)) = e.message() else {
        panic!("bash")
    };
    assert_eq!(b.exit_code, None);
    assert_eq!(e.to_line(), line);
    let with_null = line.replace(r#""output":"","#, r#""output":"","exitCode":null,"#);
    let e = entry(&with_null);
    assert_eq!(e.to_line(), with_null);
    let excluded = r#"{"role":"bashExecution","command":"ls","output":"a","exitCode":0,"cancelled":false,"truncated":true,"fullOutputPath":"/tmp/x","timestamp":2,"excludeFromContext":true}"#;
    let m: AgentMessage = serde_json::from_str(excluded).unwrap();
    assert!(matches!(m, AgentMessage::BashExecution(_)));
    assert_eq!(serde_json::to_string(&m).unwrap(), excluded);

    let details_null = r#"{"type":"compaction","id":"c","parentId":"b","timestamp":"t","summary":"s","firstKeptEntryId":"a","tokensBefore":10,"details":null}"#;
    assert_eq!(entry(details_null).to_line(), details_null);
}

#[test]
fn u2028_inside_strings_round_trips() {
    let line = "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\u{2028}b\u{2029}c\"}],\"timestamp\":1}}";
    let e = entry(line);
    assert_eq!(e.to_line(), line);
    let Some(AgentMessage::Llm(Message::User(u))) = e.message() else {
        panic!()
    };
    assert!(matches!(&u.content, UserContent::Blocks(b) if b.len() == 1));
}

#[test]
fn header_helper_matches_pi_shape() {
    let h = serde_json::to_value(SessionHeader::new(
        "id1",
        "2026-01-01T00:00:00.000Z",
        "/w",
        None,
    ))
    .unwrap();
    assert_eq!(
        h,
        json!({"type":"session","version":3,"id":"id1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"})
    );
    let s = serde_json::to_string(&SessionHeader::new("i", "t", "/c", Some("/p.jsonl".into())))
        .unwrap();
    assert_eq!(
        s,
        r#"{"type":"session","version":3,"id":"i","timestamp":"t","cwd":"/c","parentSession":"/p.jsonl"}"#
    );
    let v: Value = serde_json::from_str(&s).unwrap();
    assert!(file::is_header(&v));
}

#[test]
fn numbers_are_written_like_javascript() {
    use super::json::js_number;
    let cases = [
        (0.0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (-2.5, "-2.5"),
        (0.1, "0.1"),
        (0.000_001_5, "0.0000015"),
        (0.000_000_1, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (123_456.789, "123456.789"),
        (1e21, "1e+21"),
        (1.25e22, "1.25e+22"),
        (1e20, "100000000000000000000"),
        (0.1 + 0.2, "0.30000000000000004"),
        (f64::NAN, "null"),
    ];
    for (x, want) in cases {
        assert_eq!(js_number(x), want, "{x}");
    }
    assert_eq!(
        super::json::to_js_string(&json!({"a": 0.0, "b": [1.5e-6, 3], "c": "\u{1}\n"})),
        r#"{"a":0,"b":[0.0000015,3],"c":"\u0001\n"}"#
    );
}
