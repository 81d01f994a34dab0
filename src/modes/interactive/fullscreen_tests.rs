//! Fullscreen mode on the virtual terminal: the alternate screen with the editor docked at the
//! bottom, the transcript window scrolled by keys and the wheel, transcript search, mouse
//! selection copied over OSC 52, and the transcript left in the scrollback on exit.

use super::*;
use crate::tui::virtual_terminal::VirtualTerminal;

const PAGE_UP: &str = "\x1b[5~";
const CTRL_END: &str = "\x1b[1;5F";
const CTRL_HOME: &str = "\x1b[1;5H";
const CTRL_SHIFT_F: &str = "\x1b[102;6u";
const CTRL_SHIFT_UP: &str = "\x1b[1;6A";

fn fullscreen(model: &str, tweak: impl Fn(&mut fullscreen::TuiOptions)) -> Harness {
    harness_setup(model, &[], false, &mut |_, _, env| {
        env.tui = fullscreen::TuiOptions {
            fullscreen: true,
            ..fullscreen::TuiOptions::regular()
        };
        tweak(&mut env.tui);
    })
}

/// A reply of `n` numbered lines, after a prompt.
fn long_reply(h: &mut Harness, model: &str, prompt: &str, n: usize) {
    let body: Vec<String> = (1..=n).map(|i| format!("row number {i}")).collect();
    push_reply(model, Reply::text(&body.join("\n\n")));
    h.type_bytes(&format!("{prompt}\r"));
    h.wait_idle();
    h.wait_for("the reply", |h| {
        h.visible()
            .iter()
            .any(|l| l.contains(&format!("row number {n}")))
    });
}

impl Harness {
    fn visible(&self) -> Vec<String> {
        self.app.tui.terminal().screen_lines()
    }

    fn term(&self) -> &VirtualTerminal {
        self.app.tui.terminal()
    }

    /// Types `bytes` and lets the next frame be drawn (frames are at most every 16 ms).
    fn key(&mut self, bytes: &str) {
        self.type_bytes(bytes);
        std::thread::sleep(Duration::from_millis(20));
        self.app
            .step(&self.input, Duration::from_millis(1))
            .unwrap();
    }

    fn shows(&self, text: &str) -> bool {
        self.visible().iter().any(|l| l.contains(text))
    }
}

#[test]
fn the_transcript_scrolls_above_the_docked_editor_by_keys_and_wheel() {
    let mut h = fullscreen("fs-scroll", |_| {});
    assert!(h.term().alternate_screen());
    assert!(h.term().mouse_tracking());
    let frames = h.app.tui.terminal().frames().concat();
    assert!(
        !frames.contains("\x1b[3J"),
        "the shell's scrollback is never erased"
    );
    h.wait_text("fs-scroll");
    // A short session: transcript at the top, the dock at the bottom, blank between.
    let rows = h.visible();
    assert_eq!(rows.len(), 24);
    assert!(rows[1].contains("▀▀█  v"), "{rows:#?}");
    assert!(
        rows[23].contains("fs-scroll"),
        "footer on the last row: {rows:#?}"
    );
    long_reply(&mut h, "fs-scroll", "first question", 30);
    let rows = h.visible();
    assert!(rows[23].contains("fs-scroll"), "{rows:#?}");
    assert!(!h.shows("▀▀█  v"), "the header scrolled out of the window");
    assert!(!h.shows("Jump to latest message"));

    h.key(PAGE_UP);
    assert!(!h.shows("row number 30"), "{:#?}", h.visible());
    assert!(h.shows("↓ Jump to latest message · Ctrl+End"));
    assert!(
        h.app.view.editor.is_empty(),
        "the editor did not get the key"
    );
    h.key(CTRL_END);
    assert!(h.shows("row number 30"));
    assert!(!h.shows("Jump to latest message"));

    h.key(CTRL_HOME);
    assert!(h.shows("▀▀█  v"), "{:#?}", h.visible());
    // Wheel down (three notches), then the prompt jump lands on the user message.
    let top = h.app.view.fullscreen.as_ref().unwrap().scroll().top();
    for _ in 0..3 {
        h.key("\x1b[<65;10;5M");
    }
    let moved = h.app.view.fullscreen.as_ref().unwrap().scroll().top() - top;
    assert!((3..=9).contains(&moved), "moved {moved}");
    h.key(CTRL_END);
    h.key(CTRL_SHIFT_UP);
    let rows = h.visible();
    assert!(
        rows[..2].iter().any(|r| r.contains("first question")),
        "{rows:#?}"
    );
    // Alt+wheel up moves five times as far.
    h.key(CTRL_END);
    let end = h.app.view.fullscreen.as_ref().unwrap().scroll().top();
    h.key("\x1b[<72;10;5M");
    let top = h.app.view.fullscreen.as_ref().unwrap().scroll().top();
    assert_eq!(end - top, 5);
}

