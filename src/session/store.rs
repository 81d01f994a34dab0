//! Writing sessions. A `SessionWriter` holds the whole session in memory and mirrors it to an
//! append-only JSONL file: nothing reaches disk until the session has a user or assistant message;
//! then the header and every buffered entry are written (atomically and durably, through
//! `util::atomic`), and from there on each new entry is one `write_all` of `line + "\n"` on an
//! `O_APPEND` handle, fsynced. A crash loses at most the line being written. Without a path
//! (`--no-session`) the same API writes nothing.
//!
//! Nothing is lost on the way: an entry read from a file (or copied from another session) is
//! written back byte for byte; a file migrated from an older version is written, with the
//! original kept beside it, only when the session is first appended to; a session file deleted
//! while pi runs is written again whole. Every failure is returned to the caller and kept as
//! [`SessionWriter::write_error`] until a later write succeeds.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use serde_json::Value;

use super::entry::{
    AgentMessage, BranchSummaryEntry, CompactionEntry, CustomEntry, CustomMessageEntry, Entry,
    LabelEntry, MessageEntry, ModelChangeEntry, SessionHeader, SessionInfoEntry,
    ThinkingLevelChangeEntry,
};
use super::file::{LoadError, LoadedSession, Rewrite};
use super::ids::{iso_timestamp, short_id, uuid_v7};
use super::lazy::{Index, Kind, LazyFile, LazyLoaded, Meta, Opened};
use super::tree::{Edits, SessionContext, Tree};
use crate::ai::{now_ms, Extra, UserContent};

pub struct SessionWriter {
    header: SessionHeader,
    /// The header's line in the file (`None`: a new session, written from `header`).
    header_line: Option<String>,
    /// Every entry's id, parent and kind, in file order.
    metas: Vec<Meta>,
    /// Entry index by id (the last entry with an id wins).
    by_id: HashMap<Box<str>, usize>,
    /// The entries on disk that are parsed from the file on demand (`metas[..lazy.len()]`):
    /// a resumed file's, and every entry once it is written, so a long session's messages
    /// are held once (by the agent), not again here (issue 35).
    lazy: Option<LazyFile>,
    /// Every entry, parsed: a cache of `lazy` + `pending` for the calls that need them all,
    /// dropped at the next append. Unused without `lazy` (then `pending` holds every entry).
    all: OnceLock<Vec<Entry>>,
    /// The entries held in memory (`metas[lazy.len()..]`): those not written yet, or every
    /// entry of a session kept in memory or migrated from an older version.
    pending: Vec<Entry>,
    /// Whether any entry is a user or assistant message (nothing is written before one).
    has_conversation: bool,
    leaf: Option<String>,
    /// `None`: in-memory session.
    path: Option<PathBuf>,
    file: Option<File>,
    /// Whether the header is on disk, and how many entries follow it there.
    header_written: bool,
    written: usize,
    /// A write failed: the file may end in a partial line that must be terminated first.
    torn_tail: bool,
    /// Each entry's line as loaded, for an eagerly loaded file (lazily loaded ones are read
    /// back from the file).
    loaded_lines: Vec<String>,
    /// Lines of appended entries that were copied from another session, by entry index.
    copied: HashMap<usize, String>,
    /// An older file, migrated in memory, still to be written at the current version.
    rewrite: Option<Rewrite>,
    /// The last write failure, until a later write succeeds.
    write_error: Option<String>,
    /// Entries appended now are kept in memory and written just before the next entry
    /// appended without holding (what start-up flags imply: opening a session writes
    /// nothing until something is said).
    holding: bool,
    /// The file at `path` as pi last left it: which file (device, inode) and how long. A file
    /// that is another or of another length at the next write was replaced or truncated by
    /// someone else, and is not written to again.
    on_disk: Option<FileState>,
    /// The path pi stopped writing to because someone else's file is there now.
    diverted_from: Option<PathBuf>,
    /// The live lease on `<path>.lock` while this process may write the session (released
    /// with the descriptor, so a crash never leaves the session locked).
    lease: Option<super::lease::Lease>,
    /// How many messages the context at the leaf has, once counted ([`UNCOUNTED`] until
    /// then); kept up to date by appends that continue the leaf.
    context_len: AtomicUsize,
}

const UNCOUNTED: usize = usize::MAX;

/// Which file, and how long it was when pi last wrote or read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileState {
    dev: u64,
    ino: u64,
    len: u64,
}

