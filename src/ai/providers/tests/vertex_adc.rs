//! Tests of Google application-default credentials: the service-account JWT (verified with the
//! key's public half), token exchanges against a one-shot local server, readable failures.

use super::*;
use crate::ai::providers::anthropic::test_support::serve_once;
use std::collections::HashMap;

fn key_pem() -> String {
    let path = format!(
        "{}/fixtures/vertex/test_service_account_key.pem",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k: &str| map.get(k).cloned()
}

fn b64url_decode(s: &str) -> Vec<u8> {
    crate::util::encoding::base64_decode(s).unwrap()
}

#[test]
fn service_account_jwt_is_rs256_signed_and_verifiable() {
    use ring::signature::{KeyPair, RsaKeyPair, UnparsedPublicKey, RSA_PKCS1_2048_8192_SHA256};
    let pem = key_pem();
    let jwt = service_account_jwt(
        "pi@project.iam.gserviceaccount.com",
        &pem,
        Some("kid-1"),
        "https://oauth2.googleapis.com/token",
        1_700_000_000,
    )
    .unwrap();
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3);
    let header: Value = serde_json::from_slice(&b64url_decode(parts[0])).unwrap();
    assert_eq!(
        header,
        serde_json::json!({"alg": "RS256", "typ": "JWT", "kid": "kid-1"})
    );
    let claims: Value = serde_json::from_slice(&b64url_decode(parts[1])).unwrap();
    assert_eq!(
        claims,
        serde_json::json!({
            "iss": "pi@project.iam.gserviceaccount.com",
            "scope": "https://www.googleapis.com/auth/cloud-platform",
            "aud": "https://oauth2.googleapis.com/token",
            "iat": 1_700_000_000,
            "exp": 1_700_003_600,
        })
    );
    let key = RsaKeyPair::from_pkcs8(&pem_to_der(&pem).unwrap()).unwrap();
    let public = UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, key.public_key().as_ref());
    let signed = format!("{}.{}", parts[0], parts[1]);
    public
        .verify(signed.as_bytes(), &b64url_decode(parts[2]))
        .expect("signature verifies");
    assert!(public
        .verify(b"tampered", &b64url_decode(parts[2]))
        .is_err());
    assert!(service_account_jwt("a", "not a key", None, "aud", 0).is_err());
}

#[test]
fn service_account_exchanges_an_assertion_at_its_token_uri() {
    let (base, server) = serve_once(
        "200 OK",
        "",
        br#"{"access_token":"ya29.sa","expires_in":3599,"token_type":"Bearer"}"#.to_vec(),
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sa.json");
    let creds = serde_json::json!({
        "type": "service_account",
        "project_id": "sa-project",
        "private_key_id": "kid-2",
        "private_key": key_pem(),
        "client_email": "exchange@sa-project.iam.gserviceaccount.com",
        "token_uri": format!("{base}/token"),
    });
    std::fs::write(&file, creds.to_string()).unwrap();
    let env = env_of(&[("GOOGLE_APPLICATION_CREDENTIALS", file.to_str().unwrap())]);
    let token = access_token(&env).unwrap();
    assert_eq!(
        token,
        AccessToken {
            token: "ya29.sa".into(),
            quota_project: None,
            project: Some("sa-project".into()),
        }
    );
    let req = server.join().unwrap();
    assert!(req.starts_with("POST /token "), "{req}");
    let body = req.split("\r\n\r\n").nth(1).unwrap();
    assert!(
        body.starts_with(
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=ey"
        ),
        "{body}"
    );
    // Cached until shortly before expiry: no second request (the server has gone).
    assert_eq!(access_token(&env).unwrap().token, "ya29.sa");
}

#[test]
fn authorized_user_refresh_and_its_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("adc.json");
    std::fs::write(
        &file,
        r#"{"type":"authorized_user","client_id":"cid.apps","client_secret":"cs","refresh_token":"1//rt-error","quota_project_id":"billing"}"#,
    )
    .unwrap();
    let (base, _server) = serve_once(
        "400 Bad Request",
        "",
        br#"{"error":"invalid_grant","error_description":"Token has been expired or revoked."}"#
            .to_vec(),
    );
    let env = env_of(&[
        ("GOOGLE_APPLICATION_CREDENTIALS", file.to_str().unwrap()),
        ("PI_GOOGLE_TOKEN_URL", &base),
    ]);
    assert_eq!(
        access_token(&env).unwrap_err(),
        "Google token refresh failed (400): invalid_grant: Token has been expired or revoked. (run `gcloud auth application-default login` if the credentials expired)"
    );

    let other = dir.path().join("weird.json");
    std::fs::write(&other, r#"{"type":"external_account"}"#).unwrap();
    let env = env_of(&[("GOOGLE_APPLICATION_CREDENTIALS", other.to_str().unwrap())]);
    assert!(access_token(&env)
        .unwrap_err()
        .contains("\"external_account\" is not supported"));
}

#[test]
fn default_path_is_gclouds() {
    let env = env_of(&[("HOME", "/home/u")]);
    assert_eq!(
        credentials_path(&env).unwrap(),
        PathBuf::from("/home/u/.config/gcloud/application_default_credentials.json")
    );
    let env = env_of(&[
        ("HOME", "/home/u"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "/k.json"),
    ]);
    assert_eq!(credentials_path(&env).unwrap(), PathBuf::from("/k.json"));
}
