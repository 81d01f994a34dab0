//! The `grep` tool: searches file contents for a regular expression (or a literal string)
//! under a directory or in one file. The search is built in — a parallel, gitignore-aware
//! walk plus the `regex` crate — and reproduces the output of pi's ripgrep-backed tool:
//! `path:LINE: text` rows, `path-LINE- text` context rows, pi's limits and notices. Results are
//! ordered by path, then line, so the same tree always gives the same answer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use ignore::overrides::OverrideBuilder;
use ignore::WalkState;
use regex::bytes::{Regex, RegexBuilder};
use serde_json::{json, Value};

use super::search_util::{
    bool_arg, count_arg, finish, pattern_and_root, relative_slash, str_arg, walker, ABORTED,
};
use super::truncate::{truncate_line, GREP_MAX_LINE_LENGTH};
use crate::agent::tool::{Tool, ToolContext, ToolOutput};

const DEFAULT_LIMIT: usize = 100;

const DESCRIPTION: &str = "Search the contents of files for a regular expression (or, with \
literal, a plain string). Each matching line comes back as path:line: text, with paths relative \
to the searched directory. Hidden files are searched; files excluded by .gitignore and binary \
files are not. At most 100 matches or 50KB of output are returned (whichever comes first), and \
lines longer than 500 characters are cut short.";

pub struct GrepTool;

/// One reported match: its rows (the match line, plus context rows when asked for).
struct Hit {
    rows: Vec<String>,
    line_cut: bool,
}

struct Options<'a> {
    regex: &'a Regex,
    context: usize,
    limit: usize,
}

/// Matches gathered by the parallel walk, keyed by path. Once `limit` matches are held, files
/// sorting after the last kept path cannot make the cut and are neither read nor walked into.
struct Collector {
    files: BTreeMap<PathBuf, Vec<Hit>>,
    total: usize,
    limit: usize,
}

impl Collector {
    fn beyond(&self, path: &Path) -> bool {
        self.total >= self.limit
            && self
                .files
                .last_key_value()
                .is_some_and(|(last, _)| path > last.as_path())
    }

    fn add(&mut self, path: PathBuf, hits: Vec<Hit>) {
        self.total += hits.len();
        self.files.insert(path, hits);
        while let Some(entry) = self.files.last_entry() {
            let n = entry.get().len();
            if self.total - n < self.limit {
                break;
            }
            self.total -= n;
            entry.remove();
        }
    }
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
        let regex = RegexBuilder::new(&source)
            .case_insensitive(bool_arg(&args, "ignoreCase"))
            .multi_line(true)
            .build()
            .map_err(|e| e.to_string())?;
        let limit = count_arg(&args, "limit").unwrap_or(DEFAULT_LIMIT).max(1);
        let opts = Options {
            regex: &regex,
            context: count_arg(&args, "context").unwrap_or(0),
            limit,
        };

        let collector = Mutex::new(Collector {
            files: BTreeMap::new(),
            total: 0,
            limit,
        });
        if is_dir {
            let glob = str_arg(&args, "glob").filter(|g| !g.is_empty());
            walk_dir(&root, glob, &opts, &collector, ctx)?;
        } else {
            let name = root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| root.display().to_string());
            if let Some(hits) = search_file(&root, &name, &opts) {
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
        let mut rows = Vec::new();
        let mut lines_cut = false;
        for hit in collector.files.into_values().flatten().take(limit) {
            lines_cut |= hit.line_cut;
            rows.extend(hit.rows);
        }
        let limit_notice = (collector.total >= limit).then(|| {
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
    opts: &Options,
    collector: &Mutex<Collector>,
    ctx: &ToolContext,
) -> Result<(), String> {
    let mut builder = walker(root, ".rgignore");
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
            let shown = relative_slash(path, root).unwrap_or_else(|| {
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
            if let Some(hits) = search_file(path, &shown, opts) {
                let mut c = collector.lock().unwrap();
                c.add(path.to_path_buf(), hits);
                if c.total >= c.limit {
                    full.store(true, Ordering::Relaxed);
                }
            }
            WalkState::Continue
        })
    });
    Ok(())
}

/// Searches one file; `None` when it is unreadable, binary or has no match.
fn search_file(path: &Path, shown: &str, opts: &Options) -> Option<Vec<Hit>> {
    let data = std::fs::read(path).ok()?;
    if memchr::memchr(0, &data).is_some() {
        return None;
    }
    let lines = matching_lines(&data, opts.regex, opts.limit);
    if lines.is_empty() {
        return None;
    }
    let hits = if opts.context == 0 {
        lines
            .into_iter()
            .map(|(no, start, end)| {
                let (text, line_cut) = clean_line(&data[start..end]);
                Hit {
                    rows: vec![format!("{shown}:{no}: {text}")],
                    line_cut,
                }
            })
            .collect()
    } else {
        let all: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        lines
            .into_iter()
            .map(|(no, _, _)| {
                let first = no.saturating_sub(opts.context).max(1);
                let last = (no + opts.context).min(all.len());
                let mut hit = Hit {
                    rows: Vec::with_capacity(last + 1 - first),
                    line_cut: false,
                };
                for current in first..=last {
                    let (text, cut) = clean_line(all[current - 1]);
                    hit.line_cut |= cut;
                    let sep = if current == no { ':' } else { '-' };
                    hit.rows.push(format!("{shown}{sep}{current}{sep} {text}"));
                }
                hit
            })
            .collect()
    };
    Some(hits)
}

/// Line text as shown: lossy UTF-8, carriage returns dropped, cut at 500 characters.
fn clean_line(bytes: &[u8]) -> (String, bool) {
    let text = String::from_utf8_lossy(bytes);
    let text = if text.contains('\r') {
        text.replace('\r', "")
    } else {
        text.into_owned()
    };
    truncate_line(&text, GREP_MAX_LINE_LENGTH)
}

/// Up to `limit` lines of `data` containing a match, as (1-based number, start, end) with the
/// end excluding the newline. The whole buffer is searched at once; a match that runs past its
/// line's end is only kept if the line matches on its own, as a line-oriented grep sees it.
fn matching_lines(data: &[u8], regex: &Regex, limit: usize) -> Vec<(usize, usize, usize)> {
    let mut found = Vec::new();
    let mut pos = 0;
    let mut line_no = 1;
    let mut counted_to = 0;
    while pos <= data.len() && found.len() < limit {
        let Some(m) = regex.find_at(data, pos) else {
            break;
        };
        let start = memchr::memrchr(b'\n', &data[..m.start()]).map_or(0, |i| i + 1);
        if start == data.len() && start > 0 || data.is_empty() {
            break; // the empty remainder after a final newline is not a line
        }
        let end = memchr::memchr(b'\n', &data[m.start()..]).map_or(data.len(), |i| m.start() + i);
        line_no += memchr::memchr_iter(b'\n', &data[counted_to..start]).count();
        counted_to = start;
        if m.end() <= end || regex.is_match(&data[start..end]) {
            found.push((line_no, start, end));
        }
        pos = end + 1;
    }
    found
}

#[cfg(test)]
#[path = "tests/grep.rs"]
mod tests;
