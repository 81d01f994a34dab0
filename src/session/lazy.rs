//! Resuming a session without parsing it: one streaming pass over a current-version file
//! validates every line exactly as `file::parse_lines` does (same acceptance, same warnings)
//! but keeps only each entry's id, parent, type and file span. Whole entries are parsed from
//! the file on demand, with the very code the eager loader uses (`Value` → `Entry`), so a
//! lazily read entry is identical to an eagerly read one. Context building after a compaction
//! then parses only the few entries it needs.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::entry::{CompactionEntry, Entry, SessionHeader};
use super::file::{
    extra_header_warning, header_version, is_header, load, malformed_warning, unusable_warning,
    LoadError, LoadedSession,
};
use super::lines::{parse_json, too_long_warning, LineReader};
use super::tree::{entry_messages, entry_messages_owned, ContextEdits, Edits, SessionContext};
use super::AgentMessage;
use super::CURRENT_VERSION;
use crate::ai::Message;
use crate::util::files::open_regular;

/// What context building needs to know about an entry without parsing it. The kind comes from
/// the line's `type`; a line of a known type may still fail to parse (then it is `Unknown`),
/// so every decision that depends on the entry's shape is confirmed by parsing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `assistant`: the message's `role` is `"assistant"`.
    Message {
        assistant: bool,
    },
    ModelChange,
    ThinkingLevelChange,
    Compaction,
    BranchSummary,
    CustomMessage,
    /// `session_info`: carries the session's display name.
    SessionInfo,
    /// A message with `role: "system"` (pi 1.x's prompt and tool checkpoints).
    SystemMessage,
    /// pi 1.x's `context_edit`.
    ContextEdit,
    Other,
}

impl Kind {
    fn of(kind: Option<&str>, role: Option<&str>) -> Kind {
        match kind {
            Some("message") if role == Some("system") => Kind::SystemMessage,
            Some("message") => Kind::Message {
                assistant: role == Some("assistant"),
            },
            Some("model_change") => Kind::ModelChange,
            Some("thinking_level_change") => Kind::ThinkingLevelChange,
            Some("compaction") => Kind::Compaction,
            Some("branch_summary") => Kind::BranchSummary,
            Some("custom_message") => Kind::CustomMessage,
            Some("session_info") => Kind::SessionInfo,
            Some("context_edit") => Kind::ContextEdit,
            _ => Kind::Other,
        }
    }

    /// Whether an entry of this kind can put a message into the context.
    fn has_message(self) -> bool {
        matches!(
            self,
            Kind::Message { .. } | Kind::SystemMessage | Kind::BranchSummary | Kind::CustomMessage
        )
    }
}

/// An entry's id (`""` when it has none, as `Entry::id` says), parent and kind.
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    pub id: Box<str>,
    pub parent: Option<Box<str>>,
    pub kind: Kind,
}

impl Meta {
    pub fn of(e: &Entry) -> Meta {
        let kind = match e {
            Entry::Message(m) => Kind::of(Some("message"), Some(m.message.role())),
            Entry::Unknown(_) if e.kind() == "context_edit" => Kind::ContextEdit,
            Entry::Unknown(_) => Kind::Other,
            _ => Kind::of(Some(e.kind()), None),
        };
        Meta {
            id: e.id().into(),
            parent: e.parent_id().map(Into::into),
            kind,
        }
    }
}

/// The file a lazily loaded session came from, kept open (reads follow the inode even if the
/// path is renamed), and where each loaded entry's line sits in it.
#[derive(Debug)]
pub(crate) struct LazyFile {
    file: File,
    spans: Vec<(u64, u32)>,
}

fn read_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        f.read_exact_at(buf, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = f;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(buf)
    }
}

/// A line already validated by the scan, parsed the way the eager loader parses it.
fn entry_of(line: &[u8]) -> Entry {
    parse_json::<Value>(line)
        .map(Entry::from_value)
        .unwrap_or(Entry::Unknown(Value::Null))
}

