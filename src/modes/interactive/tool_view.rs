//! How a tool call looks in the transcript: a box on the pending / success / error
//! background with the call's title (`read ~/x.rs`, `$ ls`, `edit src/a.rs`) and its result,
//! collapsed to a few lines until Ctrl+O expands it. Edits show their diff in colour; bash
//! shows the tail of its output live while it runs and how long it took.

use std::time::Instant;

use serde_json::Value;

use super::diff_view::render_diff;
use super::text_style::{arg_str, key_hint, safe};
use crate::tui::components::boxed::Boxed;
use crate::tui::components::highlight;
use crate::tui::components::text::{tail_rows, Fill, Text};
use crate::tui::text::{strip_ansi, truncate_to_width};
use crate::tui::theme::{self, Theme, Token};
use crate::tui::Component;

/// Lines of a read/write/generic result shown until expanded.
const PREVIEW_LINES: usize = 10;
/// Lines of bash output shown (from the end) until expanded.
const BASH_PREVIEW_LINES: usize = 5;

pub struct ToolView {
    name: String,
    args: Value,
    /// `{content, details}` of the latest partial or final result.
    result: Option<Value>,
    is_error: bool,
    partial: bool,
    expanded: bool,
    started: Option<Instant>,
    ended: Option<Instant>,
    home: Option<String>,
    body: Boxed,
}

impl ToolView {
    pub fn new(name: &str, args: Value, expanded: bool) -> ToolView {
        let mut view = ToolView {
            name: name.to_string(),
            args,
            result: None,
            is_error: false,
            partial: true,
            expanded,
            started: None,
            ended: None,
            home: std::env::var("HOME").ok().filter(|h| !h.is_empty()),
            body: Boxed::new(1, 1, None),
        };
        view.rebuild();
        view
    }

    pub fn set_args(&mut self, args: Value) {
        self.args = args;
        self.rebuild();
    }

    pub fn start(&mut self) {
        self.started.get_or_insert_with(Instant::now);
        self.rebuild();
    }

    pub fn update(&mut self, partial: Value) {
        self.result = Some(partial);
        self.rebuild();
    }

    pub fn finish(&mut self, result: Value, is_error: bool) {
        self.result = Some(result);
        self.is_error = is_error;
        self.partial = false;
        self.ended = Some(Instant::now());
        self.rebuild();
    }

    pub fn is_running(&self) -> bool {
        self.partial
    }

    /// Refreshes the elapsed time of a running bash call.
    pub fn tick(&mut self) {
        if self.partial && self.name == "bash" && self.started.is_some() {
            self.rebuild();
        }
    }

    /// A click on a finished call's block flips its own expansion (pi 1.x fullscreen);
    /// returns whether there was anything to flip.
    pub fn toggle_expanded(&mut self) -> bool {
        if self.result.is_none() {
            return false;
        }
        self.set_expanded(!self.expanded);
        true
    }

    pub fn set_expanded(&mut self, expanded: bool) {
        self.expanded = expanded;
        self.rebuild();
    }

    fn short_path(&self, path: &str) -> String {
        match &self.home {
            Some(home) => crate::util::home::shorten_home_in(path, home),
            None => path.to_string(),
        }
    }

    fn rebuild(&mut self) {
        let theme = theme::current();
        let bg = if self.partial {
            Token::ToolPendingBg
        } else if self.is_error {
            Token::ToolErrorBg
        } else {
            Token::ToolSuccessBg
        };
        self.body = Boxed::new(1, 1, Some(Fill::token(&theme, bg)));
        let mut text = self.title(&theme);
        if self.name == "bash" {
            let output = self.bash_output(&theme);
            match output {
                Some(output) if !self.expanded => {
                    self.body.add_child(Box::new(Text::new(text, 0, 0)));
                    self.body.add_child(Box::new(BashTail::new(output)));
                    // The footer's first newline ended the output's last row.
                    let footer = self.bash_footer(&theme);
                    text = footer.strip_prefix('\n').unwrap_or(&footer).to_string();
                }
                Some(output) => {
                    text.push_str(&format!("\n\n{output}"));
                    text.push_str(&self.bash_footer(&theme));
                }
                None => text.push_str(&self.bash_footer(&theme)),
            }
        } else {
            text.push_str(&self.body_text(&theme));
        }
        self.body.add_child(Box::new(Text::new(text, 0, 0)));
    }

