use std::io::Read;
use std::process::Command;
use std::time::{Duration, Instant};

use super::*;

fn sh(script: &str) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script);
    cmd
}

/// Alive and not a zombie.
fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .trim_start()
        .chars()
        .next();
    state.is_some_and(|s| s != 'Z')
}

/// Waits (up to 10 s, never a timing assertion) until `pid` is gone.
fn gone(pid: i32) -> bool {
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn wait_reaped(child: &OwnedChild) {
    let state = child.group.lock();
    let (state, _) = child
        .group
        .changed
        .wait_timeout_while(state, Duration::from_secs(10), |s| !s.reaped)
        .unwrap();
    assert!(state.reaped, "the leader was never reaped");
}

fn read_all(mut f: impl Read) -> String {
    let mut s = String::new();
    f.read_to_string(&mut s).unwrap();
    s
}

#[test]
fn merged_output_keeps_the_order_it_was_written_in() {
    let script = "i=0; while [ $i -lt 300 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done";
    let mut child = spawn(
        &mut sh(script),
        SpawnOptions {
            merge_output: true,
            ..Default::default()
        },
    )
    .unwrap();
    let text = read_all(child.output.take().unwrap());
    let expected: String = (0..300).map(|i| format!("out{i}\nerr{i}\n")).collect();
    assert_eq!(text, expected);
    assert_eq!(
        child.wait_timeout(Duration::from_secs(10)),
        Some(Some(ExitStatus::from_raw(0)))
    );
}

#[test]
fn children_are_told_they_run_under_pi() {
    let mut cmd = sh("echo $PI_CODING_AGENT $AI_AGENT");
    cmd.stdout(Stdio::piped());
    let mut child = spawn(&mut cmd, SpawnOptions::default()).unwrap();
    assert_eq!(read_all(child.stdout.take().unwrap()), "true pi\n");
}

#[test]
fn nothing_is_sent_once_the_leader_is_reaped() {
    let child = spawn(&mut sh("exit 3"), SpawnOptions::default()).unwrap();
    assert_eq!(
        child
            .wait_timeout(Duration::from_secs(10))
            .flatten()
            .and_then(|s| s.code()),
        Some(3)
    );
    wait_reaped(&child);
    // The id may now belong to anyone: no kill, no TERM, not even a probe goes out.
    assert!(!child.kill());
    assert!(!child.terminate(Duration::from_millis(10)));
    assert!(!child.signal(0));
}

#[test]
fn a_terminated_leader_stays_unreaped_until_its_group_got_sigkill() {
    // The shell dies at TERM; its background child ignores TERM.
    let mut cmd = sh("sh -c 'trap \"\" TERM; echo $$; exec sleep 30' & wait");
    cmd.stdout(Stdio::piped());
    let mut child = spawn(&mut cmd, SpawnOptions::default()).unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while out.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let grandchild: i32 = String::from_utf8(line).unwrap().trim().parse().unwrap();
    assert!(alive(grandchild));
    assert!(child.terminate(Duration::from_millis(300)));
    let status = child.wait_timeout(Duration::from_secs(10)).flatten();
    assert_eq!(status.and_then(|s| s.signal()), Some(libc::SIGTERM));
    // The leader is dead but kept unreaped, so the SIGKILL still reaches its group and
    // cannot reach anybody else.
    assert!(!child.is_reaped());
    wait_reaped(&child);
    assert!(gone(grandchild), "the grandchild survived the group kill");
}

#[test]
fn run_collects_output_and_status() {
    let out = run(
        &mut sh("echo hi; echo oops >&2; exit 3"),
        &RunOptions::default(),
    )
    .unwrap();
    assert_eq!(out.stdout, b"hi\n");
    assert_eq!(out.stderr, b"oops\n");
    assert_eq!(out.status.and_then(|s| s.code()), Some(3));
    assert!(!out.killed() && !out.truncated);
}

#[test]
fn run_stops_the_whole_group_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    let opts = RunOptions {
        timeout: Some(Duration::from_millis(300)),
        kill_grace: Duration::from_millis(50),
        ..Default::default()
    };
    let out = run(&mut sh(&script), &opts).unwrap();
    assert!(out.timed_out && out.killed());
    let grandchild: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        gone(grandchild),
        "the background sleep outlived the timeout"
    );
}

#[test]
fn run_can_be_cancelled() {
    let started = Instant::now();
    let cancel = move || started.elapsed() > Duration::from_millis(100);
    let opts = RunOptions {
        cancelled: &cancel,
        ..Default::default()
    };
    let out = run(&mut sh("sleep 30"), &opts).unwrap();
    assert!(out.cancelled);
    assert!(out.status.is_some(), "the killed child was waited for");
}

#[test]
fn run_caps_output_but_keeps_draining() {
    let opts = RunOptions {
        max_output: 10,
        ..Default::default()
    };
    let out = run(&mut sh("head -c 100000 /dev/zero | tr '\\0' a"), &opts).unwrap();
    assert_eq!(out.stdout, b"aaaaaaaaaa");
    assert!(out.truncated);
    assert_eq!(out.status.and_then(|s| s.code()), Some(0));
}

#[test]
fn run_does_not_wait_for_a_grandchild_holding_the_pipe() {
    let out = run(&mut sh("sleep 30 & echo $!"), &RunOptions::default()).unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let grandchild: i32 = text.trim().parse().unwrap();
    assert_eq!(out.status.and_then(|s| s.code()), Some(0));
    // SAFETY: our own test's grandchild, still alive (its group was never killed).
    unsafe { libc::kill(grandchild, libc::SIGKILL) };
}

/// Starts of children that may bypass [`spawn`], each with why. Nothing else belongs here.
const DIRECT_SPAWNS_ALLOWED: &[(&str, &str, &str)] = &[(
    "modes/interactive/external.rs",
    r#"Command::new("sh")"#,
    "$EDITOR must run in pi's foreground process group to read the terminal",
)];

/// Every `Command::new(…)` in `src/` outside tests whose statement also starts the child
/// itself (`.output()`, `.status()`, `.spawn()`): such a child has no timeout, no group kill
/// on shutdown and unbounded output.
fn direct_spawns(dir: &std::path::Path, root: &std::path::Path, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" {
                direct_spawns(&path, root, found);
            }
            continue;
        }
        let is_test_file =
            name == "tests.rs" || name.ends_with("_tests.rs") || name == "test_server.rs";
        if !name.ends_with(".rs") || is_test_file {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == "util/process.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let lines: Vec<&str> = code.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(at) = line.find("Command::new(") else {
                continue;
            };
            let mut statement = line[at..].to_string();
            for next in lines.iter().skip(i + 1).take(8) {
                if statement.contains(';') {
                    break;
                }
                statement.push_str(next);
            }
            let statement = statement.split(';').next().unwrap_or_default();
            let starts = [".output()", ".status()", ".spawn()"]
                .iter()
                .any(|call| statement.contains(call));
            let allowed = DIRECT_SPAWNS_ALLOWED
                .iter()
                .any(|(file, call, _)| rel == *file && line.contains(call));
            if starts && !allowed {
                found.push(format!("src/{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
}

#[test]
fn every_child_process_starts_through_util_process() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    direct_spawns(&root, &root, &mut found);
    assert!(
        found.is_empty(),
        "start these through util::process::run or spawn (timeout, group kill, bounded \
         output):\n{}",
        found.join("\n")
    );
}
