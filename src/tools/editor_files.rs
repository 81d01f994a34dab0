//! Files as an editor holds them. When pi runs inside an editor that offers its buffers (ACP's
//! `fs/read_text_file` and `fs/write_text_file`), `read`, `edit` and `write` go through the
//! editor, so the model sees the user's unsaved edits and the editor sees the changes; without
//! one, and always under a sandbox (whose checks are the system calls on the disk), the disk.

use std::path::Path;
use std::sync::{Arc, RwLock};

/// An editor's view of the files it has open (or of every file it can reach).
pub trait EditorFiles: Send + Sync {
    /// The text of `path` as the editor has it; `None` to use the disk.
    fn read(&self, path: &Path) -> Option<Result<String, String>>;
    /// Has the editor write `text` to `path`; `None` to write the disk.
    fn write(&self, path: &Path, text: &str) -> Option<Result<(), String>>;
}

static EDITOR: RwLock<Option<Arc<dyn EditorFiles>>> = RwLock::new(None);

/// Installs (or removes) the editor the file tools go through.
pub fn set(editor: Option<Arc<dyn EditorFiles>>) {
    *EDITOR.write().unwrap_or_else(|p| p.into_inner()) = editor;
}

/// The editor the file tools go through, unless a sandbox confines them.
pub fn current() -> Option<Arc<dyn EditorFiles>> {
    if crate::util::sandbox::active().is_some() {
        return None;
    }
    EDITOR.read().unwrap_or_else(|p| p.into_inner()).clone()
}
