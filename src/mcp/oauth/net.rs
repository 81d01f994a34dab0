//! Requests to authorization servers: each limited to 15 seconds (as pi limits them), run on
//! its own thread so the caller stops waiting within 100 ms of an abort (the request thread
//! is left to finish on its own and its answer is dropped).

use std::io::Read;
use std::time::Duration;

use serde_json::Value;

use super::OAuthError;
use crate::ai::{http, Abort};

const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
const MAX_BODY_BYTES: u64 = 1 << 20;
const POLL: Duration = Duration::from_millis(50);

pub struct Response {
    pub status: u16,
    pub body: String,
}

impl Response {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }
}

/// One request; `Err` only when it never got an answer (or was cancelled).
pub fn send(
    method: &str,
    url: &str,
    headers: &[(&str, String)],
    body: Option<String>,
    abort: &Abort,
) -> Result<Response, OAuthError> {
    if abort.is_aborted() {
        return Err(OAuthError::Cancelled);
    }
    let agent = http::client_agent(url, REQUEST_TIMEOUT, Some(REQUEST_TIMEOUT));
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let (method, url_owned) = (method.to_string(), url.to_string());
    let (tx, rx) = crate::util::reply::reply();
    // Detached: it ends within the request timeout; a caller that stopped waiting drops its
    // answer.
    std::thread::Builder::new()
        .name("pi-mcp-oauth".into())
        .spawn(move || {
            let url = url_owned.as_str();
            let headers: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let sent = match body {
                Some(b) => http::new_request(&method, url, &headers, b).map(|r| agent.run(r)),
                None => http::new_request(&method, url, &headers, ()).map(|r| agent.run(r)),
            };
            let answer = sent.map_err(|e| e.message).and_then(|run| match run {
                Ok(r) => {
                    let status = r.status().as_u16();
                    let mut text = String::new();
                    r.into_body()
                        .into_reader()
                        .take(MAX_BODY_BYTES)
                        .read_to_string(&mut text)
                        .map(|_| Response { status, body: text })
                        .map_err(|e| http::describe_io_error(&e))
                }
                Err(e) => Err(http::network_error_message(e, url)),
            });
            let _ = tx.send(answer);
        })
        .map_err(|e| OAuthError::Other(format!("could not start a thread: {e}")))?;
    loop {
        match rx.recv_timeout(POLL) {
            Ok(answer) => {
                return answer
                    .map_err(|e| OAuthError::Other(format!("request to {url} failed: {e}")))
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) if abort.is_aborted() => {
                return Err(OAuthError::Cancelled)
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                return Err(OAuthError::Other(format!("request to {url} failed")))
            }
        }
    }
}

/// GET of a metadata document, as pi asks for it.
pub fn get_metadata(url: &str, abort: &Abort) -> Result<Response, OAuthError> {
    send(
        "GET",
        url,
        &[
            ("accept", "application/json".into()),
            (
                "mcp-protocol-version",
                crate::mcp::client::LATEST_PROTOCOL_VERSION.into(),
            ),
        ],
        None,
        abort,
    )
}
