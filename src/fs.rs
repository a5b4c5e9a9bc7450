//! File-system and hashing helpers shared by every layer: atomic writes, and the SHA-256 used
//! for pins, caches and comment keys.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

/// Reads the regular file at `path` as UTF-8 text of at most `limit` bytes.
///
/// `what` names the input in errors (`config`, `scenario`): ``failed to read config `x`: ...``.
/// Errors: a path that is missing or unreadable, that is not a regular file (a directory,
/// FIFO or device: reading one could block or never end), that is larger than `limit` (checked
/// before reading and again while reading, for a file that grows), or that is not UTF-8.
pub fn read_text(path: &Path, what: &str, limit: u64) -> Result<String> {
    let bytes = read_bytes(path, what, limit)?;
    String::from_utf8(bytes).map_err(|error| {
        anyhow::anyhow!(
            "failed to read {what} `{}`: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            error.utf8_error().valid_up_to()
        )
    })
}

/// Reads the regular file at `path`, at most `limit` bytes. Errors as [`read_text`], but any
/// bytes are accepted.
pub fn read_bytes(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>> {
    let context = || format!("failed to read {what} `{}`", path.display());
    let metadata = std::fs::metadata(path).with_context(context)?;
    if !metadata.is_file() {
        let kind = if metadata.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        bail!("{}: it is {kind}", context());
    }
    let too_large = || {
        anyhow::anyhow!(
            "{}: larger than the {} limit for a {what}",
            context(),
            human_bytes(limit)
        )
    };
    if metadata.len() > limit {
        return Err(too_large());
    }
    let file = std::fs::File::open(path).with_context(context)?;
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(context)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// `limit` as a short size: `4 MiB`, `512 KiB`, `100 bytes`.
fn human_bytes(limit: u64) -> String {
    match limit {
        l if l >= 1 << 30 && l % (1 << 30) == 0 => format!("{} GiB", l >> 30),
        l if l >= 1 << 20 && l % (1 << 20) == 0 => format!("{} MiB", l >> 20),
        l if l >= 1 << 10 && l % (1 << 10) == 0 => format!("{} KiB", l >> 10),
        l => format!("{l} bytes"),
    }
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, then a rename, so a
/// killed run leaves the previous file intact. Creates missing parent directories.
///
/// Errors name the directory or file that could not be created, written or renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let (dir, name) = created_parent(path)?;
    let temporary = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&temporary, bytes)
        .with_context(|| format!("failed to write `{}`", temporary.display()))?;
    std::fs::rename(&temporary, path)
        .with_context(|| format!("failed to write `{}`", path.display()))
}

/// The directory `path` goes in (`.` for a bare name), created if missing, and its file name
/// (`out` when it has none that is UTF-8), for a temporary file beside it.
///
/// Errors: the directory cannot be created, naming it.
fn created_parent(path: &Path) -> Result<(&Path, &str)> {
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("failed to create `{}`", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    Ok((dir, name))
}

/// A file written piece by piece under a temporary name beside `path`, which takes `path`'s
/// place only at [`StreamedFile::commit`]: until then a reader of `path` sees the previous
/// file whole, and a writer that stops early (an error, Ctrl-C) leaves no half file behind
/// (the temporary file is removed when dropped).
pub struct StreamedFile {
    path: std::path::PathBuf,
    file: std::io::BufWriter<tempfile::NamedTempFile>,
}

impl StreamedFile {
    /// Starts the temporary file in `path`'s directory (created if missing).
    ///
    /// Errors: the directory or the file cannot be created, naming it.
    pub fn create(path: &Path) -> Result<StreamedFile> {
        let (dir, name) = created_parent(path)?;
        let prefix = format!(".{name}.tmp-");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix);
        // Readable as a file written with `std::fs::write` is (tempfile's default is 0600).
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
        let file = builder
            .tempfile_in(dir)
            .with_context(|| format!("failed to write `{}`", path.display()))?;
        Ok(StreamedFile {
            path: path.to_path_buf(),
            file: std::io::BufWriter::new(file),
        })
    }

    /// Appends `text` as it is.
    ///
    /// Errors: the write failed, naming the file.
    pub fn write(&mut self, text: &str) -> Result<()> {
        use std::io::Write as _;
        self.file
            .write_all(text.as_bytes())
            .with_context(|| format!("failed to write `{}`", self.path.display()))
    }

    /// Appends `value` as pretty JSON (see `crate::json::pretty`) with a trailing newline,
    /// serialized straight into the file: a large document is never held as one string.
    ///
    /// Errors: the write failed, naming the file.
    pub fn write_pretty_json(&mut self, value: &impl serde::Serialize) -> Result<()> {
        use std::io::Write as _;
        serde_json::to_writer_pretty(&mut self.file, value)
            .map_err(std::io::Error::from)
            .and_then(|()| self.file.write_all(b"\n"))
            .with_context(|| format!("failed to write `{}`", self.path.display()))
    }

    /// Flushes the lines and moves the file to its path, replacing what was there.
    ///
    /// Errors: the flush or the rename failed, naming the file.
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        let file = self
            .file
            .into_inner()
            .map_err(|error| error.into_error())
            .with_context(|| format!("failed to write `{}`", path.display()))?;
        file.persist(&path)
            .map_err(|error| error.error)
            .with_context(|| format!("failed to write `{}`", path.display()))?;
        Ok(())
    }
}

