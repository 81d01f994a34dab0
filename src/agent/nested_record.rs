//! The record of the tool calls one model-issued call made while it ran (a `codemode`
//! script's `tools.*`), kept on its tool result message as `nestedCalls` the way pi 1.6.0 keeps
//! it (`core/nested-tool-calls.ts`): `{ calls: [{ id, name, status, arguments | argumentsBytes,
//! durationMs?, error? }], complete }`. Arguments over the per-call or total size are left out
//! (their size is kept), calls past the count are dropped, and the record is then marked
//! incomplete, so a script that makes ten thousand calls cannot grow the session without end.

use std::time::Instant;

use serde_json::{json, Map, Value};

const MAX_CALLS: usize = 256;
const MAX_ARGUMENT_BYTES_PER_CALL: usize = 8 * 1024;
const MAX_ARGUMENT_BYTES_TOTAL: usize = 32 * 1024;
const MAX_ERROR_CHARS: usize = 500;

/// One recorded call: its index in the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordSlot(usize);

#[derive(Debug)]
pub struct NestedCallRecorder {
    calls: Vec<(Map<String, Value>, Instant)>,
    complete: bool,
    argument_bytes: usize,
}

impl Default for NestedCallRecorder {
    fn default() -> Self {
        NestedCallRecorder {
            calls: Vec::new(),
            complete: true,
            argument_bytes: 0,
        }
    }
}

impl NestedCallRecorder {
    /// Records a call as it starts; `None` when it is past the count and dropped.
    pub fn start(&mut self, id: &str, name: &str, arguments: &Value) -> Option<RecordSlot> {
        if self.calls.len() >= MAX_CALLS {
            self.complete = false;
            return None;
        }
        let mut record = Map::new();
        record.insert("id".into(), json!(id));
        record.insert("name".into(), json!(name));
        record.insert("status".into(), json!("unfinished"));
        let bytes = serde_json::to_string(arguments).map_or(0, |s| s.len());
        if bytes > MAX_ARGUMENT_BYTES_PER_CALL
            || self.argument_bytes + bytes > MAX_ARGUMENT_BYTES_TOTAL
        {
            record.insert("argumentsBytes".into(), json!(bytes));
            self.complete = false;
        } else {
            record.insert("arguments".into(), arguments.clone());
            self.argument_bytes += bytes;
        }
        self.calls.push((record, Instant::now()));
        Some(RecordSlot(self.calls.len() - 1))
    }

    /// Marks a started call done; `error_text` (the result's text) is kept, cut to 500
    /// characters, for a failed call.
    pub fn finish(&mut self, slot: Option<RecordSlot>, is_error: bool, error_text: &str) {
        let Some((record, started)) = slot.and_then(|RecordSlot(i)| self.calls.get_mut(i)) else {
            return;
        };
        record.insert(
            "status".into(),
            json!(if is_error { "error" } else { "ok" }),
        );
        record.insert(
            "durationMs".into(),
            json!((started.elapsed().as_secs_f64() * 1000.0).round() as u64),
        );
        if is_error && !error_text.is_empty() {
            let cut: String = error_text.chars().take(MAX_ERROR_CHARS).collect();
            record.insert("error".into(), json!(cut));
        }
    }

    /// The record so far, or `None` when no call was made.
    pub fn snapshot(&self) -> Option<Value> {
        if self.calls.is_empty() && self.complete {
            return None;
        }
        let finished = self
            .calls
            .iter()
            .all(|(r, _)| r.get("status") != Some(&json!("unfinished")));
        Some(json!({
            "calls": self.calls.iter().map(|(r, _)| Value::Object(r.clone())).collect::<Vec<_>>(),
            "complete": self.complete && finished,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_recorded_with_their_outcome_and_limits() {
        let mut r = NestedCallRecorder::default();
        assert_eq!(r.snapshot(), None);
        let a = r.start("c/1", "bash", &json!({"command": "ls"}));
        let b = r.start("c/2", "read", &json!({"path": "x"}));
        r.finish(a, false, "");
        let snap = r.snapshot().unwrap();
        assert_eq!(snap["complete"], json!(false), "one call unfinished");
        assert_eq!(snap["calls"][0]["status"], "ok");
        assert_eq!(snap["calls"][0]["arguments"], json!({"command": "ls"}));
        r.finish(b, true, &"e".repeat(600));
        let snap = r.snapshot().unwrap();
        assert_eq!(snap["complete"], json!(true));
        assert_eq!(snap["calls"][1]["error"].as_str().unwrap().len(), 500);
        let big = json!({"content": "x".repeat(9000)});
        let c = r.start("c/3", "write", &big);
        r.finish(c, false, "");
        let snap = r.snapshot().unwrap();
        assert_eq!(snap["calls"][2].get("arguments"), None);
        assert!(snap["calls"][2]["argumentsBytes"].as_u64().unwrap() > 9000);
        assert_eq!(snap["complete"], json!(false), "arguments left out");
        for i in 0..300 {
            r.start(&format!("c/{i}"), "ls", &json!({}));
        }
        assert_eq!(
            r.snapshot().unwrap()["calls"].as_array().unwrap().len(),
            256
        );
    }
}
