//! `write`: create or replace a whole file. Parent directories are created, and the file is
//! replaced atomically through `util::atomic` (readers never see a half-written file; the
//! original file's permissions and symlinks are kept). Under `--sandbox` the file is opened
//! beneath its writable root and written through that descriptor (`util::sandbox::Target`).

use std::fs;
use std::io;
use std::path::Path;

use serde_json::{json, Value};

use super::mutation_queue::{reservation, with_file_lock};
use super::path::{node_error, resolve_to_cwd, str_arg};
use crate::agent::tool::{Tool, ToolContext, ToolOutput};

/// Replaces `path` with `bytes` the way `write` and `edit` do (see `util::atomic`): readers
/// never see half a file, a symlink survives with the new content in its target, and the
/// permissions are kept. Not fsynced: a crash may undo a tool's edit, which the model redoes.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let options = crate::util::atomic::Options {
        close_old_in_background: true,
        ..Default::default()
    };
    crate::util::atomic::replace(path, bytes, options)
}

pub struct WriteTool;

const DESCRIPTION: &str = "Write a file with the given content, replacing it completely if it \
already exists and creating it (and any missing parent directories) if it does not.";

const GUIDELINES: &[&str] =
    &["Use write only to create new files or to rewrite a file completely."];

impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to write, relative to the working directory or absolute"},
                "content": {"type": "string", "description": "The complete new content of the file"}
            },
            "required": ["path", "content"]
        })
    }
    fn prompt_snippet(&self) -> &str {
        "Create or overwrite files"
    }
    fn prompt_guidelines(&self) -> &[&str] {
        GUIDELINES
    }
    fn reserve(&self, args: &Value, cwd: &std::path::Path) -> Option<Box<dyn FnOnce() + Send>> {
        let path = args.get("path")?.as_str()?;
        Some(reservation(&resolve_to_cwd(path, cwd)))
    }
    fn execute(
        &self,
        _call_id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, String> {
        let path = str_arg("write", &args, "path")?;
        let content = str_arg("write", &args, "content")?;
        let abs = resolve_to_cwd(path, &ctx.cwd);
        with_file_lock(&abs, || {
            if ctx.abort.is_aborted() {
                return Err("Operation aborted".to_string());
            }
            super::path::refuse_special_file(&abs, path, "write")?;
            // Sandbox (issues 16, 29): opened beneath its writable root, written through
            // that descriptor: the check is the system call that writes.
            if let Some(target) = super::sandbox::open_for_write(&abs)? {
                target
                    .replace(content.as_bytes(), true)
                    .map_err(|e| node_error(&e, "open", &abs))?;
                return Ok(ToolOutput::text(format!("Successfully wrote to {path}")));
            }
            // In an editor that offers its buffers, the editor writes the file.
            if let Some(written) =
                super::editor_files::current().and_then(|e| e.write(&abs, content))
            {
                written.map_err(|e| format!("Cannot write {path}: {e}"))?;
                return Ok(ToolOutput::text(format!("Successfully wrote to {path}")));
            }
            if let Some(dir) = abs.parent() {
                fs::create_dir_all(dir).map_err(|e| node_error(&e, "mkdir", dir))?;
            }
            write_atomic(&abs, content.as_bytes()).map_err(|e| node_error(&e, "open", &abs))?;
            // pi 1.x dropped the byte count (it was a UTF-16 length, not bytes).
            Ok(ToolOutput::text(format!("Successfully wrote to {path}")))
        })
    }
}

#[cfg(test)]
#[path = "tests/write.rs"]
mod tests;
