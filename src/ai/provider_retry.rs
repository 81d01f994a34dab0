//! Provider-level retries: the first of pi's two retry layers. Each provider client retries a
//! failed *request* (before any of the stream arrived) the way the SDK pi uses for it does,
//! silently — no events — and only then reports the error that the agent-level auto-retry
//! (`harness::retry`) may act on. As in pi 1.x, `retry.provider.maxRetries` defaults to 0 and
//! is honoured by every provider whose SDK takes it; the AWS SDK behind Bedrock keeps its own
//! fixed three attempts.

use std::sync::OnceLock;
use std::time::Duration;

use regex::Regex;
use serde_json::Value;

use super::http::{Body, HttpError};
use super::stream::{Abort, StreamWriter};
// The settings live with the request options that carry them; named here too.
pub use super::types::ProviderRetry;

/// Whose retry rules a provider follows (the client library pi drives it with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rules {
    /// The OpenAI and Anthropic SDKs (and Azure, through OpenAI's): connection failures,
    /// 408, 409, 429 and 5xx, unless `x-should-retry` says otherwise; `Retry-After` honoured up
    /// to the cap, else 0.5 s doubling to 8 s with up to 25 % jitter.
    OpenAiSdk,
    /// Google's GenAI SDK as pi wraps it: HTTP 408, 409, 429 and 5xx only, with the same
    /// backoff and no server hints.
    GoogleSdk,
    /// pi's own Codex loop: 429 (but not exhausted quotas) and 500–504 or rate-limit wording,
    /// and connection failures; `Retry-After` honoured up to the cap, else 1 s doubling.
    Codex,
    /// The AWS SDK's standard mode: three attempts whatever the settings, for throttling,
    /// 5xx and connection failures, with full-jitter backoff (0.1 s, or 0.5 s when throttled).
    AwsSdk,
    /// No provider-level retries (pi 1.x's native Mistral client).
    Never,
}

/// What to do after a failed attempt.
#[derive(Debug, PartialEq)]
enum Next {
    Retry {
        delay_ms: u64,
    },
    GiveUp,
    /// Give up with this error instead (the server asked for a longer wait than allowed).
    Fail(HttpError),
}

const TERMINAL_RATE_LIMIT: &str = r"(?i)GoUsageLimitError|FreeUsageLimitError|Monthly usage limit reached|available balance|insufficient_quota|out of budget|quota exceeded|billing";
const CODEX_RETRYABLE_TEXT: &str =
    r"(?i)rate.?limit|overloaded|service.?unavailable|upstream.?connect|connection.?refused";
const AWS_THROTTLING: [&str; 14] = [
    "BandwidthLimitExceeded",
    "EC2ThrottledException",
    "LimitExceededException",
    "PriorRequestNotComplete",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "RequestThrottled",
    "RequestThrottledException",
    "SlowDown",
    "ThrottledException",
    "Throttling",
    "ThrottlingException",
    "TooManyRequestsException",
    "TransactionInProgressException",
];

fn is_terminal_rate_limit(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(TERMINAL_RATE_LIMIT).expect("valid pattern"))
        .is_match(text)
}

fn is_codex_retryable_text(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(CODEX_RETRYABLE_TEXT).expect("valid pattern"))
        .is_match(text)
}

