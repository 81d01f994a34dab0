//! [`Markdown`]: assistant and thinking text rendered as pi renders it — styled headings,
//! emphasis, inline code, links (OSC 8 where supported, else `text (url)`), nested and task
//! lists, quotes with a `│` border, rules, tables (`markdown_table.rs`) and fenced code
//! with a ```` ```lang ```` frame and syntax colours ([`super::highlight`]).
//!
//! Streaming: the output is cached per top-level block. After text is appended (or set with
//! an unchanged prefix) only the blocks from the last one before the change onwards are
//! parsed and rendered again, so a long message costs little per token. Known limit:
//! reference-style link definitions only apply within the re-parsed tail.

use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;

use pulldown_cmark::{Event, Tag, TagEnd};

use super::markdown_parse::{parse, Block, Inlines, Kind, Node};

use super::highlight;
use super::markdown_table::render_table;
use super::text::{frame_line, frame_lines, Fill};
use crate::tui::text::{truncate_to_width, visible_width, wrap_text_with_ansi};
use crate::tui::theme::{Theme, Token};
use crate::tui::{next_revision, Component};

/// The base style of body text (pi's `DefaultTextStyle`); thinking blocks use italic with
/// the `thinkingText` colour. `bg` fills whole lines including padding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DefaultTextStyle {
    pub color: Option<Token>,
    pub bg: Option<Token>,
    pub bold: bool,
    pub italic: bool,
    pub strikethrough: bool,
    pub underline: bool,
}

impl DefaultTextStyle {
    /// pi's thinking-block style.
    pub fn thinking() -> Self {
        DefaultTextStyle {
            color: Some(Token::ThinkingText),
            italic: true,
            ..Default::default()
        }
    }
}

/// A Markdown document rendered to the width, with padding.
pub struct Markdown {
    text: String,
    padding_x: usize,
    padding_y: usize,
    theme: Arc<Theme>,
    style: Option<DefaultTextStyle>,
    hyperlinks: bool,
    cache: Cache,
    code_memo: RefCell<CodeMemo>,
    revision: u64,
}

#[derive(Default)]
struct Cache {
    width: Option<usize>,
    /// Bytes of `text` before this offset are unchanged since the cache was built.
    clean_until: usize,
    blocks: Vec<CachedBlock>,
    /// Framed content lines (no vertical padding).
    body: Vec<String>,
    /// The same lines before framing, to reuse framed lines that did not change.
    raw: Vec<String>,
}

struct CachedBlock {
    range: Range<usize>,
    kind: Kind,
    first_line: usize,
}

impl Markdown {
    /// pi uses `paddingX = 1, paddingY = 0` for assistant messages. Hyperlinks default to
    /// what the terminal supports ([`super::terminal_image::capabilities`]).
    pub fn new(
        text: impl Into<String>,
        padding_x: usize,
        padding_y: usize,
        theme: Arc<Theme>,
    ) -> Self {
        let mut md = Markdown {
            text: String::new(),
            padding_x,
            padding_y,
            theme,
            style: None,
            hyperlinks: super::terminal_image::capabilities().hyperlinks,
            cache: Cache::default(),
            code_memo: RefCell::default(),
            revision: next_revision(),
        };
        md.set_text(text);
        md
    }

    pub fn with_default_style(mut self, style: DefaultTextStyle) -> Self {
        self.style = Some(style);
        self.invalidate();
        self
    }

    /// Forces OSC 8 links on or off.
    pub fn with_hyperlinks(mut self, on: bool) -> Self {
        self.hyperlinks = on;
        self.invalidate();
        self
    }

