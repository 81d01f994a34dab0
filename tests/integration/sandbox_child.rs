//! How every confined command starts and ends (issue 29), through the real binary: a scripted
//! model tries, from inside `--sandbox workspace-write`, the descriptors pi inherited, metadata
//! of files outside the roots, a writable root swapped for a symlink, an abstract Unix socket,
//! a process tree that outlives its command, and terminal injection; and reads its own
//! privileges. Needs Landlock, seccomp and unprivileged user namespaces (fails without).

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::mock::{sse_tool_calls, MockServer, Reply};
use crate::support::pi::PiCommand;
use crate::support::pty::PtyChild;
use crate::support::session::tool_results;

const API: &str = "openai-completions";

fn kernel_has_everything() {
    let k = pi::util::sandbox::Kernel::probe();
    k.landlock
        .expect("this machine's kernel must have Landlock");
    k.seccomp.expect("this machine's kernel must have seccomp");
    k.namespaces
        .expect("this machine's kernel must allow unprivileged user namespaces");
}

/// A mock model making `calls` (one bash call per turn), then saying "done".
fn model(calls: &[(&str, &str)]) -> MockServer {
    kernel_has_everything();
    let mock = MockServer::start();
    for (id, command) in calls {
        mock.push(Reply::sse(sse_tool_calls(
            API,
            &[(id, "bash", json!({"command": command}))],
        )));
    }
    mock.push(Reply::text(API, "done"));
    mock
}

fn result(results: &[(String, String, bool)], id: &str) -> (String, bool) {
    results
        .iter()
        .find(|r| r.0 == id)
        .map(|r| (r.1.clone(), r.2))
        .unwrap_or_else(|| panic!("no result for {id} in {results:?}"))
}

fn print_mode(pi: PiCommand) -> PiCommand {
    pi.args(["--sandbox", "workspace-write", "-p", "go"])
}

#[test]
fn descriptors_pi_inherited_are_closed_to_commands() {
    let mock = model(&[
        ("f", "echo pwned >&50"),
        ("s", "echo pwned >&51"),
        ("l", "ls /proc/self/fd"),
    ]);
    let pi = print_mode(PiCommand::for_mock(API, &mock));
    let outside = pi.home().join("outside.log");
    std::fs::write(&outside, "precious\n").unwrap();
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(&outside)
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let sock = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut peer, _) = listener.accept().unwrap();
    let (file_fd, sock_fd) = (file.as_raw_fd(), sock.as_raw_fd());
    let mut cmd = pi.command();
    // SAFETY: dup2 between fork and exec; the copies are not close-on-exec, as a careless
    // parent of pi would leave them.
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(file_fd, 50) < 0 || libc::dup2(sock_fd, 51) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    drop((file, sock));
    let results = tool_results(pi.agent_dir());
    for id in ["f", "s"] {
        let (text, err) = result(&results, id);
        assert!(err && text.contains("Bad file descriptor"), "{id}: {text}");
    }
    let (fds, _) = result(&results, "l");
    assert!(!fds.lines().any(|l| l == "50" || l == "51"), "{fds}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious\n");
    let mut got = Vec::new();
    peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = peer.read_to_end(&mut got);
    assert!(got.is_empty(), "the socket carried {got:?}");
}

#[test]
fn metadata_of_files_outside_the_roots_is_read_only() {
    let mock = model(&[
        ("chmod", "chmod 777 ~/outside.txt"),
        ("touch", "touch -d 2001-01-01 ~/outside.txt"),
        (
            "xattr",
            "python3 -c 'import os; os.setxattr(os.path.expanduser(\"~/outside.txt\"), \"user.pi\", b\"x\")'",
        ),
        ("truncate", "truncate -s 0 ~/outside.txt"),
        ("inside", "chmod 600 mine.txt && touch -d 2001-01-01 mine.txt && truncate -s 1 mine.txt"),
    ]);
    let pi = print_mode(PiCommand::for_mock(API, &mock)).write_file("mine.txt", "mine\n");
    let outside = pi.home().join("outside.txt");
    std::fs::write(&outside, "precious\n").unwrap();
    let before = std::fs::metadata(&outside).unwrap();
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    let results = tool_results(pi.agent_dir());
    for id in ["chmod", "touch", "xattr", "truncate"] {
        let (text, err) = result(&results, id);
        assert!(err, "{id}: {text}");
        assert!(
            text.contains("Sandbox (workspace-write): writing") && text.contains("outside.txt"),
            "{id} should be explained: {text}"
        );
    }
    let (text, err) = result(&results, "inside");
    assert!(!err, "{text}");
    let after = std::fs::metadata(&outside).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        (before.mode(), before.mtime(), before.len()),
        (after.mode(), after.mtime(), after.len())
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious\n");
}