impl FileState {
    fn of(m: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        FileState {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
        }
    }
}

fn now_iso() -> String {
    iso_timestamp(now_ms())
}

impl SessionWriter {
    /// A new session with a fresh id, to be written at `path` (or nowhere if `None`).
    pub fn new(cwd: &str, path: Option<PathBuf>, parent_session: Option<String>) -> Self {
        let header = SessionHeader::new(&uuid_v7(), &now_iso(), cwd, parent_session);
        Self::with_header(header, path)
    }

    /// A new session in `session_dir`, named `<timestamp>_<id>.jsonl` as pi names it.
    pub fn create(session_dir: &Path, cwd: &str, parent_session: Option<String>) -> Self {
        let mut w = Self::new(cwd, None, parent_session);
        let name = super::dir::session_file_name(&w.header.timestamp, &w.header.id);
        w.path = Some(session_dir.join(name));
        w
    }

    /// A session that is never written (`--no-session`).
    pub fn in_memory(cwd: &str) -> Self {
        Self::new(cwd, None, None)
    }

    /// A new, not yet written session with this exact header.
    pub fn with_header(header: SessionHeader, path: Option<PathBuf>) -> Self {
        SessionWriter {
            header,
            header_line: None,
            metas: Vec::new(),
            by_id: HashMap::new(),
            lazy: None,
            all: OnceLock::new(),
            pending: Vec::new(),
            has_conversation: false,
            leaf: None,
            path,
            file: None,
            header_written: false,
            written: 0,
            torn_tail: false,
            loaded_lines: Vec::new(),
            copied: HashMap::new(),
            rewrite: None,
            write_error: None,
            holding: false,
            on_disk: None,
            diverted_from: None,
            lease: None,
            context_len: AtomicUsize::new(UNCOUNTED),
        }
    }

    /// Resumes an existing file (migrating it if old); the leaf is its last entry. Returns the
    /// loader's warnings about skipped lines alongside.
    pub fn open(path: &Path) -> Result<(Self, Vec<String>), LoadError> {
        let (mut w, warnings) = match super::lazy::open(path)? {
            Opened::Eager(loaded) => {
                let warnings = loaded.warnings.clone();
                (Self::from_loaded(loaded), warnings)
            }
            Opened::Lazy(l) => Self::from_lazy(l, path),
        };
        w.on_disk = std::fs::metadata(path).ok().map(|m| FileState::of(&m));
        Ok((w, warnings))
    }

    /// A writer continuing a lazily loaded file.
    fn from_lazy(l: LazyLoaded, path: &Path) -> (Self, Vec<String>) {
        let by_id = index_ids(&l.metas);
        let leaf = l.metas.last().map(|m| m.id.to_string());
        let has_conversation = (0..l.metas.len()).rev().any(|i| {
            l.metas[i].kind == super::lazy::Kind::Message { assistant: true }
                && l.file.entry(i).is_assistant_message()
        });
        let w = SessionWriter {
            header: l.header,
            header_line: Some(l.header_line),
            written: l.metas.len(),
            metas: l.metas,
            by_id,
            lazy: Some(l.file),
            all: OnceLock::new(),
            pending: Vec::new(),
            has_conversation,
            leaf,
            path: Some(path.to_path_buf()),
            file: None,
            header_written: true,
            torn_tail: true,
            loaded_lines: Vec::new(),
            copied: HashMap::new(),
            rewrite: None,
            write_error: None,
            holding: false,
            on_disk: None,
            diverted_from: None,
            lease: None,
            context_len: AtomicUsize::new(UNCOUNTED),
        };
        (w, l.warnings)
    }

    /// A writer continuing a loaded file: everything loaded counts as already on disk (a
    /// migrated file is written at the current version with the first new entry).
    pub fn from_loaded(l: LoadedSession) -> Self {
        let metas: Vec<Meta> = l.entries.iter().map(Meta::of).collect();
        let leaf = l.entries.last().map(|e| e.id().to_string());
        SessionWriter {
            header: l.header,
            header_line: Some(l.header_line),
            written: l.entries.len(),
            by_id: index_ids(&metas),
            metas,
            has_conversation: l.entries.iter().any(Entry::is_conversation_message),
            lazy: None,
            all: OnceLock::new(),
            pending: l.entries,
            leaf,
            path: Some(l.path),
            file: None,
            header_written: true,
            torn_tail: true,
            loaded_lines: l.lines,
            copied: HashMap::new(),
            rewrite: l.rewrite,
            write_error: None,
            holding: false,
            on_disk: None,
            diverted_from: None,
            lease: None,
            context_len: AtomicUsize::new(UNCOUNTED),
        }
    }

    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    pub fn session_id(&self) -> &str {
        &self.header.id
    }

