//! Bounded, symlink-safe access to one fixed file below a trusted base
//! directory. Every profile reads configuration through [`read_file`],
//! probes instruction metadata through [`probe_file`] and lists the one
//! directory a client documents as a set of config files (Continue's
//! `.continue/mcpServers/`) through [`list_dir`]; nothing else in the crate
//! touches the filesystem except root selection in `root.rs`.
//!
//! Rules (the same for every profile):
//! - The base (the selected root, an ancestor of it, the home directory or the
//!   managed directory) is trusted and may resolve through symlinks. Every
//!   component below it is opened with `openat` + `O_NOFOLLOW`, one at a time;
//!   a symlink anywhere below the base, dangling or not, is `symlink-skipped`.
//! - The final file is `lstat`-ed first (so a device, FIFO or socket is never
//!   even opened), then opened with `O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC` and
//!   checked again with `fstat` (a replacement between the two is caught and
//!   can never block). Anything but a regular file is `not-file`.
//! - At most [`READ_LIMIT`] bytes are accepted: a file of exactly the limit is
//!   read, one byte more is `too-large`, and never more than limit + 1 bytes
//!   are read.
//! - OS errors become codes ([`Reason`]); their text is never kept.
//!
//! This module must never write, create, or follow a symlink below the base,
//! and [`probe_file`] must never open the file's contents (it uses `lstat`
//! and `access` only). It is a snapshot, not an atomic view: directories can
//! be replaced concurrently.

use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;

use crate::model::{FileState, Reason, Unavailable};

/// The per-file read limit: 1 MiB.
pub const READ_LIMIT: usize = 1 << 20;

/// Flags for directories on the way. `O_PATH` (Linux) needs no read
/// permission on the directory itself, only search permission to go through
/// it, exactly like an ordinary path lookup.
#[cfg(any(target_os = "linux", target_os = "android"))]
const DIR_FLAGS: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// Flags for the final open of a configuration file.
const FILE_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOCTTY);

/// Read `base/rel[0]/…/rel[n]` with the default 1 MiB limit.
///
/// `rel` holds single path components (no `/`); the last one is the file.
pub fn read_file(base: &Path, rel: &[&str]) -> Result<Vec<u8>, Unavailable> {
    read_file_limited(base, rel, READ_LIMIT)
}

/// [`read_file`] with an explicit limit (tests and benchmarks).
pub fn read_file_limited(base: &Path, rel: &[&str], limit: usize) -> Result<Vec<u8>, Unavailable> {
    let (name, dirs) = rel.split_last().expect("a file name");
    let dir = open_parent(base, dirs)?;

    // lstat first: a device/FIFO/socket is classified without being opened.
    let st = rfs::statat(&dir, *name, AtFlags::SYMLINK_NOFOLLOW).map_err(final_error)?;
    check_regular(FileType::from_raw_mode(st.st_mode))?;
    if st.st_size as u64 > limit as u64 {
        return Err(Unavailable::new(
            FileState::TooLarge,
            Reason::ExceedsReadLimit,
        ));
    }

    let fd = rfs::openat(&dir, *name, FILE_FLAGS, Mode::empty()).map_err(final_error)?;
    // Re-check on the opened descriptor: the entry may have been replaced.
    let st = rfs::fstat(&fd).map_err(from_errno)?;
    check_regular(FileType::from_raw_mode(st.st_mode))?;
    read_bounded(&fd, st.st_size.max(0) as u64, limit)
}

/// Metadata of `base/rel…` without opening the file: its size when it is a
/// readable regular file. Uses `lstat` and `access(R_OK)` only.
pub fn probe_file(base: &Path, rel: &[&str]) -> Result<u64, Unavailable> {
    let (name, dirs) = rel.split_last().expect("a file name");
    let dir = open_parent(base, dirs)?;
    let st = rfs::statat(&dir, *name, AtFlags::SYMLINK_NOFOLLOW).map_err(final_error)?;
    check_regular(FileType::from_raw_mode(st.st_mode))?;
    // No flags: plain faccessat, which every seccomp profile allows (some
    // container runtimes answer faccessat2 with EPERM). The entry was just
    // seen to be a regular file, not a symlink.
    rfs::accessat(&dir, *name, rfs::Access::READ_OK, AtFlags::empty()).map_err(final_error)?;
    Ok(st.st_size.max(0) as u64)
}

