//! Manager tests on the virtual terminal: overlay compositing and cleanup, focus routing and
//! restore, cursor markers from the focused source only, and frame pacing.

use super::*;
use crate::tui::overlay::{Anchor, Extent};
use crate::tui::renderer::{SYNC_BEGIN, SYNC_END};
use crate::tui::virtual_terminal::VirtualTerminal;
use crate::tui::{KeyCode, KeyEvent, StaticLines};

/// Renders fixed lines and records the input it receives.
#[derive(Default)]
struct Probe {
    lines: Vec<String>,
    got: Vec<InputEvent>,
    wants_release: bool,
}

impl Probe {
    fn new(lines: &[&str]) -> Self {
        Probe {
            lines: lines.iter().map(|l| l.to_string()).collect(),
            ..Probe::default()
        }
    }
}

impl Component for Probe {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.lines
            .iter()
            .map(|l| crate::tui::text::truncate_to_width(l, width, "", false))
            .collect()
    }
    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.got.push(event.clone());
        true
    }
    fn wants_key_release(&self) -> bool {
        self.wants_release
    }
}

fn key(c: char) -> InputEvent {
    InputEvent::Key(KeyEvent::plain(KeyCode::Char(c)))
}

fn tui(cols: usize, rows: usize) -> Tui<VirtualTerminal> {
    let mut tui = Tui::new(VirtualTerminal::new(cols, rows));
    tui.renderer_mut().set_termux(false);
    tui
}

fn lines(text: &[&str]) -> StaticLines {
    StaticLines(text.iter().map(|l| l.to_string()).collect())
}

fn at(anchor: Anchor, width: usize) -> OverlayOptions {
    OverlayOptions {
        anchor,
        width: Some(Extent::Cells(width)),
        ..OverlayOptions::default()
    }
}

#[test]
fn an_overlay_draws_over_the_base_and_closing_it_leaves_nothing_behind() {
    let mut t = tui(20, 5);
    let mut root = lines(&["base one", "你好世界 wide", "\x1b[31mred line\x1b[0m"]);
    t.render(&mut root).unwrap();
    let id = t.show_overlay(
        Probe::new(&["┌──┐", "│ok│", "└──┘"]),
        at(Anchor::TopLeft, 4),
    );
    t.render(&mut root).unwrap();
    assert_eq!(
        t.terminal().screen_text(),
        ["┌──┐ one", "│ok│世界 wide", "└──┘line"]
    );
    let closed = t.close_overlay(id).expect("overlay was open");
    assert!(closed.into_any().downcast::<Probe>().is_ok());
    t.terminal_mut().take_frames();
    t.render(&mut root).unwrap();
    assert_eq!(
        t.terminal().screen_text(),
        ["base one", "你好世界 wide", "red line"]
    );
    let frames = t.terminal_mut().take_frames();
    assert_eq!(frames.len(), 1);
    assert!(frames[0].starts_with(SYNC_BEGIN) && frames[0].ends_with(SYNC_END));
    assert_eq!(
        t.renderer().full_redraws(),
        1,
        "closing must not repaint everything"
    );
}

#[test]
fn an_overlay_over_a_short_frame_pads_to_the_screen_and_cleans_up() {
    let mut t = tui(20, 6);
    let mut root = lines(&["only line"]);
    t.render(&mut root).unwrap();
    let id = t.show_overlay(Probe::new(&["menu"]), at(Anchor::BottomRight, 6));
    t.render(&mut root).unwrap();
    assert_eq!(
        t.terminal().screen_lines(),
        ["only line", "", "", "", "", "              menu"]
    );
    t.close_overlay(id);
    t.render(&mut root).unwrap();
    assert_eq!(t.terminal().screen_text(), ["only line"]);
}

