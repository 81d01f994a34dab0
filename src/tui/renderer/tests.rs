//! Renderer tests on the virtual terminal: the exact bytes of small updates, and the screen
//! (with scrollback) after scripted frame sequences.

use super::*;
use crate::tui::virtual_terminal::VirtualTerminal;

struct Harness {
    term: VirtualTerminal,
    renderer: Renderer,
}

impl Harness {
    fn new(cols: usize, rows: usize) -> Self {
        let mut renderer = Renderer::new();
        renderer.set_termux(false);
        Harness {
            term: VirtualTerminal::new(cols, rows),
            renderer,
        }
    }

    /// Renders `lines` and returns the bytes written for this frame ("" when none).
    fn paint(&mut self, lines: &[&str]) -> String {
        let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        self.renderer
            .render(&mut self.term, lines, false)
            .expect("virtual terminal never fails");
        let mut frames = self.term.take_frames();
        assert!(frames.len() <= 1, "one frame is one write: {frames:?}");
        frames.pop().unwrap_or_default()
    }

    fn screen(&self) -> Vec<String> {
        self.term.screen_text()
    }
}

fn numbered(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("line {i}")).collect()
}

fn refs(lines: &[String]) -> Vec<&str> {
    lines.iter().map(String::as_str).collect()
}

fn assert_sync(frame: &str) {
    assert!(
        frame.starts_with(SYNC_BEGIN) && frame.ends_with(SYNC_END),
        "frame not wrapped in synchronized output: {frame:?}"
    );
    assert_eq!(frame.matches(SYNC_BEGIN).count(), 1, "{frame:?}");
}

#[test]
fn first_paint_writes_every_line_with_a_reset_and_no_clear() {
    let mut h = Harness::new(20, 5);
    let frame = h.paint(&["hello", "\x1b[1mbold\x1b[22m"]);
    assert_eq!(
        frame,
        format!(
            "{SYNC_BEGIN}\rhello{LINE_RESET}\r\n\x1b[1mbold\x1b[22m{LINE_RESET}{HIDE_CURSOR}{SYNC_END}"
        )
    );
    assert_eq!(h.screen(), ["hello", "bold"]);
    assert_eq!(h.renderer.full_redraws(), 1);
}

#[test]
fn a_changed_line_is_the_only_line_written() {
    let mut h = Harness::new(20, 5);
    h.paint(&["a", "b", "c", "d"]);
    let frame = h.paint(&["a", "B", "c", "d"]);
    assert_eq!(
        frame,
        format!("{SYNC_BEGIN}\x1b[2A\r{CLEAR_LINE}B{LINE_RESET}{SYNC_END}")
    );
    assert_eq!(h.screen(), ["a", "B", "c", "d"]);
    // The cursor stays on the changed row; the next edit moves relative to it.
    let frame = h.paint(&["a", "B", "c", "D"]);
    assert_eq!(
        frame,
        format!("{SYNC_BEGIN}\x1b[2B\r{CLEAR_LINE}D{LINE_RESET}{SYNC_END}")
    );
    assert_eq!(h.screen(), ["a", "B", "c", "D"]);
    assert_eq!(h.renderer.full_redraws(), 1);
}

#[test]
fn an_unchanged_frame_writes_nothing() {
    let mut h = Harness::new(20, 5);
    h.paint(&["a", "b"]);
    assert_eq!(h.paint(&["a", "b"]), "");
}

#[test]
fn an_appended_line_is_written_after_a_newline() {
    let mut h = Harness::new(20, 5);
    h.paint(&["a", "b"]);
    let frame = h.paint(&["a", "b", "c"]);
    assert_eq!(
        frame,
        format!("{SYNC_BEGIN}\r\n\r{CLEAR_LINE}c{LINE_RESET}{SYNC_END}")
    );
    assert_eq!(h.screen(), ["a", "b", "c"]);
}

