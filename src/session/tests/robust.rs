//! Reading every shape a pi version wrote, never writing on a read, never losing a line.

use super::entry::*;
use super::file::*;
use super::*;
use crate::ai::{Message, StopReason};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// pi-mono's own `large-session.jsonl`: a v1 file whose assistant usage has no `totalTokens`.
const LARGE: &str = include_str!("../../../fixtures/sessions/pi-mono-large-session.jsonl");
const ALL: &str = include_str!("../../../fixtures/sessions/ts-all-entries.jsonl");
const V1: &str = include_str!("../../../fixtures/sessions/ts-v1.jsonl");
const V2: &str = include_str!("../../../fixtures/sessions/ts-v2.jsonl");

fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn roles(messages: &[AgentMessage]) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for m in messages {
        *out.entry(m.role().to_string()).or_insert(0) += 1;
    }
    out
}

#[test]
fn the_large_pi_mono_session_resumes_with_all_914_messages_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "large.jsonl", LARGE);
    let (w, warnings) = SessionWriter::open(&p).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let ctx = w.build_context();
    assert_eq!(ctx.messages.len(), 914);
    let r = roles(&ctx.messages);
    assert_eq!(r["assistant"], 453);
    assert_eq!(r["toolResult"], 373);
    assert_eq!(r["user"], 88);
    // File order, and every tool result follows the assistant message that called it.
    let file_order: Vec<i64> = LARGE
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["message"]["timestamp"].as_i64())
        .collect();
    let ours: Vec<i64> = ctx.messages.iter().filter_map(|m| m.timestamp()).collect();
    assert_eq!(ours, file_order);
    let llm = to_llm_messages(&ctx.messages);
    let mut open_calls = std::collections::HashSet::new();
    for m in &llm {
        match m {
            Message::Assistant(a) => open_calls.extend(a.tool_calls().map(|c| c.id.clone())),
            Message::ToolResult(t) => assert!(open_calls.contains(&t.tool_call_id)),
            Message::User(_) => {}
        }
    }
    // pi's `get_session_stats` for this file (pi 0.73.1, side by side).
    let s = ops::stats(&w, 0);
    assert_eq!(
        (
            s.user_messages,
            s.assistant_messages,
            s.tool_calls,
            s.tool_results
        ),
        (88, 453, 391, 373)
    );
    assert_eq!(s.tokens.total, 47_609_906);
    assert_eq!(json::js_number(s.cost), "30.330197699999985");
    // Reading never writes, even a v1 file.
    assert_eq!(std::fs::read_to_string(&p).unwrap(), LARGE);
}

#[test]
fn old_message_shapes_get_pis_defaults_and_stay_in_the_conversation() {
    let text = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"u","parentId":null,"timestamp":"t","message":{"role":"user","content":"q"}}
{"type":"message","id":"a","parentId":"u","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"ls","arguments":{}}],"api":"x","provider":"p","model":"m","usage":{"input":3,"output":4,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse"}}
{"type":"message","id":"r","parentId":"a","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"ls","output":"a.txt","isError":false}}
{"type":"message","id":"b","parentId":"r","timestamp":"t","message":{"role":"assistant","content":[],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"deferred","timestamp":9}}
"#;
    let p = parse_session(text.as_bytes()).unwrap();
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let ctx = tree::build_context(&p.entries, Some("b"));
    let llm = to_llm_messages(&ctx.messages);
    assert_eq!(llm.len(), 4);
    let Message::Assistant(a) = &llm[1] else {
        panic!()
    };
    assert_eq!(a.usage.total_tokens, 0);
    assert_eq!(a.usage.cost.total, 0.0);
    let Message::ToolResult(r) = &llm[2] else {
        panic!()
    };
    assert_eq!(r.content, vec![crate::ai::Content::text("a.txt")]);
    let Message::Assistant(b) = &llm[3] else {
        panic!()
    };
    assert_eq!(b.stop_reason, StopReason::Error);
    assert_eq!(ctx.model, Some(("p".into(), "m".into())));
}

