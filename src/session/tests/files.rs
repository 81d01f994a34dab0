//! Reading, migrating and lazily writing session files.

use super::entry::*;
use super::file::*;
use super::*;
use crate::ai::{AssistantMessage, Content, Message, Model, ModelCost, UserContent};
use serde_json::Value;
use std::path::Path;

const V1: &str = include_str!("../../../fixtures/sessions/ts-v1.jsonl");
const V2: &str = include_str!("../../../fixtures/sessions/ts-v2.jsonl");
const V1_BY_PI: &str = include_str!("../../../fixtures/sessions/ts-v1-migrated-by-pi.jsonl");
const V2_BY_PI: &str = include_str!("../../../fixtures/sessions/ts-v2-migrated-by-pi.jsonl");

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

pub(crate) fn assistant(text: &str) -> AgentMessage {
    let model = Model {
        id: "m1".into(),
        name: "m1".into(),
        api: "openai-completions".into(),
        provider: "mock".into(),
        base_url: String::new(),
        reasoning: false,
        input: vec![],
        cost: ModelCost::default(),
        context_window: 1000,
        max_tokens: 100,
        thinking_level_map: None,
        headers: None,
        compat: None,
    };
    let mut a = AssistantMessage::empty(&model);
    a.content.push(Content::text(text));
    AgentMessage::assistant(a)
}

pub(crate) fn user(text: &str) -> AgentMessage {
    AgentMessage::Llm(Message::user_text(text))
}

#[test]
fn loads_ts_file_with_all_entries() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "s.jsonl", super::entries_tests::ALL_ENTRIES);
    let l = load(&p).unwrap();
    assert!(l.warnings.is_empty());
    assert_eq!(l.migrated_from, None);
    assert_eq!(l.entries.len(), 23);
    assert_eq!(l.header.version, Some(3));
    // Not migrated: never rewritten.
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        super::entries_tests::ALL_ENTRIES
    );
    assert!(l.rewrite.is_none());
}

#[test]
fn crlf_lines_and_u2028_are_not_line_breaks() {
    let text = "{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"timestamp\":\"t\",\"cwd\":\"/\"}\r\n\
{\"type\":\"custom\",\"customType\":\"a\u{2028}b\",\"id\":\"e1\",\"parentId\":null,\"timestamp\":\"t\"}\r\n\
\r\n\
{\"type\":\"session_info\",\"id\":\"e2\",\"parentId\":\"e1\",\"timestamp\":\"t\",\"name\":\"n\u{2029}\"}\r\n";
    let p = parse_session(text.as_bytes()).unwrap();
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(p.entries.len(), 2);
    let Entry::Custom(c) = &p.entries[0] else {
        panic!()
    };
    assert_eq!(c.custom_type, "a\u{2028}b");
}

#[test]
fn truncated_and_malformed_lines_are_skipped_with_warnings() {
    let mut text = super::entries_tests::ALL_ENTRIES.to_string();
    let lines: Vec<&str> = super::entries_tests::ALL_ENTRIES.lines().collect();
    // A garbage line in the middle and a half-written last line.
    text = text.replacen(lines[3], &format!("{}\nnot json", lines[3]), 1);
    let last = lines.last().unwrap();
    text.push_str(&last[..last.len() / 2]);
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "t.jsonl", &text);
    let l = load(&p).unwrap();
    assert_eq!(l.entries.len(), 23);
    assert_eq!(l.warnings.len(), 2, "{:?}", l.warnings);
    assert!(l.warnings[0].contains("line 5"), "{}", l.warnings[0]);
    assert!(l.warnings[1].contains("line 26"), "{}", l.warnings[1]);
}