impl LazyFile {
    /// A file holding no entries yet; [`LazyFile::push`] adds the lines pi writes to it.
    pub fn over(file: File) -> LazyFile {
        LazyFile {
            file,
            spans: Vec::new(),
        }
    }

    /// The next entry's line: `len` bytes at `offset` (without its newline). A line of 4 GiB
    /// or more is not taken (`false`): it stays in memory.
    pub fn push(&mut self, offset: u64, len: usize) -> bool {
        let Ok(len) = u32::try_from(len) else {
            return false;
        };
        self.spans.push((offset, len));
        true
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether the entries are read from the file `other` describes (same device and inode).
    pub fn reads(&self, other: &std::fs::Metadata) -> bool {
        self.file
            .metadata()
            .is_ok_and(|m| crate::util::files::same_file(&m, other))
    }

    /// Loaded entry `i`, parsed now.
    pub fn entry(&self, i: usize) -> Entry {
        match self.line(i) {
            Ok(buf) => entry_of(&buf),
            Err(_) => Entry::Unknown(Value::Null),
        }
    }

    /// Loaded entry `i`'s line, exactly as in the file (without `\r\n`).
    pub fn line(&self, i: usize) -> io::Result<Vec<u8>> {
        let (offset, len) = self.spans[i];
        let mut buf = vec![0u8; len as usize];
        read_at(&self.file, &mut buf, offset)?;
        Ok(buf)
    }

    /// Every loaded entry, in file order.
    pub fn all(&self) -> Vec<Entry> {
        let Some(&(last_off, last_len)) = self.spans.last() else {
            return Vec::new();
        };
        let mut bytes = vec![0u8; (last_off + last_len as u64) as usize];
        if read_at(&self.file, &mut bytes, 0).is_err() {
            return (0..self.len()).map(|i| self.entry(i)).collect();
        }
        self.spans
            .iter()
            .map(|&(o, l)| entry_of(&bytes[o as usize..o as usize + l as usize]))
            .collect()
    }
}

/// A session file resumed lazily: header, one `Meta` per entry and where to parse them from.
pub(crate) struct LazyLoaded {
    pub header: SessionHeader,
    /// The header's line as it is in the file.
    pub header_line: String,
    pub metas: Vec<Meta>,
    pub file: LazyFile,
    pub warnings: Vec<String>,
}

pub(crate) enum Opened {
    Lazy(LazyLoaded),
    /// An older version (migrated in memory by `file::load`), or a header whose version
    /// has to be inferred from the entries.
    Eager(LoadedSession),
}

/// Files at least this big are scanned by two threads, one per half.
const SPLIT_BYTES: u64 = 8 << 20;

/// Opens a session file: lazily when it is at the current version, else through `file::load`.
/// Only regular files are read (a FIFO or a device is an error, not a hang).
pub(crate) fn open(path: &Path) -> Result<Opened, LoadError> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    let cut = match len >= SPLIT_BYTES {
        true => line_start_after(&file, len / 2, len)?,
        false => None,
    };
    let scanned = match cut {
        Some(cut) => std::thread::scope(|s| {
            let second = s.spawn(|| -> Result<Scan, Stop> {
                let mut f = File::open(path)?;
                f.seek(SeekFrom::Start(cut))?;
                scan(f.take(len - cut), cut, false)
            });
            let first = scan((&file).take(cut), 0, true);
            let second = second.join().unwrap_or_else(|_| Err(Stop::Panicked));
            match (first, second) {
                (Ok(a), Ok(b)) if a.header.is_some() => Ok(a.then(b)),
                (Err(e), _) | (_, Err(e)) if !matches!(e, Stop::Panicked) => Err(e),
                // No valid line in the first half (or a scan thread failed): one pass.
                _ => scan(File::open(path)?, 0, true),
            }
        }),
        None => scan(&file, 0, true),
    };
    let scanned = match scanned {
        Ok(s) => s,
        Err(Stop::Io(e)) => return Err(LoadError::Io(e)),
        Err(Stop::InvalidHeader) => return Err(LoadError::InvalidHeader),
        Err(Stop::Migrate) => return load(path).map(Opened::Eager),
        Err(Stop::Panicked) => return load(path).map(Opened::Eager),
    };
    let header = scanned.header.ok_or(LoadError::Empty)?;
    let warnings = scanned
        .warnings
        .iter()
        .map(|(n, w)| format!("{}: {}", path.display(), w.text(*n)))
        .collect();
    Ok(Opened::Lazy(LazyLoaded {
        header,
        header_line: scanned.header_line,
        metas: scanned.metas,
        file: LazyFile {
            file,
            spans: scanned.spans,
        },
        warnings,
    }))
}

