//! Markdown source → a small block tree for the Markdown renderer: pulldown-cmark events
//! grouped into paragraphs, headings, code, lists, quotes, rules, tables and HTML, each
//! with its byte range in the whole text (so the renderer can cache per top-level block).

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// What the blank-line rule between blocks needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Paragraph,
    List,
    Other,
}

/// One block with its byte range in the whole text.
pub(super) struct Node {
    pub(super) range: Range<usize>,
    pub(super) block: Block,
}

pub(super) type Inlines = Vec<Event<'static>>;

pub(super) enum Block {
    Paragraph(Inlines),
    Heading(usize, Inlines),
    Code {
        lang: String,
        text: String,
    },
    List {
        start: Option<u64>,
        items: Vec<Vec<Node>>,
    },
    Quote(Vec<Node>),
    Rule,
    Table {
        header: Vec<Inlines>,
        rows: Vec<Vec<Inlines>>,
    },
    Html(String),
}

impl Node {
    pub(super) fn kind(&self) -> Kind {
        match self.block {
            Block::Paragraph(_) => Kind::Paragraph,
            Block::List { .. } => Kind::List,
            Block::Heading(..)
            | Block::Code { .. }
            | Block::Quote(_)
            | Block::Rule
            | Block::Table { .. }
            | Block::Html(_) => Kind::Other,
        }
    }
}

struct Cursor {
    events: Vec<(Event<'static>, Range<usize>)>,
    pos: usize,
}

impl Cursor {
    fn next(&mut self) -> Option<(Event<'static>, Range<usize>)> {
        let e = self.events.get(self.pos).cloned();
        self.pos += 1;
        e
    }

    /// Events up to the end of the element just opened (its `End` is consumed, not kept).
    fn until_end(&mut self) -> Inlines {
        let mut depth = 0usize;
        let mut out = Vec::new();
        while let Some((e, _)) = self.next() {
            match &e {
                Event::Start(_) => depth += 1,
                Event::End(_) if depth == 0 => break,
                Event::End(_) => depth -= 1,
                _ => {}
            }
            out.push(e);
        }
        out
    }

    fn text_until_end(&mut self) -> String {
        let mut s = String::new();
        for e in self.until_end() {
            if let Event::Text(t) | Event::Html(t) | Event::Code(t) = e {
                s.push_str(&t);
            }
        }
        s
    }
}

/// Parses `src` (which starts `base` bytes into the whole text) into blocks.
pub(super) fn parse(src: &str, base: usize) -> Vec<Node> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(src, options)
        .into_offset_iter()
        .map(|(e, r)| (e.into_static(), r.start + base..r.end + base))
        .collect();
    blocks(&mut Cursor { events, pos: 0 })
}

/// Blocks until the end of the enclosing container; inline content directly inside a
/// container (tight list items) becomes a paragraph.
fn blocks(c: &mut Cursor) -> Vec<Node> {
    let mut out = Vec::new();
    let mut loose: Inlines = Vec::new();
    let mut loose_range: Option<Range<usize>> = None;
    let flush = |out: &mut Vec<Node>, loose: &mut Inlines, range: &mut Option<Range<usize>>| {
        if let Some(range) = range.take() {
            out.push(Node {
                range,
                block: Block::Paragraph(std::mem::take(loose)),
            });
        }
    };
    while let Some((event, range)) = c.next() {
        let block = match event {
            Event::End(_) => break,
            Event::Rule => Block::Rule,
            Event::Start(tag) => match tag {
                Tag::Paragraph => Block::Paragraph(c.until_end()),
                Tag::Heading { level, .. } => Block::Heading(heading_level(level), c.until_end()),
                Tag::CodeBlock(kind) => {
                    let lang = match kind {
                        CodeBlockKind::Fenced(info) => {
                            info.split_whitespace().next().unwrap_or("").to_string()
                        }
                        CodeBlockKind::Indented => String::new(),
                    };
                    Block::Code {
                        lang,
                        text: c.text_until_end(),
                    }
                }
                Tag::List(start) => {
                    let mut items = Vec::new();
                    while let Some((e, _)) = c.next() {
                        match e {
                            Event::Start(Tag::Item) => items.push(blocks(c)),
                            _ => break,
                        }
                    }
                    Block::List { start, items }
                }
                Tag::BlockQuote(_) => Block::Quote(blocks(c)),
                Tag::Table(_) => table(c),
                Tag::HtmlBlock => Block::Html(c.text_until_end()),
                inline => {
                    let end = TagEnd::from(inline.clone());
                    let r = loose_range.get_or_insert(range.clone());
                    r.end = range.end;
                    loose.push(Event::Start(inline));
                    loose.extend(c.until_end());
                    loose.push(Event::End(end));
                    continue;
                }
            },
            other => {
                let r = loose_range.get_or_insert(range.clone());
                r.end = range.end;
                loose.push(other);
                continue;
            }
        };
        flush(&mut out, &mut loose, &mut loose_range);
        out.push(Node { range, block });
    }
    flush(&mut out, &mut loose, &mut loose_range);
    out
}

fn heading_level(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

fn table(c: &mut Cursor) -> Block {
    let mut header = Vec::new();
    let mut rows = Vec::new();
    while let Some((e, _)) = c.next() {
        let row = match e {
            Event::Start(Tag::TableHead) => &mut header,
            Event::Start(Tag::TableRow) => {
                rows.push(Vec::new());
                rows.last_mut().unwrap_or(&mut header)
            }
            _ => break,
        };
        while let Some((e, _)) = c.next() {
            match e {
                Event::Start(Tag::TableCell) => row.push(c.until_end()),
                _ => break,
            }
        }
    }
    Block::Table { header, rows }
}
