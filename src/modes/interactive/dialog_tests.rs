//! The selectors as a user drives them in the running app: keys in, screen and files out.

use serde_json::{json, Value};

use super::*;

/// The session file's entries.
fn session_entries(h: &Harness) -> Vec<Value> {
    let path = h.with(|s| s.session.path().unwrap().to_path_buf());
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn prompt(h: &mut Harness, model: &str, text: &str, reply: &str) {
    push_reply(model, Reply::text(reply));
    h.type_bytes(&format!("{text}\r"));
    h.wait_idle();
    h.wait_text(reply);
}

#[test]
fn ctrl_l_picks_a_model_that_the_footer_and_session_file_show() {
    let mut h = harness_with("dlg-model-a", &["dlg-model-b"], true);
    prompt(&mut h, "dlg-model-a", "hello", "first reply");
    h.type_bytes("\x0c");
    h.wait_text("dlg-model-b");
    h.type_bytes("model-b");
    h.type_bytes("\r");
    h.wait_text("Model: dlg-model-b");
    let footer = h.app.tui.terminal().screen_text().join("\n");
    assert!(
        footer.lines().last().unwrap().contains("dlg-model-b"),
        "{footer}"
    );
    assert_eq!(h.with(|s| s.agent().model.id.clone()), "dlg-model-b");
    let changes: Vec<String> = session_entries(&h)
        .iter()
        .filter(|e| e["type"] == "model_change")
        .map(|e| e["modelId"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(changes.last().map(String::as_str), Some("dlg-model-b"));
}

#[test]
fn model_command_with_an_exact_id_switches_without_a_dialog() {
    let mut h = harness_with("dlg-exact-a", &["dlg-exact-b"], false);
    h.type_bytes("/model test/dlg-exact-b\r");
    h.wait_text("Model: dlg-exact-b");
    assert!(!h.app.dialogs.is_open());
    assert_eq!(h.with(|s| s.agent().model.id.clone()), "dlg-exact-b");
}

#[test]
fn resume_picker_switches_to_the_chosen_session() {
    let mut h = harness_with("dlg-resume", &[], true);
    let sessions = h.dir.path().join("sessions");
    let other =
        sessions.join("2025-01-01T00-00-00-000Z_0f0e0d0c-0000-4000-8000-00000000beef.jsonl");
    let cwd = h.dir.path().to_string_lossy().replace('\\', "\\\\");
    std::fs::write(
        &other,
        format!(
            "{{\"type\":\"session\",\"id\":\"0f0e0d0c-0000-4000-8000-00000000beef\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"{cwd}\",\"version\":3}}\n\
             {{\"type\":\"message\",\"id\":\"aaaa0001\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"zebra crossing question\"}}],\"timestamp\":1735689601000}}}}\n\
             {{\"type\":\"message\",\"id\":\"aaaa0002\",\"parentId\":\"aaaa0001\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"striped answer\"}}],\"api\":\"scripted\",\"provider\":\"test\",\"model\":\"dlg-resume\",\"usage\":{{\"input\":1,\"output\":1,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":2,\"cost\":{{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}}},\"stopReason\":\"stop\",\"timestamp\":1735689602000}}}}\n"
        ),
    )
    .unwrap();
    prompt(&mut h, "dlg-resume", "current work", "current reply");
    h.type_bytes("/resume\r");
    h.wait_text("zebra crossing question");
    h.type_bytes("zebra");
    h.type_bytes("\r");
    h.wait_text("Resumed session");
    h.wait_text("striped answer");
    let (path, len) = h.with(|s| {
        (
            s.session.path().map(|p| p.to_path_buf()),
            s.messages().len(),
        )
    });
    assert_eq!(path.as_deref(), Some(other.as_path()));
    assert_eq!(len, 2);
}

#[test]
fn tree_navigation_reopens_an_earlier_message_and_the_next_prompt_branches() {
    let mut h = harness_with("dlg-tree", &[], true);
    prompt(&mut h, "dlg-tree", "alpha question", "reply one");
    prompt(&mut h, "dlg-tree", "beta question", "reply two");
    h.type_bytes("/tree\r");
    h.wait_text("beta question");
    h.type_bytes("alpha");
    h.type_bytes("\r");
    // pi asks whether to summarize the branch being left; no summary.
    h.wait_text("No summary");
    h.type_bytes("\r");
    h.wait_text("Navigated to selected point");
    assert_eq!(h.app.view.editor.get_text(), "alpha question");
    assert!(h.with(|s| s.messages().is_empty()));
    push_reply("dlg-tree", Reply::text("reply three"));
    h.type_bytes("\r");
    h.wait_idle();
    h.wait_text("reply three");
    let entries = session_entries(&h);
    let user_parents: Vec<&Value> = entries
        .iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "user")
        .filter(|e| e["message"]["content"][0]["text"] == "alpha question")
        .map(|e| &e["parentId"])
        .collect();
    assert_eq!(user_parents.len(), 2, "two branches start with alpha");
    assert_eq!(user_parents[0], user_parents[1], "both from the same point");
    assert_eq!(h.with(|s| s.messages().len()), 2);
}

#[test]
fn tree_labels_are_written_while_the_tree_stays_open() {
    let mut h = harness_with("dlg-label", &[], true);
    prompt(&mut h, "dlg-label", "label me", "labelled reply");
    h.type_bytes("/tree\r");
    h.wait_text("label me");
    h.type_bytes("L");
    h.type_bytes("keep\r");
    h.wait_text("[keep]");
    assert!(h.app.dialogs.is_open(), "tree still open");
    h.type_bytes("\x1b");
    h.wait_for("the tree to close", |h| !h.app.dialogs.is_open());
    assert!(session_entries(&h)
        .iter()
        .any(|e| e["type"] == "label" && e["label"] == "keep"));
}

#[test]
fn settings_changes_apply_and_persist() {
    let mut h = harness_with("dlg-settings", &[], true);
    h.type_bytes("/settings\r");
    h.wait_text("Auto-compact");
    // The first row is auto-compaction: Enter flips it.
    h.type_bytes("\r");
    assert!(!h.with(|s| s.compaction.enabled));
    h.type_bytes("quiet");
    h.type_bytes("\r");
    h.type_bytes("\x1b");
    h.wait_for("the menu to close", |h| !h.app.dialogs.is_open());
    let file = h.dir.path().join("agent").join("settings.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(saved["compaction"]["enabled"], false);
    assert_eq!(saved["quietStartup"], true);
}

#[test]
fn login_with_an_api_key_writes_auth_json() {
    let mut h = harness_with("dlg-login", &[], false);
    h.type_bytes("/login\r");
    h.wait_text("Select authentication method:");
    h.wait_text("Use an API key");
    h.type_bytes("\x1b[B");
    h.type_bytes("\r");
    h.wait_text("Select provider to configure");
    h.type_bytes("groq");
    h.wait_text("Groq");
    h.type_bytes("\r");
    h.wait_text("Enter API key");
    h.type_bytes("gsk-secret\r");
    h.wait_text("Saved API key for Groq");
    let auth = h.dir.path().join("agent").join("auth.json");
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(auth).unwrap()).unwrap();
    assert_eq!(stored["groq"]["type"], "api_key");
    assert_eq!(stored["groq"]["key"], "gsk-secret");
    // And /logout removes it again.
    h.type_bytes("/logout\r");
    h.wait_text("Select provider to logout");
    h.type_bytes("\r");
    h.wait_text("Removed stored API key for Groq");
    let auth = h.dir.path().join("agent").join("auth.json");
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(auth).unwrap()).unwrap();
    assert!(stored.get("groq").is_none());
}

#[test]
fn login_lists_models_json_providers_for_api_keys_and_shows_bedrock_setup_notes() {
    let mut h = harness_with("dlg-login-custom", &[], false);
    let agent = h.dir.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(
        agent.join("models.json"),
        r#"{"providers":{"my-llm":{"name":"My Local LLM","baseUrl":"http://127.0.0.1:9/v1","api":"openai-completions","apiKey":"MY_LLM_KEY","models":[{"id":"m"}]}}}"#,
    )
    .unwrap();
    h.type_bytes("/login\r");
    h.wait_text("Use a subscription");
    // The subscription list holds no API-key providers; Escape goes back to the method.
    h.type_bytes("\r");
    h.wait_text("Select provider to configure");
    assert!(!h.screen().contains("My Local LLM"));
    h.type_bytes("\x1b");
    h.wait_for("the method choice again", |h| {
        h.app.dialogs.kind() == Some(overlays::OverlayKind::AuthMethod)
    });
    h.type_bytes("\x1b[B");
    h.type_bytes("\r");
    h.type_bytes("local");
    h.wait_text("My Local LLM");
    h.type_bytes("\r");
    h.wait_text("Enter API key");
    h.type_bytes("sk-local\r");
    h.wait_text("Saved API key for My Local LLM");
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(agent.join("auth.json")).unwrap()).unwrap();
    assert_eq!(stored["my-llm"]["key"], "sk-local");

    h.type_bytes("/login\r");
    h.wait_text("Use an API key");
    h.type_bytes("\x1b[B");
    h.type_bytes("\r");
    h.type_bytes("bedrock");
    h.wait_text("Amazon Bedrock");
    h.type_bytes("\r");
    h.wait_text("Amazon Bedrock setup");
    h.wait_text("AWS_PROFILE");
    assert!(!h.screen().contains("Enter API key"));
    h.type_bytes("\x1b");
    h.wait_for("the notes to close", |h| !h.app.dialogs.is_open());
}

