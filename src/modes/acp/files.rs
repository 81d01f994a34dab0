//! The editor's buffers for pi's file tools: when the client's `initialize` offers
//! `fs.readTextFile` / `fs.writeTextFile`, `read`, `edit` and `write` ask the editor
//! (`fs/read_text_file`, `fs/write_text_file`) instead of the disk, so the model sees unsaved
//! edits and the editor shows the changes in its buffers (tools::editor_files says when).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::ai::Abort;
use crate::tools::editor_files::EditorFiles;

use super::wire::Wire;

/// How long pi waits for the editor to read or write a file.
const FILE_TIMEOUT: Duration = Duration::from_secs(30);

pub struct EditorBuffers {
    wire: Wire,
    session_id: Arc<Mutex<String>>,
    read: bool,
    write: bool,
}

impl EditorBuffers {
    /// What the client offered in `initialize`'s `clientCapabilities`; `None` when neither.
    pub fn offered(
        wire: &Wire,
        session_id: &Arc<Mutex<String>>,
        capabilities: &Value,
    ) -> Option<EditorBuffers> {
        let fs = &capabilities["fs"];
        let (read, write) = (fs["readTextFile"] == true, fs["writeTextFile"] == true);
        (read || write).then(|| EditorBuffers {
            wire: wire.clone(),
            session_id: Arc::clone(session_id),
            read,
            write,
        })
    }

    fn ask(&self, method: &str, mut params: Value) -> Result<Value, String> {
        params["sessionId"] = json!(self
            .session_id
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone());
        match self
            .wire
            .request(method, params, &Abort::new(), Some(FILE_TIMEOUT))
        {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(format!("the editor said: {}", e.message)),
            None => Err("the editor did not answer".into()),
        }
    }
}

impl EditorFiles for EditorBuffers {
    fn read(&self, path: &Path) -> Option<Result<String, String>> {
        if !self.read {
            return None;
        }
        let answer = self.ask("fs/read_text_file", json!({"path": path.to_string_lossy()}));
        Some(answer.and_then(|v| {
            v["content"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| "the editor's answer had no \"content\"".to_string())
        }))
    }

    fn write(&self, path: &Path, text: &str) -> Option<Result<(), String>> {
        if !self.write {
            return None;
        }
        let answer = self.ask(
            "fs/write_text_file",
            json!({"path": path.to_string_lossy(), "content": text}),
        );
        Some(answer.map(|_| ()))
    }
}
