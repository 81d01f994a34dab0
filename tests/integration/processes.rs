//! Every child process pi starts is pi's to stop: SIGINT, SIGTERM and SIGHUP in every mode end
//! the bash tool's commands, `!cmd`, RPC `bash`, extension `exec` commands and extension
//! processes (after their `session_shutdown`), and pi exits with 128 + the signal; a second
//! signal exits at once. Also what those commands see (`PI_*`, `AI_AGENT`) and how RPC `bash`
//! streams its output.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::mock::{sse_tool_calls, MockServer, Reply};
use crate::support::pi::PiCommand;
use crate::support::pty::PtyChild;

const API: &str = "openai-completions";

/// A shell command that leaves a background `sleep` (a grandchild of pi) and writes its pid to
/// `pidfile` once it runs.
fn background_sleep(pidfile: &Path) -> String {
    let p = pidfile.display();
    format!("sleep 30 & echo $! > {p}.tmp; mv {p}.tmp {p}; wait")
}

/// Waits (up to 20 s) for `path` to exist; returns its trimmed text.
#[track_caller]
fn wait_for_file(path: &Path) -> String {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text.trim().to_string();
        }
        assert!(Instant::now() < end, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn pid_in(path: &Path) -> i32 {
    wait_for_file(path).parse().expect("a pid")
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

/// Asserts that `pid` is gone, waiting up to 5 s for it to die; kills it if not, so a failing
/// test leaves nothing behind.
#[track_caller]
fn assert_gone(pid: i32, what: &str) {
    let end = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    if alive(pid) {
        // SAFETY: a leftover process of this test.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        panic!("{what} (pid {pid}) outlived pi");
    }
}

/// Writes an executable script.
fn script(path: &Path, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

#[test]
fn rpc_bash_is_killed_with_its_tree_on_every_shutdown_signal() {
    for (sig, code) in [
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
        (libc::SIGINT, 130),
    ] {
        let mock = MockServer::start();
        let pi = PiCommand::for_mock(API, &mock).args(["--mode", "rpc", "--no-session"]);
        let pidfile = pi.cwd().join("sleep.pid");
        let mut talk = pi.converse();
        let cmd = json!({"id": "b", "type": "bash", "command": background_sleep(&pidfile)});
        talk.send(&cmd.to_string());
        let sleeper = pid_in(&pidfile);
        talk.signal(sig);
        let (status, lines, stderr) = talk.wait_exit();
        assert_eq!(status, Some(code), "signal {sig}: {stderr}");
        assert_gone(sleeper, "the RPC bash command's background sleep");
        // The command is answered before pi exits, so a client waiting on its id is not left
        // hanging (pi exits without answering; docs/compat.md).
        let answer = lines
            .iter()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|v| v["type"] == "response" && v["id"] == "b");
        let answer = answer.unwrap_or_else(|| panic!("signal {sig}: no answer in {lines:?}"));
        assert_eq!(answer["data"]["cancelled"], true, "{answer}");
    }
}

#[test]
fn print_and_json_modes_kill_the_bash_tool_on_a_signal() {
    for (mode, sig, code) in [("-p", libc::SIGTERM, 143), ("json", libc::SIGHUP, 129)] {
        let mock = MockServer::start();
        let pi = PiCommand::for_mock(API, &mock);
        let pidfile = pi.cwd().join("sleep.pid");
        mock.push(Reply::sse(sse_tool_calls(
            API,
            &[(
                "call_1",
                "bash",
                json!({"command": background_sleep(&pidfile)}),
            )],
        )));
        let pi = if mode == "-p" {
            pi.args(["-p", "go"])
        } else {
            pi.args(["--mode", "json", "go"])
        };
        let child = pi.spawn();
        let sleeper = pid_in(&pidfile);
        child.signal(sig);
        let out = child.wait();
        out.assert_code(code).assert_no_panic();
        assert_gone(sleeper, "the bash tool's background sleep");
    }
}

#[test]
fn interactive_bang_command_is_killed_on_sigterm() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let pidfile = pi.cwd().join("sleep.pid");
    let mut child = PtyChild::spawn(pi.command(), 100, 30);
    child.wait_for("mock-model", Duration::from_secs(10));
    child.send(&format!("!{}", background_sleep(&pidfile)));
    child.send("\r");
    let sleeper = pid_in(&pidfile);
    child.signal(libc::SIGTERM);
    let status = child.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_gone(sleeper, "the !command's background sleep");
}

/// An extension whose `/spawn` command runs `exec` (a shell leaving a background sleep) and
/// answers when the exec does; it writes its own pid to `ext.pid` and, on `session_shutdown`,
/// `shutdown` (answering only when `answer_shutdown`). It ignores stdin EOF and writes
/// `term` when it gets SIGTERM.
fn spawning_extension(pi: &PiCommand, answer_shutdown: bool) -> PathBuf {
    let dir = pi.cwd().to_path_buf();
    let exec_cmd = background_sleep(&dir.join("sleep.pid"));
    let text = format!(
        r#"#!/usr/bin/env python3
import json, os, signal, sys, time
d = {dir:?}
def mark(name, text="x"):
    with open(os.path.join(d, name + ".tmp"), "w") as f:
        f.write(text)
    os.rename(os.path.join(d, name + ".tmp"), os.path.join(d, name))
signal.signal(signal.SIGTERM, lambda *_: mark("term"))
mark("ext.pid", str(os.getpid()))
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()
waiting = None
for line in sys.stdin:
    msg = json.loads(line)
    t = msg.get("type")
    if t == "hello":
        send({{"type": "register", "protocol": 1, "commands": [{{"name": "spawn"}}],
              "events": ["session_shutdown"]}})
    elif t == "command":
        waiting = msg["id"]
        send({{"type": "call", "id": "c1", "method": "exec",
              "params": {{"command": "sh", "args": ["-c", {exec_cmd:?}]}}}})
    elif t == "reply" and msg.get("id") == "c1" and waiting is not None:
        send({{"type": "reply", "id": waiting, "result": None}})
    elif t == "event" and msg.get("event") == "session_shutdown":
        mark("shutdown")
        if {answer_shutdown}:
            send({{"type": "reply", "id": msg["id"], "result": None}})
while True:
    time.sleep(1)
"#,
        answer_shutdown = if answer_shutdown { "True" } else { "False" },
    );
    script(&pi.agent_dir().join("extensions").join("spawner.py"), &text)
}

#[test]
fn sigterm_in_rpc_mode_stops_extension_exec_at_once_and_the_extension_after_its_shutdown() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock).args(["--mode", "rpc", "--no-session"]);
    spawning_extension(&pi, true);
    let dir = pi.cwd().to_path_buf();
    let mut talk = pi.converse();
    talk.send(r#"{"id":"s","type":"prompt","message":"/spawn"}"#);
    let sleeper = pid_in(&dir.join("sleep.pid"));
    let extension = pid_in(&dir.join("ext.pid"));
    talk.signal(libc::SIGTERM);
    let (status, _, stderr) = talk.wait_exit();
    assert_eq!(status, Some(143), "{stderr}");
    assert_gone(sleeper, "the extension's exec command");
    assert!(
        dir.join("shutdown").exists(),
        "the extension was not told about the shutdown"
    );
    assert_gone(extension, "the extension process");
}

