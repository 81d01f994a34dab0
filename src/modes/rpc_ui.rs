//! Extension UI over RPC: dialogs become `extension_ui_request` lines with a fresh id and
//! block until the client's `extension_ui_response` with that id arrives (or the dialog's
//! timeout passes, or the run is aborted — then the default answer). Notices are written and
//! forgotten. Responses with an unknown id are ignored, as in pi.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crossbeam_channel::{bounded, Sender};
use serde_json::{json, Map, Value};

use super::rpc_out::Out;
use crate::ai::Abort;
use crate::extensions::ui::{Answer, Dialog, ExtensionUi, Notice};
use crate::session::ids::uuid_v4;

pub struct RpcUi {
    out: Out,
    pending: Mutex<HashMap<String, Sender<Value>>>,
}

impl RpcUi {
    pub(crate) fn new(out: Out) -> Self {
        RpcUi {
            out,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Delivers a client's `extension_ui_response` to the dialog waiting for it.
    pub fn resolve(&self, response: &Value) {
        let Some(id) = response["id"].as_str() else {
            return;
        };
        let waiter = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        if let Some(tx) = waiter {
            let _ = tx.send(response.clone());
        }
    }

    fn request(&self, id: &str, method: &str, fields: Value) {
        let mut m = Map::new();
        m.insert("type".into(), "extension_ui_request".into());
        m.insert("id".into(), id.into());
        m.insert("method".into(), method.into());
        if let Value::Object(f) = fields {
            // Absent optional fields are left out, as JSON.stringify drops `undefined`.
            m.extend(f.into_iter().filter(|(_, v)| !v.is_null()));
        }
        self.out.line(&Value::Object(m));
    }
}

fn parse_answer(dialog: &Dialog, response: &Value) -> Answer {
    if response["cancelled"] == true {
        return Answer::Cancelled;
    }
    match dialog {
        Dialog::Confirm { .. } => match response["confirmed"].as_bool() {
            Some(b) => Answer::Confirmed(b),
            None => Answer::Cancelled,
        },
        _ => match response.get("value") {
            Some(Value::String(s)) => Answer::Value(s.clone()),
            Some(v) if !v.is_null() => Answer::Value(v.to_string()),
            _ => Answer::Cancelled,
        },
    }
}

impl ExtensionUi for RpcUi {
    fn dialog(&self, dialog: Dialog, abort: &Abort) -> Answer {
        // pi's RPC mode shows no extension components: `ctx.ui.custom()` resolves at once.
        if abort.is_aborted() || matches!(dialog, Dialog::Custom { .. }) {
            return Answer::Cancelled;
        }
        let id = uuid_v4();
        let (tx, rx) = bounded(1);
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone(), tx);
        let ms = |t: &Option<Duration>| t.map(|d| d.as_millis() as u64);
        let (method, fields) = match &dialog {
            Dialog::Select {
                title,
                options,
                timeout,
            } => (
                "select",
                json!({"title": title, "options": options, "timeout": ms(timeout)}),
            ),
            Dialog::Confirm {
                title,
                message,
                timeout,
            } => (
                "confirm",
                json!({"title": title, "message": message, "timeout": ms(timeout)}),
            ),
            Dialog::Input {
                title,
                placeholder,
                timeout,
            } => (
                "input",
                json!({"title": title, "placeholder": placeholder, "timeout": ms(timeout)}),
            ),
            Dialog::Editor { title, prefill } => {
                ("editor", json!({"title": title, "prefill": prefill}))
            }
            Dialog::Custom { .. } => return Answer::Cancelled,
        };
        self.request(&id, method, fields);
        // `Duration::MAX` waits without a time limit.
        let wait = dialog.timeout().unwrap_or(Duration::MAX);
        let aborted = abort.signal();
        let answer = crossbeam_channel::select! {
            recv(rx) -> response => match response {
                Ok(response) => parse_answer(&dialog, &response),
                Err(_) => Answer::Cancelled,
            },
            recv(aborted) -> _ => Answer::Cancelled,
            default(wait) => Answer::Cancelled,
        };
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        answer
    }

    fn notice(&self, notice: Notice) {
        let id = uuid_v4();
        match notice {
            Notice::Notify { message, kind } => self.request(
                &id,
                "notify",
                json!({"message": message, "notifyType": kind}),
            ),
            Notice::Status { key, text } => self.request(
                &id,
                "setStatus",
                json!({"statusKey": key, "statusText": text}),
            ),
            Notice::Widget {
                key,
                lines,
                placement,
            } => self.request(
                &id,
                "setWidget",
                json!({"widgetKey": key, "widgetLines": lines,
                    "widgetPlacement": placement.map(|p| p.as_str())}),
            ),
            Notice::Title(title) => self.request(&id, "setTitle", json!({"title": title})),
            Notice::EditorText(text) => self.request(&id, "set_editor_text", json!({"text": text})),
            // Components, footers and custom editors are the terminal UI's alone.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::Arc;

    /// Captures what the server writes.
    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<u8>>>);

    impl Write for Capture {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Capture {
        fn lines(&self) -> Vec<Value> {
            String::from_utf8(self.0.lock().unwrap().clone())
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        }
    }

    fn ui() -> (Arc<RpcUi>, Capture) {
        let cap = Capture::default();
        (Arc::new(RpcUi::new(Out::new(Box::new(cap.clone())))), cap)
    }

    /// Waits for the `n`th request line and returns it.
    fn request(cap: &Capture, n: usize) -> Value {
        for _ in 0..200 {
            if let Some(v) = cap.lines().get(n) {
                return v.clone();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("no request written");
    }

    #[test]
    fn a_dialog_waits_for_the_response_with_its_id() {
        let (ui, cap) = ui();
        let asking = Arc::clone(&ui);
        let answer = std::thread::spawn(move || {
            asking.dialog(
                Dialog::Select {
                    title: "Pick".into(),
                    options: vec!["a".into(), "b".into()],
                    timeout: None,
                },
                &Abort::new(),
            )
        });
        let req = request(&cap, 0);
        assert_eq!(req["type"], "extension_ui_request");
        assert_eq!(req["method"], "select");
        assert_eq!(req["options"], json!(["a", "b"]));
        assert!(req.get("timeout").is_none(), "{req}");
        assert_eq!(req["id"].as_str().unwrap().len(), 36);
        // A response for someone else is ignored.
        ui.resolve(&json!({"type": "extension_ui_response", "id": "other", "value": "x"}));
        ui.resolve(&json!({"type": "extension_ui_response", "id": req["id"], "value": "b"}));
        assert_eq!(answer.join().unwrap(), Answer::Value("b".into()));
    }

    #[test]
    fn confirm_cancel_timeout_and_abort_give_defaults() {
        let (ui, cap) = ui();
        let asking = Arc::clone(&ui);
        let confirm = std::thread::spawn(move || {
            asking.dialog(
                Dialog::Confirm {
                    title: "Sure?".into(),
                    message: "rm -rf".into(),
                    timeout: Some(Duration::from_secs(30)),
                },
                &Abort::new(),
            )
        });
        let req = request(&cap, 0);
        assert_eq!(req["timeout"], 30000);
        ui.resolve(&json!({"id": req["id"], "confirmed": true}));
        assert_eq!(confirm.join().unwrap(), Answer::Confirmed(true));

        let started = std::time::Instant::now();
        let timed_out = ui.dialog(
            Dialog::Input {
                title: "Name".into(),
                placeholder: Some("x".into()),
                timeout: Some(Duration::from_millis(60)),
            },
            &Abort::new(),
        );
        assert_eq!(timed_out, Answer::Cancelled);
        assert!(started.elapsed() < Duration::from_secs(2));

        let abort = Abort::new();
        let flag = abort.clone();
        let asking = Arc::clone(&ui);
        let aborted = std::thread::spawn(move || {
            asking.dialog(
                Dialog::Editor {
                    title: "Edit".into(),
                    prefill: None,
                },
                &flag,
            )
        });
        let req = request(&cap, 2);
        assert_eq!(req["method"], "editor");
        abort.abort();
        assert_eq!(aborted.join().unwrap(), Answer::Cancelled);
        // A late answer to a finished dialog goes nowhere.
        ui.resolve(&json!({"id": req["id"], "value": "late"}));

        let asking = Arc::clone(&ui);
        let cancelled = std::thread::spawn(move || {
            asking.dialog(
                Dialog::Input {
                    title: "t".into(),
                    placeholder: None,
                    timeout: None,
                },
                &Abort::new(),
            )
        });
        let req = request(&cap, 3);
        ui.resolve(&json!({"id": req["id"], "cancelled": true}));
        assert_eq!(cancelled.join().unwrap(), Answer::Cancelled);
    }

    #[test]
    fn notices_are_written_in_pis_shapes() {
        let (ui, cap) = ui();
        ui.notice(Notice::Notify {
            message: "hi".into(),
            kind: Some("warning".into()),
        });
        ui.notice(Notice::Status {
            key: "k".into(),
            text: None,
        });
        ui.notice(Notice::Widget {
            key: "w".into(),
            lines: Some(vec!["l1".into()]),
            placement: Some(crate::extensions::ui::WidgetPlacement::BelowEditor),
        });
        ui.notice(Notice::Title("T".into()));
        ui.notice(Notice::EditorText("text".into()));
        let lines = cap.lines();
        let strip = |v: &Value| {
            let mut v = v.clone();
            v.as_object_mut().unwrap().remove("id");
            v
        };
        assert_eq!(
            lines.iter().map(strip).collect::<Vec<_>>(),
            vec![
                json!({"type": "extension_ui_request", "method": "notify", "message": "hi", "notifyType": "warning"}),
                json!({"type": "extension_ui_request", "method": "setStatus", "statusKey": "k"}),
                json!({"type": "extension_ui_request", "method": "setWidget", "widgetKey": "w", "widgetLines": ["l1"], "widgetPlacement": "belowEditor"}),
                json!({"type": "extension_ui_request", "method": "setTitle", "title": "T"}),
                json!({"type": "extension_ui_request", "method": "set_editor_text", "text": "text"}),
            ]
        );
    }
}
