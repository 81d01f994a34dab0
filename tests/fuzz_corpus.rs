//! Replays the fuzz corpus through the fuzz targets (`fuzz/targets/`): every seed and every
//! input the fuzzer kept (`fuzz/corpus/<target>/`), and every crash it ever found
//! (`fuzz/regressions/<target>/`). A parser change that breaks a property fails here, in
//! `make test`, without running the fuzzer. Hermetic: the targets touch nothing but fresh
//! temporary directories.

// Not part of the binary: std's sorts are fine here (clippy.toml keeps them out of `src/`).
#![allow(clippy::disallowed_methods)]

#[path = "../fuzz/targets/mod.rs"]
mod targets;

use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

fn replay(name: &str) {
    let target = targets::TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .expect("a target of that name");
    targets::FULL_CHECKS.store(true, std::sync::atomic::Ordering::Relaxed);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let corpus = files(&root.join("corpus").join(name));
    assert!(!corpus.is_empty(), "fuzz/corpus/{name}/ holds the seeds");
    let regressions = files(&root.join("regressions").join(name));
    let mut failed = Vec::new();
    for file in corpus.iter().chain(&regressions) {
        let data = std::fs::read(file).expect("read a corpus file");
        if std::panic::catch_unwind(|| target(&data)).is_err() {
            failed.push(file.display().to_string());
        }
    }
    assert!(failed.is_empty(), "{name}: failing inputs {failed:#?}");
}

/// Every target must have a test here.
#[test]
fn every_target_is_replayed() {
    let source = include_str!("fuzz_corpus.rs");
    for (name, _) in targets::TARGETS {
        assert!(
            source.contains(&format!("replay!({name});")),
            "add `replay!({name});` to tests/fuzz_corpus.rs"
        );
    }
}

macro_rules! replay {
    ($name:ident) => {
        #[test]
        fn $name() {
            replay(stringify!($name));
        }
    };
}

replay!(sse);
replay!(eventstream);
replay!(partial_json);
replay!(jsonc);
replay!(frontmatter);
replay!(keys);
replay!(file_args);
replay!(templates);
replay!(session);
replay!(rpc);
replay!(mcp);
replay!(extension_protocol);