/// The model swaps a writable root for a symlink to `$HOME`, then writes through it.
fn swapped_root(roots: &str, swap: &str) {
    let mock = model(&[
        ("swap", swap),
        ("write", "echo pwned > \"$HOME/pwned\""),
        ("again", "cd \"$HOME\" && echo pwned > pwned2"),
    ]);
    let pi = PiCommand::for_mock(API, &mock).write_agent_file(
        "settings.json",
        &json!({"sandbox": {"mode": "workspace-write", "writableRoots": [roots]}}).to_string(),
    );
    std::fs::create_dir_all(pi.cwd().join("node_modules/.cache")).unwrap();
    let pi = pi.args(["-p", "go"]);
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    let results = tool_results(pi.agent_dir());
    let (text, err) = result(&results, "swap");
    assert!(!err, "the swap itself is allowed: {text}");
    for id in ["write", "again"] {
        let (text, err) = result(&results, id);
        assert!(err, "{id}: {text}");
    }
    assert!(!pi.home().join("pwned").exists());
    assert!(!pi.home().join("pwned2").exists());
    // pi's check for new `.git`/`.pi` entries looks through the root it opened, not through
    // the symlink now at its path: it once removed `$HOME/.pi` (the agent directory) here.
    assert!(
        pi.agent_dir().join("settings.json").exists(),
        "the agent directory under $HOME/.pi must survive"
    );
}

#[test]
fn a_root_swapped_for_a_symlink_does_not_open_home() {
    swapped_root(
        "./node_modules/.cache",
        "rm -rf node_modules/.cache && ln -s \"$HOME\" node_modules/.cache",
    );
}

#[test]
fn a_parent_root_whose_child_is_swapped_does_not_open_home() {
    // cwd is $HOME/work/proj and the root `..` ($HOME/work): the model may rename proj.
    let mock = model(&[
        (
            "swap",
            "cd .. && mv proj proj-old && ln -s \"$HOME\" proj && ls -la",
        ),
        ("write", "echo pwned > \"$HOME/pwned\""),
        ("again", "echo pwned > pwned2"),
    ]);
    let pi = PiCommand::for_mock(API, &mock).write_agent_file(
        "settings.json",
        &json!({"sandbox": {"mode": "workspace-write", "writableRoots": [".."]}}).to_string(),
    );
    let cwd = pi.home().join("work/proj");
    std::fs::create_dir_all(&cwd).unwrap();
    let pi = pi.current_dir(&cwd).args(["-p", "go"]);
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    let results = tool_results(pi.agent_dir());
    let (text, err) = result(&results, "swap");
    assert!(!err, "the swap itself is allowed: {text}");
    for id in ["write", "again"] {
        let (text, err) = result(&results, id);
        assert!(err, "{id}: {text}");
    }
    assert!(!pi.home().join("pwned").exists());
    assert!(!pi.home().join("pwned2").exists());
}

#[test]
fn an_abstract_unix_socket_outside_is_unreachable() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let name = format!("pi-sandbox-it-{}", std::process::id());
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = UnixListener::bind_addr(&addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    let connect = format!(
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"\\0{name}\"); s.send(b\"x\")'"
    );
    let mock = model(&[("abstract", &connect)]);
    let pi = print_mode(PiCommand::for_mock(API, &mock));
    pi.run().assert_code(0).assert_no_panic();
    let (text, err) = result(&tool_results(pi.agent_dir()), "abstract");
    assert!(
        err && (text.contains("Operation not permitted") || text.contains("Permission denied")),
        "{text}"
    );
    assert!(listener.accept().is_err(), "a command reached the listener");
}

