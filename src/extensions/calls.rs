//! What an extension sends on its own, handled on the host's dispatcher thread: calls
//! (`{"type":"call","method":…}` lines), the `error` lines it reports, registration updates,
//! stderr lines and its death. UI calls go to the mode's `ExtensionUi` (dialogs on their own thread, so one
//! extension waiting for the user never stalls another's messages); getters answer from a
//! `SessionView` the harness keeps current; calls that change the session become `Action`s the
//! harness applies at its next safe point and answers then.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crossbeam_channel::Receiver;
use serde_json::{json, Value};

use super::extension::Extension;
use super::host::ExtensionHost;
use super::process::ProcessEvent;
use super::requests::{Action, ModeRequest, PendingAction, ReplyTo, SessionView};
use super::ui::{Answer, ComponentHandle, Dialog, Notice, WidgetPlacement};
use crate::ai::{now_ms, Content, Extra, Message, UserContent, UserMessage};

/// After loading, one thread handles what extensions send on their own: calls, reported
/// errors, stderr lines and deaths.
pub(super) fn spawn_dispatcher(rx: Receiver<(usize, ProcessEvent)>, host: Weak<ExtensionHost>) {
    // Detached: it ends when every extension's pipes have closed (all senders dropped).
    let _ = std::thread::Builder::new()
        .name("pi-ext-host".into())
        .spawn(move || {
            for (i, ev) in rx {
                let Some(host) = host.upgrade() else {
                    return;
                };
                let Some(ext) = host.extensions.iter().find(|e| {
                    // Indexes are those of the sources; find the extension by identity.
                    e.source.index == i
                }) else {
                    continue;
                };
                let ext = Arc::clone(ext);
                match ev {
                    ProcessEvent::Stderr(line) => host.forward_stderr(&ext, &line),
                    ProcessEvent::Died(reason) => host.report(
                        &ext.display_path(),
                        "process",
                        format!("extension {reason}; disabled"),
                    ),
                    ProcessEvent::Message(msg) if msg["type"] == "register" => {
                        host.registration_update(&ext, &msg);
                        ext.process.mark_handled();
                    }
                    ProcessEvent::Message(msg) => {
                        handle(&host, &ext, msg);
                        ext.process.mark_handled();
                    }
                }
            }
        });
}

/// Handles one unsolicited line from `ext`.
pub fn handle(host: &Arc<ExtensionHost>, ext: &Arc<Extension>, msg: Value) {
    match msg["type"].as_str() {
        Some("error") => host.report(
            &ext.display_path(),
            msg["event"].as_str().unwrap_or("extension"),
            msg["error"].as_str().unwrap_or("unknown error"),
        ),
        Some("call") => call(host, ext, msg),
        _ => {
            let reason = format!("sent an unexpected message: {msg}");
            host.report(&ext.display_path(), "protocol", reason.clone());
            ext.process.disable(reason);
        }
    }
}

