//! The candidate archive format, shared by the orchestrator (which writes it) and the verifier
//! (which unpacks the bundled blob to regenerate the image layer): a deterministic `.tar.gz`
//! holding `bin/mcpscope` (sorted entries, mtime 0, uid/gid 0, normalized modes, gzip header
//! without time or name), its runtime manifest (every file's path, size, mode and sha256), and
//! a bounded, safe reader — regular files and directories only, relative paths without `..`,
//! no duplicates, bounded sizes and counts. It never touches the filesystem.

use crate::digest::sha256_hex;
use crate::receipt::{NamedDigest, PackManifest, RuntimeFile};
use std::io::{Read, Write};
use std::path::{Component, Path};

/// Where the candidate binary sits inside the archive (and below `layout::CANDIDATE_DIR`).
pub const ARCHIVE_BIN: &str = "bin/mcpscope";
/// Bounds on what a candidate archive may hold, compressed and unpacked.
pub const MAX_ARCHIVE_BYTES: u64 = 256 * 1024 * 1024;
pub const MAX_UNPACKED_BYTES: u64 = 512 * 1024 * 1024;
pub const MAX_ENTRIES: usize = 10_000;

/// Why an archive was refused; fits "failed to read candidate archive {name}: {problem}".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("read candidate archive {name}: {problem}")]
pub struct ArchiveError {
    pub name: String,
    pub problem: String,
}

/// One regular file inside the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFile {
    /// Relative, `/`-separated, e.g. "bin/mcpscope".
    pub path: String,
    /// Normalized permission bits: 0o755 or 0o644.
    pub mode: u32,
    pub bytes: Vec<u8>,
}

/// The runtime manifest of `files` and the archive's identity.
pub fn manifest(name: &str, archive: &[u8], files: &[ArchiveFile]) -> PackManifest {
    let mut runtime: Vec<RuntimeFile> = files
        .iter()
        .map(|f| RuntimeFile {
            path: f.path.clone(),
            size: f.bytes.len() as u64,
            mode: format!("{:04o}", f.mode),
            sha256: sha256_hex(&f.bytes),
        })
        .collect();
    runtime.sort_by(|a, b| a.path.cmp(&b.path));
    let runtime_manifest_sha256 =
        sha256_hex(&serde_json::to_vec(&runtime).expect("a runtime manifest always serializes"));
    PackManifest {
        schema_version: 1,
        archive: NamedDigest {
            name: name.to_string(),
            sha256: sha256_hex(archive),
        },
        archive_size: archive.len() as u64,
        runtime_manifest_sha256,
        runtime,
    }
}

/// Deterministic `.tar.gz` of `files`: parent directories (0755) added, entries sorted by
/// path, mtime 0, uid/gid 0, no user or group names, gzip header with mtime 0 and no name.
pub fn write_archive(files: &[ArchiveFile]) -> Vec<u8> {
    let mut entries: Vec<(String, Option<&ArchiveFile>)> = Vec::new();
    for file in files {
        let parts: Vec<&str> = file.path.split('/').collect();
        for depth in 1..parts.len() {
            let dir = format!("{}/", parts[..depth].join("/"));
            if !entries.iter().any(|(p, _)| *p == dir) {
                entries.push((dir, None));
            }
        }
        entries.push((file.path.clone(), Some(file)));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));

    let mut tar = tar::Builder::new(Vec::new());
    for (path, file) in entries {
        let mut header = tar::Header::new_ustar();
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        match file {
            None => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_size(0);
                tar.append_data(&mut header, &path, std::io::empty())
            }
            Some(file) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(normalize_mode(file.mode));
                header.set_size(file.bytes.len() as u64);
                tar.append_data(&mut header, &path, file.bytes.as_slice())
            }
        }
        .expect("writing a tar into memory cannot fail");
    }
    let tar_bytes = tar
        .into_inner()
        .expect("finishing an in-memory tar cannot fail");

    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar_bytes)
        .expect("compressing into memory cannot fail");
    gz.finish().expect("compressing into memory cannot fail")
}

/// 0o755 when any execute bit is set, else 0o644.
pub fn normalize_mode(mode: u32) -> u32 {
    if mode & 0o111 != 0 {
        0o755
    } else {
        0o644
    }
}