/// The most directory entries [`list_dir`] looks at.
pub const LIST_LIMIT: usize = 4096;

/// A directory's entry names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// Entry names (UTF-8 only; `.` and `..` left out), sorted.
    pub names: Vec<String>,
    /// More than [`LIST_LIMIT`] entries: `names` is not the whole directory.
    pub truncated: bool,
}

/// The entry names of the directory `base/rel[0]/…/rel[n]`, walked like
/// [`read_file`]: every component no-follow, the directory itself `lstat`-ed
/// (a symlink is `symlink-skipped`, a file `not-file`) and opened with
/// `O_NOFOLLOW | O_DIRECTORY`. At most [`LIST_LIMIT`] entries are read. Names
/// that are not UTF-8 are left out (no client can name them in a config).
pub fn list_dir(base: &Path, rel: &[&str]) -> Result<Listing, Unavailable> {
    let (name, dirs) = rel.split_last().expect("a directory name");
    let parent = open_parent(base, dirs)?;
    let st = rfs::statat(&parent, *name, AtFlags::SYMLINK_NOFOLLOW).map_err(final_error)?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Directory => {}
        FileType::Symlink => {
            return Err(Unavailable::new(FileState::SymlinkSkipped, Reason::Symlink))
        }
        other => {
            check_regular(other)?;
            return Err(Unavailable::new(FileState::NotFile, Reason::OtherFileType));
        }
    }
    let flags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC)
        .union(OFlags::NONBLOCK);
    let fd = rfs::openat(&parent, *name, flags, Mode::empty()).map_err(final_error)?;
    let mut dir = rfs::Dir::new(fd).map_err(from_errno)?;
    let mut names = Vec::new();
    let mut seen = 0;
    let mut truncated = false;
    while let Some(entry) = dir.read() {
        let entry = entry.map_err(from_errno)?;
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        seen += 1;
        if seen > LIST_LIMIT {
            truncated = true;
            break;
        }
        if let Ok(n) = std::str::from_utf8(bytes) {
            names.push(n.to_owned());
        }
    }
    names.sort();
    Ok(Listing { names, truncated })
}

/// Whether `dir` (a trusted, canonical directory) holds an entry `name` of
/// any type (`lstat`, never followed, never opened): how a client's
/// project-root marker such as `.git` is found.
pub fn entry_exists(dir: &Path, name: &str) -> bool {
    rfs::openat(CWD, dir, DIR_FLAGS, Mode::empty())
        .and_then(|d| rfs::statat(&d, name, AtFlags::SYMLINK_NOFOLLOW))
        .is_ok()
}

/// Open the trusted base (following symlinks), then each directory component
/// with `O_NOFOLLOW`.
fn open_parent(base: &Path, dirs: &[&str]) -> Result<OwnedFd, Unavailable> {
    let mut fd = rfs::openat(CWD, base, DIR_FLAGS, Mode::empty()).map_err(base_error)?;
    for comp in dirs {
        debug_assert!(!comp.contains('/') && !comp.is_empty() && *comp != "..");
        match rfs::openat(&fd, *comp, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(next) => fd = next,
            Err(e) => return Err(component_error(&fd, comp, e)),
        }
    }
    Ok(fd)
}

fn base_error(e: Errno) -> Unavailable {
    match e {
        Errno::NOTDIR => Unavailable::new(FileState::Missing, Reason::ParentNotDirectory),
        _ => from_errno(e),
    }
}

/// A directory component failed to open: find out whether it is a symlink,
/// something other than a directory, or an ordinary error.
fn component_error(dir: &OwnedFd, comp: &str, e: Errno) -> Unavailable {
    if matches!(e, Errno::LOOP | Errno::NOTDIR | Errno::MLINK) {
        return match rfs::statat(dir, comp, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                Unavailable::new(FileState::SymlinkSkipped, Reason::SymlinkInPath)
            }
            Ok(_) => Unavailable::new(FileState::Missing, Reason::ParentNotDirectory),
            Err(e) => from_errno(e),
        };
    }
    from_errno(e)
}

