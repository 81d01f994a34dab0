//! Micro-benchmark of the differential renderer: a 10,000-line transcript where one token is
//! appended to the last line per frame. Prints the time per frame (renderer alone, and the
//! whole `Tui::render` including the root component's render) and the bytes written, which
//! must be the changed line only. Run: `cargo run --example tui_bench` (`make bench`).

use std::io;
use std::time::{Duration, Instant};

use pi::tui::{Component, Renderer, Terminal, Tui};

/// Discards output but counts it, so only our own work is timed.
#[derive(Default)]
struct CountingTerminal {
    bytes: usize,
    last_write: String,
}

impl Terminal for CountingTerminal {
    fn write(&mut self, data: &str) {
        self.bytes += data.len();
        self.last_write.clear();
        self.last_write.push_str(data);
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn size(&self) -> (usize, usize) {
        (120, 40)
    }
    fn kitty_protocol_active(&self) -> bool {
        false
    }
    fn start(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn stop(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A transcript that streams tokens into its last line.
struct Transcript {
    lines: Vec<String>,
}

impl Component for Transcript {
    fn render(&mut self, _width: usize) -> Vec<String> {
        self.lines.clone()
    }
}

const LINES: usize = 10_000;
const FRAMES: usize = 200;

fn transcript() -> Transcript {
    let lines = (0..LINES)
        .map(|i| format!("\x1b[2m{i:>5}\x1b[22m the quick brown fox jumps over the lazy dog"))
        .collect();
    Transcript { lines }
}

fn append_token(t: &mut Transcript, i: usize) {
    if let Some(last) = t.lines.last_mut() {
        if last.len() > 100 {
            last.truncate(50);
        }
        last.push_str(if i % 2 == 0 { " tok" } else { "en" });
    }
}

fn report(name: &str, times: &mut [Duration], bytes: usize) {
    times.sort();
    let median = times[times.len() / 2];
    let p95 = times[times.len() * 95 / 100];
    println!(
        "{name:<44} median {:>8.3} ms   p95 {:>8.3} ms   {:>6} bytes/frame",
        median.as_secs_f64() * 1e3,
        p95.as_secs_f64() * 1e3,
        bytes
    );
}

fn main() -> io::Result<()> {
    println!("tui: one token appended to a {LINES}-line transcript, {FRAMES} frames, 120x40");

    // Renderer alone: the frame's lines are already built.
    let mut term = CountingTerminal::default();
    let mut renderer = Renderer::new();
    let mut t = transcript();
    renderer.render(&mut term, t.lines.clone(), false)?;
    let mut times = Vec::with_capacity(FRAMES);
    let mut bytes = 0;
    for i in 0..FRAMES {
        append_token(&mut t, i);
        let lines = t.lines.clone();
        term.bytes = 0;
        let start = Instant::now();
        renderer.render(&mut term, lines, false)?;
        times.push(start.elapsed());
        bytes = term.bytes;
    }
    assert_eq!(
        renderer.full_redraws(),
        1,
        "appending must never repaint everything"
    );
    assert!(
        term.last_write.matches("\x1b[2K").count() == 1,
        "only the changed line is written: {:?}",
        term.last_write
    );
    report("Renderer::render (diff + write)", &mut times, bytes);

    // The whole frame as the app drives it: root render (clones 10k lines) + diff + write.
    let mut tui = Tui::new(CountingTerminal::default());
    let mut t = transcript();
    tui.render(&mut t)?;
    let mut times = Vec::with_capacity(FRAMES);
    for i in 0..FRAMES {
        append_token(&mut t, i);
        tui.terminal_mut().bytes = 0;
        let start = Instant::now();
        tui.render(&mut t)?;
        times.push(start.elapsed());
        bytes = tui.terminal().bytes;
    }
    report("Tui::render (component + diff + write)", &mut times, bytes);
    Ok(())
}
