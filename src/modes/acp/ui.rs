//! Where pi would ask a person, an ACP agent asks the editor: an extension's `confirm` and
//! `select`, an approval rule's question (allow once, allow always for the session or saved,
//! reject) and a sandboxed command that wants to run once without the sandbox become
//! `session/request_permission` requests; the option the user picks is the answer. Dialogs an
//! editor has no permission form for (free text, an extension's own component) are cancelled,
//! and notices go to stderr, which editors keep in their agent log.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::ai::Abort;
use crate::extensions::ui::{Answer, Dialog, ExtensionUi, Notice};
use crate::harness::approval::{answer_kind, AnswerKind};

use super::wire::Wire;

pub struct AcpUi {
    wire: Wire,
    /// The live session's id (permission requests name it).
    session_id: Arc<Mutex<String>>,
}

impl AcpUi {
    pub fn new(wire: Wire, session_id: Arc<Mutex<String>>) -> AcpUi {
        AcpUi { wire, session_id }
    }
}

/// The `toolCall` and `options` of a permission request for `dialog`, or `None` when an editor
/// cannot show it. Pure.
pub fn permission_request(dialog: &Dialog) -> Option<(Value, Vec<Value>)> {
    let text = |t: &str| json!([{"type": "content", "content": {"type": "text", "text": t}}]);
    match dialog {
        Dialog::Confirm { title, message, .. } => Some((
            json!({"toolCallId": "pi-confirm", "title": title, "kind": "other", "status": "pending",
                "content": text(message)}),
            vec![
                json!({"optionId": "yes", "name": "Yes", "kind": "allow_once"}),
                json!({"optionId": "no", "name": "No", "kind": "reject_once"}),
            ],
        )),
        Dialog::Select { title, options, .. }
            if !options.is_empty() && options.iter().all(|o| answer_kind(o).is_some()) =>
        {
            Some(approval_request(title, options))
        }
        Dialog::Select { title, options, .. } => Some((
            json!({"toolCallId": "pi-select", "title": title, "kind": "other", "status": "pending"}),
            options
                .iter()
                .enumerate()
                .map(|(i, o)| json!({"optionId": i.to_string(), "name": o, "kind": "allow_once"}))
                .collect(),
        )),
        _ => None,
    }
}

/// An approval rule's question (`harness::approval`): its first line is the title, the rest
/// (the call and why it is asked) the content; its answers become ACP's allow once, allow
/// always (for the session, or saved to the settings) and reject. The option ids stay the
/// answers' positions, as for any `select`.
fn approval_request(question: &str, options: &[String]) -> (Value, Vec<Value>) {
    let (title, rest) = question.split_once('\n').unwrap_or((question, ""));
    let options = options
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let (name, kind) = match answer_kind(o) {
                Some(AnswerKind::Once) => ("Allow once", "allow_once"),
                Some(AnswerKind::Session) => {
                    ("Always allow this call in this session", "allow_always")
                }
                Some(AnswerKind::Always) => {
                    ("Always allow this call (saved to settings)", "allow_always")
                }
                _ => ("Reject", "reject_once"),
            };
            json!({"optionId": i.to_string(), "name": name, "kind": kind})
        })
        .collect();
    let mut call =
        json!({"toolCallId": "pi-approval", "title": title, "kind": "other", "status": "pending"});
    if !rest.trim().is_empty() {
        call["content"] =
            json!([{"type": "content", "content": {"type": "text", "text": rest.trim()}}]);
    }
    (call, options)
}

/// What the editor's answer means for `dialog`. Pure.
pub fn answer_of(dialog: &Dialog, response: &Value) -> Answer {
    let outcome = &response["outcome"];
    if outcome["outcome"] != "selected" {
        return Answer::Cancelled;
    }
    let picked = outcome["optionId"].as_str().unwrap_or("");
    match dialog {
        Dialog::Confirm { .. } => Answer::Confirmed(picked == "yes"),
        Dialog::Select { options, .. } => picked
            .parse::<usize>()
            .ok()
            .and_then(|i| options.get(i))
            .map_or(Answer::Cancelled, |o| Answer::Value(o.clone())),
        _ => Answer::Cancelled,
    }
}

impl ExtensionUi for AcpUi {
    fn dialog(&self, dialog: Dialog, abort: &Abort) -> Answer {
        let Some((tool_call, options)) = permission_request(&dialog) else {
            return Answer::Cancelled;
        };
        let session_id = self
            .session_id
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let params = json!({"sessionId": session_id, "toolCall": tool_call, "options": options});
        let timeout = match &dialog {
            Dialog::Confirm { timeout, .. } | Dialog::Select { timeout, .. } => *timeout,
            _ => None,
        };
        match self
            .wire
            .request("session/request_permission", params, abort, timeout)
        {
            Some(Ok(response)) => answer_of(&dialog, &response),
            _ => Answer::Cancelled,
        }
    }

    fn notice(&self, notice: Notice) {
        if let Notice::Notify { message, .. } = notice {
            eprintln!("{message}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confirm_and_select_become_permission_requests_and_answers() {
        let confirm = Dialog::Confirm {
            title: "Run without the sandbox?".into(),
            message: "curl needs the network".into(),
            timeout: None,
        };
        let (call, options) = permission_request(&confirm).unwrap();
        assert_eq!(call["title"], "Run without the sandbox?");
        assert_eq!(options[0]["kind"], "allow_once");
        assert_eq!(options[1]["kind"], "reject_once");
        let picked = |id: &str| json!({"outcome": {"outcome": "selected", "optionId": id}});
        assert_eq!(answer_of(&confirm, &picked("yes")), Answer::Confirmed(true));
        assert_eq!(answer_of(&confirm, &picked("no")), Answer::Confirmed(false));
        assert_eq!(
            answer_of(&confirm, &json!({"outcome": {"outcome": "cancelled"}})),
            Answer::Cancelled
        );
        let select = Dialog::Select {
            title: "Pick".into(),
            options: vec!["a".into(), "b".into()],
            timeout: None,
        };
        let (_, options) = permission_request(&select).unwrap();
        assert_eq!(options[1]["name"], "b");
        assert_eq!(answer_of(&select, &picked("1")), Answer::Value("b".into()));
        assert_eq!(answer_of(&select, &picked("7")), Answer::Cancelled);
        let approval = Dialog::Select {
            title:
                "Allow this bash call?\n\n  git push\n\nAsked because of the rule \"bash(git *)\"."
                    .into(),
            options: vec![
                "Yes, once".into(),
                "Yes, and don't ask again for this call until pi exits".into(),
                "Yes, always (saved to your settings)".into(),
                "No, and tell the model why".into(),
            ],
            timeout: None,
        };
        let (call, options) = permission_request(&approval).unwrap();
        assert_eq!(call["title"], "Allow this bash call?");
        assert!(call["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .starts_with("git push"));
        let kinds: Vec<&str> = options
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["allow_once", "allow_always", "allow_always", "reject_once"]
        );
        assert_eq!(
            answer_of(&approval, &picked("2")),
            Answer::Value("Yes, always (saved to your settings)".into())
        );
        let input = Dialog::Input {
            title: "Name".into(),
            placeholder: None,
            timeout: None,
        };
        assert!(permission_request(&input).is_none());
    }
}
