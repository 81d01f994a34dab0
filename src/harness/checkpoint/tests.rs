use super::*;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};

struct Env {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    cps: Checkpoints,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&ws).unwrap();
    fs::create_dir_all(&outside).unwrap();
    let settings = CheckpointSettings {
        enabled: true,
        ..Default::default()
    };
    let cps = Checkpoints::open(&tmp.path().join("agent"), &ws, settings);
    Env {
        ws: cps.workspace.clone(),
        outside: outside.canonicalize().unwrap(),
        cps,
        _tmp: tmp,
    }
}

/// Every non-ignored path under `dir` and what it holds (links as their target text).
fn listing(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    fn go(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().flatten().collect();
        crate::util::sort::sort_by_key(&mut entries, |e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let m = fs::symlink_metadata(&p).unwrap();
            if m.file_type().is_symlink() {
                out.push((rel, format!("-> {}", fs::read_link(&p).unwrap().display())));
            } else if m.is_dir() {
                out.push((rel.clone(), "dir".into()));
                go(root, &p, out);
            } else {
                let bytes = fs::read(&p).unwrap();
                let mode = m.permissions().mode() & 0o777;
                out.push((rel, format!("{mode:o} {:?}", Digest::of(&bytes))));
            }
        }
    }
    go(dir, dir, &mut out);
    out
}

fn rewind_to(cps: &Checkpoints, cp: &Checkpoint) -> Preview {
    let preview = cps.preview(cp).unwrap();
    let failures = cps.restore(&preview, None).unwrap();
    assert!(failures.is_empty(), "{failures:?}");
    preview
}