fn call(host: &Arc<ExtensionHost>, ext: &Arc<Extension>, msg: Value) {
    let method = msg["method"].as_str().unwrap_or("").to_string();
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    let reply = msg.get("id").filter(|id| !id.is_null()).map(|id| ReplyTo {
        extension: Arc::clone(ext),
        id: id.clone(),
    });
    let answer = |r: Result<Value, String>| {
        if let Some(to) = &reply {
            to.send(r);
        }
    };
    let str_param = |k: &str| params[k].as_str().map(str::to_string);
    match method.as_str() {
        "ui.select" | "ui.confirm" | "ui.input" | "ui.editor" => {
            let Some(dialog) = dialog_of(&method, &params) else {
                answer(Err(format!("{method}: missing \"title\"")));
                return;
            };
            let asking = Arc::clone(host);
            // A dialog can wait for minutes; it gets its own thread.
            let spawned = std::thread::Builder::new()
                .name("pi-ext-dialog".into())
                .spawn(move || {
                    let abort = asking.session_abort();
                    let confirm = matches!(dialog, Dialog::Confirm { .. });
                    let result = match asking.ui().dialog(dialog, &abort) {
                        Answer::Value(v) => Value::String(v),
                        Answer::Confirmed(b) => Value::Bool(b),
                        Answer::Cancelled if confirm => Value::Bool(false),
                        Answer::Cancelled => Value::Null,
                    };
                    if let Some(to) = reply {
                        to.send(Ok(result));
                    }
                });
            if spawned.is_err() {
                host.report(&ext.display_path(), &method, "could not start a dialog thread");
            }
        }
        "ui.custom" => custom_view(host, ext, &params, reply),
        "tools.run" => super::services::run_builtin_tool(host, ext, &msg),
        "ai.stream" => super::services::ai_stream(host, ext, &msg),
        "models.auth" => answer(super::services::model_auth(host, &params)),
        "models.classify" | "models.generateImages" => {
            super::services::non_chat_call(host, ext, &msg)
        }
        "setLabel" => match str_param("entryId") {
            Some(entry_id) => queue(
                host,
                Action::SetLabel {
                    entry_id,
                    label: str_param("label"),
                },
                reply,
            ),
            None => answer(Err("setLabel: missing \"entryId\"".into())),
        },
        "waitForIdle" => queue(host, Action::WaitForIdle, reply),
        "session.new" | "session.fork" | "session.switch" | "session.navigateTree"
        | "session.reload" | "shutdown" => {
            let request = match method.as_str() {
                "session.new" => Some(ModeRequest::NewSession),
                "session.fork" => str_param("entryId").map(|entry_id| ModeRequest::Fork {
                    entry_id,
                    at: params["position"] == "at",
                }),
                "session.switch" => str_param("sessionPath").map(ModeRequest::SwitchSession),
                "session.navigateTree" => {
                    str_param("targetId").map(|target_id| ModeRequest::NavigateTree {
                        target_id,
                        summarize: params["summarize"] == true,
                    })
                }
                "session.reload" => Some(ModeRequest::Reload),
                _ => Some(ModeRequest::Shutdown),
            };
            match request {
                Some(r) => {
                    host.push_mode_request(r);
                    answer(Ok(json!({"cancelled": false})));
                }
                None => answer(Err(format!("{method}: missing parameters"))),
            }
        }
        m if m.starts_with("ui.") => {
            match notice_of(ext, &method, &params) {
                Some(n) => {
                    host.ui().notice(n);
                    answer(Ok(Value::Null));
                }
                None => answer(Err(format!("{method}: missing parameters"))),
            }
        }
        "getFlag" => answer(Ok(str_param("name")
            .and_then(|n| host.flag_value(&n))
            .unwrap_or(Value::Null))),
        // MCP servers for the session; the MCP manager follows the registry's changes.
        "registerMcpServer" | "unregisterMcpServer" => {
            let servers = host.mcp_servers();
            let name = str_param("name").unwrap_or_default();
            let result = if method == "registerMcpServer" {
                servers.register(&ext.display_path(), &name, &params["config"])
            } else {
                servers.unregister(&ext.display_path(), &name);
                Ok(())
            };
            if result.is_ok() {
                host.emit("mcp_servers_change", json!({ "servers": servers.to_json() }));
            }
            answer(result.map(|_| Value::Null))
        }
        "getMcpServers" => answer(Ok(host.mcp_servers().to_json())),
        "getActiveTools" => answer(Ok(json!(host.view_snapshot().active_tools))),
        "getAllTools" => answer(Ok(json!(host.view_snapshot().all_tools))),
        "getThinkingLevel" => answer(Ok(json!(host.view_snapshot().thinking_level))),
        "getSessionName" => answer(Ok(json!(host.view_snapshot().session_name))),
        "getModel" => answer(Ok(host.view_snapshot().model)),
        "getSystemPrompt" => answer(Ok(json!(host.view_snapshot().system_prompt))),
        "isIdle" => answer(Ok(json!(!host.is_running()))),
        "getCommands" => answer(Ok(Value::Array(
            host.commands()
                .into_iter()
                .map(|c| json!({"name": c.name, "description": c.description, "source": "extension"}))
                .collect(),
        ))),
        "abort" => {
            host.session_abort().abort();
            answer(Ok(Value::Null));
        }
        "exec" => {
            let cwd = host.cwd.clone();
            // Stopped by the extension's `cancel` line for this call, or by its death.
            let call = ext.process.begin_call(msg.get("id"));
            // Runs on its own thread: a long command must not hold up this extension's
            // other messages.
            let _ = std::thread::Builder::new()
                .name("pi-ext-exec".into())
                .spawn(move || {
                    let r = super::exec::run(&params, &cwd, &|| call.abort.is_aborted());
                    drop(call);
                    if let Some(to) = reply {
                        to.send(r);
                    }
                });
        }
        "sendUserMessage" => {
            let content = match user_content(&params["content"]) {
                Some(c) => c,
                None => return answer(Err("sendUserMessage: \"content\" must be text or content blocks".into())),
            };
            let message = Message::User(UserMessage {
                content,
                timestamp: now_ms(),
                extra: Extra::new(),
            });
            let deliver = params["options"]["deliverAs"].as_str();
            match deliver_now(host, message, deliver) {
                Ok(None) => answer(Ok(Value::Null)),
                Ok(Some(message)) => queue(host, Action::Prompt(Box::new(message)), reply),
                Err(e) => answer(Err(e)),
            }
        }
        "sendMessage" => {
            let m = &params["message"];
            // Kept as sent: a string stays a string in the session entry and events, as in pi.
            let content = match &m["content"] {
                Value::String(s) => Some(UserContent::Text(s.clone())),
                other => user_content(other),
            };
            let Some(content) = content else {
                return answer(Err("sendMessage: \"message.content\" must be text or content blocks".into()));
            };
            let opts = &params["options"];
            let deliver = opts["deliverAs"].as_str();
            if host.is_running() && deliver != Some("nextTurn") {
                // The model sees it as a user message, text as a block (as pi converts it).
                let content = match content {
                    UserContent::Text(s) => UserContent::Blocks(vec![Content::text(s)]),
                    blocks => blocks,
                };
                let message = Message::User(UserMessage {
                    content,
                    timestamp: now_ms(),
                    extra: Extra::new(),
                });
                let _ = deliver_now(host, message, Some(deliver.unwrap_or("steer")));
                return answer(Ok(Value::Null));
            }
            queue(
                host,
                Action::CustomMessage {
                    custom_type: m["customType"].as_str().unwrap_or("extension").to_string(),
                    content,
                    display: m["display"].as_bool().unwrap_or(true),
                    details: m.get("details").filter(|d| !d.is_null()).cloned(),
                    trigger_turn: opts["triggerTurn"].as_bool().unwrap_or(false),
                },
                reply,
            );
        }
        "appendEntry" => match str_param("customType") {
            Some(custom_type) => queue(
                host,
                Action::AppendEntry {
                    custom_type,
                    data: params.get("data").filter(|d| !d.is_null()).cloned(),
                },
                reply,
            ),
            None => answer(Err("appendEntry: missing \"customType\"".into())),
        },
        "setModel" => match (str_param("provider"), str_param("modelId")) {
            (Some(provider), Some(model_id)) => {
                queue(host, Action::SetModel { provider, model_id }, reply)
            }
            _ => answer(Err("setModel: needs \"provider\" and \"modelId\"".into())),
        },
        "setThinkingLevel" => match str_param("level") {
            Some(l) => queue(host, Action::SetThinkingLevel(l), reply),
            None => answer(Err("setThinkingLevel: missing \"level\"".into())),
        },
        "setActiveTools" => match params["names"].as_array() {
            Some(names) => queue(
                host,
                Action::SetActiveTools(
                    names.iter().filter_map(|n| n.as_str().map(str::to_string)).collect(),
                ),
                reply,
            ),
            None => answer(Err("setActiveTools: \"names\" must be an array".into())),
        },
        "setSessionName" => match str_param("name") {
            Some(n) => queue(host, Action::SetSessionName(n), reply),
            None => answer(Err("setSessionName: missing \"name\"".into())),
        },
        "compact" => queue(host, Action::Compact(str_param("customInstructions")), reply),
        _ => answer(Err(format!("Unknown method: {method}"))),
    }
}

