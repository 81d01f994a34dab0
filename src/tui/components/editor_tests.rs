//! Editor behaviour: typing, motions, kills and yanks, undo, history, pastes,
//! autocomplete, wrapping and the cursor position.

use super::*;
use crate::tui::autocomplete::{CombinedProvider, SlashCommand};
use crate::tui::keys::{parse_key_id, KeyCode};
use crate::tui::text::{strip_ansi, visible_width};
use crate::tui::CURSOR_MARKER;

fn key(e: &mut Editor, id: &str) -> bool {
    e.handle_input(&InputEvent::Key(parse_key_id(id).unwrap()))
}

fn typed(e: &mut Editor, s: &str) {
    for c in s.chars() {
        if c == '\n' {
            key(e, "shift+enter");
        } else {
            e.handle_input(&InputEvent::Key(KeyEvent::plain(KeyCode::Char(c))));
        }
    }
}

fn editor(text: &str) -> Editor {
    let mut e = Editor::new();
    typed(&mut e, text);
    e
}

/// Display column of the cursor marker in the rendered row holding it, and that row.
fn marker_position(lines: &[String]) -> (usize, usize) {
    for (row, l) in lines.iter().enumerate() {
        if let Some(i) = l.find(CURSOR_MARKER) {
            return (row, visible_width(&l[..i]));
        }
    }
    panic!("no cursor marker in {lines:?}");
}

#[test]
fn typing_and_basic_motions() {
    let mut e = editor("hello world");
    assert_eq!(e.get_text(), "hello world");
    key(&mut e, "ctrl+a");
    assert_eq!(e.cursor(), (0, 0));
    key(&mut e, "alt+f");
    assert_eq!(e.cursor(), (0, 5));
    key(&mut e, "ctrl+right");
    assert_eq!(e.cursor(), (0, 11));
    key(&mut e, "ctrl+left");
    assert_eq!(e.cursor(), (0, 6));
    key(&mut e, "left");
    key(&mut e, "backspace");
    assert_eq!(e.get_text(), "hell world");
    key(&mut e, "ctrl+e");
    typed(&mut e, "\nsecond");
    assert_eq!(e.lines(), ["hell world", "second"]);
    key(&mut e, "up");
    assert_eq!(e.cursor(), (0, 6));
    key(&mut e, "down");
    assert_eq!(e.cursor(), (1, 6));
    key(&mut e, "ctrl+a");
    key(&mut e, "backspace");
    assert_eq!(e.get_text(), "hell worldsecond");
    key(&mut e, "delete");
    assert_eq!(e.get_text(), "hell worldecond");
    // Keys the editor does not use are left to the app.
    assert!(!key(&mut e, "escape"));
    assert!(!key(&mut e, "ctrl+c"));
    assert!(!key(&mut e, "ctrl+p"));
}

#[test]
fn punctuation_words_and_emoji_move_as_units() {
    let mut e = editor("foo.bar 😀x");
    key(&mut e, "left");
    key(&mut e, "left");
    assert_eq!(e.cursor(), (0, 8));
    key(&mut e, "backspace");
    assert_eq!(e.get_text(), "foo.bar😀x");
    key(&mut e, "ctrl+a");
    key(&mut e, "alt+f");
    assert_eq!(e.cursor(), (0, 3));
    key(&mut e, "alt+f");
    assert_eq!(e.cursor(), (0, 4));
}

#[test]
fn kills_accumulate_and_yank_pop_cycles() {
    let mut e = editor("one two three");
    key(&mut e, "ctrl+w");
    key(&mut e, "ctrl+w");
    assert_eq!(e.get_text(), "one ");
    key(&mut e, "ctrl+y");
    assert_eq!(e.get_text(), "one two three");
    key(&mut e, "ctrl+a");
    key(&mut e, "ctrl+k");
    assert_eq!(e.get_text(), "");
    key(&mut e, "ctrl+y");
    assert_eq!(e.get_text(), "one two three");
    // An older kill: yank-pop swaps the yanked text for it.
    let mut e = editor("alpha beta");
    key(&mut e, "ctrl+w");
    key(&mut e, "left");
    key(&mut e, "ctrl+u");
    assert_eq!(e.get_text(), " ");
    key(&mut e, "ctrl+y");
    assert_eq!(e.get_text(), "alpha ");
    key(&mut e, "alt+y");
    assert_eq!(e.get_text(), "beta ");
    key(&mut e, "alt+y");
    assert_eq!(e.get_text(), "alpha ");
    // Killing across lines joins them and records the newline.
    let mut e = editor("ab\ncd");
    key(&mut e, "ctrl+a");
    key(&mut e, "ctrl+u");
    assert_eq!(e.get_text(), "abcd");
    assert_eq!(e.cursor(), (0, 2));
    key(&mut e, "ctrl+e");
    key(&mut e, "ctrl+y");
    assert_eq!(e.lines(), ["abcd", ""]);
}