    fn path_arg(&self, theme: &Theme) -> String {
        match arg_str(&self.args, &["path", "file_path"]) {
            Some(p) if !p.is_empty() => theme.fg(Token::Accent, &safe(&self.short_path(p))),
            _ => theme.fg(Token::ToolOutput, "..."),
        }
    }

    fn title(&self, theme: &Theme) -> String {
        let bold = |s: &str| theme.fg(Token::ToolTitle, &theme.bold(s));
        match self.name.as_str() {
            "bash" => {
                let command = arg_str(&self.args, &["command"]).unwrap_or("...");
                let timeout = match self.args.get("timeout").and_then(Value::as_f64) {
                    Some(t) => theme.fg(Token::Muted, &format!(" (timeout {t}s)")),
                    None => String::new(),
                };
                format!("{}{timeout}", bold(&format!("$ {}", safe(command))))
            }
            "read" => {
                let range = match (
                    self.args.get("offset").and_then(Value::as_u64),
                    self.args.get("limit").and_then(Value::as_u64),
                ) {
                    (None, None) => String::new(),
                    (offset, limit) => {
                        let start = offset.unwrap_or(1);
                        let end = limit.map(|l| format!("-{}", start + l.saturating_sub(1)));
                        theme.fg(
                            Token::Warning,
                            &format!(":{start}{}", end.unwrap_or_default()),
                        )
                    }
                };
                format!("{} {}{range}", bold("read"), self.path_arg(theme))
            }
            "write" | "edit" => format!("{} {}", bold(&self.name), self.path_arg(theme)),
            "grep" | "find" => {
                let pattern = arg_str(&self.args, &["pattern"]).unwrap_or("");
                let place = arg_str(&self.args, &["path"]).unwrap_or(".");
                format!(
                    "{} {} {}",
                    bold(&self.name),
                    theme.fg(Token::Accent, &safe(pattern)),
                    theme.fg(
                        Token::ToolOutput,
                        &format!("in {}", safe(&self.short_path(place)))
                    )
                )
            }
            "ls" => {
                let place = arg_str(&self.args, &["path"]).unwrap_or(".");
                format!(
                    "{} {}",
                    bold("ls"),
                    theme.fg(Token::Accent, &safe(&self.short_path(place)))
                )
            }
            other => bold(&safe(other)),
        }
    }

