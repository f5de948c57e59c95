//! Reading a bundle directory into memory, safely: no symlink is ever followed, every file is
//! bounded in size, the walk is bounded in depth and count, and names must be UTF-8. The walk
//! measures first (`lstat`: names, kinds, sizes) and reads only once every bound holds. Anything
//! that is not a directory or a regular file is recorded (not read) so a check can reject it.
//! This module reads; it never judges and never writes.

use crate::receipt::{ENVELOPE_FILE, RECEIPT_FILE};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest single file the verifier reads.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Largest bundle, all files together.
pub const MAX_TOTAL_BYTES: u64 = 1024 * 1024 * 1024;
/// Most entries (files, directories and others) a bundle may hold: a run of the most cases a
/// matrix may have (`judge::bounds::MAX_CASES`, 4,096) on both platforms is 32,768 entries.
pub const MAX_ENTRIES: usize = 50_000;
/// Deepest nesting below the bundle root.
pub const MAX_DEPTH: usize = 32;

/// A bundle read into memory.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub root: PathBuf,
    /// The exact bytes of `receipt.json`.
    pub receipt_bytes: Vec<u8>,
    /// The exact bytes of `receipt.dsse.json`, when present.
    pub envelope_bytes: Option<Vec<u8>>,
    /// The exact bytes of `provenance.dsse.json`, when present.
    pub provenance_envelope_bytes: Option<Vec<u8>>,
    /// Every other regular file: bundle-relative path ('/'-separated) → bytes.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Entries that are neither directories nor regular files, or have unusable names:
    /// relative path (lossy) → what they are ("symlink", "fifo", "socket", "device", "non-utf8-name").
    pub irregular: BTreeMap<String, &'static str>,
}

/// The bundle could not be read at all: no verdict is possible. Messages fit "failed to …".
#[derive(Debug, thiserror::Error)]
#[error("read the bundle {}: {kind}", path.display())]
pub struct BundleError {
    pub path: PathBuf,
    #[source]
    pub kind: BundleErrorKind,
}

#[derive(Debug, thiserror::Error)]
pub enum BundleErrorKind {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("it is not a directory\nhint: pass the run's bundle directory (the one holding receipt.json)")]
    NotADirectory,
    #[error("it has no receipt.json\nhint: pass the run's bundle directory (the one holding receipt.json)")]
    NoReceipt,
    #[error("receipt.json is not a regular file")]
    ReceiptNotAFile,
    #[error("receipt.json does not parse as a version 2 receipt: {0}")]
    Receipt(String),
    #[error("a file is larger than {MAX_FILE_BYTES} bytes")]
    FileTooLarge,
    #[error("the bundle is larger than {MAX_TOTAL_BYTES} bytes")]
    TooLarge,
    #[error("the bundle has more than {MAX_ENTRIES} entries")]
    TooManyEntries,
    #[error("the bundle nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

impl BundleError {
    pub fn new(path: impl Into<PathBuf>, kind: BundleErrorKind) -> Self {
        BundleError {
            path: path.into(),
            kind,
        }
    }

    /// receipt.json exists but does not parse.
    pub fn receipt(path: &Path, error: impl std::fmt::Display) -> Self {
        BundleError::new(path, BundleErrorKind::Receipt(error.to_string()))
    }
}

/// The first pass: names, kinds and sizes from `lstat` alone, so every bound (entries, depth,
/// a file's size, the total) is checked before one byte is read.
#[derive(Debug, Default)]
pub(crate) struct Measured {
    /// Every regular file: bundle-relative path ('/'-separated) and where it is.
    pub files: Vec<(String, PathBuf)>,
    /// As `Bundle::irregular`.
    pub irregular: BTreeMap<String, &'static str>,
    /// The regular files' sizes, summed.
    pub total: u64,
}

/// The bounds of the first pass: the constants above (smaller in tests).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    pub entries: usize,
    pub depth: usize,
    pub file_bytes: u64,
    pub total_bytes: u64,
}

/// The verifier's bounds.
pub(crate) const BOUNDS: Bounds = Bounds {
    entries: MAX_ENTRIES,
    depth: MAX_DEPTH,
    file_bytes: MAX_FILE_BYTES,
    total_bytes: MAX_TOTAL_BYTES,
};