#[test]
fn header_is_validated() {
    assert!(matches!(parse_session(b""), Err(LoadError::Empty)));
    assert!(matches!(parse_session(b"\n \n"), Err(LoadError::Empty)));
    assert!(matches!(
        parse_session(br#"{"type":"message","id":"a"}"#),
        Err(LoadError::InvalidHeader)
    ));
    assert!(matches!(
        parse_session(br#"{"type":"session","id":5}"#),
        Err(LoadError::InvalidHeader)
    ));
    assert!(parse_session(br#"{"type":"session","id":"5"}"#).is_ok());
}

/// Replaces every id with its first-seen ordinal so files with random ids compare.
fn normalize_ids(text: &str) -> Vec<Value> {
    let mut map = std::collections::HashMap::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        for k in ["id", "parentId", "firstKeptEntryId"] {
            if v.get("type").and_then(Value::as_str) == Some("session") {
                continue;
            }
            if let Some(Value::String(s)) = v.get(k).cloned() {
                let n = map.len();
                let n = *map.entry(s).or_insert(n);
                v[k] = Value::String(format!("#{n}"));
            }
        }
        out.push(v);
    }
    out
}

/// Appends one message through a resumed writer and returns the file's lines before it.
fn append_and_strip(p: &Path) -> String {
    let (mut w, _) = SessionWriter::open(p).unwrap();
    w.append_message(user("after migration")).unwrap();
    let now = std::fs::read_to_string(p).unwrap();
    let (before, last) = now.trim_end().rsplit_once('\n').unwrap();
    assert!(last.contains("after migration"));
    format!("{before}\n")
}

#[test]
fn v1_migrates_to_v3_like_pi_only_when_written_with_backup() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "v1.jsonl", V1);
    let l = load(&p).unwrap();
    assert_eq!(l.migrated_from, Some(1));
    // Reading never writes.
    assert_eq!(std::fs::read_to_string(&p).unwrap(), V1);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let now = append_and_strip(&p);
    let backup = dir.path().join("v1.jsonl.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), V1);
    // Same keys, same order, same values as pi's own migration, ids aside.
    let ours = normalize_ids(&now);
    let pis = normalize_ids(V1_BY_PI);
    assert_eq!(ours, pis);
    for (a, b) in now.lines().zip(V1_BY_PI.lines()) {
        let ka: Vec<String> = serde_json::from_str::<Value>(a)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let kb: Vec<String> = serde_json::from_str::<Value>(b)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(ka, kb);
    }
    // The compaction now points at the "two" message; the hook message is a custom message.
    let ctx = tree::build_context(&l.entries, l.entries.last().map(Entry::id));
    let roles: Vec<&str> = ctx.messages.iter().map(AgentMessage::role).collect();
    assert_eq!(
        roles,
        [
            "compactionSummary",
            "user",
            "assistant",
            "custom",
            "user",
            "assistant"
        ]
    );
    // Loading again is a no-op.
    let again = load(&p).unwrap();
    assert_eq!(again.migrated_from, None);
    assert!(!dir.path().join("v1.jsonl.bak.1").exists());
}

#[test]
fn v2_migrates_to_v3_keeping_ids() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "v2.jsonl", V2);
    std::fs::write(dir.path().join("v2.jsonl.bak"), "older backup").unwrap();
    let l = load(&p).unwrap();
    assert_eq!(l.migrated_from, Some(2));
    assert!(matches!(
        l.entries[1].message(),
        Some(AgentMessage::Custom(_))
    ));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), V2);
    assert_eq!(append_and_strip(&p), V2_BY_PI);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("v2.jsonl.bak")).unwrap(),
        "older backup"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("v2.jsonl.bak.1")).unwrap(),
        V2
    );
}

#[test]
fn lazy_flush_then_one_append_per_entry() {
    let dir = tempfile::tempdir().unwrap();
    let sdir = dir.path().join("sessions/--w--");
    let mut w = SessionWriter::create(&sdir, "/w", None);
    let path = w.path().unwrap().to_path_buf();
    assert!(path
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .ends_with(&format!("_{}.jsonl", w.session_id())));
    let m = w.append_model_change("mock", "m1").unwrap();
    w.append_thinking_level_change("off").unwrap();
    assert!(!path.exists(), "setup entries alone leave no file");
    // pi 1.6.0: the file is created at the first user message, so a prompt whose reply
    // never comes is still on disk.
    w.append_message(user("hello")).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 4);
    w.append_message(assistant("hi")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    let h: SessionHeader = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(h.id, w.session_id());
    for (line, e) in lines[1..].iter().zip(w.entries()) {
        assert_eq!(*line, e.to_line());
    }
    w.append_session_info("  named  ").unwrap();
    w.append_label(&m, Some("start")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 7);
    assert!(text.ends_with('\n'));
    // Parent chain follows the leaf.
    let es = w.entries();
    assert_eq!(es[0].parent_id(), None);
    for pair in es.windows(2) {
        assert_eq!(pair[1].parent_id(), Some(pair[0].id()));
    }
    // Resuming sees the same entries and keeps appending to the same file.
    let (mut r, warnings) = SessionWriter::open(&path).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(r.entries(), w.entries());
    assert_eq!(r.tree().name(), Some("named"));
    r.append_message(user("again")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 8);
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("\"type\":\"session\""))
            .count(),
        1
    );
}

#[test]
fn resume_after_torn_write_starts_a_fresh_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = SessionWriter::new("/w", Some(dir.path().join("s.jsonl")), None);
    w.append_message(user("q")).unwrap();
    w.append_message(assistant("a")).unwrap();
    let path = w.path().unwrap().to_path_buf();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"type\":\"mess").unwrap();
    let (mut r, warnings) = SessionWriter::open(&path).unwrap();
    assert_eq!(warnings.len(), 1);
    r.append_message(user("next")).unwrap();
    let l = load(&path).unwrap();
    assert_eq!(l.entries.len(), 3);
    assert_eq!(l.warnings.len(), 1);
}

#[test]
fn in_memory_writes_nothing() {
    let mut w = SessionWriter::in_memory("/w");
    assert!(w.path().is_none());
    w.append_message(user("q")).unwrap();
    w.append_message(assistant("a")).unwrap();
    w.append_custom_message("note", UserContent::Text("x".into()), true, None)
        .unwrap();
    assert_eq!(w.entries().len(), 3);
    assert_eq!(w.build_context().messages.len(), 3);
}

#[test]
fn entry_ids_are_unique_short_hex() {
    let mut w = SessionWriter::in_memory("/w");
    for _ in 0..200 {
        w.append_custom("k", None).unwrap();
    }
    let ids: std::collections::HashSet<&str> = w.entries().iter().map(Entry::id).collect();
    assert_eq!(ids.len(), 200);
    assert!(ids
        .iter()
        .all(|i| i.len() == 8 && i.bytes().all(|b| b.is_ascii_hexdigit())));
}