/// A number in `[0, 1)` for jitter.
fn unit_random() -> f64 {
    let b = crate::util::random::bytes::<8>();
    (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
}

/// pi's message when the server wants a longer wait than `retry.provider.maxRetryDelayMs`.
fn delay_too_long(err: &HttpError, delay_ms: u64, cap_ms: u64, with_message: bool) -> HttpError {
    let secs = |ms: u64| ms.div_ceil(1000);
    let mut message = format!(
        "Server requested {}s retry delay (max: {}s)",
        secs(delay_ms),
        secs(cap_ms)
    );
    if with_message {
        message = format!("{message}. {}", err.message);
    }
    HttpError {
        message,
        ..err.clone()
    }
}

/// The server's wait, or `Fail` when it is over the cap (0 = no cap).
fn server_hint(err: &HttpError, cap_ms: u64, with_message: bool) -> Option<Next> {
    let ms = err.retry_after_ms?;
    Some(if cap_ms > 0 && ms > cap_ms {
        Next::Fail(delay_too_long(err, ms, cap_ms, with_message))
    } else {
        Next::Retry { delay_ms: ms }
    })
}

fn sdk_backoff_ms(retry_index: u32) -> u64 {
    let base = (0.5 * 2f64.powi(retry_index.min(16) as i32)).min(8.0) * 1000.0;
    (base * (1.0 - unit_random() * 0.25)) as u64
}

/// The decision after failed attempt number `retry_index` (0-based) with retries left.
fn next(rules: Rules, err: &HttpError, retry_index: u32, policy: &ProviderRetry) -> Next {
    if err.permanent {
        return Next::GiveUp;
    }
    let cap = policy.max_retry_delay_ms;
    match rules {
        Rules::Never => Next::GiveUp,
        Rules::OpenAiSdk | Rules::GoogleSdk => {
            let retryable = match (rules, err.should_retry, err.status) {
                (Rules::OpenAiSdk, Some(verdict), _) => verdict,
                (Rules::OpenAiSdk, None, None) => true,
                (_, _, Some(s)) => matches!(s, 408 | 409 | 429) || s >= 500,
                (_, _, None) => false,
            };
            if !retryable {
                return Next::GiveUp;
            }
            let hint = (rules == Rules::OpenAiSdk)
                .then(|| server_hint(err, cap, true))
                .flatten();
            hint.unwrap_or(Next::Retry {
                delay_ms: sdk_backoff_ms(retry_index),
            })
        }
        Rules::Codex => {
            let backoff = Next::Retry {
                delay_ms: 1000u64 << retry_index.min(20),
            };
            let Some(status) = err.status else {
                return if err.message.contains("usage limit") {
                    Next::GiveUp
                } else {
                    backoff
                };
            };
            let retryable = if status == 429 && is_terminal_rate_limit(&err.body) {
                false
            } else {
                matches!(status, 429 | 500..=504) || is_codex_retryable_text(&err.body)
            };
            if !retryable {
                return Next::GiveUp;
            }
            server_hint(err, cap, false).unwrap_or(backoff)
        }
        Rules::AwsSdk => {
            let error_name = err.error_type.as_deref().unwrap_or("");
            let error_name = error_name.split(':').next().unwrap_or("");
            let throttled = err.status == Some(429)
                || AWS_THROTTLING.contains(&error_name)
                || AWS_THROTTLING
                    .iter()
                    .any(|code| err.body.contains(&format!("\"{code}\"")));
            let transient = err.status.is_none_or(|s| s >= 500);
            if !throttled && !transient {
                return Next::GiveUp;
            }
            let base = if throttled { 500.0 } else { 100.0 };
            let ceiling = (base * 2f64.powi(retry_index.min(16) as i32)).min(20_000.0);
            Next::Retry {
                delay_ms: (unit_random() * ceiling) as u64,
            }
        }
    }
}

/// A transient failure whose server wait is over the cap (0 = none) says so in pi's words
/// even with no provider retries left: the agent-level auto-retry honours the same wait and
/// gives up on it, and the user learns why.
fn over_the_cap(err: HttpError, cap_ms: u64) -> HttpError {
    let transient = err
        .status
        .is_some_and(|s| matches!(s, 408 | 409 | 429) || s >= 500);
    match err.retry_after_ms {
        Some(ms) if transient && cap_ms > 0 && ms > cap_ms => {
            delay_too_long(&err, ms, cap_ms, true)
        }
        _ => err,
    }
}

/// How many retries `rules` allow under `policy`.
fn retry_budget(rules: Rules, policy: &ProviderRetry) -> u32 {
    match rules {
        Rules::Never => 0,
        Rules::AwsSdk => 2,
        _ => policy.max_retries,
    }
}

/// Sleeps `ms`, waking every 50 ms to honour the abort flag. `false` if aborted.
fn sleep_unless_aborted(ms: u64, abort: &Abort) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_millis(ms);
    loop {
        if abort.is_aborted() {
            return false;
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            return true;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
    }
}

/// POSTs a provider request, retrying failed attempts under `rules` and `policy`. The final
/// failure keeps the server's `Retry-After` for the agent-level policy; the provider makes it
/// a `ProviderError` (`HttpError::into_provider_error`), rewording it first if its client does.
pub fn post_json(
    w: &mut StreamWriter,
    rules: Rules,
    policy: &ProviderRetry,
    url: &str,
    headers: &[(String, String)],
    body: &Value,
) -> Result<Body, HttpError> {
    post(w, rules, policy, url, headers, &body.to_string())
}

/// [`post_json`] for a body already serialized (signed requests).
pub fn post(
    w: &mut StreamWriter,
    rules: Rules,
    policy: &ProviderRetry,
    url: &str,
    headers: &[(String, String)],
    body: &str,
) -> Result<Body, HttpError> {
    let timeout = policy.timeout_ms.map(Duration::from_millis);
    let budget = retry_budget(rules, policy);
    let mut retry_index = 0;
    loop {
        let err = match super::http::post_json_with(url, headers, body, timeout) {
            Ok(resp) => return Ok(resp),
            Err(e) => e,
        };
        let decision = if retry_index >= budget || w.abort.is_aborted() {
            Next::GiveUp
        } else {
            next(rules, &err, retry_index, policy)
        };
        match decision {
            Next::Retry { delay_ms } => {
                if !sleep_unless_aborted(delay_ms, &w.abort) {
                    return Err(err);
                }
                retry_index += 1;
            }
            Next::GiveUp => return Err(over_the_cap(err, policy.max_retry_delay_ms)),
            Next::Fail(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, body: &str) -> HttpError {
        HttpError {
            status: Some(code),
            message: format!("{code} {body}"),
            body: body.into(),
            ..Default::default()
        }
    }

    fn transport(message: &str) -> HttpError {
        HttpError {
            message: message.into(),
            ..Default::default()
        }
    }

    fn retries(rules: Rules, err: &HttpError) -> bool {
        matches!(
            next(rules, err, 0, &ProviderRetry::default()),
            Next::Retry { .. }
        )
    }

    #[test]
    fn sdk_rules_follow_status_and_hints() {
        let r = Rules::OpenAiSdk;
        for code in [408, 409, 429, 500, 503, 529] {
            assert!(retries(r, &status(code, "")), "{code}");
        }
        for code in [400, 401, 404, 422] {
            assert!(!retries(r, &status(code, "")), "{code}");
        }
        assert!(retries(
            r,
            &transport("Connection error: could not connect")
        ));
        let mut veto = status(503, "");
        veto.should_retry = Some(false);
        assert!(!retries(r, &veto));
        let mut insist = status(400, "");
        insist.should_retry = Some(true);
        assert!(retries(r, &insist));
        let invalid = HttpError {
            permanent: true,
            ..transport("Invalid URL")
        };
        assert!(!retries(r, &invalid));
        // Google's SDK errors carry no headers and connection failures are not its errors.
        assert!(!retries(Rules::GoogleSdk, &transport("fetch failed")));
        assert!(!retries(Rules::GoogleSdk, &insist));
        assert!(retries(Rules::GoogleSdk, &status(503, "")));
        assert!(!retries(Rules::Never, &status(503, "")));
    }

    #[test]
    fn backoff_and_server_delays() {
        let policy = ProviderRetry::default();
        for (index, top) in [(0, 500), (1, 1000), (2, 2000), (5, 8000)] {
            let Next::Retry { delay_ms } = next(Rules::OpenAiSdk, &status(500, ""), index, &policy)
            else {
                panic!("no retry")
            };
            assert!(
                delay_ms <= top && delay_ms >= top * 3 / 4,
                "{index}: {delay_ms}"
            );
        }
        let mut hinted = status(429, "slow down");
        hinted.retry_after_ms = Some(1500);
        assert_eq!(
            next(Rules::OpenAiSdk, &hinted, 0, &policy),
            Next::Retry { delay_ms: 1500 }
        );
        hinted.retry_after_ms = Some(90_500);
        let Next::Fail(e) = next(Rules::OpenAiSdk, &hinted, 0, &policy) else {
            panic!("over the cap must fail")
        };
        assert_eq!(
            e.message,
            "Server requested 91s retry delay (max: 60s). 429 slow down"
        );
        let uncapped = ProviderRetry {
            max_retry_delay_ms: 0,
            ..policy
        };
        assert_eq!(
            next(Rules::OpenAiSdk, &hinted, 0, &uncapped),
            Next::Retry { delay_ms: 90_500 }
        );
        // Google's SDK never sees the header.
        assert!(matches!(
            next(Rules::GoogleSdk, &hinted, 0, &policy),
            Next::Retry { delay_ms } if delay_ms <= 500
        ));
    }

    #[test]
    fn codex_and_aws_rules() {
        let p = ProviderRetry::default();
        assert_eq!(
            next(Rules::Codex, &status(503, ""), 2, &p),
            Next::Retry { delay_ms: 4000 }
        );
        assert!(!retries(
            Rules::Codex,
            &status(429, r#"{"error":{"code":"insufficient_quota"}}"#)
        ));
        assert!(retries(
            Rules::Codex,
            &status(400, "upstream connect error")
        ));
        assert!(!retries(Rules::Codex, &status(400, "bad request")));
        assert!(retries(Rules::Codex, &transport("Network error: reset")));
        assert!(!retries(
            Rules::Codex,
            &transport("You have hit your usage limit")
        ));
        let mut throttled = status(400, "");
        throttled.error_type = Some("ThrottlingException:http://internal".into());
        assert!(retries(Rules::AwsSdk, &throttled));
        assert!(retries(Rules::AwsSdk, &status(503, "")));
        assert!(!retries(Rules::AwsSdk, &status(400, "ValidationException")));
        assert_eq!(retry_budget(Rules::AwsSdk, &p), 2);
        assert_eq!(retry_budget(Rules::OpenAiSdk, &p), 0);
    }
}
