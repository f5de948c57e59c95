//! Copying `/evidence` out of the container into `<bundle>/evidence/`, byte for byte and safely:
//! the engine's archive is read entry by entry, the leading `evidence/` directory is stripped,
//! and anything that could write outside the destination or surprise a reader — absolute paths,
//! `..`, symlinks, hard links, devices, FIFOs, duplicates, oversized files or too many entries —
//! refuses the whole export. It never interprets the records (that is `receipt`).

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// Bound on the archive the engine sends (checked while downloading).
pub const MAX_ARCHIVE_BYTES: u64 = 256 * 1024 * 1024;
/// Bound on any one file.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
pub const MAX_ENTRIES: usize = 100_000;

#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error("extract the evidence archive: {0}")]
    Unsafe(String),
    #[error("extract the evidence archive: it is not a readable tar")]
    Tar(#[source] std::io::Error),
    #[error("write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What was extracted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extracted {
    pub files: usize,
    pub bytes: u64,
}

/// Extract the engine's archive of `/evidence` into `dest` (which must exist and be empty).
pub fn extract(archive: &[u8], dest: &Path) -> Result<Extracted, EvidenceError> {
    let mut tar = tar::Archive::new(archive);
    let mut done = Extracted::default();
    let mut seen = std::collections::BTreeSet::new();
    // Docker names the entries below the copied directory's own name (`evidence/…`); Podman 4
    // roots them at `/` (`/`, `/cases/…`). The first entry says which — Podman's starts with the
    // directory `/` itself — and every later one must follow the same spelling.
    let mut spelling = None;
    for (count, entry) in tar.entries().map_err(EvidenceError::Tar)?.enumerate() {
        if count >= MAX_ENTRIES {
            return Err(EvidenceError::Unsafe(format!(
                "more than {MAX_ENTRIES} entries"
            )));
        }
        let mut entry = entry.map_err(EvidenceError::Tar)?;
        let raw = entry.path().map_err(EvidenceError::Tar)?.into_owned();
        let rooted = *spelling
            .get_or_insert_with(|| raw.as_os_str() == "/" && entry.header().entry_type().is_dir());
        let Some(rel) = strip_top(&raw, rooted)? else {
            // The top directory itself.
            continue;
        };
        if !seen.insert(rel.clone()) {
            return Err(EvidenceError::Unsafe(format!(
                "{} appears twice",
                rel.display()
            )));
        }
        let target = dest.join(&rel);
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            std::fs::create_dir_all(&target).map_err(|source| EvidenceError::Write {
                path: target.clone(),
                source,
            })?;
            continue;
        }
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            return Err(EvidenceError::Unsafe(format!(
                "{} is a {}, only files and directories are accepted",
                raw.display(),
                describe(kind)
            )));
        }
        let size = entry.header().size().map_err(EvidenceError::Tar)?;
        if size > MAX_FILE_BYTES {
            return Err(EvidenceError::Unsafe(format!(
                "{} is {size} bytes, more than {MAX_FILE_BYTES}",
                raw.display()
            )));
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|source| EvidenceError::Write {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let mut bytes = Vec::with_capacity(size as usize);
        entry
            .by_ref()
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(EvidenceError::Tar)?;
        // create_new: never follow or overwrite anything already there.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .map_err(|source| EvidenceError::Write {
                path: target.clone(),
                source,
            })?;
        file.write_all(&bytes)
            .map_err(|source| EvidenceError::Write {
                path: target.clone(),
                source,
            })?;
        done.files += 1;
        done.bytes += bytes.len() as u64;
    }
    Ok(done)
}

/// `evidence/a/b` → `a/b`; `evidence` or `evidence/` → None; anything not below one top
/// directory, absolute, or with `..` is refused. With `rooted` (Podman's spelling): `/a/b` →
/// `a/b`, `/` → None, and a path that is not absolute is refused.
fn strip_top(path: &Path, rooted: bool) -> Result<Option<PathBuf>, EvidenceError> {
    let unsafe_path = || EvidenceError::Unsafe(format!("unsafe path {}", path.display()));
    let mut parts = Vec::new();
    let mut components = path.components().peekable();
    if rooted {
        if components.next() != Some(Component::RootDir) {
            return Err(unsafe_path());
        }
        // The copied directory itself has no name of its own in this spelling.
        parts.push(std::ffi::OsString::from("evidence"));
    }
    for component in components {
        match component {
            Component::Normal(p) => parts.push(p.to_os_string()),
            Component::CurDir => {}
            _ => return Err(unsafe_path()),
        }
    }
    if parts.is_empty() {
        return Err(unsafe_path());
    }
    if parts.len() == 1 {
        return Ok(None);
    }
    Ok(Some(parts[1..].iter().collect()))
}