    /// The text (tabs are stored as three spaces, as pi renders them).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Replaces the text; a shared prefix with the old text keeps its rendered blocks.
    pub fn set_text(&mut self, text: impl Into<String>) {
        let text = text.into().replace('\t', "   ");
        let common = self
            .text
            .bytes()
            .zip(text.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        self.cache.clean_until = self.cache.clean_until.min(common);
        self.text = text;
        self.revision = next_revision();
    }

    /// Appends streamed text.
    pub fn append(&mut self, delta: &str) {
        self.cache.clean_until = self.cache.clean_until.min(self.text.len());
        self.text.push_str(&delta.replace('\t', "   "));
        self.revision = next_revision();
    }

    fn fill(&self) -> Option<Fill> {
        let bg = self.style.as_ref()?.bg?;
        Some(Fill::token(&self.theme, bg))
    }

    fn rebuild(&mut self, width: usize) {
        let fill = self.fill();
        let cache = &mut self.cache;
        if cache.width != Some(width) {
            cache.blocks.clear();
            cache.body.clear();
            cache.raw.clear();
            cache.clean_until = 0;
        }
        // Blocks ending before the change are final, except the last of them: appended
        // text can still continue it (a list item, a setext underline, a table row).
        let untouched = cache
            .blocks
            .iter()
            .take_while(|b| b.range.end < cache.clean_until)
            .count();
        let keep = untouched.saturating_sub(1);
        let cut_line = cache
            .blocks
            .get(keep)
            .map_or(cache.body.len(), |b| b.first_line);
        cache.blocks.truncate(keep);
        let mut old_body = cache.body.split_off(cut_line);
        let old_raw = cache.raw.split_off(cut_line);
        let from = cache
            .blocks
            .last()
            .map_or(0, |b| next_line_start(&self.text, b.range.end));
        cache.width = Some(width);
        cache.clean_until = self.text.len();
        if self.text.trim().is_empty() {
            cache.blocks.clear();
            cache.body.clear();
            cache.raw.clear();
            return;
        }
        let content_width = width.saturating_sub(self.padding_x * 2).max(1);
        let nodes = parse(&self.text[from..], from);
        let renderer = Renderer {
            theme: &self.theme,
            hyperlinks: self.hyperlinks,
            source: &self.text,
            code_memo: &self.code_memo,
        };
        let base = renderer.base_style(self.style.as_ref());
        let mut prev = cache.blocks.last().map(|b| b.kind);
        for node in &nodes {
            let mut lines = Vec::new();
            if let Some(kind) = prev {
                if renderer.blank_between(kind, node) {
                    lines.push(String::new());
                }
            }
            lines.extend(renderer.node(node, content_width, &base));
            let first_line = cache.body.len();
            for line in lines {
                // Unchanged lines (most of a streaming code block) keep their framing.
                let k = cache.body.len() - cut_line;
                let framed = match old_raw.get(k) {
                    Some(old) if *old == line => std::mem::take(&mut old_body[k]),
                    _ => frame_line(&line, width, self.padding_x, fill.as_ref()),
                };
                cache.body.push(framed);
                cache.raw.push(line);
            }
            cache.blocks.push(CachedBlock {
                range: node.range.clone(),
                kind: node.kind(),
                first_line,
            });
            prev = Some(node.kind());
        }
    }
}

/// `at` if it starts a line, else the start of the next line (blocks end at line ends;
/// anything after a block's end on its last line is whitespace). A line ends at `\n`,
/// `\r\n` or a lone `\r`, as in CommonMark.
fn next_line_start(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let at = at.min(bytes.len());
    if at == 0 || matches!(bytes[at - 1], b'\n' | b'\r') {
        return at;
    }
    match bytes[at..].iter().position(|&b| b == b'\n' || b == b'\r') {
        Some(p) if bytes[at + p] == b'\r' && bytes.get(at + p + 1) == Some(&b'\n') => at + p + 2,
        Some(p) => at + p + 1,
        None => bytes.len(),
    }
}

impl Component for Markdown {
    fn render(&mut self, width: usize) -> Vec<String> {
        if self.cache.width != Some(width) || self.cache.clean_until < self.text.len() {
            self.rebuild(width);
        }
        if self.cache.body.is_empty() {
            return Vec::new();
        }
        let fill = self.fill();
        let pad = || frame_lines(vec![], width, 0, 1, fill.as_ref()).remove(0);
        let mut out = Vec::with_capacity(self.cache.body.len() + 2 * self.padding_y);
        out.extend((0..self.padding_y).map(|_| pad()));
        out.extend(self.cache.body.iter().cloned());
        out.extend((0..self.padding_y).map(|_| pad()));
        out
    }

