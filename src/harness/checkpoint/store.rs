//! The checkpoint store of one workspace, under the agent dir
//! (`checkpoints/<workspace-key>/`): content-addressed blobs (SHA-256 of the bytes, written
//! once, read-only), tree manifests (one per distinct workspace state, themselves blobs), the
//! stat index that lets a snapshot skip unchanged files, and `checkpoints.jsonl`, the log of
//! checkpoints. Nothing here touches the workspace or its `.git`.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A SHA-256 digest.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    pub fn of(bytes: &[u8]) -> Digest {
        let d = ring::digest::digest(&ring::digest::SHA256, bytes);
        let mut out = [0u8; 32];
        out.copy_from_slice(d.as_ref());
        Digest(out)
    }

    pub fn hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(64);
        for b in self.0 {
            out.push(DIGITS[(b >> 4) as usize] as char);
            out.push(DIGITS[(b & 15) as usize] as char);
        }
        out
    }

    pub fn parse(hex: &str) -> Option<Digest> {
        if hex.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(Digest(out))
    }
}

/// What a workspace path was when a snapshot was taken.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Node {
    /// A regular file: its content's digest, size and permission bits.
    File {
        digest: Digest,
        size: u64,
        mode: u32,
    },
    /// A symbolic link: the digest of its target text (the link is restored, never followed).
    Symlink {
        digest: Digest,
    },
    Dir,
    /// Present but not captured (too large, a FIFO or device): a restore leaves it alone.
    Skipped,
}

/// A workspace state: relative paths (bytes, `/`-separated) to what they were.
pub type Tree = BTreeMap<Vec<u8>, Node>;

/// A tree as stored: one NUL-terminated record a path, in path order.
pub fn encode_tree(tree: &Tree) -> Vec<u8> {
    let mut out = Vec::with_capacity(tree.len() * 96);
    for (path, node) in tree {
        match node {
            Node::File { digest, size, mode } => {
                out.extend_from_slice(format!("f {mode:o} {} {size} ", digest.hex()).as_bytes())
            }
            Node::Symlink { digest } => {
                out.extend_from_slice(format!("l {} ", digest.hex()).as_bytes())
            }
            Node::Dir => out.extend_from_slice(b"d "),
            Node::Skipped => out.extend_from_slice(b"s "),
        }
        out.extend_from_slice(path);
        out.push(0);
    }
    out
}

pub fn decode_tree(bytes: &[u8]) -> Option<Tree> {
    let mut tree = Tree::new();
    for record in bytes.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let (node, path) = match record.first()? {
            b'f' => {
                let mut parts = record.splitn(5, |b| *b == b' ');
                parts.next();
                let mode = u32::from_str_radix(std::str::from_utf8(parts.next()?).ok()?, 8).ok()?;
                let digest = Digest::parse(std::str::from_utf8(parts.next()?).ok()?)?;
                let size = std::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
                (Node::File { digest, size, mode }, parts.next()?)
            }
            b'l' => {
                let mut parts = record.splitn(3, |b| *b == b' ');
                parts.next();
                let digest = Digest::parse(std::str::from_utf8(parts.next()?).ok()?)?;
                (Node::Symlink { digest }, parts.next()?)
            }
            b'd' => (Node::Dir, record.get(2..)?),
            b's' => (Node::Skipped, record.get(2..)?),
            _ => return None,
        };
        if !is_safe_relative(path) {
            return None;
        }
        tree.insert(path.to_vec(), node);
    }
    Some(tree)
}

/// A relative path with no empty, `.` or `..` component: the only kind a tree may hold, so a
/// tampered manifest cannot name a place outside the workspace.
pub fn is_safe_relative(path: &[u8]) -> bool {
    !path.is_empty()
        && path
            .split(|b| *b == b'/')
            .all(|c| !c.is_empty() && c != b"." && c != b"..")
}

/// What the stat index remembers of a file, to know without reading it that it is unchanged.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Stat {
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub ino: u64,
    pub mode: u32,
}

