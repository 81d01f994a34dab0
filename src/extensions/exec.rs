//! `exec` for extensions (pi's `pi.exec(command, args, {cwd, timeout, signal})`): runs a
//! program without a shell, as a child pi owns (its own process group, killed whole on
//! timeout, cancellation or shutdown), and collects a bounded amount of its output. Under
//! `--sandbox` the program is confined like the model's own commands.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use super::call_kind::ExecParams;
use crate::util::process::{self, RunOptions};

/// Bytes kept of each of stdout and stderr; the rest is read and dropped.
pub const MAX_OUTPUT: usize = 16 * 1024 * 1024;
/// Between SIGTERM and SIGKILL when the command is stopped.
const KILL_GRACE: Duration = Duration::from_secs(1);

/// Runs `params.command` with `params.args` until it exits, `params.timeout` (ms) passes or
/// `cancelled` says so; answers `{stdout, stderr, code, killed, truncated}`.
pub fn run(params: &ExecParams, cwd: &Path, cancelled: &dyn Fn() -> bool) -> Result<Value, String> {
    let command = params.command.as_str();
    if command.is_empty() {
        return Err("exec: missing \"command\"".into());
    }
    let args = &params.args;
    let dir = params
        .cwd
        .as_deref()
        .map(|d| cwd.join(d))
        .unwrap_or_else(|| cwd.to_path_buf());
    let timeout = params
        .timeout
        .as_ref()
        .and_then(|t| t.duration())
        .filter(|t| !t.is_zero());
    let mut cmd = Command::new(command);
    cmd.args(args).current_dir(&dir);
    let sandbox = crate::util::sandbox::active();
    // Issue 29: a .git or .pi the program created is removed once it has ended.
    let before = sandbox.as_ref().map(|s| s.before_command());
    let out = process::run(
        &mut cmd,
        &RunOptions {
            timeout,
            cancelled,
            max_output: MAX_OUTPUT,
            kill_grace: KILL_GRACE,
            capture_stderr: true,
            // Sandbox (issue 16): what extensions run for their tools is confined too.
            sandbox: sandbox.clone(),
        },
    )
    .map_err(|e| format!("exec: could not start {command}: {e}"))?;
    let mut code = exit_code(&out);
    let mut stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if let Some(why) = sandbox
        .zip(before)
        .and_then(|(s, before)| s.after_command(&before))
    {
        stderr.push_str(&format!("\n{why}\n"));
        if code == 0 {
            code = 1;
        }
    }
    Ok(json!({
        "stdout": String::from_utf8_lossy(&out.stdout),
        "stderr": stderr,
        "code": code,
        "killed": out.killed(),
        "truncated": out.truncated,
    }))
}

/// pi 1.6.0 (#12088): the exit code, or 128 + the signal for a command a signal ended (a
/// timeout, an abort, a crash: 143 for SIGTERM, 137 for SIGKILL), as a shell reports it; 1
/// when the status is unknown. Output cut at the cap never reads as success.
fn exit_code(out: &process::RunOutput) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    let code = match out.status {
        Some(s) => s
            .code()
            .or_else(|| s.signal().map(|sig| 128 + sig))
            .unwrap_or(1),
        None => 1,
    };
    if out.truncated && code == 0 {
        1
    } else {
        code
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    use super::*;

    fn params(v: Value) -> ExecParams {
        crate::util::typed_json::from_value(&v).unwrap()
    }

    fn never() -> bool {
        false
    }

    /// Waits (up to 10 s) until `pid` is gone or a zombie.
    fn gone(pid: i32) -> bool {
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .chars()
                .next();
            if state.is_none_or(|s| s == 'Z') {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn runs_and_collects() {
        let dir = std::env::temp_dir();
        let r = run(
            &params(json!({"command": "sh", "args": ["-c", "echo hi; echo oops >&2; exit 3"]})),
            &dir,
            &never,
        )
        .unwrap();
        assert_eq!(
            r,
            json!({"stdout": "hi\n", "stderr": "oops\n", "code": 3, "killed": false, "truncated": false})
        );
        assert!(run(
            &params(json!({"command": "/no/such/program"})),
            &dir,
            &never
        )
        .is_err());
        assert!(run(&params(json!({"command": ""})), &dir, &never).is_err());
    }

    #[test]
    fn a_timeout_kills_the_whole_group_and_returns_without_waiting_for_its_pipes() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        // The grandchild holds stdout open; killing only `sh` would leave it running and the
        // pipe open forever.
        let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let r = run(
            &params(json!({"command": "sh", "args": ["-c", script], "timeout": 200})),
            dir.path(),
            &never,
        )
        .unwrap();
        assert_eq!(r["killed"], true);
        assert_eq!(r["code"], 143, "ended by SIGTERM");
        let grandchild: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(gone(grandchild), "the grandchild outlived the timeout");
    }

    #[test]
    fn cancelling_stops_the_command() {
        let cancelled = AtomicBool::new(false);
        let r = std::thread::scope(|s| {
            let h = s.spawn(|| {
                run(
                    &params(json!({"command": "sleep", "args": ["30"]})),
                    &std::env::temp_dir(),
                    &|| cancelled.load(Ordering::SeqCst),
                )
            });
            std::thread::sleep(Duration::from_millis(100));
            cancelled.store(true, Ordering::SeqCst);
            h.join().unwrap()
        })
        .unwrap();
        assert_eq!(r["killed"], true);
    }

    #[test]
    fn a_signal_reads_as_128_plus_its_number() {
        let r = run(
            &params(json!({"command": "sh", "args": ["-c", "kill -KILL $$"]})),
            &std::env::temp_dir(),
            &never,
        )
        .unwrap();
        assert_eq!(r["code"], 137);
        assert_eq!(r["killed"], false);
    }

    #[test]
    fn output_is_capped() {
        let r = run(
            &params(json!({"command": "sh", "args": ["-c", format!("head -c {} /dev/zero", MAX_OUTPUT + 4096)]})),
            &std::env::temp_dir(),
            &never,
        )
        .unwrap();
        assert_eq!(r["stdout"].as_str().unwrap().len(), MAX_OUTPUT);
        assert_eq!(r["code"], 1, "a cut output is not a success");
        assert_eq!(r["truncated"], true);
    }
}
