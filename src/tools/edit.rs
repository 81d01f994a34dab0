//! `edit`: targeted replacements in one file. Every `oldText` is located in the original
//! content (exactly, or failing that after pi's fuzzy normalization), must be unique and must
//! not overlap another; then all are applied at once. BOM and CRLF line endings survive, the
//! write is atomic and serialized per file, and the result carries pi's diff. Under
//! `--sandbox` it refuses paths outside the writable roots.

use std::fs;

use serde_json::{json, Value};

use super::diff::diff_changes;
use super::mutation_queue::with_file_lock;
use super::path::{access, error_code, node_error, resolve_to_cwd, str_arg, validation_error};
use super::write::write_atomic;
use crate::agent::tool::{Tool, ToolContext, ToolOutput};

#[path = "fuzzy.rs"]
mod fuzzy;
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

/// One requested replacement.
#[derive(Debug, Clone, PartialEq)]
pub struct Replacement {
    pub old_text: String,
    pub new_text: String,
}

/// Normalizes the arguments as pi's `prepareArguments` does: `edits` sent as a JSON string is
/// parsed, and legacy top-level `oldText`/`newText` become one more entry of `edits`.
pub fn prepare_arguments(mut args: Value) -> Value {
    let Some(obj) = args.as_object_mut() else {
        return args;
    };
    if let Some(Value::String(s)) = obj.get("edits") {
        if let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(s) {
            obj.insert("edits".into(), parsed);
        }
    }
    if let (Some(Value::String(_)), Some(Value::String(_))) =
        (obj.get("oldText"), obj.get("newText"))
    {
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

fn parse_edits(args: &Value) -> Result<Vec<Replacement>, String> {
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
                "must have required property",
                args,
            )),
            Some(_) => Err(validation_error(
                "edit",
                &format!("edits.{i}.{name}"),
                "must be string",
                args,
            )),
        };
        out.push(Replacement {
            old_text: field("oldText")?,
            new_text: field("newText")?,
        });
    }
    Ok(out)
}

/// The outcome of applying edits to LF-normalized content.
#[derive(Debug)]
pub struct Applied<'a> {
    /// The content the edits were matched in (fuzzy-normalized if any edit needed that).
    pub base: std::borrow::Cow<'a, str>,
    pub new: String,
    /// Changed byte ranges: `(base_start, base_end, new_start, new_end)`, in file order.
    pub changes: Vec<(usize, usize, usize, usize)>,
}

fn to_lf(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\r') {
        s.replace("\r\n", "\n").replace('\r', "\n").into()
    } else {
        s.into()
    }
}

/// Non-overlapping occurrences, counted like JavaScript's `split(needle).length - 1`.
fn count_occurrences(hay: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return hay.encode_utf16().count().saturating_sub(1);
    }
    hay.matches(needle).count()
}

