//! Tests of the OAuth flows against a local mock authorization server: authorize → callback
//! (or pasted redirect, or device polling) → token → refresh, and the locked refresh raced by
//! threads and a child process.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::anthropic::Anthropic;
use super::error::LoginError;
use super::flow::*;
use super::github_copilot::{base_url_for, normalize_domain, GithubCopilot};
use super::openai_codex::OpenAiCodex;
use super::pkce::{challenge_for, parse_query, query_value};
use super::refresh::fresh_credentials;
use super::*;
use crate::ai::stream::Abort;
use crate::util::encoding::base64url_encode;

#[derive(Debug, Clone)]
struct Req {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Req {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
    fn form(&self, key: &str) -> Option<String> {
        query_value(&self.body, key)
    }
}

type Handler = dyn Fn(&Req) -> (u16, Vec<(String, String)>, String) + Send + Sync;

/// A tiny HTTP/1.1 server: one thread per connection, `connection: close`, every request kept.
struct Mock {
    url: String,
    requests: Arc<Mutex<Vec<Req>>>,
}

impl Mock {
    fn start(
        handler: impl Fn(&Req) -> (u16, Vec<(String, String)>, String) + Send + Sync + 'static,
    ) -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let log = Arc::clone(&requests);
        // Detached: the listener lives until the test process exits.
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (handler, log) = (Arc::clone(&handler), Arc::clone(&log));
                std::thread::spawn(move || serve_one(stream, &*handler, &log));
            }
        });
        Mock { url, requests }
    }

    fn hits(&self, path: &str) -> Vec<Req> {
        let all = self.requests.lock().unwrap();
        all.iter().filter(|r| r.path == path).cloned().collect()
    }
}

