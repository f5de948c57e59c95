//! Reading a bundle directory into memory, safely: no symlink is ever followed, every file is
//! bounded in size, the walk is bounded in depth and count, and names must be UTF-8. Every
//! entry is reached from its parent's directory descriptor (`openat` with `O_NOFOLLOW`, and
//! `O_DIRECTORY` for a directory), never by a path, so no component of what is opened can be a
//! link, even one swapped in while the bundle is read. The walk runs twice: it measures first
//! (`lstat` of each entry: names, kinds, sizes; no file opened) and reads only once every bound
//! holds, then reads each regular file once, in the pass that checks its kind again on the
//! opened descriptor (`fstat`: regular, within its bound; opened `O_NONBLOCK`, so never blocked
//! on a FIFO). Anything that is not a directory or a regular file is recorded (not opened) so a
//! check can reject it. This module reads; it never judges and never writes.

use crate::receipt::{ENVELOPE_FILE, RECEIPT_FILE};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
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
/// Paths inside a kind are the bundle's own, raw: whoever prints the error escapes them
/// (`report::render_error`).
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
    #[error("receipt.json is a directory, not a file\nhint: pass the run's bundle directory (the one holding receipt.json)")]
    ReceiptIsADirectory,
    /// What it is instead: "symlink", "fifo", "socket", "device".
    #[error("receipt.json is a {0}, not a regular file")]
    ReceiptNotAFile(&'static str),
    #[error("receipt.json appears twice in the archive (a duplicate entry; which one an extractor keeps is its choice)")]
    ReceiptTwice,
    #[error("receipt.json does not parse as a version 2 receipt: {0}")]
    Receipt(String),
    /// A file of the bundle (its bundle-relative path) is over the bound.
    #[error("{path} is larger than {limit} bytes")]
    FileTooLarge { path: String, limit: u64 },
    #[error("the bundle is larger than {MAX_TOTAL_BYTES} bytes")]
    TooLarge,
    #[error("the bundle has more than {MAX_ENTRIES} entries")]
    TooManyEntries,
    #[error("the bundle nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// An entry of the bundle (its bundle-relative path; empty for the root) could not be
    /// listed, inspected, opened or read.
    #[error("{} cannot be read: {error}", if path.is_empty() { "its top directory" } else { path.as_str() })]
    Entry {
        path: String,
        #[source]
        error: std::io::Error,
    },
    /// An entry changed kind between the check of its kind and its opening (or vanished):
    /// something is changing the bundle while it is verified.
    #[error("{path} {what} while the bundle was read; verify a bundle nothing else is changing")]
    Changed { path: String, what: &'static str },
    /// The bundle archive is not the one format it may have (`bundle_file`).
    #[error("the archive is malformed: {0}")]
    Archive(String),
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

/// What a walk found: names, kinds, sizes and, when it read them, the files' bytes.
#[derive(Debug, Default)]
pub(crate) struct Measured {
    /// Every regular file: bundle-relative path ('/'-separated) → its bytes when the walk read
    /// them ([`read_tree`]); empty when it only measured ([`measure`]).
    pub files: BTreeMap<String, Vec<u8>>,
    /// As `Bundle::irregular`.
    pub irregular: BTreeMap<String, &'static str>,
    /// Every directory below the top (bundle-relative), so that a copy has the empty ones too.
    pub dirs: Vec<String>,
    /// The regular files' sizes, summed.
    pub total: u64,
    /// Whether the top directory holds a directory named `receipt.json`.
    pub receipt_is_dir: bool,
}

/// The bounds of a walk: the constants above (smaller in tests).
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
        let top = open_root(root).map_err(err)?;
        // The first pass measures (no file opened) so a bound stops the read before a byte of
        // a file is read; the second reads what it finds then, checking everything again.
        walk(top.as_fd(), BOUNDS, false, &mut |_| {}).map_err(err)?;
        let mut tree = walk(top.as_fd(), BOUNDS, true, &mut |_| {}).map_err(err)?;
        if let Some(kind) = tree.irregular.get(RECEIPT_FILE) {
            return Err(err(BundleErrorKind::ReceiptNotAFile(kind)));
        }
        let Some(receipt_bytes) = tree.files.remove(RECEIPT_FILE) else {
            return Err(err(if tree.receipt_is_dir {
                BundleErrorKind::ReceiptIsADirectory
            } else {
                BundleErrorKind::NoReceipt
            }));
        };
        let envelope_bytes = tree.files.remove(ENVELOPE_FILE);
        let provenance_envelope_bytes = tree.files.remove(crate::receipt::PROVENANCE_ENVELOPE_FILE);
        Ok(Bundle {
            root: root.to_path_buf(),
            receipt_bytes,
            envelope_bytes,
            provenance_envelope_bytes,
            files: tree.files,
            irregular: tree.irregular,
        })
    }
}

