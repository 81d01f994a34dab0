//! `--sandbox` with the real binary on this machine's kernel (which must have Landlock and
//! seccomp: these tests fail, never skip, without them). A scripted model tries four escapes
//! and two honest jobs in print, RPC and interactive mode; each result is checked in the
//! session file and on disk.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::support::mock::{sse_tool_calls, MockServer, Reply};
use crate::support::pi::PiCommand;
use crate::support::pty::PtyChild;
use crate::support::session::{the_session_file as session_file, tool_results_in as tool_results};

const API: &str = "openai-completions";

/// What the kernel must offer for this file's tests.
fn kernel_has_landlock_and_seccomp() {
    let k = pi::util::sandbox::Kernel::probe();
    k.landlock
        .expect("this machine's kernel must have Landlock");
    k.seccomp.expect("this machine's kernel must have seccomp");
}

/// A path under /etc that does not exist; removed again if a broken sandbox wrote it.
struct EtcProbe(PathBuf);

impl EtcProbe {
    fn new(tag: &str) -> EtcProbe {
        EtcProbe(PathBuf::from(format!(
            "/etc/pi-sandbox-it-{}-{tag}",
            std::process::id()
        )))
    }
}

impl Drop for EtcProbe {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Makes the cwd a git repository with one commit (README.md, src/main.rs).
fn git_repo(pi: &PiCommand) {
    std::fs::create_dir_all(pi.cwd().join("src")).unwrap();
    std::fs::write(pi.cwd().join("README.md"), "hello sandbox\n").unwrap();
    std::fs::write(pi.cwd().join("src/main.rs"), "fn main() {}\n").unwrap();
    for args in [
        &["init", "-q"][..],
        &["add", "."],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "first",
        ],
    ] {
        let ok = Command::new("git")
            .args(args)
            .current_dir(pi.cwd())
            .env("HOME", pi.home())
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }
}

fn has(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The scripted model of the issue: four escapes, a project write and `git status`.
struct Escapes {
    mock: MockServer,
    pi: PiCommand,
    listener: TcpListener,
    etc: EtcProbe,
}

/// (call id, what its result must say, whether it is an error).
const EXPECTED: [(&str, &str, bool); 7] = [
    ("c1", "is blocked", true),
    ("c2", "is blocked", true),
    ("c3", "network access is blocked", true),
    ("c4", "network access is blocked", true),
    ("c5", ".pi/agent is read-only (pi's agent directory", true),
    ("c6", "Successfully wrote", false),
    ("c7", "?? src/hello.txt", false),
];

impl Escapes {
    fn new(tag: &str, mode_args: &[&str]) -> Escapes {
        kernel_has_landlock_and_seccomp();
        let mock = MockServer::start();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let etc = EtcProbe::new(tag);
        let fetch = if has("curl") {
            format!("curl -sS --max-time 5 http://127.0.0.1:{port}/")
        } else {
            format!("python3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:{port}/\", timeout=5)'")
        };
        let calls = [
            ("c1", "bash", json!({"command": "touch ~/outside"})),
            (
                "c2",
                "bash",
                json!({"command": format!("echo x > {}", etc.0.display())}),
            ),
            ("c3", "bash", json!({"command": fetch})),
            (
                "c4",
                "bash",
                json!({"command": format!("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5)'")}),
            ),
            ("c5", "bash", json!({"command": "rm -rf ~/.pi"})),
            (
                "c6",
                "write",
                json!({"path": "NOTES.md", "content": "written by the model\n"}),
            ),
            (
                "c7",
                "bash",
                json!({"command": "echo hello > src/hello.txt && git status --short"}),
            ),
        ];
        for (id, tool, args) in calls {
            mock.push(Reply::sse(sse_tool_calls(API, &[(id, tool, args)])));
        }
        mock.push(Reply::text(API, "done"));
        let pi = PiCommand::for_mock(API, &mock).args(mode_args.iter().copied());
        git_repo(&pi);
        Escapes {
            mock,
            pi,
            listener,
            etc,
        }
    }

    /// The escapes left no trace, the honest jobs did their work, and the session file
    /// holds every result with the sandbox's explanation.
    fn verify(&self) {
        let home = self.pi.home();
        assert!(!home.join("outside").exists(), "touch ~/outside escaped");
        assert!(!self.etc.0.exists(), "the write to /etc escaped");
        assert!(
            self.listener.accept().is_err(),
            "a confined command reached the listener"
        );
        assert!(
            self.pi.agent_dir().join("models.json").exists(),
            "rm -rf ~/.pi escaped"
        );
        assert!(self.pi.cwd().join("NOTES.md").exists());
        assert_eq!(
            std::fs::read_to_string(self.pi.cwd().join("src/hello.txt")).unwrap(),
            "hello\n"
        );
        let results = tool_results(&session_file(self.pi.agent_dir()));
        for (id, says, is_error) in EXPECTED {
            let (text, error) = results
                .iter()
                .find(|(i, _, _)| i == id)
                .map(|(_, t, e)| (t.as_str(), *e))
                .unwrap_or_else(|| panic!("no result for {id} in {results:?}"));
            assert_eq!(error, is_error, "{id}: {text}");
            assert!(text.contains(says), "{id} should say {says:?}: {text}");
            if is_error {
                assert!(text.contains("Sandbox (workspace-write): "), "{id}: {text}");
            }
        }
        assert_eq!(self.mock.request_count(), 8);
    }
}

#[test]
fn print_mode_denies_the_escapes_and_never_asks() {
    let s = Escapes::new(
        "print",
        &["--sandbox", "workspace-write", "-p", "try everything"],
    );
    let out = s.pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "done\n", "stderr: {}", out.stderr);
    s.verify();
}

