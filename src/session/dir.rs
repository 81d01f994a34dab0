//! Where sessions live and how they are found: `<agentDir>/sessions/--<encoded cwd>--/`,
//! file names `<timestamp>_<id>.jsonl`, listing with pi's metadata, the newest session for
//! `-c`, id-prefix lookup for `--session`, and forking a session into another project.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde_json::Value;

use super::entry::SessionHeader;
use super::file::{has_valid_header, parse_lines};
use super::ids::{iso_timestamp, parse_iso_ms, uuid_v7};
use crate::ai::now_ms;
use crate::util::sort;

/// `/home/ada/proj` → `--home-ada-proj--`: one leading `/` or `\` dropped, then every `/`,
/// `\` and `:` replaced by `-`.
pub fn encode_cwd(cwd: &str) -> String {
    let s = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    let s: String = s
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{s}--")
}

/// `<agentDir>/sessions`.
pub fn sessions_root(agent_dir: &Path) -> PathBuf {
    agent_dir.join("sessions")
}

/// The per-project session directory for `cwd` (not created).
pub fn session_dir(agent_dir: &Path, cwd: &str) -> PathBuf {
    sessions_root(agent_dir).join(encode_cwd(cwd))
}

/// `<ISO timestamp with ':' and '.' as '-'>_<id>.jsonl`.
pub fn session_file_name(timestamp: &str, id: &str) -> String {
    format!("{}_{id}.jsonl", timestamp.replace([':', '.'], "-"))
}

/// What the session pickers show about one file.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub path: PathBuf,
    pub id: String,
    pub cwd: String,
    /// From the latest `session_info` entry (trimmed; empty clears).
    pub name: Option<String>,
    pub parent_session_path: Option<String>,
    /// The header timestamp.
    pub created: String,
    /// ms: newest user/assistant message time, else header time, else file mtime.
    pub modified_ms: i64,
    /// Every `message` entry, whatever its role.
    pub message_count: usize,
    /// The first user text, or `(no messages)`.
    pub first_message: String,
    /// All user/assistant texts joined by spaces (for searching).
    pub all_messages_text: String,
}

/// Text blocks of a message's `content`, joined by a space (a plain string as is).
fn text_of(message: &Value) -> Option<String> {
    match message.get("content")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => Some(
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

fn mtime_ms(path: &Path) -> i64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

/// Reads a file's listing metadata; `None` if it is not a session file.
pub fn session_info(path: &Path) -> Option<SessionInfo> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut crate::util::files::open_regular(path).ok()?,
        &mut bytes,
    )
    .ok()?;
    let (values, _) = parse_lines(&bytes);
    let header = values.first()?;
    if header.get("type").and_then(Value::as_str) != Some("session") {
        return None;
    }
    let mut info = SessionInfo {
        path: path.to_path_buf(),
        id: header.get("id").and_then(Value::as_str)?.to_string(),
        cwd: header
            .get("cwd")
            .and_then(Value::as_str)
            .unwrap_or("")
            .into(),
        name: None,
        parent_session_path: header
            .get("parentSession")
            .and_then(Value::as_str)
            .map(str::to_string),
        created: header
            .get("timestamp")
            .and_then(Value::as_str)
            .unwrap_or("")
            .into(),
        modified_ms: 0,
        message_count: 0,
        first_message: String::new(),
        all_messages_text: String::new(),
    };
    let mut texts = Vec::new();
    let mut last_activity: Option<i64> = None;
    for e in &values {
        let kind = e.get("type").and_then(Value::as_str);
        if kind == Some("session_info") {
            let name = e.get("name").and_then(Value::as_str).map(str::trim);
            info.name = name.filter(|n| !n.is_empty()).map(str::to_string);
        }
        if kind != Some("message") {
            continue;
        }
        info.message_count += 1;
        let Some(m) = e.get("message") else { continue };
        let role = m.get("role").and_then(Value::as_str);
        if !matches!(role, Some("user" | "assistant")) || m.get("content").is_none() {
            continue;
        }
        let t = match m.get("timestamp") {
            Some(Value::Number(n)) => n.as_f64().map(|f| f as i64),
            _ => e
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(parse_iso_ms),
        };
        if let Some(t) = t {
            last_activity = Some(last_activity.unwrap_or(0).max(t));
        }
        let Some(text) = text_of(m).filter(|t| !t.is_empty()) else {
            continue;
        };
        if info.first_message.is_empty() && role == Some("user") {
            info.first_message = text.clone();
        }
        texts.push(text);
    }
    info.all_messages_text = texts.join(" ");
    if info.first_message.is_empty() {
        info.first_message = "(no messages)".into();
    }
    info.modified_ms = match last_activity.filter(|&t| t > 0) {
        Some(t) => t,
        None => parse_iso_ms(&info.created).unwrap_or_else(|| mtime_ms(path)),
    };
    Some(info)
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    sort::sort(&mut files);
    files
}

