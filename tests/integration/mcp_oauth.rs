//! MCP OAuth end to end against our own authorization server (`mcp_oauth_server.py`): `pi mcp
//! list` reports the sign-in, `pi mcp login` runs discovery, registration, PKCE and the
//! loopback callback (the test plays the browser by opening the URL pi prints), tokens land in
//! mcp-auth.json (0600), a session calls tools with them, an expired token is refreshed once
//! across two processes, pi's Client ID Metadata Document is presented where the server takes
//! it, a wrong issuer is refused, `auth.provider` sends a `/login` token, and `logout` forgets.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::mcp::{approve_in_browser, mcp_json, OAuthServer};
use crate::support::mock::{sse_tool_calls, MockServer, Reply};
use crate::support::pi::PiCommand;

const API: &str = "openai-completions";

fn pi_for(server: &OAuthServer, entry: Value) -> PiCommand {
    let mut e = json!({"url": server.url});
    for (k, v) in entry.as_object().unwrap() {
        e[k] = v.clone();
    }
    PiCommand::new().write_agent_file("mcp.json", &mcp_json(json!({ "docs": e })))
}

/// Runs `pi mcp login docs`, opens the URL it prints like a browser would, and returns
/// (exit code, stdout, stderr, the authorization URL).
fn login(pi: &PiCommand) -> (Option<i32>, String, String, String) {
    let mut cmd = pi.command();
    cmd.args(["mcp", "login", "docs", "--timeout", "60"])
        .stdin(Stdio::null());
    let mut child = cmd.spawn().expect("spawn pi");
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let mut out = Vec::new();
    let mut url = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if line.starts_with("http") && url.is_empty() {
                    url = line.clone();
                    let (status, page) = approve_in_browser(&url);
                    assert_eq!(status, 200, "{page}");
                }
                out.push(line);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                panic!("pi mcp login did not finish: {}", out.join("\n"));
            }
        }
    }
    let status = child.wait().unwrap();
    (
        status.code(),
        out.join("\n") + "\n",
        err.join().unwrap(),
        url,
    )
}

fn auth_file(pi: &PiCommand) -> (Value, u32) {
    let path = pi.agent_dir().join("mcp-auth.json");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    (
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap(),
        mode,
    )
}

fn query(url: &str, key: &str) -> Option<String> {
    pi::resources::oauth::pkce::query_value(url.split_once('?')?.1, key)
}

#[test]
fn login_signs_in_through_the_browser_and_the_session_uses_the_tokens() {
    let server = OAuthServer::start(json!({}));
    let pi = pi_for(&server, json!({"exposure": "direct"}));

    let before = pi.again().args(["mcp", "list"]).run();
    before.assert_code(1);
    assert!(
        before
            .stdout
            .contains("docs: needs sign-in (direct, global)")
            && before.stdout.contains("  sign in with: pi mcp login docs"),
        "{}",
        before.stdout
    );

    let (code, out, err, url) = login(&pi);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(
        out.starts_with("Sign in to MCP server \"docs\" in your browser:\nhttp://127.0.0.1:"),
        "{out}"
    );
    assert!(
        out.ends_with("Signed in to MCP server \"docs\" (2 tools).\n"),
        "{out}"
    );
    // Discovery found the endpoints; PKCE, resource and the advertised scope were requested.
    assert!(
        url.starts_with(&format!("{}/authorize?", server.origin)),
        "{url}"
    );
    assert_eq!(
        query(&url, "code_challenge_method").as_deref(),
        Some("S256")
    );
    assert_eq!(query(&url, "resource"), Some(server.url.clone()));
    assert_eq!(query(&url, "scope").as_deref(), Some("mcp"));
    let redirect = query(&url, "redirect_uri").unwrap();
    assert!(
        redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"),
        "{redirect}"
    );
    let stats = server.stats();
    assert_eq!(stats["registrations"], 1);
    assert_eq!(stats["last_registration"]["client_name"], "pi");
    assert_eq!(stats["last_registration"]["application_type"], "native");
    assert_eq!(
        stats["last_registration"]["redirect_uris"],
        json!([redirect])
    );
    assert_eq!(stats["code_exchanges"], 1);

    let (auth, mode) = auth_file(&pi);
    assert_eq!(mode, 0o600);
    let entry = &auth[format!("mcp__docs|{}", server.url)];
    assert_eq!(entry["serverUrl"], server.url.as_str());
    assert!(entry["tokens"]["access_token"]
        .as_str()
        .unwrap()
        .starts_with("at-"));
    assert_eq!(entry["tokens"]["scope"], "mcp");
    assert!(entry["tokensExpireAt"].as_i64().is_some());
    assert!(entry["clientInformation"]["client_id"]
        .as_str()
        .unwrap()
        .starts_with("client-"));
    assert_eq!(
        entry["discovery"]["authorizationServerUrl"],
        server.origin.as_str()
    );

    let listed = pi.again().args(["mcp", "list"]).run();
    listed.assert_code(0);
    assert!(
        listed
            .stdout
            .starts_with("docs: connected, 2 tools (direct, global)"),
        "{}",
        listed.stdout
    );
    let again = pi.again().args(["mcp", "login", "docs"]).run();
    again.assert_code(0);
    assert_eq!(
        again.stdout,
        "Already signed in to MCP server \"docs\" (2 tools).\n"
    );

    // A session calls the server's tool with the stored token.
    let mock = MockServer::with_replies([
        Reply::sse(sse_tool_calls(
            API,
            &[("c1", "mcp__docs__whoami", json!({}))],
        )),
        Reply::sse(crate::support::mock::sse_text(API, "done")),
    ]);
    let run = PiCommand::for_mock(API, &mock)
        .write_agent_file(
            "mcp.json",
            &std::fs::read_to_string(pi.agent_dir().join("mcp.json")).unwrap(),
        )
        .write_agent_file(
            "mcp-auth.json",
            &std::fs::read_to_string(pi.agent_dir().join("mcp-auth.json")).unwrap(),
        )
        .args(["-p", "who am i"])
        .run();
    run.assert_code(0).assert_no_panic();
    let second = &mock.requests()[1].body;
    assert!(second.to_string().contains("scopes: mcp"), "{second}");

    let out = pi.again().args(["mcp", "logout", "docs"]).run();
    out.assert_code(0);
    assert_eq!(out.stdout, "Signed out of MCP server \"docs\".\n");
    let (auth, _) = auth_file(&pi);
    assert!(auth.get(format!("mcp__docs|{}", server.url)).is_none());
    let out = pi.again().args(["mcp", "logout", "docs"]).run();
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        "No stored credentials for MCP server \"docs\".\n"
    );
}

