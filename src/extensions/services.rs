//! What the session lends its extensions beyond events: pi's built-in tools for the tool
//! factories extensions import (`tools.run`), model calls through pi's own providers and
//! credentials (`ai.stream`, `models.auth`), and the other way round, models whose replies an
//! extension streams itself (`registerProvider` with `streamSimple`): a stream function that
//! sends `provider_stream` to the extension and turns its `stream_event` lines into pi's
//! assistant events.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};

use super::call_kind::{ModelRef, RunToolParams};
use super::extension::Extension;
use super::host::{ExtensionHost, HostServices};
use super::process::RequestError;
use super::requests::ReplyTo;
use crate::agent::{StreamFn, ToolContext, ToolOutput};
use crate::ai::{
    assistant_json, spawn_stream, Abort, AssistantEvent, Context, Message, Model, StopReason,
    StreamOptions, ThinkingLevel, ToolSpec, Usage,
};

fn output_json(out: &ToolOutput) -> Value {
    json!({"content": out.content, "details": out.details})
}

/// `tools.run {name, cwd, toolCallId, params}`: one of pi's built-in tools, as the extension's
/// `createReadTool(cwd)` etc. call it; partial results stream back as `update` lines.
pub(super) fn run_builtin_tool(
    host: &Arc<ExtensionHost>,
    ext: &Arc<Extension>,
    msg: &Value,
    params: RunToolParams,
) {
    let name = params.name;
    let reply = ReplyTo::of(ext, msg);
    let Some(tool) = host
        .services()
        .builtin_tools
        .into_iter()
        .find(|t| t.name() == name)
    else {
        return reply.send(Err(format!("Unknown built-in tool: {name}")));
    };
    let cwd = params
        .cwd
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| host.cwd.clone());
    let call_id = params.tool_call_id.unwrap_or_else(|| "call".to_string());
    let args = params.params;
    let gate = host.services().gate;
    let call = ext.process.begin_call(msg.get("id"));
    let ext = Arc::clone(ext);
    // A tool may run for minutes; it gets its own thread.
    let _ = std::thread::Builder::new()
        .name("pi-ext-tool".into())
        .spawn(move || {
            // The call stops when the extension cancels it (its tool was aborted) or dies.
            let abort = call.abort.clone();
            let id = reply.id.clone();
            let on_update = |partial: ToolOutput| {
                ext.process
                    .send(json!({"type": "update", "id": id, "result": output_json(&partial)}));
            };
            let ctx = ToolContext {
                cwd,
                abort,
                on_update: &on_update,
                nested: None,
            };
            let as_call = crate::ai::ToolCall {
                id: call_id.clone(),
                name: tool.name().to_string(),
                arguments: args.clone(),
                thought_signature: None,
            };
            let result = crate::agent::pass_gate(gate.as_ref(), &as_call, &args, &ctx.abort)
                .and_then(|()| tool.execute(&call_id, args, &ctx))
                .map(|o| output_json(&o));
            drop(call);
            reply.send(result);
        });
}

fn thinking_of(v: &Value) -> Option<ThinkingLevel> {
    v.as_str()
        .and_then(ThinkingLevel::parse)
        .filter(|t| *t != ThinkingLevel::Off)
}

/// A pi-shaped context (`{systemPrompt, messages, tools}`) as ours.
fn context_of(v: &Value) -> Result<Context, String> {
    let messages: Vec<Message> = serde_json::from_value(v["messages"].clone())
        .map_err(|e| format!("invalid messages: {e}"))?;
    let tools: Vec<ToolSpec> = match &v["tools"] {
        Value::Null => Vec::new(),
        t => serde_json::from_value(t.clone()).map_err(|e| format!("invalid tools: {e}"))?,
    };
    Ok(Context {
        system_prompt: v["systemPrompt"].as_str().map(str::to_string),
        messages,
        tools,
    })
}

/// The model an extension names: pi's own by provider and id (with its credentials), else the
/// one it describes in full (`baseUrl`, `api`).
fn resolve_model(services: &HostServices, v: &Value) -> Result<(Model, StreamOptions), String> {
    let provider = v["provider"].as_str().unwrap_or_default();
    let id = v["id"].as_str().unwrap_or_default();
    let lookup = services
        .lookup
        .as_ref()
        .map(|l| l(provider, id))
        .unwrap_or_else(|| Err(format!("Model not found: {provider}/{id}")));
    match lookup {
        Ok((mut model, (api_key, headers))) => {
            if let Some(api) = v["api"].as_str().filter(|a| *a != model.api) {
                model.api = api.to_string();
            }
            Ok((
                model,
                StreamOptions {
                    api_key,
                    headers,
                    ..Default::default()
                },
            ))
        }
        Err(e) => match serde_json::from_value::<Model>(v.clone()) {
            Ok(model) => Ok((model, StreamOptions::default())),
            Err(_) => Err(e),
        },
    }
}

