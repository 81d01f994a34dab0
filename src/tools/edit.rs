//! `edit`: targeted replacements in one file (matched and applied by `edit_apply`). The
//! arguments may come in older or looser shapes (top-level `oldText`/`newText`, `edits` as a
//! JSON string or a single object); a BOM and every line's own ending survive; the write is
//! atomic and serialized per file; the result carries pi's display diff and a unified patch.
//! Under `--sandbox` the file is read and written through a descriptor opened beneath its
//! writable root (`util::sandbox::Target`).

use std::fs;

use serde_json::{json, Value};

use super::diff::edit_diff;
use super::mutation_queue::{reservation, with_file_lock};
use super::path::{access, error_code, node_error, resolve_to_cwd, str_arg, validation_error};
use super::write::write_atomic;
use crate::agent::tool::{Tool, ToolContext, ToolOutput};

#[path = "edit_apply.rs"]
mod apply;
#[path = "fuzzy.rs"]
mod fuzzy;
pub use apply::{apply_edits, splice_into_original, to_lf, Applied, Edit, Replacement};
pub use fuzzy::normalize_for_fuzzy;

pub struct EditTool;

const DESCRIPTION: &str = "Change one file by replacing exact text. Each edits[].oldText must \
match one unique place in the original file, and no two edits may overlap. When changes sit in \
the same block or on neighbouring lines, combine them into a single edit rather than sending \
overlapping ones, and don't pad oldText with long unchanged stretches just to bridge far-apart \
changes.";

const GUIDELINES: &[&str] = &[
    "Use edit for precise changes; edits[].oldText has to match the file exactly",
    "To change several separate places in one file, send one edit call with several edits[] entries rather than several calls",
    "Every edits[].oldText is matched against the original file, not against the result of earlier edits; never send overlapping or nested edits, merge nearby changes into one",
    "Keep each edits[].oldText as short as possible while still unique in the file; do not pad it with large unchanged regions",
];

fn is_single_edit(v: &Value) -> bool {
    v.get("oldText").is_some_and(Value::is_string) && v.get("newText").is_some_and(Value::is_string)
}

/// Normalizes the arguments as pi's `prepareArguments` does: `edits` sent as a JSON string is
/// parsed, a single edit object (in `edits` or in that string) becomes a list of one, and
/// legacy top-level `oldText`/`newText` become one more entry of `edits`.
pub fn prepare_arguments(mut args: Value) -> Value {
    let Some(obj) = args.as_object_mut() else {
        return args;
    };
    match obj.get("edits") {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(parsed @ Value::Array(_)) => {
                obj.insert("edits".into(), parsed);
            }
            Ok(parsed) if is_single_edit(&parsed) => {
                obj.insert("edits".into(), Value::Array(vec![parsed]));
            }
            _ => {}
        },
        Some(single) if is_single_edit(single) => {
            let single = single.clone();
            obj.insert("edits".into(), Value::Array(vec![single]));
        }
        _ => {}
    }
    if is_single_edit(&Value::Object(obj.clone())) {
        let old = obj.remove("oldText").unwrap_or_default();
        let new = obj.remove("newText").unwrap_or_default();
        let mut edits = match obj.get("edits") {
            Some(Value::Array(a)) => a.clone(),
            _ => Vec::new(),
        };
        edits.push(json!({"oldText": old, "newText": new}));
        obj.insert("edits".into(), Value::Array(edits));
    }
    args
}

fn parse_edits(args: &Value) -> Result<Vec<Edit>, String> {
    let edits = match args.get("edits") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        _ => {
            return Err(
                "Edit tool input is invalid. edits must contain at least one replacement.".into(),
            )
        }
    };
    let mut out = Vec::with_capacity(edits.len());
    for (i, e) in edits.iter().enumerate() {
        let field = |name: &str| match e.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            None => Err(validation_error(
                "edit",
                &format!("edits.{i}.{name}"),
                "missing",
                args,
            )),
            Some(other) => Err(validation_error(
                "edit",
                &format!("edits.{i}.{name}"),
                &format!(
                    "expected string, got {}",
                    crate::agent::validate::type_name(other)
                ),
                args,
            )),
        };
        out.push(Edit {
            old_text: field("oldText")?,
            new_text: field("newText")?,
        });
    }
    Ok(out)
}

impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to edit, relative to the working directory or absolute"},
                "edits": {
                    "type": "array",
                    "description": "The replacements. Each is matched against the original file, not against the result of the others; they must not overlap or nest. Merge changes to the same block or neighbouring lines into one edit.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "oldText": {"type": "string", "description": "Exact text to replace; must occur exactly once in the original file and must not overlap any other edits[].oldText"},
                            "newText": {"type": "string", "description": "Text that replaces oldText"}
                        },
                        "required": ["oldText", "newText"]
                    }
                }
            },
            "required": ["path", "edits"]
        })
    }
    fn prompt_snippet(&self) -> &str {
        "Make precise edits by exact text replacement, several separate edits per call if needed"
    }
    fn prompt_guidelines(&self) -> &[&str] {
        GUIDELINES
    }
    fn prepare_arguments(&self, args: Value) -> Value {
        prepare_arguments(args)
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
        let args = prepare_arguments(args);
        let edits = parse_edits(&args)?;
        let path = str_arg("edit", &args, "path")?;
        let abs = resolve_to_cwd(path, &ctx.cwd);
        with_file_lock(&abs, || {
            if ctx.abort.is_aborted() {
                return Err("Operation aborted".to_string());
            }
            // Sandbox (issues 16, 29): the file is opened beneath its writable root and read
            // and written through that descriptor.
            let target = super::sandbox::open_for_write(&abs)?;
            access(&abs, libc::R_OK | libc::W_OK).map_err(|e| {
                format!(
                    "Could not edit file: {path}. Error code: {}.",
                    error_code(&e)
                )
            })?;
            super::path::refuse_special_file(&abs, path, "edit")?;
            // In an editor that offers its buffers (never under a sandbox), the file is read
            // and written as the editor has it.
            let editor = super::editor_files::current().filter(|_| target.is_none());
            let from_editor = editor
                .as_ref()
                .and_then(|e| e.read(&abs))
                .map(|r| r.map(String::into_bytes).map_err(std::io::Error::other));
            let bytes = match (&target, from_editor) {
                (_, Some(read)) => read,
                (Some(t), None) => t.read(),
                (None, None) => fs::read(&abs),
            }
            .map_err(|e| match e.raw_os_error() {
                Some(libc::EISDIR) => "EISDIR: illegal operation on a directory, read".to_string(),
                _ => node_error(&e, "open", &abs),
            })?;
            let raw = String::from_utf8(bytes)
                .map_err(|_| format!("Could not edit file: {path}. It is not valid UTF-8 text."))?;
            let (bom, text) = match raw.strip_prefix('\u{FEFF}') {
                Some(rest) => ("\u{FEFF}", rest),
                None => ("", raw.as_str()),
            };
            let normalized = to_lf(text);
            let applied = apply_edits(&normalized, &edits, path)?;
            if ctx.abort.is_aborted() {
                return Err("Operation aborted".to_string());
            }
            // Without any CR the normalized result is final; otherwise the replacements are
            // spliced into the original so untouched lines keep their endings.
            let body: std::borrow::Cow<str> = if matches!(normalized, std::borrow::Cow::Borrowed(_))
            {
                applied.new.as_str().into()
            } else {
                splice_into_original(text, &applied.replacements).into()
            };
            let out: std::borrow::Cow<str> = if bom.is_empty() {
                body
            } else {
                format!("{bom}{body}").into()
            };
            let changes = changed_ranges(&applied);
            // The diff only reads the texts: compute it while the file is being written.
            let (written, diff) = std::thread::scope(|scope| {
                let diff = scope.spawn(|| edit_diff(path, &normalized, &applied.new, &changes));
                let by_editor = editor.as_ref().and_then(|e| e.write(&abs, &out));
                let written = match (&target, by_editor) {
                    (_, Some(w)) => w.map_err(std::io::Error::other),
                    (Some(t), None) => t.replace(out.as_bytes(), true),
                    (None, None) => write_atomic(&abs, out.as_bytes()),
                };
                (written, diff.join().ok())
            });
            written.map_err(|e| node_error(&e, "open", &abs))?;
            let mut details = json!({});
            if let Some(d) = diff {
                details["diff"] = json!(d.diff);
                details["patch"] = json!(d.patch);
                if let Some(line) = d.first_changed_line {
                    details["firstChangedLine"] = json!(line);
                }
            }
            Ok(ToolOutput::text(format!(
                "Successfully replaced {} block(s) in {path}.",
                edits.len()
            ))
            .with_details(details))
        })
    }
}

/// Each replacement's byte range before and after, for the diff.
fn changed_ranges(applied: &Applied) -> Vec<(usize, usize, usize, usize)> {
    let mut delta: isize = 0;
    applied
        .replacements
        .iter()
        .map(|r| {
            let new_at = (r.at as isize + delta) as usize;
            delta += r.new_text.len() as isize - r.len as isize;
            (r.at, r.at + r.len, new_at, new_at + r.new_text.len())
        })
        .collect()
}

#[cfg(test)]
#[path = "tests/edit.rs"]
mod tests;
