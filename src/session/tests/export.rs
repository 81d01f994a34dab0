//! Session export: the embedded data (pi's place and format, round-tripping every entry),
//! the page's structure and self-containment, escaping, the theme, branch JSONL, errors.
//! The viewer's behaviour in a browser is checked by `scripts/export_check.mjs`.

use super::export::jsonl::branch_jsonl;
use super::export::*;
use super::files_tests::{assistant, user};
use super::*;
use crate::ai::{Content, ImageContent, ToolResultMessage, ToolSpec};
use serde_json::{json, Value};
use std::path::Path;

const V087: &str = include_str!("../../../fixtures/sessions/pi-0.87.1-rpc.jsonl");
const BRANCHED: &str = include_str!("../../../fixtures/sessions/export-branched.jsonl");
const V1: &str = include_str!("../../../fixtures/sessions/ts-v1.jsonl");

fn export_text(dir: &Path, name: &str, text: &str) -> String {
    let src = dir.join(name);
    std::fs::write(&src, text).unwrap();
    let out = dir.join(format!("{name}.html"));
    assert_eq!(export_html(&src, Some(&out)).unwrap(), out);
    std::fs::read_to_string(out).unwrap()
}

fn lines_as_json(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn data_is_embedded_as_pi_embeds_it_and_round_trips() {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("all.jsonl", super::entries_tests::ALL_ENTRIES),
        ("v087.jsonl", V087),
        ("branched.jsonl", BRANCHED),
    ] {
        let html = export_text(d.path(), name, text);
        // One base64 payload in pi's element, nothing else between the tags.
        let start = html.find(DATA_OPEN).unwrap() + DATA_OPEN.len();
        let end = start + html[start..].find("</script>").unwrap();
        assert!(html[start..end]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)));
        let data = read_session_data(&html).unwrap();
        let lines = lines_as_json(text);
        assert_eq!(data["header"], lines[0], "{name}");
        assert_eq!(data["entries"].as_array().unwrap(), &lines[1..], "{name}");
        assert_eq!(data["leafId"], lines.last().unwrap()["id"], "{name}");
        // A file export carries no agent state: pi leaves the keys out.
        let keys: Vec<&str> = data
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["header", "entries", "leafId"]);
    }
}

#[test]
fn every_entry_type_reaches_the_viewer() {
    let d = tempfile::tempdir().unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for text in [super::entries_tests::ALL_ENTRIES, V087, BRANCHED] {
        let html = export_text(d.path(), "t.jsonl", text);
        let data = read_session_data(&html).unwrap();
        for e in data["entries"].as_array().unwrap() {
            seen.insert(e["type"].as_str().unwrap().to_string());
            if let Some(role) = e["message"]["role"].as_str() {
                seen.insert(format!("message/{role}"));
            }
        }
    }
    let want = [
        "branch_summary",
        "compaction",
        "context_edit",
        "custom",
        "custom_message",
        "label",
        "message/assistant",
        "message/bashExecution",
        "message/system",
        "message/toolResult",
        "message/user",
        "model_change",
        "session_info",
        "thinking_level_change",
    ];
    for w in want {
        assert!(seen.contains(w), "{w} missing from {seen:?}");
    }
    // The viewer renders or lists each of them.
    let js = [
        include_str!("../export/session.js"),
        include_str!("../export/viewer.js"),
    ]
    .concat();
    for t in [
        "'compaction'",
        "'branch_summary'",
        "'custom_message'",
        "'model_change'",
        "'thinking_level_change'",
        "'context_edit'",
        "'bashExecution'",
        "'system'",
        "'toolResult'",
        "'label'",
    ] {
        assert!(js.contains(t), "viewer.js never handles {t}");
    }
}

#[test]
fn an_old_session_is_embedded_migrated_and_left_alone() {
    let d = tempfile::tempdir().unwrap();
    let html = export_text(d.path(), "v1.jsonl", V1);
    assert_eq!(
        std::fs::read_to_string(d.path().join("v1.jsonl")).unwrap(),
        V1
    );
    let data = read_session_data(&html).unwrap();
    assert_eq!(data["header"]["version"], 3);
    let entries = data["entries"].as_array().unwrap();
    assert!(entries.iter().all(|e| e["id"].is_string()));
    assert_eq!(data["leafId"], entries.last().unwrap()["id"]);
}

