//! Context building (paths, compaction, branches) and conversion to LLM messages, checked
//! against what the TypeScript pi computes for the same file.

use super::entry::*;
use super::files_tests::{assistant, user};
use super::tree::*;
use super::*;
use crate::ai::Message;
use crate::util::sort;
use serde_json::{json, Value};

const EXPECTED: &str = include_str!("../../../fixtures/sessions/ts-all-entries.context.json");

fn fixture_entries() -> Vec<Entry> {
    file::parse_session(super::entries_tests::ALL_ENTRIES.as_bytes())
        .unwrap()
        .entries
}

/// As JavaScript would serialize it (integral floats as integers), read back.
fn js_value<T: serde::Serialize>(x: &T) -> Value {
    serde_json::from_str(&super::json::to_js_string(x)).unwrap()
}

fn check_leaf(entries: &[Entry], leaf: &str) -> SessionContext {
    let expected: Value = serde_json::from_str(EXPECTED).unwrap();
    let want = &expected[leaf];
    let ctx = build_context(entries, Some(leaf));
    assert_eq!(js_value(&ctx.messages), want["messages"], "{leaf}");
    let model = ctx.model.clone().unwrap();
    assert_eq!(
        json!({"provider": model.0, "modelId": model.1}),
        want["model"]
    );
    assert_eq!(
        ctx.thinking_level.as_deref(),
        want["thinkingLevel"].as_str()
    );
    let llm = to_llm_messages(&ctx.messages);
    assert_eq!(js_value(&llm), want["llm"], "{leaf}");
    ctx
}

#[test]
fn branch_with_summary_matches_pi() {
    let entries = fixture_entries();
    let ctx = check_leaf(&entries, "5ea2d42c");
    let roles: Vec<&str> = ctx.messages.iter().map(AgentMessage::role).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "bashExecution",
            "custom",
            "custom",
            "branchSummary",
            "user",
            "assistant"
        ]
    );
}

#[test]
fn compaction_on_the_other_branch_matches_pi() {
    let entries = fixture_entries();
    let ctx = check_leaf(&entries, "4fd429ea");
    assert!(matches!(
        ctx.messages[0],
        AgentMessage::CompactionSummary(_)
    ));
    assert_eq!(ctx.messages.len(), 7);
}

#[test]
fn two_leaves_two_paths() {
    let entries = fixture_entries();
    let tree = Tree::new(&entries);
    let mut leaves: Vec<&str> = tree.leaves().iter().map(|e| e.id()).collect();
    sort::sort(&mut leaves);
    assert_eq!(leaves, ["4fd429ea", "5ea2d42c"]);
    let a = tree.path("4fd429ea");
    let b = tree.path("5ea2d42c");
    assert_eq!(a[0].id(), b[0].id());
    assert!(a.iter().any(|e| e.kind() == "compaction"));
    assert!(!b.iter().any(|e| e.kind() == "compaction"));
    // The fork point has two children.
    assert_eq!(tree.children(Some("510d6b01")).len(), 2);
    assert_eq!(tree.name(), Some("My Session"));
    // The label was set then cleared.
    assert!(tree.labels().is_empty());
    // No leaf: nothing; unknown leaf: falls back to the last entry.
    assert!(tree.build_context(None).messages.is_empty());
    assert_eq!(
        tree.build_context(Some("nope")),
        tree.build_context(Some("5ea2d42c"))
    );
}