#[test]
fn numbers_survive_a_round_trip_as_javascript_prints_them() {
    let line = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.010668750000000001,"output":1e-7,"cacheRead":0.1,"cacheWrite":123456789.12345679,"total":5e-324}},"stopReason":"stop","timestamp":1763681581544}}"#;
    let v: Value = serde_json::from_str(line).unwrap();
    assert_eq!(json::to_js_string(&v), line);
    let e: Entry = serde_json::from_str(line).unwrap();
    assert!(matches!(e, Entry::Message(_)));
    assert_eq!(e.to_line(), line);
}

/// Mutations of a session file: truncations at every few bytes, a byte flipped, lines
/// dropped, duplicated or swapped, the header's version lost or mangled.
fn mutants(text: &str) -> Vec<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out: Vec<Vec<u8>> = Vec::new();
    let step = (bytes.len() / 12).max(1);
    for cut in (0..bytes.len()).step_by(step) {
        out.push(bytes[..cut].to_vec());
        let mut flipped = bytes.to_vec();
        flipped[cut] ^= 0x55;
        out.push(flipped);
    }
    let lines: Vec<&str> = text.lines().collect();
    for i in 0..lines.len() {
        let mut l = lines.clone();
        l.remove(i);
        out.push(l.join("\n").into_bytes());
        let mut l = lines.clone();
        l.insert(i, lines[i]);
        out.push(l.join("\n").into_bytes());
        if i + 1 < lines.len() {
            let mut l = lines.clone();
            l.swap(i, i + 1);
            out.push(l.join("\n").into_bytes());
        }
    }
    for (from, to) in [
        (r#""version":3,"#, ""),
        (r#""version":3,"#, r#""version":"3","#),
        (r#""version":3,"#, r#""version":null,"#),
        (r#""version":3,"#, r#""version":1,"#),
        (r#""version":3,"#, r#""version":3.0,"#),
    ] {
        out.push(text.replacen(from, to, 1).into_bytes());
    }
    out
}

#[test]
fn loading_any_damaged_file_leaves_its_bytes_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let large_head: String = LARGE.lines().take(12).collect::<Vec<_>>().join("\n");
    for (n, source) in [ALL, V1, V2, large_head.as_str()].into_iter().enumerate() {
        for (i, bytes) in mutants(source).into_iter().enumerate() {
            let p = write(dir.path(), &format!("m{n}-{i}.jsonl"), &bytes);
            if let Ok((w, _)) = SessionWriter::open(&p) {
                let _ = w.build_context();
                let _ = w.entries().len();
                let _ = w.name();
                let _ = ops::stats(&w, 1000);
                let _ = export::render_html(&w, &Default::default());
            }
            let _ = load(&p);
            assert_eq!(
                std::fs::read(&p).unwrap(),
                bytes,
                "mutant {n}-{i} was written"
            );
        }
    }
    // Nothing else appeared (no backup, no temp file).
    let files = std::fs::read_dir(dir.path()).unwrap().count();
    let expected: usize = [ALL, V1, V2, large_head.as_str()]
        .iter()
        .map(|s| mutants(s).len())
        .sum();
    assert_eq!(files, expected);
}

#[test]
fn a_header_without_its_version_keeps_ids_and_branches_and_is_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    for mangled in ["", r#""version":"three","#] {
        let text = ALL.replacen(r#""version":3,"#, mangled, 1);
        let p = write(dir.path(), "s.jsonl", &text);
        let original = load(&write(dir.path(), "orig.jsonl", ALL)).unwrap();
        let (mut w, warnings) = SessionWriter::open(&p).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(w.entries(), original.entries.as_slice());
        // Appending adds one line: nothing renumbered, spliced or dropped.
        w.append_message(files_tests::user("more")).unwrap();
        let now = std::fs::read_to_string(&p).unwrap();
        assert!(now.starts_with(&text));
        assert_eq!(now.lines().count(), text.lines().count() + 1);
        assert!(!dir.path().join("s.jsonl.bak").exists());
    }
}

#[test]
fn a_migration_writes_only_on_append_keeps_every_line_and_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<&str> = V1.lines().collect();
    // A garbage line and a blank line inside, no newline at the end.
    let text = format!(
        "{}\n{{not json\n\n{}",
        lines[..3].join("\n"),
        lines[3..].join("\n")
    );
    let p = write(dir.path(), "v1.jsonl", &text);
    let (mut w, warnings) = SessionWriter::open(&p).unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let ids: Vec<String> = w.entries().iter().map(|e| e.id().to_string()).collect();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
    // The same ids on every read, so a later read agrees with this one.
    let (again, _) = SessionWriter::open(&p).unwrap();
    let again: Vec<String> = again.entries().iter().map(|e| e.id().to_string()).collect();
    assert_eq!(ids, again);

    w.append_message(files_tests::user("more")).unwrap();
    let backup = dir.path().join("v1.jsonl.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), text);
    let now = std::fs::read_to_string(&p).unwrap();
    let now_lines: Vec<&str> = now.lines().collect();
    assert_eq!(now_lines.len(), text.lines().count() + 1);
    assert_eq!(now_lines[3], "{not json");
    assert_eq!(now_lines[4], "");
    assert!(now_lines[0].contains(r#""version":3"#));
    // Reading it back gives the same entries, now without a migration.
    let l = load(&p).unwrap();
    assert_eq!(l.migrated_from, None);
    let back: Vec<String> = l.entries.iter().map(|e| e.id().to_string()).collect();
    assert_eq!(&back[..ids.len()], ids.as_slice());
    // A second append goes to the end of the migrated file.
    w.append_message(files_tests::user("again")).unwrap();
    assert_eq!(
        std::fs::read_to_string(&p).unwrap().lines().count(),
        now_lines.len() + 1
    );
}

#[test]
fn a_migrated_file_that_changed_meanwhile_is_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "v2.jsonl", V2);
    let (mut w, _) = SessionWriter::open(&p).unwrap();
    let grown = format!("{V2}{{\"type\":\"custom\",\"customType\":\"x\",\"id\":\"zz\",\"parentId\":null,\"timestamp\":\"t\"}}\n");
    std::fs::write(&p, &grown).unwrap();
    let err = w.append_message(files_tests::assistant("a")).unwrap_err();
    assert!(err.to_string().contains("changed on disk"), "{err}");
    assert_eq!(w.write_error(), Some(err.to_string().as_str()));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), grown);
}

#[test]
fn special_files_are_refused_and_never_block() {
    let e = SessionWriter::open(Path::new("/dev/zero")).err().unwrap();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    #[cfg(unix)]
    {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("s.jsonl");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = SessionWriter::open(&fifo).err().unwrap();
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert!(load(&fifo).is_err());
        assert!(!has_valid_header(&fifo));
        assert!(dir::session_info(&fifo).is_none());
    }
}

#[test]
fn a_copied_branch_keeps_every_line_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    // Odd but valid lines: usage without totalTokens, unknown fields, odd key order.
    let text = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w","custom":{"k":1}}
{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"timestamp":1,"role":"user","content":"q"}}
{"type":"message","id":"a","parentId":"u","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"x","future":true}],"api":"x","provider":"p","model":"m","usage":{"input":3,"output":4,"cacheRead":0,"cacheWrite":0,"cost":{"input":0.010668750000000001,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.010668750000000001}},"stopReason":"stop","timestamp":2,"thinkingLevel":"high"}}
{"type":"usage","id":"g","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","kind":"cache_warm"}
"#;
    let p = write(dir.path(), "s.jsonl", text);
    let (w, _) = SessionWriter::open(&p).unwrap();
    let out_dir = dir.path().join("out");
    let mut copy = ops::clone_branch(&w, &out_dir).unwrap();
    copy.append_message(files_tests::user("next")).unwrap();
    let written = std::fs::read_to_string(copy.path().unwrap()).unwrap();
    let body: Vec<&str> = written.lines().skip(1).collect();
    for line in text.lines().skip(1) {
        assert!(body.contains(&line), "lost or changed: {line}");
    }
    // Eagerly loaded (migrated) sessions copy their lines too.
    let p1 = write(dir.path(), "v2.jsonl", V2);
    let (w1, _) = SessionWriter::open(&p1).unwrap();
    let l = load(&p1).unwrap();
    let leaf = w1.leaf_id().unwrap().to_string();
    let c = ops::branched_session(&w1, &leaf, &out_dir).unwrap();
    for (e, line) in l.entries.iter().zip(&l.lines) {
        if !matches!(e, Entry::Label(_)) {
            assert_eq!(c.line_of(e.id()).as_deref(), Some(line.as_str()));
        }
    }
}

