//! The agent-level retry policy, pi's second layer (the first is `ai::provider_retry`):
//! which failed replies are worth running again, and the exponential backoff between attempts.
//! The provider's typed error (`ai::ProviderError`) decides when it can: a rate limit or a
//! dropped connection is retried, an overflow, refused credentials or a bad URL are not. What
//! a server says only in words (a 5xx, an error inside the stream, a gateway's wording), and a
//! failed reply read back from a session, is decided by pi 1.x's own patterns over the error
//! message, as pi decides everything.

use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

use crate::ai::error::names_exhausted_quota;
use crate::ai::overflow::is_context_overflow_from;
use crate::ai::{AssistantMessage, ProviderError, StopReason};
use crate::resources::settings::RetrySettings;

/// Transient provider and transport failures (pi-ai's `RETRYABLE_PROVIDER_ERROR_PATTERN`).
const RETRYABLE: &[&str] = &[
    "overloaded",
    "server_busy",
    "servers are currently busy",
    "currently experiencing high demand",
    "model is at capacity",
    "rate.?limit",
    "too many requests",
    // `(?<![a-z0-9])(?:429|…)(?![a-z0-9])` in pi: a status code, not digits inside an id.
    "(?:^|[^a-z0-9])(?:429|500|502|503|504|520|524)(?:[^a-z0-9]|$)",
    "service.?(?:is.?)?(?:temporarily.?)?unavailable",
    "server.?error",
    "internal.?error",
    "provider.?returned.?(?:an.?)?error",
    "exceeded request buffer limit while retrying upstream",
    "unable to forward upstream",
    "upstream.?request.?failed",
    "upstream_stream_read_error",
    "stream was interrupted",
    "http/?2 stream failed",
    "network.?error",
    "connection.?error",
    "connection.?refused",
    "connection.?lost",
    // pi 1.6.0 (#12064): a gateway's mid-stream drop, e.g. an `api_error` "Connection closed.".
    "connection.?closed",
    "other side closed",
    "fetch failed",
    r"request to \S+ failed, reason:",
    "getaddrinfo",
    // pi 1.6.0 (#12128): a bare socket error code ("read ECONNRESET", "write EPIPE"), not part
    // of a longer identifier (`(?<![a-z0-9_])…(?![a-z0-9_])` in pi).
    "(?:^|[^a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?:[^a-z0-9_]|$)",
    "connection reset by peer",
    "ENOTFOUND",
    "EAI_AGAIN",
    "upstream.?connect",
    "reset before headers",
    "socket hang up",
    "socket connection was closed",
    "timed? out",
    "timeout",
    "terminated",
    "websocket.?closed",
    "websocket.?error",
    "websocket.?connection.?limit.?reached",
    "ended without",
    "stream ended before message_stop",
    "stream ended before a terminal response event",
    "http2 request did not get a response",
    "stream disconnected before completion",
    "cut short after the reply had begun",
    "pending stream has been canceled",
    "retry delay",
    "you can retry your request",
    "try your request again",
    "please retry your request",
    "ResourceExhausted",
    "subscription_sharing_usage_unavailable",
    "subscription_sharing_user_unavailable",
];

fn any_of(parts: &[&str]) -> Regex {
    RegexBuilder::new(&parts.join("|"))
        .case_insensitive(true)
        .build()
        .expect("pi's retry patterns compile")
}

/// pi's classification of an error message (overflow aside): transient unless it names an
/// exhausted quota. Our own "this 2xx answer is not a stream" reports are final: the server
/// will answer the same way again.
pub fn is_retryable_error_message(err: &str) -> bool {
    static YES: OnceLock<Regex> = OnceLock::new();
    if crate::ai::http::NOT_A_STREAM_PREFIXES
        .iter()
        .any(|p| err.starts_with(p))
    {
        return false;
    }
    !names_exhausted_quota(err) && YES.get_or_init(|| any_of(RETRYABLE)).is_match(err)
}

/// The typed error `last` of the latest stream, if `msg` is the reply it ended.
pub fn cause_of<'a>(
    msg: &AssistantMessage,
    last: Option<&'a ProviderError>,
) -> Option<&'a ProviderError> {
    last.filter(|e| {
        msg.stop_reason == StopReason::Error && msg.error_message.as_deref() == Some(e.message())
    })
}

/// Whether a failed reply is worth running again: by its typed error `cause` when that
/// decides, else pi's rule: an error with a message, not a context overflow, worded like a
/// transient failure.
pub fn is_retryable(
    msg: &AssistantMessage,
    cause: Option<&ProviderError>,
    context_window: u64,
) -> bool {
    if msg.stop_reason != StopReason::Error {
        return false;
    }
    if let Some(known) = cause.and_then(ProviderError::is_retryable) {
        return known;
    }
    let Some(err) = &msg.error_message else {
        return false;
    };
    !is_context_overflow_from(msg, cause, context_window) && is_retryable_error_message(err)
}

