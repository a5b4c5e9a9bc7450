//! Seeds of the user's servers: where a run's copy of a seed lives (`{seed}`), and seed
//! archives (`.tar`, `.tar.gz`, `.tgz`) unpacked fresh for every run.
//!
//! An archive is unpacked into `{seed_dir}/<archive name without the extension>`. When every
//! entry of the archive lies under one top-level directory (`tar -cf repo.tar repo`), that
//! directory's contents become `{seed}`; otherwise (several top-level entries, as
//! `tar -C repo -cf repo.tar .` writes) the entries are unpacked into `{seed}` as they are.
//! Both give the same tree. An entry that would land outside `{seed}` is an error.

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::RunPaths;

/// The archive extensions a seed may have, longest first.
const ARCHIVE_EXTENSIONS: [&str; 3] = [".tar.gz", ".tgz", ".tar"];

/// The name of the seed `path` without its archive extension (`repo` for `seeds/repo.tar`),
/// or `None` when `path` is not named as an archive.
pub(crate) fn archive_stem(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy();
    ARCHIVE_EXTENSIONS.iter().find_map(|extension| {
        name.strip_suffix(extension)
            .filter(|stem| !stem.is_empty())
            .map(str::to_owned)
    })
}

impl RunPaths {
    /// The paths of a run in `seed_dir` seeded with `seed`: `{seed}` is
    /// `seed_dir/<archive stem>` for an archive, `seed_dir/<file name>` for another file or
    /// directory, and `seed_dir/seed` without a seed.
    pub fn for_seed(seed_dir: &Path, seed: Option<&Path>) -> RunPaths {
        let name = match seed {
            Some(seed) => archive_stem(seed)
                .or_else(|| seed.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "seed".to_owned()),
            None => "seed".to_owned(),
        };
        RunPaths {
            seed_dir: seed_dir.to_path_buf(),
            seed: seed_dir.join(name),
        }
    }
}

/// Unpacks the tar archive `archive` (gzip-compressed when named `.tar.gz` or `.tgz`) into
/// the directory `into` (created), dropping a single top-level directory as the module says.
/// Regular files, directories, symbolic links and hard links are unpacked; modes are kept.
///
/// Errors, naming the archive (and the entry): it cannot be read or is not a tar archive; an
/// entry with an absolute path or a `..` component; a symbolic link whose target is absolute
/// or leads outside `into`; a hard link to a path outside the archive; any other entry kind
/// (a device or FIFO).
pub(crate) fn unpack(archive: &Path, into: &Path) -> Result<()> {
    let at = || format!("failed to unpack seed archive `{}`", archive.display());
    let entries = entry_paths(archive).with_context(at)?;
    let names: Vec<PathBuf> = entries.iter().map(|(path, _)| path.clone()).collect();
    let strip = single_top(&names);
    for (path, link) in &entries {
        let Some(link) = link else { continue };
        // Where the link lands once the top directory is dropped is what it points from.
        let base = inside(path, strip.as_deref())
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        if link.is_absolute() || normalized(&base.join(link)).is_none() {
            bail!(
                "{}: entry `{}` is a symbolic link to `{}`, outside the seed directory",
                at(),
                path.display(),
                link.display()
            );
        }
    }
    std::fs::create_dir_all(into).with_context(at)?;
    let root = into.canonicalize().with_context(at)?;
    let mut tar = tar::Archive::new(open(archive).with_context(at)?);
    for entry in tar.entries().with_context(at)? {
        let mut entry = entry.with_context(at)?;
        let kind = entry.header().entry_type();
        if skipped(kind) {
            continue;
        }
        let path = entry.path().with_context(at)?.into_owned();
        let Some(relative) = inside(&path, strip.as_deref()) else {
            continue;
        };
        let target = into.join(&relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).with_context(at)?;
            // Links inside the archive may chain; what counts is where the entry really lands.
            if !parent.canonicalize().with_context(at)?.starts_with(&root) {
                bail!(
                    "{}: entry `{}` escapes the seed directory through a symbolic link",
                    at(),
                    path.display()
                );
            }
        }
        if kind.is_hard_link() {
            let link = entry
                .link_name()
                .with_context(at)?
                .map(|link| link.into_owned())
                .unwrap_or_default();
            let source = inside(&link, strip.as_deref())
                .filter(|source| !source.as_os_str().is_empty())
                .with_context(|| {
                    format!(
                        "{}: entry `{}`: a hard link to `{}`, outside the archive",
                        at(),
                        path.display(),
                        link.display()
                    )
                })?;
            std::fs::copy(into.join(source), &target)
                .with_context(|| format!("{}: entry `{}`", at(), path.display()))?;
            continue;
        }
        entry
            .unpack(&target)
            .with_context(|| format!("{}: entry `{}`", at(), path.display()))?;
    }
    Ok(())
}