/// The offset just past the first `\n` at or after `from`, if that is before `len`.
fn line_start_after(file: &File, from: u64, len: u64) -> io::Result<Option<u64>> {
    let mut f = file;
    f.seek(SeekFrom::Start(from))?;
    let skipped = LineReader::new(f.take(len - from), from)
        .next_line()?
        .map(|l| l.len);
    f.seek(SeekFrom::Start(0))?;
    // A line that runs to the end of the file has no next line.
    let cut = skipped.map(|n| from + n + 1).filter(|&cut| cut < len);
    Ok(cut)
}

enum Stop {
    Io(io::Error),
    InvalidHeader,
    /// The file is older than the current version, or its header has no usable version.
    Migrate,
    Panicked,
}

/// What is wrong with a line, to be worded once its line number in the file is known.
enum Warning {
    Malformed(serde_json::Error),
    TooLong(u64),
    ExtraHeader,
    Unusable(String),
}

impl Warning {
    fn text(&self, line: usize) -> String {
        match self {
            Warning::Malformed(e) => malformed_warning(line, e),
            Warning::TooLong(len) => too_long_warning(line, *len),
            Warning::ExtraHeader => extra_header_warning(line),
            Warning::Unusable(reason) => unusable_warning(line, reason),
        }
    }
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Io(e)
    }
}

/// What one pass over (part of) a file found. Line numbers count from the pass's start.
struct Scan {
    header: Option<SessionHeader>,
    header_line: String,
    metas: Vec<Meta>,
    spans: Vec<(u64, u32)>,
    warnings: Vec<(usize, Warning)>,
    lines: usize,
}

impl Scan {
    /// This pass followed by the next part of the file.
    fn then(mut self, next: Scan) -> Scan {
        self.metas.extend(next.metas);
        self.spans.extend(next.spans);
        let lines = self.lines;
        self.warnings
            .extend(next.warnings.into_iter().map(|(n, e)| (lines + n, e)));
        self.lines += next.lines;
        self
    }
}

