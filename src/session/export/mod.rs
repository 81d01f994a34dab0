//! Session export. `pi --export`, `/export`, `/share` and RPC `export_html` write one
//! self-contained HTML file: a session viewer (tree with branch navigation, Markdown,
//! collapsible thinking and tool output, images, the theme's colours) whose template is
//! compiled in (`viewer.html`, `viewer.css`; the script in `markup.js`, `session.js` and
//! `viewer.js`) and whose data is the session embedded as pi embeds it (`page`). `theme`
//! turns a pi theme into the page's colours; `jsonl` writes the current branch as a session
//! file (`/export <file>.jsonl`, as pi does).

pub mod jsonl;
mod page;
pub mod theme;

use std::path::{Path, PathBuf};

use super::store::SessionWriter;

pub use page::{esc, read_session_data, render_html, session_data_json, ExportOptions, DATA_OPEN};
pub use theme::ExportTheme;

/// pi's default output name: `pi-session-<file name without .jsonl>.html` in the cwd.
pub fn default_output_path(session_path: &Path) -> PathBuf {
    let name = session_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = name.strip_suffix(".jsonl").unwrap_or(&name);
    PathBuf::from(format!("pi-session-{base}.html"))
}

/// `pi --export`: the session file at `session_path` (its last entry is the leaf) to `out`,
/// or to [`default_output_path`], in the default theme. Returns the path written. Errors
/// are pi's messages.
pub fn export_html(session_path: &Path, out: Option<&Path>) -> Result<PathBuf, String> {
    if !session_path.exists() {
        return Err(format!("File not found: {}", session_path.display()));
    }
    // Reading never writes: an older file is migrated in memory only.
    let (w, _) = SessionWriter::open(session_path)
        .map_err(|e| format!("Cannot read session {}: {e}", session_path.display()))?;
    write_page(&w, session_path, out, &ExportOptions::default())
}

/// `/export`, `/share`, RPC `export_html`: the live session at its current leaf.
pub fn export_session_html(
    w: &SessionWriter,
    out: Option<&Path>,
    opts: &ExportOptions<'_>,
) -> Result<PathBuf, String> {
    let path = w.path().ok_or("Cannot export in-memory session to HTML")?;
    if !path.exists() {
        return Err("Nothing to export yet - start a conversation first".into());
    }
    write_page(w, path, out, opts)
}

/// Writes the page of `w` (read from `session`) to `out` or the default path, never over the
/// session file itself (`pi --export s.jsonl s.jsonl`).
fn write_page(
    w: &SessionWriter,
    session: &Path,
    out: Option<&Path>,
    opts: &ExportOptions<'_>,
) -> Result<PathBuf, String> {
    let out = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| default_output_path(session));
    refuse_overwriting(session, &out)?;
    let html = render_html(w, opts);
    crate::util::atomic::replace(&out, html.as_bytes(), Default::default())
        .map_err(|e| format!("Cannot write {}: {e}", out.display()))?;
    Ok(out)
}

/// An export never replaces the session it is made from.
fn refuse_overwriting(session: &Path, out: &Path) -> Result<(), String> {
    if let (Ok(a), Ok(b)) = (std::fs::metadata(session), std::fs::metadata(out)) {
        if crate::util::files::same_file(&a, &b) {
            return Err(format!(
                "Refusing to overwrite the session file {} with its export; choose another output path",
                session.display()
            ));
        }
    }
    Ok(())
}