#[test]
fn commands_run_without_privileges() {
    let mock = model(&[(
        "status",
        "grep -E '^(NoNewPrivs|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status",
    )]);
    let pi = print_mode(PiCommand::for_mock(API, &mock));
    pi.run().assert_code(0).assert_no_panic();
    let (text, err) = result(&tool_results(pi.agent_dir()), "status");
    assert!(!err, "{text}");
    assert!(text.contains("NoNewPrivs:\t1"), "{text}");
    for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert!(
            text.contains(&format!("{cap}:\t0000000000000000")),
            "{cap}: {text}"
        );
    }
}

/// Whether a live (not zombie) process has `needle` in its command line.
fn process_running(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let dir = e.path();
        let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        !zombie
            && String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(needle)
    })
}

fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

#[test]
fn a_command_s_process_tree_ends_with_the_command() {
    let id = std::process::id() % 10_000 + 40_000;
    let (a, b) = (format!("sleep {id}"), format!("sleep {}", id + 1));
    let mock = model(&[(
        "escape",
        &format!("setsid {a} >/dev/null 2>&1 < /dev/null & ( {b} >/dev/null 2>&1 & ) ; sleep 0.3; echo started"),
    )]);
    let pi =
        PiCommand::for_mock(API, &mock).args(["--sandbox", "workspace-write", "--mode", "rpc"]);
    let mut talk = pi.converse();
    talk.send(r#"{"type":"prompt","message":"go"}"#);
    let end = talk.expect("tool end", |v| v["type"] == "tool_execution_end");
    assert_eq!(end["isError"], false, "{end}");
    assert!(
        eventually(Duration::from_secs(10), || !process_running(&a)
            && !process_running(&b)),
        "the command's detached processes outlived it"
    );
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, _) = talk.finish();
    assert_eq!(code, Some(0));
}

#[test]
fn a_timeout_still_stops_a_confined_command_and_its_tree() {
    let id = std::process::id() % 10_000 + 50_000;
    let sleeper = format!("sleep {id}");
    let mock = MockServer::start();
    kernel_has_everything();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[(
            "t",
            "bash",
            json!({"command": format!("trap '' TERM; setsid {sleeper} & {sleeper}; echo never"), "timeout": 1}),
        )],
    )));
    mock.push(Reply::text(API, "done"));
    let pi = print_mode(PiCommand::for_mock(API, &mock));
    pi.run().assert_code(0).assert_no_panic();
    let (text, err) = result(&tool_results(pi.agent_dir()), "t");
    assert!(
        err && text.contains("Command timed out after 1 seconds"),
        "{text}"
    );
    assert!(!text.contains("never"), "{text}");
    assert!(
        eventually(Duration::from_secs(10), || !process_running(&sleeper)),
        "the timed-out command's tree outlived it"
    );
}

#[test]
fn exit_codes_and_output_are_the_command_s() {
    let mock = model(&[
        ("code", "echo out; echo err >&2; exit 7"),
        ("signal", "kill -TERM $$"),
        ("ok", "echo fine > made.txt && cat made.txt"),
    ]);
    let pi = print_mode(PiCommand::for_mock(API, &mock));
    pi.run().assert_code(0).assert_no_panic();
    let results = tool_results(pi.agent_dir());
    let (text, err) = result(&results, "code");
    assert!(
        err && text.contains("out\nerr") && text.contains("Command exited with code 7"),
        "{text}"
    );
    // Killed by a signal: pi sees the signal (128 + 15), not PID 1's or a waiter's exit.
    let (text, err) = result(&results, "signal");
    assert!(
        err && text.contains("Command exited with code 143"),
        "{text}"
    );
    let (text, err) = result(&results, "ok");
    assert!(!err && text.contains("fine"), "{text}");
}

/// An extension whose tool `inject` runs `python3 inject.py` through pi's `exec`.
const EXEC_EXTENSION: &str = r#"#!/usr/bin/env python3
import json, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
pending = {}
for line in sys.stdin:
    m = json.loads(line)
    if m.get("type") == "hello":
        send({"type": "register", "protocol": 1, "tools": [{"name": "inject",
              "description": "try", "parameters": {"type": "object", "properties": {}}}]})
    elif m.get("type") == "tool":
        pending["x"] = m["id"]
        send({"type": "call", "id": "x", "method": "exec",
              "params": {"command": "python3", "args": ["inject.py"]}})
    elif m.get("type") == "reply" and m.get("id") == "x":
        r = m["result"]
        send({"type": "reply", "id": pending["x"], "result": {"content": [
              {"type": "text", "text": "exec said: " + r["stdout"] + r["stderr"]}]}})
