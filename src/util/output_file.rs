//! Output files: where pi puts output the model was not shown in full (the whole text of a
//! truncated result, a binary resource), as `$TMPDIR/<prefix>-<16 random characters><extension>`. They may
//! hold private data, so only the user may read them, and they are created new (never through
//! a link someone placed at the path).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// Writes `data` to a new output file (mode 0600) and returns its path. `extension` includes
/// the dot.
pub fn write_output_file(prefix: &str, extension: &str, data: &[u8]) -> std::io::Result<PathBuf> {
    let mut file = tempfile::Builder::new()
        .prefix(&format!("{prefix}-"))
        .suffix(extension)
        .rand_bytes(16)
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile()?;
    file.write_all(data)?;
    let (_, path) = file.keep().map_err(|e| e.error)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

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
