//! Why a model request failed, as a type: set where the provider sees the HTTP status, the
//! error body or the transport error, read by the agent-level retry and the compaction that
//! follows a context overflow. Its text (`Display`) is the `errorMessage` users see, unchanged.
//!
//! Text matching is still the fallback for [`ProviderError::Provider`]: what a server says in
//! words only (an error event inside the stream, a 5xx or a gateway's own wording), which pi
//! itself classifies by its patterns (`harness::retry`, `ai::overflow`), and for a failed
//! reply read back from a session file, which carries only its text.

use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

/// A failed model request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderError {
    /// HTTP 429 that does not name an exhausted quota: worth retrying, after the server's own
    /// wait when it named one.
    RateLimited {
        message: String,
        retry_after_ms: Option<u64>,
    },
    /// The request does not fit the model's context window: compact, never retry as is.
    Overflow { message: String },
    /// The credentials were refused (HTTP 401, 403): retrying cannot help.
    Auth { message: String },
    /// No complete answer: the connection, TLS, a timeout, a stream cut off. `permanent`: the
    /// request cannot succeed as sent (an invalid URL or proxy).
    Transport { message: String, permanent: bool },
    /// Anything else the server said: another status, or an error inside the stream (`status`
    /// `None`), including our own failures to read its answer. Decided by its words.
    Provider {
        status: Option<u16>,
        message: String,
        retry_after_ms: Option<u64>,
    },
}

impl std::fmt::Display for ProviderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for ProviderError {}

/// An error known only by its words (a malformed chunk, an error event): decided by them.
impl From<String> for ProviderError {
    fn from(message: String) -> Self {
        ProviderError::Provider {
            status: None,
            message,
            retry_after_ms: None,
        }
    }
}

impl From<&str> for ProviderError {
    fn from(message: &str) -> Self {
        message.to_string().into()
    }
}

impl ProviderError {
    /// The text users see (the reply's `errorMessage`).
    pub fn message(&self) -> &str {
        match self {
            ProviderError::RateLimited { message, .. }
            | ProviderError::Overflow { message }
            | ProviderError::Auth { message }
            | ProviderError::Transport { message, .. }
            | ProviderError::Provider { message, .. } => message,
        }
    }

    /// The wait the server asked for before a retry.
    pub fn retry_after_ms(&self) -> Option<u64> {
        match self {
            ProviderError::RateLimited { retry_after_ms, .. }
            | ProviderError::Provider { retry_after_ms, .. } => *retry_after_ms,
            _ => None,
        }
    }

    /// A failed HTTP request of `provider` (`status` `None`: no HTTP answer), classified by
    /// its status, and for an overflow by the error code or pi's overflow wording (most APIs
    /// have no code for it).
    pub fn from_status(
        status: Option<u16>,
        message: String,
        body: &str,
        retry_after_ms: Option<u64>,
        permanent: bool,
        provider: &str,
    ) -> ProviderError {
        let Some(status) = status else {
            return ProviderError::Transport { message, permanent };
        };
        match status {
            413 => ProviderError::Overflow { message },
            429 if !names_exhausted_quota(&message) => ProviderError::RateLimited {
                message,
                retry_after_ms,
            },
            401 | 403 => ProviderError::Auth { message },
            _ if has_overflow_code(body) || is_overflow_text(&message, provider) => {
                ProviderError::Overflow { message }
            }
            _ => ProviderError::Provider {
                status: Some(status),
                message,
                retry_after_ms,
            },
        }
    }

    /// An error event inside a stream (`code` when the API gives one): an overflow is told by
    /// its code or pi's overflow wording, anything else is decided by its words later.
    pub fn in_stream(message: String, code: Option<&str>) -> ProviderError {
        // The provider matters only for a bodyless HTTP answer, never inside a stream.
        if code.is_some_and(is_overflow_code) || is_overflow_text(&message, "") {
            ProviderError::Overflow { message }
        } else {
            message.into()
        }
    }

    /// Whether a retry can help: `None` when only the words can tell (pi's patterns).
    pub fn is_retryable(&self) -> Option<bool> {
        match self {
            ProviderError::RateLimited { .. } => Some(true),
            ProviderError::Overflow { .. } | ProviderError::Auth { .. } => Some(false),
            ProviderError::Transport { permanent, .. } => Some(!permanent),
            ProviderError::Provider { .. } => None,
        }
    }

    /// Whether the context did not fit: `None` when only the words can tell.
    pub fn is_overflow(&self) -> Option<bool> {
        match self {
            ProviderError::Overflow { .. } => Some(true),
            ProviderError::Provider { .. } => None,
            _ => Some(false),
        }
    }
}