#[test]
fn undo_coalesces_typed_words() {
    let mut e = editor("hello world again");
    key(&mut e, "ctrl+-");
    assert_eq!(e.get_text(), "hello world");
    key(&mut e, "ctrl+-");
    assert_eq!(e.get_text(), "hello");
    key(&mut e, "ctrl+-");
    assert_eq!(e.get_text(), "");
    let mut e = editor("abc");
    key(&mut e, "backspace");
    key(&mut e, "ctrl+-");
    assert_eq!(e.get_text(), "abc");
}

#[test]
fn enter_submits_backslash_enter_and_shift_enter_insert_newlines() {
    let mut e = editor("  first line\\");
    key(&mut e, "enter");
    assert_eq!(e.take_submitted(), None);
    assert_eq!(e.lines(), ["  first line", ""]);
    typed(&mut e, "second");
    key(&mut e, "ctrl+j");
    typed(&mut e, "third ");
    key(&mut e, "enter");
    assert_eq!(
        e.take_submitted().as_deref(),
        Some("first line\nsecond\nthird")
    );
    assert!(e.is_empty());
    assert_eq!(e.take_submitted(), None);
    e.set_disable_submit(true);
    typed(&mut e, "x");
    key(&mut e, "enter");
    assert_eq!(e.take_submitted(), None);
}

#[test]
fn history_browses_on_first_and_last_lines() {
    let mut e = Editor::new();
    e.add_to_history("older");
    e.add_to_history("newer\ntwo lines");
    e.add_to_history("newer\ntwo lines");
    key(&mut e, "up");
    assert_eq!(e.get_text(), "newer\ntwo lines");
    // Cursor is on the last line: Up moves within the text first.
    key(&mut e, "up");
    assert_eq!(e.cursor().0, 0);
    key(&mut e, "up");
    assert_eq!(e.get_text(), "older");
    key(&mut e, "up");
    assert_eq!(e.get_text(), "older");
    key(&mut e, "down");
    assert_eq!(e.get_text(), "newer\ntwo lines");
    key(&mut e, "down");
    assert_eq!(e.get_text(), "");
    // Typing leaves history mode.
    typed(&mut e, "draft");
    key(&mut e, "up");
    assert_eq!(e.get_text(), "draft");
}

#[test]
fn large_pastes_collapse_into_markers_expanded_on_submit() {
    let mut e = editor("see ");
    let big: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    e.handle_input(&InputEvent::Paste(big.clone()));
    assert_eq!(e.get_text(), "see [paste #1 +13 lines]");
    e.handle_input(&InputEvent::Paste("x".repeat(1200)));
    assert_eq!(
        e.get_text(),
        "see [paste #1 +13 lines][paste #2 1200 chars]"
    );
    // The marker is one unit for backspace.
    key(&mut e, "backspace");
    assert_eq!(e.get_text(), "see [paste #1 +13 lines]");
    e.handle_input(&InputEvent::Paste("small\r\npaste\twith\x07 tab".into()));
    assert_eq!(
        e.lines(),
        ["see [paste #1 +13 lines]small", "paste    with tab"]
    );
    key(&mut e, "enter");
    let sent = e.take_submitted().unwrap();
    assert_eq!(sent, format!("see {big}small\npaste    with tab").trim());
    // A path pasted right after a word gets a space.
    let mut e = editor("open");
    e.handle_input(&InputEvent::Paste("/tmp/x".into()));
    assert_eq!(e.get_text(), "open /tmp/x");
}

#[test]
fn slash_autocomplete_opens_filters_and_completes() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = Editor::new();
    e.set_autocomplete_provider(Box::new(CombinedProvider::new(
        vec![
            SlashCommand::new("model", "Select model"),
            SlashCommand::new("settings", "Open settings"),
            SlashCommand::new("session", "Show session info"),
        ],
        dir.path(),
    )));
    typed(&mut e, "/");
    assert!(e.is_showing_autocomplete());
    typed(&mut e, "se");
    let screen: Vec<String> = e.render(60).iter().map(|l| strip_ansi(l)).collect();
    assert!(screen[3].starts_with("→ settings"), "{screen:?}");
    assert!(screen[3].contains("Open settings"), "{screen:?}");
    assert!(screen[4].starts_with("  session"), "{screen:?}");
    assert!(screen.iter().all(|l| visible_width(l) <= 60));
    // No cursor marker while the popup is open.
    assert!(!screen.concat().contains("pi:c"));
    key(&mut e, "down");
    key(&mut e, "tab");
    assert_eq!(e.get_text(), "/session ");
    assert!(!e.is_showing_autocomplete());
    // Enter on a slash command completes and submits.
    let mut e2 = Editor::new();
    e2.set_autocomplete_provider(Box::new(CombinedProvider::new(
        vec![SlashCommand::new("model", "Select model")],
        dir.path(),
    )));
    typed(&mut e2, "/mo");
    key(&mut e2, "enter");
    assert_eq!(e2.take_submitted().as_deref(), Some("/model"));
    // Escape closes the popup and is consumed.
    typed(&mut e, "x");
    let mut e3 = Editor::new();
    e3.set_autocomplete_provider(Box::new(CombinedProvider::new(
        vec![SlashCommand::new("model", "m")],
        dir.path(),
    )));
    typed(&mut e3, "/");
    assert!(key(&mut e3, "escape"));
    assert!(!e3.is_showing_autocomplete());
}