/// The wait before retry number `attempt` (1-based): the server's own wait when it named one
/// (`Retry-After`, `retry-after-ms`, Google's `RetryInfo`), as pi's SDK clients and its Google
/// client honour it, else [`retry_delay_ms`]. `None` when the server asked for longer than
/// `max_server_wait_ms` (`retry.provider.maxRetryDelayMs`, 0 = no cap): pi gives up rather
/// than wait beyond it, and retrying sooner would only be refused again. The failed reply
/// already says "Server requested Ns retry delay (max: Ms)".
pub fn auto_retry_wait_ms(
    settings: &RetrySettings,
    attempt: u32,
    server_wait_ms: Option<u64>,
    max_server_wait_ms: u64,
) -> Option<u64> {
    match server_wait_ms {
        Some(ms) if max_server_wait_ms > 0 && ms > max_server_wait_ms => None,
        Some(ms) => Some(ms),
        None => Some(retry_delay_ms(settings, attempt)),
    }
}

/// The backoff before retry number `attempt` (1-based) when the server named no wait:
/// `baseDelayMs` doubling, capped at `retry.maxAgentDelayMs`.
pub fn retry_delay_ms(settings: &RetrySettings, attempt: u32) -> u64 {
    settings
        .base_delay_ms
        .saturating_mul(1u64 << attempt.saturating_sub(1).min(40))
        .min(settings.max_agent_delay_ms)
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
    fn a_run_stopped_for_repeating_itself_is_neither_retried_nor_compacted() {
        let m = err(&crate::agent::repeats::stop_message());
        assert!(!is_retryable(&m, None, 128_000));
        assert!(!crate::ai::overflow::is_context_overflow(&m, 128_000));
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
            "The service is temporarily unavailable",
            "Server requested 91s retry delay (max: 60s). 429 slow down",
            "Error: 503",
            "Connection closed.",
            "read ECONNRESET",
            "connect ETIMEDOUT 1.2.3.4:443",
            "write EPIPE",
            "Connection reset by peer",
            "Responses websocket connection limit reached",
        ] {
            assert!(is_retryable(&err(t), None, 0), "{t}");
        }
        for t in [
            "400 invalid model",
            "401 bad key",
            "400 prompt is too long: 300000 tokens",
            "429 You exceeded your current quota: insufficient_quota",
            r#"{"error":{"code":"1308","message":"usage cap"}} 429"#,
            "400 request id req_5029abc failed validation",
            "400 field XECONNRESET_FLAG is unknown",
            "Empty reply: the server answered 200 (text/event-stream) and sent no data.",
            "Not an event stream: the server answered 200 (application/json) with a document \
             instead of a stream: {\"error\":\"internal error\"}",
        ] {
            assert!(!is_retryable(&err(t), None, 0), "{t}");
        }
    }

    #[test]
    fn the_typed_error_decides_before_the_words() {
        let limited = ProviderError::RateLimited {
            message: "slow down".into(),
            retry_after_ms: Some(3000),
        };
        // "slow down" alone is no pattern of pi's: the type says a retry helps.
        assert!(!is_retryable(&err("slow down"), None, 0));
        assert!(is_retryable(&err("slow down"), Some(&limited), 0));
        let auth = ProviderError::Auth {
            message: "401 bad key, please retry your request".into(),
        };
        assert!(is_retryable(&err(auth.message()), None, 0), "by its words");
        assert!(!is_retryable(&err(auth.message()), Some(&auth), 0));
        let overflow = ProviderError::Overflow {
            message: "400 Too big.".into(),
        };
        assert!(!is_retryable(&err("400 Too big."), Some(&overflow), 0));
        assert!(is_context_overflow_from(
            &err("400 Too big."),
            Some(&overflow),
            0
        ));
        // Words only: pi's patterns decide.
        let worded = ProviderError::from("503 upstream connect error".to_string());
        assert!(is_retryable(&err(worded.message()), Some(&worded), 0));
    }

    #[test]
    fn a_cause_belongs_only_to_the_reply_it_ended() {
        let e = ProviderError::from("boom".to_string());
        assert!(cause_of(&err("boom"), Some(&e)).is_some());
        assert!(cause_of(&err("other"), Some(&e)).is_none());
    }

    #[test]
    fn delays_double_up_to_the_agent_cap() {
        let s = RetrySettings::default();
        assert_eq!(retry_delay_ms(&s, 1), 2000);
        assert_eq!(retry_delay_ms(&s, 2), 4000);
        assert_eq!(retry_delay_ms(&s, 3), 8000);
        assert_eq!(retry_delay_ms(&s, 6), 60_000);
        assert_eq!(retry_delay_ms(&s, 200), 60_000);
    }

    #[test]
    fn the_servers_wait_wins_up_to_its_cap() {
        let s = RetrySettings::default();
        assert_eq!(auto_retry_wait_ms(&s, 1, None, 60_000), Some(2000));
        assert_eq!(
            auto_retry_wait_ms(&s, 1, Some(10_000), 60_000),
            Some(10_000)
        );
        assert_eq!(auto_retry_wait_ms(&s, 3, Some(150), 60_000), Some(150));
        assert_eq!(auto_retry_wait_ms(&s, 1, Some(60_001), 60_000), None);
        assert_eq!(auto_retry_wait_ms(&s, 1, Some(600_000), 0), Some(600_000));
    }
}
