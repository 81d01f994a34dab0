//! The hot shapes of providers' stream events: the text, reasoning and tool-call fragments that
//! make up nearly every event of a stream, read into small borrowed structs. A `Value` map per
//! event (SipHash and an `IndexMap` insert per key, a `String` per key and value) cost more
//! than all the rest of a delta's way to the client. Each shape is strict: an event that does
//! not fit it exactly (a `Never` field that is set, a field of another type, more entries than
//! the shape holds) fails to read, and the provider reads it as a `Value` as before, so both
//! readings agree wherever the hot one applies (each provider's tests compare them).

use std::borrow::Cow;

use serde::Deserialize;

use crate::util::json::present;

/// Reads only as an absent `Option` (`null` or a missing field): a field that must not be set
/// for an event to take the hot path.
#[derive(Deserialize)]
pub enum Never {}

/// A string field's text, or "" when it is absent.
pub fn or_empty<'s>(field: &'s Option<Cow<'_, str>>) -> &'s str {
    field.as_deref().unwrap_or("")
}

// --- openai-completions -------------------------------------------------------------------

/// A Chat Completions chunk with one choice whose delta holds text, reasoning text or one tool
/// call's fragment, and nothing that ends or prices the reply.
#[derive(Deserialize)]
pub struct ChatChunk<'a> {
    #[serde(borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub model: Option<Cow<'a, str>>,
    pub error: Option<Never>,
    pub usage: Option<Never>,
    #[serde(borrow)]
    pub choices: [ChatChoice<'a>; 1],
}

#[derive(Deserialize)]
pub struct ChatChoice<'a> {
    pub finish_reason: Option<Never>,
    pub usage: Option<Never>,
    #[serde(borrow)]
    pub delta: ChatDelta<'a>,
}

#[derive(Deserialize)]
pub struct ChatDelta<'a> {
    #[serde(borrow)]
    pub content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub reasoning: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub reasoning_text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub tool_calls: Option<[ChatToolCall<'a>; 1]>,
    pub reasoning_details: Option<Never>,
}

#[derive(Deserialize)]
pub struct ChatToolCall<'a> {
    pub index: Option<i64>,
    #[serde(borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub function: Option<ChatFunction<'a>>,
}

#[derive(Deserialize)]
pub struct ChatFunction<'a> {
    #[serde(borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub arguments: Option<Cow<'a, str>>,
}

// --- anthropic-messages -------------------------------------------------------------------

/// A `content_block_delta` event (its `type` is checked by the reader).
#[derive(Deserialize)]
pub struct AnthropicBlockDelta<'a> {
    #[serde(borrow, rename = "type")]
    pub kind: Cow<'a, str>,
    pub index: Option<u64>,
    #[serde(borrow)]
    pub delta: AnthropicDelta<'a>,
}

#[derive(Deserialize)]
pub struct AnthropicDelta<'a> {
    #[serde(borrow, rename = "type")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub partial_json: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub signature: Option<Cow<'a, str>>,
}

// --- google-generative-ai -----------------------------------------------------------------

/// A chunk with at most one candidate of one text or thought part and no end, error or
/// function call. Fields whose mere presence counts (even `null`) are read with `present`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoogleChunk<'a> {
    #[serde(borrow)]
    pub response_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub candidates: Option<[GoogleCandidate<'a>; 1]>,
    #[serde(default, deserialize_with = "present")]
    pub usage_metadata: Option<Option<GoogleUsage>>,
    #[serde(default, deserialize_with = "present")]
    pub error: Option<Never>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoogleCandidate<'a> {
    #[serde(borrow)]
    pub content: Option<GoogleContent<'a>>,
    pub finish_reason: Option<Never>,
}

#[derive(Deserialize)]
pub struct GoogleContent<'a> {
    #[serde(borrow)]
    pub parts: Option<[GooglePart<'a>; 1]>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GooglePart<'a> {
    #[serde(borrow)]
    pub text: Option<Cow<'a, str>>,
    pub thought: Option<bool>,
    #[serde(borrow)]
    pub thought_signature: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    pub function_call: Option<Never>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct GoogleUsage {
    pub prompt_token_count: Option<u64>,
    pub candidates_token_count: Option<u64>,
    pub thoughts_token_count: Option<u64>,
    pub cached_content_token_count: Option<u64>,
    pub total_token_count: Option<u64>,
}

// --- mistral-conversations ----------------------------------------------------------------

/// A chunk with one choice whose delta's `content` is a plain string (or absent), no tool
/// calls, no end and no usage. Its `object` is checked by the reader (`"error"` is not hot).
#[derive(Deserialize)]
pub struct MistralChunk<'a> {
    #[serde(borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub object: Option<Cow<'a, str>>,
    pub error: Option<Never>,
    pub usage: Option<Never>,
    #[serde(borrow)]
    pub choices: [MistralChoice<'a>; 1],
}

#[derive(Deserialize)]
pub struct MistralChoice<'a> {
    pub finish_reason: Option<Never>,
    #[serde(borrow)]
    pub delta: MistralDelta<'a>,
}

#[derive(Deserialize)]
pub struct MistralDelta<'a> {
    #[serde(borrow)]
    pub content: Option<Cow<'a, str>>,
    pub tool_calls: Option<Never>,
}

// --- openai-responses (and Azure, Codex) --------------------------------------------------

/// An event with a `type` and perhaps a string `delta` (the reader checks the type).
#[derive(Deserialize)]
pub struct ResponsesDelta<'a> {
    #[serde(borrow, rename = "type")]
    pub kind: Cow<'a, str>,
    #[serde(borrow)]
    pub delta: Option<Cow<'a, str>>,
}

// --- bedrock-converse-stream --------------------------------------------------------------

/// A `contentBlockDelta` event's payload. `toolUse` and `reasoningContent` count when present
/// at all (even `null`), as the full reading has it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BedrockBlockDelta<'a> {
    pub content_block_index: Option<u64>,
    #[serde(borrow)]
    pub delta: Option<BedrockDelta<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BedrockDelta<'a> {
    #[serde(borrow)]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub tool_use: Option<Option<BedrockToolUse<'a>>>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub reasoning_content: Option<Option<BedrockReasoning<'a>>>,
}

#[derive(Deserialize)]
pub struct BedrockToolUse<'a> {
    #[serde(borrow)]
    pub input: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub struct BedrockReasoning<'a> {
    #[serde(borrow)]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub signature: Option<Cow<'a, str>>,
}
