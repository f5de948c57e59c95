//! Working inside the fixture roots: the process's working directory moved into one root after
//! another, and back where it was at the end, so that the fixture lay-out, walks and clearing
//! resolve their paths from the root they are below and never from `/`. On an engine whose
//! root filesystem is FUSE (Docker's fuse-overlayfs storage driver), every path resolved from
//! `/` costs a round trip to the FUSE daemon for the root directory's ACL (about 12 µs here,
//! against 1 µs on a tmpfs), and a case's fixture work resolves dozens of paths.
//!
//! The working directory belongs to the process, not the thread: the first time a thread moves
//! it, the thread takes a private copy (`unshare(CLONE_FS)`), so the other threads (tests side
//! by side in one process) keep theirs. Where that is refused (a container's seccomp profile
//! refuses `unshare` without CAP_SYS_ADMIN), moving it is only sound in a process with no other
//! thread resolving relative paths: the runner does all its file work on one thread (a case's
//! capture starts no thread, `case::capture_polled`; the native run's listener threads only
//! serve sockets), and the working directory is back where it was when each fixture call
//! returns. This module must never move the working directory anywhere but into a fixture
//! root and back.

use std::cell::{Cell, RefCell};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// While alive, the working directory is one of the fixture roots (or still where it was,
/// before the first `enter`); dropping it moves the working directory back.
pub struct Inside {
    back: OwnedFd,
    root: Option<PathBuf>,
}

impl Inside {
    /// Remembers the current working directory.
    pub fn new() -> std::io::Result<Inside> {
        private_working_directory();
        let back = rustix::fs::open(
            ".",
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )?;
        Ok(Inside { back, root: None })
    }

    /// Moves the working directory into `root` (nothing to do when it is there already): through
    /// the directory fd opened the first time when `root` is a mount point, by its path otherwise.
    pub fn enter(&mut self, root: &Path) -> std::io::Result<()> {
        if self.root.as_deref() != Some(root) {
            enter_root(root)?;
            self.root = Some(root.to_path_buf());
        }
        Ok(())
    }

    /// `path` below `root` as a path relative to it (`./…`), for use once inside `root`;
    /// `None` when it is not below `root`.
    pub fn relative(root: &Path, path: &Path) -> Option<PathBuf> {
        path.strip_prefix(root)
            .ok()
            .map(|rest| Path::new(".").join(rest))
    }

    /// `rel` (relative to `root`, as `relative` or a walk of `.` gives it) as the absolute path
    /// it names: for records and messages, never resolved.
    pub fn absolute(root: &Path, rel: &Path) -> PathBuf {
        root.join(rel.strip_prefix(".").unwrap_or(rel))
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        if self.root.is_some() {
            let _ = rustix::process::fchdir(&self.back);
        }
    }
}

thread_local! {
    /// Each fixture root this thread entered, with its directory fd when it is a mount point.
    static ROOTS: RefCell<Vec<(PathBuf, Option<OwnedFd>)>> = const { RefCell::new(Vec::new()) };
}

