//! Serialized writes of whole JSON lines to stdout for `--mode rpc`, shared by the main loop,
//! the run's worker thread and extension dialogs (`rpc_ui`), and the shape of a response line.

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use crate::util::json::to_js_string;

/// Where [`Out::streamed_line`]'s writer puts each piece of its line.
pub(crate) type Put<'a> = &'a mut dyn FnMut(&[u8]);

/// Serialized writes of whole lines to stdout, shared by the main loop, the worker and
/// extension UI.
#[derive(Clone)]
pub(crate) struct Out(Arc<Mutex<Box<dyn Write + Send>>>);

impl Out {
    pub(crate) fn new(w: Box<dyn Write + Send>) -> Out {
        Out(Arc::new(Mutex::new(w)))
    }

    pub(crate) fn line(&self, v: &Value) {
        self.text_line(to_js_string(v));
    }

    /// Writes one line made piece by piece by `write` (into a buffer flushed to stdout as it
    /// fills), so a large answer is never held whole; no other line can come between.
    pub(crate) fn streamed_line(&self, write: &mut dyn FnMut(Put<'_>)) {
        const CHUNK: usize = 1 << 16;
        let mut out = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut buf = Vec::with_capacity(CHUNK);
        let mut failed = false;
        write(&mut |bytes| {
            buf.extend_from_slice(bytes);
            if buf.len() >= CHUNK && !failed {
                failed = out.write_all(&buf).is_err();
                buf.clear();
            }
        });
        buf.push(b'\n');
        if !failed {
            // A closed stdout means the client is gone; stdin EOF will end us.
            let _ = out.write_all(&buf).and_then(|_| out.flush());
        }
    }

    /// Writes one already serialized JSON line and flushes it.
    pub(crate) fn text_line(&self, mut text: String) {
        text.push('\n');
        let mut out = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // A closed stdout means the client is gone; stdin EOF will end us.
        let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    }
}

/// `{id?, type: "response", command, success, data? | error}`.
pub(crate) fn response(
    id: &Option<Value>,
    command: &str,
    result: Result<Option<Value>, String>,
) -> Value {
    let mut m = Map::new();
    if let Some(id) = id {
        m.insert("id".into(), id.clone());
    }
    m.insert("type".into(), "response".into());
    m.insert("command".into(), command.into());
    match result {
        Ok(data) => {
            m.insert("success".into(), true.into());
            if let Some(d) = data {
                m.insert("data".into(), d);
            }
        }
        Err(e) => {
            m.insert("success".into(), false.into());
            m.insert("error".into(), e.into());
        }
    }
    Value::Object(m)
}