#[test]
fn shrinking_erases_the_rows_that_went_away() {
    let mut h = Harness::new(20, 6);
    h.paint(&["one", "two", "three", "four"]);
    let frame = h.paint(&["one", "two"]);
    assert_eq!(
        frame,
        format!("{SYNC_BEGIN}\x1b[1A\r{CLEAR_BELOW}{SYNC_END}")
    );
    assert_eq!(h.screen(), ["one", "two"]);
    // Growing again reuses the erased rows.
    h.paint(&["one", "2", "3"]);
    assert_eq!(h.screen(), ["one", "2", "3"]);
    h.paint(&[]);
    assert_eq!(h.screen(), Vec::<String>::new());
    assert_eq!(h.renderer.full_redraws(), 1);
}

#[test]
fn a_change_with_rows_removed_rewrites_the_change_and_erases_the_tail() {
    let mut h = Harness::new(20, 6);
    h.paint(&["a", "b", "c", "d", "e"]);
    let frame = h.paint(&["a", "B", "c"]);
    assert!(!frame.contains('c'), "unchanged row rewritten: {frame:?}");
    assert_eq!(h.screen(), ["a", "B", "c"]);
}

#[test]
fn growth_past_the_bottom_scrolls_and_keeps_scrollback() {
    let mut h = Harness::new(20, 3);
    h.paint(&["l0", "l1"]);
    let lines = (0..7).map(|i| format!("l{i}")).collect::<Vec<_>>();
    let frame = h.paint(&refs(&lines));
    assert!(!frame.contains("l0") && !frame.contains("l1"), "{frame:?}");
    assert!(!frame.contains("\x1b[2J"), "{frame:?}");
    assert_eq!(h.screen(), ["l4", "l5", "l6"]);
    assert_eq!(h.term.all_lines(), lines);
    // A visible row can still be edited in place.
    let mut edited = lines.clone();
    edited[5] = "L5".into();
    let frame = h.paint(&refs(&edited));
    assert_eq!(
        frame,
        format!("{SYNC_BEGIN}\x1b[1A\r{CLEAR_LINE}L5{LINE_RESET}{SYNC_END}")
    );
    assert_eq!(h.screen(), ["l4", "L5", "l6"]);
    assert_eq!(h.renderer.full_redraws(), 1);
}

#[test]
fn a_change_above_the_viewport_repaints_everything() {
    let mut h = Harness::new(20, 3);
    let mut lines = numbered(6);
    h.paint(&refs(&lines));
    lines[1] = "changed".into();
    let frame = h.paint(&refs(&lines));
    assert!(frame.contains(CLEAR_ALL), "{frame:?}");
    assert_eq!(h.renderer.full_redraws(), 2);
    assert_eq!(h.term.all_lines(), lines);
}

#[test]
fn twelve_lines_shrinking_to_seven_in_five_rows_repaints() {
    let mut h = Harness::new(20, 5);
    let twelve = numbered(12);
    h.paint(&refs(&twelve));
    assert_eq!(h.screen(), refs(&twelve[7..]));
    let seven = numbered(7);
    let frame = h.paint(&refs(&seven));
    assert!(frame.contains(CLEAR_ALL), "{frame:?}");
    assert_eq!(h.screen(), refs(&seven[2..]));
    assert_eq!(h.term.all_lines(), seven);
    assert_eq!(h.renderer.full_redraws(), 2);
}

#[test]
fn shrinking_within_the_viewport_erases_without_repainting() {
    let mut h = Harness::new(20, 5);
    h.paint(&refs(&numbered(12)));
    let frame = h.paint(&refs(&numbered(9)));
    assert!(!frame.contains(CLEAR_ALL), "{frame:?}");
    assert_eq!(h.screen(), ["line 7", "line 8"]);
    assert_eq!(h.term.all_lines(), numbered(9));
}

#[test]
fn width_change_repaints_and_clears_scrollback() {
    let mut h = Harness::new(20, 3);
    h.paint(&refs(&numbered(6)));
    h.term.resize(10, 3);
    let frame = h.paint(&["narrow", "x"]);
    assert!(
        frame.starts_with(&format!("{SYNC_BEGIN}{CLEAR_ALL}")),
        "{frame:?}"
    );
    assert_eq!(h.term.all_lines(), ["narrow", "x"]);
    assert_eq!(h.renderer.full_redraws(), 2);
}

