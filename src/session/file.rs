//! Reading session files: JSONL split on `\n` only (U+2028/U+2029 inside strings are not line
//! breaks), a trailing `\r` tolerated, malformed or truncated lines skipped with a warning,
//! header validation, and the v1→v2→v3 migrations. A migrated file is the only file we
//! rewrite; the original is kept next to it as `<file>.bak` first.

use std::collections::HashSet;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::entry::{Entry, SessionHeader};
use super::ids::short_id;
use super::CURRENT_VERSION;

/// A session file as loaded (and migrated if it was older).
#[derive(Debug, Clone)]
pub struct LoadedSession {
    pub path: PathBuf,
    pub header: SessionHeader,
    pub entries: Vec<Entry>,
    /// One message per skipped line (`<path>:<line>: <reason>`), for the caller to report.
    pub warnings: Vec<String>,
    /// The version the file had before it was migrated, if it was.
    pub migrated_from: Option<u64>,
    /// Where the original was copied before the migrated file replaced it.
    pub backup: Option<PathBuf>,
}

#[derive(Debug)]
pub enum LoadError {
    Io(std::io::Error),
    /// No valid JSON line at all.
    Empty,
    /// The first valid line is not `{"type":"session","id":<string>,…}`.
    InvalidHeader,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(e) => write!(f, "{e}"),
            LoadError::Empty => write!(f, "session file is empty"),
            LoadError::InvalidHeader => write!(f, "session file has no valid header"),
        }
    }
}

impl std::error::Error for LoadError {}

impl From<std::io::Error> for LoadError {
    fn from(e: std::io::Error) -> Self {
        LoadError::Io(e)
    }
}

/// Splits file contents into JSON values, one per non-blank line. Lines that do not parse
/// are skipped; each yields a warning naming its 1-based line number.
pub fn parse_lines(bytes: &[u8]) -> (Vec<Value>, Vec<String>) {
    let mut values = Vec::new();
    let mut warnings = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(raw) {
            Ok(v) => values.push(v),
            Err(e) => warnings.push(format!("line {}: skipped malformed entry ({e})", i + 1)),
        }
    }
    (values, warnings)
}

/// True if `v` is a valid header line: `type:"session"` with a string `id`.
pub fn is_header(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("session")
        && v.get("id").is_some_and(Value::is_string)
}

/// The file's version (a missing `version` means 1).
fn version_of(values: &[Value]) -> u64 {
    values
        .iter()
        .find(|v| v.get("type").and_then(Value::as_str) == Some("session"))
        .and_then(|h| h.get("version"))
        .and_then(Value::as_u64)
        .unwrap_or(1)
}

/// Brings parsed lines (header included) to the current version in place, as pi does: new
/// keys are appended after the existing ones. Returns the old version if anything changed.
pub fn migrate(values: &mut [Value]) -> Option<u64> {
    let version = version_of(values);
    if version >= CURRENT_VERSION {
        return None;
    }
    if version < 2 {
        migrate_v1_to_v2(values);
    }
    if version < 3 {
        migrate_v2_to_v3(values);
    }
    Some(version)
}

fn set_version(v: &mut Value, n: u64) {
    if let Some(o) = v.as_object_mut() {
        o.insert("version".into(), n.into());
    }
}

/// v1 → v2: a linear `id`/`parentId` chain; compaction `firstKeptEntryIndex` (an index into
/// the lines, header included) becomes `firstKeptEntryId`.
fn migrate_v1_to_v2(values: &mut [Value]) {
    let mut used = HashSet::new();
    let mut prev: Option<String> = None;
    for i in 0..values.len() {
        if values[i].get("type").and_then(Value::as_str) == Some("session") {
            set_version(&mut values[i], 2);
            continue;
        }
        let id = loop {
            let id = short_id();
            if used.insert(id.clone()) {
                break id;
            }
        };
        let first_kept = values[i]
            .get("firstKeptEntryIndex")
            .and_then(Value::as_u64)
            .and_then(|k| values.get(k as usize))
            .filter(|t| t.get("type").and_then(Value::as_str) != Some("session"))
            .and_then(|t| t.get("id").cloned());
        let Some(o) = values[i].as_object_mut() else {
            continue;
        };
        o.insert("id".into(), Value::String(id.clone()));
        o.insert("parentId".into(), prev.map_or(Value::Null, Value::String));
        prev = Some(id);
        if o.get("type").and_then(Value::as_str) == Some("compaction")
            && o.get("firstKeptEntryIndex").is_some_and(Value::is_number)
        {
            if let Some(fk) = first_kept {
                o.insert("firstKeptEntryId".into(), fk);
            }
            o.shift_remove("firstKeptEntryIndex");
        }
    }
}