/// `ai.stream {model, context, options}`: a model call through pi's providers; each event goes
/// back as an `update` line and the final message is the answer.
pub(super) fn ai_stream(
    host: &Arc<ExtensionHost>,
    ext: &Arc<Extension>,
    msg: &Value,
    params: Value,
) {
    let reply = ReplyTo::of(ext, msg);
    let services = host.services();
    let Some(stream) = services.stream.clone() else {
        return reply.send(Err("model calls are not available in this mode".into()));
    };
    let (model, mut options) = match resolve_model(&services, &params["model"]) {
        Ok(m) => m,
        Err(e) => return reply.send(Err(e)),
    };
    let context = match context_of(&params["context"]) {
        Ok(c) => c,
        Err(e) => return reply.send(Err(e)),
    };
    let o = &params["options"];
    if let Some(k) = o["apiKey"].as_str() {
        options.api_key = k.to_string();
    }
    options.max_tokens = o["maxTokens"].as_u64();
    options.temperature = o["temperature"].as_f64();
    options.reasoning = thinking_of(&o["reasoning"]);
    let call = ext.process.begin_call(msg.get("id"));
    let ext = Arc::clone(ext);
    let _ = std::thread::Builder::new()
        .name("pi-ext-ai".into())
        .spawn(move || {
            let rx = stream(&model, &context, &options, call.abort.clone());
            let mut last = None;
            // pi-ai's events carry the message so far (`partial`); ours carry deltas, so the
            // message is rebuilt here for the extension.
            let mut partial: Option<crate::ai::stream::MessageBuilder> = None;
            for ev in rx {
                let mut event = ev.to_json();
                match &ev {
                    AssistantEvent::Start { partial: p } => {
                        partial = Some(crate::ai::stream::MessageBuilder::new(p.clone()));
                        event["partial"] = assistant_json(p);
                    }
                    AssistantEvent::Done { .. } | AssistantEvent::Error { .. } => {}
                    _ => {
                        let b = partial.get_or_insert_with(|| {
                            crate::ai::stream::MessageBuilder::new(
                                crate::ai::AssistantMessage::empty(&model),
                            )
                        });
                        b.apply(&ev);
                        if matches!(ev, AssistantEvent::Meta { .. }) {
                            continue;
                        }
                        event["partial"] = assistant_json(&b.snapshot());
                    }
                }
                ext.process
                    .send(json!({"type": "update", "id": reply.id, "result": event}));
                match ev {
                    AssistantEvent::Done { message, .. } => last = Some(message),
                    AssistantEvent::Error { error, .. } => last = Some(error),
                    _ => {}
                }
            }
            drop(call);
            reply.send(
                last.map(|m| assistant_json(&m))
                    .ok_or_else(|| "the stream ended without a reply".to_string()),
            );
        });
}