#[test]
fn a_second_signal_ends_a_slow_shutdown_at_once() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock).args(["--mode", "rpc", "--no-session"]);
    // It never answers `session_shutdown` and survives stdin EOF: pi would wait for it, then
    // send SIGTERM; a second signal instead kills it at once.
    spawning_extension(&pi, false);
    let dir = pi.cwd().to_path_buf();
    let mut talk = pi.converse();
    let extension = pid_in(&dir.join("ext.pid"));
    // The extension must have registered for `session_shutdown` before the first signal, or
    // pi has nothing to wait for: its command listed over RPC proves the handshake is done.
    talk.send(r#"{"id":"c","type":"get_commands"}"#);
    talk.expect("the extension's command", |v| {
        v["id"] == "c" && v["data"].to_string().contains("spawn")
    });
    talk.signal(libc::SIGTERM);
    wait_for_file(&dir.join("shutdown"));
    talk.signal(libc::SIGTERM);
    let (status, _, stderr) = talk.wait_exit();
    assert_eq!(status, Some(143), "{stderr}");
    assert_gone(extension, "the extension process");
    assert!(
        !dir.join("term").exists(),
        "pi went on with its shutdown after the second signal"
    );
}

#[test]
fn the_models_commands_see_the_session_and_every_child_sees_ai_agent() {
    let mock = MockServer::start();
    let cmd = "echo \"vars:$PI_SESSION_ID|$PI_PROVIDER|$PI_MODEL|$PI_REASONING_LEVEL|$AI_AGENT|$PI_CODING_AGENT|${PI_SESSION_FILE:+file}\"";
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("call_1", "bash", json!({ "command": cmd }))],
    )));
    mock.push(Reply::text(API, "done"));
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "json", "go"])
        .run();
    out.assert_code(0).assert_no_panic();
    let lines = out.json_lines();
    let id = lines[0]["id"]
        .as_str()
        .expect("the session header")
        .to_string();
    let result = lines
        .iter()
        .find(|v| v["type"] == "tool_execution_end")
        .expect("the bash result");
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        format!("vars:{id}|mock|mock-model|off|pi|true|file\n")
    );

    // The user's own commands get AI_AGENT but no session variables.
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(
            r#"{"id":"b","type":"bash","command":"echo ${PI_MODEL-unset} $AI_AGENT"}"#.to_string()
                + "\n",
        )
        .run();
    out.assert_code(0);
    let response = out
        .json_lines()
        .into_iter()
        .find(|v| v["id"] == "b" && v["type"] == "response")
        .expect("the bash response");
    assert_eq!(response["data"]["output"], "unset pi\n");
}

