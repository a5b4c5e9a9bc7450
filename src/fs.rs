//! File-system and hashing helpers shared by every layer: atomic writes, and the SHA-256 used
//! for pins, caches and comment keys.

use std::path::Path;

use anyhow::{Context as _, Result};

/// Writes `bytes` to `path` atomically: a temporary file beside it, then a rename, so a
/// killed run leaves the previous file intact. Creates missing parent directories.
///
/// Errors name the directory or file that could not be created, written or renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("failed to create `{}`", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let temporary = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&temporary, bytes)
        .with_context(|| format!("failed to write `{}`", temporary.display()))?;
    std::fs::rename(&temporary, path)
        .with_context(|| format!("failed to write `{}`", path.display()))
}

/// Lowercase hex SHA-256 of `bytes` (a `&str` hashes its UTF-8 bytes); 64 characters.
pub fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes.as_ref())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_the_standard_test_vector() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn an_atomic_write_creates_the_directory_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("out/results.json");
        write_atomic(&path, b"{}\n").expect("written");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "{}\n");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("out"))
            .expect("listed")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("results.json")]);
    }
}
