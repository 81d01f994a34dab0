//! The `write` and `edit` tools under `--sandbox` against a hostile model (issue 29, class 1):
//! paths the old check could not resolve (a chain of 41 symlinks, a short link whose real path
//! is longer than `PATH_MAX`), links into pi's agent directory and a repository's hooks, in
//! `read-only` (through `$TMPDIR`) and `workspace-write`, and a background process swapping a
//! directory with a symlink while the model writes. Each must end in a tool error with nothing
//! changed outside the roots.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::mock::{sse_tool_calls, MockServer, Reply};
use crate::support::pi::PiCommand;
use crate::support::session::tool_results as session_tool_results;

const API: &str = "openai-completions";
const SECRET: &str = "{\"secret\":\"do not touch\"}\n";
const HOOK: &str = "#!/bin/sh\nexit 0\n";

/// The files the attacks aim at, with their bytes before.
struct Targets {
    auth: PathBuf,
    mcp: PathBuf,
    hook: PathBuf,
    deep: PathBuf,
}

impl Targets {
    fn new(pi: &PiCommand) -> Targets {
        let auth = pi.agent_dir().join("auth.json");
        std::fs::write(&auth, SECRET).unwrap();
        let hooks = pi.cwd().join(".git/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        let hook = hooks.join("pre-commit");
        std::fs::write(&hook, HOOK).unwrap();
        let deep = long_real_path(pi.home());
        Targets {
            auth,
            mcp: pi.agent_dir().join("mcp.json"),
            hook,
            deep,
        }
    }

    fn unchanged(&self) {
        assert_eq!(std::fs::read_to_string(&self.auth).unwrap(), SECRET);
        assert!(!self.mcp.exists(), "mcp.json was created");
        assert_eq!(std::fs::read_to_string(&self.hook).unwrap(), HOOK);
        let left: Vec<_> = std::fs::read_dir(self.hook.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
        only_keep_txt(&self.deep);
    }
}

/// The folder at `deep` (past PATH_MAX) holds only `keep.txt`, still "keep".
fn only_keep_txt(deep: &Path) {
    let out = python(&format!(
        "import os\np={:?}\nfd=os.open('/',os.O_PATH)\nfor c in p.strip('/').split('/'):\n    fd=os.open(c,os.O_PATH,dir_fd=fd)\nd=os.open('.',os.O_RDONLY|os.O_DIRECTORY,dir_fd=fd)\nk=os.open('keep.txt',os.O_RDONLY,dir_fd=d)\nprint(sorted(os.listdir(d)), os.read(k,100))",
        deep.display().to_string()
    ));
    assert_eq!(
        out.trim(),
        "['keep.txt'] b'keep'",
        "files changed past PATH_MAX"
    );
}

fn python(script: &str) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `HOME/long/A…/A…` (20 components of 240 characters, over 4800 in all) holding `keep.txt`,
/// and `HOME/h2`, a short link to it (through `HOME/h1`).
fn long_real_path(home: &Path) -> PathBuf {
    let name = "A".repeat(240);
    python(&format!(
        r#"
import os
home={home:?}
fd=os.open(home,os.O_PATH)
os.mkdir("long",dir_fd=fd); fd=os.open("long",os.O_PATH,dir_fd=fd)
for i in range(20):
    os.mkdir({name:?},dir_fd=fd); fd=os.open({name:?},os.O_PATH,dir_fd=fd)
w=os.open("keep.txt",os.O_WRONLY|os.O_CREAT,dir_fd=fd); os.write(w,b"keep"); os.close(w)
half="/".join([{name:?}]*10)
os.symlink(home+"/long/"+half, home+"/h1")
os.symlink(home+"/h1/"+half, home+"/h2")
"#,
        home = home.display().to_string(),
    ));
    let half = vec![name; 10].join("/");
    home.join("long").join(&half).join(&half)
}

/// Links the model makes in `dir` (a writable root): a 41-link chain to the agent dir, links
/// to auth.json, mcp.json and the hooks, and the short link past PATH_MAX.
fn make_links(dir: &Path, t: &Targets, home: &Path) {
    let agent = t.auth.parent().unwrap();
    symlink(agent, dir.join("c0")).unwrap();
    for i in 1..=41 {
        symlink(format!("c{}", i - 1), dir.join(format!("c{i}"))).unwrap();
    }
    symlink(&t.auth, dir.join("auth-link.json")).unwrap();
    symlink(&t.mcp, dir.join("mcp-link.json")).unwrap();
    symlink(agent, dir.join("agent")).unwrap();
    symlink(t.hook.parent().unwrap(), dir.join("hooks")).unwrap();
    symlink(&t.hook, dir.join("hook-link")).unwrap();
    symlink(home.join("h2"), dir.join("deep")).unwrap();
}

/// (call id, tool, arguments) for every attack through the links in `dir`.
fn attacks(dir: &Path) -> Vec<(String, &'static str, Value)> {
    let w = |rel: &str| json!({"path": dir.join(rel), "content": "pwned\n"});
    let e = |rel: &str| json!({"path": dir.join(rel), "edits": [{"oldText": "secret", "newText": "pwned"}]});
    let calls = [
        ("write", w("c41/auth.json")),
        ("write", w("c41/mcp.json")),
        ("edit", e("c41/auth.json")),
        ("write", w("auth-link.json")),
        ("edit", e("auth-link.json")),
        ("write", w("mcp-link.json")),
        ("write", w("agent/mcp.json")),
        ("write", w("hooks/pre-commit")),
        ("write", w("hooks/post-checkout")),
        ("write", w("hook-link")),
        ("edit", e("hook-link")),
        ("write", w("deep/keep.txt")),
        ("write", w("deep/new.txt")),
        ("edit", e("deep/keep.txt")),
    ];
    calls
        .into_iter()
        .enumerate()
        .map(|(i, (tool, args))| (format!("a{i}"), tool, args))
        .collect()
}

fn push_turn(mock: &MockServer, calls: &[(String, &'static str, Value)]) {
    let refs: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, tool, args)| (id.as_str(), *tool, args.clone()))
        .collect();
    mock.push(Reply::sse(sse_tool_calls(API, &refs)));
}

/// Every `tool_execution_end` in RPC or JSON output lines: (id, text, isError).
fn tool_ends(lines: &[String]) -> Vec<(String, String, bool)> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "tool_execution_end")
        .map(|v| {
            (
                v["toolCallId"].as_str().unwrap_or_default().to_string(),
                v["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                v["isError"] == true,
            )
        })
        .collect()
}

fn all_refused(ends: &[(String, String, bool)], n: usize, mode: &str) {
    assert_eq!(ends.len(), n, "{ends:?}");
    for (id, text, error) in ends {
        assert!(*error, "{id} was not refused: {text}");
        assert!(
            text.starts_with(&format!("Sandbox ({mode}): ")),
            "{id}: {text}"
        );
    }
}

/// The workspace-write attacks in print mode (`-p`, results read from the session file) or
/// JSON mode (from the event stream).
fn workspace_write_attacks(json_mode: bool) {
    let mock = MockServer::start();
    let mut pi = PiCommand::for_mock(API, &mock).args(["--sandbox", "workspace-write"]);
    if json_mode {
        pi = pi.args(["--mode", "json"]);
    }
    let pi = pi.args(["-p", "escape"]);
    let t = Targets::new(&pi);
    make_links(pi.cwd(), &t, pi.home());
    // Inside the project, but past PATH_MAX: refused, since pi cannot check where it is.
    let inner = pi.cwd().join("inner");
    std::fs::create_dir(&inner).unwrap();
    let inner_deep = long_real_path(&inner);
    let mut calls = attacks(pi.cwd());
    calls.push((
        "long".into(),
        "write",
        json!({"path": inner.join("h2/new.txt"), "content": "x"}),
    ));
    push_turn(&mock, &calls);
    mock.push(Reply::text(API, "done"));
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    let ends = if json_mode {
        let lines: Vec<String> = out.stdout.lines().map(str::to_string).collect();
        tool_ends(&lines)
    } else {
        assert_eq!(out.stdout, "done\n", "stderr: {}", out.stderr);
        session_tool_results(pi.agent_dir())
    };
    all_refused(&ends, calls.len(), "workspace-write");
    only_keep_txt(&inner_deep);
    let text = |id: &str| ends.iter().find(|e| e.0 == id).unwrap().1.clone();
    assert!(text("long").contains("too long"), "{}", text("long"));
    assert!(
        text("a0").contains("too many symbolic links"),
        "{}",
        text("a0")
    );
    assert!(
        text("a7").contains("is read-only (a repository's .git"),
        "{}",
        text("a7")
    );
    t.unchanged();
}

#[test]
fn workspace_write_refuses_writes_through_links_out_of_the_project_in_print_mode() {
    workspace_write_attacks(false);
}

#[test]
fn workspace_write_refuses_writes_through_links_out_of_the_project_in_json_mode() {
    workspace_write_attacks(true);
}

#[test]
fn read_only_refuses_writes_through_links_in_tmpdir_over_rpc() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let tmp = pi.home().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let pi = pi.env("TMPDIR", tmp.display().to_string()).args([
        "--sandbox",
        "read-only",
        "--mode",
        "rpc",
    ]);
    let t = Targets::new(&pi);
    let mut talk = pi.converse();
    talk.send(r#"{"id":"s","type":"get_state"}"#);
    let state = talk.expect("state", |v| v["id"] == "s");
    assert_eq!(state["data"]["sandbox"], "read-only");
    let sandbox_tmp = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("pi-sandbox-")
        })
        .expect("pi's sandbox temp dir");
    make_links(&sandbox_tmp, &t, pi.home());
    let mut calls = attacks(&sandbox_tmp);
    calls.push((
        "ok".into(),
        "write",
        json!({"path": sandbox_tmp.join("sub/fine.txt"), "content": "fine\n"}),
    ));
    push_turn(&mock, &calls);
    mock.push(Reply::text(API, "done"));
    talk.send(r#"{"type":"prompt","message":"escape"}"#);
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, lines, _) = talk.finish();
    assert_eq!(code, Some(0));
    let mut ends = tool_ends(&lines);
    let ok = ends.iter().position(|e| e.0 == "ok").expect("ok result");
    let ok = ends.remove(ok);
    assert!(!ok.2 && ok.1.contains("Successfully wrote"), "{ok:?}");
    all_refused(&ends, calls.len() - 1, "read-only");
    t.unchanged();
}