#[test]
fn compaction_keeps_from_first_kept_entry() {
    // [u1, a1, u2, a2, compaction(firstKept = u2), u3, a3] → summary, u2, a2, u3, a3.
    let mut w = SessionWriter::in_memory("/w");
    w.append_thinking_level_change("high").unwrap();
    w.append_message(user("u1")).unwrap();
    w.append_message(assistant("a1")).unwrap();
    let u2 = w.append_message(user("u2")).unwrap();
    w.append_message(assistant("a2")).unwrap();
    w.append_compaction("SUM", &u2, 1234, None, None, None)
        .unwrap();
    w.append_message(user("u3")).unwrap();
    w.append_message(assistant("a3")).unwrap();
    w.append_model_change("other", "m2").unwrap();
    let ctx = w.build_context();
    let roles: Vec<&str> = ctx.messages.iter().map(AgentMessage::role).collect();
    assert_eq!(
        roles,
        [
            "compactionSummary",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(ctx.model, Some(("other".into(), "m2".into())));
    assert_eq!(ctx.thinking_level.as_deref(), Some("high"));
    let llm = to_llm_messages(&ctx.messages);
    let Message::User(u) = &llm[0] else { panic!() };
    assert_eq!(
        serde_json::to_value(&u.content).unwrap(),
        json!([{"type": "text", "text": format!("{COMPACTION_SUMMARY_PREFIX}SUM{COMPACTION_SUMMARY_SUFFIX}")}])
    );
}

#[test]
fn branching_in_the_writer() {
    let mut w = SessionWriter::in_memory("/w");
    let u1 = w.append_message(user("u1")).unwrap();
    w.append_message(assistant("a1")).unwrap();
    w.branch(&u1).unwrap();
    let s = w
        .branch_with_summary(Some(&u1), "explored", None, Some(false))
        .unwrap();
    w.append_message(assistant("a1b")).unwrap();
    let ctx = w.build_context();
    let roles: Vec<&str> = ctx.messages.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["user", "branchSummary", "assistant"]);
    let Entry::BranchSummary(b) = w.tree().get(&s).unwrap().clone() else {
        panic!()
    };
    assert_eq!(b.from_id, u1);
    assert!(w.branch("missing").is_err());
    w.reset_leaf();
    let root = w
        .branch_with_summary(None, "from root", None, None)
        .unwrap();
    assert_eq!(w.tree().get(&root).unwrap().parent_id(), None);
    let line = w.tree().get(&root).unwrap().to_line();
    assert!(line.contains(r#""fromId":"root""#), "{line}");
}

#[test]
fn bash_execution_texts() {
    let bash = |output: &str, exit: Option<Option<i64>>, cancelled: bool, trunc: Option<&str>| {
        BashExecutionMessage {
            command: "make".into(),
            output: output.into(),
            exit_code: exit,
            cancelled,
            truncated: trunc.is_some(),
            full_output_path: trunc.map(str::to_string),
            timestamp: 1,
            exclude_from_context: None,
            extra: Default::default(),
        }
    };
    assert_eq!(
        bash_execution_text(&bash("ok", Some(Some(0)), false, None)),
        "Ran `make`\n```\nok\n```"
    );
    assert_eq!(
        bash_execution_text(&bash("", Some(Some(2)), false, None)),
        "Ran `make`\n(no output)\n\nCommand exited with code 2"
    );
    assert_eq!(
        bash_execution_text(&bash("x", None, true, Some("/tmp/o"))),
        "Ran `make`\n```\nx\n```\n\n(command cancelled)\n\n[Output truncated. Full output: /tmp/o]"
    );
    assert_eq!(
        bash_execution_text(&bash("x", Some(None), false, None)),
        "Ran `make`\n```\nx\n```"
    );
    let mut excluded = bash("secret", Some(Some(0)), false, None);
    excluded.exclude_from_context = Some(true);
    let msgs = vec![
        AgentMessage::BashExecution(excluded),
        AgentMessage::Unknown(json!({"role": "alien"})),
        AgentMessage::Custom(CustomMessage {
            custom_type: "t".into(),
            content: crate::ai::UserContent::Text("hello".into()),
            display: false,
            details: Some(json!({"a": 1})),
            timestamp: 7,
            extra: Default::default(),
        }),
        AgentMessage::BranchSummary(BranchSummaryMessage {
            summary: "B".into(),
            from_id: "x".into(),
            timestamp: 8,
            extra: Default::default(),
        }),
    ];
    let llm = serde_json::to_value(to_llm_messages(&msgs)).unwrap();
    assert_eq!(
        llm,
        json!([
            {"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": 7},
            {"role": "user", "content": [{"type": "text", "text": format!("{BRANCH_SUMMARY_PREFIX}B{BRANCH_SUMMARY_SUFFIX}")}], "timestamp": 8},
        ])
    );
}

/// pi 1.x: a compaction records the prompt and tools declared so far (its `systemMessage`),
/// and the context after it starts with that checkpoint instead of the system messages it
/// left behind.
#[test]
fn compaction_records_the_declared_prompt_and_tools() {
    let mut w = SessionWriter::in_memory("/w");
    let system = |v: Value| AgentMessage::from_value(v);
    w.append_message(system(json!({"role": "system", "content": "",
        "sections": {"preamble": "P", "cwd": "<cwd>\n/w\n</cwd>"}, "timestamp": 1,
        "toolsAdded": [{"name": "read", "description": "r", "parameters": {}}]})))
        .unwrap();
    w.append_message(user("u1")).unwrap();
    w.append_message(assistant("a1")).unwrap();
    w.append_message(system(
        json!({"role": "system", "content": "", "timestamp": 2,
        "sections": {"cwd": "<cwd>\n/x\n</cwd>"}, "toolsRemoved": [{"name": "read"}]}),
    ))
    .unwrap();
    let u2 = w.append_message(user("u2")).unwrap();
    w.append_message(assistant("a2")).unwrap();
    w.append_compaction("SUM", &u2, 10, None, None, None)
        .unwrap();
    let entry = w.entries().last().unwrap().to_value();
    let checkpoint = &entry["systemMessage"];
    assert_eq!(checkpoint["role"], "system");
    assert_eq!(
        checkpoint["sections"],
        json!({"preamble": "P", "cwd": "<cwd>\n/x\n</cwd>"})
    );
    assert!(checkpoint.get("toolsAdded").is_none());
    assert_eq!(
        checkpoint["timestamp"].as_i64(),
        Some(crate::util::date::parse_iso_ms(entry["timestamp"].as_str().unwrap()).unwrap())
    );
    let ctx = w.build_context();
    let roles: Vec<&str> = ctx.messages.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["system", "compactionSummary", "user", "assistant"]);
    assert_eq!(w.system_state().prompt(), "P\n\n<cwd>\n/x\n</cwd>");

    // Nothing declared: no checkpoint.
    let mut old = SessionWriter::in_memory("/w");
    old.append_message(user("u1")).unwrap();
    let a = old.append_message(assistant("a1")).unwrap();
    old.append_compaction("SUM", &a, 10, None, None, None)
        .unwrap();
    let entry = old.entries().last().unwrap().to_value();
    assert!(entry.get("systemMessage").is_none());
}
