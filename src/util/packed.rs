//! Cold text compiled in deflated: the Node.js extension bridge, the HTML export page and the
//! changelog are ~220 KB of text that only rare paths read (starting the extension host, an
//! export, `/changelog`), so `build.rs` deflates each group of files into one [`Pack`] (about a
//! third of the size) and the path that needs it inflates it on use, in well under a
//! millisecond. Nothing on the start-up or streaming paths reads a pack.
//!
//! A consumer declares its pack as
//! `static P: Pack = include!(concat!(env!("OUT_DIR"), "/<name>.pack.rs"));`; the groups and
//! their files are listed in `build.rs` (`PACKS`).

/// A group of text files deflated together at build time.
pub struct Pack {
    /// One raw DEFLATE stream (no zlib or gzip wrapper) of the files, concatenated.
    deflated: &'static [u8],
    /// Each file's name (the last component of its path) and its length in bytes, in order.
    files: &'static [(&'static str, usize)],
    /// FNV-1a over each file's name and then its text, in order: changes whenever any file
    /// does, without inflating anything.
    fingerprint: u64,
}

impl Pack {
    /// Used by the code `build.rs` generates.
    pub const fn new(
        deflated: &'static [u8],
        files: &'static [(&'static str, usize)],
        fingerprint: u64,
    ) -> Pack {
        Pack {
            deflated,
            files,
            fingerprint,
        }
    }

    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Inflates the whole group into one allocation of exactly its size.
    pub fn unpack(&'static self) -> Unpacked {
        let len = self.files.iter().map(|(_, n)| n).sum();
        let mut out = vec![0; len];
        let done = miniz_oxide::inflate::decompress_slice_iter_to_slice(
            &mut out,
            std::iter::once(self.deflated),
            false,
            true,
        );
        // The stream was written by build.rs from valid UTF-8 of exactly this length, and the
        // test below inflates every pack; a mismatch is a build bug, shown as replacement text
        // rather than a crash.
        debug_assert_eq!(done, Ok(len), "a corrupt pack");
        let text = String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Unpacked { pack: self, text }
    }
}

/// The inflated text of a [`Pack`].
pub struct Unpacked {
    pack: &'static Pack,
    text: String,
}

impl Unpacked {
    /// Every file of the group, in the order `build.rs` lists them: `(name, text)`.
    pub fn files(&self) -> impl Iterator<Item = (&'static str, &str)> {
        let mut start = 0;
        self.pack.files.iter().map(move |&(name, len)| {
            let text = self.text.get(start..start + len).unwrap_or_default();
            start += len;
            (name, text)
        })
    }

    /// The text of the file called `name`; empty for a name the group does not hold.
    pub fn file(&self, name: &str) -> &str {
        let found = self.files().find(|(n, _)| *n == name);
        debug_assert!(found.is_some(), "{name} is not in this pack");
        found.map_or("", |(_, text)| text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pack the binary carries, with the directory its files come from.
    fn all() -> [(&'static Pack, &'static str); 4] {
        static BRIDGE: Pack = include!(concat!(env!("OUT_DIR"), "/node_bridge.pack.rs"));
        static EXPORT: Pack = include!(concat!(env!("OUT_DIR"), "/export_page.pack.rs"));
        static CHANGELOG: Pack = include!(concat!(env!("OUT_DIR"), "/changelog.pack.rs"));
        static NON_CHAT: Pack = include!(concat!(env!("OUT_DIR"), "/non_chat_models.pack.rs"));
        [
            (&BRIDGE, "src/extensions/node"),
            (&EXPORT, "src/session/export"),
            (&CHANGELOG, ""),
            (&NON_CHAT, "src/ai/images"),
        ]
    }

    #[test]
    fn every_pack_inflates_to_its_source_files_byte_for_byte() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for (pack, dir) in all() {
            let unpacked = pack.unpack();
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
            let mut count = 0;
            for (name, text) in unpacked.files() {
                let source = std::fs::read_to_string(root.join(dir).join(name)).unwrap();
                assert!(text == source, "{dir}/{name} differs from its source");
                assert_eq!(unpacked.file(name), source);
                for b in name.bytes().chain(text.bytes()) {
                    hash ^= u64::from(b);
                    hash = hash.wrapping_mul(0x0100_0000_01b3);
                }
                count += 1;
            }
            assert!(count > 0);
            assert_eq!(pack.fingerprint(), hash, "{dir}: fingerprint");
            assert!(
                pack.deflated.len() * 3 < unpacked.text.len() * 2,
                "{dir}: deflating saved too little to be worth a pack"
            );
        }
    }

    #[test]
    fn every_asset_file_is_in_its_pack() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for (pack, dir) in all().into_iter().filter(|(_, dir)| !dir.is_empty()) {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let name = entry.unwrap().file_name().into_string().unwrap();
                if !name.ends_with(".rs") {
                    assert!(
                        pack.files.iter().any(|(n, _)| *n == name),
                        "{dir}/{name} is not listed in build.rs's PACKS"
                    );
                }
            }
        }
    }
}