/// Every entry's normalized path after checking it (see [`unpack`]'s errors), with its
/// target when it is a symbolic link.
fn entry_paths(archive: &Path) -> Result<Vec<(PathBuf, Option<PathBuf>)>> {
    let mut tar = tar::Archive::new(open(archive)?);
    let mut paths = Vec::new();
    for entry in tar.entries()? {
        let entry = entry?;
        let kind = entry.header().entry_type();
        if skipped(kind) {
            continue;
        }
        let path = entry.path()?.into_owned();
        let shown = path.display();
        let Some(normal) = normalized(&path) else {
            bail!("entry `{shown}` escapes the seed directory (an absolute path or `..`)");
        };
        let mut target = None;
        if kind.is_symlink() {
            target = Some(
                entry
                    .link_name()?
                    .map(|l| l.into_owned())
                    .unwrap_or_default(),
            );
        } else if !(kind.is_file() || kind.is_dir() || kind.is_hard_link() || kind.is_contiguous())
        {
            bail!("entry `{shown}` is not a file, directory or link (a device or FIFO)");
        }
        paths.push((normal, target));
    }
    Ok(paths)
}

/// pax and GNU extension headers, which the `tar` crate applies to the next entry.
fn skipped(kind: tar::EntryType) -> bool {
    kind.is_pax_global_extensions()
        || kind.is_pax_local_extensions()
        || kind.is_gnu_longname()
        || kind.is_gnu_longlink()
}

/// `path` without `.` components, or `None` when it is absolute or a `..` leaves its root.
fn normalized(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// The one top-level directory holding every entry, when there is one.
fn single_top(paths: &[PathBuf]) -> Option<PathBuf> {
    let first = paths.iter().find(|path| !path.as_os_str().is_empty())?;
    let top = first.components().next()?.as_os_str().to_owned();
    let all_under = paths
        .iter()
        .filter(|path| !path.as_os_str().is_empty())
        .all(|path| path.components().next().map(|c| c.as_os_str()) == Some(top.as_os_str()));
    // A lone file is not a directory to drop.
    let is_dir = paths.iter().any(|path| path.components().count() > 1);
    (all_under && is_dir).then(|| PathBuf::from(top))
}

/// `path` (an entry) relative to the unpacked root: normalized, `strip` removed; `None` for
/// the stripped directory itself (or the archive's `.`).
fn inside(path: &Path, strip: Option<&Path>) -> Option<PathBuf> {
    let normal = normalized(path)?;
    let relative = match strip {
        Some(strip) => normal.strip_prefix(strip).ok()?.to_path_buf(),
        None => normal,
    };
    (!relative.as_os_str().is_empty()).then_some(relative)
}

/// The archive's bytes, gunzipped when its name says gzip.
fn open(archive: &Path) -> Result<Box<dyn Read>> {
    let file = File::open(archive)?;
    let name = archive.to_string_lossy();
    if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        Ok(Box::new(flate2::read::GzDecoder::new(file)))
    } else {
        Ok(Box::new(file))
    }
}

#[cfg(test)]
mod tests {
    //! Seed archives: one top directory is dropped, several entries are kept, gzip is read,
    //! and an entry that would land outside the seed is an error naming it.

    use super::*;

    /// A tar of `entries`: `(path, Some(contents))` files, `(path, None)` directories; paths
    /// are written into the header as they are (even `..` or absolute ones).
    fn tar_of(entries: &[(&str, Option<&str>)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, contents) in entries {
            let mut header = tar::Header::new_old();
            let name = &mut header.as_old_mut().name;
            name[..path.len()].copy_from_slice(path.as_bytes());
            let data = contents.unwrap_or("").as_bytes();
            header.set_entry_type(match contents {
                Some(_) => tar::EntryType::Regular,
                None => tar::EntryType::Directory,
            });
            header.set_mode(0o644);
            header.set_size(data.len() as u64);
            header.set_cksum();
            builder.append(&header, data).expect("appends");
        }
        builder.into_inner().expect("finishes")
    }

