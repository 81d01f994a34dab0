//! Tree operations: fork messages, fork/clone files, names, labels, stats and the last
//! assistant text, on pi's own `ts-all-entries` session.

use super::files_tests::{assistant, user};
use super::ops::*;
use super::*;
use crate::ai::{Message, StopReason};
use std::path::{Path, PathBuf};

fn fixture_copy(dir: &Path) -> PathBuf {
    let p = dir.join("src.jsonl");
    std::fs::write(&p, super::entries_tests::ALL_ENTRIES).unwrap();
    p
}

fn file_lines(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn ids(lines: &[serde_json::Value]) -> Vec<&str> {
    lines[1..]
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect()
}

#[test]
fn fork_messages_are_all_user_messages_in_file_order() {
    let d = tempfile::tempdir().unwrap();
    let (w, _) = SessionWriter::open(&fixture_copy(d.path())).unwrap();
    let got = user_messages_for_fork(&w);
    let want = [
        ("23f8706d", "list files"),
        ("730ca084", "second\u{2028}question"),
        ("7395897c", "third"),
        ("74ea823e", "after nav"),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    );
}

#[test]
fn fork_before_a_user_message_copies_the_path_without_labels() {
    let d = tempfile::tempdir().unwrap();
    let src = fixture_copy(d.path());
    let (w, _) = SessionWriter::open(&src).unwrap();
    let out_dir = d.path().join("out");
    let (f, text) = fork_at(&w, "74ea823e", &out_dir).unwrap();
    assert_eq!(text, "after nav");
    assert_ne!(f.session_id(), w.session_id());
    let p = f.path().unwrap().to_path_buf();
    assert!(p.starts_with(&out_dir));
    let lines = file_lines(&p);
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 3);
    assert_eq!(lines[0]["cwd"], "/tmp/gen/proj");
    assert_eq!(lines[0]["parentSession"], src.to_string_lossy().as_ref());
    assert_eq!(
        ids(&lines),
        [
            "c54e2390", "c29750fb", "14f94db5", "23f8706d", "1f22d8b6", "3c7309fa", "d7886edc",
            "3b0d86c0", "726801da", "188c07ee", "b9693f3b", "6a3aebab", "3d6a74c4", "2773d7ce"
        ]
    );
    // The branch summary hung off a label entry; it is re-linked to the previous entry.
    assert_eq!(lines[14]["parentId"], "3d6a74c4");
    assert_eq!(f.leaf_id(), Some("2773d7ce"));
    // The copy is a complete branch: its context has the original messages.
    assert_eq!(f.build_context().messages.len(), 8);
}

#[test]
fn fork_without_assistant_is_not_written_and_first_message_forks_empty() {
    let d = tempfile::tempdir().unwrap();
    let (w, _) = SessionWriter::open(&fixture_copy(d.path())).unwrap();
    let (f, text) = fork_at(&w, "23f8706d", d.path()).unwrap();
    assert_eq!(text, "list files");
    assert_eq!(f.entries().len(), 3);
    assert!(!f.path().unwrap().exists());
    assert_eq!(
        fork_at(&w, "1f22d8b6", d.path()).err().unwrap().to_string(),
        "Invalid entry ID for forking"
    );
    assert_eq!(
        fork_at(&w, "nope", d.path()).err().unwrap().to_string(),
        "Invalid entry ID for forking"
    );

    let mut s = SessionWriter::create(d.path(), "/w", None);
    let first = s.append_message(user("hello")).unwrap();
    s.append_message(assistant("hi")).unwrap();
    let (f, text) = fork_at(&s, &first, d.path()).unwrap();
    assert_eq!(text, "hello");
    assert!(f.entries().is_empty());
    assert_eq!(
        f.header().parent_session.as_deref(),
        s.path()
            .map(|p| p.to_string_lossy().into_owned())
            .as_deref()
    );
}

#[test]
fn clone_copies_the_active_branch_and_keeps_labels() {
    let d = tempfile::tempdir().unwrap();
    let mut s = SessionWriter::create(d.path(), "/w", None);
    assert_eq!(
        clone_branch(&s, d.path()).err().unwrap().to_string(),
        "Cannot clone session: no current entry selected"
    );
    let q = s.append_message(user("q")).unwrap();
    let a = s.append_message(assistant("a")).unwrap();
    set_label(&mut s, &q, Some("start")).unwrap();
    set_label(&mut s, &a, Some("x")).unwrap();
    set_label(&mut s, &a, None).unwrap();
    // An abandoned branch is not cloned.
    s.branch(&q).unwrap();
    let other = s.append_message(assistant("other")).unwrap();
    let c = clone_branch(&s, d.path()).unwrap();
    let lines = file_lines(c.path().unwrap());
    assert_eq!(lines.len(), 4);
    assert_eq!(ids(&lines)[..2], [q.as_str(), other.as_str()]);
    assert_eq!(lines[3]["type"], "label");
    assert_eq!(lines[3]["targetId"], q.as_str());
    assert_eq!(lines[3]["label"], "start");
    assert_eq!(lines[3]["parentId"], other.as_str());
    assert_eq!(
        lines[0]["parentSession"],
        s.path().unwrap().to_string_lossy().as_ref()
    );
}

