//! AWS Signature Version 4 for one request (header form): canonical request, string to sign,
//! the derived signing key and the `Authorization` header, with HMAC-SHA256 from `ring`.
//! Non-S3 services sign the already-encoded path encoded once more, which is why a Bedrock
//! model id such as `…-v1:0` appears as `%253A` in the canonical request.

use ring::{digest, hmac};

use crate::util::encoding::{hex, percent_decode, percent_encode};
use crate::util::sort;

/// AWS credentials as the signer needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex(digest::digest(&digest::SHA256, data).as_ref())
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> Vec<u8> {
    let k = hmac::Key::new(hmac::HMAC_SHA256, key);
    hmac::sign(&k, data).as_ref().to_vec()
}

/// `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service), "aws4_request")`.
pub fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> Vec<u8> {
    let k = hmac_sha256(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k = hmac_sha256(&k, region.as_bytes());
    let k = hmac_sha256(&k, service.as_bytes());
    hmac_sha256(&k, b"aws4_request")
}

/// `scheme://authority/path?query` split into (host header value, path, query).
fn split_url(url: &str) -> (String, String, String) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let (authority, path_query) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => match rest.find('?') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        },
    };
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    // The Host header carries the port only when it is not the scheme's default.
    let port_at = match authority.rfind(']') {
        Some(end) => authority[end..].find(':').map(|i| end + i),
        None => authority.rfind(':'),
    };
    let host = match port_at {
        Some(i)
            if matches!(
                (scheme, &authority[i + 1..]),
                ("https", "443") | ("http", "80")
            ) =>
        {
            &authority[..i]
        }
        _ => authority,
    };
    let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
    let path = if path.is_empty() { "/" } else { path };
    (
        host.to_ascii_lowercase(),
        path.to_string(),
        query.to_string(),
    )
}

fn canonical_uri(path: &str) -> String {
    path.split('/')
        .map(|seg| percent_encode(seg, b""))
        .collect::<Vec<_>>()
        .join("/")
}

fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (
                percent_encode(&percent_decode(k, false), b""),
                percent_encode(&percent_decode(v, false), b""),
            )
        })
        .collect();
    sort::sort(&mut pairs);
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// Everything one signature depends on besides the request itself.
pub struct Scope<'a> {
    pub region: &'a str,
    pub service: &'a str,
    /// `YYYYMMDDTHHMMSSZ`.
    pub amz_date: &'a str,
}

/// The signed parts of a request, kept for tests and debugging.
#[derive(Debug)]
pub struct Signature {
    pub canonical_request: String,
    pub string_to_sign: String,
    pub authorization: String,
}

/// Signs a request and returns the headers to add (`x-amz-date`, `x-amz-security-token` when
/// there is a session token, `authorization`). `headers` are the other headers that will be
/// sent and should be signed (e.g. `content-type`); `host` is derived from the URL.
pub fn sign(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
    creds: &Credentials,
    scope: &Scope,
) -> Vec<(String, String)> {
    let sig = signature(method, url, headers, body, creds, scope);
    let mut out = vec![("x-amz-date".to_string(), scope.amz_date.to_string())];
    if let Some(t) = &creds.session_token {
        out.push(("x-amz-security-token".to_string(), t.clone()));
    }
    out.push(("authorization".to_string(), sig.authorization));
    out
}

