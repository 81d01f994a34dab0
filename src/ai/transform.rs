//! Prepares a transcript for a particular model before any provider serializes it: images
//! become a placeholder for text-only models, thinking from another model is dropped and
//! signatures are cleared, tool-call ids are normalized per provider, failed assistant turns are dropped,
//! and tool calls left without a result (after an abort) get a synthetic error result.
//!
//! A message that needs none of this is borrowed, not copied: building a request then holds
//! the conversation once, however long it is (issue 35).

use std::borrow::Cow;
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

/// The transcript as a model gets it: each message borrowed from the conversation, or a
/// changed copy when it had to change.
pub struct Transformed<'a> {
    messages: Vec<Cow<'a, Message>>,
}

impl<'a> Transformed<'a> {
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&Message> {
        self.messages.get(i).map(|m| m.as_ref())
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Message> + ExactSizeIterator + '_ {
        self.messages.iter().map(|m| m.as_ref())
    }
}

impl std::ops::Index<usize> for Transformed<'_> {
    type Output = Message;
    fn index(&self, i: usize) -> &Message {
        &self.messages[i]
    }
}

impl<'t, 'a> IntoIterator for &'t Transformed<'a> {
    type Item = &'t Message;
    type IntoIter = std::iter::Map<
        std::slice::Iter<'t, Cow<'a, Message>>,
        fn(&'t Cow<'a, Message>) -> &'t Message,
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.messages.iter().map(|m| m.as_ref())
    }
}

/// Whether transforming an assistant message from this very model changes its content: only
/// an unsigned thinking block with nothing but whitespace is dropped.
fn same_model_content_changes(content: &[Content]) -> bool {
    content.iter().any(|block| {
        matches!(block, Content::Thinking(t)
            if !t.redacted && t.thinking_signature.is_none() && t.thinking.trim().is_empty())
    })
}

/// `normalize_id` maps a foreign tool-call id to one the target API accepts.
pub fn transform_messages<'a>(
    messages: &'a [Message],
    model: &Model,
    normalize_id: Option<&dyn Fn(&str) -> String>,
) -> Transformed<'a> {
    let images_ok = model.supports_images();
    let mut id_map: HashMap<String, String> = HashMap::new();
    let mut out: Vec<Cow<'a, Message>> = Vec::with_capacity(messages.len());
    let mut pending: Vec<(String, String)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();

    let flush_orphans = |out: &mut Vec<Cow<'a, Message>>,
                         pending: &mut Vec<(String, String)>,
                         answered: &mut HashSet<String>| {
        for (id, name) in pending.drain(..) {
            if !answered.contains(&id) {
                out.push(Cow::Owned(Message::ToolResult(ToolResultMessage {
                    tool_call_id: id,
                    tool_name: name,
                    content: vec![Content::text("No result provided")],
                    details: None,
                    is_error: true,
                    duration_ms: None,
                    timestamp: now_ms(),
                    extra: Extra::new(),
                })));
            }
        }
        answered.clear();
    };

    for msg in messages {
        match msg {
            Message::User(u) => {
                flush_orphans(&mut out, &mut pending, &mut answered);
                match &u.content {
                    UserContent::Blocks(b) if !images_ok && has_image(b) => {
                        let mut u = u.clone();
                        u.content = UserContent::Blocks(replace_images(b, USER_IMAGE_PLACEHOLDER));
                        out.push(Cow::Owned(Message::User(u)));
                    }
                    _ => out.push(Cow::Borrowed(msg)),
                }
            }
            Message::ToolResult(r) => {
                let new_id = id_map.get(&r.tool_call_id);
                let images = !images_ok && has_image(&r.content);
                if new_id.is_none() && !images {
                    answered.insert(r.tool_call_id.clone());
                    out.push(Cow::Borrowed(msg));
                    continue;
                }
                let mut r = r.clone();
                if let Some(n) = new_id {
                    r.tool_call_id = n.clone();
                }
                if images {
                    r.content = replace_images(&r.content, TOOL_IMAGE_PLACEHOLDER);
                }
                answered.insert(r.tool_call_id.clone());
                out.push(Cow::Owned(Message::ToolResult(r)));
            }
            Message::Assistant(a) => {
                flush_orphans(&mut out, &mut pending, &mut answered);
                if matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) {
                    continue;
                }
                let same =
                    a.provider == model.provider && a.api == model.api && a.model == model.id;
                if same && !same_model_content_changes(&a.content) {
                    for tc in a.tool_calls() {
                        pending.push((tc.id.clone(), tc.name.clone()));
                    }
                    out.push(Cow::Borrowed(msg));
                    continue;
                }
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
                out.push(Cow::Owned(Message::Assistant(a)));
            }
        }
    }
    flush_orphans(&mut out, &mut pending, &mut answered);
    Transformed { messages: out }
}

