//! Column-aware string utilities: everything the renderer and components need to measure,
//! cut and wrap styled text by terminal columns rather than bytes or chars.
//!
//! Text here may carry ANSI escape sequences (SGR colours, OSC 8 links, the APC cursor
//! marker); they take no columns and are kept intact. Widths follow the terminal's view:
//! wide (CJK) characters and emoji count 2, combining marks and zero-width joiners count 0,
//! a tab counts 3 (pi renders tabs as three spaces).

use unicode_width::UnicodeWidthChar;

/// Columns a tab occupies.
pub const TAB_WIDTH: usize = 3;

const ESC: u8 = 0x1b;

/// Byte length of the escape sequence starting at `s[i..]`, or `None` when `s[i]` is not
/// ESC or the sequence is unterminated. CSI ends at a final byte (0x40–0x7E); OSC, APC
/// and DCS end at BEL or ST (`ESC \`); any other `ESC x` pair is two bytes.
pub fn escape_len(s: &str, i: usize) -> Option<usize> {
    let b = s.as_bytes();
    if b.get(i) != Some(&ESC) {
        return None;
    }
    match *b.get(i + 1)? {
        b'[' => {
            let end = b[i + 2..].iter().position(|c| (0x40..=0x7e).contains(c))?;
            Some(end + 3)
        }
        b']' | b'_' | b'P' | b'^' => {
            let mut j = i + 2;
            while j < b.len() {
                if b[j] == 0x07 {
                    return Some(j + 1 - i);
                }
                if b[j] == ESC && b.get(j + 1) == Some(&b'\\') {
                    return Some(j + 2 - i);
                }
                j += 1;
            }
            None
        }
        c if c.is_ascii() => Some(2),
        // ESC followed by a multi-byte char: treat ESC alone as the sequence.
        _ => Some(1),
    }
}

/// A piece of styled text: an escape sequence or one grapheme-like cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    Escape(&'a str),
    Cluster(&'a str, usize),
}

/// Splits styled text into escape sequences and display clusters with their widths.
pub fn pieces(s: &str) -> Pieces<'_> {
    Pieces { s, i: 0 }
}

pub struct Pieces<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        let s = self.s;
        let start = self.i;
        if start >= s.len() {
            return None;
        }
        if s.as_bytes()[start] == ESC {
            let len = escape_len(s, start).unwrap_or(s.len() - start);
            self.i = start + len;
            return Some(Piece::Escape(&s[start..self.i]));
        }
        let end = cluster_end(s, start);
        self.i = end;
        let cluster = &s[start..end];
        Some(Piece::Cluster(cluster, cluster_width(cluster)))
    }
}

fn is_regional_indicator(c: char) -> bool {
    ('\u{1F1E6}'..='\u{1F1FF}').contains(&c)
}

fn is_extender(c: char) -> bool {
    matches!(c,
        '\u{200D}'                      // zero-width joiner (handled by caller too)
        | '\u{FE00}'..='\u{FE0F}'       // variation selectors
        | '\u{1F3FB}'..='\u{1F3FF}'     // emoji skin-tone modifiers
        | '\u{E0020}'..='\u{E007F}'     // emoji tag sequences
        | '\u{20E3}'                    // combining enclosing keycap
    ) || (c.width() == Some(0) && !c.is_control())
}

/// End (byte index) of the cluster starting at `start`: a base character, its combining
/// marks and emoji modifiers, ZWJ-joined followers, or a regional-indicator pair.
fn cluster_end(s: &str, start: usize) -> usize {
    let mut chars = s[start..]
        .char_indices()
        .map(|(o, c)| (start + o, c))
        .peekable();
    let Some((_, first)) = chars.next() else {
        return start;
    };
    let mut end = start + first.len_utf8();
    if first == '\t' || first.is_control() {
        return end;
    }
    if is_regional_indicator(first) {
        if let Some(&(o, c)) = chars.peek() {
            if is_regional_indicator(c) {
                return o + c.len_utf8();
            }
        }
        return end;
    }
    let mut joined = false;
    while let Some(&(o, c)) = chars.peek() {
        if joined {
            // The character after a ZWJ belongs to the cluster whatever it is.
            joined = false;
        } else if c == '\u{200D}' {
            joined = true;
        } else if !is_extender(c) || c == '\u{1b}' {
            break;
        }
        end = o + c.len_utf8();
        chars.next();
    }
    end
}

