//! The grep tool's search of one file, streamed: the file is read in chunks of
//! [`CHUNK`] bytes and searched a block of whole lines at a time, so memory stays flat
//! whatever the file's size (a 100 MB file used to be read whole). What is held is the
//! partial line at a chunk's end, the last `context` lines (as shown, each cut to a few
//! kilobytes) and the rows found. A line longer than [`MAX_LINE`] is searched in pieces of
//! that size and shown from its start. A file with a NUL byte anywhere is binary and gives
//! nothing, as before.

use std::collections::VecDeque;
use std::io::Read;
use std::path::Path;

use regex::bytes::Regex;

use super::truncate::{truncate_line, GREP_MAX_LINE_LENGTH};
use crate::ai::Abort;

/// Bytes read at a time.
pub const CHUNK: usize = 128 << 10;
/// A line is searched whole up to this length; a longer one in pieces of about this size.
pub const MAX_LINE: usize = 1 << 20;
/// What is kept of a line to show it: enough for [`GREP_MAX_LINE_LENGTH`] characters in any
/// encoding, so a longer line shows exactly as if it were kept whole.
const SHOWN_BYTES: usize = 4096;

/// One line of a file's output, as ripgrep reports it with `--context`: a match, or a context
/// line around one (overlapping windows merged, each line once).
pub struct Row {
    pub line: usize,
    pub is_match: bool,
    pub text: String,
    pub cut: bool,
}

/// A file's rows and how many of them are matches.
pub struct FileHits {
    pub rows: Vec<Row>,
    pub matches: usize,
}

/// What a file search looks for.
pub struct Search<'a> {
    pub regex: &'a Regex,
    pub context: usize,
    /// Matches worth finding: one past the limit, to tell whether more exist.
    pub wanted: usize,
    pub abort: &'a Abort,
}

/// Searches one file; `None` when it is unreadable, not a regular file, binary, has no match
/// or the search was aborted. Rows are the matches (at most `wanted`) and the context lines
/// around them, each line once.
pub fn search_file(path: &Path, search: &Search) -> Option<FileHits> {
    search_file_in(path, search, CHUNK, MAX_LINE)
}

/// [`search_file`] with the chunk size and long-line length given (tests use tiny ones).
fn search_file_in(path: &Path, search: &Search, chunk: usize, max_line: usize) -> Option<FileHits> {
    let mut file = crate::util::files::open_regular(path).ok()?;
    let mut scan = Scan::new(search, max_line);
    let mut buf: Vec<u8> = Vec::with_capacity(chunk);
    loop {
        if search.abort.is_aborted() {
            return None;
        }
        let old = buf.len();
        buf.resize(old + chunk, 0);
        let n = loop {
            match file.read(&mut buf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        };
        buf.truncate(old + n);
        let eof = n == 0;
        if memchr::memchr(0, &buf[old..]).is_some() {
            return None;
        }
        if scan.done() {
            // Every row is known; the rest is only read to tell a binary file.
            buf.clear();
        } else {
            let used = scan.feed(&buf, eof);
            buf.drain(..used);
        }
        if eof {
            break;
        }
    }
    scan.finish()
}

/// The line-by-line state of one file's search.
struct Scan<'a> {
    search: &'a Search<'a>,
    rows: Vec<Row>,
    matches: usize,
    /// Lines before the current block.
    lines: usize,
    /// The last lines not shown, at most `context` of them: the context before a next match.
    before: VecDeque<Row>,
    /// Lines up to this number are shown as context after a match.
    after_until: usize,
    /// A line longer than `max_line` being read in pieces: its start and whether a piece
    /// matched.
    long: Option<(Vec<u8>, bool)>,
    max_line: usize,
}

impl<'a> Scan<'a> {
    fn new(search: &'a Search<'a>, max_line: usize) -> Self {
        Scan {
            search,
            rows: Vec::new(),
            matches: 0,
            lines: 0,
            before: VecDeque::new(),
            after_until: 0,
            long: None,
            max_line,
        }
    }

    fn still_wanted(&self) -> usize {
        self.search.wanted - self.matches
    }

    /// Every match wanted is found and the context after the last one is shown.
    fn done(&self) -> bool {
        self.still_wanted() == 0 && self.lines >= self.after_until && self.long.is_none()
    }

