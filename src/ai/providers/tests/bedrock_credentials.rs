//! Tests of the Bedrock credential chain, region and endpoint rules, against temp files and a
//! one-shot local server (never the network, never the process environment).

use super::*;
use crate::ai::providers::anthropic::test_support::serve_once;
use std::collections::HashMap;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k: &str| map.get(k).cloned()
}

fn keys(id: &str, secret: &str, token: Option<&str>) -> Auth {
    Auth::SigV4(Credentials {
        access_key_id: id.into(),
        secret_access_key: secret.into(),
        session_token: token.map(String::from),
    })
}

#[test]
fn bearer_token_wins_unless_auth_is_skipped() {
    let env = env_of(&[
        ("AWS_BEARER_TOKEN_BEDROCK", "bt"),
        ("AWS_ACCESS_KEY_ID", "id"),
        ("AWS_SECRET_ACCESS_KEY", "s"),
    ]);
    assert_eq!(resolve_auth(&env), Ok(Auth::Bearer("bt".into())));
    let env = env_of(&[
        ("AWS_BEARER_TOKEN_BEDROCK", "bt"),
        ("AWS_BEDROCK_SKIP_AUTH", "1"),
    ]);
    assert_eq!(
        resolve_auth(&env),
        Ok(keys("dummy-access-key", "dummy-secret-key", None))
    );
}

#[test]
fn environment_keys_with_session_token() {
    let env = env_of(&[
        ("AWS_ACCESS_KEY_ID", "AKID"),
        ("AWS_SECRET_ACCESS_KEY", "secret"),
        ("AWS_SESSION_TOKEN", "tok"),
    ]);
    assert_eq!(resolve_auth(&env), Ok(keys("AKID", "secret", Some("tok"))));
}

#[test]
fn nothing_configured_names_every_option() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_str().unwrap();
    let err = resolve_auth(&env_of(&[("HOME", home)])).unwrap_err();
    assert_eq!(err, MISSING_CREDENTIALS);
    assert!(err.contains("AWS_PROFILE") && err.contains("AWS_BEARER_TOKEN_BEDROCK"));
}

#[test]
fn shared_files_by_profile() {
    let dir = tempfile::tempdir().unwrap();
    let aws = dir.path().join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(
        aws.join("credentials"),
        "# comment\n[default]\naws_access_key_id = DEF\naws_secret_access_key = defsecret\n\n\
         [work]\naws_access_key_id=WORK\naws_secret_access_key=worksecret\naws_session_token=wt\n",
    )
    .unwrap();
    std::fs::write(
        aws.join("config"),
        "[default]\nregion = eu-west-1\n[profile work]\nregion = ap-south-1\n\
         [profile cfgonly]\naws_access_key_id = CFG\naws_secret_access_key = cfgsecret\n\
         [profile sso]\nsso_session = corp\n",
    )
    .unwrap();
    let home = dir.path().to_str().unwrap();
    assert_eq!(
        resolve_auth(&env_of(&[("HOME", home)])),
        Ok(keys("DEF", "defsecret", None))
    );
    // AWS_PROFILE takes precedence over keys in the environment, as in the AWS SDK.
    let env = env_of(&[
        ("HOME", home),
        ("AWS_PROFILE", "work"),
        ("AWS_ACCESS_KEY_ID", "ENV"),
        ("AWS_SECRET_ACCESS_KEY", "envsecret"),
    ]);
    assert_eq!(
        resolve_auth(&env),
        Ok(keys("WORK", "worksecret", Some("wt")))
    );
    assert_eq!(profile_region(&env).as_deref(), Some("ap-south-1"));
    let env = env_of(&[("HOME", home), ("AWS_PROFILE", "cfgonly")]);
    assert_eq!(resolve_auth(&env), Ok(keys("CFG", "cfgsecret", None)));
    let err = resolve_auth(&env_of(&[("HOME", home), ("AWS_PROFILE", "nope")])).unwrap_err();
    assert!(err.contains("\"nope\" not found"), "{err}");
    let err = resolve_auth(&env_of(&[("HOME", home), ("AWS_PROFILE", "sso")])).unwrap_err();
    assert!(err.contains("SSO"), "{err}");

    // Explicit file locations replace ~/.aws.
    let other = dir.path().join("elsewhere");
    std::fs::write(
        &other,
        "[default]\naws_access_key_id=ALT\naws_secret_access_key=alt\n",
    )
    .unwrap();
    let env = env_of(&[
        ("HOME", "/nonexistent"),
        ("AWS_SHARED_CREDENTIALS_FILE", other.to_str().unwrap()),
    ]);
    assert_eq!(resolve_auth(&env), Ok(keys("ALT", "alt", None)));
}

#[test]
fn credential_process_output_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config");
    std::fs::write(
        &cfg,
        "[profile proc]\ncredential_process = printf '{\"Version\":1,\"AccessKeyId\":\"PROC\",\"SecretAccessKey\":\"ps\",\"SessionToken\":\"pt\"}'\n",
    )
    .unwrap();
    let env = env_of(&[
        ("HOME", "/nonexistent"),
        ("AWS_PROFILE", "proc"),
        ("AWS_CONFIG_FILE", cfg.to_str().unwrap()),
    ]);
    assert_eq!(resolve_auth(&env), Ok(keys("PROC", "ps", Some("pt"))));
}