/// Matches every edit against `content` (already LF-normalized) and applies them all.
pub fn apply_edits<'a>(
    content: &'a str,
    edits: &[Replacement],
    path: &str,
) -> Result<Applied<'a>, String> {
    let many = edits.len() > 1;
    let edits: Vec<Replacement> = edits
        .iter()
        .map(|e| Replacement {
            old_text: to_lf(&e.old_text).into_owned(),
            new_text: to_lf(&e.new_text).into_owned(),
        })
        .collect();
    for (i, e) in edits.iter().enumerate() {
        if e.old_text.is_empty() {
            return Err(if many {
                format!("edits[{i}].oldText must not be empty in {path}.")
            } else {
                format!("oldText must not be empty in {path}.")
            });
        }
    }
    // Most files are plain ASCII without trailing spaces: then the fuzzy form is the text
    // itself and the uniqueness counts below need no normalized copy.
    let invariant = fuzzy::is_fuzzy_invariant(content);
    let fuzzy_old: Vec<String> = edits
        .iter()
        .map(|e| normalize_for_fuzzy(&e.old_text))
        .collect();
    let mut fuzzy_content: Option<String> = None;
    let mut any_fuzzy = false;
    for (e, fo) in edits.iter().zip(&fuzzy_old) {
        if !content.contains(&e.old_text) && !invariant {
            let fc = fuzzy_content.get_or_insert_with(|| normalize_for_fuzzy(content));
            if fc.contains(fo.as_str()) {
                any_fuzzy = true;
            }
        }
    }
    let base: std::borrow::Cow<str> = if any_fuzzy {
        fuzzy_content
            .take()
            .unwrap_or_else(|| normalize_for_fuzzy(content))
            .into()
    } else {
        content.into()
    };
    let mut fuzzy_base: Option<std::borrow::Cow<str>> = if any_fuzzy || invariant {
        Some(std::borrow::Cow::Borrowed(&base))
    } else {
        fuzzy_content.map(Into::into)
    };
    let mut matched: Vec<(usize, usize, usize)> = Vec::with_capacity(edits.len()); // (start, len, edit)
    for (i, (e, fo)) in edits.iter().zip(&fuzzy_old).enumerate() {
        let fb = fuzzy_base.get_or_insert_with(|| normalize_for_fuzzy(&base).into());
        let found = match base.find(&e.old_text) {
            Some(at) => Some((at, e.old_text.len())),
            None => fb.find(fo.as_str()).map(|at| (at, fo.len())),
        };
        let Some((at, len)) = found.filter(|&(at, len)| base.get(at..at + len).is_some()) else {
            return Err(if many {
                format!("Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace and newlines.")
            } else {
                format!("Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines.")
            });
        };
        let n = count_occurrences(fb, fo);
        if n > 1 {
            return Err(if many {
                format!("Found {n} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide more context to make it unique.")
            } else {
                format!("Found {n} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique.")
            });
        }
        matched.push((at, len, i));
    }
    matched.sort_by_key(|m| m.0);
    for w in matched.windows(2) {
        if w[0].0 + w[0].1 > w[1].0 {
            return Err(format!(
                "edits[{}] and edits[{}] overlap in {path}. Merge them into one edit or target disjoint regions.",
                w[0].2, w[1].2
            ));
        }
    }
    // The text is unchanged exactly when every match is replaced by itself (no need to compare
    // two copies of a large file).
    let unchanged = matched
        .iter()
        .all(|&(at, len, i)| base[at..at + len] == edits[i].new_text);
    let mut new =
        String::with_capacity(base.len() + edits.iter().map(|e| e.new_text.len()).sum::<usize>());
    let mut changes = Vec::with_capacity(matched.len());
    let mut pos = 0;
    for &(at, len, i) in &matched {
        new.push_str(&base[pos..at]);
        let ns = new.len();
        new.push_str(&edits[i].new_text);
        changes.push((at, at + len, ns, new.len()));
        pos = at + len;
    }
    new.push_str(&base[pos..]);
    if unchanged {
        return Err(if many {
            format!("No changes made to {path}. The replacements produced identical content.")
        } else {
            format!("No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.")
        });
    }
    Ok(Applied { base, new, changes })
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
                        "required": ["oldText", "newText"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["path", "edits"],
            "additionalProperties": false
        })
    }
    fn prompt_snippet(&self) -> &str {
        "Make precise edits by exact text replacement, several separate edits per call if needed"
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
        let args = prepare_arguments(args);
        let edits = parse_edits(&args)?;
        let path = str_arg("edit", &args, "path")?;
        let abs = resolve_to_cwd(path, &ctx.cwd);
        with_file_lock(&abs, || {
            if ctx.abort.is_aborted() {
                return Err("Operation aborted".to_string());
            }
            // Sandbox (issue 16): only inside the writable roots, symlinks and `..` resolved.
            super::sandbox::check_write(&abs)?;
            access(&abs, libc::R_OK | libc::W_OK).map_err(|e| {
                format!(
                    "Could not edit file: {path}. Error code: {}.",
                    error_code(&e)
                )
            })?;
            super::path::refuse_special_file(&abs, path, "edit")?;
            let bytes = fs::read(&abs).map_err(|e| match e.raw_os_error() {
                Some(libc::EISDIR) => "EISDIR: illegal operation on a directory, read".to_string(),
                _ => node_error(&e, "open", &abs),
            })?;
            let raw = String::from_utf8(bytes)
                .map_err(|_| format!("Could not edit file: {path}. It is not valid UTF-8 text."))?;
            let (bom, text) = match raw.strip_prefix('\u{FEFF}') {
                Some(rest) => ("\u{FEFF}", rest),
                None => ("", raw.as_str()),
            };
            let crlf = text
                .find('\n')
                .is_some_and(|i| i > 0 && text.as_bytes()[i - 1] == b'\r');
            let normalized = to_lf(text);
            let applied = apply_edits(&normalized, &edits, path)?;
            if ctx.abort.is_aborted() {
                return Err("Operation aborted".to_string());
            }
            let body: std::borrow::Cow<str> = if crlf {
                applied.new.replace('\n', "\r\n").into()
            } else {
                applied.new.as_str().into()
            };
            let out: std::borrow::Cow<str> = if bom.is_empty() {
                body
            } else {
                format!("{bom}{body}").into()
            };
            // The diff only reads the texts: compute it while the file is being written.
            let (written, (diff, first)) = std::thread::scope(|scope| {
                let diff =
                    scope.spawn(|| diff_changes(&applied.base, &applied.new, &applied.changes));
                let written = write_atomic(&abs, out.as_bytes());
                (
                    written,
                    diff.join().unwrap_or_else(|_| (String::new(), None)),
                )
            });
            written.map_err(|e| node_error(&e, "open", &abs))?;
            let mut details = json!({ "diff": diff });
            if let Some(line) = first {
                details["firstChangedLine"] = json!(line);
            }
            Ok(ToolOutput::text(format!(
                "Successfully replaced {} block(s) in {path}.",
                edits.len()
            ))
            .with_details(details))
        })
    }
}

#[cfg(test)]
#[path = "tests/edit.rs"]
mod tests;
