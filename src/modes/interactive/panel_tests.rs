//! Selectors and panels take the editor's place, as pi's `showSelector` does: the transcript
//! stays above, the footer stays at the bottom of the frame, and no empty editor is left
//! mid-screen — at pi's reference size (100×30) and a small one (60×20).

use super::*;

fn is_border(line: &str) -> bool {
    !line.is_empty() && line.chars().all(|c| c == '─')
}

/// The visible rows, and whether they end with the footer (cwd row, then the model row).
fn assert_panel_in_place(h: &mut Harness, what: &str, model: &str) {
    let lines = h.app.tui.terminal().screen_text();
    let screen = lines.join("\n");
    assert!(h.app.dialogs.is_open(), "{what}: no dialog open\n{screen}");
    let n = lines.len();
    assert!(
        n >= 3 && lines[n - 1].contains(model) && lines[n - 1].contains("0.0%"),
        "{what}: the footer's model row is the last row\n{screen}"
    );
    assert!(
        lines[n - 2].contains(
            &h.dir
                .path()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_string()
        ),
        "{what}: the footer's folder row sits above it\n{screen}"
    );
    assert!(
        is_border(&lines[n - 3]),
        "{what}: the panel's bottom border sits right above the footer\n{screen}"
    );
    let empty_editor = lines
        .windows(3)
        .any(|w| is_border(&w[0]) && w[1].is_empty() && is_border(&w[2]));
    assert!(
        !empty_editor,
        "{what}: an empty editor is still drawn\n{screen}"
    );
}

fn open_each_panel(cols: usize, rows: usize) {
    let model = format!("panel-{cols}");
    let mut h = harness_with(&model, &["panel-other"], true);
    h.resize(cols, rows);
    push_reply(&model, Reply::text("the first reply"));
    h.type_bytes("first question\r");
    h.wait_idle();
    h.wait_text("the first reply");
    let panels: [(&str, &str); 7] = [
        ("/model", "/model\r"),
        ("Ctrl+L", "\x0c"),
        ("/scoped-models", "/scoped-models\r"),
        ("/settings", "/settings\r"),
        ("/tree", "/tree\r"),
        ("/resume", "/resume\r"),
        ("/fork", "/fork\r"),
    ];
    for (what, keys) in panels {
        h.type_bytes(keys);
        h.wait_for(what, |h| h.app.dialogs.is_open());
        assert_panel_in_place(&mut h, &format!("{what} at {cols}x{rows}"), &model);
        h.type_bytes("\x1b");
        h.wait_for("the panel to close", |h| !h.app.dialogs.is_open());
        let lines = h.app.tui.terminal().screen_text();
        assert!(
            lines.last().is_some_and(|l| l.contains(&model)),
            "{what}: the footer stays last once the editor is back\n{}",
            lines.join("\n")
        );
    }
}

#[test]
fn selectors_take_the_editor_s_place_at_100x30() {
    open_each_panel(100, 30);
}

#[test]
fn selectors_take_the_editor_s_place_at_60x20() {
    open_each_panel(60, 20);
}

#[test]
fn trust_command_saves_a_decision_for_later_processes() {
    let mut h = harness_with("panel-trust", &[], true);
    h.resize(100, 30);
    h.type_bytes("/trust\r");
    h.wait_text("Project trust");
    assert_panel_in_place(&mut h, "/trust", "panel-trust");
    let screen = h.app.tui.terminal().screen_text().join("\n");
    assert!(
        screen.contains("Saved decision: none\n Current session: trusted"),
        "{screen}"
    );
    // Do not trust.
    h.type_bytes("\x1b[B");
    h.type_bytes("\x1b[B");
    h.type_bytes("\r");
    h.wait_text("Saved trust decision: untrusted. Restart pi for this to take effect.");
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(h.dir.path().join("agent/trust.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        saved,
        json!({h.dir.path().to_string_lossy(): false}),
        "trust.json"
    );
}

#[test]
fn an_untrusted_folder_says_its_resources_were_left_out() {
    let mut h = harness_setup("panel-untrusted", &[], false, &mut |_, _, env| {
        env.project_trusted = false;
        env.untrusted_warning = true;
    });
    h.wait_text("This project is not trusted. Project .pi resources and packages are ignored.");
}

/// Presses Escape alone (the parser waits to tell it from the start of a sequence).
fn escape(h: &mut Harness) {
    h.type_bytes("\x1b");
    h.wait_for("the lone Escape to be read", |h| !h.app.parser_pending());
}

#[test]
fn escape_twice_on_an_empty_editor_opens_the_session_tree() {
    let mut h = harness_with("panel-esc", &[], true);
    h.resize(100, 30);
    push_reply("panel-esc", Reply::text("the reply"));
    h.type_bytes("a question\r");
    h.wait_idle();
    h.wait_text("the reply");
    escape(&mut h);
    assert!(!h.app.dialogs.is_open(), "one Escape does nothing");
    escape(&mut h);
    assert_eq!(h.app.dialogs.kind(), Some(overlays::OverlayKind::Tree));
    assert_panel_in_place(&mut h, "the tree after Escape Escape", "panel-esc");
    escape(&mut h);
    assert!(!h.app.dialogs.is_open(), "Escape closes the tree");

    // Text in the editor: Escape is the editor's; `!` bash mode: Escape clears the line.
    h.type_bytes("draft");
    escape(&mut h);
    escape(&mut h);
    assert!(!h.app.dialogs.is_open());
    assert_eq!(h.app.view.editor.get_text(), "draft");
    h.app.view.editor.set_text("!ls");
    escape(&mut h);
    assert_eq!(h.app.view.editor.get_text(), "");
}

#[test]
fn double_escape_follows_the_setting() {
    let mut h = harness_with("panel-esc-fork", &[], true);
    std::fs::write(
        h.dir.path().join("agent/settings.json"),
        r#"{"doubleEscapeAction": "fork"}"#,
    )
    .unwrap();
    let settings = Settings::load_with(&h.dir.path().join("agent"), h.dir.path(), false);
    h.with(move |s| s.settings = settings);
    push_reply("panel-esc-fork", Reply::text("the reply"));
    h.type_bytes("a question\r");
    h.wait_idle();
    h.wait_text("the reply");
    escape(&mut h);
    escape(&mut h);
    assert_eq!(h.app.dialogs.kind(), Some(overlays::OverlayKind::Fork));
}
