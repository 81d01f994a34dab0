//! Leaving the TUI for a moment: editing the prompt in `$VISUAL`/`$EDITOR` (Ctrl+G),
//! copying text to the clipboard (OSC 52, which works over SSH, plus the platform tool when
//! one is installed), and pasting a clipboard image as a file path (see `clipboard_image`).

use std::io::Write;
use std::process::{Command, Stdio};

use super::app::App;
use super::clipboard_image::{self, ClipboardRead};
use crate::tui::terminal::Terminal;

impl<T: Terminal> App<T> {
    /// Ctrl+G: the editor's text goes to a temp file, the user's editor runs on the real
    /// terminal, and what they saved comes back into the editor.
    pub(super) fn edit_externally(&mut self) {
        let editor = std::env::var("VISUAL")
            .ok()
            .filter(|v| !v.trim().is_empty())
            .or_else(|| {
                std::env::var("EDITOR")
                    .ok()
                    .filter(|v| !v.trim().is_empty())
            });
        let Some(editor) = editor else {
            self.view
                .warning("No editor configured. Set $VISUAL or $EDITOR environment variable.");
            return;
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path =
            std::env::temp_dir().join(format!("pi-editor-{}-{nanos}.pi.md", std::process::id()));
        if let Err(e) = std::fs::write(&path, self.view.editor.get_expanded_text()) {
            self.view
                .error(&format!("Could not write the temp file: {e}"));
            return;
        }
        if let Err(e) = self.tui.stop() {
            self.view
                .error(&format!("Could not release the terminal: {e}"));
            return;
        }
        // `$EDITOR` may carry arguments (`code --wait`), so the shell splits it.
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("{editor} \"$1\""))
            .arg("sh")
            .arg(&path)
            .status();
        if let Err(e) = self.tui.start() {
            self.view
                .error(&format!("Could not take the terminal back: {e}"));
        }
        self.tui.request_full_render();
        match status {
            Ok(s) if s.success() => match std::fs::read_to_string(&path) {
                Ok(text) => self.view.editor.set_text(text.trim_end_matches('\n')),
                Err(e) => self
                    .view
                    .error(&format!("Could not read the edited text: {e}")),
            },
            Ok(s) => self
                .view
                .warning(&format!("Editor exited with {s}; text unchanged")),
            Err(e) => self.view.error(&format!("Could not run {editor}: {e}")),
        }
        let _ = std::fs::remove_file(&path);
    }
}

impl<T: Terminal> App<T> {
    /// The paste-image key: reads the clipboard on a helper thread (one read at a time).
    pub(super) fn paste_clipboard_image(&mut self) {
        if self.clipboard_read.is_none() {
            self.clipboard_read = Some(clipboard_image::spawn_read(self.env.clipboard.clone()));
        }
    }

    /// The clipboard read finished: an image is saved to a temp file whose path goes into the
    /// editor at the cursor. No image does nothing, as in pi.
    pub(super) fn on_clipboard_image(&mut self, read: Option<ClipboardRead>) {
        self.clipboard_read = None;
        match read {
            Some(ClipboardRead::Image(image)) => {
                match clipboard_image::save(&self.env.clipboard, &image) {
                    Ok(path) => self
                        .view
                        .editor
                        .insert_text_at_cursor(&path.to_string_lossy()),
                    Err(e) => self
                        .view
                        .error(&format!("Could not save the pasted image: {e}")),
                }
            }
            Some(ClipboardRead::NoTool(tool)) => self.view.warning(&format!(
                "Cannot paste images: no clipboard tool found. Install {tool}."
            )),
            Some(ClipboardRead::NoImage) | None => {}
        }
        self.tui.request_render();
    }
}

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
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = child else { continue };
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(text.as_bytes());
        }
        if child.wait().is_ok_and(|s| s.success()) {
            return;
        }
    }
}
