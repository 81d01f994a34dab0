//! Whole-screen properties of `Tui` on the virtual terminal: after every frame of long
//! scripted sequences (streaming, shrinking, edits of wide characters, overlays opening and
//! closing, resizes) the screen shows exactly the frame, every frame is synchronized, and
//! the change hint of a lent transcript never changes a byte; and the editor's hardware
//! cursor sits on its drawn cursor for ASCII, CJK and emoji, wrapped or not.

use super::*;
use crate::tui::components::editor::Editor;
use crate::tui::components::text::Text;
use crate::tui::keys::parse_key_id;
use crate::tui::overlay::{Anchor, Extent};
use crate::tui::renderer::{SYNC_BEGIN, SYNC_END};
use crate::tui::text::strip_ansi;
use crate::tui::virtual_terminal::VirtualTerminal;
use crate::tui::{Container, KeyCode, KeyEvent, StaticLines};

/// A small deterministic generator (xorshift), so failures replay.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

// No emoji modifier sequences here: vt100 draws `👍🏽` as two wide cells where terminals that
// cluster graphemes (and our width table) draw one; the width table tests cover them.
const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "日本語",
    "テキスト",
    "🙂",
    "👍",
    "e\u{301}",
    "\x1b[1mbold\x1b[22m",
    "\x1b]8;;https://x.y\x07link\x1b]8;;\x07",
    "x",
    "wide字",
    "\n",
    "longerword",
];

/// Hides a component's lending, so the same frames go through the plain path.
struct Plain<'a>(&'a mut Container);

impl Component for Plain<'_> {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.0.render(width)
    }
}

fn new_tui(cols: usize, rows: usize) -> Tui<VirtualTerminal> {
    let mut tui = Tui::new(VirtualTerminal::new(cols, rows));
    tui.renderer_mut().set_termux(false);
    tui
}

/// What the screen must show: the frame's rows from the viewport top, styles stripped.
fn expected_screen(tui: &Tui<VirtualTerminal>) -> Vec<String> {
    let (_, rows) = tui.terminal().size();
    let frame = tui.renderer().previous_lines();
    let top = tui.renderer().viewport_top();
    (top..top + rows)
        .map(|r| {
            frame
                .get(r)
                .map_or(String::new(), |l| strip_ansi(l).trim_end().to_string())
        })
        .collect()
}

fn box_overlay(rows: usize) -> StaticLines {
    StaticLines((0..rows).map(|i| format!("┌overlay {i}┐")).collect())
}

fn text_of(rng: &mut Rng, most: usize) -> String {
    let words = 1 + rng.below(most);
    (0..words)
        .map(|_| rng.pick(WORDS))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One scripted step applied to both copies of the transcript.
fn mutate(rng: &mut Rng, root: &mut Container, streaming: &mut String) {
    match rng.below(8) {
        0..=2 => {
            streaming.push(' ');
            streaming.push_str(&text_of(rng, 3));
            if let Some(last) = root.children.last_mut() {
                *last = Box::new(Text::new(streaming.clone(), 1, 0));
            }
        }
        3 => {
            streaming.clear();
            root.push(Text::new("", 1, 0));
        }
        4 if root.len() > 1 => {
            root.children.pop();
            streaming.clear();
        }
        5 if !root.is_empty() => {
            let i = rng.below(root.len());
            root.children[i] = Box::new(Text::new(text_of(rng, 6), 1, 0));
        }
        6 => {
            let i = rng.below(root.len() + 1);
            root.children
                .insert(i, Box::new(Text::new(text_of(rng, 4), 0, 0)));
        }
        _ => {
            // Cut at a word gap: never inside an escape sequence.
            let gaps: Vec<usize> = streaming.match_indices(' ').map(|(i, _)| i).collect();
            let half = gaps.get(gaps.len() / 2).copied().unwrap_or(0);
            streaming.truncate(half);
            if let Some(last) = root.children.last_mut() {
                *last = Box::new(Text::new(streaming.clone(), 1, 0));
            }
        }
    }
}

#[test]
fn every_frame_shows_exactly_what_was_rendered_and_the_hint_changes_no_byte() {
    for seed in 1..=12u64 {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
        let mut lent = new_tui(40, 10);
        let mut plain = new_tui(40, 10);
        let mut lent_root = Container::new();
        let mut plain_root = Container::new();
        let mut streaming = String::new();
        let mut overlays: Vec<(OverlayId, OverlayId)> = Vec::new();
        for step in 0..150 {
            // Both roots get the same mutations: replay them from a cloned generator.
            let mut twin = Rng(rng.0);
            let mut twin_stream = streaming.clone();
            mutate(&mut rng, &mut lent_root, &mut streaming);
            mutate(&mut twin, &mut plain_root, &mut twin_stream);
            match rng.below(14) {
                0 => {
                    let opts = || OverlayOptions {
                        anchor: Anchor::Center,
                        width: Some(Extent::Cells(16)),
                        ..OverlayOptions::default()
                    };
                    let rows = 1 + rng.below(4);
                    overlays.push((
                        lent.show_overlay(box_overlay(rows), opts()),
                        plain.show_overlay(box_overlay(rows), opts()),
                    ));
                }
                1 => {
                    if let Some((a, b)) = overlays.pop() {
                        lent.close_overlay(a);
                        plain.close_overlay(b);
                    }
                }
                2 => {
                    let (cols, rows) = (20 + rng.below(40), 4 + rng.below(12));
                    lent.terminal_mut().resize(cols, rows);
                    plain.terminal_mut().resize(cols, rows);
                }
                _ => {}
            }
            lent.render(&mut lent_root).unwrap();
            plain.render(&mut Plain(&mut plain_root)).unwrap();
            let frames = lent.terminal_mut().take_frames();
            assert_eq!(
                frames,
                plain.terminal_mut().take_frames(),
                "seed {seed} step {step}: the hint changed the output"
            );
            for f in &frames {
                assert!(f.starts_with(SYNC_BEGIN) && f.ends_with(SYNC_END), "{f:?}");
            }
            assert_eq!(
                lent.terminal().screen_lines(),
                expected_screen(&lent),
                "seed {seed} step {step}: stale or missing text"
            );
        }
    }
}

/// A header above an editor, like the chat screen.
struct Screen {
    header: Vec<String>,
    editor: Editor,
}

impl Component for Screen {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = self.header.clone();
        lines.extend(self.editor.render(width));
        lines
    }
}

