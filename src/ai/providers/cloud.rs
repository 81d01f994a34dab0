//! Small helpers the cloud-credential providers (Bedrock, Vertex) share: an injectable
//! environment (so credential chains are tested without touching the process environment),
//! UTC date formatting and parsing, percent-encoding, one short blocking request for token and
//! credential endpoints, and a process-wide cache for short-lived credentials.

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

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

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// `YYYYMMDDTHHMMSSZ`, the SigV4 timestamp.
pub fn amz_date(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let r = secs.rem_euclid(86_400);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        r / 3600,
        r % 3600 / 60,
        r % 60
    )
}

/// Seconds since the epoch for `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` (credential expiries).
pub fn parse_iso_secs(s: &str) -> Option<i64> {
    let s = s.trim();
    let num = |a: usize, b: usize| -> Option<i64> {
        let t = s.get(a..b)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, sec) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    let mut rest = s.get(19..)?;
    if let Some(r) = rest.strip_prefix('.') {
        rest = r.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let offset = match rest {
        "Z" | "z" | "" => 0,
        r if r.len() == 6 => {
            let sign = if r.starts_with('-') { -1 } else { 1 };
            let oh: i64 = r.get(1..3)?.parse().ok()?;
            let om: i64 = r.get(4..6)?.parse().ok()?;
            sign * (oh * 3600 + om * 60)
        }
        _ => return None,
    };
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset)
}

/// RFC 3986 percent-encoding of everything but unreserved characters (and `/` when kept).
pub fn uri_encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else if b == b'/' && keep_slash {
            out.push('/');
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes (and `+` as space when `plus` is set), leaving malformed ones as is.
pub fn uri_decode(s: &str, plus: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `application/x-www-form-urlencoded` body from pairs.
pub fn form_encode(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", uri_encode(k, false), uri_encode(v, false)))
        .collect::<Vec<_>>()
        .join("&")
}

/// One short request to a credential or token endpoint: `(status, body)` for any status the
/// server answers with; `Err` only when it could not be reached.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: Option<&str>,
) -> Result<(u16, String), String> {
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .build();
    let mut req = agent.request(method, url);
    for (k, v) in headers {
        req = req.set(k, v);
    }
    let result = match body {
        Some(b) => req.send_string(b),
        None => req.call(),
    };
    let resp = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(ureq::Error::Transport(t)) => return Err(format!("could not reach {url}: {t}")),
    };
    let status = resp.status();
    let mut text = String::new();
    resp.into_reader()
        .take(1 << 20)
        .read_to_string(&mut text)
        .map_err(|e| format!("reading {url}: {e}"))?;
    Ok((status, text))
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
    fn dates_round_trip() {
        assert_eq!(amz_date(1_440_938_160), "20150830T123600Z");
        assert_eq!(amz_date(951_782_400), "20000229T000000Z");
        assert_eq!(parse_iso_secs("2015-08-30T12:36:00Z"), Some(1_440_938_160));
        assert_eq!(
            parse_iso_secs("2015-08-30T12:36:00.123Z"),
            Some(1_440_938_160)
        );
        assert_eq!(
            parse_iso_secs("2015-08-30T14:36:00+02:00"),
            Some(1_440_938_160)
        );
        assert_eq!(parse_iso_secs("yesterday"), None);
    }

    #[test]
    fn encoding() {
        assert_eq!(uri_encode("a b/c:d~", false), "a%20b%2Fc%3Ad~");
        assert_eq!(uri_encode("a b/c", true), "a%20b/c");
        assert_eq!(uri_decode("a%20b%3a+c%", true), "a b: c%");
        assert_eq!(form_encode(&[("a", "x y"), ("b", "=")]), "a=x%20y&b=%3D");
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