/// Scans lines from `r`, which starts at file offset `offset`. With `header`, the first
/// valid line must be the session header (else it is an entry like any other).
fn scan(r: impl Read, offset: u64, header: bool) -> Result<Scan, Stop> {
    let mut reader = LineReader::new(r, offset);
    let mut out = Scan {
        header: None,
        header_line: String::new(),
        metas: Vec::new(),
        spans: Vec::new(),
        warnings: Vec::new(),
        lines: 0,
    };
    let mut need_header = header;
    while let Some(line) = reader.next_line()? {
        out.lines = line.number;
        if line.is_blank() {
            continue;
        }
        if line.too_long {
            out.warnings.push((line.number, Warning::TooLong(line.len)));
            continue;
        }
        let raw = line.text();
        if need_header {
            // The first valid line: the header (small, so parsed whole).
            match parse_json::<Value>(raw) {
                Ok(v) => {
                    if !is_header(&v) {
                        return Err(Stop::InvalidHeader);
                    }
                    match header_version(&v) {
                        Some(version) if version >= CURRENT_VERSION => {}
                        _ => return Err(Stop::Migrate),
                    }
                    let h = serde_json::from_value(super::normalize::header(&v))
                        .map_err(|_| Stop::InvalidHeader)?;
                    out.header = Some(h);
                    out.header_line = String::from_utf8_lossy(raw).into_owned();
                    need_header = false;
                }
                Err(e) => out.warnings.push((line.number, Warning::Malformed(e))),
            }
            continue;
        }
        match parse_json::<LineMeta>(raw) {
            Ok(m) => {
                if m.kind.as_deref() == Some("session") && m.id.is_some() {
                    out.warnings.push((line.number, Warning::ExtraHeader));
                    continue;
                }
                let kind = m.kind.as_deref().unwrap_or("");
                if let Some(reason) = super::normalize::unusable(kind, m.usable) {
                    out.warnings.push((line.number, Warning::Unusable(reason)));
                }
                out.metas.push(Meta {
                    id: m.id.unwrap_or_default().into(),
                    parent: m.parent.map(Into::into),
                    kind: Kind::of(m.kind.as_deref(), m.role.as_deref()),
                });
                out.spans.push((line.offset, raw.len() as u32));
            }
            // The error text comes from the parser the eager loader uses.
            Err(e) => {
                let e = parse_json::<Value>(raw).err().unwrap_or(e);
                out.warnings.push((line.number, Warning::Malformed(e)));
            }
        }
    }
    Ok(out)
}

// ---- the scan: validate like `Value`, keep only `type`, `id`, `parentId`, `message.role` ----

/// Any JSON value, validated as `Value` would be (strings, escapes, number ranges, depth)
/// without building it.
struct Any;

impl<'de> Deserialize<'de> for Any {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AnyVisitor)
    }
}

struct AnyVisitor;