#[test]
fn a_credential_process_that_hangs_is_stopped_at_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let cmd = format!("echo $$ > '{}'; exec sleep 1000", pid_file.display());
    let err = credential_process_within(&cmd, Duration::from_millis(300)).unwrap_err();
    assert!(err.contains("did not finish within 0.3s"), "{err}");
    assert!(err.contains("sleep 1000"), "{err}");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: signal 0 only asks whether the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    assert!(!alive, "the credential process {pid} was left running");
}

#[test]
fn a_failing_credential_process_reports_its_stderr() {
    let err =
        credential_process_within("echo no-such-profile >&2; exit 3", Duration::from_secs(30))
            .unwrap_err();
    assert!(err.contains("exit status: 3"), "{err}");
    assert!(err.contains("no-such-profile"), "{err}");
}

#[test]
fn web_identity_assumes_the_role_through_sts() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "jwt-token-value\n").unwrap();
    let xml =
        "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\
        <AssumeRoleWithWebIdentityResult><Credentials>\
        <AccessKeyId>ASIAWEB</AccessKeyId><SecretAccessKey>websecret</SecretAccessKey>\
        <SessionToken>a+b/c&amp;d=</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration>\
        </Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
    let (base, server) = serve_once("200 OK", "", xml.as_bytes().to_vec());
    let env = env_of(&[
        ("HOME", "/nonexistent"),
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token.to_str().unwrap()),
        ("AWS_ROLE_ARN", "arn:aws:iam::123:role/pi"),
        ("AWS_ROLE_SESSION_NAME", "sess"),
        ("AWS_ENDPOINT_URL_STS", &base),
    ]);
    assert_eq!(
        resolve_auth(&env),
        Ok(keys("ASIAWEB", "websecret", Some("a+b/c&d=")))
    );
    let req = server.join().unwrap();
    assert!(req.starts_with("POST / "), "{req}");
    let body = req.split("\r\n\r\n").nth(1).unwrap();
    assert_eq!(
        body,
        "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A123%3Arole%2Fpi&RoleSessionName=sess&WebIdentityToken=jwt-token-value"
    );
    // Cached: a second resolution does not call STS again (the server is gone).
    assert_eq!(
        resolve_auth(&env),
        Ok(keys("ASIAWEB", "websecret", Some("a+b/c&d=")))
    );
}

#[test]
fn sts_errors_are_readable() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "t").unwrap();
    let xml = "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>\
        <Message>Not authorized to perform sts:AssumeRoleWithWebIdentity</Message></Error></ErrorResponse>";
    let (base, _server) = serve_once("403 Forbidden", "", xml.as_bytes().to_vec());
    let env = env_of(&[
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token.to_str().unwrap()),
        ("AWS_ROLE_ARN", "arn:aws:iam::123:role/denied"),
        ("AWS_ENDPOINT_URL_STS", &base),
    ]);
    assert_eq!(
        resolve_auth(&env).unwrap_err(),
        "STS AssumeRoleWithWebIdentity failed (403): AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity"
    );
}

#[test]
fn container_credentials_with_token_file() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("auth");
    std::fs::write(&token, "secret-auth\n").unwrap();
    let json = r#"{"AccessKeyId":"ASIACON","SecretAccessKey":"cs","Token":"ct","Expiration":"2099-01-01T00:00:00Z"}"#;
    let (base, server) = serve_once("200 OK", "", json.as_bytes().to_vec());
    let url = format!("{base}/v2/credentials/abc");
    let env = env_of(&[
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", &url),
        (
            "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
            token.to_str().unwrap(),
        ),
    ]);
    assert_eq!(resolve_auth(&env), Ok(keys("ASIACON", "cs", Some("ct"))));
    let req = server.join().unwrap().to_ascii_lowercase();
    assert!(req.starts_with("get /v2/credentials/abc "), "{req}");
    assert!(req.contains("authorization: secret-auth\r\n"), "{req}");
}

#[test]
fn region_and_endpoint_follow_pi() {
    let std_url = "https://bedrock-runtime.us-east-1.amazonaws.com";
    // Nothing configured: the catalog's endpoint and its region.
    assert_eq!(
        region_and_endpoint(std_url, &env_of(&[])),
        ("us-east-1".into(), std_url.into())
    );
    // A configured region picks its own endpoint.
    assert_eq!(
        region_and_endpoint(std_url, &env_of(&[("AWS_REGION", "eu-central-1")])),
        (
            "eu-central-1".into(),
            "https://bedrock-runtime.eu-central-1.amazonaws.com".into()
        )
    );
    assert_eq!(
        region_and_endpoint(std_url, &env_of(&[("AWS_DEFAULT_REGION", "cn-north-1")])).1,
        "https://bedrock-runtime.cn-north-1.amazonaws.com.cn"
    );
    // A custom endpoint (proxy/VPC) is always used.
    assert_eq!(
        region_and_endpoint(
            "https://proxy.corp/bedrock/",
            &env_of(&[("AWS_REGION", "us-west-2")])
        ),
        ("us-west-2".into(), "https://proxy.corp/bedrock".into())
    );
    // The SDK's endpoint override replaces the catalog's standard endpoint.
    assert_eq!(
        region_and_endpoint(
            std_url,
            &env_of(&[("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://127.0.0.1:9/")])
        ),
        ("us-east-1".into(), "http://127.0.0.1:9".into())
    );
    assert_eq!(
        standard_endpoint_region("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com"),
        Some("us-gov-west-1".into())
    );
}
