//! The `mcp_servers` section of the system prompt: every enabled server whose tools are not
//! declared to the model, how to reach them, and one line about each (its `description`, or
//! the first line of its instructions once connected). pi's limits apply: 250 characters per
//! description and 4096 for the section; servers that do not fit are counted in a last line.
//! This build reaches such tools through `tool_search` only (there is no codemode), so every
//! listed server is a `tool_search` server.

use super::config::ServerConfig;
use crate::util::sort;

const MAX_DESCRIPTION_CHARS: usize = 250;
const MAX_SECTION_CHARS: usize = 4096;
pub const SECTION: &str = "mcp_servers";

/// What the section needs to know about one server.
pub struct Listed<'a> {
    pub name: &'a str,
    pub config: &'a ServerConfig,
    pub instructions: Option<&'a str>,
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn truncate(text: &str, max: usize) -> String {
    if chars(text) <= max {
        return text.to_string();
    }
    if max <= 1 {
        return String::new();
    }
    let head: String = text.chars().take(max - 1).collect();
    format!("{}…", head.trim_end())
}

fn summary(s: &Listed) -> String {
    let text = s
        .config
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .or(s.instructions)
        .unwrap_or("");
    text.split('\n').next().unwrap_or("").trim().to_string()
}

/// The section's text (without its tags), or `None` when no server is listed.
pub fn render(servers: &[Listed]) -> Option<String> {
    let mut listed: Vec<&Listed> = servers
        .iter()
        .filter(|s| {
            s.config.enabled
                && s.config
                    .configured_exposures()
                    .iter()
                    .any(|e| e.is_indirect())
        })
        .collect();
    if listed.is_empty() {
        return None;
    }
    sort::sort_by_cached_key(&mut listed, |l| (l.name.to_lowercase(), l.name));
    let intro = "MCP servers whose tools are not declared to you. Load the tools of `tool_search` servers with `tool_search`.";
    let heads: Vec<String> = listed
        .iter()
        .map(|s| format!("- {} (tool_search)", super::config::namespace(s.name)))
        .collect();
    let omitted = |count: usize| -> Vec<String> {
        if count == 0 {
            Vec::new()
        } else {
            vec![format!(
                "- … {count} more server{}; find their tools with tool_search",
                if count == 1 { "" } else { "s" }
            )]
        }
    };
    let size = |kept: usize| -> usize {
        let mut lines = vec![intro.to_string()];
        lines.extend(heads[..kept].iter().cloned());
        lines.extend(omitted(listed.len() - kept));
        chars(&lines.join("\n"))
    };
    let mut kept = listed.len();
    while kept > 0 && size(kept) > MAX_SECTION_CHARS {
        kept -= 1;
    }
    // Each description also takes a ": " separator.
    let per_server = (MAX_SECTION_CHARS - size(kept))
        .checked_div(kept)
        .map_or(0, |room| room.saturating_sub(2).min(MAX_DESCRIPTION_CHARS));
    let mut lines = vec![intro.to_string()];
    for (s, head) in listed.iter().zip(&heads).take(kept) {
        let summary = if per_server > 0 {
            truncate(&summary(s), per_server)
        } else {
            String::new()
        };
        lines.push(if summary.is_empty() {
            head.clone()
        } else {
            format!("{head}: {summary}")
        });
    }
    lines.extend(omitted(listed.len() - kept));
    Some(lines.join("\n"))
}

/// The section as it goes into the system prompt.
pub fn wrap(content: &str) -> String {
    format!("<{SECTION}>\n{content}\n</{SECTION}>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(v: serde_json::Value) -> ServerConfig {
        super::super::config::validate("x", &v).unwrap()
    }

    #[test]
    fn lists_indirect_servers_with_their_summary() {
        let docs = config(json!({"url": "https://d/mcp", "description": "Search the docs\nmore"}));
        let direct = config(json!({"command": "x", "exposure": "direct"}));
        let mixed = config(
            json!({"command": "x", "exposure": "direct", "toolExposure": {"big_*": "deferred"}}),
        );
        let off = config(json!({"command": "x", "enabled": false}));
        let fs = config(json!({"command": "x", "exposure": "deferred"}));
        let servers = [
            Listed {
                name: "docs",
                config: &docs,
                instructions: Some("ignored"),
            },
            Listed {
                name: "direct",
                config: &direct,
                instructions: None,
            },
            Listed {
                name: "my-mixed",
                config: &mixed,
                instructions: Some("Mixed tools.\nDetails"),
            },
            Listed {
                name: "off",
                config: &off,
                instructions: None,
            },
            Listed {
                name: "Fs",
                config: &fs,
                instructions: None,
            },
        ];
        assert_eq!(
            render(&servers).unwrap(),
            "MCP servers whose tools are not declared to you. Load the tools of `tool_search` servers with `tool_search`.\n\
             - mcp__docs (tool_search): Search the docs\n\
             - mcp__Fs (tool_search)\n\
             - mcp__my_mixed (tool_search): Mixed tools."
        );
        assert_eq!(render(&servers[1..2]), None);
    }

    #[test]
    fn long_descriptions_shrink_and_extra_servers_are_counted() {
        let long = config(json!({"command": "x", "description": "d".repeat(400)}));
        let one = [Listed {
            name: "a",
            config: &long,
            instructions: None,
        }];
        let text = render(&one).unwrap();
        let line = text.lines().nth(1).unwrap();
        assert_eq!(
            line.chars().count(),
            "- mcp__a (tool_search): ".chars().count() + 250
        );
        assert!(line.ends_with('…'));

        let names: Vec<String> = (0..200)
            .map(|i| format!("server-with-a-long-name-{i:03}"))
            .collect();
        let many: Vec<Listed> = names
            .iter()
            .map(|n| Listed {
                name: n,
                config: &long,
                instructions: None,
            })
            .collect();
        let text = render(&many).unwrap();
        assert!(text.chars().count() <= MAX_SECTION_CHARS);
        assert!(
            text.ends_with("more servers; find their tools with tool_search"),
            "{text}"
        );
        assert!(!text.contains(": d"), "no room left for descriptions");
    }
}