/// `models.generateImages` / `models.classify {provider, id, context}`: a non-chat call with the
/// session's credentials, the model found by its provider and id. Provider errors are in the
/// result; the call stops when the extension cancels it.
pub(super) fn non_chat_call(host: &Arc<ExtensionHost>, ext: &Arc<Extension>, msg: &Value) {
    let reply = ReplyTo::of(ext, msg);
    let Some(models) = host.services().models else {
        return reply.send(Err("models are not available in this mode".into()));
    };
    let images = msg["method"] == "models.generateImages";
    let params = msg["params"].clone();
    let kind = if images { "image" } else { "classifier" };
    let provider = params["provider"].as_str().unwrap_or_default();
    let id = params["id"].as_str().unwrap_or_default();
    let Some(model) = models.resolve(kind, provider, id) else {
        return reply.send(Err(format!("Unknown {kind} model \"{provider}/{id}\"")));
    };
    let call = ext.process.begin_call(msg.get("id"));
    let _ = std::thread::Builder::new()
        .name("pi-ext-models".into())
        .spawn(move || {
            let abort = call.abort.clone();
            let context = &params["context"];
            let result = if images {
                let input: Vec<_> = context["input"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(crate::ai::images::OutputBlock::from_json)
                    .collect();
                models.generate_images(&model, &input, &abort).to_json()
            } else {
                models.classify(&model, context, &abort).to_json()
            };
            drop(call);
            reply.send(Ok(result));
        });
}

/// `models.auth {provider, modelId}`: the key and headers pi would send.
pub(super) fn model_auth(host: &ExtensionHost, model: &ModelRef) -> Result<Value, String> {
    let services = host.services();
    let (provider, id) = (model.provider.as_str(), model.model_id.as_str());
    let lookup = services
        .lookup
        .ok_or("models are not available in this mode")?;
    let (_, (api_key, headers)) = lookup(provider, id)?;
    let headers: serde_json::Map<String, Value> = headers
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    Ok(json!({"apiKey": api_key, "headers": headers}))
}

// ---- models an extension streams ------------------------------------------------------------

impl ExtensionHost {
    /// The extension that streams replies for `model` (a provider it registered with
    /// `streamSimple`), if any.
    pub fn streaming_extension(&self, model: &Model) -> Option<Arc<Extension>> {
        self.active()
            .find(|e| {
                e.registration().providers.iter().any(|p| {
                    p.stream
                        && (p.name == model.provider
                            || p.config["api"].as_str() == Some(model.api.as_str()))
                })
            })
            .cloned()
    }

    /// The model providers extensions registered, as `models.json` would list them.
    pub fn provider_configs(&self) -> Vec<(String, Value)> {
        self.extensions
            .iter()
            .flat_map(|e| {
                e.registration()
                    .providers
                    .iter()
                    .map(|p| (p.name.clone(), p.config.clone()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// `fallback`, except for models an extension streams itself.
    pub fn stream_fn(self: &Arc<Self>, fallback: StreamFn) -> StreamFn {
        let host = Arc::downgrade(self);
        Arc::new(move |model, context, options, abort| {
            match host.upgrade().and_then(|h| h.streaming_extension(model)) {
                Some(ext) => provider_stream(ext, model, context, options, abort),
                None => match host.upgrade() {
                    // The body goes through extensions' `before_provider_request` first.
                    Some(h) if h.has_subscribers("before_provider_request") => {
                        let mut options = options.clone();
                        let hook_abort = abort.clone();
                        options.on_payload = Some(crate::ai::PayloadHook(Arc::new(move |body| {
                            h.before_provider_request(body, &hook_abort)
                        })));
                        fallback(model, context, &options, abort)
                    }
                    _ => fallback(model, context, options, abort),
                },
            }
        })
    }
}

fn provider_stream(
    ext: Arc<Extension>,
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
) -> crossbeam_channel::Receiver<AssistantEvent> {
    let request = json!({
        "type": "provider_stream",
        "model": model,
        "context": {
            "systemPrompt": context.system_prompt,
            "messages": context.messages,
            "tools": context.tools,
        },
        "options": {
            "apiKey": options.api_key,
            "maxTokens": options.max_tokens,
            "temperature": options.temperature,
            "reasoning": options.reasoning.map(|r| r.as_str()),
            "sessionId": options.session_id,
        },
    });
    spawn_stream(model, abort.clone(), move |w| {
        let id = ext.process.next_id();
        let mut msg = request;
        msg["id"] = id.into();
        // Extension content indexes → ours.
        let mut blocks: HashMap<u64, usize> = HashMap::new();
        let mut failure = None;
        let mut on_event = |v: Value| {
            let ev = &v["event"];
            let index = ev["contentIndex"].as_u64().unwrap_or(0);
            match ev["type"].as_str().unwrap_or_default() {
                "start" => w.start(),
                "text_start" => {
                    blocks.insert(index, w.text_start());
                }
                "text_delta" => {
                    let i = *blocks.entry(index).or_insert_with(|| w.text_start());
                    w.text_delta(i, ev["delta"].as_str().unwrap_or_default());
                }
                "thinking_start" => {
                    blocks.insert(index, w.thinking_start());
                }
                "thinking_delta" => {
                    let i = *blocks.entry(index).or_insert_with(|| w.thinking_start());
                    w.thinking_delta(i, ev["delta"].as_str().unwrap_or_default());
                }
                "toolcall_start" => {
                    let block = &ev["partial"]["content"][index as usize];
                    let i = w.toolcall_start(
                        block["id"].as_str().unwrap_or_default(),
                        block["name"].as_str().unwrap_or_default(),
                    );
                    blocks.insert(index, i);
                }
                "toolcall_delta" => {
                    if let Some(i) = blocks.get(&index) {
                        w.toolcall_delta(*i, ev["delta"].as_str().unwrap_or_default());
                    }
                }
                "toolcall_end" => {
                    if let Some(i) = blocks.get(&index) {
                        w.toolcall_set_arguments(*i, ev["toolCall"]["arguments"].clone());
                        w.end_block(*i);
                    }
                }
                "text_end" | "thinking_end" => {
                    if let Some(i) = blocks.get(&index) {
                        w.end_block(*i);
                    }
                }
                "done" => finish_from(w, &ev["message"]),
                "error" => {
                    failure = Some(
                        ev["error"]["errorMessage"]
                            .as_str()
                            .unwrap_or("the provider failed")
                            .to_string(),
                    );
                }
                _ => {}
            }
        };
        let result = ext
            .process
            .request(id, msg, None, Some(&abort), &mut on_event);
        if let Some(e) = failure {
            return Err(e.into());
        }
        match result {
            Ok(_) => Ok(()),
            Err(RequestError::Aborted) => Ok(()),
            Err(e) => Err(format!("extension {}: {e}", ext.source.name()).into()),
        }
    })
}

/// Usage and stop reason from the extension's final message.
fn finish_from(w: &mut crate::ai::StreamWriter, message: &Value) {
    if let Ok(usage) = serde_json::from_value::<Usage>(message["usage"].clone()) {
        w.partial.usage = usage;
    }
    if let Ok(reason) = serde_json::from_value::<StopReason>(message["stopReason"].clone()) {
        w.partial.stop_reason = reason;
    }
}