impl Bundle {
    /// Read the bundle at `root` (which itself may be reached through a symlink; nothing below
    /// it is followed).
    pub fn read(root: &Path) -> Result<Bundle, BundleError> {
        let err = |kind| BundleError::new(root, kind);
        let meta = std::fs::metadata(root).map_err(|e| err(e.into()))?;
        if !meta.is_dir() {
            return Err(err(BundleErrorKind::NotADirectory));
        }
        let measured = measure(root, BOUNDS).map_err(err)?;
        if measured.irregular.contains_key(RECEIPT_FILE) {
            return Err(err(BundleErrorKind::ReceiptNotAFile));
        }
        // The second pass: read what the first admitted (each read bounded again, in case a
        // file grew since it was measured).
        let mut files = BTreeMap::new();
        let mut total = 0u64;
        for (rel, path) in measured.files {
            let bytes = read_bounded(&path).map_err(err)?;
            total += bytes.len() as u64;
            if total > MAX_TOTAL_BYTES {
                return Err(err(BundleErrorKind::TooLarge));
            }
            files.insert(rel, bytes);
        }
        let receipt_bytes = files
            .remove(RECEIPT_FILE)
            .ok_or_else(|| err(BundleErrorKind::NoReceipt))?;
        let envelope_bytes = files.remove(ENVELOPE_FILE);
        let provenance_envelope_bytes = files.remove(crate::receipt::PROVENANCE_ENVELOPE_FILE);
        Ok(Bundle {
            root: root.to_path_buf(),
            receipt_bytes,
            envelope_bytes,
            provenance_envelope_bytes,
            files,
            irregular: measured.irregular,
        })
    }
}

/// Measures the tree below `root` (`walkdir`, never following a link; the root itself may be
/// one): every entry is counted as it is listed, so a directory of millions stops the walk at
/// `bounds.entries` without being held in memory; a directory deeper than `bounds.depth` stops
/// it too; a file's size and the running total are checked as each file is met. An entry whose
/// name is not UTF-8 is recorded as irregular and, if a directory, not entered. Entries come in
/// the order the filesystem lists them: when a bundle breaks several bounds, the first met is
/// the one named.
pub(crate) fn measure(root: &Path, bounds: Bounds) -> Result<Measured, BundleErrorKind> {
    let mut measured = Measured::default();
    let mut entries = 0usize;
    let mut walk = walkdir::WalkDir::new(root)
        .min_depth(1)
        .follow_links(false)
        .into_iter();
    while let Some(entry) = walk.next() {
        let entry = entry.map_err(std::io::Error::from)?;
        entries += 1;
        if entries > bounds.entries {
            return Err(BundleErrorKind::TooManyEntries);
        }
        let file_type = entry.file_type();
        let rel = entry
            .path()
            .strip_prefix(root)
            .expect("walkdir yields paths below its root");
        let Some(rel) = rel.to_str() else {
            measured
                .irregular
                .insert(rel.to_string_lossy().into_owned(), "non-utf8-name");
            if file_type.is_dir() {
                walk.skip_current_dir();
            }
            continue;
        };
        let rel = rel.to_string();
        if file_type.is_symlink() {
            measured.irregular.insert(rel, "symlink");
        } else if file_type.is_dir() {
            if entry.depth() > bounds.depth {
                return Err(BundleErrorKind::TooDeep);
            }
        } else if file_type.is_file() {
            let size = entry.metadata().map_err(std::io::Error::from)?.len();
            if size > bounds.file_bytes {
                return Err(BundleErrorKind::FileTooLarge);
            }
            measured.total += size;
            if measured.total > bounds.total_bytes {
                return Err(BundleErrorKind::TooLarge);
            }
            measured.files.push((rel, entry.into_path()));
        } else {
            measured.irregular.insert(rel, special_kind(&file_type));
        }
    }
    Ok(measured)
}