#[test]
fn search_finds_highlights_and_steps_through_matches() {
    let mut h = fullscreen("fs-search", |_| {});
    long_reply(&mut h, "fs-search", "search me", 30);
    h.key(CTRL_SHIFT_F);
    assert!(h.shows("Find in transcript"), "{:#?}", h.visible());
    h.key("row number 2");
    // "row number 2" and "row number 20".."29": eleven matches, the first below the view top.
    let rows = h.visible();
    let counter = rows.iter().find(|l| l.contains("/11")).cloned();
    assert!(counter.is_some(), "{rows:#?}");
    assert!(
        h.term().inverse_cells().len() > 10,
        "the current match is drawn inverse"
    );
    assert!(
        h.app.view.editor.is_empty(),
        "typing went to the search box"
    );
    h.key("\r");
    let next = h.visible().into_iter().find(|l| l.contains("/11")).unwrap();
    assert_ne!(Some(next.clone()), counter, "Enter selects the next match");
    h.key("\x1b[13;2u");
    let back = h.visible().into_iter().find(|l| l.contains("/11"));
    assert_eq!(back, counter, "Shift+Enter goes back");
    // The first match is at the top of the transcript: search scrolls to it.
    for _ in 0..10 {
        h.key("\r");
    }
    assert!(h.shows("Jump to latest message"), "{:#?}", h.visible());
    h.key("\x1b");
    // A lone Escape is known once the parser's wait for more bytes is over.
    std::thread::sleep(crate::tui::stdin_buffer::ESCAPE_TIMEOUT);
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(20));
        h.app.step(&h.input, Duration::from_millis(1)).unwrap();
    }
    assert!(!h.shows("Find in transcript") && !h.shows("/11"));
}

#[test]
fn a_drag_selects_and_copies_over_osc52_and_a_double_click_takes_a_word() {
    let mut h = fullscreen("fs-select", |_| {});
    long_reply(&mut h, "fs-select", "select me", 3);
    let rows = h.visible();
    let y = rows
        .iter()
        .position(|l| l.contains("row number 2"))
        .unwrap();
    let x = rows[y].find("row").unwrap();
    h.app.tui.terminal_mut().take_frames();
    // Press on "row", drag to the end of "number", release.
    h.key(&format!("\x1b[<0;{};{}M", x + 1, y + 1));
    h.key(&format!("\x1b[<32;{};{}M", x + 10, y + 1));
    h.key(&format!("\x1b[<0;{};{}m", x + 10, y + 1));
    let frames = h.app.tui.terminal_mut().take_frames().concat();
    let encoded = crate::util::encoding::base64_encode(b"row number");
    assert!(
        frames.contains(&format!("\x1b]52;c;{encoded}\x07")),
        "{frames:?}"
    );
    assert!(h.shows("Copied!"));
    assert!(
        h.term().inverse_cells().len() >= 10,
        "the selection is highlighted"
    );
    // A double click selects the word under the pointer.
    let (cx, cy) = (x + 5, y + 1);
    for _ in 0..2 {
        h.key(&format!("\x1b[<0;{cx};{cy}M"));
        h.key(&format!("\x1b[<0;{cx};{cy}m"));
    }
    let frames = h.app.tui.terminal_mut().take_frames().concat();
    let word = crate::util::encoding::base64_encode(b"number");
    assert!(
        frames.contains(&format!("\x1b]52;c;{word}\x07")),
        "{frames:?}"
    );
}

#[test]
fn without_copy_on_select_the_copy_key_copies_the_selection() {
    let mut h = fullscreen("fs-copy", |o| o.copy_on_select = false);
    long_reply(&mut h, "fs-copy", "copy me", 2);
    let rows = h.visible();
    let y = rows
        .iter()
        .position(|l| l.contains("row number 1"))
        .unwrap()
        + 1;
    let x = rows[y - 1].find("row").unwrap() + 1;
    h.app.tui.terminal_mut().take_frames();
    h.key(&format!("\x1b[<0;{x};{y}M"));
    h.key(&format!("\x1b[<32;{};{y}M", x + 2));
    h.key(&format!("\x1b[<0;{};{y}m", x + 2));
    assert!(!h
        .app
        .tui
        .terminal_mut()
        .take_frames()
        .concat()
        .contains("\x1b]52"));
    h.key("\x18");
    let frames = h.app.tui.terminal_mut().take_frames().concat();
    let encoded = crate::util::encoding::base64_encode(b"row");
    assert!(
        frames.contains(&format!("\x1b]52;c;{encoded}\x07")),
        "{frames:?}"
    );
}

