//! The `grep` tool: searches file contents for a regular expression (or a literal string)
//! under a directory or in one file. The search is built in — a parallel, gitignore-aware
//! walk plus the `regex` crate — and reproduces the output of pi's ripgrep-backed tool:
//! `path:LINE: text` rows, `path-LINE- text` context rows, pi's limits and notices. Results are
//! ordered by path, then line, so the same tree always gives the same answer. Each file is
//! streamed in bounded chunks (`grep_file`), so memory does not grow with a file's size.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use ignore::overrides::OverrideBuilder;
use ignore::WalkState;
use regex::bytes::RegexBuilder;
use serde_json::{json, Value};

use super::grep_file::{search_file, FileHits, Row, Search};
use super::search_util::{
    bool_arg, count_arg, finish, pattern_and_root, relative_slash, str_arg, walker, ABORTED,
};
use super::truncate::GREP_MAX_LINE_LENGTH;
use crate::agent::tool::{Tool, ToolContext, ToolOutput};

const DEFAULT_LIMIT: usize = 100;

const DESCRIPTION: &str = "Search the contents of files for a regular expression (or, with \
literal, a plain string). Each matching line comes back as path:line: text, with paths relative \
to the searched directory. Hidden files are searched; files excluded by .gitignore and binary \
files are not. At most 100 matches or 50KB of output are returned (whichever comes first), and \
lines longer than 500 characters are cut short.";

pub struct GrepTool;

/// Files with matches gathered by the parallel walk, keyed by path. Once `wanted` matches are
/// held, files sorting after the last kept path cannot make the cut and are neither read nor
/// walked into.
struct Collector {
    files: BTreeMap<PathBuf, FileHits>,
    total: usize,
    wanted: usize,
}

impl Collector {
    fn beyond(&self, path: &Path) -> bool {
        self.total >= self.wanted
            && self
                .files
                .last_key_value()
                .is_some_and(|(last, _)| path > last.as_path())
    }

    fn add(&mut self, path: PathBuf, hits: FileHits) {
        self.total += hits.matches;
        self.files.insert(path, hits);
        while let Some(entry) = self.files.last_entry() {
            let n = entry.get().matches;
            if self.total - n < self.wanted {
                break;
            }
            self.total -= n;
            entry.remove();
        }
    }
}

/// What the model is shown: pi 1.x's cut of the row stream. Rows are taken until the
/// `limit`-th match, then the context after it (later matches inside that window shown as
/// context); the limit counts as reached only when a further match exists.
struct Shown {
    rows: Vec<String>,
    matches: usize,
    limit_reached: bool,
    lines_cut: bool,
}

fn cut_rows<'a>(
    files: impl Iterator<Item = (String, &'a [Row])>,
    limit: usize,
    context: usize,
) -> Shown {
    let mut shown = Shown {
        rows: Vec::new(),
        matches: 0,
        limit_reached: false,
        lines_cut: false,
    };
    let mut window: Option<(usize, usize)> = None; // (file index, last line) once at the limit
    let push = |shown: &mut Shown, name: &str, row: &Row, is_match: bool| {
        shown.lines_cut |= row.cut;
        let sep = if is_match { ':' } else { '-' };
        shown
            .rows
            .push(format!("{name}{sep}{}{sep} {}", row.line, row.text));
    };
    for (index, (name, rows)) in files.enumerate() {
        for row in rows {
            let Some((file, end)) = window else {
                push(&mut shown, &name, row, row.is_match);
                if row.is_match {
                    shown.matches += 1;
                    if shown.matches >= limit {
                        window = Some((index, row.line + context));
                    }
                }
                continue;
            };
            let in_window = file == index && row.line <= end;
            if in_window {
                push(&mut shown, &name, row, false);
            }
            shown.limit_reached |= row.is_match;
            if shown.limit_reached && !(in_window && row.line < end) {
                return shown;
            }
        }
    }
    shown
}