impl<'de> Visitor<'de> for AnyVisitor {
    type Value = Any;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_str<E>(self, _: &str) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_unit<E>(self) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_none<E>(self) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Any, D::Error> {
        Any::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Any, A::Error> {
        while seq.next_element::<Any>()?.is_some() {}
        Ok(Any)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Any, A::Error> {
        while map.next_key::<Any>()?.is_some() {
            map.next_value::<Any>()?;
        }
        Ok(Any)
    }
}

/// A value kept only if it is a string.
struct MaybeStr(Option<String>);

impl<'de> Deserialize<'de> for MaybeStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeStr;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, s: &str) -> Result<MaybeStr, E> {
                Ok(MaybeStr(Some(s.to_string())))
            }
            fn visit_bool<E>(self, _: bool) -> Result<MaybeStr, E> {
                Ok(MaybeStr(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<MaybeStr, E> {
                Ok(MaybeStr(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<MaybeStr, E> {
                Ok(MaybeStr(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<MaybeStr, E> {
                Ok(MaybeStr(None))
            }
            fn visit_unit<E>(self) -> Result<MaybeStr, E> {
                Ok(MaybeStr(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MaybeStr, A::Error> {
                AnyVisitor.visit_seq(seq).map(|_| MaybeStr(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MaybeStr, A::Error> {
                AnyVisitor.visit_map(map).map(|_| MaybeStr(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// The keys the scan looks at; any other key is `Other`.
enum Key {
    Type,
    Id,
    Parent,
    Message,
    Role,
    ThinkingLevel,
    Name,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, s: &str) -> Result<Key, E> {
                Ok(match s {
                    "type" => Key::Type,
                    "id" => Key::Id,
                    "parentId" => Key::Parent,
                    "message" => Key::Message,
                    "role" => Key::Role,
                    "thinkingLevel" => Key::ThinkingLevel,
                    "name" => Key::Name,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// Whether a `message` value is an object, and its `role` (`None` unless a string).
struct Role(bool, Option<String>);

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Role;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Role, A::Error> {
                let mut role = None;
                while let Some(k) = map.next_key::<Key>()? {
                    match k {
                        Key::Role => role = map.next_value::<MaybeStr>()?.0,
                        _ => {
                            map.next_value::<Any>()?;
                        }
                    }
                }
                Ok(Role(true, role))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Role, A::Error> {
                AnyVisitor.visit_seq(seq).map(|_| Role(false, None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Role, E> {
                Ok(Role(false, None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Role, E> {
                Ok(Role(false, None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Role, E> {
                Ok(Role(false, None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Role, E> {
                Ok(Role(false, None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Role, E> {
                Ok(Role(false, None))
            }
            fn visit_unit<E>(self) -> Result<Role, E> {
                Ok(Role(false, None))
            }
        }
        d.deserialize_any(V)
    }
}

/// One line as the scan sees it. Duplicate keys: the last one wins, as in `Value`.
#[derive(Default)]
struct LineMeta {
    kind: Option<String>,
    id: Option<String>,
    parent: Option<String>,
    role: Option<String>,
    usable: super::normalize::Usable,
}

impl<'de> Deserialize<'de> for LineMeta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LineMeta;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LineMeta, A::Error> {
                let mut m = LineMeta::default();
                while let Some(k) = map.next_key::<Key>()? {
                    match k {
                        Key::Type => m.kind = map.next_value::<MaybeStr>()?.0,
                        Key::Id => m.id = map.next_value::<MaybeStr>()?.0,
                        Key::Parent => m.parent = map.next_value::<MaybeStr>()?.0,
                        Key::Message => {
                            let Role(object, role) = map.next_value::<Role>()?;
                            m.usable.message_is_object = object;
                            m.role = role;
                        }
                        Key::ThinkingLevel => {
                            m.usable.thinking_level_is_str =
                                map.next_value::<MaybeStr>()?.0.is_some();
                        }
                        Key::Name => {
                            let name = map.next_value::<Value>()?;
                            m.usable.name_is_str_or_absent = name.is_string() || name.is_null();
                        }
                        _ => {
                            map.next_value::<Any>()?;
                        }
                    }
                }
                Ok(m)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<LineMeta, A::Error> {
                AnyVisitor.visit_seq(seq).map(|_| LineMeta::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<LineMeta, E> {
                Ok(LineMeta::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<LineMeta, E> {
                Ok(LineMeta::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<LineMeta, E> {
                Ok(LineMeta::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<LineMeta, E> {
                Ok(LineMeta::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<LineMeta, E> {
                Ok(LineMeta::default())
            }
            fn visit_unit<E>(self) -> Result<LineMeta, E> {
                Ok(LineMeta::default())
            }
        }
        d.deserialize_any(V)
    }
}

// ---- context from metadata --------------------------------------------------------------------

/// Entries by id (the last entry with an id wins, as in `Tree`) plus their metadata.
pub(crate) struct Index<'a> {
    pub metas: &'a [Meta],
    pub by_id: &'a HashMap<Box<str>, usize>,
}

impl Index<'_> {
    /// Root → `leaf` inclusive, as indices; empty if `leaf` is unknown; a cycle ends the walk.
    pub fn path(&self, leaf: &str) -> Vec<usize> {
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = self.by_id.get(leaf).copied();
        while let Some(i) = cur {
            if !seen.insert(i) {
                break;
            }
            path.push(i);
            cur = self.metas[i]
                .parent
                .as_deref()
                .and_then(|p| self.by_id.get(p).copied());
        }
        path.reverse();
        path
    }

    /// The last compaction on `path` (position in `path`, entry).
    pub fn latest_compaction(
        &self,
        path: &[usize],
        get: &dyn Fn(usize) -> Entry,
    ) -> Option<(usize, CompactionEntry)> {
        path.iter().enumerate().rev().find_map(|(pos, &i)| {
            if self.metas[i].kind != Kind::Compaction {
                return None;
            }
            match get(i) {
                Entry::Compaction(c) => Some((pos, c)),
                _ => None,
            }
        })
    }

    /// `Tree::build_context`, parsing only what it needs through `get`.
    pub fn build_context(
        &self,
        leaf: Option<&str>,
        apply: Edits,
        get: &dyn Fn(usize) -> Entry,
    ) -> SessionContext {
        let mut messages = Vec::new();
        let mut ctx = self.visit_context(leaf, apply, get, &mut |m| messages.push(m));
        ctx.messages = messages;
        ctx
    }

    /// How many messages `build_context` would give, holding one entry at a time.
    pub fn context_len(&self, leaf: Option<&str>, get: &dyn Fn(usize) -> Entry) -> usize {
        let mut n = 0;
        self.visit_context(leaf, Edits::Apply, get, &mut |_| n += 1);
        n
    }

    /// The context's model and thinking level; each of its messages, in order, goes to `emit`
    /// as soon as it is parsed.
    pub fn visit_context(
        &self,
        leaf: Option<&str>,
        apply: Edits,
        get: &dyn Fn(usize) -> Entry,
        emit: &mut dyn FnMut(AgentMessage),
    ) -> SessionContext {
        let mut ctx = SessionContext::default();
        let Some(leaf) = leaf else {
            return ctx;
        };
        let leaf = match self.by_id.contains_key(leaf) {
            true => leaf,
            false => match self.metas.last() {
                Some(m) => &m.id,
                None => return ctx,
            },
        };
        let path = self.path(leaf);
        for &i in path.iter().rev() {
            if self.metas[i].kind != Kind::ThinkingLevelChange {
                continue;
            }
            if let Entry::ThinkingLevelChange(t) = get(i) {
                ctx.thinking_level = Some(t.thinking_level);
                break;
            }
        }
        for &i in path.iter().rev() {
            let model = match get_if_model(self.metas[i].kind, i, get) {
                Some(Entry::ModelChange(m)) => Some((m.provider, m.model_id)),
                Some(Entry::Message(m)) => match m.message {
                    AgentMessage::Llm(Message::Assistant(a)) => Some((a.provider, a.model)),
                    _ => None,
                },
                _ => None,
            };
            if model.is_some() {
                ctx.model = model;
                break;
            }
        }
        // As `tree::context_of_path`: the compaction, its kept entries (no system messages)
        // and everything after it, with context edits among them applied.
        let compaction = self.latest_compaction(&path, get);
        let selected: Vec<usize> = match &compaction {
            Some((ci, c)) => {
                let first_kept = c.first_kept_entry_id.as_deref();
                let start = path[..*ci]
                    .iter()
                    .position(|&i| Some(&*self.metas[i].id) == first_kept);
                let kept = start
                    .map_or(&path[..0], |s| &path[s..*ci])
                    .iter()
                    .filter(|&&i| self.metas[i].kind != Kind::SystemMessage);
                std::iter::once(path[*ci])
                    .chain(kept.copied())
                    .chain(path[ci + 1..].iter().copied())
                    .collect()
            }
            None => path,
        };
        let mut edits = ContextEdits::default();
        for &i in &selected {
            if apply == Edits::Apply && self.metas[i].kind == Kind::ContextEdit {
                edits.add(&get(i));
            }
        }
        for (n, &i) in selected.iter().enumerate() {
            let messages = match (&compaction, n) {
                (Some((_, c)), 0) => entry_messages(&Entry::Compaction(c.clone())),
                _ if self.metas[i].kind.has_message() => entry_messages_owned(get(i)),
                _ => continue,
            };
            edits
                .apply(&self.metas[i].id, messages)
                .into_iter()
                .for_each(&mut *emit);
        }
        ctx
    }
}

/// The parsed entry if `kind` can set the model.
fn get_if_model(kind: Kind, i: usize, get: &dyn Fn(usize) -> Entry) -> Option<Entry> {
    match kind {
        Kind::ModelChange | Kind::Message { assistant: true } => Some(get(i)),
        _ => None,
    }
}
