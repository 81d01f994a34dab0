//! The two footer lines under the editor, as pi draws them: the working directory (with `~`),
//! git branch and session name; then token totals (`↑` input, `↓` output, `R` cache read,
//! `W` cache write), cost, context-window use (`(auto)` when auto-compaction is on) and, on the
//! right, the model with its thinking level. The numbers are a snapshot the app refreshes
//! from the session between runs and from events during one.

use std::path::Path;

use crate::ai::{Message, Model, ThinkingLevel};
use crate::harness::AgentSession;
use crate::session::{ops, AgentMessage, Entry};
use crate::tui::text::{truncate_to_width, visible_width};
use crate::tui::theme::{self, Token};
use crate::tui::Component;

#[derive(Debug, Clone, Default)]
pub struct FooterInfo {
    pub cwd: String,
    pub branch: Option<String>,
    pub session_name: Option<String>,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost: f64,
    /// `None` when unknown (right after a compaction).
    pub context_percent: Option<f64>,
    pub context_window: u64,
    pub auto_compact: bool,
    pub model_id: Option<String>,
    pub provider: String,
    pub reasoning: bool,
    pub thinking: Option<ThinkingLevel>,
    /// Show the provider before the model (more than one provider has a key).
    pub show_provider: bool,
}

impl FooterInfo {
    /// Everything from the idle session.
    pub fn refresh(&mut self, s: &AgentSession, has_model: bool) {
        let mut totals = FooterInfo {
            cwd: self.cwd.clone(),
            branch: self.branch.clone(),
            show_provider: self.show_provider,
            ..FooterInfo::default()
        };
        for entry in s.session.entries() {
            if let Entry::Message(m) = entry {
                if let AgentMessage::Llm(Message::Assistant(a)) = &m.message {
                    totals.add_usage(a);
                }
            }
        }
        let agent = s.agent();
        totals.session_name = s.session.name();
        let window = agent.model.context_window;
        totals.context_window = window;
        totals.context_percent = ops::context_usage(&s.session, window).and_then(|u| u.percent);
        totals.auto_compact = s.compaction.enabled;
        totals.set_model(has_model.then_some(&agent.model), agent.thinking);
        *self = totals;
    }

    pub fn set_model(&mut self, model: Option<&Model>, thinking: ThinkingLevel) {
        self.model_id = model.map(|m| m.id.clone());
        self.provider = model.map(|m| m.provider.clone()).unwrap_or_default();
        self.reasoning = model.is_some_and(|m| m.reasoning);
        self.thinking = Some(thinking);
    }

    /// Adds one finished assistant reply (during a run).
    pub fn add_usage(&mut self, a: &crate::ai::AssistantMessage) {
        self.input += a.usage.input;
        self.output += a.usage.output;
        self.cache_read += a.usage.cache_read;
        self.cache_write += a.usage.cache_write;
        self.cost += a.usage.cost.total;
        let context = a.usage.input + a.usage.output + a.usage.cache_read + a.usage.cache_write;
        if self.context_window > 0 && context > 0 {
            self.context_percent = Some(context as f64 / self.context_window as f64 * 100.0);
        }
    }
}

/// pi's token counts: `999`, `1.2k`, `45k`, `1.2M`, `15M`.
pub fn format_tokens(n: u64) -> String {
    let f = n as f64;
    match n {
        0..=999 => n.to_string(),
        1_000..=9_999 => format!("{:.1}k", f / 1000.0),
        10_000..=999_999 => format!("{}k", (f / 1000.0).round()),
        1_000_000..=9_999_999 => format!("{:.1}M", f / 1_000_000.0),
        _ => format!("{}M", (f / 1_000_000.0).round()),
    }
}

/// The cwd with the home directory shown as `~`.
pub fn display_cwd(cwd: &Path) -> String {
    crate::util::home::shorten_home(&cwd.to_string_lossy())
}

/// The branch checked out in the repository holding `dir` (`detached` for a bare commit).
pub fn git_branch(dir: &Path) -> Option<String> {
    let mut current = Some(dir);
    while let Some(d) = current {
        let git = d.join(".git");
        let head_file = if git.is_dir() {
            git.join("HEAD")
        } else if git.is_file() {
            // A worktree or submodule: `.git` names the real git dir.
            let text =
                crate::util::files::read_limited_string(&git, crate::util::files::Limit::CONFIG)
                    .ok()?;
            let target = text.trim().strip_prefix("gitdir:")?.trim().to_string();
            let target = Path::new(&target);
            let target = if target.is_absolute() {
                target.to_path_buf()
            } else {
                d.join(target)
            };
            target.join("HEAD")
        } else {
            current = d.parent();
            continue;
        };
        let head =
            crate::util::files::read_limited_string(head_file, crate::util::files::Limit::CONFIG)
                .ok()?;
        return Some(match head.trim().strip_prefix("ref: refs/heads/") {
            Some(branch) => branch.to_string(),
            None => "detached".to_string(),
        });
    }
    None
}

pub struct Footer {
    pub info: FooterInfo,
}