    /// Searches the whole lines at the start of `buf` (all of it at the end of the file) and
    /// returns how many bytes it used; the rest is a line still being read.
    fn feed(&mut self, buf: &[u8], eof: bool) -> usize {
        let mut used = 0;
        if self.long.is_some() {
            match memchr::memchr(b'\n', buf) {
                Some(end) => {
                    self.long_piece(&buf[..end]);
                    self.end_long_line();
                    used = end + 1;
                }
                None => {
                    self.long_piece(buf);
                    if eof {
                        self.end_long_line();
                    }
                    return buf.len();
                }
            }
        }
        let rest = &buf[used..];
        let whole = if eof {
            rest.len()
        } else {
            memchr::memrchr(b'\n', rest).map_or(0, |i| i + 1)
        };
        self.block(&rest[..whole]);
        used += whole;
        if !eof && buf.len() - used >= self.max_line {
            self.long = Some((Vec::new(), false));
            self.long_piece(&buf[used..]);
            used = buf.len();
        }
        used
    }

    /// Whole lines (the last one may lack its newline only at the end of the file).
    fn block(&mut self, block: &[u8]) {
        if block.is_empty() {
            return;
        }
        let found = matching_lines(block, self.search.regex, self.still_wanted());
        let count =
            memchr::memchr_iter(b'\n', block).count() + usize::from(!block.ends_with(b"\n"));
        let base = self.lines;
        if self.search.context == 0 {
            for (no, start, end) in found {
                self.line(base + no, &block[start..end], true);
            }
        } else {
            let mut found = found.into_iter().peekable();
            let body = block.strip_suffix(b"\n").unwrap_or(block);
            for (i, line) in body.split(|&b| b == b'\n').enumerate() {
                let no = i + 1;
                let is_match = found.next_if(|f| f.0 == no).is_some();
                self.line(base + no, line, is_match);
            }
        }
        self.lines = base + count;
    }

    fn long_piece(&mut self, piece: &[u8]) {
        let searching = self.still_wanted() > 0;
        let Some((head, matched)) = &mut self.long else {
            return;
        };
        if head.len() < SHOWN_BYTES {
            let take = (SHOWN_BYTES - head.len()).min(piece.len());
            head.extend_from_slice(&piece[..take]);
        }
        *matched |= searching && self.search.regex.is_match(piece);
    }

    fn end_long_line(&mut self) {
        if let Some((head, matched)) = self.long.take() {
            self.lines += 1;
            self.line(self.lines, &head, matched);
        }
    }

    /// One line, in order: a match (with the context before it), a context line after a
    /// match, or a line remembered as possible context before the next match.
    fn line(&mut self, no: usize, bytes: &[u8], is_match: bool) {
        let context = self.search.context;
        if is_match {
            self.rows.extend(self.before.drain(..));
            self.rows.push(row(no, bytes, true));
            self.matches += 1;
            self.after_until = no + context;
        } else if no <= self.after_until {
            self.rows.push(row(no, bytes, false));
        } else if context > 0 {
            if self.before.len() == context {
                self.before.pop_front();
            }
            self.before.push_back(row(no, bytes, false));
        }
    }

    fn finish(self) -> Option<FileHits> {
        (self.matches > 0).then_some(FileHits {
            rows: self.rows,
            matches: self.matches,
        })
    }
}

fn row(line: usize, bytes: &[u8], is_match: bool) -> Row {
    let (text, cut) = clean_line(&bytes[..bytes.len().min(SHOWN_BYTES)]);
    Row {
        line,
        is_match,
        text,
        cut,
    }
}

/// Line text as shown: lossy UTF-8, a final carriage return dropped (as pi strips the line
/// ending ripgrep reports), cut at 500 characters.
fn clean_line(bytes: &[u8]) -> (String, bool) {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    truncate_line(&String::from_utf8_lossy(bytes), GREP_MAX_LINE_LENGTH)
}

/// Up to `limit` lines of `data` containing a match, as (1-based number, start, end) with the
/// end excluding the newline. The whole block is searched at once; a match that runs past its
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
#[path = "tests/grep_file.rs"]
mod tests;
