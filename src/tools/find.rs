//! The `find` tool: lists files and directories whose name (or, for a pattern containing `/`,
//! whose path relative to the searched directory) matches a glob. Built in rather than shelling out to fd, with fd's
//! behaviour as pi drives it: hidden entries included, `.gitignore` honoured inside or outside
//! a git repository, smart case, directories shown with a trailing `/`. Results are sorted by
//! path so the answer is stable.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::sync::Mutex;

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use serde_json::{json, Value};

use super::search_util::{count_arg, finish, pattern_and_root, relative_slash, walker, ABORTED};
use crate::agent::tool::{Tool, ToolContext, ToolOutput};
use crate::util::sort;

const DEFAULT_LIMIT: usize = 1000;

const DESCRIPTION: &str = "Find files and directories by glob pattern. A pattern without '/' \
is matched against entry names at any depth ('*.rs'); one with '/' against paths relative to \
the searched directory ('src/**/*.rs'; '**/src/*.rs' for any depth). \
Paths come back relative to the searched directory, directories with a trailing '/'. Hidden \
entries are included, .gitignore'd ones are not. At most 1000 results or 50KB of output are \
returned (whichever comes first).";

pub struct FindTool;

impl Tool for FindTool {
    fn name(&self) -> &str {
        "find"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern relative to the search directory, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth"},
                "path": {"type": "string", "description": "Directory to search (default: the current directory)"},
                "limit": {"type": "number", "description": "Return at most this many paths (default: 1000)"}
            },
            "required": ["pattern"]
        })
    }

    fn prompt_snippet(&self) -> &str {
        "Find files by glob pattern (respects .gitignore)"
    }

    fn execute(&self, _id: &str, args: Value, ctx: &ToolContext) -> Result<ToolOutput, String> {
        let (pattern, root) = pattern_and_root(&args, ctx)?;
        match std::fs::metadata(&root) {
            Err(_) => return Err(format!("Path not found: {}", root.display())),
            Ok(m) if !m.is_dir() => return Err(format!("Not a directory: {}", root.display())),
            Ok(_) => {}
        }
        let limit = count_arg(&args, "limit").unwrap_or(DEFAULT_LIMIT).max(1);
        let pattern = without_dot_slash(pattern);
        let path_pattern = pattern.contains('/');
        let absolute = pattern.starts_with('/');
        let matcher = build_matcher(pattern)?;

        let found: Mutex<Vec<(PathBuf, bool)>> = Mutex::new(Vec::new());
        walker(&root, ".fdignore", false).build_parallel().run(|| {
            Box::new(|entry| {
                if ctx.abort.is_aborted() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.depth() == 0 {
                    return WalkState::Continue;
                }
                let hit = if absolute {
                    matcher.is_match(entry.path())
                } else if path_pattern {
                    // pi 1.6: a relative path pattern is anchored at the searched directory,
                    // like grep's `glob`: `src/*.ts` finds `src/a.ts`, not `pkg/src/a.ts`.
                    entry
                        .path()
                        .strip_prefix(&root)
                        .is_ok_and(|rel| matcher.is_match(rel))
                } else {
                    matcher.is_match(entry.file_name())
                };
                if hit {
                    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                    found
                        .lock()
                        .unwrap()
                        .push((entry.path().to_path_buf(), is_dir));
                }
                WalkState::Continue
            })
        });
        if ctx.abort.is_aborted() {
            return Err(ABORTED.into());
        }

        let mut found = found.into_inner().unwrap();
        if found.is_empty() {
            return Ok(ToolOutput::text("No files found matching pattern"));
        }
        sort_in_path_order(&mut found);
        // pi 1.x: the notice only when more than `limit` paths exist.
        let more = found.len() > limit;
        found.truncate(limit);
        let rows: Vec<String> = found
            .iter()
            .filter_map(|(path, is_dir)| {
                let rel = relative_slash(path, &root)?;
                Some(if *is_dir { rel + "/" } else { rel })
            })
            .collect();
        let limit_notice = more.then(|| {
            (
                format!(
                    "{limit} results limit reached. Use limit={} for more, or refine pattern",
                    limit * 2
                ),
                "resultLimitReached",
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

/// Sorts the walk's hits as `Path`'s order does (component by component), at the cost of a
/// byte comparison: with every `/` taken as byte 0, byte order is component order, because
/// every hit is the same root followed by entry names joined by single `/`s, and no name holds
/// a 0 byte. Comparing paths component by component was most of a large search's time.
fn sort_in_path_order(found: &mut Vec<(PathBuf, bool)>) {
    let swap_separator = |bytes: &mut Vec<u8>, from: u8, to: u8| {
        bytes
            .iter_mut()
            .filter(|b| **b == from)
            .for_each(|b| *b = to);
    };
    let mut keyed: Vec<(Vec<u8>, bool)> = std::mem::take(found)
        .into_iter()
        .map(|(path, is_dir)| {
            let mut bytes = path.into_os_string().into_vec();
            swap_separator(&mut bytes, b'/', 0);
            (bytes, is_dir)
        })
        .collect();
    sort::sort(&mut keyed);
    *found = keyed
        .into_iter()
        .map(|(mut bytes, is_dir)| {
            swap_separator(&mut bytes, 0, b'/');
            (PathBuf::from(OsString::from_vec(bytes)), is_dir)
        })
        .collect();
}

/// A leading `./` (any number of them) names the searched directory itself: pi 1.6 drops it,
/// so `./src/*.ts` means `src/*.ts`.
fn without_dot_slash(mut pattern: &str) -> &str {
    while let Some(rest) = pattern.strip_prefix("./") {
        pattern = rest;
    }
    pattern
}

/// fd's glob semantics as pi invokes it: `*` never crosses `/`; case-insensitive unless the
/// pattern has an uppercase letter. The caller picks what it is matched against: the entry's
/// name, its path relative to the searched directory, or (absolute pattern) its full path.
fn build_matcher(pattern: &str) -> Result<GlobMatcher, String> {
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .case_insensitive(!pattern.chars().any(char::is_uppercase))
        .backslash_escape(true)
        .build()
        .map_err(|e| e.to_string())?;
    Ok(glob.compile_matcher())
}

#[cfg(test)]
#[path = "tests/find.rs"]
mod tests;
