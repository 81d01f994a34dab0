//! Compaction: estimates, cut points, preparation, serialization, file lists and branch
//! entry collection.

use super::branch_summary::*;
use super::compaction::*;
use super::entry::*;
use super::files_tests::{assistant, user};
use super::*;
use crate::ai::{
    Content, ImageContent, Message, StopReason, ThinkingContent, ToolCall, ToolResultMessage, Usage,
};
use serde_json::{json, Value};

fn settings(keep: u64) -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: 500,
        keep_recent_tokens: keep,
    }
}

fn tool_call(name: &str, args: Value) -> Content {
    Content::ToolCall(ToolCall {
        id: format!("call-{name}"),
        name: name.into(),
        arguments: args,
        thought_signature: None,
    })
}

fn assistant_with(blocks: Vec<Content>) -> AgentMessage {
    let AgentMessage::Llm(Message::Assistant(mut a)) = assistant("") else {
        unreachable!()
    };
    a.content = blocks;
    AgentMessage::assistant(a)
}

fn tool_result(text: &str) -> AgentMessage {
    AgentMessage::tool_result(ToolResultMessage {
        tool_call_id: "c".into(),
        tool_name: "read".into(),
        content: vec![Content::text(text)],
        details: None,
        is_error: false,
        duration_ms: None,
        timestamp: 0,
        extra: Default::default(),
    })
}

/// A session of `messages` in one line, returned with its entries.
fn session_of(messages: Vec<AgentMessage>) -> SessionWriter {
    let mut w = SessionWriter::in_memory("/tmp");
    for m in messages {
        w.append_message(m).unwrap();
    }
    w
}

fn path(w: &SessionWriter) -> Vec<&Entry> {
    w.tree().path(w.leaf_id().unwrap())
}

#[test]
fn estimates_count_chars_over_four() {
    assert_eq!(estimate_tokens(&user("abcde")), 2);
    let a = assistant_with(vec![
        Content::text("abcd"),
        Content::Thinking(ThinkingContent {
            thinking: "efgh".into(),
            thinking_signature: None,
            redacted: false,
        }),
        tool_call("read", json!({"path": "a.rs"})),
    ]);
    // 4 + 4 + "read" + {"path":"a.rs"} (15) = 27 → 7
    assert_eq!(estimate_tokens(&a), 7);
    let r = AgentMessage::tool_result(ToolResultMessage {
        tool_call_id: "c".into(),
        tool_name: "read".into(),
        content: vec![
            Content::text("xy"),
            Content::Image(ImageContent {
                data: String::new(),
                mime_type: "image/png".into(),
            }),
        ],
        details: None,
        is_error: false,
        duration_ms: None,
        timestamp: 0,
        extra: Default::default(),
    });
    assert_eq!(estimate_tokens(&r), (4800 + 2u64).div_ceil(4));
    // UTF-16 units, as JavaScript counts: one emoji is two.
    assert_eq!(estimate_tokens(&user("😀😀😀😀")), 2);
}

#[test]
fn context_tokens_use_last_valid_usage_plus_trailing_estimates() {
    let AgentMessage::Llm(Message::Assistant(mut a)) = assistant("ok") else {
        unreachable!()
    };
    a.usage = Usage {
        input: 100,
        output: 20,
        ..Default::default()
    };
    let mut failed = a.clone();
    failed.stop_reason = StopReason::Error;
    failed.usage.input = 9999;
    let msgs = vec![
        user("hi"),
        AgentMessage::assistant(a.clone()),
        user("12345678"),
        AgentMessage::assistant(failed),
    ];
    let est = estimate_context_tokens(&msgs);
    assert_eq!(est.last_usage_index, Some(1));
    assert_eq!(est.usage_tokens, 120);
    assert_eq!(est.tokens, 120 + 2 + 1);
    a.usage.total_tokens = 500;
    assert_eq!(calculate_context_tokens(&a.usage), 500);
    let s = settings(10);
    assert!(should_compact(1501, 2000, &s));
    assert!(!should_compact(1500, 2000, &s));
    assert!(!should_compact(
        1_000_000,
        2000,
        &CompactionSettings {
            enabled: false,
            ..s
        }
    ));
}

#[test]
fn cut_point_never_lands_on_a_tool_result() {
    let long = "x".repeat(400);
    let w = session_of(vec![
        user("u1"),
        assistant_with(vec![tool_call("read", json!({"path": "a"}))]),
        tool_result(&long),
        assistant("a1"),
        user("u2"),
    ]);
    let p = path(&w);
    // Walking back: u2, a1, then the 100-token tool result passes the budget; the closest
    // valid cut at or after it is a1.
    let cut = find_cut_point(&p, 0, p.len(), 50);
    assert_eq!(cut.first_kept_entry_index, 3);
    assert!(cut.is_split_turn);
    assert_eq!(cut.turn_start_index, Some(0));
}