fn looks_like_emoji(c: char) -> bool {
    let cp = c as u32;
    (0x1F300..=0x1FAFF).contains(&cp)
        || (0x2600..=0x27BF).contains(&cp)
        || (0x2300..=0x23FF).contains(&cp)
        || (0x2B00..=0x2BFF).contains(&cp)
        || cp == 0x00A9
        || cp == 0x00AE
        || (0x2190..=0x21FF).contains(&cp)
}

/// Display width of one cluster as produced by [`pieces`].
pub fn cluster_width(cluster: &str) -> usize {
    let mut chars = cluster.chars();
    let Some(first) = chars.next() else {
        return 0;
    };
    if first == '\t' {
        return TAB_WIDTH;
    }
    if is_regional_indicator(first) {
        return 2;
    }
    let base = first.width().unwrap_or(0);
    if cluster.len() == first.len_utf8() {
        return base;
    }
    // An emoji with a presentation selector, a skin tone or a ZWJ sequence renders as
    // one double-width glyph; keycaps ("1\u{FE0F}\u{20E3}") too.
    let emoji_sequence = cluster.chars().skip(1).any(|c| {
        matches!(
            c,
            '\u{FE0F}' | '\u{200D}' | '\u{20E3}' | '\u{1F3FB}'..='\u{1F3FF}'
        )
    });
    if emoji_sequence && (looks_like_emoji(first) || base == 2 || cluster.contains('\u{20E3}')) {
        return 2;
    }
    // Halfwidth/fullwidth forms that segment with a base add their own width.
    base + cluster
        .chars()
        .skip(1)
        .filter(|c| ('\u{FF00}'..='\u{FFEF}').contains(c))
        .map(|c| c.width().unwrap_or(0))
        .sum::<usize>()
}

/// Terminal columns `s` occupies; escape sequences are free.
pub fn visible_width(s: &str) -> usize {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return s.len();
    }
    pieces(s)
        .map(|p| match p {
            Piece::Cluster(_, w) => w,
            Piece::Escape(_) => 0,
        })
        .sum()
}

/// Strips every escape sequence, leaving only the visible text.
pub fn strip_ansi(s: &str) -> String {
    if !s.contains('\x1b') {
        return s.to_string();
    }
    pieces(s)
        .filter_map(|p| match p {
            Piece::Cluster(c, _) => Some(c),
            Piece::Escape(_) => None,
        })
        .collect()
}

/// SGR reset.
pub const RESET: &str = "\x1b[0m";

/// Cuts `text` to at most `max_width` columns. When it does not fit, the kept prefix is
/// followed by a reset and `ellipsis` (whose width is reserved). With `pad`, the result is
/// filled with spaces to exactly `max_width` columns.
pub fn truncate_to_width(text: &str, max_width: usize, ellipsis: &str, pad: bool) -> String {
    if max_width == 0 {
        return String::new();
    }
    let width = visible_width(text);
    if width <= max_width {
        return if pad {
            pad_to(text.to_string(), width, max_width)
        } else {
            text.to_string()
        };
    }
    let ellipsis_width = visible_width(ellipsis);
    let (ellipsis, ellipsis_width) = if ellipsis_width >= max_width {
        let (e, w) = take_columns(ellipsis, max_width);
        (e, w)
    } else {
        (ellipsis.to_string(), ellipsis_width)
    };
    let (prefix, prefix_width) = take_columns(text, max_width - ellipsis_width);
    let mut out = prefix;
    out.push_str(RESET);
    if !ellipsis.is_empty() {
        out.push_str(&ellipsis);
        out.push_str(RESET);
    }
    let used = prefix_width + ellipsis_width;
    if pad {
        pad_to(out, used, max_width)
    } else {
        out
    }
}

