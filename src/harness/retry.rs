//! Which failures are worth retrying, and how long to wait: pi's wording-based classification
//! (a provider error message is all that survives the stream), exponential backoff, and the
//! server's own `Retry-After` when it sent one.

use crate::ai::overflow::is_context_overflow;
use crate::ai::{AssistantMessage, StopReason};
use crate::resources::settings::RetrySettings;

/// Phrases of transient failures. `.?` in pi's pattern means "any one character or none";
/// here each phrase lists its words, matched with at most one character between them.
const RETRYABLE: &[&[&str]] = &[
    &["overloaded"],
    &["provider", "returned", "error"],
    &["rate", "limit"],
    &["too many requests"],
    &["429"],
    &["500"],
    &["502"],
    &["503"],
    &["504"],
    &["service", "unavailable"],
    &["server", "error"],
    &["internal", "error"],
    &["network", "error"],
    &["connection", "error"],
    &["connection", "refused"],
    &["connection", "lost"],
    &["websocket", "closed"],
    &["websocket", "error"],
    &["other side closed"],
    &["fetch failed"],
    &["upstream", "connect"],
    &["reset before headers"],
    &["socket hang up"],
    &["ended without"],
    &["http2 request did not get a response"],
    &["timed out"],
    &["time out"],
    &["timeout"],
    &["terminated"],
    &["retry delay"],
];

/// True if `words` occur in order with at most one character between neighbours.
fn loose_match(hay: &str, words: &[&str]) -> bool {
    fn rest_matches(hay: &str, words: &[&str]) -> bool {
        let Some((first, rest)) = words.split_first() else {
            return true;
        };
        for skip in 0..=1 {
            let Some(tail) = hay.get(skip..) else {
                continue;
            };
            if let Some(after) = tail.strip_prefix(first) {
                if rest_matches(after, rest) {
                    return true;
                }
            }
        }
        false
    }
    let (first, rest) = match words.split_first() {
        Some(x) => x,
        None => return true,
    };
    hay.match_indices(first)
        .any(|(i, _)| rest_matches(&hay[i + first.len()..], rest))
}

/// pi's rule: an error with a message, not a context overflow, worded like a transient failure.
pub fn is_retryable(msg: &AssistantMessage, context_window: u64) -> bool {
    if msg.stop_reason != StopReason::Error {
        return false;
    }
    let Some(err) = &msg.error_message else {
        return false;
    };
    if is_context_overflow(msg, context_window) {
        return false;
    }
    let lower = err.to_lowercase();
    RETRYABLE.iter().any(|words| loose_match(&lower, words))
}

/// The wait before retry number `attempt` (1-based), or `None` if the server asked for longer
/// than we are willing to wait.
pub fn retry_delay_ms(
    settings: &RetrySettings,
    attempt: u32,
    retry_after_ms: Option<u64>,
) -> Option<u64> {
    match retry_after_ms {
        Some(ms) if settings.max_retry_delay_ms > 0 && ms > settings.max_retry_delay_ms => None,
        Some(ms) => Some(ms),
        None => Some(
            settings
                .base_delay_ms
                .saturating_mul(1u64 << (attempt.saturating_sub(1)).min(20)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::{Model, ModelCost};

    fn err(text: &str) -> AssistantMessage {
        let m = Model {
            id: "m".into(),
            name: "m".into(),
            api: "x".into(),
            provider: "p".into(),
            base_url: String::new(),
            reasoning: false,
            input: vec![],
            cost: ModelCost::default(),
            context_window: 0,
            max_tokens: 0,
            thinking_level_map: None,
            headers: None,
            compat: None,
        };
        let mut a = AssistantMessage::empty(&m);
        a.stop_reason = StopReason::Error;
        a.error_message = Some(text.into());
        a
    }

    #[test]
    fn classification() {
        for t in [
            "429 Too Many Requests",
            "529 Overloaded",
            "500 status code (no body)",
            "Rate-limit hit",
            "Connection lost: other side closed",
            "Stream timed out: no data",
            "service_unavailable",
        ] {
            assert!(is_retryable(&err(t), 0), "{t}");
        }
        for t in [
            "400 invalid model",
            "401 bad key",
            "400 prompt is too long: 300000 tokens",
        ] {
            assert!(!is_retryable(&err(t), 0), "{t}");
        }
    }

    #[test]
    fn delays() {
        let s = RetrySettings::default();
        assert_eq!(retry_delay_ms(&s, 1, None), Some(2000));
        assert_eq!(retry_delay_ms(&s, 2, None), Some(4000));
        assert_eq!(retry_delay_ms(&s, 3, None), Some(8000));
        assert_eq!(retry_delay_ms(&s, 1, Some(1500)), Some(1500));
        assert_eq!(retry_delay_ms(&s, 1, Some(120_000)), None);
    }
}