fn serve_one(stream: TcpStream, handler: &Handler, log: &Mutex<Vec<Req>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    let req = Req {
        method,
        path: path.to_string(),
        query: query.to_string(),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    log.lock().unwrap().push(req.clone());
    let (status, extra, body) = handler(&req);
    let mut out = stream;
    let mut head = format!(
        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let _ = write!(out, "{head}\r\n{body}");
}

fn ok(v: Value) -> (u16, Vec<(String, String)>, String) {
    (
        200,
        vec![("content-type".into(), "application/json".into())],
        v.to_string(),
    )
}

type OnAuth = Box<dyn Fn(&str, Option<&str>) + Send + Sync>;

/// A scripted user: answers prompts from a queue and reacts to the auth URL.
struct TestUi {
    answers: Mutex<VecDeque<String>>,
    on_auth: OnAuth,
    manual: Mutex<Option<crossbeam_channel::Receiver<String>>>,
    progress: Mutex<Vec<String>>,
}

impl TestUi {
    fn new(on_auth: impl Fn(&str, Option<&str>) + Send + Sync + 'static) -> Self {
        TestUi {
            answers: Mutex::new(VecDeque::new()),
            on_auth: Box::new(on_auth),
            manual: Mutex::new(None),
            progress: Mutex::new(Vec::new()),
        }
    }
}

impl LoginUi for TestUi {
    fn on_auth(&self, url: &str, instructions: Option<&str>) {
        (self.on_auth)(url, instructions)
    }
    fn prompt(&self, _message: &str, _placeholder: Option<&str>) -> Result<String, String> {
        self.answers
            .lock()
            .unwrap()
            .pop_front()
            .ok_or("no answer".into())
    }
    fn progress(&self, message: &str) {
        self.progress.lock().unwrap().push(message.to_string());
    }
    fn manual_input(&self) -> Option<crossbeam_channel::Receiver<String>> {
        self.manual.lock().unwrap().take()
    }
}

/// An authorization server for code flows: `/authorize` remembers the challenge and redirects,
/// `/token` checks the verifier and hands out numbered tokens.
fn code_flow_server(access: impl Fn(usize) -> String + Send + Sync + 'static) -> Mock {
    let challenge = Arc::new(Mutex::new(String::new()));
    let issued = Arc::new(AtomicUsize::new(0));
    Mock::start(move |req| match req.path.as_str() {
        "/authorize" => {
            *challenge.lock().unwrap() = query_value(&req.query, "code_challenge").unwrap();
            let redirect = query_value(&req.query, "redirect_uri").unwrap();
            let state = query_value(&req.query, "state").unwrap();
            let location = format!("{redirect}?code=the-code&state={state}");
            (302, vec![("location".into(), location)], String::new())
        }
        "/token" => {
            let form = req.header("content-type") == Some("application/x-www-form-urlencoded");
            let field = |k: &str| {
                if form {
                    req.form(k)
                } else {
                    req.json()[k].as_str().map(str::to_string)
                }
            };
            let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
            match field("grant_type").as_deref() {
                Some("authorization_code") => {
                    let verifier = field("code_verifier").unwrap_or_default();
                    if challenge_for(&verifier) != *challenge.lock().unwrap()
                        || field("code").as_deref() != Some("the-code")
                    {
                        return (400, vec![], r#"{"error":"invalid_grant"}"#.into());
                    }
                }
                Some("refresh_token") if field("refresh_token").as_deref() == Some("rt-1") => {}
                _ => return (400, vec![], r#"{"error":"invalid_grant"}"#.into()),
            }
            ok(
                json!({"access_token": access(n), "refresh_token": format!("rt-{n}"), "expires_in": 3600}),
            )
        }
        _ => (404, vec![], String::new()),
    })
}

/// The "browser": opens the authorize URL on the mock and follows its redirect by hand.
fn browse(url: &str) -> String {
    let (status, _) = crate::ai::http::request("GET", url, &[], None).unwrap();
    assert_eq!(
        status, 200,
        "ureq follows the redirect to the callback server"
    );
    String::new()
}

fn redirect_of(authorize_url: &str) -> (String, String) {
    let q = authorize_url.split_once('?').unwrap().1;
    (
        query_value(q, "redirect_uri").unwrap(),
        query_value(q, "state").unwrap(),
    )
}

#[test]
fn anthropic_login_through_the_callback_server_then_refresh() {
    let mock = code_flow_server(|n| format!("at-{n}"));
    let flow = Anthropic {
        authorize_url: format!("{}/authorize", mock.url),
        token_url: format!("{}/token", mock.url),
        callback_port: 0,
        ..Anthropic::default()
    };
    let ui = TestUi::new(|url, _| {
        let url = url.to_string();
        std::thread::spawn(move || browse(&url));
    });
    let creds = flow.login(&ui, &Abort::new()).unwrap();
    assert_eq!(
        (creds.access.as_str(), creds.refresh.as_str()),
        ("at-1", "rt-1")
    );
    let expected = crate::ai::types::now_ms() + 3_600_000 - FIVE_MINUTES_MS;
    assert!((creds.expires - expected).abs() < 5_000);
    let authorize = &mock.hits("/authorize")[0];
    let q: Vec<(String, String)> = parse_query(&authorize.query);
    let keys: Vec<&str> = q.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "code",
            "client_id",
            "response_type",
            "redirect_uri",
            "scope",
            "code_challenge",
            "code_challenge_method",
            "state"
        ]
    );
    let token = mock.hits("/token")[0].json();
    assert_eq!(token["client_id"], "9d1c250a-e61b-44d9-88ed-5944d1962f5e");
    assert_eq!(
        token["state"], token["code_verifier"],
        "the verifier is the state"
    );
    assert!(token["redirect_uri"]
        .as_str()
        .unwrap()
        .ends_with("/callback"));
    let fresh = flow.refresh(&creds).unwrap();
    assert_eq!(
        (fresh.access.as_str(), fresh.refresh.as_str()),
        ("at-2", "rt-2")
    );
    assert_eq!(mock.hits("/token")[1].json()["grant_type"], "refresh_token");
    let stored = creds.to_json();
    assert_eq!(stored["type"], "oauth");
    assert_eq!(Credentials::from_json(&stored).unwrap(), creds);
}

fn codex_token(n: usize) -> String {
    let claims =
        json!({"https://api.openai.com/auth": {"chatgpt_account_id": format!("acct-{n}")}});
    format!("h.{}.s", base64url_encode(claims.to_string().as_bytes()))
}

#[test]
fn codex_login_with_a_pasted_redirect_url_then_refresh() {
    let mock = code_flow_server(codex_token);
    let flow = OpenAiCodex {
        authorize_url: format!("{}/authorize", mock.url),
        token_url: format!("{}/token", mock.url),
        callback_port: 0,
        ..OpenAiCodex::default()
    };
    let (tx, rx) = crossbeam_channel::unbounded();
    let ui = TestUi::new(move |url, _| {
        // The browser runs elsewhere: it reaches the authorization server but not our
        // callback, and the user copies the URL it was redirected to.
        let (redirect, state) = redirect_of(url);
        let target = url.split_once("://").unwrap().1;
        let (host, path) = target.split_once('/').unwrap();
        let mut s = TcpStream::connect(host).unwrap();
        write!(s, "GET /{path} HTTP/1.1\r\nhost: {host}\r\n\r\n").unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 302"));
        tx.send(format!("{redirect}?code=the-code&state={state}"))
            .unwrap();
    });
    *ui.manual.lock().unwrap() = Some(rx);
    let creds = flow.login(&ui, &Abort::new()).unwrap();
    assert_eq!(creds.access, codex_token(1));
    assert_eq!(creds.extra_str("accountId"), Some("acct-1"));
    let authorize = &mock.hits("/authorize")[0];
    assert_eq!(
        query_value(&authorize.query, "originator").as_deref(),
        Some("pi")
    );
    let token = &mock.hits("/token")[0];
    assert_eq!(
        token.form("client_id").as_deref(),
        Some("app_EMoamEEZ73f0CkXaXp7hrann")
    );
    assert!(token
        .form("redirect_uri")
        .unwrap()
        .ends_with("/auth/callback"));
    let fresh = flow.refresh(&creds).unwrap();
    assert_eq!(fresh.extra_str("accountId"), Some("acct-2"));
}

#[test]
fn a_pasted_code_with_the_wrong_state_is_refused() {
    let mock = code_flow_server(codex_token);
    let flow = OpenAiCodex {
        authorize_url: format!("{}/authorize", mock.url),
        token_url: format!("{}/token", mock.url),
        callback_port: 0,
        ..OpenAiCodex::default()
    };
    let ui = TestUi::new(|_, _| {});
    let (tx, rx) = crossbeam_channel::unbounded();
    tx.send("the-code#not-the-state".to_string()).unwrap();
    *ui.manual.lock().unwrap() = Some(rx);
    let err = flow.login(&ui, &Abort::new()).unwrap_err();
    assert!(matches!(err, LoginError::StateMismatch), "{err:?}");
    assert_eq!(err.to_string(), "OAuth state mismatch");
    assert!(mock.hits("/token").is_empty());
}

#[test]
fn copilot_device_flow_with_slow_down_then_refresh() {
    let polls = Arc::new(AtomicUsize::new(0));
    let p = Arc::clone(&polls);
    let mock = Mock::start(move |req| match req.path.as_str() {
        "/login/device/code" => ok(json!({"device_code": "dev", "user_code": "ABCD-1234",
            "verification_uri": "https://github.com/login/device", "interval": 1, "expires_in": 900})),
        "/login/oauth/access_token" => match p.fetch_add(1, Ordering::SeqCst) {
            0 => ok(json!({"error": "authorization_pending"})),
            1 => ok(json!({"error": "slow_down", "interval": 6})),
            _ => ok(json!({"access_token": "gho_user"})),
        },
        "/copilot_internal/v2/token" => {
            assert_eq!(req.header("authorization"), Some("Bearer gho_user"));
            assert_eq!(req.header("editor-version"), Some("vscode/1.107.0"));
            ok(
                json!({"token": "tid=1;exp=2;proxy-ep=proxy.business.githubcopilot.com;x=y", "expires_at": 2_000_000_000}),
            )
        }
        p if p.ends_with("/policy") => ok(json!({})),
        _ => (404, vec![], String::new()),
    });
    let flow = GithubCopilot {
        base_override: Some(mock.url.clone()),
        second_ms: 10,
        model_ids: vec!["gpt-5.4".into(), "claude-x".into()],
        ..GithubCopilot::default()
    };
    let shown = Arc::new(Mutex::new(String::new()));
    let s = Arc::clone(&shown);
    let ui = TestUi::new(move |url, instr| {
        *s.lock().unwrap() = format!("{url} {}", instr.unwrap_or(""));
    });
    ui.answers.lock().unwrap().push_back(String::new());
    let started = Instant::now();
    let creds = flow.login(&ui, &Abort::new()).unwrap();
    assert_eq!(
        *shown.lock().unwrap(),
        "https://github.com/login/device Enter code: ABCD-1234"
    );
    assert_eq!(creds.refresh, "gho_user");
    assert_eq!(creds.expires, 2_000_000_000_000 - FIVE_MINUTES_MS);
    assert!(creds.extra.is_empty(), "no enterpriseUrl for github.com");
    assert_eq!(
        base_url_for(&creds),
        "https://api.business.githubcopilot.com"
    );
    // 1.2 × 10 ms twice, then 1.4 × 60 ms after slow_down.
    assert!(started.elapsed() >= Duration::from_millis(24 + 84));
    let form = &mock.hits("/login/oauth/access_token")[0];
    assert_eq!(
        form.form("grant_type").as_deref(),
        Some("urn:ietf:params:oauth:grant-type:device_code")
    );
    assert_eq!(
        mock.hits("/models/gpt-5.4/policy")[0].json()["state"],
        "enabled"
    );
    assert_eq!(mock.hits("/models/claude-x/policy").len(), 1);
    let fresh = flow.refresh(&creds).unwrap();
    assert_eq!(fresh.refresh, "gho_user");
    assert_eq!(mock.hits("/copilot_internal/v2/token").len(), 2);
}

#[test]
fn device_flow_errors_and_domains() {
    let mock = Mock::start(|req| match req.path.as_str() {
        "/login/device/code" => ok(json!({"device_code": "d", "user_code": "U",
            "verification_uri": "https://x/device", "interval": 1, "expires_in": 900})),
        _ => ok(json!({"error": "access_denied", "error_description": "user said no"})),
    });
    let flow = GithubCopilot {
        base_override: Some(mock.url.clone()),
        second_ms: 1,
        ..GithubCopilot::default()
    };
    let ui = TestUi::new(|_, _| {});
    ui.answers
        .lock()
        .unwrap()
        .push_back("https://Company.GHE.com/login".into());
    let err = flow.login(&ui, &Abort::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Device flow failed: access_denied: user said no"
    );
    assert_eq!(
        normalize_domain("company.ghe.com:443").as_deref(),
        Some("company.ghe.com")
    );
    assert_eq!(normalize_domain("  "), None);
    assert_eq!(normalize_domain("not a domain"), None);
    let ui = TestUi::new(|_, _| {});
    ui.answers.lock().unwrap().push_back("not a domain".into());
    let err = flow.login(&ui, &Abort::new()).unwrap_err();
    assert!(matches!(err, LoginError::InvalidEnterpriseDomain));
    assert_eq!(err.to_string(), "Invalid GitHub Enterprise URL/domain");
}

#[test]
fn pasted_answers_are_understood() {
    let p = parse_authorization_input;
    assert_eq!(
        p("http://localhost:1/cb?code=c&state=s"),
        (Some("c".into()), Some("s".into()))
    );
    assert_eq!(p(" c#s "), (Some("c".into()), Some("s".into())));
    assert_eq!(p("code=c&state=s"), (Some("c".into()), Some("s".into())));
    assert_eq!(p("just-a-code"), (Some("just-a-code".into()), None));
    assert_eq!(p(""), (None, None));
}

/// auth.json with an expired Anthropic login and an unrelated provider.
fn expired_auth(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("auth.json");
    let v = json!({
        "anthropic": {"type": "oauth", "access": "old", "refresh": "rt-1", "expires": 1, "note": "kept"},
        "openai": {"type": "api_key", "key": "sk"}
    });
    std::fs::write(&path, v.to_string()).unwrap();
    path
}

use std::path::Path;

/// A token endpoint that is slow to refresh and counts how often it does.
fn slow_refresh_server() -> (Mock, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let mock = Mock::start(move |req| {
        assert_eq!(req.method, "POST");
        let n = c.fetch_add(1, Ordering::SeqCst) + 1;
        std::thread::sleep(Duration::from_millis(400));
        ok(
            json!({"access_token": format!("new-{n}"), "refresh_token": "rt-new", "expires_in": 3600}),
        )
    });
    (mock, count)
}

const RACE_AUTH: &str = "PI_TEST_OAUTH_RACE_AUTH";
const RACE_URL: &str = "PI_TEST_OAUTH_RACE_URL";

#[test]
fn racing_threads_and_a_process_refresh_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = expired_auth(dir.path());
    let (mock, count) = slow_refresh_server();
    let token_url = format!("{}/token", mock.url);
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "resources::oauth::tests::race_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(RACE_AUTH, &path)
        .env(RACE_URL, &token_url)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (path, url) = (path.clone(), token_url.clone());
            std::thread::spawn(move || {
                let flow = Anthropic {
                    token_url: url,
                    ..Anthropic::default()
                };
                fresh_credentials(&path, &flow).unwrap().unwrap().access
            })
        })
        .collect();
    let got: Vec<String> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let child_says = String::from_utf8_lossy(&out.stdout);
    assert_eq!(count.load(Ordering::SeqCst), 1, "exactly one refresh");
    assert!(got.iter().all(|a| a == "new-1"), "{got:?}");
    assert!(child_says.contains("RACE_ACCESS=new-1"), "{child_says}");
    let back: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(back["anthropic"]["access"], "new-1");
    assert_eq!(back["anthropic"]["note"], "kept");
    assert_eq!(back["openai"]["key"], "sk");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(!dir.path().join("auth.json.lock").exists());
}

