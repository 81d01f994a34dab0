//! Output files: where pi puts output the model was not shown in full (the whole text of a
//! truncated result, a binary resource), as `$TMPDIR/<prefix>-<16 hex><extension>`. They may
//! hold private data, so only the user may read them, and they are created new (never through
//! a link someone placed at the path).

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

fn random_hex() -> String {
    let mut buf = [0u8; 8];
    let from_os = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .is_ok();
    if !from_os {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default();
        buf = (t ^ (u64::from(std::process::id()) << 32)).to_le_bytes();
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `data` to a new output file (mode 0600) and returns its path. `extension` includes
/// the dot.
pub fn write_output_file(prefix: &str, extension: &str, data: &[u8]) -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir();
    let mut last = None;
    for _ in 0..8 {
        let path = dir.join(format!("{prefix}-{}{extension}", random_hex()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(mut f) => {
                f.write_all(data)?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free output file name")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn private_new_files() {
        let p = write_output_file("pi-test", ".txt", b"hello").unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("pi-test-") && name.ends_with(".txt") && name.len() == 8 + 16 + 4);
        assert_eq!(std::fs::read(&p).unwrap(), b"hello");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        std::fs::remove_file(p).unwrap();
    }
}
