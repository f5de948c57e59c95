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

use std::cell::Cell;
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

    /// Moves the working directory into `root` (nothing to do when it is there already).
    pub fn enter(&mut self, root: &Path) -> std::io::Result<()> {
        if self.root.as_deref() != Some(root) {
            rustix::process::chdir(root)?;
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