    /// A tar of the file `top.txt` (unless `alone`) and a symbolic link `name` -> `target`.
    fn link_tar(name: &str, target: &str, alone: bool) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        if !alone {
            let mut header = tar::Header::new_gnu();
            header.set_size(3);
            header.set_mode(0o644);
            builder
                .append_data(&mut header, "top.txt", &b"top"[..])
                .expect("appends");
        }
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Symlink);
        header.set_size(0);
        header.set_mode(0o777);
        builder
            .append_link(&mut header, name, target)
            .expect("appends");
        builder.into_inner().expect("finishes")
    }

    fn files_under(root: &Path) -> Vec<String> {
        let mut found = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("reads") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let text = std::fs::read_to_string(&path).expect("reads");
                    let name = path.strip_prefix(root).expect("under").display();
                    found.push(format!("{name}={text}"));
                }
            }
        }
        found.sort();
        found
    }

    #[test]
    fn one_top_directory_becomes_the_seed_itself() {
        let dir = tempfile::tempdir().expect("tempdir");
        let archive = dir.path().join("repo.tar");
        let bytes = tar_of(&[
            ("project/", None),
            ("project/a.txt", Some("one")),
            ("project/sub/b.txt", Some("two")),
        ]);
        std::fs::write(&archive, bytes).expect("writes");
        unpack(&archive, &dir.path().join("out/repo")).expect("unpacks");
        assert_eq!(
            files_under(&dir.path().join("out/repo")),
            ["a.txt=one", "sub/b.txt=two"]
        );
    }

    #[test]
    fn several_top_entries_are_unpacked_into_the_seed_gzipped_or_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = tar_of(&[
            ("./", None),
            ("./a.txt", Some("one")),
            ("./b/c.txt", Some("two")),
        ]);
        std::fs::write(dir.path().join("plain.tar"), &bytes).expect("writes");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &bytes).expect("compresses");
        std::fs::write(
            dir.path().join("zipped.tgz"),
            gz.finish().expect("finishes"),
        )
        .expect("writes");
        for name in ["plain.tar", "zipped.tgz"] {
            let out = dir.path().join(name).with_extension("out");
            unpack(&dir.path().join(name), &out).expect("unpacks");
            assert_eq!(files_under(&out), ["a.txt=one", "b/c.txt=two"], "{name}");
        }
    }

    #[test]
    fn an_entry_climbing_out_of_the_seed_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let archive = dir.path().join("evil.tar");
        std::fs::write(
            &archive,
            tar_of(&[("a.txt", Some("ok")), ("../escaped.txt", Some("x"))]),
        )
        .expect("writes");
        let error = unpack(&archive, &dir.path().join("out")).expect_err("escapes");
        assert_eq!(
            format!("{error:#}"),
            format!(
                "failed to unpack seed archive `{}`: entry `../escaped.txt` escapes the seed directory (an absolute path or `..`)",
                archive.display()
            )
        );
        assert!(!dir.path().join("escaped.txt").exists());
        assert!(
            !dir.path().join("out/a.txt").exists(),
            "nothing is unpacked"
        );
    }

    #[test]
    fn a_symbolic_link_out_of_the_seed_is_an_error_and_one_inside_is_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, target) in [("abs.tar", "/etc/passwd"), ("up.tar", "../../secret")] {
            let archive = dir.path().join(name);
            std::fs::write(&archive, link_tar("sub/link", target, true)).expect("writes");
            let error = unpack(&archive, &dir.path().join("out")).expect_err("escapes");
            assert_eq!(
                format!("{error:#}"),
                format!(
                    "failed to unpack seed archive `{}`: entry `sub/link` is a symbolic link to `{target}`, outside the seed directory",
                    archive.display()
                )
            );
        }
        let archive = dir.path().join("fine.tar");
        std::fs::write(&archive, link_tar("sub/link", "../top.txt", false)).expect("writes");
        unpack(&archive, &dir.path().join("fine")).expect("unpacks");
        assert_eq!(
            std::fs::read_link(dir.path().join("fine/sub/link")).expect("a link"),
            Path::new("../top.txt")
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("fine/sub/link")).expect("reads"),
            "top"
        );
        // Alone, `sub` is the top directory and is dropped: `link` -> `../top.txt` would
        // then point out of the seed.
        let archive = dir.path().join("dropped.tar");
        std::fs::write(&archive, link_tar("sub/link", "../top.txt", true)).expect("writes");
        let error = unpack(&archive, &dir.path().join("dropped")).expect_err("escapes");
        assert!(format!("{error:#}").ends_with(
            "entry `sub/link` is a symbolic link to `../top.txt`, outside the seed directory"
        ));
    }

    #[test]
    fn the_seed_of_an_archive_is_named_without_its_extension() {
        let run = Path::new("/tmp/run");
        let seed = |path: Option<&str>| RunPaths::for_seed(run, path.map(Path::new)).seed;
        assert_eq!(seed(Some("seeds/repo.tar")), run.join("repo"));
        assert_eq!(seed(Some("seeds/db.tar.gz")), run.join("db"));
        assert_eq!(seed(Some("seeds/db.tgz")), run.join("db"));
        assert_eq!(seed(Some("seeds/memory.jsonl")), run.join("memory.jsonl"));
        assert_eq!(seed(Some("seeds/files")), run.join("files"));
        assert_eq!(seed(None), run.join("seed"));
        assert_eq!(archive_stem(Path::new(".tar")), None);
    }
}