    fn invalidate(&mut self) {
        self.cache = Cache::default();
        self.revision = next_revision();
    }

    fn revision(&self) -> Option<u64> {
        Some(self.revision)
    }
}

/// Rendered lines of the most recent code block, reused line by line while it streams.
#[derive(Default)]
struct CodeMemo {
    lang: String,
    width: usize,
    /// Per source line: the text, the highlighter state before and after it, its lines.
    lines: Vec<(
        String,
        highlight::LineState,
        highlight::LineState,
        Vec<String>,
    )>,
}

/// An SGR pair: what turns a style on and what turns it off.
#[derive(Clone)]
struct Style {
    open: String,
    close: &'static str,
}

impl Style {
    fn sgr(open: &str, close: &'static str) -> Style {
        Style {
            open: open.to_string(),
            close,
        }
    }
}

/// Closes every inline attribute a wrapped line may leave open (never the background).
const CLOSE_INLINE: &str = "\x1b[22;23;24;29;39m";

struct Renderer<'a> {
    theme: &'a Theme,
    hyperlinks: bool,
    source: &'a str,
    code_memo: &'a RefCell<CodeMemo>,
}

impl Renderer<'_> {
    fn fg(&self, token: Token) -> Style {
        Style {
            open: self.theme.fg_code(token).to_string(),
            close: self.theme.fg_reset(),
        }
    }

    fn base_style(&self, style: Option<&DefaultTextStyle>) -> Vec<Style> {
        let Some(s) = style else {
            return Vec::new();
        };
        let mut ctx: Vec<Style> = s.color.map(|t| self.fg(t)).into_iter().collect();
        for (on, open, close) in [
            (s.bold, "\x1b[1m", "\x1b[22m"),
            (s.italic, "\x1b[3m", "\x1b[23m"),
            (s.strikethrough, "\x1b[9m", "\x1b[29m"),
            (s.underline, "\x1b[4m", "\x1b[24m"),
        ] {
            if on {
                ctx.push(Style::sgr(open, close));
            }
        }
        ctx
    }

    /// pi separates blocks by one blank line, except a paragraph directly followed by a
    /// list and anything directly after a list (no blank line in the source).
    fn blank_between(&self, prev: Kind, next: &Node) -> bool {
        let before = &self.source[..next.range.start.min(self.source.len())];
        let gap_newlines = before
            .chars()
            .rev()
            .take_while(|c| matches!(c, ' ' | '\t' | '\n' | '\r' | '>'))
            .filter(|c| *c == '\n')
            .count();
        gap_newlines >= 2
            || !(prev == Kind::List || (prev == Kind::Paragraph && next.kind() == Kind::List))
    }

    fn node(&self, node: &Node, width: usize, ctx: &[Style]) -> Vec<String> {
        let lines = match &node.block {
            Block::Paragraph(events) => wrap(&self.inlines("", events, ctx), width),
            Block::Heading(level, events) => {
                let mut h = vec![self.fg(Token::MdHeading), Style::sgr("\x1b[1m", "\x1b[22m")];
                if *level == 1 {
                    h.push(Style::sgr("\x1b[4m", "\x1b[24m"));
                }
                let prefix = if *level >= 3 {
                    format!("{} ", "#".repeat(*level))
                } else {
                    String::new()
                };
                wrap(&self.inlines(&prefix, events, &h), width)
            }
            Block::Code { lang, text } => self.code(lang, text, width),
            Block::List { start, items } => self.list(*start, items, width, ctx),
            Block::Quote(children) => self.quote(children, width),
            Block::Rule => vec![self.theme.fg(Token::MdHr, &"─".repeat(width.min(80)))],
            Block::Table { header, rows } => {
                let cell = |events: &Inlines| self.inlines("", events, ctx);
                let header: Vec<String> = header.iter().map(cell).collect();
                let rows: Vec<Vec<String>> =
                    rows.iter().map(|r| r.iter().map(cell).collect()).collect();
                let raw = self.source.get(node.range.clone()).unwrap_or("");
                render_table(&header, &rows, width, raw)
            }
            Block::Html(html) => {
                let events = vec![Event::Text(html.trim().to_string().into())];
                wrap(&self.inlines("", &events, ctx), width)
            }
        };
        // Lines wider than `width` (a bullet wider than the line) are cut when framed.
        lines
    }

    /// Sibling blocks with pi's blank-line spacing.
    fn children(&self, nodes: &[Node], width: usize, ctx: &[Style]) -> Vec<String> {
        let mut out = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            if i > 0 && self.blank_between(nodes[i - 1].kind(), node) {
                out.push(String::new());
            }
            out.extend(self.node(node, width, ctx));
        }
        out
    }

    fn code(&self, lang: &str, text: &str, width: usize) -> Vec<String> {
        let border = |s: &str| {
            let line = self.theme.fg(Token::MdCodeBlockBorder, s);
            truncate_to_width(&line, width, "", false)
        };
        let body = text.strip_suffix('\n').unwrap_or(text);
        let mut out = vec![border(&format!("```{lang}"))];
        let mut highlighter = highlight::Highlighter::new(lang);
        let mut memo = self.code_memo.borrow_mut();
        if memo.lang != lang || memo.width != width {
            *memo = CodeMemo {
                lang: lang.to_string(),
                width,
                lines: Vec::new(),
            };
        }
        for (i, line) in body.split('\n').enumerate() {
            let before = highlighter.as_ref().and_then(|h| h.state());
            if let Some((src, b, after, lines)) = memo.lines.get(i) {
                if src == line && *b == before {
                    out.extend(lines.iter().cloned());
                    if let Some(h) = &mut highlighter {
                        h.set_state(*after);
                    }
                    continue;
                }
            }
            let coloured = match &mut highlighter {
                Some(h) => h.line(line, self.theme),
                None => self.theme.fg(Token::MdCodeBlock, line),
            };
            let lines = wrap(&format!("  {coloured}"), width);
            let after = highlighter.as_ref().and_then(|h| h.state());
            out.extend(lines.iter().cloned());
            memo.lines.truncate(i);
            memo.lines.push((line.to_string(), before, after, lines));
        }
        out.push(border("```"));
        out
    }

    fn list(
        &self,
        start: Option<u64>,
        items: &[Vec<Node>],
        width: usize,
        ctx: &[Style],
    ) -> Vec<String> {
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let bullet = match start {
                Some(n) => format!("{}. ", n + i as u64),
                None => "- ".to_string(),
            };
            let indent = " ".repeat(visible_width(&bullet));
            let inner = width.saturating_sub(indent.len()).max(1);
            let styled_bullet = self.theme.fg(Token::MdListBullet, &bullet);
            let lines: Vec<String> = item.iter().flat_map(|n| self.node(n, inner, ctx)).collect();
            if lines.is_empty() {
                out.push(styled_bullet);
                continue;
            }
            for (j, line) in lines.into_iter().enumerate() {
                let lead = if j == 0 { &styled_bullet } else { &indent };
                out.push(format!("{lead}{line}"));
            }
        }
        out
    }

    fn quote(&self, children: &[Node], width: usize) -> Vec<String> {
        let ctx = [self.fg(Token::MdQuote), Style::sgr("\x1b[3m", "\x1b[23m")];
        let mut lines = self.children(children, width.saturating_sub(2).max(1), &ctx);
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        let border = self.theme.fg(Token::MdQuoteBorder, "│ ");
        lines.into_iter().map(|l| format!("{border}{l}")).collect()
    }

    /// Inline events as one styled string (`\n` at line breaks); every style is closed at
    /// the end and re-opened after nested styles close.
    fn inlines(&self, prefix: &str, events: &[Event<'static>], ctx: &[Style]) -> String {
        let mut out = String::new();
        let mut stack: Vec<Style> = ctx.to_vec();
        let reopen = |out: &mut String, stack: &[Style]| {
            for s in stack {
                out.push_str(&s.open);
            }
        };
        reopen(&mut out, &stack);
        out.push_str(prefix);
        // (position in `out`, url, plain text) of open links.
        let mut links: Vec<(usize, String, String)> = Vec::new();
        for event in events {
            match event {
                Event::Text(t) | Event::Code(t) => {
                    if let Some(link) = links.last_mut() {
                        link.2.push_str(t);
                    }
                    if let Event::Code(_) = event {
                        let code = self.fg(Token::MdCode);
                        out.push_str(&code.open);
                        out.push_str(t);
                        out.push_str(code.close);
                        reopen(&mut out, &stack);
                    } else {
                        out.push_str(t);
                    }
                }
                Event::SoftBreak | Event::HardBreak => out.push('\n'),
                Event::Html(t)
                | Event::InlineHtml(t)
                | Event::InlineMath(t)
                | Event::DisplayMath(t) => out.push_str(t),
                Event::TaskListMarker(done) => out.push_str(if *done { "[x] " } else { "[ ] " }),
                Event::Start(tag) => {
                    let styles = match tag {
                        Tag::Emphasis => vec![Style::sgr("\x1b[3m", "\x1b[23m")],
                        Tag::Strong => vec![Style::sgr("\x1b[1m", "\x1b[22m")],
                        Tag::Strikethrough => vec![Style::sgr("\x1b[9m", "\x1b[29m")],
                        Tag::Link { dest_url, .. } => {
                            links.push((out.len(), dest_url.to_string(), String::new()));
                            vec![self.fg(Token::MdLink), Style::sgr("\x1b[4m", "\x1b[24m")]
                        }
                        _ => Vec::new(),
                    };
                    for s in styles {
                        out.push_str(&s.open);
                        stack.push(s);
                    }
                }
                Event::End(end) => {
                    let pops = match end {
                        TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => 1,
                        TagEnd::Link => 2,
                        _ => 0,
                    };
                    for _ in 0..pops {
                        if let Some(s) = stack.pop() {
                            out.push_str(s.close);
                        }
                    }
                    if *end == TagEnd::Link {
                        if let Some((at, url, plain)) = links.pop() {
                            self.finish_link(&mut out, at, &url, &plain);
                        }
                    }
                    if pops > 0 {
                        reopen(&mut out, &stack);
                    }
                }
                _ => {}
            }
        }
        for s in stack.iter().rev() {
            out.push_str(s.close);
        }
        out
    }

    fn finish_link(&self, out: &mut String, at: usize, url: &str, plain: &str) {
        if self.hyperlinks {
            out.insert_str(at, &format!("\x1b]8;;{url}\x1b\\"));
            out.push_str("\x1b]8;;\x1b\\");
        } else if plain != url && Some(plain) != url.strip_prefix("mailto:") {
            out.push_str(&self.theme.fg(Token::MdLinkUrl, &format!(" ({url})")));
        }
    }
}

/// Word-wraps styled text, closing inline styles at the end of every line so borders and
/// padding that follow stay plain.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = wrap_text_with_ansi(text, width);
    for l in &mut lines {
        if l.contains('\x1b') {
            l.push_str(CLOSE_INLINE);
        }
    }
    lines
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
