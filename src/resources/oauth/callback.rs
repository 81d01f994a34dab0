//! The localhost redirect target of an authorization-code login: a tiny HTTP server on a std
//! `TcpListener`, run by one named thread (`pi-oauth-callback`) until it is dropped. It answers
//! every request with a small HTML page and forwards the first valid `code` (with the expected
//! `state`, and the RFC 9207 `iss` when sent) over a channel; an `error` answer for the expected
//! `state` goes over a second channel, so a flow that listens for it fails at once. The thread polls a non-blocking listener, so dropping the server
//! stops it within one poll interval; nothing ever blocks on a client for long.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use super::pkce::query_value;

/// What the browser brought back.
#[derive(Debug, Clone, PartialEq)]
pub struct Callback {
    pub code: String,
    pub state: String,
    /// The authorization server's `iss` (RFC 9207), when it sent one.
    pub iss: Option<String>,
    /// The path it arrived on.
    pub path: String,
}

/// The bind host for callback servers: `PI_OAUTH_CALLBACK_HOST`, default `127.0.0.1`.
pub fn callback_host() -> String {
    std::env::var("PI_OAUTH_CALLBACK_HOST")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .unwrap_or_else(|| "127.0.0.1".into())
}

pub struct CallbackServer {
    port: u16,
    stop: Arc<AtomicBool>,
    rx: Receiver<Callback>,
    failures: Receiver<String>,
    thread: Option<JoinHandle<()>>,
}

impl CallbackServer {
    /// Listens on `host:port` (port 0 picks a free one) for `GET <path>?code=…&state=…`.
    /// `label` names the service on the pages shown in the browser.
    pub fn start(
        host: &str,
        port: u16,
        path: &str,
        expected_state: &str,
        label: &str,
    ) -> std::io::Result<Self> {
        Self::start_with_paths(host, port, &[path], expected_state, label)
    }

    /// [`CallbackServer::start`] answering on several paths (a sign-in whose redirect path is
    /// only known later).
    pub fn start_with_paths(
        host: &str,
        port: u16,
        paths: &[&str],
        expected_state: &str,
        label: &str,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind((host, port))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = crossbeam_channel::bounded(1);
        let (fail_tx, failures) = crossbeam_channel::bounded(1);
        let page = Page {
            paths: paths.iter().map(|p| p.to_string()).collect(),
            state: expected_state.to_string(),
            label: label.to_string(),
        };
        let thread = std::thread::Builder::new()
            .name("pi-oauth-callback".into())
            .spawn({
                let stop = Arc::clone(&stop);
                move || serve(listener, &stop, &page, &tx, &fail_tx)
            })?;
        Ok(CallbackServer {
            port,
            stop,
            rx,
            failures,
            thread: Some(thread),
        })
    }

    /// The port actually bound.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Receives the first valid callback.
    pub fn receiver(&self) -> &Receiver<Callback> {
        &self.rx
    }

    /// Receives the `error_description` (or `error`) of an authorization server that refused,
    /// sent with the expected `state`.
    pub fn failures(&self) -> &Receiver<String> {
        &self.failures
    }
}

impl Drop for CallbackServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Joining is bounded: the thread checks the flag every poll and client I/O has timeouts.
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Page {
    paths: Vec<String>,
    state: String,
    label: String,
}

fn serve(
    listener: TcpListener,
    stop: &AtomicBool,
    page: &Page,
    tx: &Sender<Callback>,
    fail_tx: &Sender<String>,
) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                // A full channel means an earlier answer already won; later ones are moot.
                match handle(stream, page) {
                    Some(Ok(cb)) => {
                        let _ = tx.try_send(cb);
                    }
                    Some(Err(failure)) => {
                        let _ = fail_tx.try_send(failure);
                    }
                    None => {}
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(25));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(25)),
        }
    }
}

