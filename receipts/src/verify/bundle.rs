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
struct Walk {
    files: Vec<(String, PathBuf)>,
    irregular: BTreeMap<String, &'static str>,
    total: u64,
    entries: usize,
}

impl Bundle {
    /// Read the bundle at `root` (which itself may be reached through a symlink; nothing below
    /// it is followed).
    pub fn read(root: &Path) -> Result<Bundle, BundleError> {
        let err = |kind| BundleError::new(root, kind);
        let meta = std::fs::metadata(root).map_err(|e| err(e.into()))?;
        if !meta.is_dir() {
            return Err(err(BundleErrorKind::NotADirectory));
        }
        let mut walk = Walk {
            files: Vec::new(),
            irregular: BTreeMap::new(),
            total: 0,
            entries: 0,
        };
        walk_dir(root, "", 0, &mut walk).map_err(err)?;
        if walk.irregular.contains_key(RECEIPT_FILE) {
            return Err(err(BundleErrorKind::ReceiptNotAFile));
        }
        // The second pass: read what the first admitted (each read bounded again, in case a
        // file grew since it was measured).
        let mut files = BTreeMap::new();
        let mut total = 0u64;
        for (rel, path) in walk.files {
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
            irregular: walk.irregular,
        })
    }
}

fn walk_dir(dir: &Path, rel: &str, depth: usize, walk: &mut Walk) -> Result<(), BundleErrorKind> {
    if depth > MAX_DEPTH {
        return Err(BundleErrorKind::TooDeep);
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        walk.entries += 1;
        if walk.entries > MAX_ENTRIES {
            return Err(BundleErrorKind::TooManyEntries);
        }
        let name = entry.file_name();
        let child_rel = |name: &str| {
            if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            }
        };
        let Some(name) = name.to_str() else {
            walk.irregular
                .insert(child_rel(&name.to_string_lossy()), "non-utf8-name");
            continue;
        };
        let child = child_rel(name);
        // symlink_metadata: the entry itself, never what a link points to.
        let file_type = entry.file_type()?;
        if file_type.is_symlink() {
            walk.irregular.insert(child, "symlink");
        } else if file_type.is_dir() {
            walk_dir(&entry.path(), &child, depth + 1, walk)?;
        } else if file_type.is_file() {
            let size = entry.metadata()?.len();
            if size > MAX_FILE_BYTES {
                return Err(BundleErrorKind::FileTooLarge);
            }
            walk.total += size;
            if walk.total > MAX_TOTAL_BYTES {
                return Err(BundleErrorKind::TooLarge);
            }
            walk.files.push((child, entry.path()));
        } else {
            walk.irregular.insert(child, special_kind(&file_type));
        }
    }
    Ok(())
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