#[test]
fn cut_at_user_message_is_not_a_split_turn() {
    let big = "y".repeat(800);
    let w = session_of(vec![
        user("u1"),
        assistant("a1"),
        user(&big),
        assistant("a2"),
    ]);
    let p = path(&w);
    let cut = find_cut_point(&p, 0, p.len(), 100);
    assert_eq!(cut.first_kept_entry_index, 2);
    assert!(!cut.is_split_turn);
    assert_eq!(cut.turn_start_index, None);
}

#[test]
fn only_settings_entries_give_start_and_no_split() {
    let mut w = SessionWriter::in_memory("/tmp");
    w.append_thinking_level_change("high").unwrap();
    w.append_model_change("p", "m").unwrap();
    let p = path(&w);
    let cut = find_cut_point(&p, 0, p.len(), 10);
    assert_eq!(
        cut,
        CutPoint {
            first_kept_entry_index: 0,
            turn_start_index: None,
            is_split_turn: false
        }
    );
}

#[test]
fn settings_entries_before_the_cut_are_kept() {
    let big = "z".repeat(800);
    let mut w = SessionWriter::in_memory("/tmp");
    w.append_message(user("u1")).unwrap();
    w.append_message(assistant("a1")).unwrap();
    w.append_model_change("p", "m").unwrap();
    w.append_message(user(&big)).unwrap();
    let p = path(&w);
    let cut = find_cut_point(&p, 0, p.len(), 100);
    assert_eq!(cut.first_kept_entry_index, 2, "model change rides along");
    // pi's rule: a cut entry that is not a user message looks back for a turn start, so this
    // counts as a split turn opened by u1.
    assert!(cut.is_split_turn);
    assert_eq!(cut.turn_start_index, Some(0));
}

#[test]
fn prepare_respects_previous_compaction_boundary_and_carries_files() {
    let big = "w".repeat(800);
    let mut w = SessionWriter::in_memory("/tmp");
    w.append_message(user("old")).unwrap();
    let a_old = w
        .append_message(assistant_with(vec![tool_call(
            "edit",
            json!({"path": "src/old.rs"}),
        )]))
        .unwrap();
    let kept = w.append_message(user("kept")).unwrap();
    w.append_compaction(
        "S1",
        &kept,
        1234,
        Some(json!({"readFiles": ["README.md"], "modifiedFiles": ["src/prev.rs"]})),
        None,
        Some(false),
    )
    .unwrap();
    assert!(
        prepare_compaction(&path(&w), &settings(100)).is_none(),
        "already compacted"
    );
    w.append_message(assistant_with(vec![
        Content::text("reading"),
        tool_call("read", json!({"path": "src/new.rs"})),
        tool_call("write", json!({"path": "README.md"})),
    ]))
    .unwrap();
    w.append_message(tool_result("contents")).unwrap();
    w.append_message(user(&big)).unwrap();
    let AgentMessage::Llm(Message::Assistant(mut done)) = assistant("done") else {
        unreachable!()
    };
    done.usage.total_tokens = 777;
    w.append_message(AgentMessage::assistant(done)).unwrap();
    let p = path(&w);
    let prep = prepare_compaction(&p, &settings(100)).unwrap();
    assert_eq!(prep.previous_summary.as_deref(), Some("S1"));
    // Summarized from the previous firstKept ("kept") up to the big user message.
    let roles: Vec<&str> = prep
        .messages_to_summarize
        .iter()
        .map(AgentMessage::role)
        .collect();
    assert_eq!(roles, ["user", "assistant", "toolResult"]);
    assert!(!prep.is_split_turn);
    assert_eq!(prep.first_kept_entry_id, p[6].id());
    assert_ne!(prep.first_kept_entry_id, a_old);
    let (read, modified) = prep.file_ops.lists();
    assert_eq!(read, ["src/new.rs"]);
    assert_eq!(modified, ["README.md", "src/prev.rs"]);
    assert_eq!(
        prep.file_ops.details(),
        json!({"readFiles": ["src/new.rs"], "modifiedFiles": ["README.md", "src/prev.rs"]})
    );
    // tokensBefore: the context's last usage (nothing follows it).
    assert_eq!(prep.tokens_before, 777);
}

#[test]
fn prepare_split_turn_separates_turn_prefix() {
    let big = "q".repeat(800);
    let w = session_of(vec![
        user("first"),
        assistant("a1"),
        user("do it"),
        assistant_with(vec![tool_call("read", json!({"path": "x"}))]),
        tool_result("r"),
        assistant(&big),
    ]);
    let p = path(&w);
    let prep = prepare_compaction(&p, &settings(100)).unwrap();
    assert!(prep.is_split_turn);
    assert_eq!(prep.first_kept_entry_id, p[5].id());
    assert_eq!(prep.messages_to_summarize.len(), 2);
    let roles: Vec<&str> = prep
        .turn_prefix_messages
        .iter()
        .map(AgentMessage::role)
        .collect();
    assert_eq!(roles, ["user", "assistant", "toolResult"]);
    assert_eq!(prep.file_ops.lists().0, ["x"]);
}

#[test]
fn file_lists_are_sorted_once_each_and_modified_files_are_not_read() {
    let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
    let ops = FileOps {
        read: set(&["b", "d", "a"]),
        written: set(&["z", "b"]),
        edited: set(&["c", "b", "a"]),
    };
    let (read, modified) = ops.lists();
    assert_eq!(read, ["d"]);
    assert_eq!(modified, ["a", "b", "c", "z"]);
}

