//! Append cost of a session file (`make bench`): for each N (default 10 and 100,000) builds a
//! session of N message entries on disk (untimed), resumes it with `SessionWriter::open`, then
//! times 1,000 `append_message` calls of a user message and prints one machine-readable line:
//!
//!   append_us n=<N> median=<µs> p90=<µs> appends=<count> bytes=<file size before>
//!
//! Each append must reach the file on its own (one `write` of one line per entry, no userspace
//! buffering): after every timed append the file's size is checked, untimed. Files live in a temp
//! directory removed on exit.
//!
//!   cargo run --release --example session_bench [-- N...]

// Not part of the binary: std's sorts are fine here (clippy.toml keeps them out of `src/`).
#![allow(clippy::disallowed_methods)]
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use pi::ai::Message;
use pi::session::ids::{iso_timestamp, short_id, uuid_v7};
use pi::session::{AgentMessage, SessionWriter};
use serde_json::json;

const APPENDS: usize = 1_000;
const BASE_MS: i64 = 1_795_304_767_000;

/// A valid v3 session of `n` entries: a linear chain of user and assistant messages (~300 bytes
/// of text each), starting with a user message.
fn write_session(path: &Path, n: usize) -> std::io::Result<()> {
    let mut out = BufWriter::new(File::create(path)?);
    let header = json!({"type": "session", "version": 3, "id": uuid_v7(),
                        "timestamp": iso_timestamp(BASE_MS), "cwd": "/tmp/bench"});
    writeln!(out, "{header}")?;
    let text: String = "lorem ipsum dolor sit amet, ".repeat(11);
    let mut parent: Option<String> = None;
    let mut seen = std::collections::HashSet::with_capacity(n);
    for i in 0..n {
        let id = loop {
            let id = short_id();
            if seen.insert(id.clone()) {
                break id;
            }
        };
        let ms = BASE_MS + i as i64 * 1000;
        let message = if i % 2 == 0 {
            json!({"role": "user", "content": [{"type": "text", "text": format!("{i} {text}")}],
                   "timestamp": ms})
        } else {
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("{i} {text}")}],
                   "api": "openai-completions", "provider": "mock", "model": "mock-model",
                   "usage": {"input": 1000 + i, "output": 80, "cacheRead": 0, "cacheWrite": 0,
                             "totalTokens": 1080 + i,
                             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                                      "total": 0}},
                   "stopReason": "stop", "timestamp": ms})
        };
        let entry = json!({"type": "message", "id": id, "parentId": parent,
                           "timestamp": iso_timestamp(ms), "message": message});
        writeln!(out, "{entry}")?;
        parent = Some(id);
    }
    out.flush()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let idx = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[idx]
}

fn bench(dir: &Path, n: usize) -> Result<(), String> {
    let path = dir.join(format!("session-{n}.jsonl"));
    write_session(&path, n).map_err(|e| format!("writing {}: {e}", path.display()))?;
    let before = std::fs::metadata(&path).map_err(|e| e.to_string())?.len();
    let (mut writer, warnings) =
        SessionWriter::open(&path).map_err(|e| format!("opening {}: {e:?}", path.display()))?;
    if !warnings.is_empty() || writer.entries().len() != n {
        return Err(format!(
            "n={n}: loaded {} entries, warnings {warnings:?}",
            writer.entries().len()
        ));
    }
    let mut times = Vec::with_capacity(APPENDS);
    let mut size = before;
    for i in 0..APPENDS {
        let msg = AgentMessage::Llm(Message::user_text(format!("appended message {i}")));
        let t0 = Instant::now();
        writer
            .append_message(msg)
            .map_err(|e| format!("append: {e}"))?;
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        let now = std::fs::metadata(&path).map_err(|e| e.to_string())?.len();
        if now <= size {
            return Err(format!(
                "n={n}: append {i} did not reach the file ({size} -> {now} bytes)"
            ));
        }
        size = now;
    }
    drop(writer);
    // The file must still load, with every appended entry on the chain.
    let (reloaded, warnings) = SessionWriter::open(&path).map_err(|e| format!("{e:?}"))?;
    if !warnings.is_empty() || reloaded.entries().len() != n + APPENDS {
        return Err(format!(
            "n={n}: reload has {} entries (want {}), warnings {warnings:?}",
            reloaded.entries().len(),
            n + APPENDS
        ));
    }
    drop(reloaded);
    std::fs::remove_file(&path).map_err(|e| e.to_string())?;
    times.sort_by(f64::total_cmp);
    println!(
        "append_us n={n} median={:.2} p90={:.2} appends={APPENDS} bytes={before}",
        percentile(&times, 0.5),
        percentile(&times, 0.9)
    );
    Ok(())
}

fn main() {
    let sizes: Vec<usize> = {
        let args: Vec<usize> = std::env::args()
            .skip(1)
            .map(|a| {
                a.replace(['_', ','], "")
                    .parse()
                    .expect("N must be a number")
            })
            .collect();
        if args.is_empty() {
            vec![10, 100_000]
        } else {
            args
        }
    };
    let dir = tempfile::Builder::new()
        .prefix("pi-session-bench.")
        .tempdir()
        .expect("temp dir");
    let mut failed = false;
    for n in sizes {
        if let Err(e) = bench(dir.path(), n) {
            eprintln!("session_bench: {e}");
            failed = true;
            break;
        }
    }
    drop(dir);
    if failed {
        std::process::exit(1);
    }
}