fn sort_newest_first(list: &mut [SessionInfo]) {
    sort::sort_by_key(list, |s| std::cmp::Reverse(s.modified_ms));
}

/// Sessions in one directory, newest (by `modified_ms`) first.
pub fn list_sessions(dir: &Path) -> Vec<SessionInfo> {
    let mut list: Vec<SessionInfo> = jsonl_files(dir)
        .iter()
        .filter_map(|p| session_info(p))
        .collect();
    sort_newest_first(&mut list);
    list
}

/// Sessions of every project under `<agentDir>/sessions`, newest first.
pub fn list_all_sessions(agent_dir: &Path) -> Vec<SessionInfo> {
    let Ok(rd) = std::fs::read_dir(sessions_root(agent_dir)) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    sort::sort(&mut dirs);
    let mut list: Vec<SessionInfo> = dirs
        .iter()
        .flat_map(|d| jsonl_files(d))
        .filter_map(|p| session_info(&p))
        .collect();
    sort_newest_first(&mut list);
    list
}

/// The newest valid session file in `dir` by file mtime (`-c`).
pub fn most_recent(dir: &Path) -> Option<PathBuf> {
    jsonl_files(dir)
        .into_iter()
        .filter(|p| has_valid_header(p))
        .map(|p| (mtime_precise(&p), p))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, p)| p)
}

fn mtime_precise(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(UNIX_EPOCH)
}

/// Where an id prefix was found.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// In the current project's session directory.
    Local(SessionInfo),
    /// In another project (the caller offers to fork it here).
    Global(SessionInfo),
}

/// `--session <prefix>`: the newest session whose id starts with `prefix`, first in
/// `project_dir`, then across all projects of `agent_dir`.
pub fn find_by_id_prefix(agent_dir: &Path, project_dir: &Path, prefix: &str) -> Option<Found> {
    if let Some(s) = list_sessions(project_dir)
        .into_iter()
        .find(|s| s.id.starts_with(prefix))
    {
        return Some(Found::Local(s));
    }
    list_all_sessions(agent_dir)
        .into_iter()
        .find(|s| s.id.starts_with(prefix))
        .map(Found::Global)
}

/// pi's rule for `--session X`: a path if it contains a slash or ends in `.jsonl`.
pub fn looks_like_path(arg: &str) -> bool {
    arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl")
}

/// Copies every entry of `source` into a new session in `target_dir` whose header has
/// `cwd = target_cwd` and `parentSession` = `source`. Entries are copied byte for byte as
/// read (unknown ones included; an older file's entries as migrated); lines that cannot be
/// read are left behind. Returns the new file's path.
pub fn fork(source: &Path, target_dir: &Path, target_cwd: &str) -> std::io::Result<PathBuf> {
    fork_with_id(source, target_dir, target_cwd, &uuid_v7())
}

/// [`fork`], naming the new session `id` (`--fork X --session-id Y`).
pub fn fork_with_id(
    source: &Path,
    target_dir: &Path,
    target_cwd: &str,
    id: &str,
) -> std::io::Result<PathBuf> {
    let parsed = crate::util::files::open_regular(source)
        .map_err(super::file::LoadError::Io)
        .and_then(super::file::parse_session_from)
        .map_err(|e| {
            std::io::Error::other(format!(
                "Cannot fork: source session file is empty or invalid: {} ({e})",
                source.display()
            ))
        })?;
    std::fs::create_dir_all(target_dir)?;
    let ts = iso_timestamp(now_ms());
    let header = SessionHeader::new(
        id,
        &ts,
        target_cwd,
        Some(source.to_string_lossy().into_owned()),
    );
    let mut out = super::json::to_js_string(&header);
    out.push('\n');
    for line in &parsed.lines {
        out.push_str(line);
        out.push('\n');
    }
    let path = target_dir.join(session_file_name(&ts, id));
    crate::util::atomic::replace(
        &path,
        out.as_bytes(),
        crate::util::atomic::Options::durable(),
    )?;
    Ok(path)
}