#[test]
fn an_expired_token_is_refreshed_once_across_processes() {
    let server = OAuthServer::start(json!({"refresh_delay": 1}));
    let pi = pi_for(&server, json!({}));
    let (code, out, err, _) = login(&pi);
    assert_eq!(code, Some(0), "{out}\n{err}");
    // The server forgets the access token: both processes get a 401 and want a refresh; the
    // refresh token rotates, so a second refresh would fail and cost the sign-in.
    server.control(json!({"expire_all": true}));
    let a = pi.again().args(["mcp", "list"]).spawn();
    let b = pi.again().args(["mcp", "list"]).spawn();
    let (a, b) = (a.wait(), b.wait());
    a.assert_code(0);
    b.assert_code(0);
    assert!(
        a.stdout.contains("docs: connected, 2 tools"),
        "{}",
        a.stdout
    );
    assert!(
        b.stdout.contains("docs: connected, 2 tools"),
        "{}",
        b.stdout
    );
    let stats = server.stats();
    assert_eq!(stats["refreshes"], 1, "{stats}");
    assert_eq!(stats["refresh_failures"], 0, "{stats}");

    // A token about to expire is refreshed before it is sent.
    let path = pi.agent_dir().join("mcp-auth.json");
    let mut auth: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    auth[format!("mcp__docs|{}", server.url)]["tokensExpireAt"] = json!(1);
    std::fs::write(&path, auth.to_string()).unwrap();
    pi.again().args(["mcp", "list"]).run().assert_code(0);
    let stats = server.stats();
    assert_eq!(stats["refreshes"], 2, "{stats}");
    assert_eq!(
        stats["unauthorized"], 3,
        "only the first two lists were refused: {stats}"
    );
}

#[test]
fn pi_presents_its_client_id_metadata_document_where_the_server_takes_it() {
    // Without `iss` in authorization responses, the document and callback are server-specific.
    let server = OAuthServer::start(json!({"cimd": true, "iss": false}));
    let pi = pi_for(&server, json!({}));
    let (code, out, err, url) = login(&pi);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let client_id = query(&url, "client_id").unwrap();
    let id = client_id
        .strip_prefix("https://pi.dev/oauth/")
        .and_then(|r| r.strip_suffix("/client.json"))
        .unwrap_or_else(|| panic!("{client_id}"));
    assert_eq!(id.len(), 12);
    let redirect = query(&url, "redirect_uri").unwrap();
    assert!(redirect.ends_with(&format!("/callback/{id}")), "{redirect}");
    assert_eq!(server.stats()["registrations"], 0);
    let (auth, _) = auth_file(&pi);
    assert!(auth[format!("mcp__docs|{}", server.url)]
        .get("clientInformation")
        .is_none());

    // With `iss`, pi's general document and `/callback`.
    let server = OAuthServer::start(json!({"cimd": true}));
    let pi = pi_for(&server, json!({}));
    let (code, _, err, url) = login(&pi);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        query(&url, "client_id").as_deref(),
        Some("https://pi.dev/oauth/client.json")
    );
    assert!(query(&url, "redirect_uri").unwrap().ends_with("/callback"));

    // `clientRegistration: "dcr"` registers even so.
    let pi = pi_for(&server, json!({"oauth": {"clientRegistration": "dcr"}}));
    let (code, _, err, url) = login(&pi);
    assert_eq!(code, Some(0), "{err}");
    assert!(query(&url, "client_id").unwrap().starts_with("client-"));
}