/// The other process of the race above; does nothing when run on its own.
#[test]
fn race_child() {
    let (Ok(path), Ok(url)) = (std::env::var(RACE_AUTH), std::env::var(RACE_URL)) else {
        return;
    };
    let flow = Anthropic {
        token_url: url,
        ..Anthropic::default()
    };
    let creds = fresh_credentials(Path::new(&path), &flow).unwrap().unwrap();
    println!("RACE_ACCESS={}", creds.access);
}

#[test]
fn a_failed_refresh_is_reported_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = expired_auth(dir.path());
    let before = std::fs::read_to_string(&path).unwrap();
    let mock = Mock::start(|_| (400, vec![], r#"{"error":"invalid_grant"}"#.into()));
    let flow = Anthropic {
        token_url: format!("{}/token", mock.url),
        ..Anthropic::default()
    };
    let err = fresh_credentials(&path, &flow).unwrap_err();
    // The refresh failed on the token endpoint's 400, and says so.
    let LoginError::RefreshFailed { source, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        matches!(source.as_ref(), LoginError::Step { source, .. }
            if matches!(source.as_ref(), LoginError::Http { status: 400, .. })),
        "{source:?}"
    );
    let err = err.to_string();
    assert!(
        err.starts_with("Failed to refresh OAuth token for anthropic: "),
        "{err}"
    );
    assert!(err.contains("invalid_grant"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    // No stored credential at all: nothing to refresh, not an error.
    let flow = OpenAiCodex::default();
    assert_eq!(fresh_credentials(&path, &flow).unwrap(), None);
}

#[test]
fn requests_use_the_stored_login_and_copilot_base_url() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let later = crate::ai::types::now_ms() + 600_000;
    let v = json!({
        "github-copilot": {"type": "oauth", "refresh": "gho", "expires": later,
                           "access": "tid=1;proxy-ep=proxy.enterprise.githubcopilot.com;"},
        "anthropic": {"type": "api_key", "key": "sk"},
        "custom": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}
    });
    std::fs::write(&path, v.to_string()).unwrap();
    let (key, base) = request_credentials(&path, "github-copilot")
        .unwrap()
        .unwrap();
    assert_eq!(key, "tid=1;proxy-ep=proxy.enterprise.githubcopilot.com;");
    assert_eq!(
        base.as_deref(),
        Some("https://api.enterprise.githubcopilot.com")
    );
    assert_eq!(request_credentials(&path, "anthropic").unwrap(), None);
    assert_eq!(request_credentials(&path, "custom").unwrap(), None);
    // The storage layer: a runtime key beats the login; the login beats the environment.
    let mut auth = crate::resources::auth::AuthStorage::load(&path);
    assert_eq!(
        auth.resolve_api_key("github-copilot").unwrap().as_deref(),
        Some("tid=1;proxy-ep=proxy.enterprise.githubcopilot.com;")
    );
    auth.set_runtime_api_key("github-copilot", "runtime");
    assert_eq!(
        auth.resolve_api_key("github-copilot").unwrap().as_deref(),
        Some("runtime")
    );
}