/// The bundle's top directory, followed if it is a link (the one name the user gave).
fn open_root(root: &Path) -> Result<OwnedFd, BundleErrorKind> {
    rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| BundleErrorKind::Io(e.into()))
}

/// Measures the tree below `root` (the root itself may be a link; nothing below it is
/// followed) from `lstat` alone, opening directories only: every bound is checked as each
/// entry is met, so a directory of millions stops the walk at `bounds.entries` without being
/// held in memory. The files' bytes are left empty.
pub(crate) fn measure(root: &Path, bounds: Bounds) -> Result<Measured, BundleErrorKind> {
    let top = open_root(root)?;
    walk(top.as_fd(), bounds, false, &mut |_| {})
}

/// Reads the tree below `root` (as [`measure`], and each regular file's bytes, once): the
/// self-test's copy of a bundle reads it so, as verification does. `between` is as for the walk
/// (the tests change the tree there).
pub(crate) fn read_tree(
    root: &Path,
    bounds: Bounds,
    between: &mut dyn FnMut(&str),
) -> Result<Measured, BundleErrorKind> {
    let top = open_root(root)?;
    walk(top.as_fd(), bounds, true, between)
}

/// The one walk: each directory listed from its own descriptor, each entry's kind from
/// `lstat` relative to it (`statat` without following), each directory entered and, when
/// `read`, each regular file opened relative to it with `O_NOFOLLOW`. Every entry is counted
/// as it is listed; a directory deeper than `bounds.depth` stops the walk; a file's size and
/// the running total are checked as each file is met, and again from the opened descriptor
/// before a byte is read. An entry whose name is not UTF-8 is recorded as irregular and, if a
/// directory, not entered. Entries come in the order the filesystem lists them: when a bundle
/// breaks several bounds, the first met is the one named. `between` is called with an entry's
/// path after its kind is known and before it is opened (the tests change the tree there).
fn walk(
    top: BorrowedFd<'_>,
    bounds: Bounds,
    read: bool,
    between: &mut dyn FnMut(&str),
) -> Result<Measured, BundleErrorKind> {
    let mut walk = Walk {
        bounds,
        read,
        between,
        entries: 0,
        found: Measured::default(),
    };
    let top = rustix::fs::openat(
        top,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| entry_error("", e))?;
    walk.directory(top, "", 0)?;
    Ok(walk.found)
}

struct Walk<'a> {
    bounds: Bounds,
    read: bool,
    between: &'a mut dyn FnMut(&str),
    entries: usize,
    found: Measured,
}

impl Walk<'_> {
    /// The entries of the directory open at `dir`, whose bundle-relative path is `prefix`
    /// ("" for the top) at `depth` (0 for the top).
    fn directory(
        &mut self,
        dir: OwnedFd,
        prefix: &str,
        depth: usize,
    ) -> Result<(), BundleErrorKind> {
        let mut listing = rustix::fs::Dir::new(dir).map_err(|e| entry_error(prefix, e))?;
        while let Some(entry) = listing.read() {
            let entry = entry.map_err(|e| entry_error(prefix, e))?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            self.entries += 1;
            if self.entries > self.bounds.entries {
                return Err(BundleErrorKind::TooManyEntries);
            }
            let fd = listing.fd().map_err(|e| entry_error(prefix, e))?;
            self.entry(fd, name, prefix, depth + 1)?;
        }
        Ok(())
    }

    /// One entry, `name` in the directory open at `dir`.
    fn entry(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &CStr,
        prefix: &str,
        depth: usize,
    ) -> Result<(), BundleErrorKind> {
        let join = |name: &str| {
            if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}/{name}")
            }
        };
        let Ok(utf8) = name.to_str() else {
            // Recorded, and not entered if a directory.
            let rel = join(&name.to_string_lossy());
            self.found.irregular.insert(rel, "non-utf8-name");
            return Ok(());
        };
        let rel = join(utf8);
        let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| open_error(dir, name, &rel, e, "vanished"))?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory => {
                if depth > self.bounds.depth {
                    return Err(BundleErrorKind::TooDeep);
                }
                if depth == 1 && utf8 == RECEIPT_FILE {
                    self.found.receipt_is_dir = true;
                }
                self.found.dirs.push(rel.clone());
                (self.between)(&rel);
                let sub = rustix::fs::openat(
                    dir,
                    name,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(|e| open_error(dir, name, &rel, e, "is no longer a directory"))?;
                self.directory(sub, &rel, depth)
            }
            FileType::RegularFile => {
                let size = u64::try_from(stat.st_size).unwrap_or(u64::MAX);
                self.count(&rel, size)?;
                let bytes = if self.read {
                    (self.between)(&rel);
                    let bytes = read_file(dir, name, &rel, self.bounds.file_bytes)?;
                    // Counted again at the size read, in case it changed since it was measured.
                    self.found.total -= size;
                    self.count(&rel, bytes.len() as u64)?;
                    bytes
                } else {
                    Vec::new()
                };
                self.found.files.insert(rel, bytes);
                Ok(())
            }
            other => {
                self.found.irregular.insert(rel, special_kind(other));
                Ok(())
            }
        }
    }

    /// A regular file of `size` bytes at `rel`, against the per-file bound and the total.
    fn count(&mut self, rel: &str, size: u64) -> Result<(), BundleErrorKind> {
        if size > self.bounds.file_bytes {
            return Err(BundleErrorKind::FileTooLarge {
                path: rel.to_string(),
                limit: self.bounds.file_bytes,
            });
        }
        self.found.total += size;
        if self.found.total > self.bounds.total_bytes {
            return Err(BundleErrorKind::TooLarge);
        }
        Ok(())
    }
}