fn pad_to(mut s: String, width: usize, target: usize) -> String {
    s.extend(std::iter::repeat_n(' ', target.saturating_sub(width)));
    s
}

/// Longest prefix of `text` fitting in `max` columns (escapes before the cut are kept),
/// with its width.
fn take_columns(text: &str, max: usize) -> (String, usize) {
    let mut out = String::new();
    let mut width = 0;
    for p in pieces(text) {
        match p {
            Piece::Escape(e) => out.push_str(e),
            Piece::Cluster(c, w) => {
                if width + w > max {
                    break;
                }
                out.push_str(c);
                width += w;
            }
        }
    }
    (out, width)
}

/// The columns `[start, start + len)` of `line`, keeping the escape sequences that style
/// them (including those before `start`). A wide character straddling the start is left
/// out; one straddling the end is kept unless `strict`.
pub fn slice_by_column(line: &str, start: usize, len: usize, strict: bool) -> String {
    slice_with_width(line, start, len, strict).0
}

/// Like [`slice_by_column`], also returning the width of the slice.
pub fn slice_with_width(line: &str, start: usize, len: usize, strict: bool) -> (String, usize) {
    if len == 0 {
        return (String::new(), 0);
    }
    let end = start + len;
    let mut out = String::new();
    let mut pending = String::new();
    let mut col = 0;
    let mut width = 0;
    for p in pieces(line) {
        match p {
            Piece::Escape(e) => {
                // Until the first kept cluster, escapes queue up in order so styles set
                // before the slice and changed at its start apply in the right sequence.
                if col < start || (col < end && width == 0) {
                    pending.push_str(e);
                } else if col < end {
                    out.push_str(e);
                }
            }
            Piece::Cluster(c, w) => {
                if col >= end {
                    break;
                }
                if col >= start {
                    if strict && col + w > end {
                        break;
                    }
                    if !pending.is_empty() {
                        out.push_str(&pending);
                        pending.clear();
                    }
                    out.push_str(c);
                    width += w;
                }
                col += w;
            }
        }
    }
    (out, width)
}

/// SGR and hyperlink state, so wrapped lines can re-open the styles that were active.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnsiState {
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    blink: bool,
    inverse: bool,
    hidden: bool,
    strike: bool,
    fg: Option<String>,
    bg: Option<String>,
    link: Option<String>,
}

impl AnsiState {
    /// Updates the state with one escape sequence (non-SGR, non-OSC-8 ones are ignored).
    pub fn apply(&mut self, seq: &str) {
        if let Some(rest) = seq.strip_prefix("\x1b]8;") {
            let body = rest.trim_end_matches('\x07').trim_end_matches("\x1b\\");
            let url = body.split_once(';').map(|(_, u)| u).unwrap_or("");
            self.link = (!url.is_empty()).then(|| seq.to_string());
            return;
        }
        let Some(params) = seq.strip_prefix("\x1b[").and_then(|p| p.strip_suffix('m')) else {
            return;
        };
        if params.is_empty() {
            self.reset_sgr();
            return;
        }
        let parts: Vec<&str> = params.split([';', ':']).collect();
        let mut i = 0;
        while i < parts.len() {
            let code: u32 = parts[i].parse().unwrap_or(0);
            if code == 38 || code == 48 {
                let n = match parts.get(i + 1) {
                    Some(&"5") => 3,
                    Some(&"2") => 5,
                    _ => 1,
                };
                if n > 1 && i + n <= parts.len() {
                    let colour = parts[i..i + n].join(";");
                    if code == 38 {
                        self.fg = Some(colour);
                    } else {
                        self.bg = Some(colour);
                    }
                }
                i += n;
                continue;
            }
            match code {
                0 => self.reset_sgr(),
                1 => self.bold = true,
                2 => self.dim = true,
                3 => self.italic = true,
                4 => self.underline = true,
                5 => self.blink = true,
                7 => self.inverse = true,
                8 => self.hidden = true,
                9 => self.strike = true,
                21 | 22 => {
                    self.bold = false;
                    self.dim = code == 21 && self.dim;
                }
                23 => self.italic = false,
                24 => self.underline = false,
                25 => self.blink = false,
                27 => self.inverse = false,
                28 => self.hidden = false,
                29 => self.strike = false,
                30..=37 | 90..=97 => self.fg = Some(code.to_string()),
                39 => self.fg = None,
                40..=47 | 100..=107 => self.bg = Some(code.to_string()),
                49 => self.bg = None,
                _ => {}
            }
            i += 1;
        }
    }

