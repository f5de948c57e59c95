//! Reading `/proc` through one directory fd opened once per process, so that the witness's
//! and the sweep's many small reads (`<pid>/stat`, `<tid>/mem`, `<tid>/fd/<n>`, a process's
//! children) resolve their paths from `/proc` and never from `/`: on an engine whose root
//! filesystem is FUSE (Docker's fuse-overlayfs driver), every path resolved from `/` costs a
//! round trip to the FUSE daemon for the root directory's ACL. Where `/proc` cannot be opened
//! the reads fall back to absolute paths. Names given here are relative to `/proc`.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use rustix::fs::{Mode, OFlags};

/// `/proc`, opened the first time it is needed (`None`: it could not be).
fn proc_dir() -> Option<&'static OwnedFd> {
    static PROC: OnceLock<Option<OwnedFd>> = OnceLock::new();
    PROC.get_or_init(|| {
        rustix::fs::open(
            "/proc",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()
    })
    .as_ref()
}

/// Opens `/proc/<name>` with `flags` (close-on-exec added).
fn open_with(name: &str, flags: OFlags) -> io::Result<OwnedFd> {
    let flags = flags | OFlags::CLOEXEC;
    Ok(match proc_dir() {
        Some(dir) => rustix::fs::openat(dir, name, flags, Mode::empty())?,
        None => rustix::fs::open(format!("/proc/{name}"), flags, Mode::empty())?,
    })
}

/// `/proc/<name>`, open for reading (`<tid>/mem` for `pread`).
pub fn open(name: &str) -> io::Result<File> {
    open_with(name, OFlags::RDONLY).map(File::from)
}

/// The whole text of `/proc/<name>` (lossy UTF-8 is not accepted: an error, as `fs` would).
pub fn read_to_string(name: &str) -> io::Result<String> {
    let mut text = String::new();
    open(name)?.read_to_string(&mut text)?;
    Ok(text)
}

/// Where the link `/proc/<name>` points (`<tid>/fd/<n>`).
pub fn read_link(name: &str) -> io::Result<PathBuf> {
    let target = match proc_dir() {
        Some(dir) => rustix::fs::readlinkat(dir, name, Vec::new())?,
        None => rustix::fs::readlink(format!("/proc/{name}"), Vec::new())?,
    };
    Ok(PathBuf::from(OsString::from_vec(target.into_bytes())))
}

/// The names in the directory `/proc/<name>` (`""`: `/proc` itself), without `.` and `..`.
pub fn list(name: &str) -> io::Result<Vec<OsString>> {
    let dir = if name.is_empty() {
        open_with(".", OFlags::RDONLY | OFlags::DIRECTORY)?
    } else {
        open_with(name, OFlags::RDONLY | OFlags::DIRECTORY)?
    };
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(&dir)? {
        let bytes = entry?.file_name().to_bytes().to_vec();
        if bytes != b"." && bytes != b".." {
            names.push(OsString::from_vec(bytes));
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_below_proc_agree_with_the_absolute_paths() {
        let pid = std::process::id();
        assert_eq!(
            read_to_string(&format!("{pid}/status"))
                .unwrap()
                .lines()
                .next(),
            std::fs::read_to_string(format!("/proc/{pid}/status"))
                .unwrap()
                .lines()
                .next()
        );
        let tasks = list(&format!("{pid}/task")).unwrap();
        assert!(
            tasks.contains(&OsString::from(pid.to_string())),
            "{tasks:?}"
        );
        assert!(list("").unwrap().contains(&OsString::from(pid.to_string())));
        let stdin = std::fs::read_link(format!("/proc/{pid}/fd/0")).unwrap();
        assert_eq!(read_link(&format!("{pid}/fd/0")).unwrap(), stdin);
        assert!(open(&format!("{pid}/mem")).is_ok());
        assert_eq!(
            read_to_string("no-such-entry").unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }
}
