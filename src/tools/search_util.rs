//! Small helpers shared by the grep, find and ls tools: reading loosely typed arguments,
//! resolving a user path against the working directory the way pi does, configuring the
//! gitignore-aware directory walker, and assembling the trailing notice line.

use std::path::Path;

use ignore::WalkBuilder;
use serde_json::{Map, Value};

use super::truncate::{format_size, truncate_head, DEFAULT_MAX_BYTES};

/// JavaScript's `Number.MAX_SAFE_INTEGER`: pi passes it as the line cap when only the byte cap
/// should apply, and it shows up in the serialized truncation details.
pub const JS_MAX_SAFE_INTEGER: usize = 9_007_199_254_740_991;

pub const ABORTED: &str = "Operation aborted";

pub fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

pub fn bool_arg(args: &Value, key: &str) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// A numeric argument as pi 1.x reads counts: fractions cut off (`Math.floor`), negatives
/// clamp to zero.
pub fn count_arg(args: &Value, key: &str) -> Option<usize> {
    let v = args.get(key)?;
    let n = v
        .as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))?;
    if n.is_nan() {
        return None;
    }
    Some(if n <= 0.0 {
        0
    } else {
        n.floor().min(1e15) as usize
    })
}

pub fn required_str<'a>(args: &'a Value, key: &str) -> Result<&'a str, String> {
    str_arg(args, key).ok_or_else(|| format!("Missing required parameter: {key}"))
}

pub use super::path::resolve_to_cwd;

/// The `pattern` and the absolute search root (`path`, default the working directory) every
/// search tool starts from; refuses to start once aborted.
pub fn pattern_and_root<'a>(
    args: &'a Value,
    ctx: &crate::agent::tool::ToolContext,
) -> Result<(&'a str, std::path::PathBuf), String> {
    if ctx.abort.is_aborted() {
        return Err(ABORTED.into());
    }
    let pattern = required_str(args, "pattern")?;
    let dir_arg = str_arg(args, "path")
        .filter(|p| !p.is_empty())
        .unwrap_or(".");
    Ok((pattern, resolve_to_cwd(dir_arg, &ctx.cwd)))
}

/// `path` relative to `root` with `/` separators, or `None` when it is not below `root`.
pub fn relative_slash(path: &Path, root: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}

/// The walker both grep and find use: hidden files included, `.ignore` files honoured, symlinks
/// not followed, `.git` skipped. `.gitignore` and git's exclude files apply inside a git
/// repository, and outside one too when `require_git` is false (find, as pi runs fd with
/// `--no-require-git`; grep runs ripgrep, which needs the repository).
pub fn walker(root: &Path, extra_ignore_file: &str, require_git: bool) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    b.hidden(false)
        .require_git(require_git)
        .add_custom_ignore_filename(extra_ignore_file)
        .filter_entry(|e| e.file_name() != ".git");
    b
}

/// Applies pi's 50 KB output cap to `lines`, then appends the bracketed notices (the optional
/// count-limit notice first, then the byte cap, then `tail`), recording each in `details`.
pub fn finish(
    lines: &[String],
    limit_notice: Option<(String, &str, usize)>,
    tail: Option<(String, &str)>,
) -> (String, Option<Value>) {
    let raw = lines.join("\n");
    let truncation = truncate_head(&raw, JS_MAX_SAFE_INTEGER, DEFAULT_MAX_BYTES);
    let mut output = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if let Some((text, key, value)) = limit_notice {
        notices.push(text);
        details.insert(key.to_string(), Value::from(value));
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert(
            "truncation".to_string(),
            serde_json::to_value(&truncation).unwrap_or(Value::Null),
        );
    }
    if let Some((text, key)) = tail {
        notices.push(text);
        details.insert(key.to_string(), Value::Bool(true));
    }
    if !notices.is_empty() {
        output.push_str("\n\n[");
        output.push_str(&notices.join(". "));
        output.push(']');
    }
    (
        output,
        (!details.is_empty()).then_some(Value::Object(details)),
    )
}

#[cfg(test)]
pub mod test_support {
    //! Runs a tool in a temp tree and returns its text (or error) and details.

    use std::path::Path;

    use serde_json::Value;

    use crate::agent::tool::{Tool, ToolContext};
    use crate::ai::{Abort, Content};

    pub fn run(
        tool: &dyn Tool,
        cwd: &Path,
        args: Value,
    ) -> Result<(String, Option<Value>), String> {
        let ctx = ToolContext {
            cwd: cwd.to_path_buf(),
            abort: Abort::new(),
            on_update: &|_| {},
            nested: None,
        };
        let out = tool.execute("call-1", args, &ctx)?;
        let text = match &out.content[..] {
            [Content::Text(t)] => t.text.clone(),
            other => panic!("unexpected content {other:?}"),
        };
        Ok((text, out.details))
    }

    pub fn text(tool: &dyn Tool, cwd: &Path, args: Value) -> String {
        run(tool, cwd, args).expect("tool failed").0
    }

    pub fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}