#[cfg(unix)]
fn special_kind(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_fifo() {
        "fifo"
    } else if file_type.is_socket() {
        "socket"
    } else {
        "device"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "special"
}

/// Read at most `MAX_FILE_BYTES` (+1 to detect more), without following a final symlink that
/// replaced the file since the directory was listed.
fn read_bounded(path: &Path) -> Result<Vec<u8>, BundleErrorKind> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NOFOLLOW | O_NONBLOCK: never follow a swapped-in link, never block on a FIFO.
        options.custom_flags(0o400000 | 0o4000);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(BundleErrorKind::Io(std::io::Error::other(
            "a file changed kind while it was read",
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(BundleErrorKind::FileTooLarge);
    }
    // Sized from the metadata (the `Take` below hides it from `read_to_end`): one allocation,
    // no regrowth copies.
    let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(BundleErrorKind::FileTooLarge);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    const SMALL: Bounds = Bounds {
        entries: 6,
        depth: 3,
        file_bytes: 10,
        total_bytes: 15,
    };

    fn tree(files: &[(&str, usize)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, size) in files {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, vec![b'x'; *size]).unwrap();
        }
        dir
    }

    fn listed(measured: &Measured) -> Vec<&str> {
        let mut files: Vec<&str> = measured.files.iter().map(|(r, _)| r.as_str()).collect();
        files.sort();
        files
    }

    #[test]
    fn a_directory_at_the_depth_bound_is_entered_and_one_below_it_stops_the_walk() {
        // a, a/b, a/b/c are directories at depths 1..3; the file is at depth 4.
        let at_bound = tree(&[("a/b/c/f", 1)]);
        let measured = measure(at_bound.path(), SMALL).unwrap();
        assert_eq!(listed(&measured), ["a/b/c/f"]);
        let below = tree(&[("a/b/c/d/f", 1)]);
        assert!(matches!(
            measure(below.path(), SMALL),
            Err(BundleErrorKind::TooDeep)
        ));
    }

    #[test]
    fn every_entry_counts_and_one_past_the_bound_stops_the_walk() {
        // Six entries: the directory d and five files.
        let six = tree(&[("d/1", 1), ("d/2", 1), ("d/3", 1), ("4", 1), ("5", 1)]);
        assert_eq!(measure(six.path(), SMALL).unwrap().files.len(), 5);
        std::fs::create_dir(six.path().join("e")).unwrap();
        assert!(matches!(
            measure(six.path(), SMALL),
            Err(BundleErrorKind::TooManyEntries)
        ));
    }

    #[test]
    fn a_file_over_its_bound_and_files_over_the_total_stop_the_walk() {
        let at_bounds = tree(&[("a", 10), ("b", 5)]);
        assert_eq!(measure(at_bounds.path(), SMALL).unwrap().total, 15);
        let big = tree(&[("a", 11)]);
        assert!(matches!(
            measure(big.path(), SMALL),
            Err(BundleErrorKind::FileTooLarge)
        ));
        let many = tree(&[("a", 10), ("b", 6)]);
        assert!(matches!(
            measure(many.path(), SMALL),
            Err(BundleErrorKind::TooLarge)
        ));
    }

    #[test]
    fn links_and_special_files_are_recorded_never_followed_or_read() {
        let outside = tree(&[("secret", 1)]);
        let dir = tree(&[("ok", 1)]);
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("pipe"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let measured = measure(dir.path(), BOUNDS).unwrap();
        assert_eq!(listed(&measured), ["ok"]);
        assert_eq!(
            measured.irregular,
            BTreeMap::from([
                ("link".to_string(), "symlink"),
                ("pipe".to_string(), "fifo")
            ])
        );
    }

    #[test]
    fn a_directory_whose_name_is_not_utf8_is_recorded_and_not_entered() {
        let dir = tree(&[("ok", 1)]);
        let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"odd\xff"));
        std::fs::create_dir(&odd).unwrap();
        std::fs::write(odd.join("inside"), b"x").unwrap();
        let measured = measure(dir.path(), BOUNDS).unwrap();
        assert_eq!(listed(&measured), ["ok"]);
        assert_eq!(
            measured.irregular,
            BTreeMap::from([("odd\u{fffd}".to_string(), "non-utf8-name")])
        );
    }

    #[test]
    fn the_root_may_be_reached_through_a_link() {
        let dir = tree(&[("sub/f", 3)]);
        let holder = tempfile::tempdir().unwrap();
        let link = holder.path().join("bundle");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        let measured = measure(&link, BOUNDS).unwrap();
        assert_eq!(listed(&measured), ["sub/f"]);
        assert!(measured.irregular.is_empty());
    }
}