#[test]
fn a_session_file_deleted_while_running_is_written_again_whole_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("sub").join("s.jsonl");
    let mut w = SessionWriter::new("/w", Some(p.clone()), None);
    w.append_message(files_tests::user("q")).unwrap();
    w.append_message(files_tests::assistant("a")).unwrap();
    let before = std::fs::read_to_string(&p).unwrap();
    std::fs::remove_dir_all(dir.path().join("sub")).unwrap();
    let err = w.append_message(files_tests::user("after")).unwrap_err();
    assert!(err.to_string().contains("deleted"), "{err}");
    let now = std::fs::read_to_string(&p).unwrap();
    assert!(now.starts_with(&before));
    assert_eq!(now.lines().count(), 4);
    // The next write is a plain append again, and clears the error.
    assert!(w.write_error().is_some());
    w.append_message(files_tests::assistant("b")).unwrap();
    assert!(w.write_error().is_none());
    assert_eq!(std::fs::read_to_string(&p).unwrap().lines().count(), 5);
}

#[test]
fn a_file_replaced_by_another_program_is_appended_to_not_the_old_inode() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    let mut w = SessionWriter::new("/w", Some(p.clone()), None);
    w.append_message(files_tests::user("q")).unwrap();
    w.append_message(files_tests::assistant("a")).unwrap();
    w.append_message(files_tests::user("q2")).unwrap();
    // Another program rewrites the file atomically (as the TypeScript pi does on migration).
    let text = std::fs::read_to_string(&p).unwrap();
    crate::util::atomic::replace(&p, text.as_bytes(), Default::default()).unwrap();
    w.append_message(files_tests::assistant("a2")).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap().lines().count(), 5);
}

