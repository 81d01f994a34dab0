//! Reading session files whole, and the v1→v2→v3 migrations. Reading never writes: an older
//! file is migrated in memory, and only when the session is appended to is it written at the
//! current version (`write_migrated`), the original copied beside it first, every line we
//! could not read kept as it was. Lines that cannot be used are reported with their number.

use std::collections::HashSet;
use std::fmt;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::entry::{Entry, SessionHeader};
use super::ids::short_id;
use super::lines::{parse_json, LineReader};
use super::normalize;
use super::CURRENT_VERSION;
use crate::util::files::open_regular;
use crate::util::sort;

/// A session file as loaded (and migrated in memory if it was older).
#[derive(Debug, Clone)]
pub struct LoadedSession {
    pub path: PathBuf,
    pub header: SessionHeader,
    /// The header's line as it is in the file, or will be once a migrated file is written.
    pub header_line: String,
    pub entries: Vec<Entry>,
    /// Each entry's line likewise.
    pub lines: Vec<String>,
    /// One message per line that could not be used (`<path>: line <n>: <reason>`).
    pub warnings: Vec<String>,
    /// The version the file had, if it was migrated.
    pub migrated_from: Option<u64>,
    /// How to write a migrated file at the current version.
    pub rewrite: Option<Rewrite>,
}

/// The lines migration changed, to be spliced into the original file when it is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewrite {
    /// `(offset, length, new text)` of each changed line, in file order.
    pub changed: Vec<(u64, u64, String)>,
    /// The file's length when it was read; a file that changed since is not rewritten.
    pub len: u64,
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

/// The warning for a line that is not JSON.
pub(crate) fn malformed_warning(line: usize, e: &serde_json::Error) -> String {
    format!("line {line}: skipped malformed entry ({e})")
}

/// The warning for a session header after the first line.
pub(crate) fn extra_header_warning(line: usize) -> String {
    format!("line {line}: ignored a second session header")
}

/// The warning for a line of a known type that cannot be used.
pub(crate) fn unusable_warning(line: usize, reason: &str) -> String {
    format!("line {line}: {reason}, left out of the conversation (kept in the file)")
}

/// Splits file contents into JSON values, one per non-blank line. Lines that cannot be read
/// are skipped; each yields a warning naming its 1-based line number.
pub fn parse_lines(bytes: &[u8]) -> (Vec<Value>, Vec<String>) {
    let mut values = Vec::new();
    let mut warnings = Vec::new();
    let mut reader = LineReader::new(bytes, 0);
    while let Ok(Some(line)) = reader.next_line() {
        if line.is_blank() {
            continue;
        }
        if line.too_long {
            warnings.push(line.too_long_warning());
            continue;
        }
        match parse_json::<Value>(line.text()) {
            Ok(v) => values.push(v),
            Err(e) => warnings.push(malformed_warning(line.number, &e)),
        }
    }
    (values, warnings)
}

/// True if `v` is a valid header line: `type:"session"` with a string `id`.
pub fn is_header(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("session")
        && v.get("id").is_some_and(Value::is_string)
}

/// The header's `version` if it is a usable number (at least 1; a fraction is cut).
pub(crate) fn header_version(header: &Value) -> Option<u64> {
    header
        .get("version")
        .and_then(Value::as_f64)
        .filter(|n| *n >= 1.0)
        .map(|n| n.min(u64::MAX as f64) as u64)
}

/// The file's version: the header's, or — when it lost its `version` or holds something else
/// there — what the entries show: ids mean at least v2, a `hookMessage` means v2 exactly.
fn version_of(values: &[Value]) -> u64 {
    let Some(header) = values.first() else {
        return CURRENT_VERSION;
    };
    if let Some(v) = header_version(header) {
        return v;
    }
    let entries = || values[1..].iter().filter(|v| !is_header(v));
    if entries().next().is_none() {
        return CURRENT_VERSION;
    }
    if !entries().any(|e| e.get("id").is_some_and(Value::is_string)) {
        return 1;
    }
    let hook = entries().any(|e| {
        e.get("message")
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str)
            == Some("hookMessage")
    });
    if hook {
        2
    } else {
        CURRENT_VERSION
    }
}

