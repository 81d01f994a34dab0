//! Context-overflow detection: a reply's typed error when its stream said why
//! (`error::ProviderError::Overflow`), else each provider's "prompt too long" wording, matched
//! with pi-ai's own patterns (pi 1.x, in `error.rs`), plus the silent overflows some servers
//! report through usage instead of an error.

use super::error::{is_overflow_text, ProviderError};
use super::types::{AssistantMessage, StopReason};

/// Whether `msg` failed (or silently degraded) because the context did not fit.
pub fn is_context_overflow(msg: &AssistantMessage, context_window: u64) -> bool {
    if msg.stop_reason == StopReason::Error {
        if let Some(e) = &msg.error_message {
            if is_overflow_text(e, &msg.provider) {
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

/// [`is_context_overflow`] for a reply whose stream ended with `cause`: the type decides
/// where it can, the words and the usage otherwise.
pub fn is_context_overflow_from(
    msg: &AssistantMessage,
    cause: Option<&ProviderError>,
    context_window: u64,
) -> bool {
    if msg.stop_reason == StopReason::Error {
        if let Some(known) = cause.and_then(ProviderError::is_overflow) {
            return known;
        }
    }
    is_context_overflow(msg, context_window)
}

#[cfg(test)]
mod tests {
    use crate::ai::error::is_overflow_text as matches_overflow_text;

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
