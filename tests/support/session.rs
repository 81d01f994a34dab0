//! Reading what a run left in its session file: the one file under the agent dir, and the
//! tool results in it.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The one session file under `agent_dir/sessions` (fails unless there is exactly one).
pub fn the_session_file(agent_dir: &Path) -> PathBuf {
    let mut found = Vec::new();
    let mut dirs = vec![agent_dir.join("sessions")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                found.push(p);
            }
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

/// Every tool result in a session file: (call id, its text content joined, isError).
pub fn tool_results_in(file: &Path) -> Vec<(String, String, bool)> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "toolResult")
        .map(|e| {
            let m = &e["message"];
            let text = m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect::<String>();
            (
                m["toolCallId"].as_str().unwrap_or_default().to_string(),
                text,
                m["isError"] == true,
            )
        })
        .collect()
}

/// Every tool result in the run's one session file under `agent_dir`.
pub fn tool_results(agent_dir: &Path) -> Vec<(String, String, bool)> {
    tool_results_in(&the_session_file(agent_dir))
}
