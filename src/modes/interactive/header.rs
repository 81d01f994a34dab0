//! The start-up header: pi 1.x's two-line logo with the version, the key hints (compact, or
//! the full list once Ctrl+O expands), and the loaded context files, skills and prompt
//! templates — the same texts pi prints, with the keys taken from the current keybindings —
//! plus the running extensions and the MCP servers. `quietStartup` hides it all (`true`) or
//! only the listing (`"header"`).

use std::path::Path;

use super::footer::display_cwd;
use super::text_style::safe;
use crate::resources::loader::Resources;
use crate::tui::keybindings;
use crate::tui::theme::{self, Color, ColorMode, Theme, Token};
use crate::tui::Component;
use crate::util::sort;

/// What the header lists, captured at start-up and after `/reload`.
#[derive(Debug, Clone, Default)]
pub struct HeaderInfo {
    pub context_files: Vec<String>,
    pub context_compact: Vec<String>,
    pub skills: Vec<(String, String)>,
    pub prompts: Vec<String>,
    /// Running extensions: `(compact label, display path)`.
    pub extensions: Vec<(String, String)>,
    /// MCP servers: `(name, one line about it)`.
    pub mcp: Vec<(String, String)>,
}

impl HeaderInfo {
    pub fn from_resources(resources: &Resources, cwd: &Path) -> HeaderInfo {
        HeaderInfo {
            context_files: resources
                .context_files
                .iter()
                .map(|f| display_cwd(&f.path))
                .collect(),
            context_compact: resources
                .context_files
                .iter()
                .map(|f| match f.path.strip_prefix(cwd) {
                    Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
                    _ => display_cwd(&f.path),
                })
                .collect(),
            skills: resources
                .skills
                .iter()
                .map(|s| (s.name.clone(), display_cwd(&s.file_path)))
                .collect(),
            prompts: resources
                .templates
                .iter()
                .map(|t| format!("/{}", t.name))
                .collect(),
            extensions: Vec::new(),
            mcp: Vec::new(),
        }
    }
}

/// The `quietStartup` setting: `false`, `"header"` (the header without the resource listing)
/// or `true` (nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum QuietStartup {
    #[default]
    Off,
    Header,
    On,
}

impl QuietStartup {
    /// Reads the setting's value; anything else counts as the default, as in pi.
    pub fn from_setting(value: Option<&serde_json::Value>) -> QuietStartup {
        match value {
            Some(serde_json::Value::Bool(true)) => QuietStartup::On,
            Some(serde_json::Value::String(s)) if s == "header" => QuietStartup::Header,
            _ => QuietStartup::Off,
        }
    }

    /// As the settings menu and settings.json spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            QuietStartup::Off => "false",
            QuietStartup::Header => "header",
            QuietStartup::On => "true",
        }
    }
}

/// pi's logo colours, fixed across themes (they follow only the colour mode).
const CORAL: Color = Color::Rgb(228, 138, 122);
const BLUE: Color = Color::Rgb(79, 142, 179);
const YELLOW: Color = Color::Rgb(234, 182, 93);
const RESET: &str = "\x1b[0m";

/// The logo, 4 cells by 2 lines of half blocks (a coral arch over a blue leg and a yellow
/// one); the top line is padded to the bottom's width.
fn logo_lines(mode: ColorMode) -> [String; 2] {
    let fg = |c| theme::sgr(c, mode, false);
    let top = format!(
        "{}{}▀{RESET}{}▀█{RESET} ",
        fg(CORAL),
        theme::sgr(BLUE, mode, true),
        fg(CORAL)
    );
    let bottom = format!("{}█▀{RESET} {}█{RESET}", fg(BLUE), fg(YELLOW));
    [top, bottom]
}

/// The text stand-in for terminals that draw half blocks with gaps (Apple Terminal): "Pi"
/// in the logo's coral and yellow.
fn wordmark(mode: ColorMode) -> String {
    let fg = |c| theme::sgr(c, mode, false);
    format!("{}P{RESET}{}i{RESET}", fg(CORAL), fg(YELLOW))
}

/// Whether the terminal draws the half-block logo well (not Apple Terminal).
pub fn supports_logo() -> bool {
    std::env::var("TERM_PROGRAM").map_or(true, |t| t != "Apple_Terminal")
}