"#;

/// Tries TIOCSTI on stdin, stdout, stderr and the controlling terminal.
const INJECT: &str = "import fcntl, os, termios\nfor fd in (0, 1, 2):\n    try:\n        fcntl.ioctl(fd, termios.TIOCSTI, b'#'); print('INJECTED', fd)\n    except OSError as e: print('fd', fd, 'refused')\ntry:\n    t = os.open('/dev/tty', os.O_RDWR); fcntl.ioctl(t, termios.TIOCSTI, b'#'); print('INJECTED tty')\nexcept OSError as e: print('tty refused')\n";

#[test]
fn a_command_cannot_push_keystrokes_into_the_terminal() {
    kernel_has_everything();
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("x", "inject", json!({}))],
    )));
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("b", "bash", json!({"command": "python3 inject.py"}))],
    )));
    mock.push(Reply::text(API, "all done"));
    let pi = PiCommand::for_mock(API, &mock).args(["--sandbox", "workspace-write"]);
    std::fs::write(pi.cwd().join("inject.py"), INJECT).unwrap();
    let ext = pi.agent_dir().join("extensions/inject");
    std::fs::create_dir_all(ext.parent().unwrap()).unwrap();
    std::fs::write(&ext, EXEC_EXTENSION).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ext, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut child = PtyChild::spawn(pi.command(), 100, 30);
    child.wait_for("sandbox: workspace-write", Duration::from_secs(10));
    child.send("go");
    child.send("\r");
    child.wait_for("all done", Duration::from_secs(20));
    // The user's own `!` command, too.
    child.send("!python3 inject.py");
    child.send("\r");
    child.wait_for("tty refused", Duration::from_secs(10));
    assert!(!child.screen().contains("INJECTED"), "{}", child.screen());
    child.send("\x04");
    let _ = child.wait_exit(Duration::from_secs(10));
    let results = tool_results(pi.agent_dir());
    for id in ["x", "b"] {
        let (text, _) = result(&results, id);
        assert!(
            text.contains("tty refused") && !text.contains("INJECTED"),
            "{id}: {text}"
        );
    }
}