/// Removes each of `paths` that exists; a missing file is not an error.
///
/// Errors: a file that exists but cannot be removed, naming it.
pub fn remove_stale(paths: &[PathBuf]) -> Result<()> {
    for path in paths {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                return Err(error)
                    .with_context(|| format!("failed to remove stale `{}`", path.display()));
            }
        }
    }
    Ok(())
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
    //! File helpers: atomic writes leave no half file; `read_text` refuses odd or oversized files.

    use super::*;

    #[test]
    fn a_streamed_file_replaces_the_old_one_only_when_committed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("trace.jsonl");
        std::fs::write(&path, "previous run\n").expect("write");

        let mut dropped = StreamedFile::create(&path).expect("create");
        dropped.write("half a run").expect("write");
        drop(dropped);
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "previous run\n"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("list").count(),
            1,
            "no temporary file left"
        );

        let mut file = StreamedFile::create(&path).expect("create");
        file.write("a\n").expect("write");
        file.write("b\n").expect("write");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "previous run\n"
        );
        file.commit().expect("commit");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "a\nb\n");
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
            assert_eq!(mode & 0o777, 0o644);
        }
    }

    #[test]
    fn read_text_reads_a_regular_file_within_the_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.yaml");
        std::fs::write(&path, "x: 1\n").expect("write");
        assert_eq!(read_text(&path, "config", 5).expect("read"), "x: 1\n");
    }

    #[test]
    fn read_text_refuses_a_file_over_the_limit_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big.json");
        std::fs::write(&path, vec![b' '; 2049]).expect("write");
        let error = read_text(&path, "fixture", 2048).expect_err("over the limit");
        assert_eq!(
            error.to_string(),
            format!(
                "failed to read fixture `{}`: larger than the 2 KiB limit for a fixture",
                path.display()
            )
        );
    }

    #[test]
    fn read_text_refuses_devices_fifos_and_directories_without_reading() {
        let dir = tempfile::tempdir().expect("tempdir");
        let error = read_text(Path::new("/dev/zero"), "config", 1 << 20).expect_err("a device");
        assert_eq!(
            error.to_string(),
            "failed to read config `/dev/zero`: it is not a regular file (a FIFO, socket or device)"
        );
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        // Opening a FIFO with no writer would block forever; the check comes first.
        let error = read_text(&fifo, "fixture", 1 << 20).expect_err("a FIFO");
        assert!(
            error
                .to_string()
                .ends_with("it is not a regular file (a FIFO, socket or device)")
        );
        let error = read_text(dir.path(), "scenario", 1 << 20).expect_err("a directory");
        assert!(error.to_string().ends_with("it is a directory"), "{error}");
    }

    #[test]
    fn read_text_refuses_bytes_that_are_not_utf8() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("b.json");
        std::fs::write(&path, b"ab\xffc").expect("write");
        let error = read_text(&path, "baseline", 100).expect_err("not UTF-8");
        assert!(
            error
                .to_string()
                .ends_with("not UTF-8 text (invalid byte at offset 2)"),
            "{error}"
        );
    }

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
