//! The provider layer: its own retries (`retry.provider.*`, below the agent-level auto-retry)
//! and what it says when an answer cannot be a reply — a 2xx document or empty stream, an
//! invalid base URL — which no retry would change.

use crate::support::{models_json_for, MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

fn run_with(mock: &MockServer, settings: &str, mode: &[&str]) -> crate::support::Output {
    PiCommand::for_mock(API, mock)
        .write_agent_file("settings.json", settings)
        .args(mode.iter().copied())
        .arg("hello")
        .run()
}

fn event_types(out: &crate::support::Output) -> Vec<String> {
    out.json_lines()
        .iter()
        .filter_map(|e| e["type"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn provider_retries_absorb_a_503_silently_with_auto_retry_off() {
    let mock = MockServer::with_replies([
        Reply::api_error(API, 503, "Service unavailable"),
        Reply::text(API, "after the outage"),
    ]);
    let settings = r#"{"retry":{"enabled":false,"provider":{"maxRetries":1}}}"#;
    let out = run_with(&mock, settings, &["--mode", "json"]);
    out.assert_code(0).assert_no_panic();
    assert_eq!(mock.request_count(), 2);
    let types = event_types(&out);
    assert!(
        !types.iter().any(|t| t.starts_with("auto_retry")),
        "the provider layer emits no events: {types:?}"
    );
    assert!(out.stdout.contains("after the outage"));
}

#[test]
fn without_provider_retries_a_503_ends_the_turn_when_auto_retry_is_off() {
    // pi 1.x: `retry.provider.maxRetries` defaults to 0.
    let mock = MockServer::with_replies([
        Reply::api_error(API, 503, "Service unavailable"),
        Reply::text(API, "must not be used"),
    ]);
    let out = run_with(&mock, r#"{"retry":{"enabled":false}}"#, &["-p"]);
    out.assert_code(1).assert_no_panic();
    assert_eq!(mock.request_count(), 1);
    assert!(out.stderr.contains("503"), "{}", out.stderr);
}

#[test]
fn a_server_wait_over_the_cap_fails_with_pis_message() {
    let mock = MockServer::with_replies([
        Reply::api_error(API, 429, "Slow down").header("retry-after", "120"),
        Reply::text(API, "must not be used"),
    ]);
    let settings = r#"{"retry":{"enabled":false,"provider":{"maxRetries":2}}}"#;
    let out = run_with(&mock, settings, &["-p"]);
    out.assert_code(1).assert_no_panic();
    assert_eq!(mock.request_count(), 1);
    assert!(
        out.stderr
            .contains("Server requested 120s retry delay (max: 60s). 429 Slow down"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_json_document_instead_of_a_stream_is_named_and_not_retried() {
    let body = r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[]}"#;
    let mock = MockServer::with_replies([
        Reply::error(200, body),
        Reply::text(API, "must not be used"),
    ]);
    let out = run_with(&mock, r#"{"retry":{"baseDelayMs":1}}"#, &["--mode", "json"]);
    out.assert_no_panic();
    assert_eq!(mock.request_count(), 1, "a document is not retried");
    assert!(!event_types(&out).iter().any(|t| t == "auto_retry_start"));
    assert!(
        out.stdout.contains(
            "Not an event stream: the server answered 200 (application/json) with a document"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("chatcmpl-1"), "the start of the body");
}

#[test]
fn an_html_page_instead_of_a_stream_is_named() {
    let mock = MockServer::with_replies([Reply::error(200, "<html><body>Sign in</body></html>")
        .header("content-type", "text/html; charset=utf-8")]);
    let out = run_with(&mock, r#"{"retry":{"baseDelayMs":1}}"#, &["-p"]);
    out.assert_code(1).assert_no_panic();
    assert_eq!(mock.request_count(), 1);
    assert!(
        out.stderr.contains("200 (text/plain)") || out.stderr.contains("200 (text/html)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("<html><body>Sign in"), "{}", out.stderr);
}

#[test]
fn an_empty_stream_says_so_and_is_not_retried() {
    // llama.cpp's answer to a prompt longer than its window: 200, then nothing.
    let mock = MockServer::with_replies([Reply::sse(""), Reply::text(API, "must not be used")]);
    let out = run_with(&mock, r#"{"retry":{"baseDelayMs":1}}"#, &["-p"]);
    out.assert_code(1).assert_no_panic();
    assert_eq!(mock.request_count(), 1);
    assert!(out.stderr.contains("Empty reply"), "{}", out.stderr);
    assert!(out.stderr.contains("context size"), "{}", out.stderr);
    assert!(!out.stderr.contains("Connection lost"), "{}", out.stderr);
}

#[test]
fn an_invalid_base_url_is_reported_once() {
    let models = models_json_for(API, 9).replace("http://127.0.0.1:9", "htp://127.0.0.1:9");
    let out = PiCommand::new()
        .write_agent_file("models.json", &models)
        .write_agent_file("settings.json", r#"{"retry":{"baseDelayMs":1}}"#)
        .args(["--model", "mock/mock-model", "--mode", "json", "hello"])
        .run();
    out.assert_no_panic();
    assert!(out.stdout.contains("Invalid URL"), "{}", out.stdout);
    assert!(out.stdout.contains("baseUrl"), "{}", out.stdout);
    assert!(!event_types(&out).iter().any(|t| t == "auto_retry_start"));
}

#[test]
fn a_broken_auth_json_is_named_once_and_left_alone() {
    let mock = MockServer::with_replies([Reply::text(API, "still answers")]);
    let broken = r#"{"anthropic": {"type": "api_key", "key": "sk-"#;
    let cmd = PiCommand::for_mock(API, &mock)
        .write_agent_file("auth.json", broken)
        .args(["-p", "hello"]);
    let out = cmd.run();
    out.assert_code(0).assert_no_panic();
    let auth = std::fs::read_to_string(cmd.agent_dir().join("auth.json")).unwrap();
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("auth.json"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(warnings[0].contains("is cut short"), "{}", warnings[0]);
    assert_eq!(auth, broken, "a read never writes");
}

/// A CONNECT proxy on loopback that tunnels every request to 127.0.0.1 at the requested port
/// and remembers the CONNECT lines it saw.
fn start_connect_proxy() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    use std::net::{TcpListener, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let log = log.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(client.try_clone().unwrap());
                let mut first = String::new();
                reader.read_line(&mut first).unwrap();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                        break;
                    }
                }
                log.lock().unwrap().push(first.trim().to_string());
                let target = first.split_whitespace().nth(1).unwrap_or("");
                let port = target.rsplit(':').next().unwrap_or("0");
                let Ok(upstream) = TcpStream::connect(format!("127.0.0.1:{port}")) else {
                    return;
                };
                let mut client_w = client.try_clone().unwrap();
                client_w
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .unwrap();
                let mut up_r = upstream.try_clone().unwrap();
                let mut up_w = upstream;
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut up_r, &mut client_w);
                    let _ = client_w.shutdown(std::net::Shutdown::Write);
                });
                let _ = std::io::copy(&mut reader, &mut up_w);
            });
        }
    });
    (port, seen)
}

#[test]
fn requests_go_through_the_proxy_the_environment_names() {
    let mock = MockServer::with_replies([Reply::text(API, "through the tunnel")]);
    let (proxy_port, seen) = start_connect_proxy();
    let models = models_json_for(API, mock.port()).replace("127.0.0.1", "llm.internal.example");
    let out = PiCommand::new()
        .write_agent_file("models.json", &models)
        .write_agent_file("settings.json", r#"{"retry":{"enabled":false}}"#)
        .env("HTTP_PROXY", format!("http://127.0.0.1:{proxy_port}"))
        .args(["--model", "mock/mock-model", "-p", "hello"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "through the tunnel\n");
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.as_slice(),
        [format!(
            "CONNECT llm.internal.example:{} HTTP/1.1",
            mock.port()
        )]
    );
}

/// A SOCKS5 proxy (no authentication) on loopback that connects every request to 127.0.0.1 at
/// the requested port and remembers the host names it was asked for.
fn start_socks5_proxy() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for mut client in listener.incoming().flatten() {
            let log = log.clone();
            std::thread::spawn(move || {
                let mut greeting = [0u8; 2];
                client.read_exact(&mut greeting).unwrap();
                let mut methods = vec![0u8; greeting[1] as usize];
                client.read_exact(&mut methods).unwrap();
                client.write_all(&[5, 0]).unwrap();
                let mut head = [0u8; 4];
                client.read_exact(&mut head).unwrap();
                let host = match head[3] {
                    3 => {
                        let mut len = [0u8; 1];
                        client.read_exact(&mut len).unwrap();
                        let mut name = vec![0u8; len[0] as usize];
                        client.read_exact(&mut name).unwrap();
                        String::from_utf8_lossy(&name).into_owned()
                    }
                    _ => {
                        let mut ip = [0u8; 4];
                        client.read_exact(&mut ip).unwrap();
                        std::net::Ipv4Addr::from(ip).to_string()
                    }
                };
                let mut port = [0u8; 2];
                client.read_exact(&mut port).unwrap();
                let port = u16::from_be_bytes(port);
                log.lock().unwrap().push(format!("{host}:{port}"));
                let upstream = TcpStream::connect(("127.0.0.1", port)).unwrap();
                client.write_all(&[5, 0, 0, 1, 127, 0, 0, 1, 0, 0]).unwrap();
                let mut up_r = upstream.try_clone().unwrap();
                let mut client_w = client.try_clone().unwrap();
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut up_r, &mut client_w);
                    let _ = client_w.shutdown(std::net::Shutdown::Write);
                });
                let mut up_w = upstream;
                let _ = std::io::copy(&mut client, &mut up_w);
            });
        }
    });
    (port, seen)
}

