//! The `ls` tool: one directory's entries, sorted case-insensitively the way pi's
//! `localeCompare` orders them, directories suffixed with `/`, dotfiles included.

use std::io;
use std::path::Path;

use serde_json::{json, Value};

use super::search_util::{count_arg, finish, resolve_to_cwd, str_arg, ABORTED};
use crate::agent::tool::{Tool, ToolContext, ToolOutput};
use crate::util::collate::locale_compare;
use crate::util::sort;

const DEFAULT_LIMIT: usize = 500;

const DESCRIPTION: &str = "List the entries of a directory in alphabetical order \
(case-insensitive). Directories end with '/', and dotfiles are included. At most 500 entries \
or 50KB of output are returned (whichever comes first).";

pub struct LsTool;

impl Tool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (default: the current directory)"},
                "limit": {"type": "number", "description": "Return at most this many entries (default: 500)"}
            }
        })
    }

    fn prompt_snippet(&self) -> &str {
        "List the entries of a directory"
    }

    fn execute(&self, _id: &str, args: Value, ctx: &ToolContext) -> Result<ToolOutput, String> {
        if ctx.abort.is_aborted() {
            return Err(ABORTED.into());
        }
        let dir_arg = str_arg(&args, "path")
            .filter(|p| !p.is_empty())
            .unwrap_or(".");
        let dir = resolve_to_cwd(dir_arg, &ctx.cwd);
        // A limit below one would list nothing and claim an empty directory: pi 1.x means 1.
        let limit = count_arg(&args, "limit").unwrap_or(DEFAULT_LIMIT).max(1);
        // Like Node's existsSync, any failure to stat (dangling link, no permission) reads as
        // "not found".
        match std::fs::metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(format!("Not a directory: {}", dir.display())),
            Err(_) => return Err(format!("Path not found: {}", dir.display())),
        }
        let mut names = Vec::new();
        let read = std::fs::read_dir(&dir)
            .map_err(|e| format!("Cannot read directory: {}", node_error(&e, "scandir", &dir)))?;
        for entry in read {
            let entry = entry.map_err(|e| {
                format!("Cannot read directory: {}", node_error(&e, "scandir", &dir))
            })?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        // A stable sort keeps names equal when lowercased (`A`, `a`) in directory order, as
        // JavaScript's stable `sort` does.
        sort::sort_by_cached_key_with(
            &mut names,
            |n| n.to_lowercase(),
            |a, b| locale_compare(a, b),
        );

        let mut rows = Vec::new();
        let mut limit_reached = false;
        for name in names {
            if rows.len() >= limit {
                limit_reached = true;
                break;
            }
            if ctx.abort.is_aborted() {
                return Err(ABORTED.into());
            }
            // Entries that cannot be stat'ed (dangling symlinks, races) are skipped.
            match std::fs::metadata(dir.join(&name)) {
                Ok(m) if m.is_dir() => rows.push(name + "/"),
                Ok(_) => rows.push(name),
                Err(_) => {}
            }
        }
        if rows.is_empty() {
            return Ok(ToolOutput::text("(empty directory)"));
        }
        let limit_notice = limit_reached.then(|| {
            (
                format!(
                    "{limit} entries limit reached. Use limit={} for more",
                    limit * 2
                ),
                "entryLimitReached",
                limit,
            )
        });
        let (text, details) = finish(&rows, limit_notice, None);
        let out = ToolOutput::text(text);
        Ok(match details {
            Some(d) => out.with_details(d),
            None => out,
        })
    }
}

/// An error worded like Node's fs messages (`EACCES: permission denied, scandir '/x'`).
fn node_error(e: &io::Error, syscall: &str, path: &Path) -> String {
    let code = match e.raw_os_error() {
        Some(libc::EACCES) => "EACCES: permission denied",
        Some(libc::EPERM) => "EPERM: operation not permitted",
        Some(libc::ENOENT) => "ENOENT: no such file or directory",
        Some(libc::ENOTDIR) => "ENOTDIR: not a directory",
        Some(libc::EMFILE) => "EMFILE: too many open files",
        Some(libc::EIO) => "EIO: i/o error",
        _ => return format!("{e}, {syscall} '{}'", path.display()),
    };
    format!("{code}, {syscall} '{}'", path.display())
}

#[cfg(test)]
#[path = "tests/ls.rs"]
mod tests;