#[test]
fn rpc_bash_streams_clean_deltas_in_the_order_the_command_wrote_them() {
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    // An escape sequence cut across two writes, and stderr lines between stdout lines.
    let cmd = "printf 'a\\033[3'; sleep 0.2; printf '1mred\\033[0m\\n'; \
               i=0; while [ $i -lt 50 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done";
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(
            [
                json!({"id": "b", "type": "bash", "command": cmd}).to_string(),
                json!({"type": "bash", "command": "echo no id"}).to_string(),
                json!({"id": "x", "type": "bash", "command": "echo secret-output",
                       "excludeFromContext": true})
                .to_string(),
                json!({"id": "p", "type": "prompt", "message": "hi"}).to_string(),
            ]
            .join("\n")
                + "\n",
        )
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    let expected: String = "ared\n".to_string()
        + &(0..50)
            .map(|i| format!("out{i}\nerr{i}\n"))
            .collect::<String>();
    let updates: Vec<&serde_json::Value> = all
        .iter()
        .filter(|v| v["type"] == "bash_execution_update" && v["id"] == "b")
        .collect();
    assert!(updates.len() >= 2, "{}", out.stdout);
    let streamed: String = updates
        .iter()
        .map(|v| v["delta"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, expected);
    let response = all
        .iter()
        .position(|v| v["type"] == "response" && v["id"] == "b")
        .unwrap();
    let last_update = all
        .iter()
        .rposition(|v| v["type"] == "bash_execution_update" && v["id"] == "b")
        .unwrap();
    assert!(last_update < response, "updates come before the response");
    assert_eq!(all[response]["data"]["output"], expected.as_str());
    // Without an id the events carry none.
    let anonymous = all
        .iter()
        .find(|v| v["type"] == "bash_execution_update" && v["delta"] == "no id\n")
        .expect("the second command's update");
    assert!(anonymous.get("id").is_none(), "{anonymous}");
    // `excludeFromContext` keeps the output from the model.
    let body = mock.single_request().body_text();
    assert!(body.contains("Ran `echo no id`"), "{body}");
    assert!(!body.contains("secret-output"), "{body}");
}

#[test]
fn an_extension_can_cancel_its_exec() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock).args(["-p", "/stop-it"]);
    let dir = pi.cwd().to_path_buf();
    let exec_cmd = background_sleep(&dir.join("sleep.pid"));
    let text = format!(
        r#"#!/usr/bin/env python3
import json, os, sys, time
d = {dir:?}
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()
waiting = None
for line in sys.stdin:
    msg = json.loads(line)
    t = msg.get("type")
    if t == "hello":
        send({{"type": "register", "protocol": 1, "commands": [{{"name": "stop-it"}}]}})
    elif t == "command":
        waiting = msg["id"]
        send({{"type": "call", "id": "c1", "method": "exec",
              "params": {{"command": "sh", "args": ["-c", {exec_cmd:?}]}}}})
        while not os.path.exists(os.path.join(d, "sleep.pid")):
            time.sleep(0.01)
        send({{"type": "cancel", "id": "c1"}})
    elif t == "reply" and msg.get("id") == "c1":
        with open(os.path.join(d, "result.json"), "w") as f:
            json.dump(msg.get("result"), f)
        send({{"type": "reply", "id": waiting, "result": None}})
"#
    );
    script(
        &pi.agent_dir().join("extensions").join("canceller.py"),
        &text,
    );
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    let sleeper = pid_in(&dir.join("sleep.pid"));
    let result: serde_json::Value =
        serde_json::from_str(&wait_for_file(&dir.join("result.json"))).unwrap();
    assert_eq!(result["killed"], true, "stderr: {}", out.stderr);
    // pi 1.6.0 (#12088): ended by our SIGTERM, the command reads as 128 + 15, not 0 or null.
    assert_eq!(result["code"], 143, "{result}");
    assert_gone(sleeper, "the cancelled exec's background sleep");
}
