//! `@file` arguments (`cli::args` + `cli::inputs` + `tools::path`): any command line parses
//! without a panic, `@x` words become file arguments and nothing else does, every file
//! argument resolves to a normalized absolute path, and a file read through one is wrapped as
//! pi wraps it (text in `<file>` tags with a byte-order mark dropped, images attached).
//!
//! Input: two bytes giving the length of a file's contents, the contents (the file `in` in a
//! fresh directory, beside a FIFO `fifo` and a link `zero` to `/dev/zero`), then the command
//! line, words separated by NUL bytes.

use std::path::{Component, Path};

use pi::ai::image::sniff_image;
use pi::cli::args::parse;
use pi::cli::inputs::read_file_args;
use pi::tools::path::resolve_read_path;

use super::input::Input;

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let len = usize::from(input.u16() % 2048);
    let contents = input.take(len).to_vec();
    let argv: Vec<String> = String::from_utf8_lossy(input.rest())
        .split('\0')
        .take(24)
        .map(str::to_string)
        .collect();

    let args = parse(&argv);
    let at_words: Vec<&str> = argv.iter().filter_map(|a| a.strip_prefix('@')).collect();
    for f in &args.file_args {
        assert!(at_words.contains(&f.as_str()), "{f:?} came from no @ word");
    }
    if argv.iter().all(|a| !a.starts_with('-')) {
        assert_eq!(args.file_args, at_words, "every @ word is a file");
        let others: Vec<&String> = argv.iter().filter(|a| !a.starts_with('@')).collect();
        assert_eq!(args.messages.iter().collect::<Vec<_>>(), others);
        assert!(args.errors.is_empty(), "{:?}", args.errors);
    }

    let dir = tempfile::tempdir().expect("a scratch directory");
    let cwd = dir.path();
    std::fs::write(cwd.join("in"), &contents).expect("write the input file");
    // Files that must never be read: a FIFO nobody writes to, and a device that never ends.
    let fifo = std::ffi::CString::new(cwd.join("fifo").into_os_string().into_encoded_bytes())
        .expect("no NUL in a temporary path");
    // SAFETY: a valid NUL-terminated path.
    unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) };
    std::os::unix::fs::symlink("/dev/zero", cwd.join("zero")).expect("a symlink");
    for f in &args.file_args {
        let p = resolve_read_path(f, cwd);
        assert!(p.is_absolute(), "{f:?} resolved to {p:?}");
        assert!(
            p.components()
                .all(|c| !matches!(c, Component::CurDir | Component::ParentDir)),
            "{f:?} resolved to {p:?}"
        );
    }
    // Only names inside the scratch directory are read (never `/dev/zero` or the like).
    let inside = |f: &String| {
        !f.is_empty() && !f.contains('/') && !f.starts_with('~') && f != "." && f != ".."
    };
    if args.file_args.iter().all(inside) {
        check_reading(cwd, &args.file_args);
    }
}

fn check_reading(cwd: &Path, files: &[String]) {
    let mut text = String::new();
    let mut images = 0;
    let mut failure = None;
    for f in files {
        let path = resolve_read_path(f, cwd);
        let shown = path.display();
        // As pi: what does not exist is an error, what has no size is skipped.
        match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                failure = Some(format!("File not found: {shown}"));
                break;
            }
            Err(e) => {
                failure = Some(format!("Could not read file {shown}: {e}"));
                break;
            }
            Ok(m) if m.len() == 0 => continue,
            // Only regular files are read (issue 35): a directory is named as one.
            Ok(m) if m.is_dir() => {
                failure = Some(format!(
                    "Could not read file {shown}: is a directory, not a regular file"
                ));
                break;
            }
            Ok(_) => {}
        }
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                failure = Some(format!("Could not read file {shown}: {e}"));
                break;
            }
        };
        if bytes.is_empty() {
            continue;
        }
        if sniff_image(&bytes).is_some() {
            images += 1;
            text.push_str(&format!("<file name=\"{shown}\"></file>\n"));
            continue;
        }
        let body = String::from_utf8_lossy(&bytes);
        let body = body.strip_prefix('\u{feff}').unwrap_or(&body);
        text.push_str(&format!("<file name=\"{shown}\">\n{body}\n</file>\n"));
    }
    let got = read_file_args(cwd, files);
    match failure {
        Some(error) => assert_eq!(got.err(), Some(error)),
        None => {
            let got = got.expect("every file can be read");
            assert_eq!(got.text, text);
            assert_eq!(got.images.len(), images);
        }
    }
}
