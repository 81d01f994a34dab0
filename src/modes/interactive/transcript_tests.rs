//! What the transcript shows after things happen, compared with pi's screens: the rebuild
//! around a compaction and Ctrl+O expanding its summary, and the blank rows around the first
//! message.

use super::*;

#[test]
fn ctrl_o_after_compact_expands_the_summary_in_the_rebuilt_transcript() {
    // A short kept tail, so the first exchange is summarized (pi 1.x compacts nothing when
    // the kept tail already holds the whole conversation).
    let mut h = harness_setup("tr-compact", &[], true, &mut |_, s, _| {
        s.compaction.keep_recent_tokens = 5;
    });
    h.resize(100, 30);
    push_reply("tr-compact", Reply::text("early reply"));
    h.type_bytes("early question\r");
    h.wait_idle();
    h.wait_text("early reply");
    push_reply("tr-compact", Reply::text("first reply"));
    h.type_bytes("first question\r");
    h.wait_idle();
    h.wait_text("first reply");
    push_reply(
        "tr-compact",
        Reply::text("## Goal\nKeep the SUMMARY-MARKER safe."),
    );
    h.type_bytes("/compact\r");
    h.wait_idle();
    h.wait_text("Compacted from");
    let screen = h.app.tui.terminal().screen_text().join("\n");
    assert!(!screen.contains("SUMMARY-MARKER"), "collapsed: {screen}");
    // Rebuilt around the compaction entry: its summary, the kept messages, the summary again.
    let labels: Vec<usize> = screen
        .match_indices("[compaction]")
        .map(|(i, _)| i)
        .collect();
    let question = screen.find("first question").expect("kept message");
    assert_eq!(labels.len(), 2, "{screen}");
    assert!(labels[0] < question && question < labels[1], "{screen}");
    assert!(screen.contains(" Compacted from"), "{screen}");
    assert!(screen.contains("tokens (ctrl+o to expand)"), "{screen}");

    h.type_bytes("\x0f");
    h.wait_text("SUMMARY-MARKER");
    let screen = h.app.tui.terminal().screen_text().join("\n");
    assert!(!screen.contains("to expand)"), "{screen}");
    h.type_bytes("\x0f");
    h.wait_for("the summary to fold again", |h| {
        !h.app
            .tui
            .terminal()
            .screen_text()
            .join("\n")
            .contains("SUMMARY-MARKER")
    });
}

#[test]
fn the_first_message_sits_two_rows_under_the_header_as_in_pi() {
    let mut h = harness("tr-first");
    h.resize(100, 30);
    push_reply("tr-first", Reply::text("the answer"));
    h.type_bytes("hello\r");
    h.wait_idle();
    h.wait_text("the answer");
    let lines = h.app.tui.terminal().screen_lines();
    let onboarding = lines
        .iter()
        .position(|l| l.starts_with(" Pi can explain"))
        .unwrap();
    assert_eq!(
        lines[onboarding + 1..onboarding + 4],
        ["", "", " hello"],
        "{lines:#?}"
    );
}

#[test]
fn new_session_says_so_with_pi_s_tick_and_drops_the_start_up_listing() {
    let mut h = harness_setup("tr-new", &[], true, &mut |_, _, env| {
        env.resources
            .templates
            .push(crate::resources::templates::Template {
                name: "fixit".into(),
                description: "Fix it".into(),
                argument_hint: None,
                content: "Fix: $@".into(),
                file_path: "/agent/prompts/fixit.md".into(),
            });
    });
    h.resize(100, 30);
    h.wait_text("[Prompts]");
    push_reply("tr-new", Reply::text("the answer"));
    h.type_bytes("hello\r");
    h.wait_idle();
    h.wait_text("the answer");
    h.type_bytes("/new\r");
    h.wait_text("✓ New session started");
    let lines = h.app.tui.terminal().screen_text();
    assert!(!lines.iter().any(|l| l.contains("[Prompts]")), "{lines:#?}");
    let at = lines
        .iter()
        .position(|l| l == " ✓ New session started")
        .unwrap();
    assert_eq!(lines[at - 2..at], ["", ""], "{lines:#?}");
}

#[test]
fn alt_up_then_escape_prints_operation_aborted() {
    for queued in [false, true] {
        let model = format!("tr-alt-up-{queued}");
        let mut h = harness(&model);
        push_reply(
            &model,
            Reply {
                blocks: vec![Block::Text("a long answer that takes its time".repeat(5))],
                delay: Duration::from_millis(50),
                ..Default::default()
            },
        );
        h.type_bytes("go\r");
        h.wait_text("Working...");
        if queued {
            h.type_bytes("later\r");
            h.wait_text("Steering: later");
        }
        h.type_bytes("\x1b[1;3A");
        let restored = if queued {
            "Restored 1 queued message to editor"
        } else {
            "No queued messages to restore"
        };
        h.wait_text(restored);
        h.type_bytes("\x1b");
        h.wait_idle();
        h.wait_text("Operation aborted");
        let screen = h.screen();
        assert!(!screen.contains("Working..."), "{screen}");
    }
}

#[test]
fn aborting_while_a_tool_call_streams_says_operation_aborted_in_its_box() {
    let mut h = harness("tr-abort-tool");
    push_reply(
        "tr-abort-tool",
        Reply {
            blocks: vec![Block::ToolCall {
                id: "call_1".into(),
                name: "write".into(),
                arguments: json!({"path": "x.txt", "content": "slow words ".repeat(40)}),
            }],
            delay: Duration::from_millis(30),
            ..Default::default()
        },
    );
    h.type_bytes("go\r");
    h.wait_text("write x.txt");
    h.type_bytes("\x1b[1;3A");
    h.wait_text("No queued messages to restore");
    h.type_bytes("\x1b");
    h.wait_idle();
    h.wait_text("Operation aborted");
    assert!(!h.dir.path().join("x.txt").exists());
}

#[test]
fn changelog_shows_the_bundled_changelog_as_pi_does() {
    let mut h = harness("tr-changelog");
    h.resize(100, 30);
    h.type_bytes("/changelog\r");
    h.wait_text("What's New");
    let all = h.screen();
    assert!(all.contains(&format!("[{}] - ", crate::VERSION)), "{all}");
    assert!(all.contains("### New Features"), "{all}");
    assert!(!all.contains("No changelog"), "{all}");
}

#[test]
fn the_first_frame_keeps_what_the_terminal_showed_before_pi() {
    let mut h = harness("tr-keep");
    // The shell's lines and a warning printed before the first frame.
    h.app
        .tui
        .terminal_mut()
        .write("$ pi\r\nWarning: printed before the UI\r\n");
    h.wait_text("▀▀█  v0.73.1");
    let lines = h.app.tui.terminal().screen_lines();
    assert_eq!(lines[0], "$ pi", "{lines:#?}");
    assert_eq!(lines[1], "Warning: printed before the UI", "{lines:#?}");
    assert_eq!(lines[3], " ▀▀█  v0.73.1", "{lines:#?}");
}