    fn output_text(&self) -> String {
        let Some(result) = &self.result else {
            return String::new();
        };
        let mut parts = Vec::new();
        for block in result["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("text") => parts.push(safe(block["text"].as_str().unwrap_or(""))),
                Some("image") => parts.push(format!(
                    "[Image: {}]",
                    safe(block["mimeType"].as_str().unwrap_or("image/unknown"))
                )),
                _ => {}
            }
        }
        parts.join("\n")
    }

    fn more_hint(&self, theme: &Theme, what: String) -> String {
        format!(
            "{} {})",
            theme.fg(Token::Muted, &format!("\n... ({what},")),
            key_hint(theme, "app.tools.expand", "to expand")
        )
    }

    /// The first lines of `text` (all of them when expanded) and how many more there are.
    /// Files whose path names a language the highlighter knows are coloured as code (pi's
    /// `write` call and `read` result); anything else is in the output colour.
    fn head_preview(
        &self,
        theme: &Theme,
        text: &str,
        path: Option<&str>,
        total_note: bool,
    ) -> String {
        let text = text.replace('\t', "   ");
        let lang = path.and_then(highlight::language_for_path);
        let mut lines: Vec<String> = match lang.and_then(|l| highlight::highlight(&text, l, theme))
        {
            Some(coloured) => coloured,
            None => text
                .split('\n')
                .map(|l| theme.fg(Token::ToolOutput, l))
                .collect(),
        };
        while lines.last().is_some_and(|l| strip_ansi(l).is_empty()) {
            lines.pop();
        }
        let total = lines.len();
        let shown = if self.expanded {
            total
        } else {
            total.min(PREVIEW_LINES)
        };
        let mut out = format!("\n{}", lines[..shown].join("\n"));
        if shown < total {
            let remaining = total - shown;
            let what = if total_note {
                format!("{remaining} more lines, {total} total")
            } else {
                format!("{remaining} more lines")
            };
            out.push_str(&self.more_hint(theme, what));
        }
        out
    }

    fn body_text(&self, theme: &Theme) -> String {
        match self.name.as_str() {
            "write" => {
                let mut out = String::new();
                if let Some(content) = arg_str(&self.args, &["content"]).filter(|c| !c.is_empty()) {
                    out.push('\n');
                    let path = arg_str(&self.args, &["path", "file_path"]);
                    out.push_str(&self.head_preview(theme, &safe(content), path, true));
                }
                if self.is_error {
                    out.push_str(&format!(
                        "\n\n{}",
                        theme.fg(Token::Error, &self.output_text())
                    ));
                }
                out
            }
            "edit" => {
                if self.is_error {
                    let text = self.output_text();
                    return if text.is_empty() {
                        String::new()
                    } else {
                        format!("\n\n{}", theme.fg(Token::Error, &text))
                    };
                }
                let diff = self
                    .result
                    .as_ref()
                    .and_then(|r| r["details"]["diff"].as_str());
                match diff {
                    Some(d) if !self.partial => format!("\n\n{}", render_diff(theme, &safe(d))),
                    _ => String::new(),
                }
            }
            _ => {
                let text = self.output_text();
                if self.result.is_none() || (text.is_empty() && !self.is_error) {
                    return String::new();
                }
                let path = (self.name == "read" && !self.is_error)
                    .then(|| arg_str(&self.args, &["path", "file_path"]))
                    .flatten();
                let preview = self.head_preview(theme, &text, path, false);
                format!("\n{preview}")
            }
        }
    }

    /// The bash output in the output colour, if there is any.
    fn bash_output(&self, theme: &Theme) -> Option<String> {
        let text = self.output_text();
        let text = text.trim();
        (!text.is_empty()).then(|| {
            text.split('\n')
                .map(|line| theme.fg(Token::ToolOutput, line))
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    /// What follows the bash output: where the full output went, and how long it took.
    fn bash_footer(&self, theme: &Theme) -> String {
        let mut out = String::new();
        if let Some(path) = self
            .result
            .as_ref()
            .and_then(|r| r["details"]["fullOutputPath"].as_str())
        {
            out.push_str(&format!(
                "\n\n{}",
                theme.fg(Token::Warning, &format!("[Full output: {}]", safe(path)))
            ));
        }
        if let Some(started) = self.started {
            let end = self.ended.unwrap_or_else(Instant::now);
            let label = if self.partial { "Elapsed" } else { "Took" };
            let secs = end.duration_since(started).as_secs_f64();
            out.push_str(&format!(
                "\n\n{}",
                theme.fg(Token::Muted, &format!("{label} {secs:.1}s"))
            ));
        }
        out
    }
}

/// The collapsed bash output: its last [`BASH_PREVIEW_LINES`] screen rows at the width it is
/// drawn at (a long line on a narrow terminal fills several), under a note of how many rows
/// are hidden — pi's budget.
struct BashTail {
    styled: String,
}

impl BashTail {
    fn new(styled: String) -> BashTail {
        BashTail { styled }
    }
}

impl Component for BashTail {
    fn render(&mut self, width: usize) -> Vec<String> {
        let (rows, skipped) = tail_rows(&self.styled, BASH_PREVIEW_LINES, width, 0);
        let mut lines = vec![String::new()];
        if skipped > 0 {
            let theme = theme::current();
            let hint = format!(
                "{} {})",
                theme.fg(Token::Muted, &format!("... ({skipped} earlier lines,")),
                key_hint(&theme, "app.tools.expand", "to expand")
            );
            lines.push(truncate_to_width(&hint, width, "...", false));
        }
        lines.extend(rows);
        lines
    }
}

impl Component for ToolView {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = vec![String::new()];
        lines.extend(self.body.render(width));
        lines
    }

    fn invalidate(&mut self) {
        self.rebuild();
    }
}