#[test]
fn at_file_reference_completes_from_popup() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "").unwrap();
    let mut e = Editor::new();
    e.set_autocomplete_provider(Box::new(CombinedProvider::new(vec![], dir.path())));
    typed(&mut e, "read @not");
    assert!(e.is_showing_autocomplete());
    key(&mut e, "enter");
    assert_eq!(e.get_text(), "read @notes.md ");
    assert_eq!(e.take_submitted(), None);
}

#[test]
fn render_draws_borders_and_wraps_cjk_with_the_cursor_in_place() {
    let mut e = editor("中文字符测试中文字符测试");
    let lines = e.render(10);
    assert_eq!(strip_ansi(&lines[0]), "─".repeat(10));
    assert_eq!(strip_ansi(lines.last().unwrap()), "─".repeat(10));
    for l in &lines {
        assert_eq!(visible_width(l), 10, "{l:?}");
    }
    // 12 wide characters in rows of 4 (layout width 9 → 4 per row).
    assert_eq!(lines.len(), 2 + 3);
    assert_eq!(marker_position(&lines), (3, 8));
    // Up from a row's end lands before the last character above (the end of a wrapped
    // row is the start of the next).
    key(&mut e, "up");
    let lines = e.render(10);
    assert_eq!(marker_position(&lines), (2, 6));
    key(&mut e, "ctrl+a");
    key(&mut e, "right");
    let lines = e.render(10);
    assert_eq!(marker_position(&lines), (1, 2));
    key(&mut e, "down");
    assert_eq!(e.cursor(), (0, 15));
    // Emoji and mixed widths: the marker sits after exactly the text before the cursor.
    let mut e = editor("a😀b中c");
    key(&mut e, "left");
    key(&mut e, "left");
    let lines = e.render(20);
    assert_eq!(marker_position(&lines), (1, 4));
}

#[test]
fn tall_content_scrolls_with_indicators() {
    let mut e = editor(&"line\n".repeat(9));
    e.set_terminal_rows(10);
    let lines = e.render(20);
    // Five text rows shown, the cursor on the last one.
    assert_eq!(lines.len(), 7);
    assert!(strip_ansi(&lines[0]).starts_with("─── ↑ 5 more "));
    assert_eq!(marker_position(&lines).0, 5);
    key(&mut e, "pageUp");
    let lines = e.render(20);
    assert!(strip_ansi(lines.last().unwrap()).starts_with("─── ↓ "));
    e.set_border_color(Box::new(|s| format!("\x1b[35m{s}\x1b[39m")));
    assert!(e.render(20)[0].starts_with("\x1b[35m"));
}

#[test]
fn jump_to_character() {
    let mut e = editor("find the x here");
    key(&mut e, "ctrl+a");
    key(&mut e, "ctrl+]");
    typed(&mut e, "x");
    assert_eq!(e.cursor(), (0, 9));
    assert_eq!(e.get_text(), "find the x here");
    key(&mut e, "ctrl+alt+]");
    typed(&mut e, "f");
    assert_eq!(e.cursor(), (0, 0));
}

#[test]
fn file_and_argument_popups_use_pi_s_fixed_32_column_first_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "").unwrap();
    let mut e = Editor::new();
    e.set_autocomplete_provider(Box::new(CombinedProvider::new(vec![], dir.path())));
    typed(&mut e, "read @not");
    let screen: Vec<String> = e.render(100).iter().map(|l| strip_ansi(l)).collect();
    let row = format!("→ notes.md{}notes.md", " ".repeat(24));
    assert!(screen.iter().any(|l| l.trim_end() == row), "{screen:?}");
    // Command names keep the narrower column (12 to 32, by the widest name).
    let mut e = Editor::new();
    e.set_autocomplete_provider(Box::new(CombinedProvider::new(
        vec![SlashCommand::new("model", "Select model")],
        dir.path(),
    )));
    typed(&mut e, "/mo");
    let screen: Vec<String> = e.render(100).iter().map(|l| strip_ansi(l)).collect();
    assert!(
        screen
            .iter()
            .any(|l| l.trim_end() == "→ model       Select model"),
        "{screen:?}"
    );
}
