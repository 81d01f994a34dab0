//! The whole screen at pi's reference sizes: a tool-using exchange at 80×24 and 200×60 shows
//! header, transcript, diff, editor and footer with no row wider than the terminal, and
//! resizing while a reply streams leaves exactly what a fresh render of the same state draws.

use super::*;
use crate::tui::text::{strip_ansi, visible_width};
use crate::tui::{Component, CURSOR_MARKER};

/// The rows on screen of a from-scratch render of the current state, as plain text. They
/// start where the renderer's viewport does: when the frame got shorter (the working line
/// went away) the terminal cannot scroll back, so the rows below the frame stay blank.
fn fresh_screen(h: &mut Harness) -> Vec<String> {
    let (cols, rows) = h.app.tui.terminal().size();
    let top = h.app.tui.renderer().viewport_top();
    h.app.view.invalidate();
    let lines = h.app.view.render(cols);
    let mut screen: Vec<String> = lines[top.min(lines.len())..(top + rows).min(lines.len())]
        .iter()
        .map(|l| {
            strip_ansi(&l.replace(CURSOR_MARKER, ""))
                .trim_end()
                .to_string()
        })
        .collect();
    while screen.last().is_some_and(String::is_empty) {
        screen.pop();
    }
    screen
}

fn edit_exchange(h: &mut Harness, model: &str) {
    let file = h.dir.path().join("notes.txt");
    std::fs::write(&file, "alpha\nbeta\ngamma\n").unwrap();
    push_reply(
        model,
        Reply {
            blocks: vec![Block::ToolCall {
                id: "call_1".into(),
                name: "edit".into(),
                arguments: json!({"path": file.to_string_lossy(),
                    "edits": [{"oldText": "beta", "newText": "BETA"}]}),
            }],
            ..Default::default()
        },
    );
    push_reply(model, Reply::text("Edited **notes.txt** as asked."));
    h.type_bytes("change beta in notes\r");
    h.wait_idle();
    h.wait_text("Edited notes.txt as asked.");
}

fn check_layout(cols: usize, rows: usize, model: &str) {
    let mut h = harness(model);
    h.resize(cols, rows);
    edit_exchange(&mut h, model);
    let all = h.screen();
    for part in [
        "▀▀█  v0.73.1",
        "change beta in notes",
        "edit ",
        "Edited notes.txt",
    ] {
        assert!(all.contains(part), "{part:?} at {cols}x{rows}:\n{all}");
    }
    assert!(
        all.lines()
            .any(|l| l.trim_start().starts_with('-') && l.contains("beta"))
            && all
                .lines()
                .any(|l| l.trim_start().starts_with('+') && l.contains("BETA")),
        "the diff at {cols}x{rows}:\n{all}"
    );
    let screen = h.app.tui.terminal().screen_lines();
    let borders: Vec<usize> = (0..screen.len())
        .filter(|&i| screen[i].starts_with("──"))
        .collect();
    assert!(
        borders.len() >= 2,
        "the editor's borders:\n{}",
        screen.join("\n")
    );
    let footer = screen[borders[borders.len() - 1] + 1..].join("\n");
    assert!(
        footer.contains(model),
        "the footer names the model: {footer}"
    );
    for line in h.app.view.render(cols) {
        assert!(
            visible_width(&line) <= cols,
            "too wide at {cols}: {:?}",
            strip_ansi(&line)
        );
    }
    assert_eq!(h.app.tui.terminal().screen_text(), fresh_screen(&mut h));
}

#[test]
fn a_tool_exchange_lays_out_at_80x24() {
    check_layout(80, 24, "ui-layout-small");
}

#[test]
fn a_tool_exchange_lays_out_at_200x60() {
    check_layout(200, 60, "ui-layout-large");
}

#[test]
fn resizing_while_a_reply_streams_leaves_no_stale_characters() {
    let mut h = harness("ui-layout-resize");
    h.resize(200, 60);
    let paragraph = "The quick brown fox jumps over the lazy dog and keeps running. ";
    push_reply(
        "ui-layout-resize",
        Reply {
            blocks: vec![Block::Text(paragraph.repeat(12))],
            delay: Duration::from_millis(15),
            ..Default::default()
        },
    );
    h.type_bytes("tell me a long story\r");
    h.wait_text("quick brown fox");
    for (cols, rows) in [(80, 24), (120, 40)] {
        h.resize(cols, rows);
        // Let more text stream in at this size, then compare with a fresh render.
        for _ in 0..5 {
            h.app.step(&h.input, Duration::from_millis(20)).unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
        h.app.step(&h.input, Duration::from_millis(1)).unwrap();
        assert!(h.app.is_busy(), "still streaming at {cols}x{rows}");
        assert_eq!(
            h.app.tui.terminal().screen_text(),
            fresh_screen(&mut h),
            "screen at {cols}x{rows} differs from a fresh render"
        );
    }
    h.wait_idle();
    std::thread::sleep(Duration::from_millis(20));
    h.app.step(&h.input, Duration::from_millis(1)).unwrap();
    assert_eq!(h.app.tui.terminal().screen_text(), fresh_screen(&mut h));
}

#[test]
fn without_a_theme_setting_the_terminal_is_asked_for_its_background_once() {
    let mut h = harness("ui-background");
    let frames = h.app.tui.terminal().frames().join("");
    assert!(frames.contains("\x1b]11;?\x07"), "the OSC 11 query is sent");
    assert!(h.app.background.waiting());
    // A dark reply keeps the dark theme the tests run in, and the question is settled.
    h.type_bytes("\x1b]11;rgb:1010/1010/1010\x1b\\");
    assert!(!h.app.background.waiting());
    assert_eq!(crate::tui::theme::current().name(), "dark");
    assert_eq!(
        h.app.view.editor.get_text(),
        "",
        "the reply is not typed into the editor"
    );
}

#[test]
fn the_system_theme_and_pairs_ask_for_the_background_and_a_named_theme_does_not() {
    for (setting, asks) in [("system", true), ("dark/dark", true), ("dark", false)] {
        let mut h = harness_setup("ui-system-theme", &[], false, &mut |_, _, env| {
            env.theme = Some(setting.into());
        });
        let frames = h.app.tui.terminal().frames().join("");
        assert_eq!(frames.contains("\x1b]11;?\x07"), asks, "{setting}");
        // The tests run in the dark theme: a dark reply keeps it.
        h.type_bytes("\x1b]11;rgb:1010/1010/1010\x1b\\");
        assert_eq!(crate::tui::theme::current().name(), "dark", "{setting}");
    }
}
