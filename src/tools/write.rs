//! `write`: create or replace a whole file. Parent directories are created, the new content is
//! written to a temporary file beside the target and renamed over it (so readers never see a
//! half-written file), and the original file's permissions are kept.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

use super::mutation_queue::with_file_lock;
use super::path::{node_error, resolve_to_cwd, str_arg};
use crate::agent::tool::{Tool, ToolContext, ToolOutput};

/// Replaces `path` with `bytes` atomically: temp file in the same directory, then rename.
/// A symlink is followed so the link itself survives; existing permissions are preserved.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let target: PathBuf = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path)?,
        _ => path.to_path_buf(),
    };
    let existing = fs::metadata(&target).ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.pi-tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        if let Some(m) = &existing {
            f.set_permissions(m.permissions())?;
        }
        drop(f);
        // Keep the old file open across the rename so the kernel does not free its pages inside
        // the rename call; closing it on a helper thread moves that cost off the caller's path
        // (on exit the kernel closes it anyway, so nothing is left behind).
        let old = fs::File::open(&target).ok();
        fs::rename(&tmp, &target)?;
        if let Some(old) = old {
            // Detached on purpose: it only closes a file descriptor.
            let _ = std::thread::Builder::new()
                .name("pi-close-old".into())
                .spawn(move || drop(old));
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
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
            if let Some(dir) = abs.parent() {
                fs::create_dir_all(dir).map_err(|e| node_error(&e, "mkdir", dir))?;
            }
            write_atomic(&abs, content.as_bytes()).map_err(|e| node_error(&e, "open", &abs))?;
            // pi reports JavaScript's string length: UTF-16 code units, not bytes.
            let n = content.encode_utf16().count();
            Ok(ToolOutput::text(format!(
                "Successfully wrote {n} bytes to {path}"
            )))
        })
    }
}

#[cfg(test)]
#[path = "tests/write.rs"]
mod tests;
