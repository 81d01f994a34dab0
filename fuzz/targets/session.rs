//! Session files of every pi version (`session::file`, `session::lazy`, `session::normalize`):
//! loading never writes, accounts for every line (an entry, the header, or a warning naming
//! it), and the lazy loader used to resume agrees with the eager one on everything it
//! answers. An old file, once its migration is written, keeps a byte-exact backup, every entry
//! and every line that could not be read.
//!
//! Input: the file's bytes. The seeds are files written by pi 0.x (v1, v2, v3) and 1.x.

use std::path::Path;

use pi::session::file::{load, parse_session, write_migrated, LoadedSession};
use pi::session::lines::parse_json;
use pi::session::{build_context, Entry, SessionWriter};
use serde_json::Value;

/// One input in this many also goes through the files on disk (every one when replaying):
/// the in-memory checks run at thousands of inputs a second, the file ones at hundreds.
const ON_DISK_EVERY: u32 = 64;

pub fn run(data: &[u8]) {
    in_memory(data);
    let sampled = data
        .iter()
        .fold(0u32, |h, &b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
        % ON_DISK_EVERY
        == 0;
    if sampled || super::full_checks() {
        on_disk(data);
    }
}

/// Parsing accounts for every line, and what it migrated, written out and parsed again,
/// reads as the same entries at the current version with nothing left to migrate.
fn in_memory(data: &[u8]) {
    let Ok(parsed) = parse_session(data) else {
        return;
    };
    account_for_every_line(
        data,
        parsed.entries.len(),
        parsed.lines.len(),
        &parsed.warnings,
    );
    let mut written = parsed.header_line.clone();
    for line in &parsed.lines {
        written.push('\n');
        written.push_str(line);
    }
    written.push('\n');
    let again = parse_session(written.as_bytes()).expect("the parsed lines parse again");
    assert_eq!(again.migrated_from, None, "written at the current version");
    // Compared as text: a number read as -0 is written as 0, as JSON.stringify writes it.
    assert_eq!(again.header_line, parsed.header_line);
    assert_eq!(again.lines, parsed.lines, "parse, write, parse is stable");
    assert_eq!(again.entries.len(), parsed.entries.len());
}

fn on_disk(data: &[u8]) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, data).expect("write the session file");
    let before = std::fs::metadata(&path).expect("stat").modified().ok();

    let eager = load(&path);
    let lazy = SessionWriter::open(&path);
    match (&eager, &lazy) {
        (Ok(loaded), Ok((writer, warnings))) => {
            let n = loaded.entries.len();
            account_for_every_line(data, n, loaded.lines.len(), &loaded.warnings);
            assert_eq!(warnings, &loaded.warnings, "both loaders warn alike");
            agree(loaded, writer);
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!(
            "the loaders disagree: eager {:?}, lazy {:?}",
            a.as_ref().map(|_| ()),
            b.as_ref().map(|_| ())
        ),
    }
    drop(lazy);

    assert_eq!(
        std::fs::read(&path).expect("read back"),
        data,
        "loading wrote"
    );
    let after = std::fs::metadata(&path).expect("stat").modified().ok();
    assert_eq!(before, after, "loading touched the file");
    assert_eq!(files_in(dir.path()), 1, "loading created a file");

    if let Ok(loaded) = eager {
        if loaded.rewrite.is_some() {
            migrate(&path, data, &loaded);
        }
    }
}

fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).expect("list").count()
}

/// Non-blank lines, split as a session file is (at `\n`, a trailing `\r` dropped).
fn lines(data: &[u8]) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.ends_with(b"\n") || data.is_empty() {
        out.pop();
    }
    out.into_iter()
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .collect()
}

/// Every non-blank line is the header, an entry, or named by exactly one warning.
fn account_for_every_line(data: &[u8], entries: usize, lines_kept: usize, warnings: &[String]) {
    let all = lines(data);
    let parsable = all
        .iter()
        .filter(|l| parse_json::<Value>(l).is_ok())
        .count();
    let kept = 1 + entries;
    let second_headers = count(warnings, "ignored a second session header");
    let unreadable = count(warnings, "skipped");
    assert_eq!(lines_kept, entries);
    assert_eq!(
        kept + second_headers + unreadable,
        all.len(),
        "lines {}, kept {kept}, second headers {second_headers}, unreadable {unreadable}: \
         {warnings:#?}",
        all.len(),
    );
    // Lines that read as JSON (lone surrogates replaced, as pi's JSON.parse reads them) are
    // never skipped.
    assert!(
        kept + second_headers >= parsable,
        "a parsable line was lost"
    );
}

fn count(warnings: &[String], what: &str) -> usize {
    warnings.iter().filter(|w| w.contains(what)).count()
}

/// The resumed writer (lazy for a current file) answers as the eagerly loaded entries do.
fn agree(loaded: &LoadedSession, writer: &SessionWriter) {
    let leaf = loaded.entries.last().map(Entry::id);
    assert_eq!(writer.leaf_id(), leaf);
    assert_eq!(writer.header(), &loaded.header);
    assert_eq!(writer.build_context(), build_context(&loaded.entries, leaf));
    let tree = pi::session::Tree::new(&loaded.entries);
    assert_eq!(writer.transcript(), tree.transcript(leaf));
    assert_eq!(writer.name().as_deref(), tree.name());
    assert_eq!(writer.entries(), &loaded.entries[..]);
    for e in &loaded.entries {
        tree.path(e.id());
    }
    let _ = pi::session::ops::stats(writer, 200_000);
}

/// Writes the migration of an old file, as resuming and appending does, and reads it back.
fn migrate(path: &Path, original: &[u8], loaded: &LoadedSession) {
    let rewrite = loaded.rewrite.as_ref().expect("a migration");
    let backup = write_migrated(path, rewrite, "").expect("write the migration");
    assert_eq!(std::fs::read(&backup).expect("read backup"), original);
    let again = load(path).expect("the migrated file loads");
    assert_eq!(again.migrated_from, None, "written at the current version");
    // As text: a number read as -0 is written as 0, as JSON.stringify writes it.
    assert_eq!(
        again.lines, loaded.lines,
        "every entry, as migration read it"
    );
    assert_eq!(
        again.warnings.len(),
        loaded.warnings.len(),
        "every warning again"
    );
    // Lines that could not be read are still there, byte for byte.
    let written = std::fs::read(path).expect("read the migrated file");
    let now = lines(&written);
    for l in lines(original) {
        if parse_json::<Value>(l).is_err() && !l.is_empty() {
            assert!(
                now.contains(&l),
                "line {:?} was dropped",
                String::from_utf8_lossy(l)
            );
        }
    }
}