#[test]
fn input_follows_focus_and_focus_is_restored_in_order() {
    let mut t = tui(40, 10);
    let mut base = Probe::new(&["editor"]);
    let a = t.show_overlay(Probe::new(&["A"]), OverlayOptions::default());
    assert_eq!(t.handle_input(&key('1'), &mut base), Focus::Overlay(a));
    let b = t.show_overlay(Probe::new(&["B"]), OverlayOptions::default());
    assert_eq!(t.handle_input(&key('2'), &mut base), Focus::Overlay(b));
    // B lets go: A takes focus back.
    t.unfocus_overlay(b);
    assert!(t.is_overlay_focused(a));
    t.focus_overlay(b);
    t.close_overlay(b);
    assert!(t.is_overlay_focused(a));
    t.close_overlay(a);
    assert_eq!(t.focus(), Focus::Base);
    assert_eq!(t.handle_input(&key('3'), &mut base), Focus::Base);
    assert_eq!(base.got, [key('3')]);
    let got_a = t.overlay_mut::<Probe>(a).map(|p| p.got.clone());
    assert_eq!(got_a, None, "closed overlays are gone");
}

#[test]
fn closing_the_covered_overlay_hands_its_return_focus_to_the_one_above() {
    let mut t = tui(40, 10);
    let a = t.show_overlay(Probe::new(&["A"]), OverlayOptions::default());
    let b = t.show_overlay(Probe::new(&["B"]), OverlayOptions::default());
    t.close_overlay(a);
    assert!(t.is_overlay_focused(b));
    t.close_overlay(b);
    assert_eq!(t.focus(), Focus::Base);
}

#[test]
fn non_capturing_and_hidden_overlays_do_not_take_input() {
    let mut t = tui(40, 10);
    let mut base = Probe::new(&["editor"]);
    let hint = t.show_overlay(
        Probe::new(&["hint"]),
        OverlayOptions {
            non_capturing: true,
            ..OverlayOptions::default()
        },
    );
    assert_eq!(t.handle_input(&key('x'), &mut base), Focus::Base);
    let menu = t.show_overlay(Probe::new(&["menu"]), OverlayOptions::default());
    t.set_overlay_hidden(menu, true);
    assert_eq!(t.is_overlay_hidden(menu), Some(true));
    assert_eq!(t.handle_input(&key('y'), &mut base), Focus::Base);
    t.set_overlay_hidden(menu, false);
    assert_eq!(t.handle_input(&key('z'), &mut base), Focus::Overlay(menu));
    assert_eq!(base.got, [key('x'), key('y')]);
    let menu_got = t.overlay_mut::<Probe>(menu).map(|p| p.got.clone());
    assert_eq!(menu_got, Some(vec![key('z')]));
    assert!(t.overlay_mut::<StaticLines>(hint).is_none(), "wrong type");
}

#[test]
fn an_overlay_invisible_at_this_size_gives_input_back() {
    let mut t = tui(40, 10);
    let mut base = Probe::new(&["editor"]);
    let wide_only = t.show_overlay(
        Probe::new(&["wide"]),
        OverlayOptions {
            visible: Some(Box::new(|cols, _| cols >= 30)),
            ..OverlayOptions::default()
        },
    );
    assert_eq!(
        t.handle_input(&key('a'), &mut base),
        Focus::Overlay(wide_only)
    );
    t.terminal_mut().resize(20, 10);
    assert!(!t.has_overlay());
    assert_eq!(t.handle_input(&key('b'), &mut base), Focus::Base);
    t.render(&mut base).unwrap();
    assert_eq!(t.terminal().screen_text(), ["editor"]);
}

#[test]
fn key_releases_reach_only_components_that_ask() {
    let mut t = tui(40, 10);
    let mut base = Probe::new(&["editor"]);
    let mut release = KeyEvent::plain(KeyCode::Enter);
    release.kind = KeyKind::Release;
    let release = InputEvent::Key(release);
    t.handle_input(&release, &mut base);
    assert!(base.got.is_empty());
    base.wants_release = true;
    t.handle_input(&release, &mut base);
    assert_eq!(base.got, [release]);
}