/// A python3 loop exchanging `dir` and `link` with `renameat2(RENAME_EXCHANGE)` until killed.
fn swapper(dir: &Path, link: &Path) -> Child {
    Command::new("python3")
        .arg("-c")
        .arg(format!(
            r#"
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
a, b = {a:?}.encode(), {b:?}.encode()
while True:
    libc.renameat2(-100, a, -100, b, 2)
"#,
            a = dir.display().to_string(),
            b = link.display().to_string()
        ))
        .spawn()
        .unwrap()
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_directory_swapped_with_a_symlink_never_redirects_a_write() {
    const TURNS: usize = 5;
    const PER_TURN: usize = 50;
    const EDITS_PER_TURN: usize = 10;
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock).args([
        "--sandbox",
        "workspace-write",
        "--mode",
        "json",
        "-p",
        "race",
    ]);
    let outside = pi.home().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let dir = pi.cwd().join("d");
    std::fs::create_dir(&dir).unwrap();
    let link = pi.cwd().join("s");
    symlink(&outside, &link).unwrap();
    // Files to edit, in both places: an edit sent outside would change the outside copy.
    for n in 0..TURNS * EDITS_PER_TURN {
        for d in [&dir, &outside] {
            std::fs::write(d.join(format!("e{n}.txt")), "secret\n").unwrap();
        }
    }
    for turn in 0..TURNS {
        let mut calls: Vec<(String, &'static str, Value)> = (0..PER_TURN)
            .map(|i| {
                let n = turn * PER_TURN + i;
                (
                    format!("w{n}"),
                    "write",
                    json!({"path": dir.join(format!("f{n}.txt")), "content": "x\n"}),
                )
            })
            .collect();
        calls.extend((0..EDITS_PER_TURN).map(|i| {
            let n = turn * EDITS_PER_TURN + i;
            (
                format!("e{n}"),
                "edit",
                json!({"path": dir.join(format!("e{n}.txt")), "edits": [{"oldText": "secret", "newText": "pwned"}]}),
            )
        }));
        push_turn(&mock, &calls);
    }
    mock.push(Reply::text(API, "done"));
    let swap = Killed(swapper(&dir, &link));
    // The swapper is running before the first write.
    let start = Instant::now();
    while std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.file_type().is_symlink()) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "swapper never ran"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let out = pi.run();
    drop(swap);
    out.assert_code(0).assert_no_panic();
    let lines: Vec<String> = out.stdout.lines().map(str::to_string).collect();
    let ends = tool_ends(&lines);
    assert_eq!(ends.len(), TURNS * (PER_TURN + EDITS_PER_TURN));
    let escaped: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            !name.starts_with('e') || std::fs::read_to_string(p).unwrap() != "secret\n"
        })
        .collect();
    let written = ends.iter().filter(|e| !e.2).count();
    eprintln!(
        "race: {written} of {} writes and edits succeeded, {} escaped",
        ends.len(),
        escaped.len()
    );
    assert!(escaped.is_empty(), "writes escaped: {escaped:?}");
    for (id, text, error) in &ends {
        if *error {
            assert!(
                text.starts_with("Sandbox (workspace-write): "),
                "{id}: {text}"
            );
        }
    }
}