#[test]
fn ctrl_p_cycles_within_the_scope_chosen_in_scoped_models() {
    let mut h = harness_with("dlg-scope-a", &["dlg-scope-b", "dlg-scope-c"], false);
    h.type_bytes("/scoped-models\r");
    h.wait_text("dlg-scope-c");
    // Everything starts enabled; the first toggle narrows to a, then c joins.
    h.type_bytes("\r");
    h.wait_for("a alone", |h| h.with(|s| s.scoped_models.len()) == 1);
    h.type_bytes("\x1b[B");
    h.type_bytes("\x1b[B");
    h.type_bytes("\r");
    h.type_bytes("\x1b");
    h.wait_for("the selector to close", |h| !h.app.dialogs.is_open());
    let scope: Vec<String> =
        h.with(|s| s.scoped_models.iter().map(|s| s.model.id.clone()).collect());
    assert_eq!(scope, ["dlg-scope-a", "dlg-scope-c"]);
    h.type_bytes("\x10");
    h.wait_text("Switched to dlg-scope-c");
    h.type_bytes("\x10");
    h.wait_text("Switched to dlg-scope-a");
    assert_eq!(h.with(|s| s.agent().model.id.clone()), "dlg-scope-a");
}

#[test]
fn a_model_change_during_a_run_shows_at_once_and_is_in_use_when_it_ends() {
    let mut h = harness_with("dlg-defer-a", &["dlg-defer-b"], false);
    push_reply(
        "dlg-defer-a",
        Reply {
            blocks: vec![Block::Text("slow answer ".repeat(10))],
            delay: Duration::from_millis(30),
            ..Default::default()
        },
    );
    h.type_bytes("go\r");
    h.wait_text("Working...");
    h.type_bytes("\x10");
    h.wait_text("Switched to dlg-defer-b");
    assert!(h.app.is_busy(), "still running");
    let footer = h.app.tui.terminal().screen_text().join("\n");
    assert!(
        footer.contains("dlg-defer-b"),
        "footer shows it at once: {footer}"
    );
    h.wait_idle();
    assert_eq!(h.with(|s| s.agent().model.id.clone()), "dlg-defer-b");
}