#[test]
fn on_exit_the_normal_screen_gets_the_transcript_or_nothing() {
    for transcript in [true, false] {
        let mut h = fullscreen("fs-exit", |o| o.exit_transcript = transcript);
        long_reply(&mut h, "fs-exit", "bye now", 2);
        h.app.stop().unwrap();
        assert!(!h.term().alternate_screen());
        assert!(!h.term().mouse_tracking());
        let screen = h.screen();
        assert_eq!(screen.contains("bye now"), transcript, "{screen}");
    }
}

#[test]
fn focus_reports_and_stray_mouse_reports_never_reach_the_editor() {
    let mut h = fullscreen("fs-focus", |_| {});
    h.wait_text("fs-focus");
    for bytes in [
        "\x1b[I",
        "\x1b[O",
        "\x1b[<35;10;5M",
        "\x1b[<0;10;40m",
        "\x1b[<66;1;1M",
    ] {
        h.key(bytes);
    }
    h.key("ok");
    assert_eq!(h.app.view.editor.get_text(), "ok");
}

#[test]
fn regular_mode_stays_on_the_normal_screen() {
    let mut h = harness("fs-regular");
    h.wait_text("fs-regular");
    assert!(!h.term().alternate_screen());
    assert!(!h.term().mouse_tracking());
    assert!(h.app.view.fullscreen.is_none());
}

/// The last column of the transcript window's rows (the dock's five rows excluded).
fn scrollbar_column(h: &Harness) -> String {
    let rows = h.visible();
    rows[..rows.len() - 6]
        .iter()
        .map(|r| {
            let chars: Vec<char> = r.chars().collect();
            if chars.len() == 80 {
                chars[79]
            } else {
                ' '
            }
        })
        .collect()
}

#[test]
fn the_scrollbar_shows_as_the_setting_says() {
    use fullscreen::Scrollbar;
    let mut h = fullscreen("fs-bar-always", |o| o.scrollbar = Scrollbar::Always);
    long_reply(&mut h, "fs-bar-always", "bar", 30);
    let bar = scrollbar_column(&h);
    assert!(bar.chars().all(|c| c == '│' || c == '┃'), "{bar:?}");
    assert!(bar.ends_with('┃'), "the thumb sits at the bottom: {bar:?}");
    h.key(CTRL_HOME);
    assert!(scrollbar_column(&h).starts_with('┃'));

    let mut h = fullscreen("fs-bar-auto", |o| o.scrollbar = Scrollbar::Auto);
    long_reply(&mut h, "fs-bar-auto", "bar", 30);
    assert!(!scrollbar_column(&h).contains('┃'), "hidden until scrolled");
    h.key(PAGE_UP);
    assert!(scrollbar_column(&h).contains('┃'), "shown while scrolling");

    let mut h = fullscreen("fs-bar-hidden", |o| o.scrollbar = Scrollbar::Hidden);
    long_reply(&mut h, "fs-bar-hidden", "bar", 30);
    h.key(PAGE_UP);
    assert!(!scrollbar_column(&h).contains('┃'));
}

#[test]
fn a_click_on_a_finished_tool_block_expands_and_collapses_it() {
    let mut h = fullscreen("fs-click", |_| {});
    let file = h.dir.path().join("lines.txt");
    let body: Vec<String> = (1..=30).map(|i| format!("file line {i}")).collect();
    std::fs::write(&file, body.join("\n")).unwrap();
    push_reply(
        "fs-click",
        Reply {
            blocks: vec![Block::ToolCall {
                id: "call_read".into(),
                name: "read".into(),
                arguments: json!({"path": file.to_string_lossy()}),
            }],
            ..Default::default()
        },
    );
    push_reply("fs-click", Reply::text("read it"));
    h.type_bytes("show the file\r");
    h.wait_idle();
    h.wait_for("the reply", |h| h.shows("read it"));
    assert!(h.shows("more lines"), "collapsed: {:#?}", h.visible());
    assert!(!h.shows("file line 30"));
    let y = h
        .visible()
        .iter()
        .position(|l| l.contains("file line 2"))
        .unwrap();
    let click = |h: &mut Harness| {
        h.key(&format!("\x1b[<0;5;{}M", y + 1));
        h.key(&format!("\x1b[<0;5;{}m", y + 1));
    };
    click(&mut h);
    h.key(CTRL_END);
    assert!(h.shows("file line 30"), "expanded: {:#?}", h.visible());
    assert!(!h.shows("more lines"));
    // Clicking the same block again collapses it; other blocks were never touched.
    let y = h
        .visible()
        .iter()
        .position(|l| l.contains("file line 30"))
        .unwrap();
    h.key(&format!("\x1b[<0;5;{}M", y + 1));
    h.key(&format!("\x1b[<0;5;{}m", y + 1));
    h.key(CTRL_END);
    assert!(h.shows("more lines"), "collapsed again: {:#?}", h.visible());
}