fn queue(host: &ExtensionHost, action: Action, reply: Option<ReplyTo>) {
    host.push_action(PendingAction { action, reply });
}

/// While a run is active, a message with `deliverAs` steer/followUp joins the run's queue at
/// once (`Ok(None)`). Otherwise it is handed back to become a prompt. pi refuses a user message
/// during a run without `deliverAs`.
fn deliver_now(
    host: &ExtensionHost,
    message: Message,
    deliver_as: Option<&str>,
) -> Result<Option<Message>, String> {
    if !host.is_running() {
        return Ok(Some(message));
    }
    let queues = host
        .queues
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    match (deliver_as, queues) {
        (Some("steer"), Some((steer, _))) => steer.push(message),
        (Some("followUp"), Some((_, follow))) => follow.push(message),
        (Some("nextTurn"), _) => return Ok(Some(message)),
        _ => {
            return Err("Agent is already processing. Specify deliverAs ('steer' or 'followUp') to queue the message.".into())
        }
    }
    Ok(None)
}

fn user_content(v: &Value) -> Option<UserContent> {
    match v {
        Value::String(s) => Some(UserContent::Blocks(vec![Content::text(s.clone())])),
        Value::Array(_) => serde_json::from_value::<Vec<Content>>(v.clone())
            .ok()
            .map(UserContent::Blocks),
        _ => None,
    }
}