fn press(tui: &mut Tui<VirtualTerminal>, screen: &mut Screen, id: &str) {
    let event = InputEvent::Key(parse_key_id(id).unwrap());
    tui.handle_input(&event, &mut screen.editor);
}

fn type_text(tui: &mut Tui<VirtualTerminal>, screen: &mut Screen, text: &str) {
    for c in text.chars() {
        let event = InputEvent::Key(KeyEvent::plain(KeyCode::Char(c)));
        tui.handle_input(&event, &mut screen.editor);
    }
}

/// The hardware cursor is on the one reverse-video cell the editor drew.
fn assert_cursor_on_fake_cursor(tui: &mut Tui<VirtualTerminal>, screen: &mut Screen, what: &str) {
    tui.render(screen).unwrap();
    let vt = tui.terminal();
    let inverse = vt.inverse_cells();
    assert_eq!(
        inverse.len(),
        1,
        "{what}: one drawn cursor: {:?}",
        vt.screen_lines()
    );
    assert_eq!(
        vt.cursor(),
        inverse[0],
        "{what}: hardware cursor vs drawn cursor on {:?}",
        vt.screen_lines()
    );
}

#[test]
fn the_editor_cursor_is_where_the_text_says() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("ascii", "hello world", &["left", "left"]),
        ("cjk", "日本語のテキスト", &["left", "left", "left"]),
        ("emoji", "hi 🙂👍 ok", &["left", "left", "left", "left"]),
        (
            "combining",
            "cafe\u{301} e\u{301}",
            &["left", "left", "left"],
        ),
        // 14 columns of content: these wrap onto several rows.
        (
            "wrapped ascii",
            "the quick brown fox jumps over the lazy dog",
            &["ctrl+a", "down"],
        ),
        (
            "wrapped cjk",
            "漢字と仮名の混じった長い文章です",
            &["up", "right"],
        ),
        (
            "wrapped emoji",
            "🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂",
            &["ctrl+a", "down", "right"],
        ),
    ];
    for (what, text, moves) in cases {
        let mut tui = new_tui(16, 12);
        let mut screen = Screen {
            header: vec!["header".into(), "日本 header".into()],
            editor: Editor::new(),
        };
        assert_cursor_on_fake_cursor(&mut tui, &mut screen, &format!("{what}: empty"));
        for (i, c) in text.chars().enumerate() {
            type_text(&mut tui, &mut screen, &c.to_string());
            assert_cursor_on_fake_cursor(&mut tui, &mut screen, &format!("{what}: typed {i}"));
        }
        for m in *moves {
            press(&mut tui, &mut screen, m);
            assert_cursor_on_fake_cursor(&mut tui, &mut screen, &format!("{what}: after {m}"));
        }
        press(&mut tui, &mut screen, "backspace");
        assert_cursor_on_fake_cursor(&mut tui, &mut screen, &format!("{what}: backspace"));
        tui.terminal_mut().resize(11, 12);
        assert_cursor_on_fake_cursor(&mut tui, &mut screen, &format!("{what}: narrower"));
    }
}