#[test]
fn page_is_one_self_contained_file() {
    let d = tempfile::tempdir().unwrap();
    let html = export_text(d.path(), "b.jsonl", BRANCHED);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("https://") && !html.contains("<link") && !html.contains("@import"));
    assert!(!html.contains("url(") && !html.contains("fetch(") && !html.contains("XMLHttpRequest"));
    assert!(!html.contains("<script src") && !html.contains(" src=\"http"));
    assert_eq!(html.matches("<script").count(), 2);
    assert_eq!(html.matches("<style>").count(), 1);
    // Every placeholder was filled, and the viewer's parts are all there.
    assert!(!html.contains("{{"), "unfilled placeholder");
    for id in [
        "id=\"sidebar\"",
        "id=\"tree\"",
        "id=\"search\"",
        "id=\"messages\"",
        "id=\"header\"",
    ] {
        assert!(html.contains(id), "{id}");
    }
    for f in ["default", "no-tools", "user-only", "labeled-only", "all"] {
        assert!(html.contains(&format!("data-filter=\"{f}\"")), "{f}");
    }
    assert!(html.contains(&format!("content=\"pi {}\"", crate::VERSION)));
    assert!(html.contains("<title>Session Export</title>"));
}

#[test]
fn session_text_cannot_break_out_of_the_page() {
    let d = tempfile::tempdir().unwrap();
    let mut w = SessionWriter::create(d.path(), "/w</script><script>", None);
    w.append_session_info("</title><img src=x onerror=alert(1)>")
        .unwrap();
    w.append_message(user("</script><script>alert('u')</script><!--"))
        .unwrap();
    w.append_message(assistant("</script>\n```\n</pre><script>x</script>\n```"))
        .unwrap();
    w.append_message(AgentMessage::tool_result(ToolResultMessage {
        tool_call_id: "c1".into(),
        tool_name: "bash".into(),
        content: vec![
            Content::text("</SCRIPT ><script>r</script>"),
            Content::Image(ImageContent {
                data: "AAAA\" onerror=\"x".into(),
                mime_type: "image/png".into(),
            }),
        ],
        details: None,
        is_error: true,
        duration_ms: None,
        timestamp: 0,
        extra: Default::default(),
    }))
    .unwrap();
    let out = d.path().join("x.html");
    export_html(w.path().unwrap(), Some(&out)).unwrap();
    let html = std::fs::read_to_string(out).unwrap();
    // Only the template's own tags: the data's script and the viewer's.
    assert_eq!(html.to_ascii_lowercase().matches("<script").count(), 2);
    assert_eq!(html.to_ascii_lowercase().matches("</script").count(), 2);
    assert!(!html.contains("<img src=x"));
    assert_eq!(
        html.matches("onerror").count(),
        1,
        "only in the escaped title"
    );
    // No `<!--` anywhere: inside a script it would change where the script ends.
    assert!(!html.contains("<!--"));
    // The name is in the title, escaped.
    assert!(html.contains(
        "<title>&lt;/title&gt;&lt;img src=x onerror=alert(1)&gt; - Session Export</title>"
    ));
    // And everything still arrives intact.
    let data = read_session_data(&html).unwrap();
    assert_eq!(data["header"]["cwd"], "/w</script><script>");
    let entries = data["entries"].as_array().unwrap();
    assert_eq!(
        entries[1]["message"]["content"][0]["text"],
        "</script><script>alert('u')</script><!--"
    );
    assert_eq!(
        entries[3]["message"]["content"][1]["data"],
        "AAAA\" onerror=\"x"
    );
}