#[test]
fn names_and_labels_append_entries() {
    let d = tempfile::tempdir().unwrap();
    let src = fixture_copy(d.path());
    let (mut w, _) = SessionWriter::open(&src).unwrap();
    assert_eq!(
        set_name(&mut w, "   ").err().unwrap().to_string(),
        "Session name cannot be empty"
    );
    set_name(&mut w, "  Renamed  ").unwrap();
    set_label(&mut w, "23f8706d", Some("here")).unwrap();
    assert!(set_label(&mut w, "missing", Some("x")).is_err());
    let lines = file_lines(&src);
    assert_eq!(lines.len(), 26);
    assert_eq!(lines[24]["type"], "session_info");
    assert_eq!(lines[24]["name"], "Renamed");
    assert_eq!(lines[24]["parentId"], "5ea2d42c");
    assert_eq!(lines[25]["type"], "label");
    assert_eq!(lines[25]["targetId"], "23f8706d");
    assert_eq!(lines[25]["label"], "here");
    assert_eq!(w.tree().name(), Some("Renamed"));
    set_label(&mut w, "23f8706d", None).unwrap();
    let last = file_lines(&src).pop().unwrap();
    assert!(last.get("label").is_none());
    assert!(w.tree().labels().is_empty());
}

#[test]
fn stats_of_the_fixture_match_pi() {
    let d = tempfile::tempdir().unwrap();
    let src = fixture_copy(d.path());
    let (w, _) = SessionWriter::open(&src).unwrap();
    let s = stats(&w, 200_000);
    // pi 1.x counts the whole file (every branch), as 0.87.1 answers for this fixture.
    assert_eq!(s.user_messages, 4);
    assert_eq!(s.assistant_messages, 5);
    assert_eq!(s.tool_calls, 1);
    assert_eq!(s.tool_results, 1);
    assert_eq!(s.total_messages, 11);
    assert_eq!(s.cost, 0.0);
    let json: serde_json::Value = serde_json::from_str(&json::to_js_string(&s)).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "sessionFile": src.to_string_lossy(),
            "sessionId": "01a20080-bedf-7406-9017-36f72ffdce2c",
            "userMessages": 4, "assistantMessages": 5, "toolCalls": 1, "toolResults": 1,
            "totalMessages": 11,
            "tokens": {"input": 8664, "output": 33, "cacheRead": 0, "cacheWrite": 0, "total": 8697},
            "cost": 0,
            "contextUsage": {"tokens": 2314, "contextWindow": 200000, "percent": 1.157}
        })
    );
    assert!(json::to_js_string(&s).contains("\"cost\":0,"));
    assert!(stats(&w, 0).context_usage.is_none());

    // Right after a compaction the context size is unknown.
    let mut w2 = w;
    w2.branch("34fd133e").unwrap();
    w2.append_compaction("sum", "730ca084", 5000, None, None, None)
        .unwrap();
    let cu = stats(&w2, 1000).context_usage.unwrap();
    assert_eq!((cu.tokens, cu.percent), (None, None));
    assert!(json::to_js_string(&cu).contains("\"tokens\":null"));
}

#[test]
fn token_estimates_count_utf16_like_js() {
    // 5 chars "héllo" + "😀" (2 UTF-16 units) = 7 → ceil(7/4) = 2.
    assert_eq!(estimate_tokens(&user("héllo😀")), 2);
    let msgs = vec![user("hello"), assistant("abcd"), user("12345678")];
    // Last assistant usage is 0 tokens (the helper has none) + trailing 8/4.
    assert_eq!(estimate_context_tokens(&msgs), 2);
}

#[test]
fn last_assistant_text_is_trimmed_text_of_the_last_answer() {
    let d = tempfile::tempdir().unwrap();
    let (w, _) = SessionWriter::open(&fixture_copy(d.path())).unwrap();
    assert_eq!(last_assistant_text(&w).as_deref(), Some("echo: after nav"));
    let mut s = SessionWriter::in_memory("/w");
    assert_eq!(last_assistant_text(&s), None);
    s.append_message(user("q")).unwrap();
    s.append_message(assistant("  spaced  ")).unwrap();
    assert_eq!(last_assistant_text(&s).as_deref(), Some("spaced"));
}

#[test]
fn last_reply_skips_turns_that_ended_badly_without_text() {
    let mut failed = match assistant("") {
        AgentMessage::Llm(Message::Assistant(a)) => a,
        _ => unreachable!(),
    };
    failed.content.clear();
    failed.stop_reason = StopReason::Error;
    assert!(!counts_as_reply(&failed));
    failed.stop_reason = StopReason::ToolUse;
    assert!(!counts_as_reply(&failed));
    failed.stop_reason = StopReason::Stop;
    assert!(
        counts_as_reply(&failed),
        "a normal end counts even without text"
    );
    let msgs = vec![
        assistant("earlier"),
        AgentMessage::Llm(Message::Assistant({
            let mut a = failed.clone();
            a.stop_reason = StopReason::Aborted;
            a
        })),
    ];
    assert_eq!(last_reply_text(&msgs).as_deref(), Some("earlier"));
}
