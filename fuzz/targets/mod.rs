//! The fuzz targets: one function per parser that reads outside input. Each takes raw bytes,
//! runs the parser and checks properties beyond "no panic" (the same events whatever the
//! chunking, agreement with serde_json or a reference reading, nothing lost, nothing written);
//! a broken property panics, which libFuzzer reports as a crash.
//!
//! The same functions are compiled twice: into the libFuzzer binaries (`fuzz_targets/`, built
//! by `make fuzz`) and into `tests/fuzz_corpus.rs`, which replays every file of
//! `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` in `make test`.

// One chunk holding the whole stream is the reference every other chunking is compared to.
#![allow(clippy::single_range_in_vec_init)]

pub mod input;

pub mod eventstream;
pub mod extension_protocol;
pub mod file_args;
pub mod frontmatter;
pub mod jsonc;
pub mod keys;
pub mod mcp;
pub mod partial_json;
pub mod rpc;
pub mod session;
pub mod sse;
pub mod templates;

/// Set by the corpus replay in `make test`: targets that check only a sample of the inputs
/// on disk (too slow for every fuzzed input) check every replayed one.
pub static FULL_CHECKS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn full_checks() -> bool {
    FULL_CHECKS.load(std::sync::atomic::Ordering::Relaxed)
}

/// A fuzz target: checks one input, panicking when a property fails.
pub type Target = fn(&[u8]);

/// Every target by name: the name of its libFuzzer binary and of its corpus directories.
pub const TARGETS: &[(&str, Target)] = &[
    ("sse", sse::run),
    ("eventstream", eventstream::run),
    ("partial_json", partial_json::run),
    ("jsonc", jsonc::run),
    ("frontmatter", frontmatter::run),
    ("keys", keys::run),
    ("file_args", file_args::run),
    ("templates", templates::run),
    ("session", session::run),
    ("rpc", rpc::run),
    ("mcp", mcp::run),
    ("extension_protocol", extension_protocol::run),
];