#[test]
fn serialization_labels_each_part_leaves_thinking_out_and_cuts_long_tool_results() {
    let long = "r".repeat(2500);
    let msgs = vec![
        user("hello"),
        assistant_with(vec![
            Content::Thinking(ThinkingContent {
                thinking: "hmm".into(),
                thinking_signature: None,
                redacted: false,
            }),
            Content::text("sure"),
            tool_call("read", json!({"path": "a.rs", "offset": 3})),
            tool_call("bash", json!({"command": "ls"})),
        ]),
        tool_result(&long),
    ];
    let text = serialize_conversation(&to_llm_messages(&msgs));
    let expected = format!(
        "[User]: hello\n\n[Assistant]: sure\n\n\
         [Assistant tool calls]: read(path=\"a.rs\", offset=3); bash(command=\"ls\")\n\n\
         [Tool result]: {}\n\n[... 500 more characters truncated]",
        "r".repeat(2000)
    );
    assert_eq!(text, expected);
}

#[test]
fn file_lists_format_and_prompts_have_the_sections() {
    assert_eq!(format_file_operations(&[], &[]), "");
    assert_eq!(
        format_file_operations(&["a".into(), "b".into()], &["c".into()]),
        "\n\n<read-files>\na\nb\n</read-files>\n\n<modified-files>\nc\n</modified-files>"
    );
    let req = history_summary_request("[User]: x", None, Some("focus on tests"));
    assert!(req.starts_with("<conversation>\n[User]: x\n</conversation>\n\n"));
    assert!(req.ends_with("\n\nAdditional focus: focus on tests"));
    for h in [
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ] {
        assert!(req.contains(h), "{h}");
        assert!(UPDATE_SUMMARY_PROMPT.contains(h), "{h}");
    }
    let upd = history_summary_request("c", Some("OLD"), None);
    assert!(upd.contains("</conversation>\n\n<previous-summary>\nOLD\n</previous-summary>\n\n"));
    assert_eq!(
        join_split_turn("H", "T"),
        "H\n\n---\n\n**Turn Context (split turn):**\n\nT"
    );
}

#[test]
fn branch_entries_stop_at_the_common_ancestor() {
    let mut w = SessionWriter::in_memory("/tmp");
    let root = w.append_message(user("root")).unwrap();
    let a = w.append_message(assistant("a")).unwrap();
    w.append_message(user("left")).unwrap();
    let left_leaf = w
        .append_message(assistant_with(vec![tool_call(
            "write",
            json!({"path": "f.txt"}),
        )]))
        .unwrap();
    w.branch(&a).unwrap();
    let right = w.append_message(user("right")).unwrap();
    let (entries, common) =
        collect_entries_for_branch_summary(w.entries(), Some(&left_leaf), &right);
    assert_eq!(common.as_deref(), Some(a.as_str()));
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[1].id(), left_leaf);
    let (none, _) = collect_entries_for_branch_summary(w.entries(), None, &root);
    assert!(none.is_empty());
    let prep = prepare_branch_entries(&entries, 0);
    assert_eq!(prep.messages.len(), 2);
    assert_eq!(prep.file_ops.lists().1, ["f.txt"]);
    // A tight budget keeps only the newest messages.
    let prep = prepare_branch_entries(&entries, 1);
    assert!(prep.messages.is_empty());
    assert_eq!(
        prep.file_ops.lists().1,
        ["f.txt"],
        "files come from every entry"
    );
}

/// pi 1.x: system messages are prompt state, never summarized (the compaction entry records
/// their replay instead).
#[test]
fn system_messages_are_not_summarized() {
    let system = AgentMessage::from_value(json!({"role": "system", "content": "",
        "sections": {"preamble": "P"}, "timestamp": 1}));
    let big = "y".repeat(800);
    let w = session_of(vec![
        system,
        user("u1"),
        assistant("a1"),
        user(&big),
        assistant("a2"),
    ]);
    let p = path(&w);
    let prep = prepare_compaction(&p, &settings(100)).unwrap();
    let roles: Vec<&str> = prep
        .messages_to_summarize
        .iter()
        .map(AgentMessage::role)
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
}

/// Without usage, a checkpoint and its patches count once, as the state they replay to.
#[test]
fn estimate_counts_the_replayed_system_state_once() {
    let checkpoint = AgentMessage::from_value(json!({"role": "system", "content": "",
        "sections": {"preamble": "x".repeat(400)}, "timestamp": 1}));
    let patch = AgentMessage::from_value(json!({"role": "system", "content": "",
        "sections": {"preamble": "y".repeat(40)}, "timestamp": 2}));
    let u = user("hi");
    let e = estimate_context_tokens(&[checkpoint.clone(), u.clone(), patch]);
    assert_eq!(e.tokens, 10 + estimate_tokens(&u));
    let e = estimate_context_tokens(&[checkpoint, u.clone()]);
    assert_eq!(e.tokens, 100 + estimate_tokens(&u));
}
