//! Context-overflow detection: each provider's "prompt too long" wording, matched with pi-ai's
//! own patterns (pi 1.x), plus the silent overflows some servers report through usage instead
//! of an error.

use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

use super::types::{AssistantMessage, StopReason};

/// pi-ai's `OVERFLOW_PATTERNS` (JavaScript's ASCII `\d`/`\w` spelled out).
const OVERFLOW: &[&str] = &[
    r"prompt (?:is )?too long",
    r"prompt exceeds max length",
    r"request_too_large",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [0-9,]+ tokens?|\s*\([0-9,]+\))",
    r"context window exceeded",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is [0-9]+",
    r"reduce the length of the messages",
    r"maximum context length is [0-9]+ tokens",
    r"exceeds (?:the )?maximum allowed input length of [0-9,]+ tokens?",
    r"input \([0-9]+ tokens\) is longer than the model'?s context length \([0-9]+ tokens\)",
    r"exceeds the limit of [0-9]+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with [0-9]+ maximum context length",
    r"prompt has [0-9,]+ tokens?, but the configured context size is [0-9,]+ tokens?",
    r"model_context_window_exceeded",
    r"prompt too long; exceeded (?:max )?context length",
    r"range of input length should be",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"^(?:[A-Za-z0-9_ -]+ API error \(413\):|413(?:\s|:|$))",
];

/// Cerebras answers an overflow with a bodyless 400 or 413 (pi checks this for Cerebras only).
const CEREBRAS_BODYLESS: &str = r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)";

/// Rate limits and throttling that mention tokens but are not overflows.
const NOT_OVERFLOW: &[&str] = &[
    r"^(?:Throttling error|Service unavailable):",
    r"rate limit",
    r"too many requests",
];

fn any_of(parts: &[&str]) -> Regex {
    let alternatives: Vec<String> = parts.iter().map(|p| format!("(?:{p})")).collect();
    RegexBuilder::new(&alternatives.join("|"))
        .case_insensitive(true)
        .build()
        .expect("pi's overflow patterns compile")
}

fn matches_overflow_text(msg: &str, provider: &str) -> bool {
    static YES: OnceLock<Regex> = OnceLock::new();
    static NOT: OnceLock<Regex> = OnceLock::new();
    static CEREBRAS: OnceLock<Regex> = OnceLock::new();
    if NOT.get_or_init(|| any_of(NOT_OVERFLOW)).is_match(msg) {
        return false;
    }
    YES.get_or_init(|| any_of(OVERFLOW)).is_match(msg)
        || provider == "cerebras"
            && CEREBRAS
                .get_or_init(|| any_of(&[CEREBRAS_BODYLESS]))
                .is_match(msg)
}

/// Whether `msg` failed (or silently degraded) because the context did not fit.
pub fn is_context_overflow(msg: &AssistantMessage, context_window: u64) -> bool {
    if msg.stop_reason == StopReason::Error {
        if let Some(e) = &msg.error_message {
            if matches_overflow_text(e, &msg.provider) {
                return true;
            }
        }
    }
    let input = msg.usage.input + msg.usage.cache_read;
    if context_window > 0 && msg.stop_reason == StopReason::Stop && input > context_window {
        return true;
    }
    context_window > 0
        && msg.stop_reason == StopReason::Length
        && msg.usage.output == 0
        && input as f64 >= context_window as f64 * 0.99
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_wordings() {
        for m in [
            "400 prompt is too long: 210000 tokens > 200000 maximum",
            "This model's maximum context length is 128000 tokens. However...",
            "Your input exceeds the context window of this model",
            "The input token count (1200000) exceeds the maximum number of tokens allowed",
            "413 status code (no body)",
            "413: Request Entity Too Large",
            "Mistral API error (413): too big",
            "Prompt too long; exceeded max context length by 100 tokens",
            "too large for model with 32768 maximum context length",
            "request (9000 tokens) exceeds the available context size (8192 tokens)",
            "prompt has 9,000 tokens, but the configured context size is 8,192 tokens",
            "exceeds the model's maximum context length of 8,192 tokens",
        ] {
            assert!(matches_overflow_text(m, "openai"), "{m}");
        }
        for m in [
            "429 rate limit: too many tokens per minute",
            "500 internal error",
            "Throttling error: too many tokens",
            "400 status code (no body)",
            "4130 things",
            "This endpoint's maximum context length of 131,072 tokens",
        ] {
            assert!(!matches_overflow_text(m, "openai"), "{m}");
        }
        assert!(matches_overflow_text(
            "400 status code (no body)",
            "cerebras"
        ));
    }
}
