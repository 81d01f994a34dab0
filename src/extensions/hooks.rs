//! The hooks with answers that change what the session does, chained across extensions in
//! load order the way pi chains its handlers: `input` (transforms chain, `handled` stops),
//! `before_agent_start` (system prompt chains, messages accumulate), `context` (messages
//! chain), `tool_call` (first block wins; arguments may be rewritten), `tool_result`
//! (overrides chain), `session_before_*` (first cancel wins), plus commands and tools.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::host::ExtensionHost;
use super::process::RequestError;
use super::tool::ExtensionTool;
use crate::agent::{Tool, ToolOutput};
use crate::ai::{Abort, Content, Message};

/// What the `input` hooks decided.
#[derive(Debug, Clone, PartialEq)]
pub enum InputOutcome {
    /// Go on with this text and these images (possibly transformed).
    Continue { text: String, images: Vec<Content> },
    /// An extension handled the input; nothing is sent to the model.
    Handled,
}

/// What the `before_agent_start` hooks returned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeAgentStart {
    /// Extension messages (`{customType, content, display, details}`) to add to the prompt.
    pub messages: Vec<Value>,
    pub system_prompt: Option<String>,
}

/// What the handlers of an actionable boundary proposed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Boundary {
    /// Draft session entries (`custom_message`, `custom`, …) to append, in order.
    pub entries: Vec<Value>,
    /// Whether to make one more model request.
    pub continue_run: bool,
}

/// How long the editor waits for an extension's argument completions.
const COMPLETION_TIMEOUT: Duration = Duration::from_millis(500);

/// How often a command wait looks after deferred work.
const COMMAND_POLL: Duration = Duration::from_millis(25);
/// The longest a finished command waits for the host to handle the calls sent before its
/// reply (they are handled in microseconds; the limit only guards against a stuck host).
const SETTLE_LIMIT: Duration = Duration::from_secs(2);

