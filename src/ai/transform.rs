//! Prepares a transcript for a particular model before any provider serializes it: images
//! become a placeholder for text-only models, thinking from another model is dropped and
//! signatures are cleared, tool-call ids are normalized per provider, failed assistant turns are dropped,
//! and tool calls left without a result (after an abort) get a synthetic error result.

use std::collections::{HashMap, HashSet};

use super::types::*;

const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";

fn replace_images(content: &[Content], placeholder: &str) -> Vec<Content> {
    let mut out: Vec<Content> = Vec::with_capacity(content.len());
    for block in content {
        if matches!(block, Content::Image(_)) {
            let prev_is_placeholder =
                matches!(out.last(), Some(Content::Text(t)) if t.text == placeholder);
            if !prev_is_placeholder {
                out.push(Content::text(placeholder));
            }
            continue;
        }
        out.push(block.clone());
    }
    out
}

/// `normalize_id` maps a foreign tool-call id to one the target API accepts.
pub fn transform_messages(
    messages: &[Message],
    model: &Model,
    normalize_id: Option<&dyn Fn(&str) -> String>,
) -> Vec<Message> {
    let images_ok = model.supports_images();
    let mut id_map: HashMap<String, String> = HashMap::new();
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut pending: Vec<(String, String)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();

    let flush_orphans = |out: &mut Vec<Message>,
                         pending: &mut Vec<(String, String)>,
                         answered: &mut HashSet<String>| {
        for (id, name) in pending.drain(..) {
            if !answered.contains(&id) {
                out.push(Message::ToolResult(ToolResultMessage {
                    tool_call_id: id,
                    tool_name: name,
                    content: vec![Content::text("No result provided")],
                    details: None,
                    is_error: true,
                    duration_ms: None,
                    timestamp: now_ms(),
                    extra: Extra::new(),
                }));
            }
        }
        answered.clear();
    };

    for msg in messages {
        match msg {
            Message::User(u) => {
                flush_orphans(&mut out, &mut pending, &mut answered);
                let mut u = u.clone();
                if !images_ok {
                    if let UserContent::Blocks(b) = &u.content {
                        u.content = UserContent::Blocks(replace_images(b, USER_IMAGE_PLACEHOLDER));
                    }
                }
                out.push(Message::User(u));
            }
            Message::ToolResult(r) => {
                let mut r = r.clone();
                if let Some(n) = id_map.get(&r.tool_call_id) {
                    r.tool_call_id = n.clone();
                }
                if !images_ok {
                    r.content = replace_images(&r.content, TOOL_IMAGE_PLACEHOLDER);
                }
                answered.insert(r.tool_call_id.clone());
                out.push(Message::ToolResult(r));
            }
            Message::Assistant(a) => {
                flush_orphans(&mut out, &mut pending, &mut answered);
                if matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) {
                    continue;
                }
                let same =
                    a.provider == model.provider && a.api == model.api && a.model == model.id;
                let mut content = Vec::with_capacity(a.content.len());
                for block in &a.content {
                    match block {
                        // pi 1.6.0: thinking from another model is dropped (its signature
                        // is void there, and as plain text the new model would take it for
                        // part of the visible reply); signed or redacted blocks are kept for
                        // their own model even when empty.
                        Content::Thinking(t) => {
                            if same
                                && (t.redacted
                                    || t.thinking_signature.is_some()
                                    || !t.thinking.trim().is_empty())
                            {
                                content.push(block.clone());
                            }
                        }
                        Content::Text(t) if !same => content.push(Content::text(t.text.clone())),
                        Content::ToolCall(tc) => {
                            let mut tc = tc.clone();
                            if !same {
                                tc.thought_signature = None;
                                if let Some(f) = normalize_id {
                                    let n = f(&tc.id);
                                    if n != tc.id {
                                        id_map.insert(tc.id.clone(), n.clone());
                                        tc.id = n;
                                    }
                                }
                            }
                            pending.push((tc.id.clone(), tc.name.clone()));
                            content.push(Content::ToolCall(tc));
                        }
                        other => content.push(other.clone()),
                    }
                }
                let mut a = a.clone();
                a.content = content;
                out.push(Message::Assistant(a));
            }
        }
    }
    flush_orphans(&mut out, &mut pending, &mut answered);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::providers::openai_compat::test_support::test_model;

    fn thinking(text: &str, signature: Option<&str>) -> Content {
        Content::Thinking(ThinkingContent {
            thinking: text.into(),
            thinking_signature: signature.map(str::to_string),
            redacted: false,
        })
    }

    #[test]
    fn thinking_from_another_model_is_dropped_and_its_own_kept() {
        let model = test_model("openai-completions");
        let mut reply = AssistantMessage::empty(&model);
        reply.content = vec![
            thinking("own thoughts", None),
            thinking("", Some("sig")),
            thinking("  ", None),
            Content::text("visible"),
        ];
        let mut foreign = reply.clone();
        foreign.provider = "anthropic".into();
        let out = transform_messages(
            &[Message::Assistant(reply), Message::Assistant(foreign)],
            &model,
            None,
        );
        let blocks = |m: &Message| match m {
            Message::Assistant(a) => a.content.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            blocks(&out[0]),
            [
                thinking("own thoughts", None),
                thinking("", Some("sig")),
                Content::text("visible")
            ]
        );
        assert_eq!(blocks(&out[1]), [Content::text("visible")]);
    }
}
