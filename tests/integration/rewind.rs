//! Checkpoints and `/rewind` (issue 34), through the real binary: a scripted turn edits three
//! files, creates one, deletes one and runs `sed -i` through bash; rewinding to before it puts
//! the workspace back byte for byte (compared with a listing made before the turn), and the
//! conversation with it when asked.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::{json, Value};

use crate::support::mock::{sse_tool_calls, MockServer, Reply};
use crate::support::pi::PiCommand;

const API: &str = "openai-completions";

/// Every path under `dir` (`.pi` aside) and its bytes; a link as `-> target`.
pub fn tree_bytes(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn go(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.file_type().is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", target.display()).into_bytes());
            } else if m.is_dir() {
                out.insert(rel.clone() + "/", Vec::new());
                go(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    go(dir, dir, &mut out);
    out
}

/// A workspace with text, binary and linked files, and the mock's scripted turn.
pub fn scripted_turn(cmd: &PiCommand, mock: &MockServer) {
    let ws = cmd.cwd();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    for (name, text) in [
        ("src/a.rs", "fn a() {}\n"),
        ("src/b.rs", "fn b() {}\n"),
        ("c.md", "# title\n"),
        ("gone.txt", "deleted by the turn\n"),
        ("sed.txt", "old value\nold again\n"),
    ] {
        std::fs::write(ws.join(name), text).unwrap();
    }
    let binary: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(ws.join("data.bin"), binary).unwrap();
    symlink("src/a.rs", ws.join("link-to-a")).unwrap();
    let edit = |path: &str, old: &str, new: &str| json!({"path": path, "edits": [{"oldText": old, "newText": new}]});
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[
            ("c1", "edit", edit("src/a.rs", "fn a() {}", "fn a() { 1 }")),
            ("c2", "edit", edit("src/b.rs", "fn b() {}", "fn b() { 2 }")),
            ("c3", "edit", edit("c.md", "# title", "# changed")),
            ("c4", "write", json!({"path": "new.txt", "content": "created\n"})),
            (
                "c5",
                "bash",
                json!({"command": "rm gone.txt && sed -i 's/old/new/g' sed.txt && printf x >> data.bin"}),
            ),
        ],
    )));
    mock.push(Reply::text(API, "done"));
}

pub fn checkpoint_settings() -> String {
    json!({"checkpoints": {"enabled": true}}).to_string()
}

fn rpc_command(mock: &MockServer) -> PiCommand {
    PiCommand::for_mock(API, mock).write_agent_file("settings.json", &checkpoint_settings())
}

fn ask(talk: &mut crate::support::pi::PiConversation, id: &str, cmd: Value) -> Value {
    let mut cmd = cmd;
    cmd["id"] = id.into();
    talk.send(&cmd.to_string());
    let r = talk.expect(id, |v| v["id"] == id && v["type"] == "response");
    assert_eq!(r["success"], true, "{r}");
    r["data"].clone()
}

/// Makes the workspace a git repository with one commit, when git is installed (the store
/// must leave `.git` byte for byte as it was; the comparisons include it).
fn git_init(dir: &Path) {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
    };
    if git(&["init", "-q"]).is_ok_and(|o| o.status.success()) {
        git(&["add", "-A"]).unwrap();
        git(&["commit", "-qm", "start"]).unwrap();
    }
}