/// What the verifier calls an entry that is neither a directory nor a regular file.
fn special_kind(kind: FileType) -> &'static str {
    match kind {
        FileType::Symlink => "symlink",
        FileType::Fifo => "fifo",
        FileType::Socket => "socket",
        _ => "device",
    }
}

fn entry_error(rel: &str, error: Errno) -> BundleErrorKind {
    BundleErrorKind::Entry {
        path: rel.to_string(),
        error: error.into(),
    }
}

/// `name` (at `rel`) in the directory open at `dir` could not be inspected or opened: a link
/// or another kind where its kind was just checked (`ELOOP`, `ENOTDIR`), or gone, is a bundle
/// changing under the reader; anything else (no permission) is named with the system's reason.
fn open_error(
    dir: BorrowedFd<'_>,
    name: &CStr,
    rel: &str,
    error: Errno,
    not_kind: &'static str,
) -> BundleErrorKind {
    let what = match error {
        Errno::LOOP | Errno::NOTDIR => {
            match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(now) if FileType::from_raw_mode(now.st_mode) == FileType::Symlink => {
                    "became a symlink"
                }
                _ => not_kind,
            }
        }
        Errno::NOENT => "vanished",
        _ => return entry_error(rel, error),
    };
    BundleErrorKind::Changed {
        path: rel.to_string(),
        what,
    }
}

