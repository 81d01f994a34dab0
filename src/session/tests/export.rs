//! HTML export: content of the page, escaping, self-containment, default name, errors.

use super::export_html::*;
use super::files_tests::{assistant, user};
use super::*;
use crate::ai::{Content, ImageContent, Message, ToolCall, ToolResultMessage};
use std::path::Path;

fn export_fixture(dir: &Path) -> String {
    let src = dir.join("2026-11-21T23-46-07-199Z_abc.jsonl");
    std::fs::write(&src, super::entries_tests::ALL_ENTRIES).unwrap();
    let out = dir.join("out.html");
    assert_eq!(export_html(&src, Some(&out)).unwrap(), out);
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn fixture_page_shows_header_messages_tools_and_tree() {
    let d = tempfile::tempdir().unwrap();
    let html = export_fixture(d.path());
    assert!(html.starts_with("<!DOCTYPE html>"));
    for needle in [
        "01a20080-bedf-7406-9017-36f72ffdce2c",
        "/tmp/gen/proj",
        "2026-11-21T23:46:07.199Z",
        "mock/m1",
        "My Session",
        "list files",
        "Let me look.",
        "Need to list.",
        "$ echo hi",
        "hi\n</pre>",
        "echo out; exit 3",
        "exit code 3",
        "custom hello",
        "branch summary",
        "after nav",
        "echo: after nav",
        "Tokens in <b>8664</b>",
    ] {
        assert!(html.contains(needle), "missing {needle:?}");
    }
    // Thinking is folded.
    assert!(html.contains("<details class=\"thinking fold\"><summary>Thinking</summary>"));
    // Entries of the abandoned branch are in the tree outline only.
    assert!(html.contains("user: second question"));
    assert!(html.contains("other branch"));
    assert!(!html.contains("id=\"e-730ca084\""));
    assert!(html.contains("id=\"e-74ea823e\""));
    assert!(html.contains("class=\"leaf\""));
}

#[test]
fn page_is_self_contained() {
    let d = tempfile::tempdir().unwrap();
    let html = export_fixture(d.path());
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(!html.contains("<link") && !html.contains("@import"));
    assert!(!html.contains(" src=\"http") && !html.contains("<script src"));
    assert_eq!(html.matches("<script").count(), 1);
    assert_eq!(html.matches("<style>").count(), 1);
}

#[test]
fn session_text_cannot_inject_markup() {
    let d = tempfile::tempdir().unwrap();
    let mut w = SessionWriter::create(d.path(), "/w<script>", None);
    w.append_session_info("<img src=x onerror=alert(1)>")
        .unwrap();
    w.append_message(user("<script>alert('u')</script>"))
        .unwrap();
    w.append_message(assistant(
        "**<script>alert(1)</script>** `<b>` \"quoted\"\n```\n</pre><script>x</script>\n```",
    ))
    .unwrap();
    let mut a = match assistant("") {
        AgentMessage::Llm(Message::Assistant(a)) => a,
        _ => unreachable!(),
    };
    a.content = vec![Content::ToolCall(ToolCall {
        id: "c1".into(),
        name: "bash".into(),
        arguments: serde_json::json!({"command": "echo '</div><script>'"}),
        thought_signature: None,
    })];
    w.append_message(AgentMessage::assistant(a)).unwrap();
    w.append_message(AgentMessage::tool_result(ToolResultMessage {
        tool_call_id: "c1".into(),
        tool_name: "bash".into(),
        content: vec![
            Content::text("<script>r</script>"),
            Content::Image(ImageContent {
                data: "AAAA\" onerror=\"x".into(),
                mime_type: "image/png".into(),
            }),
        ],
        details: None,
        is_error: true,
        timestamp: 0,
        extra: Default::default(),
    }))
    .unwrap();
    let out = d.path().join("x.html");
    export_html(w.path().unwrap(), Some(&out)).unwrap();
    let html = std::fs::read_to_string(out).unwrap();
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert!(!html.contains("<img src=x"));
    assert!(!html.contains("onerror=\"x"));
    assert!(html.contains("&lt;script&gt;alert(&#39;u&#39;)&lt;/script&gt;"));
    assert!(html.contains("<strong>&lt;script&gt;alert(1)&lt;/script&gt;</strong>"));
    assert!(html.contains("<code>&lt;b&gt;</code>"));
    assert!(html.contains("&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;"));
    assert!(html.contains("<div class=\"tool error\">"));
    assert!(html.contains("not displayable"));
}

#[test]
fn images_become_data_uris_and_long_output_folds() {
    let d = tempfile::tempdir().unwrap();
    let mut w = SessionWriter::create(d.path(), "/w", None);
    let mut u = match user("see") {
        AgentMessage::Llm(Message::User(u)) => u,
        _ => unreachable!(),
    };
    u.content = crate::ai::UserContent::Blocks(vec![
        Content::text("see"),
        Content::Image(ImageContent {
            data: "iVBORw0KGgo=".into(),
            mime_type: "image/png".into(),
        }),
    ]);
    w.append_message(AgentMessage::user(u)).unwrap();
    w.append_message(assistant("ok")).unwrap();
    let long: String = (0..100).map(|i| format!("line {i}\n")).collect();
    w.append_message(AgentMessage::tool_result(ToolResultMessage {
        tool_call_id: "orphan".into(),
        tool_name: "read".into(),
        content: vec![Content::text(long)],
        details: None,
        is_error: false,
        timestamp: 0,
        extra: Default::default(),
    }))
    .unwrap();
    let out = d.path().join("i.html");
    export_html(w.path().unwrap(), Some(&out)).unwrap();
    let html = std::fs::read_to_string(out).unwrap();
    assert!(html.contains("src=\"data:image/png;base64,iVBORw0KGgo=\""));
    assert!(html.contains("Show all 100 lines"));
}

#[test]
fn edit_results_show_their_diff() {
    let d = tempfile::tempdir().unwrap();
    let mut w = SessionWriter::create(d.path(), "/w", None);
    w.append_message(user("fix it")).unwrap();
    w.append_message(assistant("ok")).unwrap();
    w.append_message(AgentMessage::tool_result(ToolResultMessage {
        tool_call_id: "e1".into(),
        tool_name: "edit".into(),
        content: vec![Content::text("Successfully replaced 1 block(s) in a.rs.")],
        details: Some(serde_json::json!({"diff": " 1 fn a() {\n-2 <old>\n+2 new\n 3 }", "firstChangedLine": 2})),
        is_error: false,
        timestamp: 0,
        extra: Default::default(),
    }))
    .unwrap();
    let out = d.path().join("e.html");
    export_html(w.path().unwrap(), Some(&out)).unwrap();
    let html = std::fs::read_to_string(out).unwrap();
    assert!(
        html.contains("<span class=\"del\">-2 &lt;old&gt;</span>"),
        "{html}"
    );
    assert!(html.contains("<span class=\"add\">+2 new</span>"));
}

#[test]
fn markdown_subset() {
    let h = markdown("# Title\n\nSome *it* and **bold** and `x<y`.\n\n- a\n- b\n\n1. one\n2. two\n\n```rust\nfn main() {}\n```");
    assert!(h.contains("<h1>Title</h1>"));
    assert!(h.contains("<em>it</em>"));
    assert!(h.contains("<strong>bold</strong>"));
    assert!(h.contains("<code>x&lt;y</code>"));
    assert!(h.contains("<ul><li>a</li><li>b</li></ul>"));
    assert!(h.contains("<ol><li>one</li><li>two</li></ol>"));
    assert!(h.contains("<div class=\"lang\">rust</div>"));
    assert!(h.contains("<pre><code>fn main() {}</code></pre>"));
    assert_eq!(markdown("a * b * c"), "<p>a * b * c</p>\n");
    assert_eq!(markdown("`open"), "<p>`open</p>\n");
}

#[test]
fn default_name_and_errors() {
    assert_eq!(
        default_output_path(Path::new("/x/2026_abc.jsonl")),
        Path::new("pi-session-2026_abc.html")
    );
    assert_eq!(
        default_output_path(Path::new("s.txt")),
        Path::new("pi-session-s.txt.html")
    );
    let err = export_html(Path::new("/nonexistent/s.jsonl"), None).unwrap_err();
    assert_eq!(err, "File not found: /nonexistent/s.jsonl");
    let mem = SessionWriter::in_memory("/w");
    assert_eq!(
        export_session_html(&mem, None).unwrap_err(),
        "Cannot export in-memory session to HTML"
    );
    let d = tempfile::tempdir().unwrap();
    let fresh = SessionWriter::create(d.path(), "/w", None);
    assert_eq!(
        export_session_html(&fresh, None).unwrap_err(),
        "Nothing to export yet - start a conversation first"
    );
}