#[test]
fn rpc_rewind_restores_the_tree_byte_for_byte_and_the_conversation() {
    let mock = MockServer::start();
    let cmd = rpc_command(&mock).args(["--mode", "rpc"]);
    scripted_turn(&cmd, &mock);
    git_init(cmd.cwd());
    let before = tree_bytes(cmd.cwd());
    let mut talk = cmd.converse();
    talk.send(r#"{"id":"p","type":"prompt","message":"change things"}"#);
    talk.expect("agent_settled", |v| v["type"] == "agent_settled");
    let after_turn = tree_bytes(cmd.cwd());
    assert_ne!(after_turn, before);
    assert_eq!(after_turn["sed.txt"], b"new value\nnew again\n");

    let list = ask(&mut talk, "l", json!({"type": "get_checkpoints"}));
    assert_eq!(list["enabled"], true, "{list}");
    let points = list["checkpoints"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{list}");
    assert_eq!(points[0]["text"], "change things");
    assert_eq!(points[0]["hasCheckpoint"], true);
    let entry = points[0]["entryId"].as_str().unwrap().to_string();

    // The preview changes nothing and names every change.
    let dry = ask(
        &mut talk,
        "d",
        json!({"type": "rewind", "entryId": entry, "dryRun": true}),
    );
    assert_eq!(dry["restored"], false);
    assert_eq!(dry["files"]["added"], json!(["new.txt"]), "{dry}");
    assert_eq!(dry["files"]["removed"], json!(["gone.txt"]), "{dry}");
    assert_eq!(
        dry["files"]["modified"],
        json!(["c.md", "data.bin", "sed.txt", "src/a.rs", "src/b.rs"]),
        "{dry}"
    );
    assert_eq!(dry["changedSinceLastTurn"], json!([]));
    assert_eq!(tree_bytes(cmd.cwd()), after_turn);

    // A change of the user's after the turn is named before it is overwritten.
    std::fs::write(cmd.cwd().join("src/b.rs"), "mine\n").unwrap();
    let dry = ask(
        &mut talk,
        "d2",
        json!({"type": "rewind", "entryId": entry, "dryRun": true}),
    );
    assert_eq!(dry["changedSinceLastTurn"], json!(["src/b.rs"]), "{dry}");

    let done = ask(
        &mut talk,
        "r",
        json!({"type": "rewind", "entryId": entry, "restore": "both"}),
    );
    assert_eq!(done["restored"], true);
    assert_eq!(done["text"], "change things");
    assert_eq!(tree_bytes(cmd.cwd()), before, "byte for byte");
    let messages = ask(&mut talk, "m", json!({"type": "get_messages"}));
    let roles: Vec<&str> = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["role"].as_str())
        .filter(|r| *r != "system")
        .collect();
    assert!(roles.is_empty(), "the conversation went back: {roles:?}");

    // Bad input gets a clear error.
    talk.send(r#"{"id":"bad","type":"rewind","entryId":"nope"}"#);
    let bad = talk.expect("bad", |v| v["id"] == "bad");
    assert_eq!(bad["success"], false);
    assert!(
        bad["error"].as_str().unwrap().contains("not found"),
        "{bad}"
    );
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn rpc_rewind_of_code_only_keeps_the_conversation_and_without_the_setting_says_how_to_turn_it_on() {
    let mock = MockServer::start();
    let cmd = rpc_command(&mock).args(["--mode", "rpc"]);
    scripted_turn(&cmd, &mock);
    let before = tree_bytes(cmd.cwd());
    let mut talk = cmd.converse();
    talk.send(r#"{"id":"p","type":"prompt","message":"change things"}"#);
    talk.expect("agent_settled", |v| v["type"] == "agent_settled");
    let list = ask(&mut talk, "l", json!({"type": "get_checkpoints"}));
    let entry = list["checkpoints"][0]["entryId"]
        .as_str()
        .unwrap()
        .to_string();
    let done = ask(
        &mut talk,
        "r",
        json!({"type": "rewind", "entryId": entry, "restore": "code"}),
    );
    assert!(done.get("text").is_none(), "{done}");
    assert_eq!(tree_bytes(cmd.cwd()), before);
    let messages = ask(&mut talk, "m", json!({"type": "get_messages"}));
    assert!(
        messages.to_string().contains("done"),
        "the conversation stays"
    );
    talk.finish();

    // Without `checkpoints.enabled`, nothing is recorded and the error says how to turn it on.
    let mock = MockServer::start();
    let cmd = PiCommand::for_mock(API, &mock).args(["--mode", "rpc"]);
    mock.push(Reply::text(API, "hello"));
    let mut talk = cmd.converse();
    talk.send(r#"{"id":"p","type":"prompt","message":"hi"}"#);
    talk.expect("agent_settled", |v| v["type"] == "agent_settled");
    let list = ask(&mut talk, "l", json!({"type": "get_checkpoints"}));
    assert_eq!(list["enabled"], false);
    assert_eq!(list["checkpoints"][0]["hasCheckpoint"], false);
    let entry = list["checkpoints"][0]["entryId"]
        .as_str()
        .unwrap()
        .to_string();
    talk.send(
        &json!({"id": "r", "type": "rewind", "entryId": entry, "restore": "code"}).to_string(),
    );
    let r = talk.expect("r", |v| v["id"] == "r");
    assert_eq!(r["success"], false);
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("\"checkpoints\": {\"enabled\": true}"),
        "{r}"
    );
    talk.finish();
    assert!(!cmd.agent_dir().join("checkpoints").exists());
}

#[test]
fn interactive_rewind_previews_then_restores_the_tree_and_the_conversation() {
    use crate::support::pty::PtyChild;
    use std::time::Duration;
    let mock = MockServer::start();
    let cmd = rpc_command(&mock);
    scripted_turn(&cmd, &mock);
    let before = tree_bytes(cmd.cwd());
    let mut child = PtyChild::spawn(cmd.command(), 100, 40);
    let wait = |child: &PtyChild, text: &str| child.wait_for(text, Duration::from_secs(20));
    wait(&child, "mock-model");
    child.send("change things");
    wait(&child, "change things");
    child.send("\r");
    wait(&child, "done");
    // The reply shows before the run is over; `/rewind` waits for the session to be idle.
    child.wait_gone("Working...", Duration::from_secs(20));
    assert_eq!(tree_bytes(cmd.cwd())["sed.txt"], b"new value\nnew again\n");

    child.send("/rewind");
    wait(&child, "/rewind");
    child.send("\r");
    wait(&child, "Select a user message to go back to before it");
    child.send("\r");
    // The preview comes first, the question after; nothing has changed yet.
    wait(
        &child,
        "Files that will change: 5 modified, 1 restored, 1 deleted",
    );
    wait(&child, "M src/a.rs");
    wait(&child, "Restore code and conversation");
    assert_ne!(tree_bytes(cmd.cwd()), before);
    child.send("\r");
    wait(&child, "Navigated to selected point");
    assert_eq!(tree_bytes(cmd.cwd()), before, "byte for byte");
    // The message is back in the editor, its turn gone from the chat.
    let screen = child.screen();
    assert!(!screen.contains("done"), "{screen}");
    assert!(screen.contains("change things"), "{screen}");
}

/// An attacker's turn: the model replaces `src` with a link to a folder outside the project
/// and plants a link to an outside file where a project file was. The rewind restores `src`
/// as a folder and the file as a file, and writes nothing outside.
#[test]
fn a_rewind_never_writes_through_links_the_turn_planted() {
    let mock = MockServer::start();
    let cmd = rpc_command(&mock).args(["--mode", "rpc"]);
    let ws = cmd.cwd().to_path_buf();
    let outside = ws.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "outside\n").unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "mine\n").unwrap();
    std::fs::write(ws.join("notes.txt"), "notes\n").unwrap();
    let before = tree_bytes(&ws);
    let outside_before = tree_bytes(&outside);
    let command = format!(
        "rm -rf src notes.txt && ln -s {o} src && ln -s {o}/secret notes.txt",
        o = outside.display()
    );
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("c1", "bash", json!({ "command": command }))],
    )));
    mock.push(Reply::text(API, "done"));
    let mut talk = cmd.converse();
    talk.send(r#"{"id":"p","type":"prompt","message":"go"}"#);
    talk.expect("agent_settled", |v| v["type"] == "agent_settled");
    assert!(std::fs::symlink_metadata(ws.join("src"))
        .unwrap()
        .file_type()
        .is_symlink());
    let list = ask(&mut talk, "l", json!({"type": "get_checkpoints"}));
    let entry = list["checkpoints"][0]["entryId"]
        .as_str()
        .unwrap()
        .to_string();
    let done = ask(
        &mut talk,
        "r",
        json!({"type": "rewind", "entryId": entry, "restore": "code"}),
    );
    assert!(done.get("failed").is_none(), "{done}");
    assert_eq!(tree_bytes(&ws), before);
    assert_eq!(
        tree_bytes(&outside),
        outside_before,
        "nothing written outside"
    );
    talk.finish();
}