#[test]
fn all_proxy_may_name_a_socks5h_proxy() {
    let mock = MockServer::with_replies([Reply::text(API, "through socks")]);
    let (proxy_port, seen) = start_socks5_proxy();
    let models = models_json_for(API, mock.port()).replace("127.0.0.1", "llm.internal.example");
    let out = PiCommand::new()
        .write_agent_file("models.json", &models)
        .write_agent_file("settings.json", r#"{"retry":{"enabled":false}}"#)
        .env("ALL_PROXY", format!("socks5h://127.0.0.1:{proxy_port}"))
        .args(["--model", "mock/mock-model", "-p", "hello"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "through socks\n");
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [format!("llm.internal.example:{}", mock.port())]
    );
}

/// pi 1.6.0 (#10741): a reasoning model on an OpenAI-compatible host other than OpenAI gets its
/// system prompt with the `system` role; `compat.supportsDeveloperRole: true` asks for
/// `developer`.
#[test]
fn openai_compatible_hosts_get_the_system_role_unless_they_ask_for_developer() {
    for (compat, role) in [
        (serde_json::json!({}), "system"),
        (
            serde_json::json!({"supportsDeveloperRole": true}),
            "developer",
        ),
    ] {
        let mock = MockServer::with_replies([Reply::text(API, "ok")]);
        let models = serde_json::json!({"providers": {"mock": {
            "baseUrl": crate::support::pi::base_url_for(API, mock.port()),
            "api": API, "apiKey": "test-key", "compat": compat,
            "models": [{"id": "mock-model", "reasoning": true}]
        }}});
        let out = PiCommand::for_mock(API, &mock)
            .write_agent_file("models.json", &models.to_string())
            .args(["-p", "hello"])
            .run();
        out.assert_code(0).assert_no_panic();
        let body = &mock.requests()[0].body;
        assert_eq!(body["messages"][0]["role"], role, "{body}");
    }
}
