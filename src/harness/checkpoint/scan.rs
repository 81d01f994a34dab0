//! Taking a snapshot: walk the workspace as git would see it (`.gitignore`, `.git/info/exclude`
//! and `.ignore` respected, even outside a git repository; hidden files included; `.git` and the
//! checkpoint store itself left out), never following a symlink, and store what changed. A file
//! whose size, times, inode and mode match the stat index is not read again.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::store::{encode_tree, Digest, Index, Node, Stat, Store, Tree};

/// How far a snapshot goes.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Files larger than this are recorded as present but not captured.
    pub max_file_bytes: u64,
    /// A workspace with more entries than this is not snapshotted at all.
    pub max_entries: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 256 << 20,
            max_entries: 100_000,
        }
    }
}

/// What one snapshot did.
#[derive(Debug)]
pub struct Snapshot {
    pub tree: Tree,
    pub digest: Digest,
    /// Bytes written to the store (0 when nothing changed).
    pub new_bytes: u64,
    /// Files read because the index could not vouch for them.
    pub hashed: usize,
    pub skipped: Vec<String>,
}

fn stat_of(m: &std::fs::Metadata) -> Stat {
    Stat {
        size: m.size(),
        mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
        ctime_ns: m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128,
        ino: m.ino(),
        mode: m.mode(),
    }
}

fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

/// Opens a file found by the walk without following a link swapped in since, and without
/// blocking on a FIFO; `None` when it is no longer a regular file.
fn open_regular(path: &Path) -> io::Result<Option<File>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    Ok(file.metadata()?.is_file().then_some(file))
}

/// The workspace's files as a walk that respects ignore files sees them.
pub fn walk(
    root: &Path,
    store_root: &Path,
    limits: &Limits,
) -> Result<Vec<(Vec<u8>, PathBuf, std::fs::Metadata)>, String> {
    let store_root = store_root.to_path_buf();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| e.file_name() != ".git" && e.path() != store_root)
        .build();
    let mut out = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            // An unreadable folder is left out, as git would.
            Err(_) => continue,
        };
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        out.push((
            rel.as_os_str().as_bytes().to_vec(),
            entry.path().to_path_buf(),
            meta,
        ));
        if out.len() > limits.max_entries {
            return Err(format!(
                "the workspace has more than {} files and folders (checkpoints.maxFiles); no checkpoint was taken",
                limits.max_entries
            ));
        }
    }
    Ok(out)
}

/// Snapshots the workspace `root` into `store`, updating the stat index.
pub fn snapshot(store: &Store, root: &Path, limits: &Limits) -> Result<Snapshot, String> {
    let started = now_ns();
    let old = store.load_index();
    let entries = walk(root, &store.root, limits)?;
    let mut index = Index {
        started_ns: started,
        files: Default::default(),
    };
    let mut tree = Tree::new();
    let (mut new_bytes, mut hashed, mut skipped) = (0u64, 0usize, Vec::new());
    let io_err = |p: &Path, e: io::Error| format!("checkpoint: cannot read {}: {e}", p.display());
    for (rel, path, meta) in entries {
        let ft = meta.file_type();
        let node = if ft.is_dir() {
            Node::Dir
        } else if ft.is_symlink() {
            let target = std::fs::read_link(&path).map_err(|e| io_err(&path, e))?;
            let (digest, n) = store
                .put(target.as_os_str().as_bytes())
                .map_err(|e| io_err(&path, e))?;
            new_bytes += n;
            Node::Symlink { digest }
        } else if ft.is_file() && meta.len() <= limits.max_file_bytes {
            let stat = stat_of(&meta);
            let known = old
                .files
                .get(&rel)
                .filter(|(s, _)| *s == stat && s.mtime_ns < old.started_ns)
                .map(|(_, d)| *d);
            let digest = match known {
                Some(d) => d,
                None => {
                    let Some(mut file) = open_regular(&path).map_err(|e| io_err(&path, e))? else {
                        continue;
                    };
                    hashed += 1;
                    let (d, n) = store.put_file(&mut file).map_err(|e| io_err(&path, e))?;
                    new_bytes += n;
                    d
                }
            };
            index.files.insert(rel.clone(), (stat.clone(), digest));
            Node::File {
                digest,
                size: stat.size,
                mode: stat.mode & 0o777,
            }
        } else {
            skipped.push(String::from_utf8_lossy(&rel).into_owned());
            Node::Skipped
        };
        tree.insert(rel, node);
    }
    let (digest, n) = store
        .put(&encode_tree(&tree))
        .map_err(|e| format!("checkpoint: cannot write to {}: {e}", store.root.display()))?;
    new_bytes += n;
    if hashed > 0 || index.files.len() != old.files.len() || old.started_ns == 0 {
        store
            .save_index(&index)
            .map_err(|e| format!("checkpoint: cannot write to {}: {e}", store.root.display()))?;
    }
    Ok(Snapshot {
        tree,
        digest,
        new_bytes,
        hashed,
        skipped,
    })
}