/// The stat index: each file's stat and digest at the last snapshot, and when that snapshot
/// started (a file modified at or after it may have changed within the clock's resolution, so
/// it is read again: git's "racily clean" rule).
#[derive(Default, Debug)]
pub struct Index {
    pub started_ns: i128,
    pub files: BTreeMap<Vec<u8>, (Stat, Digest)>,
}

const INDEX_MAGIC: &str = "pi-checkpoint-index 1";

impl Index {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = format!("{INDEX_MAGIC} {}\0", self.started_ns).into_bytes();
        for (path, (s, d)) in &self.files {
            out.extend_from_slice(
                format!(
                    "{} {} {} {} {} {} ",
                    d.hex(),
                    s.size,
                    s.mtime_ns,
                    s.ctime_ns,
                    s.ino,
                    s.mode
                )
                .as_bytes(),
            );
            out.extend_from_slice(path);
            out.push(0);
        }
        out
    }

    /// The index, or an empty one when the bytes are not one (every file is then read again).
    pub fn decode(bytes: &[u8]) -> Index {
        let mut records = bytes.split(|b| *b == 0);
        let Some(started_ns) = records
            .next()
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| h.strip_prefix(INDEX_MAGIC))
            .and_then(|n| n.trim().parse().ok())
        else {
            return Index::default();
        };
        let mut files = BTreeMap::new();
        for record in records.filter(|r| !r.is_empty()) {
            let mut parts = record.splitn(7, |b| *b == b' ');
            let mut field = || parts.next().and_then(|p| std::str::from_utf8(p).ok());
            let parsed = (|| {
                let digest = Digest::parse(field()?)?;
                let size = field()?.parse().ok()?;
                let mtime_ns = field()?.parse().ok()?;
                let ctime_ns = field()?.parse().ok()?;
                let ino = field()?.parse().ok()?;
                let mode = field()?.parse().ok()?;
                Some((
                    Stat {
                        size,
                        mtime_ns,
                        ctime_ns,
                        ino,
                        mode,
                    },
                    digest,
                ))
            })();
            let path = parts.next();
            match (parsed, path) {
                (Some(entry), Some(path)) if is_safe_relative(path) => {
                    files.insert(path.to_vec(), entry);
                }
                _ => return Index::default(),
            }
        }
        Index { started_ns, files }
    }
}

/// Why a checkpoint was recorded.
#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "camelCase")]
pub enum CheckpointKind {
    /// Before a prompt's turn: what `/rewind` restores.
    BeforeTurn,
    /// After a run settled: tells later whether the user changed files since.
    AfterTurn,
    /// Just before a rewind restored files, so the rewind can itself be undone.
    BeforeRewind,
}

