use super::*;
use crate::ai::{Abort, Content};
use std::os::unix::fs::PermissionsExt;

fn run(dir: &Path, args: Value) -> Result<ToolOutput, String> {
    let ctx = ToolContext {
        cwd: dir.to_path_buf(),
        abort: Abort::new(),
        on_update: &|_| {},
        nested: None,
    };
    WriteTool.execute("c1", args, &ctx)
}

fn text(out: &ToolOutput) -> String {
    match &out.content[0] {
        Content::Text(t) => t.text.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn creates_nested_dirs_and_reports_utf16_length() {
    let d = tempfile::tempdir().unwrap();
    let out = run(d.path(), json!({"path": "a/b/c.txt", "content": "héllo\n"})).unwrap();
    assert_eq!(text(&out), "Successfully wrote to a/b/c.txt");
    assert_eq!(
        fs::read_to_string(d.path().join("a/b/c.txt")).unwrap(),
        "héllo\n"
    );
    let out = run(d.path(), json!({"path": "e.txt", "content": "😀"})).unwrap();
    assert_eq!(text(&out), "Successfully wrote to e.txt");
}

#[test]
fn overwrite_keeps_mode_and_leaves_no_temp_files() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("run.sh");
    fs::write(&p, "old").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    run(
        d.path(),
        json!({"path": p.to_str().unwrap(), "content": "new"}),
    )
    .unwrap();
    assert_eq!(fs::read_to_string(&p).unwrap(), "new");
    assert_eq!(
        fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
}

#[test]
fn writes_through_symlinks() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("real"), "x").unwrap();
    std::os::unix::fs::symlink("real", d.path().join("link")).unwrap();
    run(d.path(), json!({"path": "link", "content": "y"})).unwrap();
    assert!(fs::symlink_metadata(d.path().join("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read_to_string(d.path().join("real")).unwrap(), "y");
}

#[test]
fn missing_args_and_directory_target() {
    let d = tempfile::tempdir().unwrap();
    assert!(run(d.path(), json!({"path": "x"}))
        .unwrap_err()
        .contains("content"));
    fs::create_dir(d.path().join("dir")).unwrap();
    assert!(run(d.path(), json!({"path": "dir", "content": "x"}))
        .unwrap_err()
        .starts_with("EISDIR"));
}

#[test]
fn a_fifo_is_refused_instead_of_blocking_and_stays_a_fifo() {
    use std::os::unix::fs::FileTypeExt;
    let d = tempfile::tempdir().unwrap();
    let p = crate::tools::read::tests::mkfifo(d.path(), "pipe");
    let err = run(d.path(), json!({"path": "pipe", "content": "x"})).unwrap_err();
    assert_eq!(
        err,
        "Cannot write pipe: it is a named pipe (FIFO), not a regular file"
    );
    assert!(fs::metadata(&p).unwrap().file_type().is_fifo());
}