impl Tool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to look for (or plain text with literal)"},
                "path": {"type": "string", "description": "Directory or single file to search (default: the current directory)"},
                "glob": {"type": "string", "description": "Only search files whose path matches this glob, e.g. '*.rs' or 'src/**/*.test.ts'"},
                "ignoreCase": {"type": "boolean", "description": "Match regardless of letter case (default: false)"},
                "literal": {"type": "boolean", "description": "Search for the pattern as plain text, not a regex (default: false)"},
                "context": {"type": "number", "description": "Lines of context to show around each match (default: 0)"},
                "limit": {"type": "number", "description": "Stop after this many matches (default: 100)"}
            },
            "required": ["pattern"]
        })
    }

    fn prompt_snippet(&self) -> &str {
        "Search file contents for a regex or text (respects .gitignore)"
    }

    fn execute(&self, _id: &str, args: Value, ctx: &ToolContext) -> Result<ToolOutput, String> {
        let (pattern, root) = pattern_and_root(&args, ctx)?;
        let is_dir = match std::fs::metadata(&root) {
            Ok(m) => m.is_dir(),
            Err(_) => return Err(format!("Path not found: {}", root.display())),
        };
        let literal = bool_arg(&args, "literal");
        let source = if literal {
            regex::escape(pattern)
        } else {
            pattern.to_string()
        };
        // Wrapped as ripgrep wraps it, so a bad pattern gets ripgrep's message word for word.
        let regex = RegexBuilder::new(&format!("(?:{source})"))
            .case_insensitive(bool_arg(&args, "ignoreCase"))
            .multi_line(true)
            .build()
            .map_err(|e| format!("rg: {e}"))?;
        let limit = count_arg(&args, "limit").unwrap_or(DEFAULT_LIMIT).max(1);
        let context = count_arg(&args, "context").unwrap_or(0);
        let opts = Search {
            regex: &regex,
            context,
            wanted: limit.saturating_add(1),
            abort: &ctx.abort,
        };

        let collector = Mutex::new(Collector {
            files: BTreeMap::new(),
            total: 0,
            wanted: opts.wanted,
        });
        if is_dir {
            let glob = str_arg(&args, "glob")
                .map(strip_dot_slash)
                .filter(|g| !g.is_empty());
            walk_dir(&root, glob.as_deref(), &opts, &collector, ctx)?;
        } else {
            if let Some(hits) = search_file(&root, &opts) {
                collector.lock().unwrap().add(root.clone(), hits);
            }
        }
        if ctx.abort.is_aborted() {
            return Err(ABORTED.into());
        }

        let collector = collector.into_inner().unwrap();
        if collector.total == 0 {
            return Ok(ToolOutput::text("No matches found"));
        }
        let files = collector.files.iter().map(|(path, hits)| {
            let name = if is_dir {
                relative_slash(path, &root)
            } else {
                None
            };
            let name = name.unwrap_or_else(|| {
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.display().to_string())
            });
            (name, hits.rows.as_slice())
        });
        let Shown {
            rows,
            limit_reached,
            lines_cut,
            ..
        } = cut_rows(files, limit, context);
        let limit_notice = limit_reached.then(|| {
            (
                format!(
                    "{limit} matches limit reached. Use limit={} for more, or refine pattern",
                    limit * 2
                ),
                "matchLimitReached",
                limit,
            )
        });
        let tail = lines_cut.then(|| {
            (
                format!(
                    "Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
                ),
                "linesTruncated",
            )
        });
        let (text, details) = finish(&rows, limit_notice, tail);
        let out = ToolOutput::text(text);
        Ok(match details {
            Some(d) => out.with_details(d),
            None => out,
        })
    }
}

fn walk_dir(
    root: &Path,
    glob: Option<&str>,
    opts: &Search,
    collector: &Mutex<Collector>,
    ctx: &ToolContext,
) -> Result<(), String> {
    let mut builder = walker(root, ".rgignore", true);
    if let Some(glob) = glob {
        let mut ov = OverrideBuilder::new(root);
        ov.add(glob).map_err(|e| e.to_string())?;
        builder.overrides(ov.build().map_err(|e| e.to_string())?);
    }
    // Skips the collector's lock while fewer than `limit` matches are held.
    let full = AtomicBool::new(false);
    builder.build_parallel().run(|| {
        Box::new(|entry| {
            if ctx.abort.is_aborted() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let Some(kind) = entry.file_type() else {
                return WalkState::Continue;
            };
            let path = entry.path();
            let beyond = || full.load(Ordering::Relaxed) && collector.lock().unwrap().beyond(path);
            if kind.is_dir() {
                return if beyond() {
                    WalkState::Skip
                } else {
                    WalkState::Continue
                };
            }
            if !kind.is_file() || beyond() {
                return WalkState::Continue;
            }
            if let Some(hits) = search_file(path, opts) {
                let mut c = collector.lock().unwrap();
                c.add(path.to_path_buf(), hits);
                if c.total >= c.wanted {
                    full.store(true, Ordering::Relaxed);
                }
            }
            WalkState::Continue
        })
    });
    Ok(())
}

/// A glob as pi 1.x passes it to ripgrep: leading `./` segments dropped (after a `!`, too),
/// since the glob is relative to the searched directory anyway.
fn strip_dot_slash(glob: &str) -> String {
    let (neg, mut rest) = match glob.strip_prefix('!') {
        Some(r) => ("!", r),
        None => ("", glob),
    };
    let stripped = rest.starts_with("./");
    while let Some(r) = rest.strip_prefix("./") {
        rest = r;
    }
    if stripped {
        format!("{neg}{rest}")
    } else {
        glob.to_string()
    }
}

#[cfg(test)]
#[path = "tests/grep.rs"]
mod tests;