pub struct Header {
    pub info: HeaderInfo,
    pub expanded: bool,
    /// `quietStartup: true` (and no `--verbose`): no header at all.
    pub quiet: bool,
    /// The loaded resources may be listed (`quietStartup` neither `true` nor `"header"`, or
    /// `--verbose`).
    pub details: bool,
    /// The half-block logo, else the "Pi" wordmark on its own line ([`supports_logo`]).
    pub logo: bool,
    /// The resource listing is shown (pi drops it with the chat it lives in when the
    /// transcript is rebuilt: a new, resumed or compacted session).
    pub listing: bool,
}

fn hint(theme: &Theme, keys: &str, description: &str) -> String {
    format!(
        "{} {}",
        theme.fg(Token::Dim, keys),
        theme.fg(Token::Muted, description)
    )
}

impl Header {
    fn intro(&self, theme: &Theme) -> String {
        let kb = keybindings::current();
        let k = |id: &str| kb.key_text(id);
        let version = theme.fg(Token::Dim, &format!("v{}", crate::VERSION));
        // The logo's first line carries the version, its second the first line of hints.
        let with_logo = |hints: &str| {
            if self.logo {
                let [top, bottom] = logo_lines(theme.mode());
                format!("{top} {version}\n{bottom} {hints}")
            } else {
                format!("{} {version}\n{hints}", wordmark(theme.mode()))
            }
        };
        let onboarding = theme.fg(
            Token::Dim,
            "Pi can explain its own features and look up its docs. Ask it how to use or extend Pi.",
        );
        if self.expanded {
            let rows = [
                (k("app.interrupt"), "to interrupt"),
                (k("app.clear"), "to clear"),
                (format!("{} twice", k("app.clear")), "to exit"),
                (k("app.exit"), "to exit (empty)"),
                (k("app.suspend"), "to suspend"),
                (k("tui.editor.deleteToLineEnd"), "to delete to end"),
                (k("app.thinking.cycle"), "to cycle thinking level"),
                (
                    format!(
                        "{}/{}",
                        k("app.model.cycleForward"),
                        k("app.model.cycleBackward")
                    ),
                    "to cycle models",
                ),
                (k("app.model.select"), "to select model"),
                (k("app.tools.expand"), "to expand tools"),
                (k("app.thinking.toggle"), "to expand thinking"),
                (k("app.editor.external"), "for external editor"),
                ("/".into(), "for commands"),
                ("!".into(), "to run bash"),
                ("!!".into(), "to run bash (no context)"),
                (k("app.message.followUp"), "to queue follow-up"),
                (k("app.message.dequeue"), "to edit all queued messages"),
                (
                    k("app.clipboard.pasteImage"),
                    "to paste files on macOS, images, or text",
                ),
                ("drop files".into(), "to attach"),
            ];
            let lines: Vec<String> = rows.iter().map(|(key, d)| hint(theme, key, d)).collect();
            format!("{}\n\n{onboarding}", with_logo(&lines.join("\n")))
        } else {
            let sep = theme.fg(Token::Muted, " · ");
            let compact = [
                hint(theme, &k("app.interrupt"), "interrupt"),
                hint(
                    theme,
                    &format!("{}/{}", k("app.clear"), k("app.exit")),
                    "clear/exit",
                ),
                hint(theme, "/", "commands"),
                hint(theme, "!", "bash"),
                hint(theme, &k("app.tools.expand"), "more"),
            ]
            .join(&sep);
            let resources = if self.details {
                " and loaded resources"
            } else {
                ""
            };
            let press = theme.fg(
                Token::Dim,
                &format!(
                    "Press {} to show full startup help{resources}.",
                    k("app.tools.expand")
                ),
            );
            format!("{}\n{press}\n\n{onboarding}", with_logo(&compact))
        }
    }

    fn section(
        &self,
        theme: &Theme,
        name: &str,
        compact: &[String],
        full: &[String],
    ) -> Vec<String> {
        let mut text = theme.fg(Token::MdHeading, &format!("[{name}]"));
        text.push('\n');
        if self.expanded {
            let lines: Vec<String> = full
                .iter()
                .map(|l| theme.fg(Token::Dim, &format!("  {}", safe(l))))
                .collect();
            text.push_str(&lines.join("\n"));
        } else {
            text.push_str(&theme.fg(Token::Dim, &format!("  {}", safe(&compact.join(", ")))));
        }
        vec![text]
    }
}

impl Header {
    /// Whether the resource listing is drawn (the chat then does not start right below the
    /// header, so its first message keeps its blank row).
    pub fn lists_resources(&self) -> bool {
        let i = &self.info;
        !self.quiet
            && self.details
            && self.listing
            && !(i.context_files.is_empty()
                && i.skills.is_empty()
                && i.prompts.is_empty()
                && i.extensions.is_empty())
    }
}

