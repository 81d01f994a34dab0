//! What OAuth needs on top of the bottom-floor encodings: the PKCE verifier/challenge (S256 via
//! `ring`), a random `state`, and reading query strings.

use ring::digest::{digest, SHA256};

use crate::util::encoding::{base64url_encode, hex, percent_decode};
use crate::util::random::{secure_bytes, NoSecureRandom};

/// Form bodies and query strings, as every OAuth flow sends them.
pub use crate::util::encoding::form_encode;

/// A PKCE pair: the secret verifier we keep and the challenge we send.
#[derive(Debug, Clone)]
pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

/// A fresh verifier (32 random bytes, base64url) and its S256 challenge.
pub fn generate() -> Result<Pkce, NoSecureRandom> {
    let verifier = base64url_encode(&secure_bytes::<32>()?);
    Ok(Pkce {
        challenge: challenge_for(&verifier),
        verifier,
    })
}

/// `BASE64URL(SHA256(verifier))` (RFC 7636 S256).
pub fn challenge_for(verifier: &str) -> String {
    base64url_encode(digest(&SHA256, verifier.as_bytes()).as_ref())
}

/// 16 random bytes as lower-case hex (an OAuth `state`).
pub fn random_state() -> Result<String, NoSecureRandom> {
    Ok(hex(&secure_bytes::<16>()?))
}

/// The pairs of a query string or form body (without a leading `?`).
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k, true), percent_decode(v, true))
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
    }
}