#[test]
fn height_change_repaints_except_on_termux() {
    let mut h = Harness::new(20, 5);
    h.paint(&["a", "b"]);
    h.term.resize(20, 4);
    let frame = h.paint(&["a", "b"]);
    assert!(frame.contains(CLEAR_ALL), "{frame:?}");
    assert_eq!(h.screen(), ["a", "b"]);

    let mut h = Harness::new(20, 5);
    h.renderer.set_termux(true);
    h.paint(&["a", "b"]);
    h.term.resize(20, 4);
    let frame = h.paint(&["a", "B"]);
    assert!(!frame.contains("\x1b[2J"), "{frame:?}");
    assert_eq!(h.screen(), ["a", "B"]);
    assert_eq!(h.renderer.full_redraws(), 1);
}

#[test]
fn clear_on_shrink_repaints_when_opted_in() {
    let mut h = Harness::new(20, 5);
    h.renderer.set_clear_on_shrink(true);
    h.paint(&["a", "b", "c"]);
    let frame = h.paint(&["a"]);
    assert!(frame.contains(CLEAR_ALL), "{frame:?}");
    assert_eq!(h.screen(), ["a"]);
}

#[test]
fn wide_character_edits_leave_no_stale_cells() {
    let mut h = Harness::new(12, 4);
    h.paint(&["你好世界!", "ok"]);
    assert_eq!(h.screen(), ["你好世界!", "ok"]);
    h.paint(&["ab你", "ok"]);
    assert_eq!(h.screen(), ["ab你", "ok"]);
    h.paint(&["a😀b", "ok"]);
    assert_eq!(h.screen(), ["a😀b", "ok"]);
}

#[test]
fn the_cursor_lands_on_the_marker() {
    let mut h = Harness::new(20, 5);
    h.renderer.set_show_hardware_cursor(true);
    let typed = format!("> \x1b[7m你{CURSOR_MARKER}\x1b[27mx");
    h.paint(&["header", &typed, "footer"]);
    assert_eq!(h.screen(), ["header", "> 你x", "footer"]);
    assert_eq!(h.term.cursor(), (1, 4));
    assert!(h.term.cursor_visible());
    // Unchanged frame, unchanged cursor: nothing written.
    assert_eq!(h.paint(&["header", &typed, "footer"]), "");
    // Moving the marker alone moves the cursor without rewriting rows.
    let moved = format!("> \x1b[7m{CURSOR_MARKER}你\x1b[27mx");
    let frame = h.paint(&["header", &moved, "footer"]);
    assert_eq!(frame, format!("{SYNC_BEGIN}\x1b[3G{SYNC_END}"));
    assert_eq!(h.term.cursor(), (1, 2));
    // No marker: the rows stay, the cursor hides.
    let frame = h.paint(&["header", "> \x1b[7m你\x1b[27mx", "footer"]);
    assert_eq!(frame, format!("{SYNC_BEGIN}{HIDE_CURSOR}{SYNC_END}"));
}

#[test]
fn the_cursor_stays_hidden_unless_asked() {
    let mut h = Harness::new(20, 5);
    h.paint(&[&format!("ab{CURSOR_MARKER}")]);
    assert_eq!(h.term.cursor(), (0, 2));
    assert!(!h.term.cursor_visible());
}

#[test]
fn markers_above_the_screen_are_ignored() {
    let mut lines = numbered(6);
    lines[0] = format!("x{CURSOR_MARKER}");
    assert_eq!(extract_cursor(&mut lines, 3), None);
    lines[4] = format!("ab{CURSOR_MARKER}c");
    assert_eq!(
        extract_cursor(&mut lines, 3),
        Some(CursorPos { row: 4, col: 2 })
    );
    assert_eq!(lines[4], "abc");
}

#[test]
fn every_frame_of_a_session_is_synchronized() {
    let mut h = Harness::new(16, 4);
    let script: Vec<Vec<String>> = vec![
        numbered(2),
        numbered(3),
        numbered(9),
        vec!["x".into()],
        numbered(4),
        vec!["你好".into(), "b".into()],
    ];
    for (i, lines) in script.iter().enumerate() {
        if i == 4 {
            h.term.resize(14, 4);
        }
        let frame = h.paint(&refs(lines));
        assert_sync(&frame);
        let tail = &lines[lines.len().saturating_sub(4)..];
        assert_eq!(h.screen(), refs(tail), "after frame {i}");
    }
}