/// Errors of the final `lstat`/`open`/`access`.
fn final_error(e: Errno) -> Unavailable {
    match e {
        // O_NOFOLLOW on a symlink (Linux/macOS: ELOOP, FreeBSD: EMLINK).
        Errno::LOOP | Errno::MLINK => Unavailable::new(FileState::SymlinkSkipped, Reason::Symlink),
        // open() of a socket.
        Errno::NXIO => Unavailable::new(FileState::NotFile, Reason::Socket),
        _ => from_errno(e),
    }
}

/// The general errno mapping. Unit-tested directly, because tests run as
/// root, where file modes never produce EACCES.
pub(crate) fn from_errno(e: Errno) -> Unavailable {
    match e {
        Errno::NOENT => Unavailable::MISSING,
        Errno::NOTDIR => Unavailable::new(FileState::Missing, Reason::ParentNotDirectory),
        Errno::ACCESS | Errno::PERM => {
            Unavailable::new(FileState::Unreadable, Reason::PermissionDenied)
        }
        Errno::ISDIR => Unavailable::new(FileState::NotFile, Reason::Directory),
        _ => Unavailable::new(FileState::Unreadable, Reason::IoError),
    }
}

fn check_regular(t: FileType) -> Result<(), Unavailable> {
    let reason = match t {
        FileType::RegularFile => return Ok(()),
        FileType::Symlink => {
            return Err(Unavailable::new(FileState::SymlinkSkipped, Reason::Symlink));
        }
        FileType::Directory => Reason::Directory,
        FileType::Fifo => Reason::Fifo,
        FileType::Socket => Reason::Socket,
        FileType::CharacterDevice | FileType::BlockDevice => Reason::Device,
        _ => Reason::OtherFileType,
    };
    Err(Unavailable::new(FileState::NotFile, reason))
}