impl ExtensionHost {
    /// Every extension tool; the first registration of a name wins.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        for ext in &self.extensions {
            let specs = ext.registration().tools.clone();
            for spec in &specs {
                if out.iter().any(|t| t.name() == spec.name) {
                    // Said once, however often the tool set is rebuilt.
                    let key = format!("{}\0{}", ext.display_path(), spec.name);
                    if !self.note_once(key) {
                        continue;
                    }
                    self.report(
                        &ext.display_path(),
                        "load",
                        format!(
                            "tool \"{}\" is already registered by another extension",
                            spec.name
                        ),
                    );
                    continue;
                }
                out.push(Arc::new(ExtensionTool::new(Arc::clone(ext), spec.clone())));
            }
        }
        out
    }

    pub fn has_command(&self, name: &str) -> bool {
        self.commands().iter().any(|c| c.name == name)
    }

    /// Runs `/name args` if an extension registered `name`; returns false otherwise. While
    /// the command runs, `meanwhile` is called every few milliseconds so the caller can apply
    /// session changes the command asks for. Commands have no timeout (they may ask the user
    /// questions) but end when `abort` is raised or the extension dies.
    pub fn run_command(&self, text: &str, abort: &Abort, meanwhile: &mut dyn FnMut()) -> bool {
        let Some(rest) = text.strip_prefix('/') else {
            return false;
        };
        let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
        let Some(ext) = self
            .active()
            .find(|e| e.registration().commands.iter().any(|c| c.name == name))
            .cloned()
        else {
            return false;
        };
        let id = ext.process.next_id();
        let msg = json!({"type": "command", "id": id, "command": name, "args": args});
        self.run_request(&ext, id, msg, &format!("command:{name}"), abort, meanwhile);
        true
    }

    /// Runs the handler of the shortcut registered for `key` (`{"type":"shortcut"}`), as a
    /// command runs; returns false when no live extension registered that key.
    pub fn run_shortcut(&self, key: &str, abort: &Abort, meanwhile: &mut dyn FnMut()) -> bool {
        let Some(ext) = self
            .active()
            .find(|e| e.registration().shortcuts.iter().any(|s| s.key == key))
            .cloned()
        else {
            return false;
        };
        let id = ext.process.next_id();
        let msg = json!({"type": "shortcut", "id": id, "key": key});
        self.run_request(&ext, id, msg, &format!("shortcut:{key}"), abort, meanwhile);
        true
    }

    /// Sends a command or shortcut request and waits for its reply (no timeout), reporting a
    /// failure under `what`.
    fn run_request(
        &self,
        ext: &super::extension::Extension,
        id: u64,
        msg: Value,
        what: &str,
        abort: &Abort,
        meanwhile: &mut dyn FnMut(),
    ) {
        let event = what.split(':').next().unwrap_or(what);
        let rx = match ext.process.expect(id) {
            Ok(rx) => rx,
            Err(e) => {
                self.report(what, event, e.to_string());
                return;
            }
        };
        ext.process.send(msg);
        loop {
            match rx.recv_timeout(COMMAND_POLL) {
                Ok(super::process::Incoming::Reply(v)) => {
                    // Calls it made before replying are queued before the command is over.
                    ext.process.settle(SETTLE_LIMIT);
                    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
                        let e = e
                            .as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| e.to_string());
                        self.report(what, event, e);
                    }
                    break;
                }
                Ok(super::process::Incoming::Update(_)) => {}
                Ok(super::process::Incoming::Dead(reason)) => {
                    self.report(what, event, reason);
                    break;
                }
                Err(_) => {}
            }
            meanwhile();
            if abort.is_aborted() {
                ext.process.send(json!({"type": "cancel", "id": id}));
                break;
            }
        }
        meanwhile();
    }

    /// The extension's completions for `/command <prefix>` (`getArgumentCompletions`):
    /// `(value, label, description)`; nothing when it does not answer within a moment (the
    /// editor must not wait).
    pub fn complete_arguments(
        &self,
        command: &str,
        prefix: &str,
    ) -> Vec<(String, String, Option<String>)> {
        let Some(ext) = self
            .active()
            .find(|e| e.registration().commands.iter().any(|c| c.name == command))
            .cloned()
        else {
            return Vec::new();
        };
        let id = ext.process.next_id();
        let msg = json!({"type": "complete", "id": id, "command": command, "prefix": prefix});
        let Ok(v) = ext
            .process
            .request(id, msg, Some(COMPLETION_TIMEOUT), None, &mut |_| {})
        else {
            return Vec::new();
        };
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|item| {
                let value = item["value"].as_str()?.to_string();
                let label = item["label"].as_str().unwrap_or(&value).to_string();
                Some((
                    value,
                    label,
                    item["description"].as_str().map(str::to_string),
                ))
            })
            .collect()
    }

    /// `input`: may transform the text or handle it entirely.
    pub fn input(
        &self,
        text: &str,
        images: Vec<Content>,
        source: &str,
        abort: &Abort,
    ) -> InputOutcome {
        let mut text = text.to_string();
        let mut images = images;
        for ext in self.subscribers("input") {
            let data = json!({"text": text, "images": images, "source": source});
            let Ok(v) = self.ask(&ext, "input", data, Some(abort)) else {
                continue;
            };
            match v["action"].as_str() {
                Some("handled") => return InputOutcome::Handled,
                Some("transform") => {
                    if let Some(t) = v["text"].as_str() {
                        text = t.to_string();
                    }
                    if let Some(i) = v.get("images").filter(|i| i.is_array()) {
                        if let Ok(i) = serde_json::from_value(i.clone()) {
                            images = i;
                        }
                    }
                }
                _ => {}
            }
        }
        InputOutcome::Continue { text, images }
    }

    /// `before_agent_start`: may replace the system prompt and add messages to the prompt.
    /// `trigger` is pi 1.x's union: `{messageType: "user", prompt, images}` for a prompt, or
    /// `{messageType: "custom", message}` for a run an extension message started.
    pub fn before_agent_start(
        &self,
        trigger: Value,
        system_prompt: &str,
        abort: &Abort,
    ) -> BeforeAgentStart {
        let mut out = BeforeAgentStart::default();
        let mut current = system_prompt.to_string();
        for ext in self.subscribers("before_agent_start") {
            let mut data = trigger.clone();
            data["systemPrompt"] = Value::String(current.clone());
            let Ok(v) = self.ask(&ext, "before_agent_start", data, Some(abort)) else {
                continue;
            };
            if let Some(m) = v.get("message").filter(|m| m.is_object()) {
                out.messages.push(m.clone());
            }
            for m in v["messages"].as_array().into_iter().flatten() {
                if m.is_object() {
                    out.messages.push(m.clone());
                }
            }
            if let Some(s) = v["systemPrompt"].as_str() {
                current = s.to_string();
                out.system_prompt = Some(current.clone());
            }
        }
        out
    }

    /// `context`: may replace the messages sent to the model for this call.
    pub fn context(&self, messages: Vec<Message>, abort: &Abort) -> Vec<Message> {
        if !self.has_subscribers("context") {
            return messages;
        }
        let mut current = messages;
        for ext in self.subscribers("context") {
            let data = json!({"messages": current});
            let Ok(v) = self.ask(&ext, "context", data, Some(abort)) else {
                continue;
            };
            if let Some(m) = v.get("messages").filter(|m| m.is_array()) {
                match serde_json::from_value::<Vec<Message>>(m.clone()) {
                    Ok(m) => current = m,
                    Err(e) => self.report(
                        &ext.display_path(),
                        "context",
                        format!("invalid messages returned: {e}"),
                    ),
                }
            }
        }
        current
    }

    /// `tool_call`: `Some(reason)` blocks the call; extensions may rewrite `input` by
    /// answering with a new `input` object. A failing or silent extension blocks the call, as
    /// a throwing handler does in pi, so a permission gate never fails open.
    pub fn tool_call(
        &self,
        tool_name: &str,
        call_id: &str,
        input: &mut Value,
        abort: &Abort,
    ) -> Option<String> {
        for ext in self.subscribers("tool_call") {
            let data = json!({"toolName": tool_name, "toolCallId": call_id, "input": input});
            match self.ask(&ext, "tool_call", data, Some(abort)) {
                Ok(v) => {
                    if let Some(i) = v.get("input").filter(|i| i.is_object()) {
                        *input = i.clone();
                    }
                    if v["block"] == true {
                        return Some(v["reason"].as_str().unwrap_or("").to_string());
                    }
                }
                Err(RequestError::Aborted) => return Some("Tool execution was aborted".into()),
                Err(e) => {
                    return Some(format!(
                        "Extension {} failed, blocking execution: {e}",
                        ext.source.name()
                    ))
                }
            }
        }
        None
    }

    /// `tool_result`: may override the content, details and error flag.
    pub fn tool_result(
        &self,
        tool_name: &str,
        call_id: &str,
        input: &Value,
        output: &mut ToolOutput,
        is_error: &mut bool,
        abort: &Abort,
    ) {
        for ext in self.subscribers("tool_result") {
            let mut data = json!({"toolName": tool_name, "toolCallId": call_id, "input": input,
                "content": output.content, "details": output.details});
            // pi 1.6.0: the result for programmatic callers (MCP call results, read, bash).
            if let Some(sc) = &output.structured_content {
                data["structuredContent"] = sc.clone();
            }
            data["isError"] = json!(*is_error);
            let Ok(v) = self.ask(&ext, "tool_result", data, Some(abort)) else {
                continue;
            };
            if let Some(sc) = v.get("structuredContent").filter(|s| !s.is_null()) {
                output.structured_content = Some(sc.clone());
            }
            if let Some(c) = v.get("content").filter(|c| !c.is_null()) {
                // Structured content not replaced along with the content may no longer match.
                if v.get("structuredContent").is_none_or(Value::is_null) {
                    output.structured_content = None;
                }
                match serde_json::from_value::<Vec<Content>>(c.clone()) {
                    Ok(c) => output.content = c,
                    Err(e) => self.report(
                        &ext.display_path(),
                        "tool_result",
                        format!("invalid content returned: {e}"),
                    ),
                }
            }
            if let Some(d) = v.get("details").filter(|d| !d.is_null()) {
                output.details = Some(d.clone());
            }
            if let Some(b) = v["isError"].as_bool() {
                *is_error = b;
            }
        }
    }

    /// An actionable boundary (`turn_end`, `agent_before_settle`, protocol 2): each subscriber
    /// sees the entries and continuation proposed so far and may replace either; the final
    /// proposal comes back.
    pub fn boundary(&self, event: &str, mut data: Value, abort: &Abort) -> Boundary {
        let mut out = Boundary::default();
        for ext in self.subscribers(event) {
            data["entries"] = Value::Array(out.entries.clone());
            data["continue"] = Value::Bool(out.continue_run);
            if ext.protocol() < 2 {
                // A protocol-1 extension only hears of it (`turn_end` with the agent's events).
                if event != "turn_end" {
                    let id = ext.process.next_id();
                    ext.process.send(ext.event(id, event, data.clone()));
                }
                continue;
            }
            let Ok(v) = self.ask(&ext, event, data.clone(), Some(abort)) else {
                continue;
            };
            if let Some(entries) = v["entries"].as_array() {
                out.entries = entries.clone();
            }
            if let Some(c) = v["continue"].as_bool() {
                out.continue_run = c;
            }
        }
        out
    }

    /// `project_trust {cwd}`: the first extension answering `yes` or `no` decides; `None` when
    /// none does. The flag says whether to remember the decision.
    pub fn project_trust(&self, cwd: &str, abort: &Abort) -> Option<(bool, bool)> {
        for ext in self.subscribers("project_trust") {
            if let Ok(v) = self.ask(&ext, "project_trust", json!({ "cwd": cwd }), Some(abort)) {
                match v["trusted"].as_str() {
                    Some("yes") => return Some((true, v["remember"] == true)),
                    Some("no") => return Some((false, v["remember"] == true)),
                    _ => {}
                }
            }
        }
        None
    }

    /// `before_provider_request {payload}`: each handler may return a replacement body, which
    /// the next one sees; the last body is sent.
    pub fn before_provider_request(&self, payload: Value, abort: &Abort) -> Value {
        let mut current = payload;
        for ext in self.subscribers("before_provider_request") {
            if let Ok(v) = self.ask(
                &ext,
                "before_provider_request",
                json!({"payload": current}),
                Some(abort),
            ) {
                if !v.is_null() {
                    current = v;
                }
            }
        }
        current
    }

    /// `user_bash {command, excludeFromContext, cwd}` for a command the user typed (`!`, `!!`,
    /// RPC `bash`): `Ok(None)` when no handler took it (pi runs it locally), `Ok(Some(result))`
    /// with pi's `{output, exitCode, cancelled, truncated, fullOutputPath?}` when one ran it
    /// elsewhere or answered for it, `Err` when a handler failed (the command is not run). No
    /// time limit: the extension may be running the command; `abort` gives up on it.
    pub fn user_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        cwd: &str,
        abort: &Abort,
    ) -> Result<Option<Value>, String> {
        let data =
            json!({"command": command, "excludeFromContext": exclude_from_context, "cwd": cwd});
        for ext in self.subscribers("user_bash") {
            let id = ext.process.next_id();
            let msg = ext.event(id, "user_bash", data.clone());
            match ext.process.request(id, msg, None, Some(abort), &mut |_| {}) {
                Ok(Value::Null) => continue,
                Ok(v) => match v.get("result").filter(|r| r.is_object()) {
                    Some(r) if r["output"].is_string() => return Ok(Some(r.clone())),
                    _ => {
                        let e = format!("Invalid user_bash handler result: {v}");
                        self.report(&ext.display_path(), "user_bash", e.clone());
                        return Err(e);
                    }
                },
                Err(RequestError::Aborted) => return Err("Command cancelled".into()),
                Err(e) => {
                    let e = e.to_string();
                    self.report(&ext.display_path(), "user_bash", e.clone());
                    return Err(e);
                }
            }
        }
        Ok(None)
    }

    /// `session_before_compact` / `_fork` / `_switch` / `_tree`: the first answer with
    /// `cancel: true` wins and is returned.
    pub fn session_before(&self, event: &str, data: Value, abort: &Abort) -> Option<Value> {
        for ext in self.subscribers(event) {
            if let Ok(v) = self.ask(&ext, event, data.clone(), Some(abort)) {
                if v["cancel"] == true {
                    return Some(v);
                }
            }
        }
        None
    }
}