fn installed(program: &str) -> bool {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Codex's Linux sandbox tests, played through pi: the network through real tools (when
/// installed), io_uring, AF_VSOCK and UDP refused; a socketpair (local) still works.
#[test]
fn real_network_tools_io_uring_and_vsock_are_refused() {
    kernel_has_everything();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let py = |code: &str| format!("python3 -c '{code}'");
    let mut calls: Vec<(String, String)> = vec![
        (
            "uring".into(),
            py("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); p = ctypes.create_string_buffer(120); r = libc.syscall(425, 8, p); os._exit(0 if r >= 0 else 1)"),
        ),
        (
            "vsock".into(),
            py("import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)"),
        ),
        (
            "udp".into(),
            py(&format!("import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (\"127.0.0.1\", {port}))")),
        ),
        (
            "dns".into(),
            py("import socket; socket.getaddrinfo(\"example.com\", 80)"),
        ),
    ];
    for (tool, command) in [
        (
            "curl",
            format!("curl -sS --max-time 5 http://127.0.0.1:{port}/"),
        ),
        (
            "wget",
            format!("wget -q -T 5 -t 1 -O - http://127.0.0.1:{port}/"),
        ),
        (
            "ssh",
            format!("ssh -o BatchMode=yes -o ConnectTimeout=5 -p {port} 127.0.0.1 true"),
        ),
        ("nc", format!("nc -z -w 5 127.0.0.1 {port}")),
        ("ping", "ping -c 1 -W 1 127.0.0.1".to_string()),
    ] {
        if installed(tool) {
            calls.push((tool.to_string(), command));
        }
    }
    calls.push((
        "pair".into(),
        py("import socket; a, b = socket.socketpair(); a.send(b\"ok\"); print(b.recv(2).decode())"),
    ));
    let as_refs: Vec<(&str, &str)> = calls
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let mock = model(&as_refs);
    let pi = print_mode(PiCommand::for_mock(API, &mock));
    pi.run().assert_code(0).assert_no_panic();
    let results = tool_results(pi.agent_dir());
    for (id, _) in &calls {
        let (text, err) = result(&results, id);
        if id == "pair" {
            assert!(!err && text.contains("ok"), "socketpair: {text}");
        } else {
            assert!(err, "{id} got through: {text}");
        }
    }
    assert!(listener.accept().is_err(), "a command reached the listener");
}

/// What worked before still works with the read-only view: a build with its cache as a
/// writable root creates `target/` at the root of a repository, `npm test` runs, `git status`
/// works, and `git commit` (which writes `.git`) is still refused.
#[test]
fn builds_tests_and_git_status_still_work() {
    kernel_has_everything();
    let rustup = std::env::var("RUSTUP_HOME")
        .unwrap_or_else(|_| format!("{}/.rustup", std::env::var("HOME").unwrap_or_default()));
    let mut calls = vec![
        ("status", "touch new-at-root.txt && git status --short"),
        (
            "commit",
            "git add new-at-root.txt && git -c user.name=t -c user.email=t@t commit -qm x",
        ),
    ];
    if installed("cargo") {
        calls.push((
            "cargo",
            "CARGO_HOME=\"$HOME/.cargo-cache\" cargo build --offline -q && ./target/debug/hello",
        ));
    }
    if installed("npm") {
        calls.push(("npm", "npm test --silent"));
    }
    let mock = model(&calls);
    let pi = PiCommand::for_mock(API, &mock)
        .env("RUSTUP_HOME", rustup)
        .write_agent_file(
            "settings.json",
            &json!({"sandbox": {"mode": "workspace-write", "writableRoots": ["~/.cargo-cache"]}})
                .to_string(),
        )
        .write_file(
            "Cargo.toml",
            "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .write_file("src/main.rs", "fn main() { println!(\"built and ran\"); }\n")
        .write_file(
            "package.json",
            "{\"name\": \"t\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"node -e \\\"console.log('npm tests pass')\\\"\"}}\n",
        );
    std::fs::create_dir_all(pi.home().join(".cargo-cache")).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(pi.cwd())
            .env("HOME", pi.home())
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "first",
    ]);
    let pi = pi.args(["-p", "go"]);
    pi.run().assert_code(0).assert_no_panic();
    let results = tool_results(pi.agent_dir());
    let (text, err) = result(&results, "status");
    assert!(!err && text.contains("?? new-at-root.txt"), "{text}");
    let (text, err) = result(&results, "commit");
    assert!(err && text.contains(".git is read-only"), "{text}");
    if installed("cargo") {
        let (text, err) = result(&results, "cargo");
        assert!(!err && text.contains("built and ran"), "{text}");
    }
    if installed("npm") {
        let (text, err) = result(&results, "npm");
        assert!(!err && text.contains("npm tests pass"), "{text}");
    }
}

#[test]
fn a_command_s_process_tree_ends_when_pi_is_killed() {
    let id = std::process::id() % 10_000 + 30_000;
    let (a, b) = (format!("sleep {id}"), format!("sleep {}", id + 1));
    let mock = model(&[(
        "long",
        &format!("setsid {a} >/dev/null 2>&1 < /dev/null & {b}"),
    )]);
    let pi =
        PiCommand::for_mock(API, &mock).args(["--sandbox", "workspace-write", "--mode", "rpc"]);
    let mut talk = pi.converse();
    talk.send(r#"{"type":"prompt","message":"go"}"#);
    talk.expect("tool start", |v| v["type"] == "tool_execution_start");
    assert!(
        eventually(Duration::from_secs(10), || process_running(&a)
            && process_running(&b)),
        "the command did not start"
    );
    talk.signal(libc::SIGKILL);
    let _ = talk.wait_exit();
    assert!(
        eventually(Duration::from_secs(10), || !process_running(&a)
            && !process_running(&b)),
        "the command's processes outlived pi"
    );
}