fn timeout_of(p: &Value) -> Option<Duration> {
    p["timeout"].as_u64().map(Duration::from_millis)
}

fn dialog_of(method: &str, p: &Value) -> Option<Dialog> {
    let title = p["title"].as_str()?.to_string();
    let opt = |k: &str| p[k].as_str().map(str::to_string);
    Some(match method {
        "ui.select" => Dialog::Select {
            title,
            options: p["options"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|o| o.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            timeout: timeout_of(p),
        },
        "ui.confirm" => Dialog::Confirm {
            title,
            message: opt("message").unwrap_or_default(),
            timeout: timeout_of(p),
        },
        "ui.input" => Dialog::Input {
            title,
            placeholder: opt("placeholder"),
            timeout: timeout_of(p),
        },
        _ => Dialog::Editor {
            title,
            prefill: opt("prefill"),
        },
    })
}

/// `ui.custom`: the extension's component in place of the editor or as an overlay, until it is
/// done; answered then (or at once without a UI).
fn custom_view(host: &Arc<ExtensionHost>, ext: &Arc<Extension>, p: &Value, reply: Option<ReplyTo>) {
    let Some(id) = p["component"].as_u64() else {
        if let Some(to) = reply {
            to.send(Err("ui.custom: missing \"component\"".into()));
        }
        return;
    };
    let dialog = Dialog::Custom {
        handle: ComponentHandle {
            ext: Arc::clone(ext),
            id,
        },
        lines: lines_of(&p["lines"]).unwrap_or_default(),
        overlay: p["overlay"] == true,
        width: p["overlayOptions"]["width"].as_u64().map(|w| w as usize),
    };
    let asking = Arc::clone(host);
    let _ = std::thread::Builder::new()
        .name("pi-ext-custom".into())
        .spawn(move || {
            let abort = asking.session_abort();
            let _ = asking.ui().dialog(dialog, &abort);
            if let Some(to) = reply {
                to.send(Ok(Value::Null));
            }
        });
}

fn lines_of(v: &Value) -> Option<Vec<String>> {
    v.as_array().map(|a| {
        a.iter()
            .map(|l| {
                l.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| l.to_string())
            })
            .collect()
    })
}

fn notice_of(ext: &Arc<Extension>, method: &str, p: &Value) -> Option<Notice> {
    let s = |k: &str| p[k].as_str().map(str::to_string);
    let handle = |id: u64| ComponentHandle {
        ext: Arc::clone(ext),
        id,
    };
    Some(match method {
        "ui.render" => Notice::ComponentLines {
            handle: handle(p["component"].as_u64()?),
            lines: lines_of(&p["lines"]).unwrap_or_default(),
        },
        "ui.customDone" => Notice::CustomDone(handle(p["component"].as_u64()?)),
        "ui.setFooter" => Notice::Footer(lines_of(&p["lines"])),
        "ui.setHeader" => Notice::Header(lines_of(&p["lines"])),
        "ui.setEditorComponent" => Notice::EditorComponent(
            p["component"]
                .as_u64()
                .map(|id| (handle(id), lines_of(&p["lines"]).unwrap_or_default())),
        ),
        "ui.editorSubmit" => Notice::EditorSubmit(s("text")?),
        "ui.editorKey" => Notice::EditorKey(s("data")?),
        "ui.pasteToEditor" => Notice::PasteToEditor(s("text")?),
        "ui.setWorkingMessage" => Notice::WorkingMessage(s("message")),
        "ui.setWorkingVisible" => Notice::WorkingVisible(p["visible"] != false),
        "ui.setHiddenThinkingLabel" => Notice::HiddenThinkingLabel(s("label")),
        "ui.setToolsExpanded" => Notice::ToolsExpanded(p["expanded"] == true),
        "ui.notify" => Notice::Notify {
            message: s("message")?,
            kind: s("type"),
        },
        "ui.setStatus" => Notice::Status {
            key: s("key")?,
            text: s("text"),
        },
        "ui.setWidget" => Notice::Widget {
            key: s("key")?,
            lines: lines_of(&p["lines"]),
            placement: match p["placement"].as_str() {
                Some("belowEditor") => Some(WidgetPlacement::BelowEditor),
                Some("aboveEditor") => Some(WidgetPlacement::AboveEditor),
                _ => None,
            },
        },
        "ui.setTitle" => Notice::Title(s("title")?),
        "ui.setEditorText" => Notice::EditorText(s("text")?),
        // Newer UI calls this pi does not draw (themes, working indicators) change nothing.
        _ => return None,
    })
}

impl ExtensionHost {
    pub fn view_snapshot(&self) -> SessionView {
        self.view.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
