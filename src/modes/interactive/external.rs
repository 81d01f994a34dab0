//! Leaving the TUI for a moment: editing the prompt in `$VISUAL`/`$EDITOR` (Ctrl+G),
//! and copying text to the clipboard (OSC 52, which works over SSH, plus the platform tool
//! when one is installed). Pasting a clipboard image is `clipboard_image` and `jobs`.

use std::io::Write;
use std::process::{Command, Stdio};

use super::view::View;
use crate::tui::terminal::Terminal;
use crate::tui::Tui;

/// Ctrl+G: the editor's text goes to a temp file, the user's editor runs on the real
/// terminal, and what they saved comes back into the editor.
pub(super) fn edit_externally<T: Terminal>(tui: &mut Tui<T>, view: &mut View) {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|v| !v.trim().is_empty())
        });
    let Some(editor) = editor else {
        view.warning("No editor configured. Set $VISUAL or $EDITOR environment variable.");
        return;
    };
    // Created exclusively under an unpredictable name and removed when `file` drops, even
    // if the editor replaced it (most save by renaming over it).
    let file = tempfile::Builder::new()
        .prefix("pi-editor-")
        .suffix(".pi.md")
        .tempfile()
        .and_then(|mut f| {
            use std::io::Write as _;
            f.write_all(view.editor.get_expanded_text().as_bytes())?;
            Ok(f)
        });
    let file = match file {
        Ok(f) => f,
        Err(e) => {
            view.error(&format!("Could not write the temp file: {e}"));
            return;
        }
    };
    let path = file.path().to_path_buf();
    if let Err(e) = tui.stop() {
        view.error(&format!("Could not release the terminal: {e}"));
        return;
    }
    // `$EDITOR` may carry arguments (`code --wait`), so the shell splits it.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status();
    if let Err(e) = tui.start() {
        view.error(&format!("Could not take the terminal back: {e}"));
    }
    tui.request_full_render();
    match status {
        Ok(s) if s.success() => match std::fs::read_to_string(&path) {
            Ok(text) => view.editor.set_text(text.trim_end_matches('\n')),
            Err(e) => view.error(&format!("Could not read the edited text: {e}")),
        },
        Ok(s) => view.warning(&format!("Editor exited with {s}; text unchanged")),
        Err(e) => view.error(&format!("Could not run {editor}: {e}")),
    }
    drop(file);
}

/// How long a clipboard tool may take to accept the text.
const CLIPBOARD_TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// Puts `text` on the clipboard: OSC 52 through the terminal, and the first of wl-copy,
/// xclip, xsel or pbcopy that runs.
pub fn copy_to_clipboard(terminal: &mut dyn Terminal, text: &str) {
    let encoded = crate::util::encoding::base64_encode(text.as_bytes());
    terminal.write(&format!("\x1b]52;c;{encoded}\x07"));
    let _ = terminal.flush();
    let tools: [(&str, &[&str]); 4] = [
        ("wl-copy", &[]),
        ("xclip", &["-selection", "clipboard"]),
        ("xsel", &["--clipboard", "--input"]),
        ("pbcopy", &[]),
    ];
    for (program, args) in tools {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let options = crate::util::process::SpawnOptions::default();
        let Ok(mut child) = crate::util::process::spawn(&mut cmd, options) else {
            continue;
        };
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(text.as_bytes());
        }
        // A clipboard tool that hangs (no display answering) must not freeze the screen.
        match child.wait_timeout(CLIPBOARD_TOOL_TIMEOUT) {
            Some(status) if status.is_some_and(|s| s.success()) => return,
            Some(_) => {}
            None => {
                child.kill();
            }
        }
    }
}
