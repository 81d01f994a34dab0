//! The exported page: the viewer template (HTML, CSS, JS compiled in deflated) with the theme's
//! colours and the session embedded as pi embeds it — base64 of the JSON
//! `{header, entries, leafId, systemPrompt?, tools?}` in
//! `<script id="session-data" type="application/json">`, so tooling that reads pi's exports
//! reads ours. Base64 keeps every byte of session text out of the markup. [`ExportOptions`] is
//! what a live session adds to it (theme, system prompt, tools).

use std::fmt::Write as _;

use serde_json::Value;

use super::theme::ExportTheme;
use crate::ai::ToolSpec;
use crate::session::json::to_js_string;
use crate::session::SessionWriter;
use crate::util::packed::Pack;

/// The viewer's files (deflated by build.rs): the template `viewer.html`, `viewer.css`, and one
/// script in three files: markup (escaping, highlighting, Markdown), the session's data and
/// entries, the viewer around them.
static VIEWER: Pack = include!(concat!(env!("OUT_DIR"), "/export_page.pack.rs"));
const SCRIPTS: [&str; 3] = ["markup.js", "session.js", "viewer.js"];

/// Where the embedded session sits: this opening tag, the base64 text, `</script>`.
pub const DATA_OPEN: &str = r#"<script id="session-data" type="application/json">"#;

/// What a live session adds to a file export.
#[derive(Default)]
pub struct ExportOptions<'a> {
    /// The page's colours; `None` is pi's default for the terminal (dark unless `COLORFGBG`
    /// says light).
    pub theme: Option<ExportTheme>,
    /// The agent's system prompt, shown atop the conversation of sessions that do not record
    /// their own (pi 1.x records it as `system` messages).
    pub system_prompt: Option<&'a str>,
    /// The agent's tools, listed with their parameters.
    pub tools: Option<&'a [ToolSpec]>,
}

/// The whole page for `w` at its current leaf.
pub fn render_html(w: &SessionWriter, opts: &ExportOptions<'_>) -> String {
    let data = session_data_json(w, opts);
    let title = match w.name() {
        Some(n) => format!("{} - Session Export", esc(&n)),
        None => "Session Export".to_string(),
    };
    let default_theme;
    let theme = match &opts.theme {
        Some(t) => t,
        None => {
            default_theme = ExportTheme::default_for_terminal();
            &default_theme
        }
    };
    let generator = format!("pi {}", crate::VERSION);
    let viewer = VIEWER.unpack();
    let template = viewer.file("viewer.html");
    let css = viewer.file("viewer.css");
    let viewer_len: usize = viewer.files().map(|(_, text)| text.len()).sum();
    let mut html = String::with_capacity(viewer_len + data.len() / 3 * 4 + 4096);
    fill(
        &mut html,
        template,
        &[
            ("GENERATOR", &|h: &mut String| h.push_str(&esc(&generator))),
            ("TITLE", &|h: &mut String| h.push_str(&title)),
            ("THEME_VARS", &|h: &mut String| h.push_str(theme.css())),
            ("CSS", &|h: &mut String| h.push_str(css)),
            ("SESSION_DATA", &|h: &mut String| {
                crate::util::encoding::base64_encode_into(data.as_bytes(), h)
            }),
            ("JS", &|h: &mut String| {
                SCRIPTS.iter().for_each(|js| h.push_str(viewer.file(js)))
            }),
        ],
    );
    html
}

type Writer<'a> = &'a dyn Fn(&mut String);

/// Copies `template` into `out`, replacing each `{{KEY}}` by its writer's output in one
/// pass (so nothing inserted is ever scanned for placeholders).
fn fill(out: &mut String, template: &str, parts: &[(&str, Writer<'_>)]) {
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        let key = &rest[start + 2..start + 2 + len];
        out.push_str(&rest[..start]);
        match parts.iter().find(|(k, _)| *k == key) {
            Some((_, write)) => write(out),
            None => out.push_str(&rest[start..start + len + 4]),
        }
        rest = &rest[start + len + 4..];
    }
    out.push_str(rest);
}

/// The embedded JSON, shaped as pi's `JSON.stringify(sessionData)`: the header and every
/// entry exactly as their lines are in the file, the current leaf, and — from a live
/// session — the system prompt and tools (keys left out when unknown, as pi leaves them).
pub fn session_data_json(w: &SessionWriter, opts: &ExportOptions<'_>) -> String {
    let mut json = String::from("{\"header\":");
    json.push_str(&w.header_line());
    json.push_str(",\"entries\":[");
    for (i, line) in w.entry_lines().enumerate() {
        if i > 0 {
            json.push(',');
        }
        json.push_str(line.trim_end());
    }
    json.push_str("],\"leafId\":");
    json.push_str(&to_js_string(&w.leaf_id()));
    if let Some(p) = opts.system_prompt {
        let _ = write!(json, ",\"systemPrompt\":{}", to_js_string(p));
    }
    if let Some(tools) = opts.tools {
        let list: Vec<Value> = tools
            .iter()
            .map(|t| serde_json::json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
            .collect();
        let _ = write!(json, ",\"tools\":{}", to_js_string(&list));
    }
    json.push('}');
    json
}

/// The session data embedded in an exported page (ours or pi's), decoded.
pub fn read_session_data(html: &str) -> Option<Value> {
    let start = html.find(DATA_OPEN)? + DATA_OPEN.len();
    let end = start + html[start..].find("</script>")?;
    let bytes = crate::util::encoding::base64_decode(&html[start..end])?;
    serde_json::from_slice(&bytes).ok()
}

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}