    /// The file this session is (or will be) written to; `None` when in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn is_persisted(&self) -> bool {
        self.path.is_some()
    }

    /// All entries in file order (header excluded). Entries on disk are parsed for this and
    /// kept until the next append.
    pub fn entries(&self) -> &[Entry] {
        let Some(lazy) = &self.lazy else {
            return &self.pending;
        };
        self.all.get_or_init(|| {
            let mut all = lazy.all();
            all.extend(self.pending.iter().cloned());
            all
        })
    }

    /// Whether every entry is in memory, parsed (no entry has to be read from the file).
    fn all_in_memory(&self) -> bool {
        self.lazy.is_none() || self.all.get().is_some()
    }

    /// How many entries are held parsed in memory, not read back from the file.
    #[cfg(test)]
    pub(crate) fn entries_held(&self) -> usize {
        self.pending.len() + self.all.get().map_or(0, Vec::len)
    }

    /// How many entries are read back from the file rather than held.
    fn paged(&self) -> usize {
        self.lazy.as_ref().map_or(0, LazyFile::len)
    }

    /// Entry `i`, parsed (a clone when it is already in memory).
    fn entry_at(&self, i: usize) -> Entry {
        if let Some(e) = self.entry_ref(i) {
            return e.clone();
        }
        match &self.lazy {
            Some(l) if i < l.len() => l.entry(i),
            _ => Entry::Unknown(Value::Null),
        }
    }

    /// Entry `i` if it is in memory without parsing (always true of unwritten entries).
    fn entry_ref(&self, i: usize) -> Option<&Entry> {
        if let Some(all) = self.all.get() {
            return all.get(i);
        }
        i.checked_sub(self.paged())
            .and_then(|j| self.pending.get(j))
    }

    fn index(&self) -> Index<'_> {
        Index {
            metas: &self.metas,
            by_id: &self.by_id,
        }
    }

    /// The latest compaction on the current branch.
    pub fn latest_compaction(&self) -> Option<CompactionEntry> {
        let leaf = self.leaf.as_deref()?;
        let index = self.index();
        let path = index.path(leaf);
        index
            .latest_compaction(&path, &|i| self.entry_at(i))
            .map(|(_, c)| c)
    }

    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    pub fn tree(&self) -> Tree<'_> {
        Tree::new(self.entries())
    }

    /// The session's display name (the latest `session_info` entry's, trimmed; `None` when
    /// unnamed). A lazily resumed session parses only that one entry.
    pub fn name(&self) -> Option<String> {
        if self.all_in_memory() {
            return self.tree().name().map(str::to_string);
        }
        let info = self
            .metas
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, m)| m.kind == Kind::SessionInfo)
            .find_map(|(i, _)| match self.entry_at(i) {
                Entry::SessionInfo(info) => Some(info),
                _ => None,
            })?;
        info.name
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
    }

    /// The context at the current leaf.
    pub fn build_context(&self) -> SessionContext {
        self.context(Edits::Apply)
    }

    /// How many messages [`Self::build_context`] gives, without holding them: counted once
    /// (parsing one entry at a time), then kept up to date as entries are appended.
    pub fn context_len(&self) -> usize {
        let known = self.context_len.load(Ordering::Relaxed);
        if known != UNCOUNTED {
            return known;
        }
        let n = self
            .index()
            .context_len(self.leaf.as_deref(), &|i| self.entry_at(i));
        self.context_len.store(n, Ordering::Relaxed);
        n
    }

    /// Each message of the context at the leaf, in order, parsed one entry at a time (a long
    /// session's conversation is never held twice for this).
    pub fn for_each_context_message(&self, emit: &mut dyn FnMut(AgentMessage)) {
        let get = |i| self.entry_at(i);
        self.index()
            .visit_context(self.leaf.as_deref(), Edits::Apply, &get, emit);
    }

    /// Keeps the context's message count right for `entry`, about to be appended.
    fn count_appended(&mut self, entry: &Entry) {
        let known = *self.context_len.get_mut();
        let continues_leaf = entry.parent_id() == self.leaf.as_deref();
        let added = match entry {
            _ if known == UNCOUNTED || !continues_leaf => None,
            Entry::Message(_) | Entry::CustomMessage(_) => Some(1),
            Entry::BranchSummary(b) => Some(usize::from(!b.summary.is_empty())),
            Entry::Compaction(_) | Entry::Unknown(_) => None,
            _ => Some(0),
        };
        *self.context_len.get_mut() = added.map_or(UNCOUNTED, |n| known + n);
    }

    /// What the transcript shows at the current leaf: the context without pi 1.x's context
    /// edits, which change only what the model sees.
    pub fn transcript(&self) -> SessionContext {
        self.context(Edits::Ignore)
    }

    fn context(&self, edits: Edits) -> SessionContext {
        if self.all_in_memory() {
            let tree = self.tree();
            return match edits {
                Edits::Apply => tree.build_context(self.leaf.as_deref()),
                Edits::Ignore => tree.transcript(self.leaf.as_deref()),
            };
        }
        self.index()
            .build_context(self.leaf.as_deref(), edits, &|i| self.entry_at(i))
    }

    /// Moves the leaf to an existing entry; the next append branches from there.
    pub fn branch(&mut self, id: &str) -> Result<(), super::error::SessionOpError> {
        if !self.by_id.contains_key(id) {
            return Err(super::error::SessionOpError::EntryNotFound(id.to_string()));
        }
        self.leaf = Some(id.to_string());
        *self.context_len.get_mut() = UNCOUNTED;
        Ok(())
    }

    /// Moves the leaf before the first entry; the next append is a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
        *self.context_len.get_mut() = UNCOUNTED;
    }

    /// A fresh 8-hex id not used in this session (a full UUID after 100 collisions).
    pub fn new_id(&self) -> String {
        for _ in 0..100 {
            let id = short_id();
            if !self.by_id.contains_key(id.as_str()) {
                return id;
            }
        }
        uuid_v7()
    }

    /// Appends a fully built entry (its id must be fresh), makes it the leaf and persists it.
    /// The entry stays in memory even if the write fails.
    pub fn append(&mut self, entry: Entry) -> io::Result<String> {
        self.count_appended(&entry);
        let id = entry.id().to_string();
        self.by_id.insert(id.as_str().into(), self.metas.len());
        self.metas.push(Meta::of(&entry));
        self.has_conversation |= entry.is_conversation_message();
        self.leaf = Some(id.clone());
        self.all = OnceLock::new();
        self.pending.push(entry);
        self.persist()?;
        Ok(id)
    }

    /// Appends an entry copied from another session, written byte for byte as `line` (a
    /// JSON entry line) rather than re-serialized. Returns its id.
    pub fn append_line(&mut self, line: String) -> io::Result<String> {
        let value = super::lines::parse_json::<Value>(line.as_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let index = self.metas.len();
        self.copied.insert(index, line);
        self.append(Entry::from_value(value))
    }

    /// The line of the entry with `id` exactly as it is (or will be) in the file.
    pub fn line_of(&self, id: &str) -> Option<String> {
        self.by_id.get(id).and_then(|&i| self.entry_line(i))
    }

    /// Entry `i`'s line: as read from the file or copied, else serialized. `None` when the
    /// entry is only on disk and can no longer be read there (the file was cut short by
    /// another program).
    fn entry_line(&self, i: usize) -> Option<String> {
        if let Some(line) = self.copied.get(&i).or_else(|| self.loaded_lines.get(i)) {
            return Some(line.clone());
        }
        if let Some(lazy) = self.lazy.as_ref().filter(|l| i < l.len()) {
            if let Ok(bytes) = lazy.line(i) {
                return Some(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
        self.entry_ref(i).map(Entry::to_line)
    }

    /// The header's line as it is (or will be) in the file.
    pub fn header_line(&self) -> String {
        match &self.header_line {
            Some(line) => line.clone(),
            None => super::json::to_js_string(&self.header),
        }
    }

    /// Every entry's line in file order, as it is (or will be) in the file (an entry that
    /// can no longer be read back from the file is left out).
    pub fn entry_lines(&self) -> impl Iterator<Item = String> + '_ {
        (0..self.metas.len()).filter_map(|i| self.entry_line(i))
    }

    /// The header line and the lines of entries `from..`, each newline-terminated.
    fn lines_from(&self, from: usize, with_header: bool) -> String {
        self.whole_file(from, with_header).text
    }

    /// The text of a whole session file to write, with where each entry's line lands in it.
    fn whole_file(&self, from: usize, with_header: bool) -> FileText {
        let mut out = FileText::default();
        if with_header {
            out.text.push_str(&self.header_line());
            out.text.push('\n');
        }
        for i in from..self.metas.len() {
            match self.entry_line(i) {
                Some(line) => {
                    out.spans.push(Some((out.text.len() as u64, line.len())));
                    out.text.push_str(&line);
                    out.text.push('\n');
                }
                None => {
                    out.spans.push(None);
                    out.lost += 1;
                }
            }
        }
        out
    }

    /// After a whole file was written at `path` (`spans` from [`Self::whole_file`] with the
    /// header): its entries are read back from there from now on, and let go of here.
    fn page_out_all(&mut self, path: &Path, spans: &[Option<(u64, usize)>]) {
        let Ok(file) = crate::util::files::open_regular(path) else {
            return;
        };
        let same = file
            .metadata()
            .ok()
            .map(|m| FileState::of(&m))
            .is_some_and(|now| Some(now) == self.on_disk);
        if !same || spans.len() != self.metas.len() || spans.iter().any(Option::is_none) {
            return;
        }
        let mut lazy = LazyFile::over(file);
        for &(offset, len) in spans.iter().flatten() {
            if !lazy.push(offset, len) {
                return;
            }
        }
        self.lazy = Some(lazy);
        self.all = OnceLock::new();
        self.pending = Vec::new();
        self.copied.clear();
        self.loaded_lines = Vec::new();
    }

    /// Entry `i` was just appended to the file at `offset`: read it back from there from now
    /// on (only in order, after the entries already read back, and while the file is one pi
    /// reads lazily).
    fn page_out(&mut self, i: usize, file: &std::fs::Metadata, offset: u64, len: usize) {
        let Some(lazy) = self.lazy.as_mut() else {
            return;
        };
        if lazy.len() != i
            || self.pending.is_empty()
            || !lazy.reads(file)
            || !lazy.push(offset, len)
        {
            return;
        }
        self.pending.remove(0);
        self.copied.remove(&i);
    }

    /// Takes the live lease on the session: `flock(LOCK_EX|LOCK_NB)` on `<path>.lock` beside
    /// the file. Another pi process writing this session makes it [`super::lease::LeaseError::InUse`]. A
    /// session whose folder does not exist yet (a new file; created only if absent) or one held
    /// in memory needs none.
    pub fn take_lease(&mut self) -> Result<(), super::lease::LeaseError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if self.lease.is_some()
            || !path
                .parent()
                .is_some_and(|d| d.as_os_str().is_empty() || d.is_dir())
        {
            return Ok(());
        }
        self.lease = Some(super::lease::Lease::take(path)?);
        Ok(())
    }

    /// Goes on without writing anything: the conversation is still read from the file, but
    /// what is appended stays in memory (opening a session another pi is writing, read-only).
    pub fn stop_writing(&mut self) {
        self.path = None;
        self.file = None;
        self.lease = None;
    }

    /// Takes over `other`'s lease when both are the same session file (switching to the
    /// session this process already holds).
    pub fn adopt_lease_from(&mut self, other: &mut SessionWriter) {
        if self.lease.is_none() && self.path.is_some() && self.path == other.path {
            self.lease = other.lease.take();
        }
    }

    /// The path this session was meant to be written to, when pi stopped writing there (it
    /// was replaced, truncated, or created by another pi) and went on in a recovery file.
    pub fn diverted_from(&self) -> Option<&Path> {
        self.diverted_from.as_deref()
    }

    /// Why the last write failed, while no later write has succeeded: the session is not
    /// being fully persisted.
    pub fn write_error(&self) -> Option<&str> {
        self.write_error.as_deref()
    }

    /// While `hold` is set, appended entries stay in memory; they reach the file just before
    /// the next entry appended after it is cleared (issue 35: a read never writes).
    pub fn hold_writes(&mut self, hold: bool) {
        self.holding = hold;
    }

    /// Writes whatever is not on disk yet, once the session has a user or assistant message
    /// (pi 1.6.0: a prompt whose first reply never comes is still on disk; setup entries alone
    /// leave no file).
    fn persist(&mut self) -> io::Result<()> {
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        if !self.has_conversation || self.holding {
            return Ok(());
        }
        let result = self.write_unwritten(&path).map_err(|e| {
            let text = format!("Could not write session file {}: {e}", path.display());
            io::Error::new(e.kind(), text)
        });
        self.write_error = result.as_ref().err().map(ToString::to_string);
        result
    }

    fn write_unwritten(&mut self, path: &Path) -> io::Result<()> {
        if let Some(rewrite) = &self.rewrite {
            let tail = self.lines_from(self.written, false);
            super::file::write_migrated(path, rewrite, &tail)?;
            self.rewrite = None;
            self.file = None;
            self.torn_tail = false;
            self.written = self.metas.len();
            self.on_disk = std::fs::metadata(path).ok().map(|m| FileState::of(&m));
            return Ok(());
        }
        if !self.header_written {
            return self.create_file(path);
        }
        if let Some(gone) = self.reopen_if_replaced(path)? {
            return Err(gone);
        }
        let file = self.file.as_mut().expect("opened above");
        if self.torn_tail {
            terminate_partial_line(file)?;
            self.torn_tail = false;
        }
        while self.written < self.metas.len() {
            let Some(line) = self.entry_line(self.written) else {
                return Err(io::Error::other("an entry to write could not be read back"));
            };
            let file = self.file.as_mut().expect("opened above");
            let before = file.metadata()?.len();
            if let Err(e) = write_line(file, &line) {
                // Cut back to the last whole line, so the file never keeps half an entry.
                if file
                    .set_len(before)
                    .and_then(|()| file.sync_data())
                    .is_err()
                {
                    self.torn_tail = true;
                }
                self.on_disk = file.metadata().ok().map(|m| FileState::of(&m));
                return Err(e);
            }
            self.written += 1;
            let appended_to = file.metadata()?;
            self.page_out(self.written - 1, &appended_to, before, line.len());
        }
        let file = self.file.as_ref().expect("opened above");
        self.on_disk = Some(FileState::of(&file.metadata()?));
        Ok(())
    }

    /// Makes sure `self.file` appends to the file pi wrote at `path`. A file deleted while pi
    /// runs is written again whole, so nothing is lost, and reported: returned as
    /// `Some(error)` then. A file replaced or truncated by someone else is left alone: the
    /// session goes on in a recovery file beside it, and that is reported.
    fn reopen_if_replaced(&mut self, path: &Path) -> io::Result<Option<io::Error>> {
        let on_disk = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.file = None;
                self.written = 0;
                self.create_file(path)?;
                return Ok(Some(io::Error::other(
                    "the file was deleted while pi was running; it was written again with the whole session",
                )));
            }
            Err(e) => return Err(e),
        };
        let now = FileState::of(&on_disk);
        let expected = self.on_disk.or_else(|| {
            let f = self.file.as_ref()?;
            f.metadata().ok().map(|m| FileState::of(&m))
        });
        if let Some(was) = expected {
            let mut replaced = (was.dev, was.ino) != (now.dev, now.ino);
            if replaced && was.len == now.len && self.starts_with_our_header(path) {
                // Rewritten whole with the same content (as pi's own migration does): the
                // session goes on in the new file.
                self.file = None;
                replaced = false;
            }
            if replaced || was.len != now.len {
                let what = match (replaced, now.len < was.len) {
                    (true, _) => "replaced",
                    (false, true) => "truncated",
                    (false, false) => "changed",
                };
                let reason = format!("the file was {what} by another program while pi was running, so pi stopped writing to it");
                return Err(self.divert(path, &reason));
            }
        }
        if self.file.is_none() {
            let file = OpenOptions::new().append(true).read(true).open(path)?;
            if !crate::util::files::same_file(&file.metadata()?, &on_disk) {
                return Err(self.divert(
                    path,
                    "the file was replaced by another program while pi was opening it",
                ));
            }
            self.file = Some(file);
            self.torn_tail = true;
        }
        Ok(None)
    }

    /// Whether the file at `path` begins with this session's header line.
    fn starts_with_our_header(&self, path: &Path) -> bool {
        let want = format!("{}\n", self.header_line());
        let mut got = vec![0u8; want.len()];
        crate::util::files::open_regular(path)
            .and_then(|mut f| f.read_exact(&mut got))
            .is_ok_and(|()| got == want.as_bytes())
    }

    /// The first write (or a rewrite of a deleted file): the header plus every entry go to a
    /// temporary file that is fsynced and linked into place only if nothing is there yet, so a
    /// crash leaves either no file or a complete, loadable one, and a file another pi created
    /// meanwhile is never replaced (the session goes to a recovery file beside it instead).
    fn create_file(&mut self, path: &Path) -> io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let whole = self.whole_file(0, true);
        let buf = &whole.text;
        let options = crate::util::atomic::Options::durable();
        match crate::util::atomic::create_new(path, buf.as_bytes(), options) {
            Ok(()) => {}
            // An empty file (pi takes one for a new session) holds nothing to lose.
            Err(e)
                if e.kind() == io::ErrorKind::AlreadyExists
                    && std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) =>
            {
                crate::util::atomic::replace(path, buf.as_bytes(), options)?;
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(self.divert(
                    path,
                    "another pi process created this session file first, so pi did not overwrite it",
                ));
            }
            Err(e) => return Err(e),
        }
        self.file = None;
        self.header_written = true;
        self.written = self.metas.len();
        self.on_disk = std::fs::metadata(path).ok().map(|m| FileState::of(&m));
        self.page_out_all(path, &whole.spans);
        if whole.lost > 0 {
            return Err(lost_entries(whole.lost));
        }
        Ok(())
    }

    /// Stops writing to `path` (it is someone else's now) and writes the whole session to a
    /// new recovery file beside it, where the session goes on. Returns the error that says so.
    fn divert(&mut self, path: &Path, reason: &str) -> io::Error {
        self.file = None;
        self.torn_tail = false;
        let whole = self.whole_file(0, true);
        let buf = &whole.text;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = path.parent().unwrap_or(Path::new(""));
        for n in 0..1000 {
            let name = match n {
                0 => format!("{stem}.recovered.jsonl"),
                n => format!("{stem}.recovered-{n}.jsonl"),
            };
            let recovery = dir.join(name);
            match crate::util::atomic::create_new(
                &recovery,
                buf.as_bytes(),
                crate::util::atomic::Options::durable(),
            ) {
                Ok(()) => {
                    self.on_disk = std::fs::metadata(&recovery).ok().map(|m| FileState::of(&m));
                    self.header_written = true;
                    self.written = self.metas.len();
                    let mut text = format!(
                        "{reason}; this session was saved to {} instead",
                        recovery.display()
                    );
                    if whole.lost > 0 {
                        text = format!("{text} ({})", lost_entries(whole.lost));
                    }
                    self.diverted_from.get_or_insert_with(|| path.to_path_buf());
                    self.page_out_all(&recovery, &whole.spans);
                    self.path = Some(recovery);
                    return io::Error::other(text);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return io::Error::other(format!(
                        "{reason}; saving the session beside it failed too: {e}"
                    ))
                }
            }
        }
        io::Error::other(format!("{reason}; no free recovery file name beside it"))
    }

    fn parent(&self) -> Option<String> {
        self.leaf.clone()
    }

    pub fn append_message(&mut self, message: AgentMessage) -> io::Result<String> {
        let e = Entry::Message(MessageEntry {
            id: self.new_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            message,
            extra: Extra::new(),
        });
        self.append(e)
    }

    pub fn append_model_change(&mut self, provider: &str, model_id: &str) -> io::Result<String> {
        let e = Entry::ModelChange(ModelChangeEntry {
            id: self.new_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            provider: provider.into(),
            model_id: model_id.into(),
            extra: Extra::new(),
        });
        self.append(e)
    }

    pub fn append_thinking_level_change(&mut self, level: &str) -> io::Result<String> {
        let e = Entry::ThinkingLevelChange(ThinkingLevelChangeEntry {
            id: self.new_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            thinking_level: level.into(),
            extra: Extra::new(),
        });
        self.append(e)
    }

    pub fn append_compaction(
        &mut self,
        summary: &str,
        first_kept_entry_id: &str,
        tokens_before: u64,
        details: Option<Value>,
        usage: Option<Value>,
        from_hook: Option<bool>,
    ) -> io::Result<String> {
        let now = now_ms();
        let mut extra = Extra::new();
        // pi 1.x: the prompt and tools declared so far, so the context after the compaction
        // (which leaves out the system messages before it) still has them.
        let checkpoint = self.system_state().checkpoint(now);
        if let Some(m) = checkpoint.and_then(|m| serde_json::to_value(AgentMessage::System(m)).ok())
        {
            extra.insert("systemMessage".into(), m);
        }
        let e = Entry::Compaction(CompactionEntry {
            id: self.new_id(),
            parent_id: self.parent(),
            timestamp: iso_timestamp(now),
            summary: summary.into(),
            first_kept_entry_id: Some(first_kept_entry_id.into()),
            tokens_before,
            details,
            usage,
            from_hook,
            extra,
        });
        self.append(e)
    }

    /// The prompt and tools the current branch has declared (its system messages replayed).
    pub fn system_state(&self) -> crate::agent::system_message::SystemState {
        let context = self.build_context();
        crate::agent::system_message::SystemState::replay(context.messages.iter().filter_map(|m| {
            match m {
                AgentMessage::System(s) => Some(s),
                _ => None,
            }
        }))
    }

    /// Moves the leaf to `from` (`None`: before the root) and appends a `branch_summary` there.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: &str,
        details: Option<Value>,
        from_hook: Option<bool>,
    ) -> io::Result<String> {
        if let Some(id) = from {
            self.branch(id).map_err(io::Error::other)?;
        } else {
            self.reset_leaf();
        }
        let e = Entry::BranchSummary(BranchSummaryEntry {
            id: self.new_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            from_id: from.unwrap_or("root").into(),
            summary: summary.into(),
            details,
            from_hook,
            extra: Extra::new(),
        });
        self.append(e)
    }

    pub fn append_custom(&mut self, custom_type: &str, data: Option<Value>) -> io::Result<String> {
        let e = Entry::Custom(CustomEntry {
            custom_type: custom_type.into(),
            data,
            id: self.new_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            extra: Extra::new(),
        });
        self.append(e)
    }

    pub fn append_custom_message(
        &mut self,
        custom_type: &str,
        content: UserContent,
        display: bool,
        details: Option<Value>,
    ) -> io::Result<String> {
        let e = Entry::CustomMessage(CustomMessageEntry {
            custom_type: custom_type.into(),
            content,
            display,
            details,
            id: self.new_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            extra: Extra::new(),
        });
        self.append(e)
    }

    /// Sets (or with `None`/empty, clears) the label of an existing entry.
    pub fn append_label(&mut self, target_id: &str, label: Option<&str>) -> io::Result<String> {
        if !self.by_id.contains_key(target_id) {
            return Err(io::Error::other(format!("Entry {target_id} not found")));
        }
        let e = Entry::Label(LabelEntry {
            id: self.new_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            target_id: target_id.into(),
            label: label.map(str::to_string),
            extra: Extra::new(),
        });
        self.append(e)
    }

    /// Names the session (trimmed; empty clears).
    pub fn append_session_info(&mut self, name: &str) -> io::Result<String> {
        let e = Entry::SessionInfo(SessionInfoEntry {
            id: self.new_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            name: Some(name.trim().to_string()),
            extra: Extra::new(),
        });
        self.append(e)
    }
}