/// One line of `checkpoints.jsonl`.
#[derive(Serialize, Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    pub kind: CheckpointKind,
    /// Milliseconds since the epoch.
    pub time: i64,
    /// The tree's digest (hex).
    pub tree: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The user message this checkpoint comes before (its session entry id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// Paths present but not captured (too large, special files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

pub struct Store {
    pub root: PathBuf,
}

impl Store {
    /// The store of the workspace `cwd`: `<agent_dir>/checkpoints/<name>-<hash>`.
    pub fn for_workspace(agent_dir: &Path, cwd: &Path) -> Store {
        let key = Digest::of(cwd.as_os_str().as_bytes()).hex();
        let name: String = cwd
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        Store {
            root: agent_dir
                .join("checkpoints")
                .join(format!("{name}-{}", &key[..16])),
        }
    }

    pub fn object_path(&self, d: &Digest) -> PathBuf {
        let hex = d.hex();
        self.root.join("objects").join(&hex[..2]).join(&hex[2..])
    }

    pub fn has(&self, d: &Digest) -> bool {
        self.object_path(d).exists()
    }

    pub fn read(&self, d: &Digest) -> io::Result<Vec<u8>> {
        fs::read(self.object_path(d))
    }

    pub fn open(&self, d: &Digest) -> io::Result<File> {
        File::open(self.object_path(d))
    }

    fn temp_path(&self) -> io::Result<PathBuf> {
        let dir = self.root.join("tmp");
        fs::create_dir_all(&dir)?;
        let n = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        Ok(dir.join(format!("{}-{n}", std::process::id())))
    }

    /// Stores `bytes`, once; returns their digest and how many bytes were new.
    pub fn put(&self, bytes: &[u8]) -> io::Result<(Digest, u64)> {
        let d = Digest::of(bytes);
        if self.has(&d) {
            return Ok((d, 0));
        }
        let tmp = self.temp_path()?;
        fs::write(&tmp, bytes)?;
        self.publish(&tmp, &d)?;
        Ok((d, bytes.len() as u64))
    }

    /// Stores what `file` holds, hashing as it copies (one pass; the digest is of the bytes
    /// actually stored, even if the file changes meanwhile). `known` is the digest a quick read
    /// found, when the object may already be there.
    pub fn put_file(&self, file: &mut File) -> io::Result<(Digest, u64)> {
        let tmp = self.temp_path()?;
        let mut out = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0u64;
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = fs::remove_file(&tmp);
                    return Err(e);
                }
            };
            ctx.update(&buf[..n]);
            if let Err(e) = out.write_all(&buf[..n]) {
                let _ = fs::remove_file(&tmp);
                return Err(e);
            }
            total += n as u64;
        }
        drop(out);
        let mut d = [0u8; 32];
        d.copy_from_slice(ctx.finish().as_ref());
        let d = Digest(d);
        if self.has(&d) {
            fs::remove_file(&tmp)?;
            return Ok((d, 0));
        }
        self.publish(&tmp, &d)?;
        Ok((d, total))
    }

    fn publish(&self, tmp: &Path, d: &Digest) -> io::Result<()> {
        let dest = self.object_path(d);
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent)?;
        }
        let _ = fs::set_permissions(tmp, std::os::unix::fs::PermissionsExt::from_mode(0o444));
        fs::rename(tmp, dest)
    }

    pub fn load_tree(&self, d: &Digest) -> io::Result<Tree> {
        decode_tree(&self.read(d)?).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("checkpoint tree {} is damaged", d.hex()),
            )
        })
    }

    pub fn load_index(&self) -> Index {
        fs::read(self.root.join("index"))
            .map(|b| Index::decode(&b))
            .unwrap_or_default()
    }

    pub fn save_index(&self, index: &Index) -> io::Result<()> {
        let tmp = self.temp_path()?;
        fs::write(&tmp, index.encode())?;
        fs::rename(tmp, self.root.join("index"))
    }

    fn log_path(&self) -> PathBuf {
        self.root.join("checkpoints.jsonl")
    }

    pub fn append(&self, c: &Checkpoint) -> io::Result<()> {
        fs::create_dir_all(&self.root)?;
        let mut line = serde_json::to_string(c).map_err(io::Error::other)?;
        line.push('\n');
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())?
            .write_all(line.as_bytes())
    }

    /// Every checkpoint, oldest first (lines that do not parse are skipped).
    pub fn checkpoints(&self) -> Vec<Checkpoint> {
        fs::read_to_string(self.log_path())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The bytes the store holds, as last counted (a running total between prunes).
    pub fn usage(&self) -> u64 {
        fs::read_to_string(self.root.join("usage"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }

    pub fn set_usage(&self, bytes: u64) -> io::Result<()> {
        fs::create_dir_all(&self.root)?;
        fs::write(self.root.join("usage"), bytes.to_string())
    }

    /// When the oldest checkpoint was taken (the log's first line).
    pub fn oldest_time(&self) -> Option<i64> {
        let file = File::open(self.log_path()).ok()?;
        let mut first = String::new();
        io::BufRead::read_line(&mut io::BufReader::new(file), &mut first).ok()?;
        serde_json::from_str::<Checkpoint>(&first)
            .ok()
            .map(|c| c.time)
    }

    pub fn rewrite_log(&self, list: &[Checkpoint]) -> io::Result<()> {
        let mut text = String::new();
        for c in list {
            text.push_str(&serde_json::to_string(c).map_err(io::Error::other)?);
            text.push('\n');
        }
        let tmp = self.temp_path()?;
        fs::write(&tmp, text)?;
        fs::rename(tmp, self.log_path())
    }
}
