use serde_json::{json, Value};

use super::super::common::test_support::*;
use super::*;

fn entry(id: &str, parent: Option<&str>, rest: Value) -> Entry {
    let mut v = json!({"id": id, "parentId": parent, "timestamp": "2025-01-01T10:30:00.000Z"});
    for (k, val) in rest.as_object().unwrap() {
        v[k] = val.clone();
    }
    Entry::from_value(v)
}

fn user(id: &str, parent: Option<&str>, text: &str) -> Entry {
    entry(
        id,
        parent,
        json!({"type": "message", "message": {"role": "user", "content": text, "timestamp": 1}}),
    )
}

fn assistant(id: &str, parent: &str, content: Value, stop: &str) -> Entry {
    entry(
        id,
        Some(parent),
        json!({"type": "message", "message": {
            "role": "assistant", "content": content, "api": "x", "provider": "p", "model": "m",
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": stop, "timestamp": 1}}),
    )
}

fn text(s: &str) -> Value {
    json!([{"type": "text", "text": s}])
}

/// u1 → a1 → { u2 → a2(tool call) → t2 → a3 ,  u3 → a4 (leaf) → label(u2) }
fn branched() -> Vec<Entry> {
    vec![
        user("u1", None, "hello"),
        assistant("a1", "u1", text("hi there"), "stop"),
        user("u2", Some("a1"), "do X"),
        assistant(
            "a2",
            "u2",
            json!([{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "git status"}}]),
            "toolUse",
        ),
        entry(
            "t2",
            Some("a2"),
            json!({"type": "message", "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                "content": [{"type": "text", "text": "clean"}], "isError": false, "timestamp": 1}}),
        ),
        assistant("a3", "t2", text("Done X"), "stop"),
        user("u3", Some("a1"), "do Y\ninstead"),
        assistant("a4", "u3", text("Done Y"), "stop"),
        entry(
            "l1",
            Some("a4"),
            json!({"type": "label", "targetId": "u2", "label": "checkpoint"}),
        ),
    ]
}

fn selector() -> TreeSelector {
    TreeSelector::new(&branched(), Some("a4"), 40, TreeFilter::Default, theme())
}

/// Only the rows of the tree list (after the header block).
fn rows(s: &mut TreeSelector, width: usize) -> Vec<String> {
    let lines = screen(s, width);
    // Blank, border, title, the help lines, search, border, blank; then the rows.
    let start = 3 + help_lines(width).len() + 3;
    lines[start..lines.len() - 2].to_vec()
}

#[test]
fn renders_branches_with_connectors_active_path_and_labels() {
    let mut s = selector();
    let lines = screen(&mut s, 100);
    assert_eq!(lines[2], "   Session Tree");
    assert!(
        lines[3].starts_with("  ↑/↓ move · ←/→ page · "),
        "{}",
        lines[3]
    );
    assert_eq!(lines[3 + help_lines(100).len()], "  Type to search:");
    assert_eq!(
        rows(&mut s, 100),
        [
            "  • user: hello",
            "  • assistant: hi there",
            "  ├⊟ • user: do Y instead",
            "› │     • assistant: Done Y",
            "  └⊟ [checkpoint] user: do X",
            "        [bash: git status]",
            "        assistant: Done X",
            "  (4/7)",
        ]
    );
    assert_fits(&mut s);
}

#[test]
fn filters_and_search() {
    let mut s = selector();
    s.handle_input(&key("ctrl+u"));
    // The leaf is hidden: its nearest visible ancestor stays selected.
    assert_eq!(
        rows(&mut s, 80),
        [
            "  • user: hello",
            "› ├─ • user: do Y instead",
            "  └─ [checkpoint] user: do X",
            "  (2/3) [user]"
        ]
    );
    // Ctrl+U again goes back to the default view; Ctrl+A shows everything.
    s.handle_input(&key("ctrl+u"));
    s.handle_input(&key("ctrl+a"));
    let all = rows(&mut s, 80);
    // Even "all" leaves out assistant turns that only called tools, as pi does.
    assert_eq!(all.len(), 9, "{all:?}");
    assert_eq!(all[4], "  │     [label: checkpoint]");
    assert_eq!(all.last().unwrap(), "  (3/8) [all]");
    s.handle_input(&key("ctrl+l"));
    assert_eq!(rows(&mut s, 80)[0], "› [checkpoint] user: do X");
    s.handle_input(&key("ctrl+d"));
    type_text(&mut s, "done");
    let found = rows(&mut s, 80);
    assert_eq!(screen(&mut s, 80)[5], "  Type to search: done");
    assert_eq!(found.len(), 3, "{found:?}");
    // Escape clears the search first, then cancels.
    s.handle_input(&key("escape"));
    assert_eq!(rows(&mut s, 80).len(), 8);
    assert_eq!(s.take_outcome(), None);
    s.handle_input(&key("escape"));
    assert_eq!(s.take_outcome(), Some(TreeOutcome::Cancelled));
}

#[test]
fn selecting_asks_about_a_summary() {
    let mut s = selector();
    s.handle_input(&key("enter"));
    assert_eq!(s.take_outcome(), Some(TreeOutcome::AlreadyAtLeaf));
    s.handle_input(&key("down"));
    s.handle_input(&key("enter"));
    let lines = screen(&mut s, 60);
    assert_eq!(
        lines[1..10],
        [
            "",
            " Summarize branch?",
            "",
            " → No summary",
            "   Summarize",
            "   Summarize with custom prompt",
            "",
            " ↑↓ navigate  enter select  escape/ctrl+c cancel",
            "",
        ]
    );
    assert_fits(&mut s);
    // Escape returns to the tree with the same selection.
    s.handle_input(&key("escape"));
    assert!(rows(&mut s, 80)[4].starts_with("› "));
    s.handle_input(&key("enter"));
    s.handle_input(&key("down"));
    s.handle_input(&key("enter"));
    assert_eq!(
        s.take_outcome(),
        Some(TreeOutcome::Selected {
            entry_id: "u2".into(),
            summary: BranchSummary::Summarize
        })
    );
    s.handle_input(&key("enter"));
    s.handle_input(&key("up"));
    s.handle_input(&key("enter"));
    assert_eq!(screen(&mut s, 60)[1], " Custom summarization instructions");
    type_text(&mut s, "focus on X");
    s.handle_input(&key("enter"));
    assert_eq!(
        s.take_outcome(),
        Some(TreeOutcome::Selected {
            entry_id: "u2".into(),
            summary: BranchSummary::Custom("focus on X".into())
        })
    );
    let mut skip = selector()
        .with_skip_summary_prompt(true)
        .with_selected("a3");
    skip.handle_input(&key("enter"));
    assert_eq!(
        skip.take_outcome(),
        Some(TreeOutcome::Selected {
            entry_id: "a3".into(),
            summary: BranchSummary::None
        })
    );
}

#[test]
fn labels_folding_and_segment_jumps() {
    let mut s = selector();
    s.handle_input(&key("shift+l"));
    assert!(screen(&mut s, 60).contains(&"  Label (empty to remove):".to_string()));
    assert_fits(&mut s);
    type_text(&mut s, "mine");
    s.handle_input(&key("enter"));
    assert_eq!(
        s.take_outcome(),
        Some(TreeOutcome::LabelChanged {
            entry_id: "a4".into(),
            label: Some("mine".into())
        })
    );
    assert_eq!(rows(&mut s, 80)[3], "› │     • [mine] assistant: Done Y");
    // Ctrl+← from the leaf jumps to the start of its branch (u3), then folds it.
    s.handle_input(&key("ctrl+left"));
    assert!(rows(&mut s, 80)[2].starts_with("› ├⊟"));
    s.handle_input(&key("ctrl+left"));
    let folded = rows(&mut s, 80);
    assert!(folded[2].starts_with("› ├⊞"), "{folded:?}");
    assert_eq!(folded.len(), 7);
    s.handle_input(&key("ctrl+right"));
    assert_eq!(rows(&mut s, 80).len(), 8);
    // Down from u3 follows the chain to its end.
    s.handle_input(&key("ctrl+right"));
    assert!(rows(&mut s, 80)[3].starts_with("› "));
}

#[test]
fn multiple_roots_and_empty_sessions() {
    let entries = vec![user("r1", None, "first"), user("r2", None, "second")];
    let mut s = TreeSelector::new(&entries, Some("r2"), 10, TreeFilter::Default, theme());
    assert_eq!(
        rows(&mut s, 60),
        ["› • user: second", "  user: first", "  (1/2)"]
    );
    let mut empty = TreeSelector::new(&[], None, 10, TreeFilter::Default, theme());
    assert_eq!(empty.take_outcome(), Some(TreeOutcome::Cancelled));
    assert!(screen(&mut empty, 40).contains(&"  No entries found".to_string()));
    assert_fits(&mut empty);
}

#[test]
fn help_is_pi_1_6_s_two_lines_at_80_columns() {
    let lines = help_lines(80);
    assert_eq!(
        lines,
        [
            "  ↑/↓ move · ←/→ page · ctrl+←/→ branch · ctrl+x copy · shift+l label",
            "  shift+t label time · filters ctrl+d/t/u/l/a · cycle ctrl+o/shift+ctrl+o",
        ]
    );
}