/// Read at most `limit` bytes (+1 to detect more) of `name` in the directory open at `dir`,
/// never following a link that replaced it since its kind was checked (`O_NOFOLLOW`), never
/// blocking on a FIFO that did (`O_NONBLOCK`; the opened descriptor must be a regular file).
fn read_file(
    dir: BorrowedFd<'_>,
    name: &CStr,
    rel: &str,
    limit: u64,
) -> Result<Vec<u8>, BundleErrorKind> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| open_error(dir, name, rel, e, "is no longer a regular file"))?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| entry_error(rel, e))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(BundleErrorKind::Changed {
            path: rel.to_string(),
            what: "is no longer a regular file",
        });
    }
    let too_large = || BundleErrorKind::FileTooLarge {
        path: rel.to_string(),
        limit,
    };
    let size = u64::try_from(stat.st_size).unwrap_or(u64::MAX);
    if size > limit {
        return Err(too_large());
    }
    // Sized from the metadata (the `Take` below hides it from `read_to_end`): one allocation,
    // no regrowth copies.
    let mut bytes = Vec::with_capacity(size as usize + 1);
    std::fs::File::from(fd)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| BundleErrorKind::Entry {
            path: rel.to_string(),
            error,
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
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
        measured.files.keys().map(String::as_str).collect()
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
        // Named, on either pass.
        let big = tree(&[("d/big", 11)]);
        for error in [
            measure(big.path(), SMALL).unwrap_err(),
            read_tree(big.path(), SMALL, &mut |_| {}).unwrap_err(),
        ] {
            assert_eq!(error.to_string(), "d/big is larger than 10 bytes");
        }
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

    /// A tree `a/f` ("inside") in a fresh directory, and beside it (same file system) a
    /// directory `outside/f` ("outside") and a place to move `a` to.
    struct Race {
        root: tempfile::TempDir,
        beside: tempfile::TempDir,
    }

    impl Race {
        fn new() -> Race {
            let root = tree(&[("a/f", 0)]);
            std::fs::write(root.path().join("a/f"), b"inside").unwrap();
            let beside = tempfile::tempdir().unwrap();
            std::fs::create_dir(beside.path().join("outside")).unwrap();
            std::fs::write(beside.path().join("outside/f"), b"outside").unwrap();
            Race { root, beside }
        }

        /// What the tester's `renameat2(RENAME_EXCHANGE)` does: `a` moves away and a link to
        /// the outside directory takes its name.
        fn swap_a_for_a_link(&self) {
            std::fs::rename(self.root.path().join("a"), self.beside.path().join("moved")).unwrap();
            std::os::unix::fs::symlink(
                self.beside.path().join("outside"),
                self.root.path().join("a"),
            )
            .unwrap();
        }
    }

    #[test]
    fn every_regular_file_is_read_once_with_its_bytes() {
        let dir = tree(&[("a/b/f", 3), ("g", 2)]);
        let mut opened = Vec::new();
        let read = read_tree(dir.path(), BOUNDS, &mut |rel| opened.push(rel.to_string())).unwrap();
        assert_eq!(
            read.files,
            BTreeMap::from([
                ("a/b/f".to_string(), b"xxx".to_vec()),
                ("g".to_string(), b"xx".to_vec())
            ])
        );
        assert_eq!(read.total, 5);
        opened.sort();
        assert_eq!(opened, ["a", "a/b", "a/b/f", "g"]);
    }

    #[test]
    fn a_directory_swapped_for_a_link_while_its_files_are_read_is_never_followed() {
        // The swap comes after `a` was opened and `a/f`'s kind checked, just before `a/f` is
        // opened: read by path (`<root>/a/f`), that would be the outside file's bytes.
        let race = Race::new();
        let read = read_tree(race.root.path(), BOUNDS, &mut |rel| {
            if rel == "a/f" {
                race.swap_a_for_a_link();
                // The race is real: the path now leads outside (O_NOFOLLOW guards only its
                // last component).
                let by_path = race.root.path().join("a/f");
                assert_eq!(std::fs::read(by_path).unwrap(), b"outside");
            }
        })
        .unwrap();
        assert_eq!(read.files["a/f"], b"inside");
    }

    #[test]
    fn a_directory_swapped_for_a_link_before_it_is_opened_stops_the_read() {
        let race = Race::new();
        let error = read_tree(race.root.path(), BOUNDS, &mut |rel| {
            if rel == "a" {
                race.swap_a_for_a_link();
            }
        })
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "a became a symlink while the bundle was read; verify a bundle nothing else is changing"
        );
    }

    #[test]
    fn a_file_swapped_for_a_link_or_a_fifo_before_it_is_opened_stops_the_read_without_blocking() {
        let race = Race::new();
        let error = read_tree(race.root.path(), BOUNDS, &mut |rel| {
            if rel == "a/f" {
                let f = race.root.path().join("a/f");
                std::fs::remove_file(&f).unwrap();
                std::os::unix::fs::symlink(race.beside.path().join("outside/f"), &f).unwrap();
            }
        })
        .unwrap_err();
        assert!(
            matches!(&error, BundleErrorKind::Changed { path, what: "became a symlink" } if path == "a/f"),
            "{error}"
        );
        let race = Race::new();
        let error = read_tree(race.root.path(), BOUNDS, &mut |rel| {
            if rel == "a/f" {
                let f = race.root.path().join("a/f");
                std::fs::remove_file(&f).unwrap();
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    &f,
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o600),
                    0,
                )
                .unwrap();
            }
        })
        .unwrap_err();
        assert!(
            matches!(&error, BundleErrorKind::Changed { path, what: "is no longer a regular file" } if path == "a/f"),
            "{error}"
        );
    }

    #[test]
    fn a_file_that_grew_past_its_bound_after_it_was_measured_is_named() {
        let dir = tree(&[("d/f", 1)]);
        let error = read_tree(dir.path(), SMALL, &mut |rel| {
            if rel == "d/f" {
                std::fs::write(dir.path().join("d/f"), [b'x'; 11]).unwrap();
            }
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "d/f is larger than 10 bytes");
    }

    #[test]
    fn a_receipt_that_is_a_directory_is_said_to_be_one() {
        let dir = tree(&[("receipt.json/inside", 1)]);
        let error = Bundle::read(dir.path()).unwrap_err();
        assert!(
            matches!(error.kind, BundleErrorKind::ReceiptIsADirectory),
            "{error}"
        );
        assert!(error
            .to_string()
            .contains("receipt.json is a directory, not a file"));
        // Elsewhere, a directory of that name is only a directory.
        let dir = tree(&[("sub/receipt.json/inside", 1)]);
        let error = Bundle::read(dir.path()).unwrap_err();
        assert!(matches!(error.kind, BundleErrorKind::NoReceipt), "{error}");
    }
}
