//! `pi --export <file> [out]`: one self-contained HTML viewer with the session embedded as pi
//! embeds it, `Exported to: <path>` on stdout (as pi 1.x; 0.73.1 used stderr when stdin is not
//! a terminal), errors as `Error: …` with exit 1.

use crate::support::PiCommand;
use pi::session::export::read_session_data;

const SESSION: &str = include_str!("../../fixtures/sessions/ts-all-entries.jsonl");
const NAME: &str = "2026-11-21T23-46-07-199Z_01a20080-bedf-7406-9017-36f72ffdce2c";

fn assert_page(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("https://"));
    let data = read_session_data(html).expect("embedded session data");
    assert_eq!(data["header"]["id"], "01a20080-bedf-7406-9017-36f72ffdce2c");
    let entries = data["entries"].as_array().unwrap();
    assert_eq!(entries.len(), SESSION.lines().count() - 1);
    assert_eq!(data["leafId"], entries.last().unwrap()["id"]);
    assert!(entries
        .iter()
        .any(|e| e["message"]["content"][0]["text"] == "echo: after nav"));
}

#[test]
fn export_to_an_explicit_path() {
    let pi = PiCommand::new().write_file("s.jsonl", SESSION);
    let out = pi.args(["--export", "s.jsonl", "out/page.html"]);
    std::fs::create_dir_all(out.cwd().join("out")).unwrap();
    let res = out.run();
    res.assert_code(0).assert_no_panic();
    assert_eq!(res.stdout, "Exported to: out/page.html\n");
    assert_page(&std::fs::read_to_string(out.cwd().join("out/page.html")).unwrap());
}

#[test]
fn export_to_the_default_path_in_cwd() {
    let file = format!("sessions/{NAME}.jsonl");
    let pi = PiCommand::new()
        .write_file(&file, SESSION)
        .args(["--export", file.as_str()]);
    let res = pi.run();
    res.assert_code(0);
    let want = format!("pi-session-{NAME}.html");
    assert_eq!(res.stdout, format!("Exported to: {want}\n"));
    assert_page(&std::fs::read_to_string(pi.cwd().join(want)).unwrap());
}

#[test]
fn export_of_a_missing_file_fails() {
    let res = PiCommand::new().args(["--export", "nope.jsonl"]).run();
    res.assert_code(1).assert_no_panic();
    assert!(
        res.stderr.contains("Error: File not found: nope.jsonl"),
        "{}",
        res.stderr
    );
}

#[test]
fn export_never_overwrites_the_session_it_exports() {
    let pi = PiCommand::new().write_file("s.jsonl", SESSION);
    let cwd = pi.cwd().to_path_buf();
    let pi = pi.args(["--export", "s.jsonl", "./s.jsonl"]);
    let res = pi.run();
    res.assert_code(1).assert_no_panic();
    assert!(
        res.stderr
            .contains("Refusing to overwrite the session file"),
        "{}",
        res.stderr
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("s.jsonl")).unwrap(),
        SESSION
    );
}

#[test]
fn export_of_an_old_session_leaves_it_as_it_was() {
    let v1 = include_str!("../../fixtures/sessions/pi-mono-large-session.jsonl");
    let pi = PiCommand::new().write_file("old.jsonl", v1);
    let cwd = pi.cwd().to_path_buf();
    let pi = pi.args(["--export", "old.jsonl", "page.html"]);
    let res = pi.run();
    res.assert_code(0).assert_no_panic();
    assert_eq!(std::fs::read_to_string(cwd.join("old.jsonl")).unwrap(), v1);
    assert!(!cwd.join("old.jsonl.bak").exists());
    let html = std::fs::read_to_string(cwd.join("page.html")).unwrap();
    let data = read_session_data(&html).unwrap();
    assert_eq!(data["header"]["id"], "d703a1a9-1b7b-4fb1-b512-c9738b1fe617");
    // Migrated in memory (ids and parents added), every message kept: 453 assistant replies
    // making 391 tool calls, 373 of them answered (pi's own counts for this file).
    let entries = data["entries"].as_array().unwrap();
    assert!(entries.iter().all(|e| e["id"].is_string()));
    let role = |r: &str| entries.iter().filter(|e| e["message"]["role"] == r).count();
    assert_eq!(role("assistant"), 453);
    assert_eq!(role("toolResult"), 373);
    let calls: usize = entries
        .iter()
        .filter_map(|e| e["message"]["content"].as_array())
        .map(|c| c.iter().filter(|b| b["type"] == "toolCall").count())
        .sum();
    assert_eq!(calls, 391);
}

#[test]
fn rpc_export_uses_the_theme_setting_and_carries_the_prompt_and_tools() {
    use crate::support::{MockServer, Reply};
    const API: &str = "openai-completions";
    let mock = MockServer::with_replies([Reply::text(API, "an answer")]);
    let mut theme: serde_json::Value =
        serde_json::from_str(include_str!("../../src/tui/themes/dark.json")).unwrap();
    theme["name"] = "mine".into();
    theme["colors"]["accent"] = "#123456".into();
    let first = PiCommand::for_mock(API, &mock)
        .write_agent_file(
            "settings.json",
            r#"{"theme":"mine","retry":{"enabled":false}}"#,
        )
        .write_agent_file("themes/mine.json", &theme.to_string())
        .args(["-p", "hello"]);
    first.run().assert_code(0).assert_no_panic();
    let dir = first.agent_dir().join("sessions");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .next()
        .unwrap();
    let out = first
        .again()
        .args(["--model", "mock/mock-model", "--mode", "rpc", "--session"])
        .arg(file.to_string_lossy())
        .stdin("{\"id\":\"e\",\"type\":\"export_html\",\"outputPath\":\"page.html\"}\n")
        .run();
    out.assert_code(0).assert_no_panic();
    let reply = out
        .json_lines()
        .into_iter()
        .find(|v| v["id"] == "e")
        .unwrap();
    assert_eq!(reply["success"], true, "{reply}");
    assert_eq!(reply["data"]["path"], "page.html");
    let html = std::fs::read_to_string(first.cwd().join("page.html")).unwrap();
    assert!(html.contains("--accent: #123456;"), "the custom theme");
    let data = read_session_data(&html).unwrap();
    assert!(data["systemPrompt"].as_str().unwrap().contains("pi"));
    let tools: Vec<&str> = data["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"read") && tools.contains(&"bash"),
        "{tools:?}"
    );
    let texts: Vec<&serde_json::Value> = data["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["message"]["content"])
        .collect();
    assert!(texts.iter().any(|c| c.to_string().contains("an answer")));
}
