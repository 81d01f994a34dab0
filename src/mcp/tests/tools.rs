use super::*;
use crate::ai::Content;
use crate::mcp::content::*;

#[test]
fn names_are_sanitised_and_hashed_like_pis() {
    let free = |_: &str| false;
    assert_eq!(
        tool_name("my-server", "read.file", &free),
        "mcp__my_server__read_file"
    );
    // Expected values computed with pi's own algorithm in Node.
    assert_eq!(
        tool_name(
            "s",
            "a-very-long-tool-name-that-goes-on-and-on-and-on-forever-and-ever",
            &free
        ),
        "mcp__s__a_very_long_tool_name_that_goes_on_and_on_and_o_2d93b60f"
    );
    let taken = |_: &str| true;
    assert_eq!(tool_name("s", "a.b", &taken), "mcp__s__a_b_407e8e5c");
    assert_eq!(tool_name("s", "a-b", &taken), "mcp__s__a_b_ed3867d6");
}

#[test]
fn schemas_become_object_schemas() {
    assert_eq!(
        normalize_schema(&json!({"properties": {"a": {"type": "string"}}})),
        json!({"properties": {"a": {"type": "string"}}, "type": "object"})
    );
    assert_eq!(
        normalize_schema(&json!({"type": "object"})),
        json!({"type": "object", "properties": {}})
    );
}

fn texts(out: &ToolOutput) -> Vec<String> {
    out.content
        .iter()
        .map(|c| match c {
            Content::Text(t) => t.text.clone(),
            Content::Image(i) => format!("<image {}>", i.mime_type),
            _ => "?".into(),
        })
        .collect()
}

#[test]
fn every_content_kind_reaches_the_model() {
    let result = json!({"content": [
        {"type": "text", "text": "plain"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "title": "A file", "mimeType": "text/plain", "size": 2048, "description": "the file"},
        {"type": "resource_link", "uri": "file:///b", "name": "b"},
        {"type": "resource", "resource": {"uri": "x://t", "text": "embedded"}},
        {"type": "resource", "resource": {"uri": "x://j", "mimeType": "application/json; charset=utf-8", "blob": "eyJhIjoxfQ=="}},
        {"type": "resource", "resource": {"uri": "x://i", "mimeType": "image/gif", "blob": "R0lG"}},
        {"type": "hologram"}
    ], "_meta": {"x": 1}});
    let out = convert_result("srv", "t", &result, true).unwrap();
    assert_eq!(
        texts(&out),
        [
            "plain",
            "<image image/png>",
            "[audio audio/wav omitted]",
            "[Resource file:///a.txt \"A file\" (text/plain, 2.0KB): the file. Read it with read_mcp_resource (server \"srv\")]",
            "[Resource file:///b \"b\". Read it with read_mcp_resource (server \"srv\")]",
            "embedded",
            "{\"a\":1}",
            "<image image/gif>",
            "[unsupported MCP content hologram]",
        ]
    );
    assert_eq!(out.details, Some(json!({"server": "srv", "tool": "t"})));
    let unreadable = convert_result(
        "srv",
        "t",
        &json!({"content": [{"type": "resource_link", "uri": "u", "name": "n"}]}),
        false,
    )
    .unwrap();
    assert_eq!(texts(&unreadable), ["[Resource u \"n\"]"]);
}

#[test]
fn binary_resources_are_saved_to_private_files() {
    let result = json!({"content": [{"type": "resource", "resource": {"uri": "data://x/y.pdf", "mimeType": "application/pdf", "blob": "JVBERg=="}}]});
    let out = convert_result("s", "t", &result, false).unwrap();
    let text = texts(&out).remove(0);
    let path = text
        .strip_prefix("[Binary resource data://x/y.pdf (application/pdf, 4B) saved to ")
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(path.ends_with(".pdf"), "{path}");
    assert_eq!(std::fs::read(path).unwrap(), b"%PDF");
    std::fs::remove_file(path).unwrap();
}

#[test]
fn structured_content_stands_in_and_errors_are_errors() {
    let out = convert_result(
        "s",
        "t",
        &json!({"structuredContent": {"n": [1, 2]}}),
        false,
    )
    .unwrap();
    assert_eq!(texts(&out), ["{\n  \"n\": [\n    1,\n    2\n  ]\n}"]);
    assert_eq!(
        out.structured_content,
        Some(json!({"structuredContent": {"n": [1, 2]}, "content": []}))
    );
    let sent = json!({"content": [{"type": "text", "text": "bad input"}], "isError": true, "_meta": {"k": 1}});
    let err = convert_result("s", "t", &sent, false).unwrap();
    assert!(err.is_error);
    assert_eq!(texts(&err), ["bad input"]);
    // Scripts get the call result as sent, less `_meta`.
    assert_eq!(
        err.structured_content,
        Some(json!({"content": [{"type": "text", "text": "bad input"}], "isError": true}))
    );
    let err = convert_result("s", "t", &json!({"content": [], "isError": true}), false).unwrap();
    assert!(err.is_error);
    assert_eq!(texts(&err), ["MCP tool s/t returned an error"]);
}

#[test]
fn long_text_keeps_its_ends_and_the_whole_is_saved() {
    let body: String = (0..3000).map(|i| format!("line {i:04} ünï\n")).collect();
    let (content, path) = limit_content(vec![
        Content::text(body.clone()),
        Content::Image(crate::ai::ImageContent {
            data: "AA".into(),
            mime_type: "image/png".into(),
        }),
    ]);
    let path = path.expect("the full output is saved");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), body);
    assert_eq!(content.len(), 2, "the image stays");
    let Content::Text(t) = &content[0] else {
        panic!()
    };
    let expected_head = format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: 3000\n\nline 0000 ünï\n",
        body.len().div_ceil(4)
    );
    assert!(t.text.starts_with(&expected_head), "{}", &t.text[..200]);
    assert!(t.text.contains(" chars truncated…"));
    assert!(t.text.ends_with(&format!(
        "line 2999 ünï\n\n\n[Full output: {path} (read it with offset/limit)]"
    )));
    assert!(t.text.len() < 21 * 1024);
    std::fs::remove_file(path).unwrap();
    let (short, none) = limit_content(vec![Content::text("short")]);
    assert_eq!((short, none), (vec![Content::text("short")], None));
}
