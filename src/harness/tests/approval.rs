use std::sync::Mutex;

use serde_json::json;

use super::*;
use crate::extensions::ui::Notice;

/// Answers dialogs from a script and remembers what it was asked.
struct ScriptedUi {
    answers: Mutex<Vec<Answer>>,
    asked: Mutex<Vec<Dialog>>,
}

impl ExtensionUi for ScriptedUi {
    fn dialog(&self, dialog: Dialog, _abort: &Abort) -> Answer {
        self.asked.lock().unwrap().push(dialog);
        let mut answers = self.answers.lock().unwrap();
        if answers.is_empty() {
            Answer::Cancelled
        } else {
            answers.remove(0)
        }
    }
    fn notice(&self, _notice: Notice) {}
}

fn setup(answers: Vec<Answer>, menu: bool) -> (Arc<Approvals>, Arc<ScriptedUi>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let agent_dir = dir.path().join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    std::fs::write(agent_dir.join("settings.json"), r#"{"theme": "dark"}"#).unwrap();
    let settings = Settings::load_with(&agent_dir, dir.path(), false);
    let policy = Policy::parse(&json!({"ask": ["bash(git push*)"]})).unwrap();
    let approvals = Approvals::new(policy, dir.path().to_path_buf(), settings);
    let ui = Arc::new(ScriptedUi {
        answers: Mutex::new(answers),
        asked: Mutex::new(Vec::new()),
    });
    approvals.set_asker(Some(Asker {
        ui: Arc::clone(&ui) as Arc<dyn ExtensionUi>,
        timeout: None,
        menu,
    }));
    (approvals, ui, dir)
}

fn call(id: &str, command: &str) -> (ToolCall, Value) {
    let args = json!({ "command": command });
    let call = ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: args.clone(),
        thought_signature: None,
    };
    (call, args)
}

fn check(a: &Approvals, id: &str, command: &str) -> Result<(), String> {
    let (c, args) = call(id, command);
    a.check(&c, &args, &Abort::new())
}

#[test]
fn once_asks_again_and_session_does_not() {
    let (a, ui, _dir) = setup(
        vec![Answer::Value(ONCE.into()), Answer::Value(SESSION.into())],
        true,
    );
    assert!(check(&a, "1", "git push").is_ok());
    assert!(check(&a, "2", "git push").is_ok());
    assert!(check(&a, "3", "git push").is_ok());
    assert_eq!(
        ui.asked.lock().unwrap().len(),
        2,
        "the third call was approved for the session"
    );
    // Another command is asked about again.
    assert!(check(&a, "4", "git push --tags").is_err());
    let d = a.take_decisions();
    let answers: Vec<&str> = d
        .iter()
        .map(|d| d["answer"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(answers, ["once", "session", "session", "dismissed"]);
    assert!(a.take_decisions().is_empty());
}

#[test]
fn always_saves_the_exact_call_to_the_user_settings() {
    let (a, _ui, dir) = setup(vec![Answer::Value(ALWAYS.into())], true);
    assert!(check(&a, "1", "git push origin main").is_ok());
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("agent/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved["theme"], "dark", "the file's other keys are kept");
    assert_eq!(
        saved["permissions"]["allow"],
        json!(["bash(git push origin main)"])
    );
    // Read back, the saved rule answers the ask rule for that very call only.
    let policy =
        Policy::parse(&json!({"ask": ["bash(git push*)"], "allow": saved["permissions"]["allow"]}))
            .unwrap();
    let cwd = dir.path();
    assert_eq!(
        policy
            .evaluate("bash", &json!({"command": "git push origin main"}), cwd)
            .verdict,
        Verdict::Allow
    );
    assert_eq!(
        policy
            .evaluate("bash", &json!({"command": "git push -f"}), cwd)
            .verdict,
        Verdict::Ask
    );
}

#[test]
fn no_sends_the_reason_and_confirm_is_yes_or_no() {
    let (a, ui, _dir) = setup(
        vec![
            Answer::Value(NO.into()),
            Answer::Value("use a branch".into()),
        ],
        true,
    );
    let e = check(&a, "1", "git push").unwrap_err();
    assert_eq!(e, "Not run: the user declined this tool call: use a branch");
    assert!(
        matches!(&ui.asked.lock().unwrap()[0], Dialog::Select { title, .. } if title.contains("git push") && title.contains("bash(git push*)"))
    );
    let (a, ui, _dir) = setup(
        vec![Answer::Confirmed(true), Answer::Confirmed(false)],
        false,
    );
    assert!(check(&a, "1", "git push").is_ok());
    assert!(check(&a, "2", "git push").is_err());
    assert!(matches!(
        &ui.asked.lock().unwrap()[0],
        Dialog::Confirm { .. }
    ));
}

#[test]
fn nobody_to_ask_refuses_and_a_wildcard_call_is_not_offered_always() {
    let (a, ui, _dir) = setup(vec![], true);
    assert!(check(&a, "1", "git push 'a*'").is_err());
    match &ui.asked.lock().unwrap()[0] {
        Dialog::Select { options, .. } => {
            assert!(!options.iter().any(|o| o == ALWAYS), "{options:?}")
        }
        d => panic!("{d:?}"),
    }
    a.set_asker(None);
    let e = check(&a, "2", "ls && git push").unwrap_err();
    assert!(e.contains("nobody can answer"), "{e}");
    assert_eq!(a.take_decisions().last().unwrap()["by"], "no-ui");
}

#[test]
fn never_refuses_what_would_be_asked_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::parse(
        &json!({"ask": ["bash(git push*)"], "deny": ["bash(rm *)"], "approval": "never"}),
    )
    .unwrap();
    let a = Approvals::new(policy, dir.path().to_path_buf(), Settings::default());
    let e = check(&a, "1", "git push").unwrap_err();
    assert!(
        e.contains("bash(git push*)") && e.contains("\"never\" never asks"),
        "{e}"
    );
    let e = check(&a, "2", "rm x").unwrap_err();
    assert!(e.contains("the approval rule \"bash(rm *)\""), "{e}");
    let by: Vec<Value> = a.take_decisions().iter().map(|d| d["by"].clone()).collect();
    assert_eq!(by, [json!("never"), json!("rule")]);
}
