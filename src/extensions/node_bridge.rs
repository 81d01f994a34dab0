//! Running pi's TypeScript/JavaScript extensions: a bundled Node.js bridge (the `node/*.mjs`
//! files, embedded in the binary) is written to a cache directory and started once per
//! session as `node [--experimental-strip-types] bridge.mjs`. It loads every extension module
//! of the session, hands each a `pi` object with pi's ExtensionAPI, serves imports of pi's
//! packages and TypeBox from stand-ins, and speaks protocol 2 for all of them over one pipe.
//! TypeScript runs through Node's type stripping (Node ≥ 22.6) or jiti (found, or installed by
//! the bridge into the cache directory on first use).
//!
//! Also what the bridge learns of pi's models: the built-in catalog is written once, as JSON,
//! beside the bridge, and each session sends only which catalog models it has (ranges), its
//! other models whole, and which providers have a key; the bridge reads the catalog file the
//! first time an extension asks for models.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::ai::catalog;
use crate::resources::model_registry::{ModelEntry, ModelRegistry};
use crate::util::packed::Pack;

/// The bridge's files (`src/extensions/node/*.mjs`, deflated by build.rs), `bridge.mjs`, the
/// entry point, last.
static FILES: Pack = include!(concat!(env!("OUT_DIR"), "/node_bridge.pack.rs"));

/// The `node` to use: `$PI_NODE`, else `node` on PATH.
fn node_program() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PI_NODE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("node"))
        .find(|p| p.is_file())
}

/// `(major, minor)` of a `node --version` answer such as `v22.6.0`.
fn parse_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().trim_start_matches('v').split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

fn node_version(node: &Path) -> Option<(u32, u32)> {
    static VERSION: OnceLock<Option<(u32, u32)>> = OnceLock::new();
    *VERSION.get_or_init(|| {
        let out = crate::util::process::run(
            std::process::Command::new(node).arg("--version"),
            &crate::util::process::RunOptions {
                timeout: Some(std::time::Duration::from_secs(10)),
                max_output: 4096,
                capture_stderr: false,
                ..Default::default()
            },
        )
        .ok()?;
        parse_version(&String::from_utf8_lossy(&out.stdout))
    })
}

/// Whether this Node strips TypeScript types itself.
pub fn strips_types(version: (u32, u32)) -> bool {
    version >= (22, 6)
}

/// The cache directory holding the bridge: `$XDG_CACHE_HOME/pi` or `~/.cache/pi`.
fn cache_dir() -> PathBuf {
    crate::util::sandbox::pi_cache_dir()
        // A hash of the files, so a new pi never runs an old bridge.
        .join(format!("node-bridge-{:016x}", FILES.fingerprint()))
}

/// Writes the bridge files, or checks the ones already written byte for byte against the
/// copy in the binary and rewrites (atomically) any that differ: a file in the cache may have
/// been replaced since (issue 29: with the cache inside a writable root, a confined command
/// could), and a tampered bridge must never run. Returns the bridge's path.
pub fn install() -> Result<PathBuf, String> {
    install_in(&cache_dir())
}

fn install_in(dir: &Path) -> Result<PathBuf, String> {
    let bridge = dir.join("bridge.mjs");
    // A symlink planted in place of the directory or a file is removed, never written through.
    if dir.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
        let _ = std::fs::remove_file(dir);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    // bridge.mjs comes last, so a concurrent pi that sees it sees the whole set.
    for (name, text) in FILES.unpack().files() {
        let path = dir.join(name);
        if same_bytes(&path, text.as_bytes()) {
            continue;
        }
        if path.symlink_metadata().is_ok_and(|m| !m.is_file()) {
            let _ = std::fs::remove_file(&path);
        }
        // Replaced atomically, so a concurrent pi never sees half a file.
        crate::util::atomic::replace(&path, text.as_bytes(), Default::default())
            .map_err(|e| format!("could not write the Node.js bridge: {e}"))?;
    }
    Ok(bridge)
}

/// Whether `path` is a regular file (not a symlink) holding exactly `want`.
fn same_bytes(path: &Path, want: &[u8]) -> bool {
    use std::io::Read;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.is_file() || meta.len() != want.len() as u64 {
        return false;
    }
    let mut have = Vec::with_capacity(want.len());
    std::fs::File::open(path)
        .and_then(|f| f.take(want.len() as u64 + 1).read_to_end(&mut have))
        .is_ok_and(|_| have == want)
}

/// The built-in catalog as the bridge reads it (a JSON array of pi's model objects in catalog
/// order), written beside the bridge once per catalog version (`PI_CATALOG_FINGERPRINT`, set by
/// build.rs from the sources that decide the JSON); returns its path, or `None` when it cannot
/// be written.
fn catalog_file() -> Option<PathBuf> {
    let file = cache_dir().join(concat!("catalog-", env!("PI_CATALOG_FINGERPRINT"), ".json"));
    if file.symlink_metadata().is_ok_and(|m| !m.is_file()) {
        // Never written through a planted symlink.
        let _ = std::fs::remove_file(&file);
    }
    if !file.is_file() {
        let models = catalog::specs().iter().map(|s| model_json(&s.to_model()));
        let text = Value::Array(models.collect()).to_string();
        crate::util::atomic::replace(&file, text.as_bytes(), Default::default()).ok()?;
    }
    Some(file)
}