#[test]
fn escaping_covers_markup_and_attributes() {
    assert_eq!(
        esc(r#"<a href="x" title='y'>&amp;</a>"#),
        "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;"
    );
}

#[test]
fn live_export_carries_prompt_tools_theme_and_the_current_leaf() {
    let d = tempfile::tempdir().unwrap();
    let mut w = SessionWriter::create(d.path(), "/w", None);
    let first = w.append_message(user("one")).unwrap();
    w.append_message(assistant("two")).unwrap();
    w.branch(&first).unwrap();
    let other = w.append_message(assistant("other")).unwrap();
    let tools = [ToolSpec {
        name: "bash".into(),
        description: "Run </script> commands".into(),
        parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
    }];
    let opts = ExportOptions {
        theme: Some(ExportTheme::load("light", &[]).unwrap()),
        system_prompt: Some("You are pi.\n</script>"),
        tools: Some(&tools),
    };
    let out = d.path().join("live.html");
    export_session_html(&w, Some(&out), &opts).unwrap();
    let html = std::fs::read_to_string(&out).unwrap();
    let data = read_session_data(&html).unwrap();
    assert_eq!(data["leafId"], other.as_str());
    assert_eq!(data["systemPrompt"], "You are pi.\n</script>");
    assert_eq!(data["tools"][0]["name"], "bash");
    assert_eq!(
        data["tools"][0]["parameters"]["properties"]["command"]["type"],
        "string"
    );
    assert_eq!(data["entries"].as_array().unwrap().len(), 3);
    // The light theme's colours are the page's.
    assert!(html.contains("--page-bg: #f8f8f8;"));
    assert!(html.contains("--userMessageBg: #e8e8e8;"));
}

#[test]
fn branch_jsonl_is_the_current_branch_as_a_linear_session() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("b.jsonl");
    std::fs::write(&src, BRANCHED).unwrap();
    let (w, _) = SessionWriter::open(&src).unwrap();
    let text = branch_jsonl(&w, "2026-05-01T00:00:00.000Z");
    let lines = lines_as_json(&text);
    assert_eq!(
        lines[0],
        json!({"type": "session", "version": 3, "id": "0195e0a1-7c00-7000-8000-00000000e5c0",
               "timestamp": "2026-05-01T00:00:00.000Z", "cwd": "/home/dev/demo"})
    );
    let ids: Vec<&str> = lines[1..]
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    let path: Vec<String> = w
        .tree()
        .path(w.leaf_id().unwrap())
        .iter()
        .map(|e| e.id().to_string())
        .collect();
    assert_eq!(ids, path);
    assert!(!ids.contains(&"a0000019"), "an entry of the other branch");
    for (i, e) in lines[1..].iter().enumerate() {
        let want = if i == 0 {
            Value::Null
        } else {
            json!(ids[i - 1])
        };
        assert_eq!(e["parentId"], want);
    }
    // Everything else in the entry is as in the file, key order included.
    let original = lines_as_json(BRANCHED);
    let by_id = |id: &str| original.iter().find(|e| e["id"] == id).unwrap().clone();
    let mut summary = by_id("b0000001");
    summary["parentId"] = json!("a0000011");
    assert_eq!(lines[12], summary);
    assert!(text
        .lines()
        .nth(12)
        .unwrap()
        .starts_with(r#"{"type":"branch_summary","id":"b0000001","parentId":"a0000011","#));
    // It opens as a session.
    let out = d.path().join("sub/branch.jsonl");
    assert_eq!(jsonl::export_session_jsonl(&w, Some(&out)).unwrap(), out);
    let (copy, warnings) = SessionWriter::open(&out).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(copy.entries().len(), path.len());
    assert_eq!(copy.leaf_id(), w.leaf_id());
    assert!(jsonl::export_session_jsonl(&w, Some(&src))
        .unwrap_err()
        .contains("Refusing to overwrite"));
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
    let none = ExportOptions::default();
    assert_eq!(
        export_session_html(&mem, None, &none).unwrap_err(),
        "Cannot export in-memory session to HTML"
    );
    let d = tempfile::tempdir().unwrap();
    let fresh = SessionWriter::create(d.path(), "/w", None);
    assert_eq!(
        export_session_html(&fresh, None, &none).unwrap_err(),
        "Nothing to export yet - start a conversation first"
    );
}