    fn reset_sgr(&mut self) {
        let link = self.link.take();
        *self = AnsiState {
            link,
            ..AnsiState::default()
        };
    }

    /// The escape sequences that re-establish this state on a fresh line.
    pub fn active_codes(&self) -> String {
        let mut codes: Vec<&str> = Vec::new();
        for (on, code) in [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.blink, "5"),
            (self.inverse, "7"),
            (self.hidden, "8"),
            (self.strike, "9"),
        ] {
            if on {
                codes.push(code);
            }
        }
        if let Some(fg) = &self.fg {
            codes.push(fg);
        }
        if let Some(bg) = &self.bg {
            codes.push(bg);
        }
        let mut out = String::new();
        if !codes.is_empty() {
            out = format!("\x1b[{}m", codes.join(";"));
        }
        if let Some(link) = &self.link {
            out.push_str(link);
        }
        out
    }

    /// What to append at a wrap point so decorations that would run into the padding
    /// (underline) and open links stop at the line end; colours are left for the renderer's
    /// per-line reset so backgrounds still fill.
    pub fn line_end_reset(&self) -> String {
        let mut out = String::new();
        if self.underline {
            out.push_str("\x1b[24m");
        }
        if self.link.is_some() {
            out.push_str("\x1b]8;;\x07");
        }
        out
    }
}

/// Word-wraps styled text to `width` columns. Newlines start new lines; styles active at
/// a break are re-opened on the next line; words longer than a line are broken by column;
/// trailing whitespace is trimmed. Always returns at least one (possibly empty) line.
pub fn wrap_text_with_ansi(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut state = AnsiState::default();
    for line in text.split('\n') {
        let prefix = state.active_codes();
        wrap_line(line, &prefix, width, &mut state, &mut out);
    }
    if out.is_empty() {
        out.push(String::new());
    }
    out
}

fn wrap_line(line: &str, prefix: &str, width: usize, state: &mut AnsiState, out: &mut Vec<String>) {
    if visible_width(line) <= width {
        for p in pieces(line) {
            if let Piece::Escape(e) = p {
                state.apply(e);
            }
        }
        out.push(format!("{prefix}{line}"));
        return;
    }
    let mut current = prefix.to_string();
    let mut current_width = 0;
    for token in tokens(line) {
        let token_width = visible_width(token);
        let blank = strip_ansi(token).trim().is_empty();
        if token_width > width && !blank {
            // A word longer than a line starts a line of its own (as pi's), then breaks by
            // column.
            if current_width > 0 {
                finish_line(&mut current, state, out);
                current_width = 0;
            }
            for p in pieces(token) {
                match p {
                    Piece::Escape(e) => {
                        current.push_str(e);
                        state.apply(e);
                    }
                    Piece::Cluster(c, w) => {
                        if current_width + w > width && current_width > 0 {
                            finish_line(&mut current, state, out);
                            current_width = 0;
                        }
                        current.push_str(c);
                        current_width += w;
                    }
                }
            }
            continue;
        }
        if current_width + token_width > width && current_width > 0 {
            finish_line(&mut current, state, out);
            current_width = 0;
            if blank {
                // Never start a wrapped line with the whitespace that caused the wrap,
                // but keep any styling the token carried.
                for p in pieces(token) {
                    if let Piece::Escape(e) = p {
                        current.push_str(e);
                        state.apply(e);
                    }
                }
                continue;
            }
        }
        for p in pieces(token) {
            if let Piece::Escape(e) = p {
                state.apply(e);
            }
        }
        current.push_str(token);
        current_width += token_width;
    }
    out.push(trim_end_visible(&current));
}