/// Answers one request; returns the callback when it carried a valid code, or the server's
/// refusal when it carried an error for the expected state.
fn handle(stream: TcpStream, page: &Page) -> Option<Result<Callback, String>> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    // Drain the headers so the client sees a clean response.
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    let target = request_line.split_whitespace().nth(1).unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let (status, body, result) = if !page.paths.iter().any(|p| p == path) {
        (404, error_page("Callback route not found.", None), None)
    } else if let Some(err) = query_value(query, "error") {
        let msg = format!("{} authentication did not complete.", page.label);
        let ours = query_value(query, "state").as_deref() == Some(page.state.as_str());
        let failure = ours.then(|| query_value(query, "error_description").unwrap_or(err.clone()));
        (
            400,
            error_page(&msg, Some(&format!("Error: {err}"))),
            failure.map(Err),
        )
    } else {
        let code = query_value(query, "code").filter(|c| !c.is_empty());
        let state = query_value(query, "state");
        match (code, state) {
            (_, s) if s.as_deref() != Some(page.state.as_str()) => {
                (400, error_page("State mismatch.", None), None)
            }
            (None, _) => (400, error_page("Missing authorization code.", None), None),
            (Some(code), Some(state)) => {
                let msg = format!(
                    "{} authentication completed. You can close this window.",
                    page.label
                );
                let iss = query_value(query, "iss").filter(|i| !i.is_empty());
                (
                    200,
                    success_page(&msg),
                    Some(Ok(Callback {
                        code,
                        state,
                        iss,
                        path: path.to_string(),
                    })),
                )
            }
            (Some(_), None) => (400, error_page("State mismatch.", None), None),
        }
    };
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let mut out = stream;
    let _ = write!(
        out,
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = out.flush();
    result
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn success_page(message: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>pi login</title></head>\
         <body><h1>Login complete</h1><p>{}</p></body></html>",
        escape(message)
    )
}

fn error_page(message: &str, detail: Option<&str>) -> String {
    let detail = detail
        .map(|d| format!("<p><code>{}</code></p>", escape(d)))
        .unwrap_or_default();
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>pi login</title></head>\
         <body><h1>Login failed</h1><p>{}</p>{detail}</body></html>",
        escape(message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn get(port: u16, target: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(s, "GET {target} HTTP/1.1\r\nhost: localhost\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn only_a_matching_state_with_a_code_is_forwarded() {
        let server = CallbackServer::start("127.0.0.1", 0, "/callback", "st", "Test").unwrap();
        let port = server.port();
        assert!(get(port, "/other?code=a&state=st").starts_with("HTTP/1.1 404"));
        assert!(get(port, "/callback?code=a&state=bad").contains("State mismatch."));
        assert!(get(port, "/callback?state=st").contains("Missing authorization code."));
        assert!(get(port, "/callback?error=access_denied").contains("Error: access_denied"));
        assert!(
            server.failures().is_empty(),
            "an error without our state is ignored"
        );
        assert!(server.receiver().is_empty());
        let ok = get(port, "/callback?code=c%2F1&state=st");
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert!(ok.contains("Test authentication completed."));
        let cb = server
            .receiver()
            .recv_timeout(Duration::from_secs(2))
            .unwrap();
        assert_eq!(
            cb,
            Callback {
                code: "c/1".into(),
                state: "st".into(),
                iss: None,
                path: "/callback".into(),
            }
        );
        drop(server);
        assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    }

    #[test]
    fn iss_and_refusals_are_forwarded() {
        let server =
            CallbackServer::start_with_paths("127.0.0.1", 0, &["/cb", "/cb/x"], "st", "Test")
                .unwrap();
        let port = server.port();
        get(
            port,
            "/cb?error=access_denied&error_description=No%20way&state=st",
        );
        let refusal = server.failures().recv_timeout(Duration::from_secs(2));
        assert_eq!(refusal.unwrap(), "No way");
        get(port, "/cb/x?code=c&state=st&iss=https%3A%2F%2Fas.example");
        let cb = server
            .receiver()
            .recv_timeout(Duration::from_secs(2))
            .unwrap();
        assert_eq!(cb.iss.as_deref(), Some("https://as.example"));
        assert_eq!(cb.path, "/cb/x");
        drop(server);
        assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    }
}
