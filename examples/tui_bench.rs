//! Benchmarks of the terminal UI (`make bench`), run in release:
//!
//! 1. One token appended to the streaming message at the end of a 10,000-line transcript:
//!    the time of one `Tui::render` (component render + diff + write) and the rows and
//!    bytes written, which must be the changed rows only. For reference, the bare
//!    `Renderer::render` given all 10,000 lines with no hint (it compares them all).
//! 2. Streaming: a canned Markdown reply arrives at 200 tokens/s into that transcript while
//!    frames are drawn at up to 60 per second (to /dev/null) for ~5 s, with a spinner and an
//!    editor on screen; reports the CPU time used as a percentage of one core (getrusage).
//!
//! Machine-readable lines, for scripts/bench.sh:
//!
//!   tui_frame_us lines=<N> median=<µs> p95=<µs> bytes=<per frame> rows=<max rows written>
//!   tui_renderer_us lines=<N> median=<µs> p95=<µs>
//!   tui_stream cpu_pct=<%> seconds=<wall> frames=<n> tokens=<n>
//!
//!   cargo run --release --example tui_bench [-- <stream seconds>]

// Not part of the binary: std's sorts are fine here (clippy.toml keeps them out of `src/`).
#![allow(clippy::disallowed_methods)]

#[path = "support/canned_reply.rs"]
mod canned_reply;
#[path = "support/shared.rs"]
mod shared;