/// The non-chat catalog (image and classifier models, `ctx.modelRegistry.getModelsOfType()`)
/// beside the bridge, once per catalog version; `None` when it cannot be written.
fn non_chat_file() -> Option<PathBuf> {
    let fingerprint = crate::ai::images::catalog::fingerprint();
    let file = cache_dir().join(format!("non-chat-{fingerprint:016x}.json"));
    if file.symlink_metadata().is_ok_and(|m| !m.is_file()) {
        let _ = std::fs::remove_file(&file);
    }
    if !file.is_file() {
        let text = crate::ai::images::catalog::json_text();
        crate::util::atomic::replace(&file, text.as_bytes(), Default::default()).ok()?;
    }
    Some(file)
}

fn model_json(model: &crate::ai::Model) -> Value {
    serde_json::to_value(model).unwrap_or_default()
}

/// The bridge's `models` message for `registry`: `entries` in registry order, each a
/// `[start, end]` range of catalog models or a whole model, and `auth`, the providers whose
/// models are available. Without a catalog file every model is sent whole.
pub fn models_message(registry: &ModelRegistry) -> Value {
    let catalog_file = catalog_file();
    let mut entries = Vec::new();
    // Catalog models `[start, end)` not pushed yet.
    let mut run: Option<(usize, usize)> = None;
    let mut providers: Vec<&str> = Vec::new();
    for entry in registry.entries() {
        if providers.last() != Some(&entry.provider()) && !providers.contains(&entry.provider()) {
            providers.push(entry.provider());
        }
        let index = match entry {
            ModelEntry::Builtin(spec) if catalog_file.is_some() => catalog::index_of(spec),
            _ => None,
        };
        match (index, run) {
            (Some(i), Some((start, end))) if end == i => run = Some((start, i + 1)),
            _ => {
                if let Some((start, end)) = run.take() {
                    entries.push(json!([start, end]));
                }
                match index {
                    Some(i) => run = Some((i, i + 1)),
                    None => entries.push(model_json(&entry.to_model())),
                }
            }
        }
    }
    if let Some((start, end)) = run {
        entries.push(json!([start, end]));
    }
    // The non-chat models' providers, for `getAvailableOfType()`, and the models.json base
    // URLs that move them.
    let mut base_urls = serde_json::Map::new();
    for m in crate::ai::images::models_of_kind("image", None)
        .into_iter()
        .chain(crate::ai::images::models_of_kind("classifier", None))
    {
        if !providers.contains(&m.provider.as_str()) {
            providers.push(&m.provider);
        }
        if let Some(url) = registry.provider_base_url(&m.provider) {
            base_urls.insert(m.provider.clone(), json!(url));
        }
    }
    providers.retain(|p| registry.has_configured_auth(p));
    json!({
        "type": "models",
        "catalog": catalog_file,
        "entries": entries,
        "auth": providers,
        "nonChat": non_chat_file(),
        "baseUrls": base_urls,
    })
}

/// The command line that starts the bridge.
pub fn command() -> Result<Vec<String>, String> {
    let node = node_program().ok_or(
        "TypeScript/JavaScript extensions need Node.js: `node` was not found on PATH (or set PI_NODE)",
    )?;
    let bridge = install()?;
    let mut argv = vec![node.to_string_lossy().into_owned()];
    if node_version(&node).is_some_and(strips_types) {
        argv.push("--experimental-strip-types".into());
        argv.push("--disable-warning=ExperimentalWarning".into());
    }
    argv.push(bridge.to_string_lossy().into_owned());
    Ok(argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tampered_bridge_is_rewritten_before_use() {
        let dir = tempfile::tempdir().unwrap();
        let bridge = install_in(dir.path()).unwrap();
        let good = std::fs::read(&bridge).unwrap();
        std::fs::write(
            &bridge,
            "import fs from 'fs'; fs.writeFileSync('/tmp/x', '');",
        )
        .unwrap();
        // A file replaced by a symlink: the link is removed, its target never written.
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let other = FILES.unpack().files().next().unwrap().0;
        std::fs::remove_file(dir.path().join(other)).unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join(other)).unwrap();
        assert_eq!(install_in(dir.path()).unwrap(), bridge);
        assert_eq!(std::fs::read(&bridge).unwrap(), good);
        assert!(!dir.path().join(other).is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn versions_decide_type_stripping() {
        assert_eq!(parse_version("v20.20.2\n"), Some((20, 20)));
        assert_eq!(parse_version("garbage"), None);
        assert!(!strips_types((20, 20)));
        assert!(!strips_types((22, 5)));
        assert!(strips_types((22, 6)));
        assert!(strips_types((24, 0)));
    }
}
