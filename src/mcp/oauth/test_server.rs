//! The test authorization server (`tests/support/mcp_oauth_server.py`) for unit tests: started
//! on a free loopback port, killed on drop; and the browser's step (the redirect its
//! `/authorize` answers with).

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub struct Server {
    child: Child,
    pub origin: String,
}

impl Server {
    pub fn start() -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = format!(
            "{}/tests/support/mcp_oauth_server.py",
            env!("CARGO_MANIFEST_DIR")
        );
        let child = Command::new("python3")
            .args([script, port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the OAuth test server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Server {
            child,
            origin: format!("http://127.0.0.1:{port}"),
        }
    }

    pub fn stats(&self) -> Value {
        let text = ureq::get(&format!("{}/stats", self.origin))
            .call()
            .unwrap()
            .into_body()
            .read_to_string()
            .unwrap();
        serde_json::from_str(&text).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The redirect the server's `/authorize` answers with.
pub fn authorize(url: &str) -> String {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .max_redirects(0)
        .http_status_as_error(false)
        .build()
        .into();
    let resp = agent.get(url).call().unwrap_or_else(|e| panic!("{e}"));
    crate::ai::http::header(&resp, "location")
        .expect("a redirect")
        .to_string()
}