fn finish_line(current: &mut String, state: &AnsiState, out: &mut Vec<String>) {
    let mut line = trim_end_visible(current);
    line.push_str(&state.line_end_reset());
    out.push(line);
    *current = state.active_codes();
}

/// Trims trailing whitespace, also when escape sequences follow it (they are kept).
fn trim_end_visible(s: &str) -> String {
    if !s.contains('\x1b') {
        return s.trim_end_matches([' ', '\t']).to_string();
    }
    let parts: Vec<Piece> = pieces(s).collect();
    let last_visible = parts
        .iter()
        .rposition(|p| matches!(p, Piece::Cluster(c, _) if *c != " " && *c != "\t"));
    let keep = last_visible.map_or(0, |i| i + 1);
    let mut out: String = parts[..keep].iter().map(piece_str).collect();
    for p in &parts[keep..] {
        if let Piece::Escape(e) = p {
            out.push_str(e);
        }
    }
    out
}

fn piece_str<'a>(p: &Piece<'a>) -> &'a str {
    match p {
        Piece::Escape(e) => e,
        Piece::Cluster(c, _) => c,
    }
}

/// Splits a line into alternating runs of whitespace and non-whitespace; escape sequences
/// stick to the run that follows them.
fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut kind: Option<bool> = None; // Some(true) = whitespace run
    for (offset, piece) in piece_offsets(line) {
        if let Piece::Cluster(c, _) = piece {
            let space = c == " " || c == "\t";
            match kind {
                Some(k) if k != space => {
                    // Escapes directly before this cluster belong to the new token.
                    let cut = escape_run_start(line, start, offset);
                    out.push(&line[start..cut]);
                    start = cut;
                }
                _ => {}
            }
            kind = Some(space);
        }
    }
    if start < line.len() {
        out.push(&line[start..]);
    }
    out
}

fn piece_offsets(line: &str) -> impl Iterator<Item = (usize, Piece<'_>)> {
    let mut offset = 0;
    pieces(line).map(move |p| {
        let at = offset;
        offset += match p {
            Piece::Escape(e) => e.len(),
            Piece::Cluster(c, _) => c.len(),
        };
        (at, p)
    })
}

