//! Context-overflow detection: recognizes each provider's "prompt too long" wording, plus the
//! silent overflows some servers report through usage instead of an error.

use super::types::{AssistantMessage, StopReason};

/// Literal fragments (matched case-insensitively) that mean the prompt did not fit.
const OVERFLOW_PHRASES: &[&str] = &[
    "prompt is too long",
    "request_too_large",
    "input is too long for requested model",
    "exceeds the context window",
    "reduce the length of the messages",
    "exceeds the available context size",
    "greater than the context length",
    "context window exceeds limit",
    "exceeded model token limit",
    "model_context_window_exceeded",
    "prompt too long; exceeded context length",
    "prompt too long; exceeded max context length",
    "context_length_exceeded",
    "context length exceeded",
    "context_length exceeded",
    "context length_exceeded",
    "too many tokens",
    "token limit exceeded",
];

/// Fragments that look like overflow but are rate limits or throttling.
fn is_non_overflow(lower: &str) -> bool {
    lower.starts_with("throttling error:")
        || lower.starts_with("service unavailable:")
        || lower.contains("rate limit")
        || lower.contains("too many requests")
}

/// True if `text` contains `prefix` followed by one or more digits and then `suffix`.
fn has_number_between(text: &str, prefix: &str, suffix: &str) -> bool {
    let mut from = 0;
    while let Some(p) = text[from..].find(prefix) {
        let rest = &text[from + p + prefix.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(suffix) {
            return true;
        }
        from += p + 1;
    }
    false
}

fn matches_overflow_text(msg: &str) -> bool {
    let lower = msg.to_lowercase();
    if is_non_overflow(&lower) {
        return false;
    }
    if OVERFLOW_PHRASES.iter().any(|p| lower.contains(p)) {
        return true;
    }
    if let Some(p) = lower.find("input token count") {
        if lower[p..].contains("exceeds the maximum") {
            return true;
        }
    }
    if has_number_between(&lower, "maximum prompt length is ", "")
        || has_number_between(&lower, "maximum context length is ", " tokens")
        || has_number_between(&lower, "exceeds the limit of ", "")
        || has_number_between(
            &lower,
            "too large for model with ",
            " maximum context length",
        )
    {
        return true;
    }
    // Cerebras answers 400/413 with no body.
    for code in ["400", "413"] {
        if let Some(rest) = lower.strip_prefix(code) {
            let rest = rest.trim_start();
            let rest = rest
                .strip_prefix("status code")
                .unwrap_or(rest)
                .trim_start();
            if rest.starts_with("(no body)") {
                return true;
            }
        }
    }
    false
}

/// Whether `msg` failed (or silently degraded) because the context did not fit.
pub fn is_context_overflow(msg: &AssistantMessage, context_window: u64) -> bool {
    if msg.stop_reason == StopReason::Error {
        if let Some(e) = &msg.error_message {
            if matches_overflow_text(e) {
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
            "400 (no body)",
            "Prompt too long; exceeded max context length by 100 tokens",
            "too large for model with 32768 maximum context length",
        ] {
            assert!(matches_overflow_text(m), "{m}");
        }
        for m in [
            "429 rate limit: too many tokens per minute",
            "500 internal error",
            "Throttling error: too many tokens",
        ] {
            assert!(!matches_overflow_text(m), "{m}");
        }
    }
}