/// v2 → v3: message role `hookMessage` becomes `custom`.
fn migrate_v2_to_v3(values: &mut [Value]) {
    for v in values.iter_mut() {
        match v.get("type").and_then(Value::as_str) {
            Some("session") => set_version(v, 3),
            Some("message") => {
                if let Some(m) = v.get_mut("message").and_then(Value::as_object_mut) {
                    if m.get("role").and_then(Value::as_str) == Some("hookMessage") {
                        m.insert("role".into(), "custom".into());
                    }
                }
            }
            _ => {}
        }
    }
}

/// Serializes lines as pi writes a whole file: one JSON per line, newline-terminated.
pub fn render(values: &[Value]) -> String {
    let mut out = String::new();
    for v in values {
        out.push_str(&super::json::to_js_string(v));
        out.push('\n');
    }
    out
}

/// A backup path next to `path` that does not exist yet: `<file>.bak`, then `<file>.bak.1`, …
fn backup_path(path: &Path) -> PathBuf {
    let base = format!("{}.bak", path.display());
    let mut p = PathBuf::from(&base);
    let mut n = 1;
    while p.exists() {
        p = PathBuf::from(format!("{base}.{n}"));
        n += 1;
    }
    p
}

/// Replaces `path` with `content` atomically (temp file + rename), after copying the
/// original to a fresh backup path. Returns the backup path.
fn rewrite_with_backup(path: &Path, content: &str) -> std::io::Result<PathBuf> {
    let backup = backup_path(path);
    std::fs::copy(path, &backup)?;
    let tmp = PathBuf::from(format!("{}.tmp-{}", path.display(), std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(content.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|_| backup)
}

/// A session parsed (and migrated in memory) from bytes.
#[derive(Debug, Clone)]
pub struct ParsedSession {
    pub header: SessionHeader,
    pub entries: Vec<Entry>,
    /// Every valid line as JSON, header first, after migration.
    pub values: Vec<Value>,
    pub warnings: Vec<String>,
    pub migrated_from: Option<u64>,
}

/// Parses file bytes into a header and entries (migrating in memory, never touching disk).
pub fn parse_session(bytes: &[u8]) -> Result<ParsedSession, LoadError> {
    let (mut values, warnings) = parse_lines(bytes);
    let first = values.first().ok_or(LoadError::Empty)?;
    if !is_header(first) {
        return Err(LoadError::InvalidHeader);
    }
    let migrated_from = migrate(&mut values);
    let header: SessionHeader =
        serde_json::from_value(values[0].clone()).map_err(|_| LoadError::InvalidHeader)?;
    let entries = values[1..]
        .iter()
        .filter(|v| v.get("type").and_then(Value::as_str) != Some("session"))
        .cloned()
        .map(Entry::from_value)
        .collect();
    Ok(ParsedSession {
        header,
        entries,
        values,
        warnings,
        migrated_from,
    })
}

/// Loads a session file. An older version is migrated and written back (the original kept
/// as a backup); nothing else ever rewrites the file.
pub fn load(path: &Path) -> Result<LoadedSession, LoadError> {
    let bytes = std::fs::read(path)?;
    let p = parse_session(&bytes)?;
    let warnings = p
        .warnings
        .iter()
        .map(|w| format!("{}: {w}", path.display()))
        .collect();
    let backup = match p.migrated_from {
        Some(_) => Some(rewrite_with_backup(path, &render(&p.values))?),
        None => None,
    };
    Ok(LoadedSession {
        path: path.to_path_buf(),
        header: p.header,
        entries: p.entries,
        warnings,
        migrated_from: p.migrated_from,
        backup,
    })
}

/// Cheap validity check used when picking the newest session: the first line (within the
/// first 512 bytes, as pi reads) is a valid header.
pub fn has_valid_header(path: &Path) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 512];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(_) => return false,
        }
    }
    let line = buf[..n].split(|&b| b == b'\n').next().unwrap_or(&[]);
    serde_json::from_slice::<Value>(line).is_ok_and(|v| is_header(&v))
}