pub fn signature(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
    creds: &Credentials,
    scope: &Scope,
) -> Signature {
    let (host, path, query) = split_url(url);
    let mut canon: Vec<(String, String)> = vec![
        ("host".into(), host),
        ("x-amz-date".into(), scope.amz_date.to_string()),
    ];
    if let Some(t) = &creds.session_token {
        canon.push(("x-amz-security-token".into(), t.clone()));
    }
    for (k, v) in headers {
        let k = k.to_ascii_lowercase();
        if k == "authorization" || canon.iter().any(|(n, _)| *n == k) {
            continue;
        }
        canon.push((k, v.split_whitespace().collect::<Vec<_>>().join(" ")));
    }
    sort::sort(&mut canon);
    let signed_headers = canon
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let header_block: String = canon.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let canonical_request = format!(
        "{method}\n{}\n{}\n{header_block}\n{signed_headers}\n{}",
        canonical_uri(&path),
        canonical_query(&query),
        sha256_hex(body)
    );
    let date = &scope.amz_date[..scope.amz_date.len().min(8)];
    let credential_scope = format!("{date}/{}/{}/aws4_request", scope.region, scope.service);
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{credential_scope}\n{}",
        scope.amz_date,
        sha256_hex(canonical_request.as_bytes())
    );
    let key = signing_key(&creds.secret_access_key, date, scope.region, scope.service);
    let sig = hex(&hmac_sha256(&key, string_to_sign.as_bytes()));
    let authorization = format!(
        "AWS4-HMAC-SHA256 Credential={}/{credential_scope}, SignedHeaders={signed_headers}, Signature={sig}",
        creds.access_key_id
    );
    Signature {
        canonical_request,
        string_to_sign,
        authorization,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The credentials and clock of AWS's published SigV4 test suite.
    fn suite() -> (Credentials, Scope<'static>) {
        (
            Credentials {
                access_key_id: "AKIDEXAMPLE".into(),
                secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
                session_token: None,
            },
            Scope {
                region: "us-east-1",
                service: "service",
                amz_date: "20150830T123600Z",
            },
        )
    }

    const PREFIX: &str = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=";

    #[test]
    fn get_vanilla() {
        let (c, s) = suite();
        let sig = signature("GET", "https://example.amazonaws.com/", &[], b"", &c, &s);
        assert_eq!(
            sig.canonical_request,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sig.string_to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63"
        );
        assert_eq!(
            sig.authorization,
            format!("{PREFIX}5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
        );
    }

    #[test]
    fn query_order_and_post_vanilla() {
        let (c, s) = suite();
        let q = signature(
            "GET",
            "https://example.amazonaws.com/?Param2=value2&Param1=value1",
            &[],
            b"",
            &c,
            &s,
        );
        assert_eq!(
            q.authorization,
            format!("{PREFIX}b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500")
        );
        let p = signature("POST", "https://example.amazonaws.com", &[], b"", &c, &s);
        assert_eq!(
            p.authorization,
            format!("{PREFIX}5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b")
        );
    }

    /// The signing-key example of AWS's SigV4 documentation (IAM, 2015-08-30).
    #[test]
    fn derived_signing_key() {
        let k = signing_key(
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "20150830",
            "us-east-1",
            "iam",
        );
        assert_eq!(
            hex(&k),
            "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9"
        );
    }

    #[test]
    fn bedrock_paths_are_encoded_twice_and_ports_kept() {
        let (mut c, s) = suite();
        c.session_token = Some("tok".into());
        let sig = signature(
            "POST",
            "http://127.0.0.1:8080/model/anthropic.claude-v1%3A0/converse-stream",
            &[("Content-Type".into(), "application/json".into())],
            b"{}",
            &c,
            &s,
        );
        let lines: Vec<&str> = sig.canonical_request.lines().collect();
        assert_eq!(lines[1], "/model/anthropic.claude-v1%253A0/converse-stream");
        assert_eq!(lines[3], "content-type:application/json");
        assert_eq!(lines[4], "host:127.0.0.1:8080");
        assert_eq!(lines[6], "x-amz-security-token:tok");
        assert_eq!(
            lines[8],
            "content-type;host;x-amz-date;x-amz-security-token"
        );
        assert_eq!(
            split_url("https://bedrock-runtime.us-east-1.amazonaws.com:443/x").0,
            "bedrock-runtime.us-east-1.amazonaws.com"
        );
        let headers = sign("POST", "https://h/", &[], b"", &c, &s);
        let names: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["x-amz-date", "x-amz-security-token", "authorization"]
        );
    }
}
