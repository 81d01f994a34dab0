//! The first message of a run, built as pi builds it: piped stdin, then the `@file` arguments
//! (text wrapped in `<file name="…">` tags, images attached), then the first CLI message,
//! concatenated with no separator.

use std::io::Read;
use std::path::Path;

use crate::ai::image::sniff_image;
use crate::ai::{Content, ImageContent};
use crate::util::encoding::base64_encode;
use crate::util::files::Limit;

/// Text and images gathered from `@file` arguments.
#[derive(Debug, Default)]
pub struct FileInputs {
    pub text: String,
    pub images: Vec<Content>,
}

/// Reads every `@file`, found as the `read` tool finds files (`~`, odd Unicode spaces, and the
/// spellings macOS uses in file names). Errors are the exact messages pi prints (without the
/// `Error: ` prefix).
pub fn read_file_args(cwd: &Path, files: &[String]) -> Result<FileInputs, String> {
    let mut inputs = FileInputs::default();
    for f in files {
        let path = crate::tools::path::resolve_read_path(f, cwd);
        let shown = path.display();
        // pi skips what has no size before reading it, which is also what keeps a FIFO
        // (a read that never ends) or `/dev/zero` (one that never stops) from being read.
        match std::fs::metadata(&path) {
            Ok(m) if m.len() == 0 => continue,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!("File not found: {shown}"))
            }
            Err(e) => return Err(format!("Could not read file {shown}: {e}")),
        }
        let bytes = match crate::util::files::read_limited(&path, Limit::FILE_ARGUMENT) {
            Ok(b) => b,
            Err(e) => return Err(format!("Could not read file {shown}: {e}")),
        };
        if bytes.is_empty() {
            continue;
        }
        if let Some(mime) = sniff_image(&bytes) {
            inputs.images.push(Content::Image(ImageContent {
                data: base64_encode(&bytes),
                mime_type: mime.into(),
            }));
            inputs
                .text
                .push_str(&format!("<file name=\"{shown}\"></file>\n"));
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        // pi 1.x drops a byte-order mark from text files.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        inputs
            .text
            .push_str(&format!("<file name=\"{shown}\">\n{text}\n</file>\n"));
    }
    Ok(inputs)
}

/// All of piped stdin, trimmed; `None` when empty.
pub fn read_stdin() -> Option<String> {
    let mut buf = Vec::new();
    let _ = std::io::stdin().lock().read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_args_are_wrapped_like_pi() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        std::fs::write(dir.join("a.txt"), "hello").unwrap();
        std::fs::write(dir.join("empty.txt"), "").unwrap();
        std::fs::write(
            dir.join("i.png"),
            [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0],
        )
        .unwrap();
        let got =
            read_file_args(&dir, &["a.txt".into(), "empty.txt".into(), "i.png".into()]).unwrap();
        let a = dir.join("a.txt");
        let i = dir.join("i.png");
        assert_eq!(
            got.text,
            format!(
                "<file name=\"{}\">\nhello\n</file>\n<file name=\"{}\"></file>\n",
                a.display(),
                i.display()
            )
        );
        assert_eq!(got.images.len(), 1);
        // pi's path fallbacks: `~`, a macOS screenshot name typed with a plain space, NFC for
        // an NFD name, a straight apostrophe for a curly one; a BOM is dropped.
        let shot = "Screenshot 2024-01-01 at 10.00.00\u{202F}AM.png";
        std::fs::write(dir.join(shot), "shot").unwrap();
        std::fs::write(dir.join("re\u{0301}sume\u{2019}s.md"), "\u{feff}cv").unwrap();
        let got = read_file_args(
            &dir,
            &[
                "Screenshot 2024-01-01 at 10.00.00 AM.png".into(),
                "r\u{00e9}sume's.md".into(),
            ],
        )
        .unwrap();
        assert_eq!(
            got.text,
            format!(
                "<file name=\"{}\">\nshot\n</file>\n<file name=\"{}\">\ncv\n</file>\n",
                dir.join(shot).display(),
                dir.join("re\u{0301}sume\u{2019}s.md").display()
            )
        );
        // Things without a size are skipped, as pi skips them: a FIFO with no writer would
        // block forever, `/dev/zero` would be read until memory runs out.
        let fifo =
            std::ffi::CString::new(dir.join("fifo").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero")).unwrap();
        let got = read_file_args(&dir, &["fifo".into(), "zero".into(), "a.txt".into()]).unwrap();
        assert_eq!(
            got.text,
            format!("<file name=\"{}\">\nhello\n</file>\n", a.display())
        );
        let home = std::env::var("HOME").unwrap_or_default();
        let err = read_file_args(&dir, &["~/pi-no-such-file".into()]).unwrap_err();
        assert_eq!(err, format!("File not found: {home}/pi-no-such-file"));
        let err = read_file_args(&dir, &["missing".into()]).unwrap_err();
        assert_eq!(
            err,
            format!("File not found: {}", dir.join("missing").display())
        );
    }
}