const PI087: &str = include_str!("../../../fixtures/sessions/pi-0.87.1-rpc.jsonl");

/// What pi 0.87.1 itself reported for [`PI087`] (see the fixture's `expected.json`).
fn pi087_expected() -> Value {
    serde_json::from_str(include_str!(
        "../../../fixtures/sessions/pi-0.87.1-rpc.expected.json"
    ))
    .unwrap()
}

fn text_of(m: &Message) -> String {
    let blocks = match m {
        Message::User(u) => match &u.content {
            crate::ai::UserContent::Text(t) => return t.clone(),
            crate::ai::UserContent::Blocks(b) => b.clone(),
        },
        Message::Assistant(a) => a.content.clone(),
        Message::ToolResult(t) => t.content.clone(),
    };
    blocks
        .iter()
        .filter_map(|b| match b {
            crate::ai::Content::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_session_written_by_pi_0_87_resumes_like_pi_0_87_resumes_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "s.jsonl", PI087);
    let (lazy, warnings) = SessionWriter::open(&p).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let eager = SessionWriter::from_loaded(load(&p).unwrap());
    let ctx = lazy.build_context();
    assert_eq!(ctx, eager.build_context());
    let expected = pi087_expected();
    // The roles pi's get_messages lists: the compaction's system checkpoint first, the edited
    // user message in place, the assistant reply a context edit removed left out.
    let roles: Vec<&str> = ctx.messages.iter().map(AgentMessage::role).collect();
    let want: Vec<&str> = expected["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(roles, want);
    // What goes to the model: everything but the system checkpoint (our own system prompt is
    // built afresh) and pi's next request minus its new prompt.
    let llm = to_llm_messages(&ctx.messages);
    let sent: Vec<(String, String)> = llm
        .iter()
        .map(|m| {
            let role = match m {
                Message::User(_) => "user",
                Message::Assistant(_) => "assistant",
                Message::ToolResult(_) => "tool",
            };
            (role.to_string(), text_of(m))
        })
        .collect();
    let pi_sent: Vec<(String, String)> = expected["lastRequest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(b) => b.iter().filter_map(|b| b["text"].as_str()).collect(),
                _ => String::new(),
            };
            (m["role"].as_str().unwrap().to_string(), text)
        })
        .collect();
    // pi's request was the context before its final reply (which ends ours).
    assert_eq!(sent[..sent.len() - 1], pi_sent[..]);
    // The transcript shows the entries as they are: the edited prompt as typed, the reply an
    // edit removed still there.
    let shown = lazy.transcript();
    assert_eq!(shown, eager.transcript());
    let shown: Vec<String> = to_llm_messages(&shown.messages)
        .iter()
        .map(text_of)
        .collect();
    assert!(shown.contains(&"on the new branch".to_string()));
    assert!(shown.contains(&"Branch answer.".to_string()));
    assert!(!shown.contains(&"EDITED-USER-TEXT".to_string()));
    assert_eq!(lazy.name().as_deref(), Some("renamed-087"));
    assert_eq!(ctx.model, Some(("mock".into(), "mock-model".into())));
    assert_eq!(ctx.thinking_level.as_deref(), Some("medium"));
    // get_session_stats counts the whole file (both branches, the system checkpoint, the
    // compaction's and the branch summary's usage), as 0.87.1 reported it.
    let mut stats: Value =
        serde_json::from_str(&json::to_js_string(&ops::stats(&lazy, 0))).unwrap();
    for k in ["sessionFile", "sessionId"] {
        stats.as_object_mut().unwrap().remove(k);
    }
    assert_eq!(stats, expected["stats"]);
}

