//! What the sandbox costs a command (`make bench`): `bash -c true` started as pi starts the
//! bash tool's commands (`util::process::spawn`, own session, output pipe) and waited for, in
//! a scratch git repository with 40 entries at its root (so the Landlock ruleset is split
//! around `.git` where namespaces are missing) and a 1,000-file tree in 110 folders, with no
//! sandbox and with `workspace-write`. The confined run includes what the bash tool does around
//! every confined command: the look for new `.git`/`.pi` entries before and after it. Runs alternate
//! between the two, and the overhead is the median of the pairs' differences (on a busy machine
//! both medians swing more than the difference); `prepare` is the parent's share alone (the
//! ruleset and filter built for one spawn). Prints one machine-readable line:
//!
//!   sandbox_us runs=<N> plain=<median µs> confined=<median µs> overhead=<µs> prepare=<µs> sweep=<µs>
//!
//!   cargo run --release --example sandbox_bench [-- RUNS]

// Not part of the binary: std's sorts are fine here (clippy.toml keeps them out of `src/`).
#![allow(clippy::disallowed_methods)]
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use pi::util::process::{self, OnShutdown, SpawnOptions};
use pi::util::sandbox::{Config, Mode, Sandbox};

fn once(cwd: &std::path::Path, sandbox: Option<Arc<Sandbox>>) -> f64 {
    let start = Instant::now();
    let mut cmd = Command::new("/bin/bash");
    cmd.args(["-c", "true"])
        .current_dir(cwd)
        .stdin(Stdio::null());
    let before = sandbox.as_ref().map(|s| s.before_command());
    let confining = sandbox.clone();
    let options = SpawnOptions {
        new_session: true,
        merge_output: true,
        on_shutdown: OnShutdown::KillAtOnce,
        sandbox,
    };
    let child = process::spawn(&mut cmd, options).expect("spawn bash");
    let _ = child.exited().recv();
    if let (Some(s), Some(b)) = (confining, before) {
        assert_eq!(s.after_command(&b), None, "the bench creates no repository");
    }
    let code = child.status().flatten().and_then(|s| s.code());
    assert_eq!(code, Some(0), "bash -c true failed");
    start.elapsed().as_secs_f64() * 1e6
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(300);
    let dir = tempfile::tempdir().expect("temp dir");
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join(".git/hooks")).expect("repo");
    for i in 0..20 {
        std::fs::create_dir_all(work.join(format!("dir{i}"))).expect("dir");
        std::fs::write(work.join(format!("file{i}.txt")), "x").expect("file");
        for j in 0..5 {
            let sub = work.join(format!("dir{i}/sub{j}"));
            std::fs::create_dir_all(&sub).expect("dir");
            for k in 0..10 {
                std::fs::write(sub.join(format!("f{k}.rs")), "x").expect("file");
            }
        }
    }
    let agent = dir.path().join(".pi/agent");
    std::fs::create_dir_all(&agent).expect("agent dir");
    let config = Config {
        mode: Mode::WorkspaceWrite,
        ..Config::default()
    };
    let sandbox = Arc::new(
        Sandbox::prepare(&config, &work, &agent)
            .unwrap_or_else(|e| panic!("{e}"))
            .sandbox
            .expect("a sandbox"),
    );
    // Warm up the page cache and the allocator.
    for _ in 0..20 {
        once(&work, None);
        once(&work, Some(Arc::clone(&sandbox)));
    }
    let (mut plain, mut confined, mut overhead) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let p = once(&work, None);
        let c = once(&work, Some(Arc::clone(&sandbox)));
        plain.push(p);
        confined.push(c);
        overhead.push(c - p);
    }
    // The parent's share: building the ruleset and the filter for one spawn.
    let mut prepare = Vec::new();
    for _ in 0..runs {
        let mut cmd = Command::new("/bin/true");
        let t = Instant::now();
        sandbox.confine(&mut cmd).expect("confine");
        prepare.push(t.elapsed().as_secs_f64() * 1e6);
    }
    // The look for new `.git`/`.pi` entries alone, before and after a command.
    let mut sweep = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let before = sandbox.before_command();
        assert_eq!(sandbox.after_command(&before), None);
        sweep.push(t.elapsed().as_secs_f64() * 1e6);
    }
    println!(
        "sandbox_us runs={runs} plain={:.0} confined={:.0} overhead={:.0} prepare={:.0} sweep={:.0}",
        percentile(&mut plain, 0.5),
        percentile(&mut confined, 0.5),
        percentile(&mut overhead, 0.5),
        percentile(&mut prepare, 0.5),
        percentile(&mut sweep, 0.5),
    );
}
