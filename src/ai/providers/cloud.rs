//! Small helpers the cloud-credential providers (Bedrock, Vertex) share: an injectable
//! environment (so credential chains are tested without touching the process environment),
//! the SigV4 date stamp, one short blocking request for token and credential endpoints, and a
//! process-wide cache for short-lived credentials.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// Reads one environment variable; empty values count as unset (as pi treats them).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// An environment a stream thread can own (the process environment, or a map in tests).
pub type SharedEnv = std::sync::Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The real process environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

pub fn home_dir(env: Env) -> Option<PathBuf> {
    env("HOME").map(PathBuf::from)
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> i64 {
    crate::ai::types::now_ms() / 1000
}

/// `YYYYMMDDTHHMMSSZ`, the SigV4 timestamp.
pub fn amz_date(secs: i64) -> String {
    let (y, m, d, h, mi, s) = crate::util::date::utc_fields(secs);
    format!("{y:04}{m:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

/// One short request to a credential or token endpoint: `(status, body)` for any status the
/// server answers with; `Err` only when it could not be reached.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: Option<&str>,
) -> Result<(u16, String), String> {
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    crate::ai::http::request(method, url, &headers, body)
        .map_err(|e| format!("could not reach {url}: {e}"))
}

/// Short-lived credentials kept per key until shortly before they expire.
pub struct ExpiringCache<T: Clone> {
    slots: Mutex<Option<HashMap<String, (T, i64)>>>,
}

/// Credentials are refreshed this long before their stated expiry.
const EXPIRY_MARGIN_SECS: i64 = 5 * 60;

impl<T: Clone> Default for ExpiringCache<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone> ExpiringCache<T> {
    pub const fn new() -> Self {
        ExpiringCache {
            slots: Mutex::new(None),
        }
    }

    pub fn get(&self, key: &str) -> Option<T> {
        let slots = self.slots.lock().ok()?;
        let (value, expires) = slots.as_ref()?.get(key)?;
        (now_secs() + EXPIRY_MARGIN_SECS < *expires).then(|| value.clone())
    }

    pub fn put(&self, key: &str, value: T, expires_at: i64) {
        if let Ok(mut slots) = self.slots.lock() {
            slots
                .get_or_insert_with(HashMap::new)
                .insert(key.to_string(), (value, expires_at));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amz_dates() {
        assert_eq!(amz_date(1_440_938_160), "20150830T123600Z");
        assert_eq!(amz_date(951_782_400), "20000229T000000Z");
    }

    #[test]
    fn cache_expires_early() {
        let c: ExpiringCache<u32> = ExpiringCache::new();
        c.put("a", 1, now_secs() + 3600);
        c.put("b", 2, now_secs() + 60);
        assert_eq!(c.get("a"), Some(1));
        assert_eq!(c.get("b"), None);
        assert_eq!(c.get("c"), None);
    }
}