/// `chdir(root)`, resolved from `/` once per root and thread: a root that is a mount point (as
/// every fixture root is in the container: a tmpfs) is entered afterwards with `fchdir` on the
/// directory fd opened the first time. That fd cannot come to name anything else: nobody without
/// CAP_SYS_ADMIN can unmount, rename or remove a mount point (EBUSY), so whatever a candidate did
/// below it, the fd and the path still agree. A root that is a plain directory (a host run below
/// BASE, where a candidate could move it and put another in its place) is resolved by its path
/// every time.
fn enter_root(root: &Path) -> std::io::Result<()> {
    use rustix::fs::{AtFlags, Mode, OFlags};
    ROOTS.with(|roots| {
        let mut roots = roots.borrow_mut();
        if let Some((_, known)) = roots.iter().find(|(r, _)| r == root) {
            return match known {
                Some(fd) => Ok(rustix::process::fchdir(fd)?),
                None => Ok(rustix::process::chdir(root)?),
            };
        }
        let fd = rustix::fs::open(
            root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let own = rustix::fs::fstat(&fd)?;
        let parent = rustix::fs::statat(&fd, "..", AtFlags::SYMLINK_NOFOLLOW)?;
        rustix::process::fchdir(&fd)?;
        let mounted = own.st_dev != parent.st_dev;
        roots.push((root.to_path_buf(), mounted.then_some(fd)));
        Ok(())
    })
}

/// Gives this thread its own working directory, once (a refusal is remembered too).
fn private_working_directory() {
    thread_local! {
        static UNSHARED: Cell<bool> = const { Cell::new(false) };
    }
    UNSHARED.with(|done| {
        if !done.get() {
            // SAFETY: unshare(CLONE_FS) only copies this thread's filesystem context.
            unsafe { libc::unshare(libc::CLONE_FS) };
            done.set(true);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this thread enters `root` through the directory fd it keeps.
    fn entered_by_fd(root: &Path) -> bool {
        ROOTS.with(|roots| {
            roots
                .borrow()
                .iter()
                .any(|(r, fd)| r == root && fd.is_some())
        })
    }

    #[test]
    fn a_mount_point_is_entered_by_its_fd_and_a_plain_directory_by_its_path() {
        let t = tempfile::tempdir().unwrap();
        let a = t.path().join("a");
        std::fs::create_dir(&a).unwrap();
        std::fs::write(a.join("f"), "old").unwrap();
        let read_inside = |root: &Path| {
            let mut inside = Inside::new().unwrap();
            inside.enter(root).unwrap();
            std::fs::read_to_string("f").unwrap()
        };
        assert_eq!(read_inside(&a), "old");
        // A plain directory can be moved away and another put in its place: the path wins.
        std::fs::rename(&a, t.path().join("moved")).unwrap();
        std::fs::create_dir(&a).unwrap();
        std::fs::write(a.join("f"), "new").unwrap();
        assert_eq!(read_inside(&a), "new");
        assert!(!entered_by_fd(&a));
        // /proc is a mount point on every Linux: entered through the fd kept the first time.
        for _ in 0..2 {
            let mut inside = Inside::new().unwrap();
            inside.enter(Path::new("/proc")).unwrap();
            assert!(Path::new("self/status").exists());
        }
        assert!(entered_by_fd(Path::new("/proc")));
    }

    #[test]
    fn relative_paths_resolve_inside_the_root_and_the_directory_comes_back() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        for (dir, text) in [(&a, "in a"), (&b, "in b")] {
            std::fs::create_dir(dir).unwrap();
            std::fs::write(dir.join("f"), text).unwrap();
        }
        let before = std::env::current_dir().unwrap();
        {
            let mut inside = Inside::new().unwrap();
            let rel = Inside::relative(&a, &a.join("f")).unwrap();
            assert_eq!(rel, Path::new("./f"));
            inside.enter(&a).unwrap();
            assert_eq!(std::fs::read_to_string(&rel).unwrap(), "in a");
            inside.enter(&b).unwrap();
            assert_eq!(std::fs::read_to_string(&rel).unwrap(), "in b");
            assert_eq!(Inside::absolute(&b, &rel), b.join("f"));
        }
        assert_eq!(std::env::current_dir().unwrap(), before);
        assert_eq!(Inside::relative(&a, &b.join("f")), None);
    }

    #[test]
    fn another_thread_keeps_its_own_working_directory() {
        let t = tempfile::tempdir().unwrap();
        let before = std::env::current_dir().unwrap();
        let root = t.path().to_path_buf();
        let (entered, leave) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        let seen = std::thread::scope(|s| {
            s.spawn(|| {
                let mut inside = Inside::new().unwrap();
                inside.enter(&root).unwrap();
                entered.wait();
                leave.wait();
            });
            entered.wait();
            // The other thread is inside `root` now; this one must not have moved.
            let seen = std::env::current_dir().unwrap();
            leave.wait();
            seen
        });
        assert_eq!(seen, before);
    }
}