fn describe(kind: tar::EntryType) -> &'static str {
    match kind {
        tar::EntryType::Symlink => "symlink",
        tar::EntryType::Link => "hard link",
        tar::EntryType::Char | tar::EntryType::Block => "device",
        tar::EntryType::Fifo => "FIFO",
        _ => "special entry",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A tar like the engine's: top directory `evidence/`, then the given files.
    pub(crate) fn evidence_tar(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Directory);
        h.set_mode(0o755);
        h.set_size(0);
        tar.append_data(&mut h, "evidence/", std::io::empty())
            .unwrap();
        for (path, bytes) in files {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Regular);
            h.set_mode(0o644);
            h.set_size(bytes.len() as u64);
            tar.append_data(&mut h, format!("evidence/{path}"), *bytes)
                .unwrap();
        }
        tar.into_inner().unwrap()
    }

    #[test]
    fn files_land_below_the_destination_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let tar = evidence_tar(&[
            ("summary.json", b"{}"),
            ("cases/a/stdout", b"\x00\xffbytes"),
        ]);
        let done = extract(&tar, dir.path()).unwrap();
        assert_eq!(done.files, 2);
        assert_eq!(
            std::fs::read(dir.path().join("cases/a/stdout")).unwrap(),
            b"\x00\xffbytes"
        );
        assert_eq!(
            std::fs::read(dir.path().join("summary.json")).unwrap(),
            b"{}"
        );
    }

    fn with_entry(kind: tar::EntryType, path: &str, link: Option<&str>) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_mode(0o644);
        h.set_size(0);
        match link {
            Some(target) => tar.append_link(&mut h, path, target).unwrap(),
            None => {
                // Write the raw name so `..` survives (the builder refuses it).
                let name = path.as_bytes();
                h.as_old_mut().name[..name.len()].copy_from_slice(name);
                h.set_cksum();
                tar.append(&h, std::io::empty()).unwrap();
            }
        }
        tar.into_inner().unwrap()
    }

    #[test]
    fn escapes_and_links_refuse_the_export() {
        let dir = tempfile::tempdir().unwrap();
        for tar in [
            with_entry(tar::EntryType::Regular, "evidence/../../etc/x", None),
            with_entry(tar::EntryType::Regular, "/etc/passwd", None),
            with_entry(tar::EntryType::Symlink, "evidence/l", Some("/etc/passwd")),
            with_entry(tar::EntryType::Link, "evidence/h", Some("evidence/x")),
            with_entry(tar::EntryType::Fifo, "evidence/f", None),
        ] {
            let err = extract(&tar, dir.path()).unwrap_err();
            assert!(matches!(err, EvidenceError::Unsafe(_)), "{err:?}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// Podman 4's spelling of the same export: the copied directory is `/`, its files `/…`.
    fn rooted_tar(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut raw = |kind: tar::EntryType, name: &str, bytes: &[u8]| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(kind);
            h.set_mode(0o755);
            h.set_size(bytes.len() as u64);
            h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            h.set_cksum();
            tar.append(&h, bytes).unwrap();
        };
        raw(tar::EntryType::Directory, "/", b"");
        for (path, bytes) in files {
            raw(tar::EntryType::Regular, path, bytes);
        }
        tar.into_inner().unwrap()
    }

    #[test]
    fn podmans_rooted_spelling_lands_the_same_files() {
        let dir = tempfile::tempdir().unwrap();
        let tar = rooted_tar(&[("/summary.json", b"{}"), ("/cases/a/stdout", b"out")]);
        let done = extract(&tar, dir.path()).unwrap();
        assert_eq!(done.files, 2);
        assert_eq!(
            std::fs::read(dir.path().join("cases/a/stdout")).unwrap(),
            b"out"
        );
        // Within the rooted spelling, a relative or escaping name is refused.
        for bad in ["evidence/x", "/../x", "/cases/../../x"] {
            let dir = tempfile::tempdir().unwrap();
            let err = extract(&rooted_tar(&[(bad, b"x")]), dir.path()).unwrap_err();
            assert!(matches!(err, EvidenceError::Unsafe(_)), "{bad}: {err:?}");
        }
    }

    #[test]
    fn oversized_files_refuse_the_export() {
        let dir = tempfile::tempdir().unwrap();
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_mode(0o644);
        h.set_size(MAX_FILE_BYTES + 1);
        tar.append_data(
            &mut h,
            "evidence/big",
            std::io::repeat(0).take(MAX_FILE_BYTES + 1),
        )
        .unwrap();
        let err = extract(&tar.into_inner().unwrap(), dir.path()).unwrap_err();
        assert!(err.to_string().contains("more than"), "{err}");
    }
}