impl Component for Footer {
    fn render(&mut self, width: usize) -> Vec<String> {
        let theme = theme::current();
        let info = &self.info;
        let mut pwd = info.cwd.clone();
        if let Some(b) = &info.branch {
            pwd = format!("{pwd} ({b})");
        }
        if let Some(name) = &info.session_name {
            pwd = format!("{pwd} • {}", super::text_style::safe(name));
        }
        // Sandbox (issue 16): shown while commands are confined.
        let sandbox = crate::util::sandbox::active_mode();
        if sandbox != crate::util::sandbox::Mode::Off {
            pwd = format!("{pwd} • sandbox: {}", sandbox.as_str());
        }
        let pwd_line = truncate_to_width(
            &theme.fg(Token::Dim, &pwd),
            width,
            &theme.fg(Token::Dim, "..."),
            false,
        );

        let mut parts = Vec::new();
        for (n, prefix) in [
            (info.input, "↑"),
            (info.output, "↓"),
            (info.cache_read, "R"),
            (info.cache_write, "W"),
        ] {
            if n > 0 {
                parts.push(format!("{prefix}{}", format_tokens(n)));
            }
        }
        if info.cost > 0.0 {
            parts.push(format!("${:.3}", info.cost));
        }
        let auto = if info.auto_compact { " (auto)" } else { "" };
        let window = format_tokens(info.context_window);
        let percent_value = info.context_percent.unwrap_or(0.0);
        let context = match info.context_percent {
            Some(p) => format!("{p:.1}%/{window}{auto}"),
            None => format!("?/{window}{auto}"),
        };
        let left_plain_context = context.clone();
        let context_styled = if percent_value > 90.0 {
            theme.fg(Token::Error, &context)
        } else if percent_value > 70.0 {
            theme.fg(Token::Warning, &context)
        } else {
            theme.fg(Token::Dim, &context)
        };
        let mut left_plain = parts.join(" ");
        if !left_plain.is_empty() {
            left_plain.push(' ');
        }
        let left_prefix = theme.fg(Token::Dim, &left_plain);
        left_plain.push_str(&left_plain_context);
        let mut left = format!("{left_prefix}{context_styled}");
        let mut left_width = visible_width(&left_plain);
        if left_width > width {
            left = truncate_to_width(&theme.fg(Token::Dim, &left_plain), width, "...", false);
            left_width = visible_width(&left);
        }

        let model = info.model_id.clone().unwrap_or_else(|| "no-model".into());
        let mut right = model.clone();
        if info.reasoning {
            right = match info.thinking {
                Some(ThinkingLevel::Off) | None => format!("{model} • thinking off"),
                Some(level) => format!("{model} • {}", level.as_str()),
            };
        }
        if info.show_provider && info.model_id.is_some() {
            let with_provider = format!("({}) {right}", info.provider);
            if left_width + 2 + visible_width(&with_provider) <= width {
                right = with_provider;
            }
        }
        let right_width = visible_width(&right);
        let stats = if left_width + 2 + right_width <= width {
            let pad = " ".repeat(width - left_width - right_width);
            format!("{left}{}", theme.fg(Token::Dim, &format!("{pad}{right}")))
        } else if width > left_width + 2 {
            let cut = truncate_to_width(&right, width - left_width - 2, "", false);
            let pad = " ".repeat(width - left_width - visible_width(&cut));
            format!("{left}{}", theme.fg(Token::Dim, &format!("{pad}{cut}")))
        } else {
            left
        };
        vec![pwd_line, stats]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_are_formatted_like_pi() {
        assert_eq!(format_tokens(999), "999");
        assert_eq!(format_tokens(4_700), "4.7k");
        assert_eq!(format_tokens(272_000), "272k");
        assert_eq!(format_tokens(1_000_000), "1.0M");
        assert_eq!(format_tokens(15_000_000), "15M");
    }

    #[test]
    fn footer_lays_out_stats_left_and_model_right() {
        let mut f = Footer {
            info: FooterInfo {
                cwd: "~/work/pi".into(),
                branch: Some("main".into()),
                input: 4_700,
                output: 44,
                cache_read: 3_800,
                cost: 0.009,
                context_percent: Some(1.7),
                context_window: 272_000,
                auto_compact: true,
                model_id: Some("gpt-5.2-codex".into()),
                provider: "openai-codex".into(),
                reasoning: true,
                thinking: Some(ThinkingLevel::Medium),
                show_provider: true,
                ..Default::default()
            },
        };
        let lines: Vec<String> = f
            .render(80)
            .iter()
            .map(|l| crate::tui::text::strip_ansi(l))
            .collect();
        assert_eq!(lines[0], "~/work/pi (main)");
        assert!(
            lines[1].starts_with("↑4.7k ↓44 R3.8k $0.009 1.7%/272k (auto)"),
            "{}",
            lines[1]
        );
        assert!(
            lines[1].ends_with("(openai-codex) gpt-5.2-codex • medium"),
            "{}",
            lines[1]
        );
        assert_eq!(visible_width(&lines[1]), 80);
    }
}
