//! The small encodings OAuth needs: PKCE verifier/challenge (S256 via `ring`), random state,
//! unpadded base64url, and `application/x-www-form-urlencoded` bodies and query strings.

use ring::digest::{digest, SHA256};
use ring::rand::{SecureRandom, SystemRandom};

/// A PKCE pair: the secret verifier we keep and the challenge we send.
#[derive(Debug, Clone)]
pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

/// A fresh verifier (32 random bytes, base64url) and its S256 challenge.
pub fn generate() -> Result<Pkce, String> {
    let verifier = base64url(&random_bytes::<32>()?);
    Ok(Pkce {
        challenge: challenge_for(&verifier),
        verifier,
    })
}

/// `BASE64URL(SHA256(verifier))` (RFC 7636 S256).
pub fn challenge_for(verifier: &str) -> String {
    base64url(digest(&SHA256, verifier.as_bytes()).as_ref())
}

/// `N` bytes from the system's secure random source.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], String> {
    let mut out = [0u8; N];
    SystemRandom::new()
        .fill(&mut out)
        .map_err(|_| "no secure random source available".to_string())?;
    Ok(out)
}

/// 16 random bytes as lower-case hex (an OAuth `state`).
pub fn random_state() -> Result<String, String> {
    Ok(random_bytes::<16>()?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Unpadded base64url.
pub fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(URL_SAFE[(n >> (18 - 6 * i)) as usize & 63] as char);
        }
    }
    out
}

/// Percent-encodes everything but RFC 3986 unreserved characters (spaces become `%20`).
pub fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `k=v&k=v`, both sides encoded (a form body or a query string).
pub fn form_encode(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", url_encode(k), url_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Decodes `%XX` escapes and `+` as space; malformed escapes are kept literally.
pub fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match std::str::from_utf8(&b[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(v) => {
                        out.push(v);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The pairs of a query string or form body (without a leading `?`).
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (url_decode(k), url_decode(v))
        })
        .collect()
}

/// The first value of `key` in a query string.
pub fn query_value(q: &str, key: &str) -> Option<String> {
    parse_query(q)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_challenge_matches_rfc7636_appendix_b() {
        assert_eq!(
            challenge_for("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let p = generate().unwrap();
        assert_eq!(p.verifier.len(), 43);
        assert_eq!(p.challenge, challenge_for(&p.verifier));
        assert_eq!(random_state().unwrap().len(), 32);
    }

    #[test]
    fn base64url_round_trips() {
        use crate::ai::jwt::base64_decode;
        for n in 0..40u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
            assert_eq!(base64_decode(&base64url(&bytes)).unwrap(), bytes);
        }
        assert_eq!(base64url(b"\xfb\xff"), "-_8");
    }

    #[test]
    fn forms_and_queries() {
        let body = form_encode(&[("scope", "read:user a"), ("x", "é&=")]);
        assert_eq!(body, "scope=read%3Auser%20a&x=%C3%A9%26%3D");
        assert_eq!(
            parse_query(&body),
            [
                ("scope".to_string(), "read:user a".to_string()),
                ("x".to_string(), "é&=".to_string())
            ]
        );
        assert_eq!(query_value("code=a+b&state=%zz", "state").unwrap(), "%zz");
        assert_eq!(url_decode("100%"), "100%");
    }
}