#[test]
fn a_model_change_mid_run_is_recorded_where_pi_records_it_and_the_running_loop_keeps_its_model() {
    let mut h = harness_with("dlg-mid-a", &["dlg-mid-b"], true);
    push_reply(
        "dlg-mid-a",
        Reply {
            blocks: vec![
                Block::Text("looking ".repeat(8)),
                Block::ToolCall {
                    id: "call_ls".into(),
                    name: "ls".into(),
                    arguments: json!({}),
                },
            ],
            delay: Duration::from_millis(30),
            ..Default::default()
        },
    );
    push_reply("dlg-mid-a", Reply::text("second turn of the same loop"));
    h.type_bytes("go\r");
    h.wait_text("looking");
    h.type_bytes("\x10");
    h.wait_text("Switched to dlg-mid-b");
    h.wait_idle();
    h.wait_text("second turn of the same loop");
    let entries = session_entries(&h);
    let kinds: Vec<String> = entries
        .iter()
        .map(|e| match e["type"].as_str() {
            Some("message") => format!("message:{}", e["message"]["role"].as_str().unwrap_or("")),
            other => other.unwrap_or("").to_string(),
        })
        .filter(|k| k != "session")
        .collect();
    let change = kinds.iter().position(|k| k == "model_change").unwrap();
    let first_reply = kinds.iter().position(|k| k == "message:assistant").unwrap();
    assert!(
        change > kinds.iter().position(|k| k == "message:user").unwrap() && change < first_reply,
        "recorded when made, before the reply that was streaming: {kinds:?}"
    );
    let replies: Vec<&str> = entries
        .iter()
        .filter(|e| e["message"]["role"] == "assistant")
        .map(|e| e["message"]["model"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        replies,
        ["dlg-mid-a", "dlg-mid-a"],
        "the running loop keeps its model"
    );
    assert_eq!(h.with(|s| s.agent().model.id.clone()), "dlg-mid-b");
    prompt(&mut h, "dlg-mid-b", "next", "answered by b");
}

#[test]
fn tree_navigation_with_a_summary_writes_a_branch_summary_entry() {
    let mut h = harness_with("dlg-summary", &[], true);
    prompt(&mut h, "dlg-summary", "alpha question", "reply one");
    prompt(&mut h, "dlg-summary", "beta question", "reply two");
    h.type_bytes("/tree\r");
    h.wait_text("beta question");
    h.type_bytes("alpha");
    h.type_bytes("\r");
    h.wait_text("No summary");
    push_reply(
        "dlg-summary",
        Reply::text("The beta branch explored things."),
    );
    h.type_bytes("\x1b[B");
    h.type_bytes("\r");
    h.wait_idle();
    h.wait_text("Navigated to selected point");
    assert_eq!(h.app.view.editor.get_text(), "alpha question");
    let summaries: Vec<String> = session_entries(&h)
        .iter()
        .filter(|e| e["type"] == "branch_summary")
        .map(|e| e["summary"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(summaries.len(), 1);
    assert!(summaries[0].contains("The beta branch explored things."));
    // The agent continues from the summary.
    assert_eq!(h.with(|s| s.messages().len()), 1);
}

#[test]
fn model_command_arguments_pop_up_matching_models_and_complete_on_enter() {
    let mut h = harness_with("dlg-args-a", &["dlg-args-other"], false);
    h.resize(100, 30);
    h.type_bytes("/model oth");
    h.wait_text("dlg-args-other");
    let screen = h.app.tui.terminal().screen_text().join("\n");
    let row = format!(
        "→ dlg-args-other{}test",
        " ".repeat(32 - "dlg-args-other".len())
    );
    assert!(screen.contains(&row), "{screen}");
    assert!(!screen.contains("dlg-args-a "), "filtered: {screen}");
    h.type_bytes("\r");
    assert_eq!(h.app.view.editor.get_text(), "/model test/dlg-args-other");
    h.type_bytes("\r");
    h.wait_text("Model: dlg-args-other");
    assert_eq!(h.with(|s| s.agent().model.id.clone()), "dlg-args-other");
}

#[test]
fn resume_ctrl_r_renames_a_session_and_the_open_one() {
    let mut h = harness_with("dlg-rename", &[], true);
    prompt(&mut h, "dlg-rename", "current work", "current reply");
    h.type_bytes("/resume\r");
    h.wait_text("ctrl+r rename");
    h.type_bytes("\x12");
    h.wait_text("Rename Session");
    h.type_bytes("Shiny name\r");
    h.wait_for("the list to come back", |h| {
        h.screen().contains("Resume Session")
    });
    assert!(h.app.dialogs.is_open(), "the picker stays open");
    let screen = h.app.tui.terminal().screen_text().join("\n");
    assert!(screen.contains("› Shiny name"), "{screen}");
    h.type_bytes("\x1b");
    h.wait_for("the picker to close", |h| !h.app.dialogs.is_open());
    // The open session was renamed through its own writer.
    assert_eq!(
        h.with(|s| s.session.tree().name().map(str::to_string))
            .as_deref(),
        Some("Shiny name")
    );
    let names: Vec<Value> = session_entries(&h)
        .into_iter()
        .filter(|e| e["type"] == "session_info")
        .map(|e| e["name"].clone())
        .collect();
    assert_eq!(names, [json!("Shiny name")]);
}

/// A session file in another folder's store whose recorded folder is gone.
fn orphaned_session(h: &Harness) -> std::path::PathBuf {
    let dir = h.dir.path().join("elsewhere");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("2025-01-01T00-00-00-000Z_0f0e0d0c-0000-4000-8000-0000000000aa.jsonl");
    std::fs::write(
        &file,
        "{\"type\":\"session\",\"id\":\"0f0e0d0c-0000-4000-8000-0000000000aa\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/nonexistent/moved-away\",\"version\":3}\n\
         {\"type\":\"message\",\"id\":\"aaaa0001\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"orphan question\"}],\"timestamp\":1735689601000}}\n",
    )
    .unwrap();
    file
}

#[test]
fn switching_to_a_session_whose_folder_is_gone_asks_and_fork_copies_it_here() {
    let mut h = harness_with("dlg-orphan", &[], true);
    prompt(&mut h, "dlg-orphan", "current work", "current reply");
    let current = h.with(|s| s.session.path().unwrap().to_path_buf());
    let file = orphaned_session(&h);
    // Cancel keeps the current session.
    h.app.resume_checked(file.clone()).unwrap();
    h.wait_text("cwd from session file does not exist");
    h.wait_text("continue in current cwd");
    h.type_bytes("\x1b[B");
    h.type_bytes("\x1b[B");
    h.type_bytes("\r");
    h.wait_for("the dialog to close", |h| !h.app.view.has_dialog());
    assert_eq!(
        h.with(|s| s.session.path().map(|p| p.to_path_buf()))
            .as_deref(),
        Some(current.as_path())
    );
    // Fork: a new session beside the current one, recorded in this folder.
    h.app.resume_checked(file.clone()).unwrap();
    h.wait_text("Fork");
    h.type_bytes("\x1b[B");
    h.type_bytes("\r");
    h.wait_text("orphan question");
    let (forked, cwd) = h.with(|s| {
        let forked = s.session.path().unwrap().to_path_buf();
        (forked, s.session.header().cwd.clone())
    });
    assert_ne!(forked, file);
    assert_eq!(forked.parent(), current.parent());
    assert_eq!(cwd, h.dir.path().to_string_lossy());
    // Continue opens the file itself.
    h.app.resume_checked(file.clone()).unwrap();
    h.wait_text("Fork");
    h.type_bytes("\r");
    h.wait_for("the switch", |h| {
        let file = file.clone();
        h.with(move |s| s.session.path() == Some(file.as_path()))
    });
}

#[test]
fn importing_a_session_whose_folder_is_gone_asks_continue_fork_or_cancel() {
    let mut h = harness_with("dlg-import-orphan", &[], true);
    prompt(&mut h, "dlg-import-orphan", "current work", "current reply");
    let current = h.with(|s| s.session.path().unwrap().to_path_buf());
    let file = orphaned_session(&h);
    let command = format!("/import {}\r", file.display());
    // Cancel keeps the current session and says so.
    h.type_bytes(&command);
    h.wait_text("cwd from session file does not exist");
    h.type_bytes("\x1b[B\x1b[B\r");
    h.wait_text("Import cancelled");
    assert_eq!(
        h.with(|s| s.session.path().map(|p| p.to_path_buf()))
            .as_deref(),
        Some(current.as_path())
    );
    // Fork: a copy beside the current session, recorded in this folder.
    h.type_bytes(&command);
    h.wait_text("continue in current cwd");
    h.type_bytes("\x1b[B\r");
    h.wait_text("orphan question");
    let (forked, cwd) = h.with(|s| {
        let forked = s.session.path().unwrap().to_path_buf();
        (forked, s.session.header().cwd.clone())
    });
    assert_eq!(forked.parent(), current.parent());
    assert_eq!(cwd, h.dir.path().to_string_lossy());
    // Continue imports the file as /import does.
    h.type_bytes(&command);
    h.wait_text("continue in current cwd");
    h.type_bytes("\r");
    h.wait_text("Session imported from:");
    assert_eq!(
        h.with(|s| s.session.path().map(|p| p.to_path_buf()))
            .as_deref(),
        Some(file.as_path())
    );
}