/// Start of the run of escape sequences that ends exactly at `end` (or `end` itself).
fn escape_run_start(line: &str, from: usize, end: usize) -> usize {
    let mut cut = end;
    let mut i = from;
    let mut run_start = None;
    while i < end {
        if line.as_bytes()[i] == ESC {
            let len = escape_len(line, i).unwrap_or(end - i);
            run_start.get_or_insert(i);
            i += len;
        } else {
            run_start = None;
            i += line[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    if let Some(s) = run_start {
        cut = s;
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_the_terminal() {
        let table: &[(&str, usize)] = &[
            ("hello", 5),
            ("", 0),
            ("日本語", 6),
            ("한국어", 6),
            ("e\u{301}", 1), // e + combining acute
            ("👍", 2),
            ("👍🏽", 2),                     // skin tone
            ("👨\u{200D}👩\u{200D}👧", 2), // ZWJ family
            ("❤\u{FE0F}", 2),              // presentation selector
            ("🇩🇪", 2),                     // flag
            ("1\u{FE0F}\u{20E3}", 2),      // keycap
            ("a\tb", 2 + TAB_WIDTH),
            ("\x1b[31mred\x1b[0m", 3),
            ("\x1b]8;;https://x.y\x07link\x1b]8;;\x07", 4),
            ("ab\x1b_pi:c\x07cd", 4),
            ("ｈｉ", 4), // fullwidth latin
            ("\u{200B}", 0),
            // CJK and other East Asian wide text.
            ("中文字符", 8),
            ("가나다", 6),
            ("ア", 2),
            ("ｶﾀｶﾅ", 4),     // halfwidth katakana
            ("\u{3000}", 2), // ideographic space
            ("ｈｅｌｌｏ", 10),
            ("한글\u{301}", 4),
            // Combining marks stay in their base's cell.
            ("a\u{308}", 1),
            ("n\u{303}\u{301}", 1),
            ("e\u{301}\u{302}\u{303}", 1),
            ("\u{5D0}\u{5B8}", 1), // Hebrew letter with a point
            ("ä", 1),
            // Emoji: single, modified, joined, flags, keycaps, text vs emoji presentation.
            ("😀😀", 4),
            ("🫠", 2),
            ("👋🏿", 2),
            ("🧑\u{200D}💻", 2),
            ("🏳\u{FE0F}\u{200D}🌈", 2),
            ("🇯🇵🇺🇸", 4),
            ("#\u{FE0F}\u{20E3}", 2),
            ("✈", 1),
            ("✈\u{FE0F}", 2),
            ("⌚", 2),
            ("©", 1),
            ("🙂 ok", 5),
            // Symbols the UI draws with are narrow.
            ("…", 1),
            ("→", 1),
            ("│", 1),
            ("⠋", 1),
            // Escapes cost nothing, whatever their terminator, around wide text too.
            ("\x1b[38;2;1;2;3m日本\x1b[39m", 4),
            ("\x1b]8;;http://a\x1b\\日本\x1b]8;;\x1b\\", 4),
            ("\x1b[1m\x1b[22m", 0),
            ("日\x1b_pi:c\x07本", 4),
            ("x\u{200B}y", 2),
            ("\u{FEFF}", 0),
        ];
        for (s, w) in table {
            assert_eq!(visible_width(s), *w, "{s:?}");
        }
    }

    #[test]
    fn escape_lengths() {
        assert_eq!(escape_len("\x1b[1;31mx", 0), Some(7));
        assert_eq!(escape_len("\x1b]8;;u\x1b\\x", 0), Some(8));
        assert_eq!(escape_len("\x1b_pi:c\x07", 0), Some(7));
        assert_eq!(escape_len("\x1b[12", 0), None);
        assert_eq!(escape_len("x", 0), None);
        // Unterminated escapes are swallowed to the end rather than counted as text.
        assert_eq!(visible_width("ab\x1b[12"), 2);
    }

    #[test]
    fn truncate_keeps_styles_and_reserves_the_ellipsis() {
        assert_eq!(truncate_to_width("hello", 10, "...", false), "hello");
        assert_eq!(truncate_to_width("hello", 8, "...", true), "hello   ");
        assert_eq!(
            truncate_to_width("hello world", 8, "...", false),
            "hello\x1b[0m...\x1b[0m"
        );
        let styled = truncate_to_width("\x1b[31mhello world\x1b[0m", 6, "…", false);
        assert_eq!(styled, "\x1b[31mhello\x1b[0m…\x1b[0m");
        assert_eq!(visible_width(&styled), 6);
        // A wide character that would cross the limit is dropped, then padded.
        let cjk = truncate_to_width("日本語テキスト", 6, "…", true);
        assert_eq!(visible_width(&cjk), 6);
        assert!(cjk.starts_with("日本"));
        assert_eq!(truncate_to_width("abc", 0, "...", false), "");
        assert_eq!(
            visible_width(&truncate_to_width("abcdef", 2, "...", false)),
            2
        );
    }

    #[test]
    fn slice_keeps_style_changes_at_its_start_in_order() {
        let line = "\x1b[31mab\x1b[0mcd";
        assert_eq!(slice_by_column(line, 2, 2, false), "\x1b[31m\x1b[0mcd");
    }

    #[test]
    fn slice_by_column_handles_wide_and_styled_text() {
        assert_eq!(slice_by_column("hello world", 6, 5, false), "world");
        assert_eq!(
            slice_by_column("\x1b[1mbold\x1b[0m text", 2, 4, false),
            "\x1b[1mld\x1b[0m t"
        );
        // "日本語": columns 0-1, 2-3, 4-5. Starting mid-character skips it.
        assert_eq!(slice_by_column("日本語", 1, 4, false), "本語");
        assert_eq!(slice_by_column("日本語", 1, 4, true), "本");
        assert_eq!(slice_by_column("日本語", 0, 3, true), "日");
        assert_eq!(slice_by_column("日本語", 0, 3, false), "日本");
        assert_eq!(slice_with_width("abc", 1, 10, false), ("bc".to_string(), 2));
    }

    #[test]
    fn wrap_breaks_words_and_keeps_styles() {
        assert_eq!(wrap_text_with_ansi("", 10), vec![""]);
        assert_eq!(
            wrap_text_with_ansi("hello world foo", 11),
            vec!["hello world", "foo"]
        );
        assert_eq!(wrap_text_with_ansi("a\nb", 10), vec!["a", "b"]);
        assert_eq!(
            wrap_text_with_ansi("abcdefghij", 4),
            vec!["abcd", "efgh", "ij"]
        );
        // A word longer than the line starts on its own line, as pi wraps it.
        assert_eq!(
            wrap_text_with_ansi("File: /a/very/long/path/name", 10),
            vec!["File:", "/a/very/lo", "ng/path/na", "me"]
        );
        let wrapped = wrap_text_with_ansi("\x1b[31mred words here\x1b[0m", 9);
        assert_eq!(wrapped.len(), 2);
        assert_eq!(strip_ansi(&wrapped[0]), "red words");
        assert!(wrapped[1].starts_with("\x1b[31m"), "{:?}", wrapped[1]);
        assert_eq!(strip_ansi(&wrapped[1]), "here");
        // Styles carry across literal newlines too.
        let lines = wrap_text_with_ansi("\x1b[1mone\ntwo\x1b[0m", 10);
        assert_eq!(lines[1], "\x1b[1mtwo\x1b[0m");
        for w in 1..20 {
            for line in wrap_text_with_ansi(
                "日本語 mixed with ascii and 👍 emoji \x1b[4munder\x1b[24m",
                w,
            ) {
                assert!(visible_width(&line) <= w.max(2), "{line:?} at {w}");
            }
        }
    }

    #[test]
    fn wrap_closes_underline_and_links_at_the_break() {
        let lines = wrap_text_with_ansi("\x1b[4mone two\x1b[24m", 4);
        assert_eq!(lines[0], "\x1b[4mone\x1b[24m");
        assert_eq!(lines[1], "\x1b[4mtwo\x1b[24m");
        let link = wrap_text_with_ansi("\x1b]8;;http://a\x07aa bb\x1b]8;;\x07", 3);
        assert_eq!(link[0], "\x1b]8;;http://a\x07aa\x1b]8;;\x07");
        assert!(link[1].starts_with("\x1b]8;;http://a\x07bb"));
    }

    #[test]
    fn never_panics_on_odd_input() {
        let samples = [
            "\x1b", "\x1b[", "\x1b]8;;", "a\x1b", "\u{200D}", "\u{301}x", "🇩", "\t\t", " ", "  a  ",
        ];
        for s in samples {
            for w in 0..5 {
                let _ = visible_width(s);
                let _ = truncate_to_width(s, w, "…", true);
                let _ = slice_by_column(s, w, 3, w % 2 == 0);
                let _ = wrap_text_with_ansi(s, w);
            }
        }
    }
}
