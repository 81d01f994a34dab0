//! Sign-ins against the test authorization server (`tests/support/mcp_oauth_server.py`, run
//! on a loopback port): the browser's callback, a pasted redirect URL, and the step-up a
//! server asks for with `insufficient_scope`, which keeps the scope already granted.

use std::path::Path;
use std::sync::{Arc, Mutex};

use crossbeam_channel::Receiver;
use serde_json::{json, Value};

use super::*;
use crate::mcp::config;
use crate::mcp::connection::{AuthContext, ConnState, Hooks, ServerConnection};
use crate::mcp::oauth::test_server::{authorize, Server};

/// A user who approves in the browser, or pastes the redirect URL (`paste`, changed by
/// `edit` first).
struct User {
    paste: bool,
    edit: fn(String) -> String,
    urls: Mutex<Vec<String>>,
    redirect: Mutex<Option<String>>,
}

impl User {
    fn new(paste: bool) -> User {
        User {
            paste,
            edit: |s| s,
            urls: Mutex::new(Vec::new()),
            redirect: Mutex::new(None),
        }
    }
}

impl LoginUi for User {
    fn on_auth(&self, url: &str, _: Option<&str>) {
        self.urls.lock().unwrap().push(url.to_string());
        let location = authorize(url);
        if self.paste {
            *self.redirect.lock().unwrap() = Some((self.edit)(location));
        } else {
            std::thread::spawn(move || {
                let _ = ureq::get(&location).call();
            });
        }
    }
    fn prompt(&self, _: &str, _: Option<&str>) -> Result<String, String> {
        Err("no".into())
    }
    fn progress(&self, _: &str) {}
    fn manual_input(&self) -> Option<Receiver<String>> {
        let (tx, rx) = crossbeam_channel::unbounded();
        if let Some(pasted) = self.redirect.lock().unwrap().take() {
            tx.send(pasted).unwrap();
        }
        Some(rx)
    }
}

struct NoHooks;
impl Hooks for NoHooks {
    fn tools_changed(&self, _: &ServerConnection) {}
    fn state_changed(&self, _: &ServerConnection) {}
}

fn connection(server: &Server, agent_dir: &Path) -> Arc<ServerConnection> {
    let cfg = config::validate("docs", &json!({"url": format!("{}/mcp", server.origin)})).unwrap();
    let auth = AuthContext::for_agent_dir(agent_dir);
    ServerConnection::new(
        "docs",
        cfg,
        Path::new("/"),
        None,
        Some(&auth),
        Arc::new(NoHooks),
    )
}

fn sign_in_with(conn: &ServerConnection, user: &User) -> Result<SignedIn, OAuthError> {
    let settings = conn.oauth_settings().unwrap();
    let challenge = conn.challenge();
    sign_in(&SignIn {
        server_name: "docs",
        server_url: conn.oauth_url().unwrap(),
        store: conn.credentials().unwrap(),
        settings: &settings,
        challenge: challenge.as_ref(),
        ui: user,
        abort: &Abort::new(),
    })
}

fn call(conn: &ServerConnection, tool: &str) -> Result<String, String> {
    conn.call_tool(tool, json!({}), &Abort::new(), &|_| {})
        .map(|r| {
            r["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
}

#[test]
fn step_up_keeps_the_granted_scope_and_pasting_works() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let conn = connection(&server, dir.path());
    conn.start();
    conn.wait_settled(None);
    assert_eq!(conn.state(), ConnState::NeedsAuth);
    assert!(conn.challenge().unwrap().resource_metadata_url.is_some());

    let user = User::new(true);
    assert_eq!(sign_in_with(&conn, &user).unwrap(), SignedIn::Authorized);
    let first = user.urls.lock().unwrap()[0].clone();
    assert_eq!(query(&first, "scope").as_deref(), Some("mcp"));
    conn.clear_challenge();
    conn.reconnect(&Abort::new()).unwrap();
    assert_eq!(call(&conn, "whoami").unwrap(), "scopes: mcp");

    // More scope: the call fails with pi's message and the server needs a sign-in again.
    assert_eq!(
        call(&conn, "admin_report").unwrap_err(),
        "MCP server \"docs\" requires sign-in. Run /mcp to sign in."
    );
    assert_eq!(conn.state(), ConnState::NeedsAuth);
    let challenge = conn.challenge().unwrap();
    assert_eq!(challenge.error.as_deref(), Some("insufficient_scope"));

    let user = User::new(false);
    assert_eq!(sign_in_with(&conn, &user).unwrap(), SignedIn::Authorized);
    let second = user.urls.lock().unwrap()[0].clone();
    assert_eq!(query(&second, "scope").as_deref(), Some("mcp admin"));
    conn.clear_challenge();
    conn.reconnect(&Abort::new()).unwrap();
    assert_eq!(
        call(&conn, "admin_report").unwrap(),
        "admin report: all good"
    );
    assert_eq!(call(&conn, "whoami").unwrap(), "scopes: mcp admin");
    let stats = server.stats();
    assert_eq!(stats["refreshes"], 0, "a step-up does not refresh: {stats}");
    assert_eq!(
        stats["registrations"], 1,
        "the registered client is kept: {stats}"
    );

    // A server that needs a sign-in while a refresh token is stored just refreshes.
    let store = conn.credentials().unwrap().clone();
    store
        .update(|s| {
            let mut tokens = s.tokens().cloned().unwrap();
            tokens.insert("access_token".into(), json!("revoked"));
            s.0.insert("tokens".into(), Value::Object(tokens));
        })
        .unwrap();
    assert_eq!(
        sign_in_with(&conn, &User::new(false)).unwrap(),
        SignedIn::Refreshed
    );
    assert_eq!(server.stats()["refreshes"], 1);
    conn.close();
}

#[test]
fn a_paste_from_another_sign_in_is_refused() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let conn = connection(&server, dir.path());
    let user = User {
        edit: |s| s.replace("state=", "state=x"),
        ..User::new(true)
    };
    let settings = conn.oauth_settings().unwrap();
    let err = sign_in(&SignIn {
        server_name: "docs",
        server_url: conn.oauth_url().unwrap(),
        store: conn.credentials().unwrap(),
        settings: &settings,
        challenge: None,
        ui: &user,
        abort: &Abort::new(),
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "The redirect URL belongs to a different sign-in"
    );
}

fn query(url: &str, key: &str) -> Option<String> {
    pkce::query_value(url.split_once('?')?.1, key)
}