#[test]
fn a_wrong_issuer_is_refused() {
    let server = OAuthServer::start(json!({"wrong_issuer": true}));
    let pi = pi_for(&server, json!({}));
    let res = pi.again().args(["mcp", "login", "docs"]).run();
    res.assert_code(1);
    assert_eq!(
        res.stderr,
        format!(
            "Sign-in to MCP server \"docs\" failed: OAuth issuer mismatch: expected \"{}\", received \"https://elsewhere.example\"\n",
            server.origin
        )
    );
    assert_eq!(server.stats()["registrations"], 0);
}

#[test]
fn a_configured_callback_port_and_client_are_used() {
    let server = OAuthServer::start(json!({}));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let pi = PiCommand::new();
    let add = pi
        .again()
        .args([
            "mcp",
            "add",
            "docs",
            "--url",
            &server.url,
            "--oauth-callback-port",
            &port.to_string(),
            "--oauth-client-name",
            "Claude Code",
        ])
        .run();
    add.assert_code(0);
    assert!(
        add.stdout
            .ends_with("Check it with: pi mcp list. If it requires sign-in: pi mcp login docs\n"),
        "{}",
        add.stdout
    );
    let (code, out, err, url) = login(&pi);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert_eq!(
        query(&url, "redirect_uri"),
        Some(format!("http://127.0.0.1:{port}/callback"))
    );
    assert_eq!(
        server.stats()["last_registration"]["client_name"],
        "Claude Code"
    );
}

#[test]
fn login_and_logout_explain_what_they_cannot_do() {
    let server = OAuthServer::start(json!({"static_token": "provider-token"}));
    let pi = PiCommand::new().write_agent_file(
        "mcp.json",
        &mcp_json(json!({
            "radius": {"url": server.url, "auth": {"provider": "radius"}},
            "keyed": {"url": server.url, "headers": {"Authorization": "Bearer provider-token"}},
            "local": {"command": "true"}
        })),
    );
    let res = pi.again().args(["mcp", "login", "radius"]).run();
    res.assert_code(1);
    assert_eq!(
        res.stderr,
        "MCP server \"radius\" uses the credentials of provider \"radius\". Run \"pi auth login radius\".\n"
    );
    for name in ["keyed", "local"] {
        let res = pi.again().args(["mcp", "logout", name]).run();
        res.assert_code(1);
        assert_eq!(
            res.stderr,
            format!("MCP server \"{name}\" does not use OAuth. Only HTTP servers without an Authorization header do.\n")
        );
    }
    let res = pi.again().args(["mcp", "login", "radiux"]).run();
    res.assert_code(1);
    assert_eq!(
        res.stderr,
        "No MCP server named \"radiux\". Did you mean \"radius\"? Configured: radius, keyed, local.\n"
    );
    let res = pi.again().args(["mcp", "login", "radius", "-l"]).run();
    res.assert_code(1);
    assert!(
        res.stderr.ends_with("not in the project; omit --local.\n"),
        "{}",
        res.stderr
    );
    let res = pi_for(&server, json!({}))
        .args(["mcp", "login", "docs", "--timeout", "0"])
        .run();
    res.assert_code(1);
    assert_eq!(
        res.stderr,
        "--timeout must be a positive number of seconds.\n"
    );
    let res = pi.again().args(["mcp", "login"]).run();
    res.assert_code(1);
    assert!(
        res.stderr
            .starts_with("Usage: pi mcp login <server> [-l]\n"),
        "{}",
        res.stderr
    );

    // `auth.provider` sends the provider's /login token; without one the server needs sign-in.
    let listed = pi.again().args(["mcp", "list", "--json"]).run();
    let doc: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(doc["servers"][0]["state"], "needs-auth");
    assert_eq!(doc["servers"][0]["authProvider"], "radius");
    let text = pi.again().args(["mcp", "list"]).run();
    assert!(
        text.stdout.contains("  sign in with: /login radius in pi"),
        "{}",
        text.stdout
    );
    assert_eq!(doc["servers"][1]["state"], "connected");
    let pi = pi.write_agent_file(
        "auth.json",
        r#"{"radius": {"type": "api_key", "key": "provider-token"}}"#,
    );
    let listed = pi.again().args(["mcp", "list", "--json"]).run();
    let doc: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(doc["servers"][0]["state"], "connected", "{doc}");
}

#[test]
fn a_login_that_is_never_approved_times_out() {
    let server = OAuthServer::start(json!({}));
    let pi = pi_for(&server, json!({}));
    let res = pi
        .again()
        .args(["mcp", "login", "docs", "--timeout", "1"])
        .run();
    res.assert_code(1);
    assert!(
        res.stdout
            .starts_with("Sign in to MCP server \"docs\" in your browser:\n"),
        "{}",
        res.stdout
    );
    assert_eq!(
        res.stderr,
        "Sign-in to MCP server \"docs\" was cancelled or not completed within 1 seconds.\n"
    );
}
