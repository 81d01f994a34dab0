//! What an extension sends on its own, handled on the host's dispatcher thread: calls
//! (`{"type":"call","method":…}` lines), the `error` lines it reports, registration updates,
//! stderr lines and its death. UI calls go to the mode's `ExtensionUi` (dialogs on their own thread, so one
//! extension waiting for the user never stalls another's messages); getters answer from a
//! `SessionView` the harness keeps current; calls that change the session become `Action`s the
//! harness applies at its next safe point and answers then.

use std::sync::{Arc, Weak};

use crossbeam_channel::Receiver;
use serde_json::{json, Value};

use super::call_kind::{Call, DeliverAs, ForkPosition, Placement};
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
    let reply = msg.get("id").filter(|id| !id.is_null()).map(|id| ReplyTo {
        extension: Arc::clone(ext),
        id: id.clone(),
    });
    let call = match Call::parse(&method, msg.get("params")) {
        Ok(call) => call,
        Err(e) => {
            match &reply {
                Some(to) => to.send(Err(e.to_string())),
                // Nobody waits for the answer of a notification: the user hears of it instead.
                None => host.report(&ext.display_path(), &method, e.to_string()),
            }
            return;
        }
    };
    let answer = |r: Result<Value, String>| {
        if let Some(to) = &reply {
            to.send(r);
        }
    };
    let notice = |n: Notice| {
        host.ui().notice(n);
        answer(Ok(Value::Null));
    };
    let handle = |id: u64| ComponentHandle {
        ext: Arc::clone(ext),
        id,
    };
    let mode_request = |r: ModeRequest| {
        host.push_mode_request(r);
        answer(Ok(json!({"cancelled": false})));
    };
    let view = || host.view_snapshot();
    match call {
        Call::Select(p) => dialog(
            host,
            ext,
            &method,
            Dialog::Select {
                title: p.title,
                options: p.options,
                timeout: p.timeout.and_then(|t| t.duration()),
            },
            reply,
        ),
        Call::Confirm(p) => dialog(
            host,
            ext,
            &method,
            Dialog::Confirm {
                title: p.title,
                message: p.message.unwrap_or_default(),
                timeout: p.timeout.and_then(|t| t.duration()),
            },
            reply,
        ),
        Call::Input(p) => dialog(
            host,
            ext,
            &method,
            Dialog::Input {
                title: p.title,
                placeholder: p.placeholder,
                timeout: p.timeout.and_then(|t| t.duration()),
            },
            reply,
        ),
        Call::Editor(p) => dialog(
            host,
            ext,
            &method,
            Dialog::Editor {
                title: p.title,
                prefill: p.prefill,
            },
            reply,
        ),
        Call::Custom(p) => custom_view(
            host,
            Dialog::Custom {
                handle: handle(p.component),
                lines: p.lines.unwrap_or_default().0,
                overlay: p.overlay == Some(true),
                width: p
                    .overlay_options
                    .as_ref()
                    .and_then(|o| o["width"].as_u64())
                    .map(|w| w as usize),
            },
            reply,
        ),
        Call::Render(p) => notice(Notice::ComponentLines {
            handle: handle(p.component),
            lines: p.lines.unwrap_or_default().0,
        }),
        Call::CustomDone(p) => notice(Notice::CustomDone(handle(p.component))),
        Call::SetFooter(p) => notice(Notice::Footer(p.lines.map(|l| l.0))),
        Call::SetHeader(p) => notice(Notice::Header(p.lines.map(|l| l.0))),
        Call::SetEditorComponent(p) => notice(Notice::EditorComponent(
            p.component
                .map(|id| (handle(id), p.lines.unwrap_or_default().0)),
        )),
        Call::EditorSubmit(p) => notice(Notice::EditorSubmit(p.text)),
        Call::EditorKey(p) => notice(Notice::EditorKey(p.data)),
        Call::PasteToEditor(p) => notice(Notice::PasteToEditor(p.text)),
        Call::SetEditorText(p) => notice(Notice::EditorText(p.text)),
        Call::SetWorkingMessage(p) => notice(Notice::WorkingMessage(p.message)),
        Call::SetWorkingVisible(p) => notice(Notice::WorkingVisible(p.visible != Some(false))),
        Call::SetHiddenThinkingLabel(p) => notice(Notice::HiddenThinkingLabel(p.label)),
        Call::SetToolsExpanded(p) => notice(Notice::ToolsExpanded(p.expanded == Some(true))),
        Call::Notify(p) => notice(Notice::Notify {
            message: p.message,
            kind: p.kind,
        }),
        Call::SetStatus(p) => notice(Notice::Status {
            key: p.key,
            text: p.text,
        }),
        Call::SetWidget(p) => notice(Notice::Widget {
            key: p.key,
            lines: p.lines.map(|l| l.0),
            placement: p.placement.map(|pl| match pl {
                Placement::AboveEditor => WidgetPlacement::AboveEditor,
                Placement::BelowEditor => WidgetPlacement::BelowEditor,
            }),
        }),
        Call::SetTitle(p) => notice(Notice::Title(p.title)),
        Call::SetWorkingIndicator(_) | Call::SetTheme(_) | Call::Loading(_) => {
            answer(Ok(Value::Null))
        }
        Call::RunTool(p) => super::services::run_builtin_tool(host, ext, &msg, p),
        Call::AiStream(params) => super::services::ai_stream(host, ext, &msg, params),
        Call::ModelAuth(p) => answer(super::services::model_auth(host, &p)),
        Call::ModelsClassify(_) | Call::ModelsGenerateImages(_) => {
            super::services::non_chat_call(host, ext, &msg)
        }
        Call::Exec(p) => {
            let cwd = host.cwd.clone();
            // Stopped by the extension's `cancel` line for this call, or by its death.
            let call = ext.process.begin_call(msg.get("id"));
            // Runs on its own thread: a long command must not hold up this extension's
            // other messages.
            let _ = std::thread::Builder::new()
                .name("pi-ext-exec".into())
                .spawn(move || {
                    let r = super::exec::run(&p, &cwd, &|| call.abort.is_aborted());
                    drop(call);
                    if let Some(to) = reply {
                        to.send(r);
                    }
                });
        }
        Call::SetLabel(p) => queue(
            host,
            Action::SetLabel {
                entry_id: p.entry_id,
                label: p.label,
            },
            reply,
        ),
        Call::WaitForIdle(_) => queue(host, Action::WaitForIdle, reply),
        Call::NewSession(_) => mode_request(ModeRequest::NewSession),
        Call::Fork(p) => mode_request(ModeRequest::Fork {
            entry_id: p.entry_id,
            at: p.position == Some(ForkPosition::At),
        }),
        Call::SwitchSession(p) => mode_request(ModeRequest::SwitchSession(p.session_path)),
        Call::NavigateTree(p) => mode_request(ModeRequest::NavigateTree {
            target_id: p.target_id,
            summarize: p.summarize == Some(true),
        }),
        Call::Reload(_) => mode_request(ModeRequest::Reload),
        Call::Shutdown(_) => mode_request(ModeRequest::Shutdown),
        Call::GetFlag(p) => answer(Ok(p
            .name
            .and_then(|n| host.flag_value(&n))
            .unwrap_or(Value::Null))),
        // MCP servers for the session; the MCP manager follows the registry's changes.
        Call::RegisterMcpServer(p) => {
            let servers = host.mcp_servers();
            let result = servers.register(&ext.display_path(), &p.name, &p.config);
            if result.is_ok() {
                host.emit("mcp_servers_change", json!({ "servers": servers.to_json() }));
            }
            answer(result.map(|_| Value::Null))
        }
        Call::UnregisterMcpServer(p) => {
            let servers = host.mcp_servers();
            servers.unregister(&ext.display_path(), &p.name);
            host.emit("mcp_servers_change", json!({ "servers": servers.to_json() }));
            answer(Ok(Value::Null))
        }
        Call::GetMcpServers(_) => answer(Ok(host.mcp_servers().to_json())),
        Call::GetActiveTools(_) => answer(Ok(json!(view().active_tools))),
        Call::GetAllTools(_) => answer(Ok(json!(view().all_tools))),
        Call::GetThinkingLevel(_) => answer(Ok(json!(view().thinking_level))),
        Call::GetSessionName(_) => answer(Ok(json!(view().session_name))),
        Call::GetModel(_) => answer(Ok(view().model)),
        Call::GetSystemPrompt(_) => answer(Ok(json!(view().system_prompt))),
        Call::IsIdle(_) => answer(Ok(json!(!host.is_running()))),
        Call::GetCommands(_) => answer(Ok(Value::Array(
            host.commands()
                .into_iter()
                .map(|c| json!({"name": c.name, "description": c.description, "source": "extension"}))
                .collect(),
        ))),
        Call::Abort(_) => {
            host.session_abort().abort();
            answer(Ok(Value::Null));
        }
        Call::SendUserMessage(p) => {
            let Some(content) = user_content(&p.content) else {
                return answer(Err(
                    "sendUserMessage: \"content\" must be text or content blocks".into(),
                ));
            };
            let message = Message::User(UserMessage {
                content,
                timestamp: now_ms(),
                extra: Extra::new(),
            });
            let deliver = p.options.unwrap_or_default().deliver_as;
            match deliver_now(host, message, deliver) {
                Ok(None) => answer(Ok(Value::Null)),
                Ok(Some(message)) => queue(host, Action::Prompt(Box::new(message)), reply),
                Err(e) => answer(Err(e)),
            }
        }
        Call::SendMessage(p) => {
            let m = p.message;
            // Kept as sent: a string stays a string in the session entry and events, as in pi.
            let content = match &m.content {
                Value::String(s) => Some(UserContent::Text(s.clone())),
                other => user_content(other),
            };
            let Some(content) = content else {
                return answer(Err(
                    "sendMessage: \"message.content\" must be text or content blocks".into(),
                ));
            };
            let opts = p.options.unwrap_or_default();
            if host.is_running() && opts.deliver_as != Some(DeliverAs::NextTurn) {
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
                let deliver = opts.deliver_as.unwrap_or(DeliverAs::Steer);
                let _ = deliver_now(host, message, Some(deliver));
                return answer(Ok(Value::Null));
            }
            queue(
                host,
                Action::CustomMessage {
                    custom_type: m.custom_type.unwrap_or_else(|| "extension".to_string()),
                    content,
                    display: m.display.unwrap_or(true),
                    details: m.details,
                    trigger_turn: opts.trigger_turn.unwrap_or(false),
                },
                reply,
            );
        }
        Call::AppendEntry(p) => queue(
            host,
            Action::AppendEntry {
                custom_type: p.custom_type,
                data: p.data,
            },
            reply,
        ),
        Call::SetModel(p) => queue(
            host,
            Action::SetModel {
                provider: p.provider,
                model_id: p.model_id,
            },
            reply,
        ),
        Call::SetThinkingLevel(p) => queue(host, Action::SetThinkingLevel(p.level), reply),
        Call::SetActiveTools(p) => queue(host, Action::SetActiveTools(p.names), reply),
        Call::SetSessionName(p) => queue(host, Action::SetSessionName(p.name), reply),
        Call::Compact(p) => queue(host, Action::Compact(p.custom_instructions), reply),
    }
}

/// A dialog can wait for minutes; it gets its own thread.
fn dialog(
    host: &Arc<ExtensionHost>,
    ext: &Arc<Extension>,
    method: &str,
    dialog: Dialog,
    reply: Option<ReplyTo>,
) {
    let asking = Arc::clone(host);
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
        host.report(
            &ext.display_path(),
            method,
            "could not start a dialog thread",
        );
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
    deliver_as: Option<DeliverAs>,
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
        (Some(DeliverAs::Steer), Some((steer, _))) => steer.push(message),
        (Some(DeliverAs::FollowUp), Some((_, follow))) => follow.push(message),
        (Some(DeliverAs::NextTurn), _) => return Ok(Some(message)),
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

/// `ui.custom`: the extension's component in place of the editor or as an overlay, until it is
/// done; answered then (or at once without a UI).
fn custom_view(host: &Arc<ExtensionHost>, dialog: Dialog, reply: Option<ReplyTo>) {
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

impl ExtensionHost {
    pub fn view_snapshot(&self) -> SessionView {
        self.view.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