#[test]
fn pi_1x_entries_and_fields_survive_every_rewrite_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    // A usage entry and custom header metadata, as the 1.x docs describe them.
    let extra = r#"{"type":"usage","id":"us000001","parentId":"2996f788","timestamp":"2026-11-24T09:49:30.000Z","kind":"cache_warm","provider":"mock","model":"mock-model","usage":{"input":0,"output":0,"cacheRead":50000,"cacheWrite":0,"totalTokens":50000,"cost":{"input":0,"output":0,"cacheRead":0.015,"cacheWrite":0,"total":0.015}}}"#;
    let text = format!(
        "{}{extra}\n",
        PI087.replacen(
            r#""cwd":"/tmp/g87/proj""#,
            r#""cwd":"/tmp/g87/proj","meta":{"origin":"ide","n":1.5}"#,
            1
        )
    );
    let p = write(dir.path(), "s.jsonl", &text);
    let (mut w, warnings) = SessionWriter::open(&p).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    // Resuming appends and never rewrites.
    w.append_message(files_tests::user("ours")).unwrap();
    let now = std::fs::read_to_string(&p).unwrap();
    assert!(now.starts_with(&text));
    // A clone of the whole branch copies every line on it as it was.
    let out = dir.path().join("clone");
    let mut c = ops::clone_branch(&w, &out).unwrap();
    c.append_message(files_tests::assistant("done")).unwrap();
    let cloned = std::fs::read_to_string(c.path().unwrap()).unwrap();
    let branch = w.tree().path(w.leaf_id().unwrap()).len();
    let original: Vec<&str> = now.lines().collect();
    let copied: Vec<&str> = cloned.lines().skip(1).take(branch).collect();
    for line in &copied {
        assert!(original.contains(line), "changed on the way: {line}");
    }
    assert!(copied
        .iter()
        .any(|l| l.contains(r#""type":"context_edit""#)));
    assert!(copied.iter().any(|l| l.contains(r#""role":"system""#)));
    assert!(copied.iter().any(|l| l.contains(r#""systemMessage""#)));
    // A fork into another project copies every entry line as it was.
    let forked = dir::fork(&p, &dir.path().join("fork"), "/elsewhere").unwrap();
    let forked = std::fs::read_to_string(forked).unwrap();
    assert_eq!(
        forked.lines().skip(1).collect::<Vec<_>>(),
        original[1..].to_vec()
    );
}