/// OpenAI's (and compatible servers') code for a prompt over the context window; Anthropic's
/// error type for a request too large.
fn is_overflow_code(code: &str) -> bool {
    matches!(code, "context_length_exceeded" | "request_too_large")
}

fn has_overflow_code(body: &str) -> bool {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(body) else {
        return false;
    };
    let error = doc.get("error").unwrap_or(&doc);
    ["code", "type"].iter().any(|k| {
        error
            .get(k)
            .and_then(|v| v.as_str())
            .is_some_and(is_overflow_code)
    })
}

/// Quota, budget and billing exhaustion: retrying cannot help (pi-ai's
/// `NON_RETRYABLE_PROVIDER_LIMIT_ERROR_PATTERN`; servers word these freely, so by text).
const QUOTA_EXHAUSTED: &[&str] = &[
    "GoUsageLimitError",
    "FreeUsageLimitError",
    "Monthly usage limit reached",
    "available balance",
    "insufficient_quota",
    "out of budget",
    "quota exceeded",
    "billing",
    "subscription_sharing_usage_limit_exceeded",
    "subscription_sharing_workplace_individual_usage_limit_exceeded",
    // `"?1308(?![0-9])` in pi; the `regex` crate has no look-ahead.
    r#""code"\s*:\s*"?1308(?:[^0-9]|$)"#,
];

/// Whether `text` names an exhausted quota, budget or balance.
pub fn names_exhausted_quota(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        RegexBuilder::new(&QUOTA_EXHAUSTED.join("|"))
            .case_insensitive(true)
            .build()
            .expect("pi's quota patterns compile")
    })
    .is_match(text)
}

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

fn any_of_overflow(parts: &[&str]) -> Regex {
    let alternatives: Vec<String> = parts.iter().map(|p| format!("(?:{p})")).collect();
    RegexBuilder::new(&alternatives.join("|"))
        .case_insensitive(true)
        .build()
        .expect("pi's overflow patterns compile")
}

/// Whether `msg` words a context overflow as some provider does (pi-ai's patterns: servers
/// word it freely, and most APIs have no code for it).
pub fn is_overflow_text(msg: &str, provider: &str) -> bool {
    static YES: OnceLock<Regex> = OnceLock::new();
    static NOT: OnceLock<Regex> = OnceLock::new();
    static CEREBRAS: OnceLock<Regex> = OnceLock::new();
    if NOT
        .get_or_init(|| any_of_overflow(NOT_OVERFLOW))
        .is_match(msg)
    {
        return false;
    }
    YES.get_or_init(|| any_of_overflow(OVERFLOW)).is_match(msg)
        || provider == "cerebras"
            && CEREBRAS
                .get_or_init(|| any_of_overflow(&[CEREBRAS_BODYLESS]))
                .is_match(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(status: Option<u16>, message: &str, body: &str) -> ProviderError {
        ProviderError::from_status(status, message.into(), body, Some(1500), false, "openai")
    }

    #[test]
    fn the_status_decides_at_the_edge() {
        assert_eq!(
            class(Some(429), "429 Slow down", ""),
            ProviderError::RateLimited {
                message: "429 Slow down".into(),
                retry_after_ms: Some(1500)
            }
        );
        assert!(matches!(
            class(
                Some(429),
                "429 You exceeded your quota: insufficient_quota",
                ""
            ),
            ProviderError::Provider {
                status: Some(429),
                ..
            }
        ));
        assert!(matches!(
            class(Some(401), "401 bad key", ""),
            ProviderError::Auth { .. }
        ));
        assert!(matches!(
            class(Some(413), "413 status code (no body)", ""),
            ProviderError::Overflow { .. }
        ));
        // A code, whatever the words.
        assert!(matches!(
            class(
                Some(400),
                "400 Too much.",
                r#"{"error":{"message":"Too much.","code":"context_length_exceeded"}}"#
            ),
            ProviderError::Overflow { .. }
        ));
        // pi's wording, for the many APIs without a code.
        assert!(matches!(
            class(
                Some(400),
                "400 prompt is too long: 210000 tokens > 200000 maximum",
                ""
            ),
            ProviderError::Overflow { .. }
        ));
        assert!(matches!(
            class(
                None,
                "Connection error: could not connect to example.com",
                ""
            ),
            ProviderError::Transport {
                permanent: false,
                ..
            }
        ));
        let other = class(Some(503), "503 busy", "busy");
        assert_eq!(other.to_string(), "503 busy");
        assert_eq!(other.is_retryable(), None, "decided by its words");
        assert_eq!(other.retry_after_ms(), Some(1500));
    }
}