impl Component for Header {
    fn render(&mut self, width: usize) -> Vec<String> {
        use crate::tui::components::text::Text;
        let theme = theme::current();
        if self.quiet {
            return Vec::new();
        }
        let mut lines = vec![String::new()];
        lines.extend(Text::new(self.intro(&theme), 1, 0).render(width));
        lines.push(String::new());
        if !self.listing || !self.details {
            return lines;
        }
        let info = &self.info;
        let mut sections = Vec::new();
        if !info.context_files.is_empty() {
            // pi puts a blank row above the listing only when it starts with context files.
            lines.push(String::new());
            sections.push(self.section(
                &theme,
                "Context",
                &info.context_compact,
                &info.context_files,
            ));
        }
        if !info.skills.is_empty() {
            let mut names: Vec<String> = info.skills.iter().map(|(n, _)| n.clone()).collect();
            sort::sort(&mut names);
            let paths: Vec<String> = info.skills.iter().map(|(_, p)| p.clone()).collect();
            sections.push(self.section(&theme, "Skills", &names, &paths));
        }
        if !info.prompts.is_empty() {
            let mut names = info.prompts.clone();
            sort::sort(&mut names);
            sections.push(self.section(&theme, "Prompts", &names, &info.prompts));
        }
        if !info.extensions.is_empty() {
            let mut names: Vec<String> = info.extensions.iter().map(|(n, _)| n.clone()).collect();
            sort::sort(&mut names);
            let paths: Vec<String> = info.extensions.iter().map(|(_, p)| p.clone()).collect();
            sections.push(self.section(&theme, "Extensions", &names, &paths));
        }
        if !info.mcp.is_empty() {
            let names: Vec<String> = info.mcp.iter().map(|(n, _)| n.clone()).collect();
            let lines: Vec<String> = info.mcp.iter().map(|(_, l)| l.clone()).collect();
            sections.push(self.section(&theme, "MCP", &names, &lines));
        }
        for section in sections {
            for text in section {
                lines.extend(Text::new(text, 0, 0).render(width));
            }
            lines.push(String::new());
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;

    fn header(details: bool, logo: bool) -> Header {
        Header {
            info: HeaderInfo {
                prompts: vec!["/review".into()],
                ..HeaderInfo::default()
            },
            expanded: false,
            quiet: false,
            details,
            logo,
            listing: true,
        }
    }

    fn plain(h: &mut Header) -> Vec<String> {
        h.render(100)
            .iter()
            .map(|l| strip_ansi(l).trim_end().to_string())
            .collect()
    }

    #[test]
    fn the_logo_carries_the_version_and_the_first_hints() {
        let lines = plain(&mut header(true, true));
        assert_eq!(lines[1], format!(" ▀▀█  v{}", crate::VERSION));
        assert!(
            lines[2].starts_with(" █▀ █ escape interrupt · "),
            "{lines:#?}"
        );
        assert_eq!(
            lines[3],
            " Press ctrl+o to show full startup help and loaded resources."
        );
        assert!(lines.iter().any(|l| l == "[Prompts]"), "{lines:#?}");
        assert!(!lines.iter().any(|l| l.contains("[Themes]")));
    }

    #[test]
    fn without_the_logo_the_wordmark_stands_above_the_hints() {
        let lines = plain(&mut header(true, false));
        assert_eq!(lines[1], format!(" Pi v{}", crate::VERSION));
        assert!(lines[2].starts_with(" escape interrupt · "), "{lines:#?}");
    }

    #[test]
    fn quiet_startup_header_keeps_the_header_without_the_listing() {
        let mut h = header(false, true);
        let lines = plain(&mut h);
        assert_eq!(lines[3], " Press ctrl+o to show full startup help.");
        assert!(!lines.iter().any(|l| l == "[Prompts]"), "{lines:#?}");
        assert!(!h.lists_resources());
        assert_eq!(
            QuietStartup::from_setting(Some(&serde_json::json!("header"))),
            QuietStartup::Header
        );
        assert_eq!(
            QuietStartup::from_setting(Some(&serde_json::json!(true))),
            QuietStartup::On
        );
        assert_eq!(
            QuietStartup::from_setting(Some(&serde_json::json!("loud"))),
            QuietStartup::Off
        );
    }
}
