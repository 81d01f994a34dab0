use super::*;
use crate::ai::Abort;
use std::path::Path;

fn run(dir: &Path, args: Value) -> Result<ToolOutput, String> {
    let ctx = ToolContext {
        cwd: dir.to_path_buf(),
        abort: Abort::new(),
        on_update: &|_| {},
        nested: None,
    };
    ReadTool.execute("c1", args, &ctx)
}

fn text(out: &ToolOutput) -> &str {
    match &out.content[0] {
        Content::Text(t) => &t.text,
        other => panic!("not text: {other:?}"),
    }
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn reads_whole_small_file() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("a.txt"), "hello\nworld\n").unwrap();
    let out = run(d.path(), json!({"path": "a.txt"})).unwrap();
    assert_eq!(text(&out), "hello\nworld\n");
    assert!(out.details.is_none());
}

#[test]
fn empty_file_is_empty_text() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("e"), "").unwrap();
    assert_eq!(text(&run(d.path(), json!({"path": "e"})).unwrap()), "");
}

#[test]
fn offset_and_limit_with_more_lines_notice() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), numbered(10)).unwrap();
    let out = run(d.path(), json!({"path": "f", "offset": 3, "limit": 2})).unwrap();
    assert_eq!(
        text(&out),
        "line 3\nline 4\n\n[7 more lines in file. Use offset=5 to continue.]"
    );
    let out = run(d.path(), json!({"path": "f", "offset": 9})).unwrap();
    assert_eq!(text(&out), "line 9\nline 10\n");
}

#[test]
fn line_limit_notice_counts_trailing_newline() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), numbered(3000)).unwrap();
    let out = run(d.path(), json!({"path": "f"})).unwrap();
    let t = text(&out);
    assert!(t.starts_with("line 1\n"));
    assert!(
        t.ends_with("line 2000\n\n[Showing lines 1-2000 of 3001. Use offset=2001 to continue.]")
    );
    let tr = &out.details.as_ref().unwrap()["truncation"];
    assert_eq!(tr["truncatedBy"], "lines");
    assert_eq!(tr["outputLines"], 2000);
    // The streamed truncation equals truncate_head on the same selection.
    let whole = numbered(3000);
    let expect =
        crate::tools::truncate::truncate_head(&whole, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    assert_eq!(tr, &serde_json::to_value(expect).unwrap());
}

#[test]
fn byte_limit_notice() {
    let d = tempfile::tempdir().unwrap();
    let body: String = (1..=1000)
        .map(|i| format!("{i:04}{}\n", "x".repeat(95)))
        .collect();
    std::fs::write(d.path().join("f"), &body).unwrap();
    let out = run(d.path(), json!({"path": "f", "offset": 2})).unwrap();
    let t = text(&out);
    // 100 bytes per line: 512 lines fit (511 separators + 512*99 = 51199).
    assert!(
        t.ends_with(
            "\n\n[Showing lines 2-513 of 1001 (50.0KB limit). Use offset=514 to continue.]"
        ),
        "{}",
        &t[t.len() - 120..]
    );
    let expect =
        crate::tools::truncate::truncate_head(&body[100..], DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    assert_eq!(
        out.details.unwrap()["truncation"],
        serde_json::to_value(expect).unwrap()
    );
}

#[test]
fn first_line_too_long() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("big"),
        format!("short\n{}\n", "y".repeat(60 * 1024)),
    )
    .unwrap();
    let out = run(d.path(), json!({"path": "big", "offset": 2})).unwrap();
    assert_eq!(
        text(&out),
        "[Line 2 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '2p' big | head -c 51200]"
    );
    let details = out.details.unwrap();
    assert_eq!(details["truncation"]["firstLineExceedsLimit"], true);
    // pi 1.x counts the selected lines without the empty one after the final newline.
    assert_eq!(details["truncation"]["totalLines"], 1);
}

#[test]
fn exactly_the_line_cap_with_a_final_newline_is_not_cut() {
    let d = tempfile::tempdir().unwrap();
    let body = "x\n".repeat(DEFAULT_MAX_LINES);
    std::fs::write(d.path().join("f"), &body).unwrap();
    let out = run(d.path(), json!({"path": "f"})).unwrap();
    assert_eq!(text(&out), body);
    assert!(out.details.is_none());
}

#[test]
fn offset_beyond_end_and_missing_file() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), "a\nb").unwrap();
    assert_eq!(
        run(d.path(), json!({"path": "f", "offset": 5})).unwrap_err(),
        "Offset 5 is beyond end of file (2 lines total)"
    );
    let err = run(d.path(), json!({"path": "nope.txt"})).unwrap_err();
    assert_eq!(
        err,
        format!(
            "ENOENT: no such file or directory, access '{}'",
            d.path().join("nope.txt").display()
        )
    );
    assert!(run(d.path(), json!({}))
        .unwrap_err()
        .starts_with("Validation failed for tool \"read\":"));
}

#[test]
fn images_by_magic_bytes() {
    let d = tempfile::tempdir().unwrap();
    let png = [
        0x89u8, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13,
    ];
    std::fs::write(d.path().join("pic.dat"), png).unwrap();
    let out = run(d.path(), json!({"path": "pic.dat"})).unwrap();
    assert_eq!(text(&out), "Read image file [image/png]");
    match &out.content[1] {
        Content::Image(img) => {
            assert_eq!(img.mime_type, "image/png");
            assert_eq!(img.data, base64_encode(&png));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(sniff_image(b"GIF89a..."), Some("image/gif"));
    assert_eq!(sniff_image(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
    assert_eq!(sniff_image(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
}

#[test]
fn binary_files_are_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("bin"), [0x7Fu8, b'E', b'L', b'F', 0, 1, 2]).unwrap();
    let err = run(d.path(), json!({"path": "bin"})).unwrap_err();
    assert!(err.contains("binary file") && err.contains("xxd"), "{err}");
    std::fs::write(d.path().join("latin1"), b"caf\xe9 au lait").unwrap();
    assert!(run(d.path(), json!({"path": "latin1"})).is_err());
}

#[test]
fn utf8_split_across_sniff_boundary_is_text() {
    let d = tempfile::tempdir().unwrap();
    let mut body = "a".repeat(8191);
    body.push('é'); // straddles the 8 KiB sniff window
    std::fs::write(d.path().join("u"), &body).unwrap();
    assert_eq!(text(&run(d.path(), json!({"path": "u"})).unwrap()), body);
}

/// Makes a FIFO named `name` in `dir` (nobody ever writes to it).
pub(crate) fn mkfifo(dir: &Path, name: &str) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let p = dir.join(name);
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    p
}

#[test]
fn a_fifo_or_a_device_is_refused_instead_of_blocking() {
    let d = tempfile::tempdir().unwrap();
    mkfifo(d.path(), "pipe");
    let err = run(d.path(), json!({"path": "pipe"})).unwrap_err();
    assert_eq!(
        err,
        "Cannot read pipe: it is a named pipe (FIFO), not a regular file"
    );
    let err = run(d.path(), json!({"path": "/dev/zero"})).unwrap_err();
    assert_eq!(
        err,
        "Cannot read /dev/zero: it is a character device, not a regular file"
    );
}