/// Read and vet an archive: gzip'd tar of regular files and directories only, relative paths
/// without `..`, no duplicates, bounded sizes, and an executable `bin/mcpscope`.
pub fn read_archive(name: &str, bytes: &[u8]) -> Result<Vec<ArchiveFile>, ArchiveError> {
    let invalid = |problem: String| ArchiveError {
        name: name.to_string(),
        problem,
    };
    let reader = Bounded {
        inner: flate2::read::GzDecoder::new(bytes),
        left: MAX_UNPACKED_BYTES,
    };
    let mut archive = tar::Archive::new(reader);
    let mut files: Vec<ArchiveFile> = Vec::new();
    let mut count = 0usize;
    let entries = archive
        .entries()
        .map_err(|e| invalid(format!("not a gzip'd tar ({e})")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| invalid(format!("not a gzip'd tar ({e})")))?;
        count += 1;
        if count > MAX_ENTRIES {
            return Err(invalid(format!("more than {MAX_ENTRIES} entries")));
        }
        let raw_path = entry
            .path()
            .map_err(|e| invalid(format!("unreadable entry path ({e})")))?
            .into_owned();
        let path = relative_path(&raw_path)
            .ok_or_else(|| invalid(format!("unsafe entry path {}", raw_path.display())))?;
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            return Err(invalid(format!(
                "entry {path} is not a regular file or directory"
            )));
        }
        let mode = entry
            .header()
            .mode()
            .map_err(|e| invalid(format!("entry {path} has no mode ({e})")))?;
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| invalid(format!("entry {path} is unreadable ({e})")))?;
        if files.iter().any(|f| f.path == path) {
            return Err(invalid(format!("entry {path} appears twice")));
        }
        files.push(ArchiveFile {
            path,
            mode: mode & 0o7777,
            bytes: data,
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    match files.iter().find(|f| f.path == ARCHIVE_BIN) {
        None => return Err(invalid(format!("no {ARCHIVE_BIN}"))),
        Some(f) if f.mode & 0o111 == 0 => {
            return Err(invalid(format!("{ARCHIVE_BIN} is not executable")))
        }
        Some(_) => {}
    }
    Ok(files)
}

/// `a/b/c` from a tar path made only of normal components (a leading `./` is allowed).
fn relative_path(path: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?.to_string()),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("/"))
    }
}

/// A reader that fails once more than `left` bytes were read: a gzip bomb stops here.
struct Bounded<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(std::io::Error::other(format!(
                "unpacks to more than {MAX_UNPACKED_BYTES} bytes"
            )));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<ArchiveFile> {
        vec![ArchiveFile {
            path: ARCHIVE_BIN.into(),
            mode: 0o700,
            bytes: b"\x7fELF pretend".to_vec(),
        }]
    }

    #[test]
    fn packing_twice_gives_identical_bytes() {
        let a = write_archive(&sample());
        let b = write_archive(&sample());
        assert_eq!(a, b);
        // gzip header: magic, CM, FLG (no name), MTIME = 0, XFL, OS = 255.
        assert_eq!(&a[..4], &[0x1f, 0x8b, 8, 0]);
        assert_eq!(&a[4..8], &[0, 0, 0, 0]);
        assert_eq!(a[9], 255);
    }

    #[test]
    fn archive_entries_are_sorted_with_normalized_metadata() {
        let files = vec![
            ArchiveFile {
                path: "share/z.txt".into(),
                mode: 0o600,
                bytes: b"z".to_vec(),
            },
            sample().remove(0),
        ];
        let bytes = write_archive(&files);
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let entry = entry.unwrap();
            let h = entry.header();
            assert_eq!(h.mtime().unwrap(), 0);
            assert_eq!((h.uid().unwrap(), h.gid().unwrap()), (0, 0));
            seen.push((
                entry.path().unwrap().to_string_lossy().into_owned(),
                h.mode().unwrap(),
            ));
        }
        assert_eq!(
            seen,
            vec![
                ("bin/".to_string(), 0o755),
                ("bin/mcpscope".to_string(), 0o755),
                ("share/".to_string(), 0o755),
                ("share/z.txt".to_string(), 0o644),
            ]
        );
    }

    #[test]
    fn manifest_lists_every_file_and_binds_the_archive() {
        let files = vec![ArchiveFile {
            path: ARCHIVE_BIN.into(),
            mode: 0o755,
            bytes: b"binary".to_vec(),
        }];
        let bytes = write_archive(&files);
        let m = manifest("c.tar.gz", &bytes, &files);
        assert_eq!(m.archive.sha256, sha256_hex(&bytes));
        assert_eq!(m.archive_size, bytes.len() as u64);
        assert_eq!(m.runtime.len(), 1);
        assert_eq!(m.runtime[0].path, "bin/mcpscope");
        assert_eq!(m.runtime[0].mode, "0755");
        assert_eq!(m.runtime[0].sha256, sha256_hex(b"binary"));
        assert_eq!(
            m.runtime_manifest_sha256,
            sha256_hex(&serde_json::to_vec(&m.runtime).unwrap())
        );
        // Reading it back gives the same files.
        let back = read_archive("x", &bytes).unwrap();
        assert_eq!(back, files);
    }

    #[test]
    fn an_archive_with_unsafe_entries_is_refused() {
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        h.set_mode(0o777);
        tar.append_link(&mut h, "bin/mcpscope", "/etc/passwd")
            .unwrap();
        let raw = tar.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&raw).unwrap();
        let bytes = gz.finish().unwrap();
        let err = read_archive("evil", &bytes).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");

        let err = read_archive("junk", b"junk").unwrap_err();
        assert_eq!(err.name, "junk");
    }

    #[test]
    fn relative_paths_reject_escapes() {
        assert_eq!(relative_path(Path::new("./bin/x")), Some("bin/x".into()));
        assert_eq!(relative_path(Path::new("../x")), None);
        assert_eq!(relative_path(Path::new("/etc/x")), None);
        assert_eq!(relative_path(Path::new("a/../../x")), None);
    }
}