use std::fs::File;
use std::io::{self, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi::tui::components::editor::Editor;
use pi::tui::components::loader::Loader;
use pi::tui::components::markdown::Markdown;
use pi::tui::components::text::Text;
use pi::tui::theme::{Theme, Token};
use pi::tui::{Container, Renderer, Terminal, Tui};
use shared::Shared;

const LINES: usize = 10_000;
const FRAMES: usize = 500;
const COLS: usize = 120;
const ROWS: usize = 40;

/// Discards output but keeps the last frame and counts bytes, so only our work is timed.
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
        (COLS, ROWS)
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

/// Writes every frame to /dev/null, system call included, as a real terminal would.
struct NullTerminal {
    out: io::BufWriter<File>,
}

impl Terminal for NullTerminal {
    fn write(&mut self, data: &str) {
        let _ = self.out.write_all(data.as_bytes());
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
    fn size(&self) -> (usize, usize) {
        (COLS, ROWS)
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

fn theme() -> Arc<Theme> {
    Arc::new(Theme::dark())
}

/// A transcript of finished messages filling `lines` rows at the bench width: user prompts
/// (Text) and answers (Markdown), each 50 rows.
fn history(lines: usize, theme: &Arc<Theme>) -> Container {
    let mut transcript = Container::new();
    let mut total = 0;
    let mut n = 0;
    while total < lines {
        let rows = 50.min(lines - total);
        let body: Vec<String> = (0..rows)
            .map(|i| format!("message {n} line {i}: the quick brown fox jumps over the lazy dog"))
            .collect();
        if n % 2 == 0 {
            transcript.push(Text::new(body.join("\n"), 1, 0));
        } else {
            let md = body.join("  \n");
            transcript.push(Markdown::new(md, 1, 0, Arc::clone(theme)));
        }
        total += rows;
        n += 1;
    }
    transcript
}

fn shared<C>(c: C) -> Shared<C> {
    Shared::new(c)
}

fn percentile(times: &mut [Duration], p: usize) -> f64 {
    times.sort();
    times[(times.len() * p / 100).min(times.len() - 1)].as_secs_f64() * 1e6
}

/// One token appended per frame to a reply under a 10,000-line history.
fn bench_append() -> io::Result<()> {
    let tokens = canned_reply::tokens(canned_reply::REPLY);
    let theme = theme();
    let mut root = Container::new();
    root.push(history(LINES, &theme));
    let mut reply = shared(Markdown::new("", 1, 0, Arc::clone(&theme)));
    root.push(reply.clone());
    let mut tui = Tui::new(CountingTerminal::default());
    tui.render(&mut root)?;
    let mut times = Vec::with_capacity(FRAMES);
    let (mut bytes, mut max_rows) = (0, 0);
    // The screen before each frame, kept in step row by row (a copy of 10,000 rows per frame
    // would cost more than the frame it checks).
    let mut before = tui.renderer().previous_lines().to_vec();
    for i in 0..FRAMES {
        reply.get().append(&tokens[i % tokens.len()]);
        if i % tokens.len() == tokens.len() - 1 {
            // Start the next reply as a new message, as a chat would.
            let next = shared(Markdown::new("", 1, 0, Arc::clone(&theme)));
            root.push(next.clone());
            reply = next;
        }
        tui.terminal_mut().bytes = 0;
        tui.terminal_mut().last_write.clear();
        let start = Instant::now();
        tui.render(&mut root)?;
        times.push(start.elapsed());
        bytes += tui.terminal().bytes;
        let written = tui.terminal().last_write.matches("\x1b[2K").count();
        let after = tui.renderer().previous_lines();
        // The renderer rewrites the span from the first to the last changed row.
        let differs = |r: &usize| before.get(*r) != Some(&after[*r]);
        let (first, last) = (
            (0..after.len()).find(differs),
            (0..after.len()).rfind(differs),
        );
        let span = match (first, last) {
            (Some(first), Some(last)) => last - first + 1,
            _ => 0,
        };
        before.truncate(after.len());
        if let Some(first) = first {
            for (row, line) in after.iter().enumerate().skip(first) {
                match before.get_mut(row) {
                    Some(old) => old.clone_from(line),
                    None => before.push(line.clone()),
                }
            }
        }
        before.extend_from_slice(&after[before.len()..]);
        assert_eq!(
            written, span,
            "frame {i} wrote {written} rows for {span} changed"
        );
        max_rows = max_rows.max(written);
    }
    assert_eq!(
        tui.renderer().full_redraws(),
        1,
        "streaming must never repaint everything"
    );
    let total = tui.renderer().previous_lines().len();
    println!(
        "tui_frame_us lines={total} median={:.1} p95={:.1} bytes={} rows={max_rows}",
        percentile(&mut times, 50),
        percentile(&mut times, 95),
        bytes / FRAMES
    );
    Ok(())
}

/// The bare renderer given all 10,000 lines each frame, without a hint (it compares them all).
fn bench_renderer() -> io::Result<()> {
    let mut term = CountingTerminal::default();
    let mut renderer = Renderer::new();
    let mut lines: Vec<String> = (0..LINES)
        .map(|i| format!("\x1b[2m{i:>5}\x1b[22m the quick brown fox jumps over the lazy dog"))
        .collect();
    let mut frame = lines.clone();
    renderer.render(&mut term, &mut frame, false)?;
    let mut times = Vec::with_capacity(FRAMES);
    for i in 0..FRAMES {
        if let Some(last) = lines.last_mut() {
            if last.len() > 100 {
                last.truncate(50);
            }
            last.push_str(if i % 2 == 0 { " tok" } else { "en" });
        }
        // The caller's frame buffer, refilled in place (its rows keep their allocations).
        frame.clone_from(&lines);
        let start = Instant::now();
        renderer.render(&mut term, &mut frame, false)?;
        times.push(start.elapsed());
    }
    assert_eq!(
        term.last_write.matches("\x1b[2K").count(),
        1,
        "one row written"
    );
    println!(
        "tui_renderer_us lines={LINES} median={:.1} p95={:.1}",
        percentile(&mut times, 50),
        percentile(&mut times, 95)
    );
    Ok(())
}

/// CPU time (user + system) this process has used so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage fills the struct we own or fails, leaving it zeroed.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// 200 tokens/s into a reply under the 10,000-line history, frames paced by the Tui at
/// most 60/s, for `seconds`.
fn bench_stream(seconds: f64) -> io::Result<()> {
    const TOKENS_PER_SECOND: f64 = 200.0;
    let tokens = canned_reply::tokens(canned_reply::REPLY);
    let theme = theme();
    let mut root = Container::new();
    root.push(history(LINES, &theme));
    let mut reply = shared(Markdown::new("", 1, 0, Arc::clone(&theme)));
    root.push(reply.clone());
    let loader = shared(Loader::new(
        Arc::clone(&theme),
        Token::Accent,
        Token::Muted,
        "Working...",
    ));
    root.push(loader.clone());
    root.push(Editor::new());
    let out = io::BufWriter::with_capacity(64 * 1024, File::create("/dev/null")?);
    let mut tui = Tui::new(NullTerminal { out });
    tui.render(&mut root)?;

    let (wall_start, cpu_start) = (Instant::now(), cpu_time());
    let (mut sent, mut frames, mut next_spin) = (0usize, 0usize, Instant::now());
    let end = wall_start + Duration::from_secs_f64(seconds);
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        let due = ((now - wall_start).as_secs_f64() * TOKENS_PER_SECOND) as usize;
        while sent < due {
            let i = sent % tokens.len();
            if i == 0 && sent > 0 {
                // The finished reply stays; the next one goes below it, above the spinner.
                let next = shared(Markdown::new("", 1, 0, Arc::clone(&theme)));
                let at = root.children.len() - 2;
                root.children.insert(at, Box::new(next.clone()));
                reply = next;
            }
            reply.get().append(&tokens[i]);
            sent += 1;
            tui.request_render();
        }
        if now >= next_spin {
            let mut l = loader.get();
            l.tick();
            next_spin = now + l.interval();
            tui.request_render();
        }
        if tui.render_if_due(now, &mut root)? {
            frames += 1;
        }
        // Sleep until the next token, frame or spinner step, as a select! loop would.
        let next_token =
            wall_start + Duration::from_secs_f64((sent + 1) as f64 / TOKENS_PER_SECOND);
        let wake = [next_token, next_spin, end]
            .into_iter()
            .chain(tui.next_deadline())
            .min()
            .unwrap_or(end);
        std::thread::sleep(wake.saturating_duration_since(Instant::now()));
    }
    let wall = wall_start.elapsed().as_secs_f64();
    let cpu = (cpu_time() - cpu_start).as_secs_f64();
    assert_eq!(
        tui.renderer().full_redraws(),
        1,
        "streaming never repaints everything"
    );
    println!(
        "tui_stream cpu_pct={:.2} seconds={wall:.1} frames={frames} tokens={sent}",
        cpu / wall * 100.0
    );
    Ok(())
}

fn main() -> io::Result<()> {
    let seconds = std::env::args()
        .nth(1)
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(5.0);
    bench_append()?;
    bench_renderer()?;
    bench_stream(seconds)
}
