//! Server-sent events: a pure, incremental parser (`SseParser`) fed with arbitrary byte chunks,
//! and `read_events`, which drives it from a blocking reader while honouring the abort flag.
//! The idle timeout is enforced by the HTTP layer's per-read timeout; a timed-out read surfaces
//! here as an I/O error with a readable message.

use std::io::Read;

use super::error::ProviderError;
use super::stream::Abort;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, empty when absent.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental SSE decoder. Lines may end in `\n`, `\r\n` or `\r`; a chunk may split anywhere,
/// including inside a UTF-8 sequence or between `\r` and `\n`.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    /// The previous chunk ended in `\r`; a leading `\n` in the next chunk belongs to it.
    skip_lf: bool,
    /// The last `id:` field seen (the spec's last event ID buffer), for `Last-Event-ID`.
    last_event_id: Option<String>,
    /// The last valid `retry:` field, in milliseconds.
    retry_ms: Option<u64>,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes and returns every event completed by them.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut bytes = chunk;
        // Only the very next byte may complete a `\r\n` pair; an empty chunk leaves that open.
        if self.skip_lf && !bytes.is_empty() {
            self.skip_lf = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        let mut start = 0;
        while let Some(at) = memchr::memchr2(b'\n', b'\r', &bytes[start..]) {
            let end = start + at;
            // A line whole in this chunk is read in place; only a line split across chunks
            // goes through `buf` (kept, with its capacity, for the next one).
            if self.buf.is_empty() {
                self.line(&bytes[start..end], &mut out);
            } else {
                self.buf.extend_from_slice(&bytes[start..end]);
                let line = std::mem::take(&mut self.buf);
                self.line(&line, &mut out);
                self.buf = line;
                self.buf.clear();
            }
            start = end + 1;
            if bytes[end] == b'\r' {
                match bytes.get(start) {
                    Some(b'\n') => start += 1,
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
        self.buf.extend_from_slice(&bytes[start..]);
        out
    }

    /// The stream's last event ID so far (set by `id:` fields, even of events without data).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection time the server asked for with `retry:`.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Called at end of input. Per the SSE spec an event not terminated by a blank line is
    /// incomplete and is discarded, so a connection cut mid-event reads as a cut stream, not
    /// as a malformed chunk.
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.buf.clear();
        self.event.clear();
        self.data.clear();
        self.has_data = false;
        None
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if let Some(ev) = self.dispatch() {
                out.push(ev);
            }
            return;
        }
        if line[0] == b':' {
            return;
        }
        // Valid UTF-8 (nearly always) is read where it lies; only a bad line is copied.
        let line = match std::str::from_utf8(line) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(line),
        };
        let (field, value) = match line.find(':') {
            Some(p) => {
                let v = &line[p + 1..];
                (&line[..p], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&line[..], ""),
        };
        match field {
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            "id" if !value.contains('\0') => self.last_event_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        if !self.has_data {
            self.event.clear();
            return None;
        }
        let event = std::mem::take(&mut self.event);
        self.has_data = false;
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

/// Reads SSE events from `reader`, calling `on_event` for each until it returns `false`, the
/// stream ends, or `abort` is set. Returns `Ok(true)` if the stream reached EOF, `Ok(false)` if
/// the callback stopped it.
pub fn read_events<R: Read>(
    mut reader: R,
    abort: &Abort,
    mut on_event: impl FnMut(SseEvent) -> Result<bool, ProviderError>,
) -> Result<bool, ProviderError> {
    let mut parser = SseParser::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if abort.is_aborted() {
            return Err("Request was aborted".into());
        }
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(super::http::read_error(&e)),
        };
        if n == 0 {
            if let Some(ev) = parser.finish() {
                if !on_event(ev)? {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        for ev in parser.push(&buf[..n]) {
            if abort.is_aborted() {
                return Err("Request was aborted".into());
            }
            if !on_event(ev)? {
                return Ok(false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "event: message_start\r\ndata: {\"a\":1}\r\n\r\n: keepalive\n\nevent: delta\ndata: line1\ndata: line2\n\ndata: ünïcode ✓\r\rdata:nospace\n\ndata: mixed\r\n\n";

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent {
                event: "message_start".into(),
                data: "{\"a\":1}".into(),
            },
            SseEvent {
                event: "delta".into(),
                data: "line1\nline2".into(),
            },
            SseEvent {
                event: String::new(),
                data: "ünïcode ✓".into(),
            },
            SseEvent {
                event: String::new(),
                data: "nospace".into(),
            },
            SseEvent {
                event: String::new(),
                data: "mixed".into(),
            },
        ]
    }

    #[test]
    fn whole_stream() {
        let mut p = SseParser::new();
        let got = p.push(STREAM.as_bytes());
        assert_eq!(got, expected());
        assert_eq!(p.finish(), None);
    }

    #[test]
    fn every_pair_of_split_points() {
        let bytes = STREAM.as_bytes();
        for a in 0..=bytes.len() {
            for b in a..=bytes.len() {
                let mut p = SseParser::new();
                let mut got = p.push(&bytes[..a]);
                got.extend(p.push(&bytes[a..b]));
                got.extend(p.push(&bytes[b..]));
                got.extend(p.finish());
                assert_eq!(got, expected(), "split at {a} and {b}");
            }
        }
    }

    #[test]
    fn a_lone_lf_chunk_after_cr_ends_only_that_line() {
        let mut p = SseParser::new();
        let mut got = p.push(b"data: a\r");
        got.extend(p.push(b"\n"));
        got.extend(p.push(b"\ndata: b\n\n"));
        let data: Vec<&str> = got.iter().map(|e| e.data.as_str()).collect();
        assert_eq!(data, ["a", "b"]);
    }

    #[test]
    fn byte_at_a_time() {
        let mut p = SseParser::new();
        let mut got = Vec::new();
        for b in STREAM.as_bytes() {
            got.extend(p.push(std::slice::from_ref(b)));
        }
        got.extend(p.finish());
        assert_eq!(got, expected());
    }

    #[test]
    fn unterminated_final_event_is_discarded() {
        let mut p = SseParser::new();
        assert!(p.push(b"data: {\"half").is_empty());
        assert_eq!(p.finish(), None);
    }

    #[test]
    fn invalid_utf8_is_replaced_whole_or_split() {
        let bytes = b"data: a\xffb\xe6\x97\n\ndata: ok\n\n";
        for split in 0..=bytes.len() {
            let mut p = SseParser::new();
            let mut got = p.push(&bytes[..split]);
            got.extend(p.push(&bytes[split..]));
            let data: Vec<&str> = got.iter().map(|e| e.data.as_str()).collect();
            assert_eq!(data, ["a\u{fffd}b\u{fffd}", "ok"], "split at {split}");
        }
    }

    #[test]
    fn garbage_never_panics() {
        let mut p = SseParser::new();
        let junk: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        for chunk in junk.chunks(7) {
            p.push(chunk);
        }
        p.finish();
    }

    #[test]
    fn ids_and_retry_are_kept_for_resuming() {
        let mut p = SseParser::new();
        assert_eq!(p.last_event_id(), None);
        p.push(b"id: 7\nretry: 1500\n\n");
        assert_eq!(p.last_event_id(), Some("7"));
        assert_eq!(p.retry_ms(), Some(1500));
        let events = p.push(b"id: 8\ndata: x\n\nretry: soon\nid: a\0b\n\n");
        assert_eq!(events.len(), 1);
        assert_eq!(p.last_event_id(), Some("8"), "an id holding NUL is ignored");
        assert_eq!(
            p.retry_ms(),
            Some(1500),
            "a retry that is not a number is ignored"
        );
    }
}
