//! `exec` for extensions (pi's `pi.exec(command, args, {cwd, timeout})`): runs a program
//! without a shell, collects its output, and kills it when the timeout passes.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Runs `params.command` with `params.args`; answers `{stdout, stderr, code, killed}`.
pub fn run(params: &Value, cwd: &Path) -> Result<Value, String> {
    let command = params["command"]
        .as_str()
        .filter(|c| !c.is_empty())
        .ok_or("exec: missing \"command\"")?;
    let args: Vec<String> = params["args"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let dir = params["cwd"]
        .as_str()
        .map(|d| cwd.join(d))
        .unwrap_or_else(|| cwd.to_path_buf());
    let timeout = params["timeout"].as_u64().map(Duration::from_millis);
    let mut child = Command::new(command)
        .args(&args)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("exec: could not start {command}: {e}"))?;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let mut killed = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(_) => break None,
        }
        if timeout.is_some_and(|t| start.elapsed() >= t) {
            let _ = child.kill();
            killed = true;
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let code = status.and_then(|s| s.code());
    Ok(json!({"stdout": stdout, "stderr": stderr, "code": code, "killed": killed}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_collects_and_times_out() {
        let dir = std::env::temp_dir();
        let r = run(
            &json!({"command": "sh", "args": ["-c", "echo hi; echo oops >&2; exit 3"]}),
            &dir,
        )
        .unwrap();
        assert_eq!(
            r,
            json!({"stdout": "hi\n", "stderr": "oops\n", "code": 3, "killed": false})
        );
        let r = run(
            &json!({"command": "sleep", "args": ["5"], "timeout": 50}),
            &dir,
        )
        .unwrap();
        assert_eq!(r["killed"], true);
        assert!(run(&json!({"command": "/no/such/program"}), &dir).is_err());
        assert!(run(&json!({}), &dir).is_err());
    }
}