#[test]
fn a_rewind_restores_edits_creations_deletions_renames_modes_links_and_big_binaries() {
    let e = env();
    let ws = &e.ws;
    fs::create_dir_all(ws.join("src/deep")).unwrap();
    fs::write(ws.join("src/a.rs"), "fn a() {}\n").unwrap();
    fs::write(ws.join("src/deep/b.rs"), "b").unwrap();
    fs::write(ws.join("gone.txt"), "will be deleted").unwrap();
    fs::write(ws.join("old-name.txt"), "renamed later").unwrap();
    fs::write(ws.join("run.sh"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(ws.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    fs::write(ws.join("blob.bin"), &big).unwrap();
    symlink("src/a.rs", ws.join("link")).unwrap();
    fs::write(ws.join(".gitignore"), "target/\n").unwrap();
    fs::create_dir_all(ws.join("target")).unwrap();
    fs::write(ws.join("target/build.o"), "ignored").unwrap();
    let before = listing(ws);
    let cp = e
        .cps
        .record(CheckpointKind::BeforeTurn, None, Some("u1"))
        .unwrap();

    // The turn.
    fs::write(ws.join("src/a.rs"), "fn a() { changed }\n").unwrap();
    fs::remove_file(ws.join("gone.txt")).unwrap();
    fs::rename(ws.join("old-name.txt"), ws.join("new-name.txt")).unwrap();
    fs::write(ws.join("src/new.rs"), "new").unwrap();
    fs::create_dir_all(ws.join("made/inner")).unwrap();
    fs::write(ws.join("made/inner/x"), "x").unwrap();
    fs::set_permissions(ws.join("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    let mut big2 = big.clone();
    big2[1_500_000] ^= 0xff;
    fs::write(ws.join("blob.bin"), &big2).unwrap();
    fs::remove_file(ws.join("link")).unwrap();
    symlink("src/deep", ws.join("link")).unwrap();
    fs::write(ws.join("target/build.o"), "ignored, rebuilt").unwrap();

    let preview = rewind_to(&e.cps, &cp);
    let f = &preview.files;
    assert!(f.added.contains(&"src/new.rs".to_string()), "{f:?}");
    assert!(f.added.contains(&"made".to_string()), "{f:?}");
    assert!(f.removed.contains(&"gone.txt".to_string()), "{f:?}");
    assert!(f.modified.contains(&"blob.bin".to_string()), "{f:?}");
    assert!(f.modified.contains(&"run.sh".to_string()), "{f:?}");
    assert!(f.modified.contains(&"link".to_string()), "{f:?}");
    assert_eq!(
        f.renamed,
        vec![["old-name.txt".to_string(), "new-name.txt".to_string()]]
    );

    let mut after = listing(ws);
    // The ignored build output is left as it is.
    let ignored = after
        .iter()
        .position(|(p, _)| p == "target/build.o")
        .unwrap();
    after.remove(ignored);
    let mut expected = before.clone();
    expected.retain(|(p, _)| p != "target/build.o");
    assert_eq!(after, expected);
    assert_eq!(
        fs::read(ws.join("target/build.o")).unwrap(),
        b"ignored, rebuilt"
    );

    // The rewind is itself a checkpoint: undoing it brings the turn's state back.
    let undo = e
        .cps
        .list()
        .into_iter()
        .rfind(|c| c.kind == CheckpointKind::BeforeRewind)
        .unwrap();
    rewind_to(&e.cps, &undo);
    assert_eq!(fs::read(ws.join("blob.bin")).unwrap(), big2);
    assert_eq!(fs::read_to_string(ws.join("src/new.rs")).unwrap(), "new");
}

#[test]
fn an_unchanged_tree_reads_no_file_and_stores_nothing() {
    let e = env();
    for i in 0..50 {
        fs::write(e.ws.join(format!("f{i}")), format!("{i}")).unwrap();
    }
    let first = e.cps.snapshot().unwrap();
    assert_eq!(first.hashed, 50);
    // Files written within the first snapshot's clock tick are read once more (racily clean).
    std::thread::sleep(std::time::Duration::from_millis(20));
    let _ = e.cps.snapshot().unwrap();
    let again = e.cps.snapshot().unwrap();
    assert_eq!(again.hashed, 0);
    assert_eq!(again.new_bytes, 0);
    assert_eq!(again.digest, first.digest);
    fs::write(e.ws.join("f3"), "changed").unwrap();
    let changed = e.cps.snapshot().unwrap();
    assert_eq!(changed.hashed, 1);
    assert_ne!(changed.digest, first.digest);
}

#[test]
fn a_restore_never_follows_a_link_out_of_the_workspace() {
    let e = env();
    fs::create_dir_all(e.ws.join("dir")).unwrap();
    fs::write(e.ws.join("dir/file"), "mine").unwrap();
    let cp = e
        .cps
        .record(CheckpointKind::BeforeTurn, None, Some("u1"))
        .unwrap();
    // The turn replaces the folder with a link to a folder outside.
    fs::remove_dir_all(e.ws.join("dir")).unwrap();
    symlink(&e.outside, e.ws.join("dir")).unwrap();
    rewind_to(&e.cps, &cp);
    assert!(fs::symlink_metadata(e.ws.join("dir")).unwrap().is_dir());
    assert_eq!(fs::read_to_string(e.ws.join("dir/file")).unwrap(), "mine");
    assert_eq!(
        fs::read_dir(&e.outside).unwrap().count(),
        0,
        "nothing written outside"
    );

    // A tampered tree naming `../` paths is refused as damaged.
    assert!(store::decode_tree(b"d ../escape\0").is_none());
    assert!(store::decode_tree(b"d /abs\0").is_none());
    assert!(store::decode_tree(b"d a//b\0").is_none());
}

#[test]
fn a_link_swapped_in_for_a_parent_folder_is_not_followed() {
    let e = env();
    fs::create_dir_all(e.ws.join("a")).unwrap();
    fs::write(e.ws.join("a/f"), "1").unwrap();
    let cp = e
        .cps
        .record(CheckpointKind::BeforeTurn, None, Some("u1"))
        .unwrap();
    fs::write(e.ws.join("a/f"), "2").unwrap();
    let preview = e.cps.preview(&cp).unwrap();
    // Between the preview and the restore, `a` becomes a link to the outside.
    fs::remove_dir_all(e.ws.join("a")).unwrap();
    symlink(&e.outside, e.ws.join("a")).unwrap();
    let failures = e.cps.restore(&preview, None).unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(
        fs::read_dir(&e.outside).unwrap().count(),
        0,
        "nothing written outside"
    );
}

#[test]
fn files_over_the_size_limit_are_left_alone() {
    let mut e = env();
    e.cps.settings.limits.max_file_bytes = 10;
    fs::write(e.ws.join("small"), "1").unwrap();
    fs::write(e.ws.join("large"), "0123456789abcdef").unwrap();
    let cp = e
        .cps
        .record(CheckpointKind::BeforeTurn, None, Some("u1"))
        .unwrap();
    assert_eq!(cp.skipped, vec!["large".to_string()]);
    fs::write(e.ws.join("large"), "changed beyond the limit").unwrap();
    fs::write(e.ws.join("small"), "2").unwrap();
    let p = rewind_to(&e.cps, &cp);
    assert_eq!(p.not_captured, vec!["large".to_string()]);
    assert_eq!(fs::read_to_string(e.ws.join("small")).unwrap(), "1");
    assert_eq!(
        fs::read_to_string(e.ws.join("large")).unwrap(),
        "changed beyond the limit"
    );
}

#[test]
fn changes_made_since_the_last_turn_are_named_in_the_preview() {
    let e = env();
    fs::write(e.ws.join("a"), "1").unwrap();
    fs::write(e.ws.join("b"), "1").unwrap();
    let cp = e
        .cps
        .record(CheckpointKind::BeforeTurn, None, Some("u1"))
        .unwrap();
    fs::write(e.ws.join("a"), "turn").unwrap();
    e.cps.record(CheckpointKind::AfterTurn, None, None).unwrap();
    fs::write(e.ws.join("b"), "user").unwrap();
    let p = e.cps.preview(&cp).unwrap();
    assert_eq!(p.files.modified, vec!["a".to_string(), "b".to_string()]);
    assert_eq!(p.changed_since_last_turn, vec!["b".to_string()]);
}

#[test]
fn old_checkpoints_are_pruned_by_size_and_their_objects_deleted() {
    let mut e = env();
    e.cps.settings.prune.max_bytes = 3000;
    e.cps.settings.prune.grace = Duration::ZERO;
    let mut cps = Vec::new();
    for i in 0..5u8 {
        fs::write(e.ws.join("data"), vec![i; 1000]).unwrap();
        cps.push(
            e.cps
                .record(CheckpointKind::BeforeTurn, None, Some(&format!("u{i}")))
                .unwrap(),
        );
    }
    let left = e.cps.list();
    assert!(left.len() < 5, "{left:?}");
    assert_eq!(left.last().unwrap().entry_id.as_deref(), Some("u4"));
    let first = Digest::parse(&cps[0].tree).unwrap();
    assert!(
        !e.cps.store.has(&first),
        "the dropped tree's objects are gone"
    );
    assert!(e.cps.store.usage() <= 3000 + 1000);
    // The stat index vouches only for objects still there.
    let index = e.cps.store.load_index();
    assert!(!index.files.is_empty());
    assert!(index.files.values().all(|(_, d)| e.cps.store.has(d)));

    // By age: everything but the newest goes.
    e.cps.settings.prune.max_age_ms = -1;
    fs::write(e.ws.join("data"), "new").unwrap();
    e.cps
        .record(CheckpointKind::BeforeTurn, None, Some("u9"))
        .unwrap();
    let left = e.cps.list();
    assert_eq!(left.len(), 1);
    assert!(e.cps.before_entry("u9").is_some());
}

#[test]
fn the_store_never_touches_the_workspace_git_folder() {
    let e = env();
    fs::create_dir_all(e.ws.join(".git/objects")).unwrap();
    fs::write(e.ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(e.ws.join("a"), "1").unwrap();
    let git_before = listing(&e.ws.join(".git"));
    let cp = e
        .cps
        .record(CheckpointKind::BeforeTurn, None, Some("u1"))
        .unwrap();
    fs::write(e.ws.join("a"), "2").unwrap();
    fs::write(e.ws.join(".git/HEAD"), "changed by the turn\n").unwrap();
    let p = rewind_to(&e.cps, &cp);
    assert_eq!(p.files.modified, vec!["a".to_string()]);
    assert_eq!(
        fs::read_to_string(e.ws.join(".git/HEAD")).unwrap(),
        "changed by the turn\n"
    );
    assert_ne!(listing(&e.ws.join(".git")), git_before);
    assert!(!e.cps.store.root.starts_with(&e.ws));
}