fn has_image(content: &[Content]) -> bool {
    content.iter().any(|c| matches!(c, Content::Image(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_model(id: &str, api: &str, provider: &str) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: api.into(),
            provider: provider.into(),
            base_url: "http://127.0.0.1:9".into(),
            reasoning: true,
            input: vec!["text".into(), "image".into()],
            cost: ModelCost::default(),
            context_window: 200_000,
            max_tokens: 64_000,
            thinking_level_map: None,
            headers: None,
            compat: None,
        }
    }

    fn tool_turn(model: &Model, id: &str) -> [Message; 2] {
        let mut a = AssistantMessage::empty(model);
        a.stop_reason = StopReason::ToolUse;
        a.content = vec![Content::ToolCall(ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: serde_json::json!({"command": "ls"}),
            thought_signature: None,
        })];
        let result = ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "bash".into(),
            content: vec![Content::text("a\nb\n")],
            details: None,
            is_error: false,
            duration_ms: None,
            timestamp: 1,
            extra: Extra::new(),
        };
        [Message::Assistant(a), Message::ToolResult(result)]
    }

    /// Issue 35: a request over a long conversation must not copy it; only what changes is.
    #[test]
    fn messages_that_need_no_change_are_borrowed_and_changed_ones_copied() {
        let model = test_model("m", "openai-completions", "p");
        let other = test_model("o", "anthropic-messages", "q");
        let mut messages = vec![Message::user_text("hi")];
        messages.extend(tool_turn(&model, "call_1"));
        messages.extend(tool_turn(&other, "toolu|1"));
        let mut reply = AssistantMessage::empty(&model);
        reply.content = vec![
            Content::Thinking(ThinkingContent {
                thinking: "  ".into(),
                thinking_signature: None,
                redacted: false,
            }),
            Content::text("done"),
        ];
        messages.push(Message::Assistant(reply));
        let norm = |id: &str| id.replace('|', "_");
        let out = transform_messages(&messages, &model, Some(&norm));
        assert_eq!(out.len(), messages.len());
        let borrowed: Vec<bool> = out
            .iter()
            .zip(&messages)
            .map(|(a, b)| std::ptr::eq(a, b))
            .collect();
        // The other model's call gets a new id, and so does its result; the unsigned blank
        // thinking block is dropped.
        assert_eq!(borrowed, [true, true, true, false, false, false]);
        match (&out[3], &out[4]) {
            (Message::Assistant(a), Message::ToolResult(r)) => {
                assert_eq!(a.tool_calls().next().unwrap().id, "toolu_1");
                assert_eq!(r.tool_call_id, "toolu_1");
            }
            m => panic!("{m:?}"),
        }
        match &out[5] {
            Message::Assistant(a) => assert_eq!(a.content, vec![Content::text("done")]),
            m => panic!("{m:?}"),
        }
    }
}

#[cfg(test)]
mod thinking_tests {
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
        let messages = [Message::Assistant(reply), Message::Assistant(foreign)];
        let out = transform_messages(&messages, &model, None);
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