#[test]
fn rpc_mode_denies_the_escapes_asks_each_time_and_reports_the_mode() {
    let s = Escapes::new("rpc", &["--sandbox", "workspace-write", "--mode", "rpc"]);
    let mut talk = s.pi.converse();
    talk.send(r#"{"id":"s","type":"get_state"}"#);
    let state = talk.expect("state", |v| v["id"] == "s");
    assert_eq!(state["data"]["sandbox"], "workspace-write");
    talk.send(r#"{"type":"prompt","message":"try everything"}"#);
    let mut asked = 0;
    loop {
        let v = talk.expect("a confirm or the end", |v| {
            (v["type"] == "extension_ui_request" && v["method"] == "confirm")
                || v["type"] == "agent_end"
        });
        if v["type"] == "agent_end" {
            break;
        }
        asked += 1;
        assert_eq!(v["title"], "Sandbox");
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .contains("Run it once without the sandbox?"),
            "{v}"
        );
        talk.send(
            &json!({"type": "extension_ui_response", "id": v["id"], "confirmed": false})
                .to_string(),
        );
    }
    assert_eq!(asked, 5, "one question per denied command");
    let (code, _, _) = talk.finish();
    assert_eq!(code, Some(0));
    s.verify();
}

#[test]
fn rpc_confirm_runs_the_command_once_without_the_sandbox() {
    kernel_has_landlock_and_seccomp();
    let mock = MockServer::start();
    for id in ["a", "b"] {
        mock.push(Reply::sse(sse_tool_calls(
            API,
            &[(
                id,
                "bash",
                json!({"command": format!("touch ~/outside-{id}")}),
            )],
        )));
    }
    mock.push(Reply::text(API, "ok"));
    let pi = PiCommand::for_mock(API, &mock).args(["--sandbox", "read-only", "--mode", "rpc"]);
    let home = pi.home().to_path_buf();
    let mut talk = pi.converse();
    talk.send(r#"{"type":"prompt","message":"touch"}"#);
    for answer in [true, false] {
        let ask = talk.expect("confirm", |v| v["type"] == "extension_ui_request");
        talk.send(
            &json!({"type": "extension_ui_response", "id": ask["id"], "confirmed": answer})
                .to_string(),
        );
        let end = talk.expect("tool end", |v| v["type"] == "tool_execution_end");
        assert_eq!(end["isError"], !answer, "{end}");
        let text = end["result"]["content"][0]["text"].as_str().unwrap_or("");
        if answer {
            assert!(text.contains("Ran again without the sandbox"), "{end}");
        } else {
            assert!(text.contains("Sandbox (read-only): writing"), "{end}");
        }
    }
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, _) = talk.finish();
    assert_eq!(code, Some(0));
    // Only the command the user allowed ran unconfined, and only once.
    assert!(home.join("outside-a").exists());
    assert!(!home.join("outside-b").exists());
}

#[test]
fn interactive_mode_denies_the_escapes_and_offers_one_unconfined_run() {
    let s = Escapes::new("tty", &["--sandbox", "workspace-write"]);
    let mut child = PtyChild::spawn(s.pi.command(), 100, 30);
    child.wait_for("sandbox: workspace-write", Duration::from_secs(10));
    child.send("try everything");
    child.wait_for("try everything", Duration::from_secs(5));
    child.send("\r");
    // Each denied command is shown in its question (indented, unlike the transcript's `$`).
    let fetch = if has("curl") {
        "   curl -sS"
    } else {
        "   python3 -c 'import urllib"
    };
    for command in [
        "   touch ~/outside",
        "   echo x > /etc/pi-sandbox-it-",
        fetch,
        "   python3 -c 'import socket",
        "   rm -rf ~/.pi",
    ] {
        let asked = wait_until(Duration::from_secs(10), || {
            let screen = child.screen();
            screen.contains("Run it once without the sandbox?") && screen.contains(command)
        });
        assert!(asked, "no question for {command:?}:\n{}", child.screen());
        // "No" is the second choice.
        child.send("\x1b[B");
        std::thread::sleep(Duration::from_millis(100));
        child.send("\r");
    }
    child.wait_for("done", Duration::from_secs(10));
    child.send("\x04");
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
    s.verify();
}

fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + limit;
    while std::time::Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

#[test]
fn read_only_reads_and_runs_tests_but_writes_nothing() {
    kernel_has_landlock_and_seccomp();
    let mock = MockServer::start();
    let calls = [
        (
            "r1",
            "bash",
            json!({"command": "grep -rn hello . && ls src && cat README.md && git log --oneline && sh check.sh"}),
        ),
        ("r2", "bash", json!({"command": "echo x >> README.md"})),
        ("r3", "write", json!({"path": "src/new.rs", "content": "x"})),
        (
            "r4",
            "edit",
            json!({"path": "README.md", "edits": [{"oldText": "hello", "newText": "bye"}]}),
        ),
        (
            "r5",
            "bash",
            json!({"command": "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\""}),
        ),
    ];
    for (id, tool, args) in calls {
        mock.push(Reply::sse(sse_tool_calls(API, &[(id, tool, args)])));
    }
    mock.push(Reply::text(API, "done"));
    let pi = PiCommand::for_mock(API, &mock)
        .args(["--sandbox", "read-only", "-p", "look"])
        .write_file(
            "check.sh",
            "grep -q 'hello sandbox' README.md && echo 'tests pass'\n",
        );
    git_repo(&pi);
    let out = pi.run();
    out.assert_code(0);
    assert_eq!(out.stdout, "done\n", "{}", out.stderr);
    let results = tool_results(&session_file(pi.agent_dir()));
    let get = |id: &str| results.iter().find(|r| r.0 == id).cloned().unwrap();
    let (_, text, err) = get("r1");
    assert!(!err && text.contains("README.md:1:hello sandbox") && text.contains("first"));
    assert!(text.contains("tests pass"), "{text}");
    for id in ["r2", "r3", "r4"] {
        let (_, text, err) = get(id);
        assert!(
            err && text.contains("Sandbox (read-only): "),
            "{id}: {text}"
        );
    }
    assert_eq!(get("r5").1.trim(), "t");
    assert_eq!(
        std::fs::read_to_string(pi.cwd().join("README.md")).unwrap(),
        "hello sandbox\n"
    );
    assert!(!pi.cwd().join("src/new.rs").exists());
}

#[test]
fn the_setting_is_read_from_project_settings_only_when_trusted() {
    let state = |extra: &[&str], pi: &PiCommand| {
        let out = pi
            .again()
            .args(["--mode", "rpc", "--no-session"])
            .args(extra.iter().copied())
            .stdin("{\"id\":\"s\",\"type\":\"get_state\"}\n")
            .run();
        let line = out
            .json_lines()
            .into_iter()
            .find(|v| v["id"] == "s")
            .unwrap_or_else(|| panic!("{}", out.stderr));
        // Absent when off, as pi's state has no such field.
        line["data"]["sandbox"]
            .as_str()
            .unwrap_or("off")
            .to_string()
    };
    kernel_has_landlock_and_seccomp();
    // The project may tighten the user's sandbox (issue 29: never loosen it).
    let pi = PiCommand::new()
        .write_agent_file("settings.json", r#"{"sandbox": "workspace-write"}"#)
        .write_file(".pi/settings.json", r#"{"sandbox": {"mode": "read-only"}}"#);
    assert_eq!(state(&["--no-approve"], &pi), "workspace-write");
    assert_eq!(state(&["--approve"], &pi), "read-only");
    assert_eq!(state(&["--approve", "--sandbox", "off"], &pi), "off");
    // Nothing configured: off, and get_state is exactly pi's.
    let out = PiCommand::new()
        .args(["--mode", "rpc", "--no-session"])
        .stdin("{\"id\":\"s\",\"type\":\"get_state\"}\n")
        .run();
    let line = out
        .json_lines()
        .into_iter()
        .find(|v| v["id"] == "s")
        .unwrap();
    assert!(line["data"].get("sandbox").is_none(), "{line}");
}

#[test]
fn a_mode_or_setting_pi_does_not_understand_stops_it() {
    let out = PiCommand::new()
        .args(["--sandbox", "strict", "-p", "hi"])
        .run();
    out.assert_code(1);
    assert!(
        out.stderr.contains("Invalid sandbox mode \"strict\""),
        "{}",
        out.stderr
    );
    let out = PiCommand::new()
        .write_agent_file("settings.json", r#"{"sandbox": "workspace"}"#)
        .args(["-p", "hi"])
        .run();
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("Invalid setting sandbox: \"workspace\""),
        "{}",
        out.stderr
    );
}

#[test]
fn rpc_bash_and_extension_exec_are_confined_too() {
    kernel_has_landlock_and_seccomp();
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("e1", "escape", json!({}))],
    )));
    mock.push(Reply::text(API, "ok"));
    let pi =
        PiCommand::for_mock(API, &mock).args(["--sandbox", "workspace-write", "--mode", "rpc"]);
    let ext = pi.agent_dir().join("extensions/escape");
    std::fs::create_dir_all(ext.parent().unwrap()).unwrap();
    // A tool that runs `touch ~/from-exec` through pi's `exec` and reports what came back.
    std::fs::write(
        &ext,
        r#"#!/usr/bin/env python3
import json, os, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
pending = {}
for line in sys.stdin:
    m = json.loads(line)
    if m.get("type") == "hello":
        send({"type": "register", "protocol": 1, "tools": [{"name": "escape",
              "description": "try", "parameters": {"type": "object", "properties": {}}}]})
    elif m.get("type") == "tool":
        pending["x"] = m["id"]
        send({"type": "call", "id": "x", "method": "exec",
              "params": {"command": "touch", "args": [os.path.expanduser("~/from-exec")]}})
    elif m.get("type") == "reply" and m.get("id") == "x":
        r = m["result"]
        send({"type": "reply", "id": pending["x"], "result": {"content": [
              {"type": "text", "text": "code %s: %s" % (r["code"], r["stderr"])}]}})
"#,
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ext, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let home = pi.home().to_path_buf();
    let mut talk = pi.converse();
    // RPC `bash`: confined, explained, and the client is asked.
    talk.send(r#"{"id":"b","type":"bash","command":"touch ~/from-rpc-bash"}"#);
    let ask = talk.expect("confirm", |v| v["type"] == "extension_ui_request");
    talk.send(
        &json!({"type": "extension_ui_response", "id": ask["id"], "confirmed": false}).to_string(),
    );
    let done = talk.expect("bash response", |v| {
        v["type"] == "response" && v["id"] == "b"
    });
    let output = done["data"]["output"].as_str().unwrap_or_default();
    assert!(
        output.contains("Sandbox (workspace-write): writing") && done["data"]["exitCode"] == 1,
        "{done}"
    );
    // An extension tool's `exec`.
    talk.send(r#"{"type":"prompt","message":"escape"}"#);
    let end = talk.expect("tool end", |v| v["type"] == "tool_execution_end");
    let text = end["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("code 1:")
            && (text.contains("Permission denied") || text.contains("Read-only file system")),
        "{end}"
    );
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, _) = talk.finish();
    assert_eq!(code, Some(0));
    assert!(!home.join("from-rpc-bash").exists() && !home.join("from-exec").exists());
}

#[test]
fn a_users_own_bang_command_is_confined_and_explained() {
    kernel_has_landlock_and_seccomp();
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock).args(["--sandbox", "read-only"]);
    let home = pi.home().to_path_buf();
    let mut child = PtyChild::spawn(pi.command(), 100, 30);
    child.wait_for("sandbox: read-only", Duration::from_secs(10));
    child.send("!touch ~/from-bang");
    child.wait_for("!touch ~/from-bang", Duration::from_secs(5));
    child.send("\r");
    child.wait_for("Run it once without the sandbox?", Duration::from_secs(10));
    child.send("\x1b[B");
    std::thread::sleep(Duration::from_millis(100));
    child.send("\r");
    child.wait_for("Sandbox (read-only): writing", Duration::from_secs(10));
    child.send("\x04");
    assert!(child.wait_exit(Duration::from_secs(10)).success());
    assert!(!home.join("from-bang").exists());
}