#[test]
#[should_panic(expected = "rendered line 1 is 6 columns wide, wider than the terminal (5)")]
fn a_too_wide_line_is_caught() {
    let mut h = Harness::new(5, 3);
    h.paint(&["ok", "123456"]);
}

#[test]
fn finish_leaves_the_cursor_below_the_content() {
    let mut h = Harness::new(20, 5);
    h.paint(&["a", "b", "c"]);
    h.paint(&["A", "b", "c"]);
    let out = h.renderer.finish();
    crate::tui::terminal::Terminal::write(&mut h.term, &out);
    assert_eq!(h.term.cursor(), (3, 0));
    assert!(h.term.cursor_visible());
}

/// A Kitty image row as the Image component draws it (cursor up, place, cursor down).
fn kitty_row(id: u32) -> String {
    format!(
        "\x1b[1A\x1b_Ga=T,f=100,q=2,C=1,c=4,r=2,i={id};{}\x1b\\\x1b[1B",
        "QUJD".repeat(40)
    )
}

fn delete(id: u32) -> String {
    format!("\x1b_Ga=d,d=I,i={id},q=2\x1b\\")
}

#[test]
fn image_rows_are_written_without_width_check_or_reset() {
    let mut h = Harness::new(20, 6);
    let image = kitty_row(7);
    let frame = h.paint(&["top", "", &image, "end"]);
    // The payload is far wider than 20 columns: no panic, no cut, no reset after it.
    assert!(frame.contains(&format!("{image}\r\n")), "{frame:?}");
    assert!(!frame.contains(&format!("{image}{LINE_RESET}")));
    assert!(frame.contains(&format!("top{LINE_RESET}")));
}

#[test]
fn rewriting_rows_deletes_their_images_first_and_reaches_down_to_moved_images() {
    let mut h = Harness::new(20, 8);
    let image = kitty_row(7);
    h.paint(&["top", "", &image, "end"]);
    // A change above the image: the image row may have moved, so it is rewritten too,
    // after its image was deleted.
    let frame = h.paint(&["TOP", "", &image, "end"]);
    assert_sync(&frame);
    let body = &frame[SYNC_BEGIN.len()..];
    assert!(
        body.starts_with(&delete(7)),
        "delete comes first: {frame:?}"
    );
    assert_eq!(frame.matches(&delete(7)).count(), 1);
    assert!(frame.contains(&image), "image row rewritten: {frame:?}");
    assert!(
        !frame.contains("end"),
        "rows past the last image stay: {frame:?}"
    );

    // A change below the image leaves it alone.
    let frame = h.paint(&["TOP", "", &image, "END"]);
    assert!(!frame.contains("\x1b_G"), "{frame:?}");

    // Removing the image rows deletes the image.
    let frame = h.paint(&["TOP"]);
    assert!(frame.contains(&delete(7)), "{frame:?}");
    assert_eq!(h.screen(), ["TOP"]);
    let frame = h.paint(&["TOP", "x"]);
    assert!(
        !frame.contains("\x1b_G"),
        "the deleted image is forgotten: {frame:?}"
    );
}

#[test]
fn a_full_repaint_deletes_every_previous_image_before_clearing() {
    let mut h = Harness::new(20, 8);
    h.paint(&[&kitty_row(7), "text", &kitty_row(9)]);
    h.term.resize(30, 8);
    let frame = h.paint(&["new", "frame"]);
    assert_sync(&frame);
    let body = &frame[SYNC_BEGIN.len()..];
    let deletes = format!("{}{}", delete(7), delete(9));
    assert!(
        body.starts_with(&format!("{deletes}{CLEAR_ALL}")),
        "deletes, then the clear: {frame:?}"
    );
    h.term.resize(25, 8);
    let frame = h.paint(&["again"]);
    assert!(
        !frame.contains("\x1b_G"),
        "nothing left to delete: {frame:?}"
    );
}