/// Read at most `limit + 1` bytes; more than `limit` is `too-large`.
fn read_bounded(fd: &OwnedFd, size_hint: u64, limit: usize) -> Result<Vec<u8>, Unavailable> {
    let cap = limit + 1;
    // The size hint avoids regrowth for ordinary files; files that report 0
    // (procfs-like) still grow up to the cap.
    let mut buf = vec![0u8; (size_hint.min(limit as u64) as usize + 1).min(cap)];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            if buf.len() == cap {
                break;
            }
            let grown = (buf.len() * 2).max(4096).min(cap);
            buf.resize(grown, 0);
        }
        match rustix::io::read(fd, &mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(from_errno(e)),
        }
    }
    if filled > limit {
        return Err(Unavailable::new(
            FileState::TooLarge,
            Reason::ExceedsReadLimit,
        ));
    }
    buf.truncate(filled);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn err(state: FileState, reason: Reason) -> Result<Vec<u8>, Unavailable> {
        Err(Unavailable::new(state, reason))
    }

    #[test]
    fn reads_a_regular_file() {
        let t = tmp();
        fs::write(t.path().join("a.json"), b"{}").unwrap();
        assert_eq!(read_file(t.path(), &["a.json"]), Ok(b"{}".to_vec()));
    }

    #[test]
    fn missing_file_and_missing_directory_are_missing() {
        let t = tmp();
        assert_eq!(read_file(t.path(), &["nope"]), Err(Unavailable::MISSING));
        assert_eq!(
            read_file(t.path(), &["d", "nope"]),
            Err(Unavailable::MISSING)
        );
        assert_eq!(
            probe_file(t.path(), &["d", "nope"]),
            Err(Unavailable::MISSING)
        );
        assert_eq!(
            read_file(&t.path().join("absent-base"), &["x"]),
            Err(Unavailable::MISSING)
        );
    }

    #[test]
    fn exactly_the_limit_is_read_and_one_more_byte_is_too_large() {
        let t = tmp();
        fs::write(t.path().join("exact"), vec![b' '; READ_LIMIT]).unwrap();
        fs::write(t.path().join("over"), vec![b' '; READ_LIMIT + 1]).unwrap();
        assert_eq!(read_file(t.path(), &["exact"]).unwrap().len(), READ_LIMIT);
        assert_eq!(
            read_file(t.path(), &["over"]),
            err(FileState::TooLarge, Reason::ExceedsReadLimit)
        );
    }

    #[test]
    fn read_bounded_stops_at_limit_plus_one_even_when_fstat_lies() {
        // A size hint of 0 (procfs-like) must still stop at limit + 1.
        let t = tmp();
        fs::write(t.path().join("f"), vec![b'x'; 10_000]).unwrap();
        let fd = rfs::open(t.path().join("f"), OFlags::RDONLY, Mode::empty()).unwrap();
        assert_eq!(
            read_bounded(&fd, 0, 100),
            err(FileState::TooLarge, Reason::ExceedsReadLimit)
        );
        // Exactly 101 bytes were consumed from the descriptor.
        let pos = rustix::fs::seek(&fd, rustix::fs::SeekFrom::Current(0)).unwrap();
        assert_eq!(pos, 101);
        let fd = rfs::open(t.path().join("f"), OFlags::RDONLY, Mode::empty()).unwrap();
        assert_eq!(read_bounded(&fd, 0, 10_000).unwrap().len(), 10_000);
    }

    #[test]
    fn final_symlinks_are_skipped_dangling_or_not() {
        let t = tmp();
        fs::write(t.path().join("real"), b"{}").unwrap();
        symlink("real", t.path().join("link")).unwrap();
        symlink("nowhere", t.path().join("dangling")).unwrap();
        for name in ["link", "dangling"] {
            assert_eq!(
                read_file(t.path(), &[name]),
                err(FileState::SymlinkSkipped, Reason::Symlink)
            );
            assert_eq!(
                probe_file(t.path(), &[name]),
                Err(Unavailable::new(FileState::SymlinkSkipped, Reason::Symlink))
            );
        }
    }

    #[test]
    fn symlinked_directories_below_the_base_are_skipped() {
        let t = tmp();
        fs::create_dir(t.path().join("realdir")).unwrap();
        fs::write(t.path().join("realdir/f"), b"{}").unwrap();
        symlink("realdir", t.path().join("dirlink")).unwrap();
        symlink("nowhere", t.path().join("danglingdir")).unwrap();
        for d in ["dirlink", "danglingdir"] {
            assert_eq!(
                read_file(t.path(), &[d, "f"]),
                err(FileState::SymlinkSkipped, Reason::SymlinkInPath)
            );
        }
    }

    #[test]
    fn the_base_itself_may_be_a_symlink() {
        let t = tmp();
        fs::create_dir(t.path().join("realdir")).unwrap();
        fs::write(t.path().join("realdir/f"), b"1").unwrap();
        symlink("realdir", t.path().join("baselink")).unwrap();
        assert_eq!(
            read_file(&t.path().join("baselink"), &["f"]),
            Ok(b"1".to_vec())
        );
    }

    #[test]
    fn directories_fifos_and_sockets_are_not_files_and_never_block() {
        let t = tmp();
        fs::create_dir(t.path().join("dir")).unwrap();
        rfs::mknodat(
            CWD,
            t.path().join("fifo"),
            FileType::Fifo,
            Mode::RUSR | Mode::WUSR,
            0,
        )
        .unwrap();
        let _sock = std::os::unix::net::UnixListener::bind(t.path().join("sock")).unwrap();
        assert_eq!(
            read_file(t.path(), &["dir"]),
            err(FileState::NotFile, Reason::Directory)
        );
        assert_eq!(
            read_file(t.path(), &["fifo"]),
            err(FileState::NotFile, Reason::Fifo)
        );
        assert_eq!(
            read_file(t.path(), &["sock"]),
            err(FileState::NotFile, Reason::Socket)
        );
        assert_eq!(
            probe_file(t.path(), &["fifo"]),
            Err(Unavailable::new(FileState::NotFile, Reason::Fifo))
        );
    }

    #[test]
    fn directories_are_listed_no_follow_and_sorted() {
        let t = tmp();
        fs::create_dir_all(t.path().join("d/sub")).unwrap();
        for n in ["b.yaml", "a.json", "c"] {
            fs::write(t.path().join("d").join(n), b"x").unwrap();
        }
        assert_eq!(
            list_dir(t.path(), &["d"]),
            Ok(Listing {
                names: vec!["a.json".into(), "b.yaml".into(), "c".into(), "sub".into()],
                truncated: false
            })
        );
        symlink("d", t.path().join("link")).unwrap();
        assert_eq!(
            list_dir(t.path(), &["link"]),
            Err(Unavailable::new(FileState::SymlinkSkipped, Reason::Symlink))
        );
        assert_eq!(
            list_dir(t.path(), &["d", "a.json"]),
            Err(Unavailable::new(FileState::NotFile, Reason::OtherFileType))
        );
        assert_eq!(list_dir(t.path(), &["nope"]), Err(Unavailable::MISSING));
        for i in 0..LIST_LIMIT + 1 {
            fs::write(t.path().join("d/sub").join(format!("f{i}")), b"").unwrap();
        }
        let l = list_dir(t.path(), &["d", "sub"]).unwrap();
        assert!(l.truncated);
        assert_eq!(l.names.len(), LIST_LIMIT);
    }

    #[test]
    fn devices_are_not_files() {
        assert_eq!(
            read_file(Path::new("/dev"), &["null"]),
            err(FileState::NotFile, Reason::Device)
        );
    }

    #[test]
    fn a_file_in_the_way_of_a_directory_means_missing() {
        let t = tmp();
        fs::write(t.path().join(".claude"), b"x").unwrap();
        assert_eq!(
            read_file(t.path(), &[".claude", "CLAUDE.md"]),
            err(FileState::Missing, Reason::ParentNotDirectory)
        );
    }

    #[test]
    fn probe_reports_the_size_without_reading() {
        let t = tmp();
        fs::write(t.path().join("CLAUDE.md"), vec![b'x'; 3 * READ_LIMIT]).unwrap();
        // Far over the read limit: a probe never reads, so the size is reported.
        assert_eq!(
            probe_file(t.path(), &["CLAUDE.md"]),
            Ok(3 * READ_LIMIT as u64)
        );
    }

    #[test]
    fn errno_mapping_is_codes_only() {
        // Root bypasses file modes, so EACCES is pinned here; the container
        // harness (uid 1000) exercises the real denied file.
        assert_eq!(
            from_errno(Errno::ACCESS),
            Unavailable::new(FileState::Unreadable, Reason::PermissionDenied)
        );
        assert_eq!(
            from_errno(Errno::PERM),
            Unavailable::new(FileState::Unreadable, Reason::PermissionDenied)
        );
        assert_eq!(
            from_errno(Errno::IO),
            Unavailable::new(FileState::Unreadable, Reason::IoError)
        );
        assert_eq!(
            final_error(Errno::LOOP),
            Unavailable::new(FileState::SymlinkSkipped, Reason::Symlink)
        );
        assert_eq!(
            final_error(Errno::NXIO),
            Unavailable::new(FileState::NotFile, Reason::Socket)
        );
    }

    #[test]
    fn unreadable_file_is_unreadable_when_not_root() {
        use std::os::unix::fs::PermissionsExt;
        let t = tmp();
        let p = t.path().join("secret");
        fs::write(&p, b"{}").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).unwrap();
        if rustix::process::geteuid().is_root() {
            eprintln!(
                "running as root: file modes do not deny root; see errno_mapping_is_codes_only"
            );
            return;
        }
        let denied = Unavailable::new(FileState::Unreadable, Reason::PermissionDenied);
        assert_eq!(read_file(t.path(), &["secret"]), Err(denied));
        assert_eq!(probe_file(t.path(), &["secret"]), Err(denied));
    }
}
