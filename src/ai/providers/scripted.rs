//! An in-process provider for unit tests: replies come from a queue registered per model id
//! (api `scripted`), are streamed in small chunks through the ordinary `StreamWriter`, and can
//! fail or stall on purpose. Never reachable from the CLI unless a test registers a model.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use crate::ai::ProviderError;

use crossbeam_channel::Receiver;
use serde_json::Value;

use crate::ai::stream::{spawn_stream, Abort};
use crate::ai::types::{AssistantEvent, Context, Model, StopReason, StreamOptions, Usage};

/// One scripted piece of an assistant reply.
#[derive(Debug, Clone)]
pub enum Block {
    Text(String),
    Thinking(String),
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
    },
}

/// One scripted reply.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub blocks: Vec<Block>,
    /// Fail with this message after streaming the blocks.
    pub error: Option<String>,
    /// Sleep this long between chunks (checked against abort).
    pub delay: Duration,
    pub usage: Usage,
}

impl Reply {
    pub fn text(s: &str) -> Self {
        Reply {
            blocks: vec![Block::Text(s.into())],
            ..Default::default()
        }
    }
    pub fn error(msg: &str) -> Self {
        Reply {
            error: Some(msg.into()),
            ..Default::default()
        }
    }
}

static QUEUES: Mutex<Option<HashMap<String, VecDeque<Reply>>>> = Mutex::new(None);

/// Queues `reply` for the next call to the scripted model `model_id`.
pub fn push_reply(model_id: &str, reply: Reply) {
    let mut q = QUEUES.lock().unwrap_or_else(|p| p.into_inner());
    q.get_or_insert_with(HashMap::new)
        .entry(model_id.to_string())
        .or_default()
        .push_back(reply);
}

fn next_reply(model_id: &str) -> Option<Reply> {
    let mut q = QUEUES.lock().unwrap_or_else(|p| p.into_inner());
    q.as_mut()?.get_mut(model_id)?.pop_front()
}

fn chunks(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(4).map(|c| c.iter().collect()).collect()
}

pub fn stream(
    model: &Model,
    _context: &Context,
    _options: &StreamOptions,
    abort: Abort,
) -> Receiver<AssistantEvent> {
    let reply = next_reply(&model.id);
    spawn_stream(model, abort, move |w| {
        let reply = reply.ok_or("scripted provider: no reply queued")?;
        let pause = |w: &crate::ai::StreamWriter| -> Result<(), ProviderError> {
            if !reply.delay.is_zero() {
                std::thread::sleep(reply.delay);
            }
            if w.abort.is_aborted() {
                return Err("Request was aborted".into());
            }
            Ok(())
        };
        w.start();
        for block in &reply.blocks {
            match block {
                Block::Text(t) => {
                    let i = w.text_start();
                    for c in chunks(t) {
                        pause(w)?;
                        w.text_delta(i, &c);
                    }
                    w.end_block(i);
                }
                Block::Thinking(t) => {
                    let i = w.thinking_start();
                    for c in chunks(t) {
                        pause(w)?;
                        w.thinking_delta(i, &c);
                    }
                    w.end_block(i);
                }
                Block::ToolCall {
                    id,
                    name,
                    arguments,
                } => {
                    let i = w.toolcall_start(id, name);
                    for c in chunks(&arguments.to_string()) {
                        pause(w)?;
                        w.toolcall_delta(i, &c);
                    }
                    w.end_block(i);
                    w.partial.stop_reason = StopReason::ToolUse;
                }
            }
        }
        w.partial.usage = reply.usage;
        match &reply.error {
            Some(e) => Err(e.clone().into()),
            None => Ok(()),
        }
    })
}