/// Brings parsed lines (header first) to the current version in place, as pi does: new keys
/// are appended after the existing ones. Returns the old version and which lines changed.
pub fn migrate(values: &mut [Value]) -> Option<(u64, Vec<bool>)> {
    let version = version_of(values);
    if version >= CURRENT_VERSION {
        return None;
    }
    let mut changed = vec![false; values.len()];
    if version < 2 {
        migrate_v1_to_v2(values, &mut changed);
    }
    migrate_v2_to_v3(values, &mut changed);
    Some((version, changed))
}

fn set_version(v: &mut Value, n: u64) {
    if let Some(o) = v.as_object_mut() {
        o.insert("version".into(), n.into());
    }
}

/// v1 → v2: a linear `id`/`parentId` chain; compaction `firstKeptEntryIndex` (an index into
/// the lines, header included) becomes `firstKeptEntryId`. An entry that already has an id or
/// a parent keeps them, so a newer file mistaken for v1 keeps its ids and every branch.
fn migrate_v1_to_v2(values: &mut [Value], changed: &mut [bool]) {
    let mut used: HashSet<String> = values
        .iter()
        .filter_map(|v| v.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    let mut prev: Option<String> = None;
    for i in 0..values.len() {
        if i == 0 || is_header(&values[i]) {
            if i == 0 {
                set_version(&mut values[i], 2);
                changed[i] = true;
            }
            continue;
        }
        let first_kept = values[i]
            .get("firstKeptEntryIndex")
            .and_then(Value::as_u64)
            .and_then(|k| values.get(k as usize))
            .filter(|t| t.get("type").and_then(Value::as_str) != Some("session"))
            .and_then(|t| t.get("id").cloned());
        let Some(o) = values[i].as_object_mut() else {
            continue;
        };
        let id = match o.get("id").and_then(Value::as_str) {
            Some(id) => id.to_string(),
            None => {
                let id = (0u32..)
                    .map(|attempt| stable_id(i, attempt, &values_text(o)))
                    .find(|id| used.insert(id.clone()))
                    .unwrap_or_else(short_id);
                o.insert("id".into(), Value::String(id.clone()));
                changed[i] = true;
                id
            }
        };
        if !o.contains_key("parentId") {
            o.insert("parentId".into(), prev.map_or(Value::Null, Value::String));
            changed[i] = true;
        }
        prev = Some(id);
        if o.get("type").and_then(Value::as_str) == Some("compaction")
            && o.get("firstKeptEntryIndex").is_some_and(Value::is_number)
        {
            if let Some(fk) = first_kept {
                o.insert("firstKeptEntryId".into(), fk);
            }
            o.shift_remove("firstKeptEntryIndex");
            changed[i] = true;
        }
    }
}

/// The text an id for a v1 entry is derived from.
fn values_text(o: &serde_json::Map<String, Value>) -> String {
    super::json::to_js_string(o)
}

/// An 8-hex id for the v1 entry at line `index`, the same every time the file is read (pi
/// draws random ones, but it writes them at once; we write only when the session grows, so
/// two reads of the same old file must agree on its ids).
fn stable_id(index: usize, attempt: u32, text: &str) -> String {
    // FNV-1a, 64 bits, folded to 32.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let bytes = (index as u64)
        .to_le_bytes()
        .into_iter()
        .chain(attempt.to_le_bytes())
        .chain(text.bytes());
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", (h >> 32) as u32 ^ h as u32)
}

/// v2 → v3: message role `hookMessage` becomes `custom`.
fn migrate_v2_to_v3(values: &mut [Value], changed: &mut [bool]) {
    for (i, v) in values.iter_mut().enumerate() {
        if i == 0 {
            set_version(v, 3);
            changed[i] = true;
            continue;
        }
        if v.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        if let Some(m) = v.get_mut("message").and_then(Value::as_object_mut) {
            if m.get("role").and_then(Value::as_str) == Some("hookMessage") {
                m.insert("role".into(), "custom".into());
                changed[i] = true;
            }
        }
    }
}

/// A session parsed (and migrated in memory) from a file or bytes.
#[derive(Debug, Clone)]
pub struct ParsedSession {
    pub header: SessionHeader,
    /// The header's line: as read, or as migrated.
    pub header_line: String,
    pub entries: Vec<Entry>,
    /// Each entry's line: as read, or as migrated.
    pub lines: Vec<String>,
    /// One per line that could not be used (`line <n>: <reason>`).
    pub warnings: Vec<String>,
    pub migrated_from: Option<u64>,
    /// The lines migration changed (empty unless migrated), as in [`Rewrite::changed`].
    pub changed: Vec<(u64, u64, String)>,
    /// Bytes read.
    pub len: u64,
}

/// Parses file bytes into a header and entries (migrating in memory, never touching disk).
pub fn parse_session(bytes: &[u8]) -> Result<ParsedSession, LoadError> {
    parse_from(bytes)
}

/// [`parse_session`] reading from `r`.
pub fn parse_session_from(r: impl Read) -> Result<ParsedSession, LoadError> {
    parse_from(r)
}

/// One valid JSON line: the value, its text as read, where it is.
struct JsonLine {
    value: Value,
    text: String,
    number: usize,
    offset: u64,
    len: u64,
}

fn parse_from(r: impl Read) -> Result<ParsedSession, LoadError> {
    let mut reader = LineReader::new(r, 0);
    let mut json: Vec<JsonLine> = Vec::new();
    let mut warnings: Vec<(usize, String)> = Vec::new();
    while let Some(line) = reader.next_line()? {
        if line.is_blank() {
            continue;
        }
        if line.too_long {
            warnings.push((line.number, line.too_long_warning()));
            continue;
        }
        match parse_json::<Value>(line.text()) {
            Ok(value) => json.push(JsonLine {
                value,
                text: String::from_utf8_lossy(line.text()).into_owned(),
                number: line.number,
                offset: line.offset,
                len: line.len,
            }),
            Err(e) => warnings.push((line.number, malformed_warning(line.number, &e))),
        }
    }
    let len = reader.position();
    let first = json.first().ok_or(LoadError::Empty)?;
    if !is_header(&first.value) {
        return Err(LoadError::InvalidHeader);
    }
    let mut values: Vec<Value> = json.iter_mut().map(|l| l.value.take()).collect();
    let migrated = migrate(&mut values);
    let header: SessionHeader = serde_json::from_value(normalize::header(&values[0]))
        .map_err(|_| LoadError::InvalidHeader)?;
    let mut changed = Vec::new();
    let mut header_line = String::new();
    let mut entries = Vec::with_capacity(values.len());
    let mut lines = Vec::with_capacity(values.len());
    for (i, (value, line)) in values.into_iter().zip(json).enumerate() {
        let was_changed = migrated.as_ref().is_some_and(|(_, c)| c[i]);
        let text = match was_changed {
            true => {
                let t = super::json::to_js_string(&value);
                changed.push((line.offset, line.len, t.clone()));
                t
            }
            false => line.text,
        };
        if i == 0 {
            header_line = text;
            continue;
        }
        if is_header(&value) {
            warnings.push((line.number, extra_header_warning(line.number)));
            continue;
        }
        if let Some(reason) = normalize::unusable_entry(&value) {
            warnings.push((line.number, unusable_warning(line.number, &reason)));
        }
        entries.push(Entry::from_value(value));
        lines.push(text);
    }
    // In line order (the ones found while reading come first otherwise).
    sort::sort_by_key(&mut warnings, |(n, _)| *n);
    let warnings = warnings.into_iter().map(|(_, w)| w).collect();
    Ok(ParsedSession {
        header,
        header_line,
        entries,
        lines,
        warnings,
        migrated_from: migrated.map(|(v, _)| v),
        changed,
        len,
    })
}

/// Loads a session file whole, migrating an older version in memory. Never writes.
pub fn load(path: &Path) -> Result<LoadedSession, LoadError> {
    let file = open_regular(path)?;
    let p = parse_from(&file)?;
    let warnings = p
        .warnings
        .iter()
        .map(|w| format!("{}: {w}", path.display()))
        .collect();
    let rewrite = p.migrated_from.map(|_| Rewrite {
        changed: p.changed,
        len: p.len,
    });
    Ok(LoadedSession {
        path: path.to_path_buf(),
        header: p.header,
        header_line: p.header_line,
        entries: p.entries,
        lines: p.lines,
        warnings,
        migrated_from: p.migrated_from,
        rewrite,
    })
}

/// A backup path next to `path` that does not exist yet: `<file>.bak`, then `<file>.bak.1`, …
fn backup_path(path: &Path) -> PathBuf {
    let base = format!("{}.bak", path.display());
    let mut p = PathBuf::from(&base);
    let mut n = 1;
    while p.symlink_metadata().is_ok() {
        p = PathBuf::from(format!("{base}.{n}"));
        n += 1;
    }
    p
}

/// Writes a migrated file at the current version: the original is first copied to a fresh
/// `<file>.bak`, then the file is replaced (atomically, durably) by itself with the changed
/// lines swapped in, followed by `tail` (whole lines). A file that changed since it was read
/// is left alone. Returns the backup's path.
pub fn write_migrated(path: &Path, rewrite: &Rewrite, tail: &str) -> io::Result<PathBuf> {
    let mut original = open_regular(path)?;
    if original.metadata()?.len() != rewrite.len {
        return Err(io::Error::other(
            "the file changed on disk since it was read, so it was not migrated",
        ));
    }
    let backup = backup_path(path);
    let mut copy = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&backup)?;
    io::copy(&mut original, &mut copy)?;
    copy.sync_all()?;
    drop(copy);
    let options = crate::util::atomic::Options::durable();
    crate::util::atomic::replace_with(path, options, &mut |out| {
        original.seek(SeekFrom::Start(0))?;
        let mut at = 0u64;
        let mut last = b'\n';
        for (offset, len, text) in &rewrite.changed {
            let n = io::copy(&mut (&mut original).take(offset - at), out)?;
            if n > 0 {
                last = last_byte(&mut original)?;
            }
            out.write_all(text.as_bytes())?;
            last = text.bytes().last().unwrap_or(last);
            original.seek(SeekFrom::Start(offset + len))?;
            at = offset + len;
        }
        let n = io::copy(&mut (&mut original).take(rewrite.len - at), out)?;
        if n > 0 {
            last = last_byte(&mut original)?;
        }
        if last != b'\n' {
            out.write_all(b"\n")?;
        }
        out.write_all(tail.as_bytes())
    })?;
    Ok(backup)
}

/// The byte just before the current position of `f`.
fn last_byte(f: &mut std::fs::File) -> io::Result<u8> {
    let pos = f.stream_position()?;
    f.seek(SeekFrom::Current(-1))?;
    let mut b = [0u8; 1];
    f.read_exact(&mut b)?;
    f.seek(SeekFrom::Start(pos))?;
    Ok(b[0])
}

/// Cheap validity check used when picking the newest session: the first line (within the
/// first 512 bytes, as pi reads) is a valid header.
pub fn has_valid_header(path: &Path) -> bool {
    let mut buf = [0u8; 512];
    let Ok(mut f) = open_regular(path) else {
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
    parse_json::<Value>(line).is_ok_and(|v| is_header(&v))
}