#[test]
fn only_the_focused_source_places_the_cursor() {
    let mut t = tui(20, 6);
    t.renderer_mut().set_show_hardware_cursor(true);
    let mut root = lines(&["transcript", &format!("> ab{CURSOR_MARKER}")]);
    t.render(&mut root).unwrap();
    assert_eq!(t.terminal().cursor(), (1, 4));
    let id = t.show_overlay(
        Probe::new(&[&format!("find: x{CURSOR_MARKER}")]),
        at(Anchor::TopLeft, 10),
    );
    t.render(&mut root).unwrap();
    assert_eq!(t.terminal().cursor(), (0, 7));
    let frames = t.terminal().frames().join("");
    assert!(
        !frames.contains(CURSOR_MARKER),
        "markers never reach the terminal"
    );
    t.close_overlay(id);
    t.render(&mut root).unwrap();
    assert_eq!(t.terminal().cursor(), (1, 4));
}

#[test]
fn frames_are_paced_and_requests_coalesce() {
    let mut t = tui(20, 5);
    let mut root = lines(&["x"]);
    let t0 = Instant::now();
    assert!(
        t.render_if_due(t0, &mut root).unwrap(),
        "first frame is due at once"
    );
    assert_eq!(t.next_deadline(), None, "nothing wanted");
    t.request_render();
    t.request_render();
    assert_eq!(t.next_deadline(), Some(t0 + MIN_RENDER_INTERVAL));
    assert!(!t
        .render_if_due(t0 + Duration::from_millis(5), &mut root)
        .unwrap());
    assert!(t.tick(t0 + MIN_RENDER_INTERVAL, &mut root).unwrap());
    assert!(!t.tick(t0 + Duration::from_millis(40), &mut root).unwrap());
}

#[test]
fn stop_and_suspend_leave_the_cursor_below_and_repaint_after() {
    let mut t = tui(20, 5);
    let mut root = lines(&["a", "b"]);
    t.start().unwrap();
    t.render(&mut root).unwrap();
    t.suspend().unwrap();
    assert_eq!(t.terminal().suspends(), 1);
    assert_eq!(t.terminal().cursor(), (2, 0));
    assert!(t.render_if_due(Instant::now(), &mut root).unwrap());
    assert_eq!(t.renderer().full_redraws(), 2);
    assert_eq!(t.terminal_mut().all_lines(), ["a", "b"]);
    t.stop().unwrap();
    assert!(!t.terminal().started());
    assert!(t.terminal().cursor_visible());
}

#[test]
fn resizing_under_an_overlay_repaints_cleanly() {
    let mut t = tui(30, 6);
    let mut root = lines(&["first line of text", "second line"]);
    t.render(&mut root).unwrap();
    let id = t.show_overlay(Probe::new(&["[dialog]"]), at(Anchor::Center, 8));
    t.render(&mut root).unwrap();
    assert_eq!(t.terminal().screen_lines()[2], "           [dialog]");
    t.terminal_mut().resize(20, 4);
    t.render(&mut root).unwrap();
    assert_eq!(
        t.terminal().screen_lines(),
        ["first line of text", "second[dialog]", "", ""]
    );
    t.close_overlay(id);
    t.render(&mut root).unwrap();
    assert_eq!(
        t.terminal_mut().all_lines(),
        ["first line of text", "second line"]
    );
}

#[test]
fn the_transcript_can_stream_under_an_overlay() {
    let mut t = tui(20, 4);
    let mut root = lines(&["a"]);
    t.render(&mut root).unwrap();
    let id = t.show_overlay(
        Probe::new(&["OVER"]),
        OverlayOptions {
            anchor: Anchor::TopRight,
            width: Some(Extent::Cells(4)),
            non_capturing: true,
            ..OverlayOptions::default()
        },
    );
    for i in 0..6 {
        root.0.push(format!("line {i}"));
        t.render(&mut root).unwrap();
    }
    assert_eq!(
        t.terminal().screen_lines(),
        ["line 2          OVER", "line 3", "line 4", "line 5"]
    );
    t.close_overlay(id);
    t.render(&mut root).unwrap();
    assert_eq!(
        t.terminal().screen_text(),
        ["line 2", "line 3", "line 4", "line 5"]
    );
    assert_eq!(t.terminal_mut().all_lines()[..3], ["a", "line 0", "line 1"]);
}