/// A whole session file's text, where each entry's line is in it (`None`: left out because
/// it could not be read back) and how many were left out.
#[derive(Default)]
struct FileText {
    text: String,
    spans: Vec<Option<(u64, usize)>>,
    lost: usize,
}

/// Entries pi had written and read back from its file are gone when another program cut the
/// file short under it.
fn lost_entries(n: usize) -> io::Error {
    io::Error::other(format!(
        "{n} entries pi had already written could no longer be read back from the file (another program cut it short) and are missing from it"
    ))
}

/// Entry index by id; the last entry with an id wins, as in `Tree`.
fn index_ids(metas: &[Meta]) -> HashMap<Box<str>, usize> {
    let mut by_id = HashMap::with_capacity(metas.len());
    for (i, m) in metas.iter().enumerate() {
        by_id.insert(m.id.clone(), i);
    }
    by_id
}

/// One line, one `write_all`, then fsync: once an entry is reported written, a crash does
/// not take it back.
fn write_line(file: &mut File, line: &str) -> io::Result<()> {
    let mut buf = String::with_capacity(line.len() + 1);
    buf.push_str(line);
    buf.push('\n');
    file.write_all(buf.as_bytes())?;
    file.sync_data()
}

/// If the file does not end in `\n` (a torn write, or a file written without a final
/// newline), appends one so the next line starts cleanly.
fn terminate_partial_line(file: &mut File) -> io::Result<()> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok(());
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    if last[0] != b'\n' {
        file.write_all(b"\n")?;
    }
    Ok(())
}
