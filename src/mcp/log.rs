//! `mcp.log` in the agent directory: what servers send with `notifications/message`, one line
//! each as `<time> [<server>] <level> <logger>: <message>` (continuation lines indented). Several
//! pi processes may append to the same file, so every message is one append; past 5 MB the
//! file moves to `mcp.log.1`. Write errors are ignored: logging never breaks a tool.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::Value;

const MAX_LOG_BYTES: u64 = 5 * 1024 * 1024;

pub struct ServerLog {
    path: PathBuf,
    /// Our idea of the file's size; `None` until the first write.
    size: Mutex<Option<u64>>,
}

/// One `notifications/message` as a log line.
pub fn format_line(server: &str, params: &Value, now_ms: i64) -> String {
    let level = params
        .get("level")
        .and_then(Value::as_str)
        .unwrap_or("info");
    let logger = match params.get("logger").and_then(Value::as_str) {
        Some(l) if !l.is_empty() => format!(" {l}:"),
        _ => String::new(),
    };
    let data = if params.is_object() {
        params.get("data").unwrap_or(&Value::Null)
    } else {
        params
    };
    let text = match data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let text = text.replace("\r\n", "\n").replace('\n', "\n    ");
    format!(
        "{} [{server}] {level}{logger} {text}\n",
        crate::session::ids::iso_timestamp(now_ms)
    )
}

impl ServerLog {
    pub fn new(path: PathBuf) -> ServerLog {
        ServerLog {
            path,
            size: Mutex::new(None),
        }
    }

    fn current_size(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }

    pub fn write(&self, server: &str, params: &Value) {
        let line = format_line(server, params, crate::ai::now_ms());
        let mut size = self.size.lock().unwrap_or_else(|p| p.into_inner());
        let known = match *size {
            Some(s) => s,
            None => {
                if let Some(dir) = self.path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                self.current_size()
            }
        };
        let mut known = known;
        if known > MAX_LOG_BYTES {
            // Another process may have rotated it already: look before renaming.
            if self.current_size() > MAX_LOG_BYTES {
                let mut rotated = self.path.clone().into_os_string();
                rotated.push(".1");
                let _ = std::fs::rename(&self.path, rotated);
            }
            known = self.current_size();
        }
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if appended.is_ok() {
            known += line.len() as u64;
        }
        *size = Some(known);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_read_like_pi() {
        let at = 1_700_000_000_123;
        assert_eq!(
            format_line(
                "fs",
                &json!({"level": "warning", "logger": "io", "data": "a\nb"}),
                at
            ),
            "2023-11-14T22:13:20.123Z [fs] warning io: a\n    b\n"
        );
        assert_eq!(
            format_line("fs", &json!({"data": {"k": 1}}), at),
            "2023-11-14T22:13:20.123Z [fs] info {\"k\":1}\n"
        );
        assert_eq!(
            format_line("fs", &json!("plain"), at),
            "2023-11-14T22:13:20.123Z [fs] info plain\n"
        );
    }

    #[test]
    fn rotates_past_five_megabytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent").join("mcp.log");
        let log = ServerLog::new(path.clone());
        log.write("s", &json!({"data": "first"}));
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("[s] info first"));
        std::fs::write(&path, vec![b'x'; (MAX_LOG_BYTES + 1) as usize]).unwrap();
        let log = ServerLog::new(path.clone());
        log.write("s", &json!({"data": "after"}));
        let rotated = dir.path().join("agent").join("mcp.log.1");
        assert_eq!(
            std::fs::metadata(&rotated).unwrap().len(),
            MAX_LOG_BYTES + 1
        );
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .ends_with("info after\n"));
    }
}
