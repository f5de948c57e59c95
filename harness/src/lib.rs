//! scopebox-harness: everything that happens inside the evidence container. The runner
//! (`run`) observes its own boundary (`boundary`), proves the sentinel check works (`controls`),
//! lays out each case's fixture tree and walks it (`fixture`), runs the candidate under a
//! deadline and records what happened (`case`), and writes the `/evidence` tree (each case's files appended to one stream, `journal`). Every case and
//! control runs in a window of the kernel witness (`supervisor`, the `scopebox-witness` binary,
//! over the filter of `seccomp`; the runner's side is `watch`), and the hostile stand-ins the
//! adversarial controls run are `hostile`. Verdicts come from `scopebox_schema::judge`, the
//! same function the verifier replays.
//!
//! All paths come from a `Layout`, which defaults to the container's paths and can be rebased
//! into a temporary directory so the same code runs in host tests. This crate must never talk
//! to Docker, the network, or anything outside the layout's directories.

pub mod boundary;
pub mod case;
pub mod controls;
pub mod evidence_file;
pub mod fixture;
pub mod hostile;
pub mod inside;
pub mod journal;
pub mod listen;
pub mod native;
pub mod procfs;
pub mod run;
pub mod seccomp;
pub mod supervisor;
pub mod unforked;
pub mod watch;
pub mod written;

use scopebox_schema::layout;
use std::path::{Path, PathBuf};

/// Where everything the runner touches lives. `Layout::container()` is the real thing; a
/// rebased layout maps the fixture roots (and evidence, marker, scratch) below a directory.
#[derive(Debug, Clone)]
pub struct Layout {
    pub evidence_dir: PathBuf,
    pub matrix_path: PathBuf,
    pub candidate_bin: PathBuf,
    pub sentinel_bin: PathBuf,
    /// The runner itself, re-executed as the adversarial controls' stand-ins.
    pub runner_bin: PathBuf,
    /// The file the sentinel writes when executed (the real sentinel: always
    /// `layout::SENTINEL_MARKER`; a rebased layout's differs only for fake sentinels in tests).
    pub sentinel_marker: PathBuf,
    /// A noexec tmpfs directory for the exec probe (`/tmp`).
    pub scratch_dir: PathBuf,
    /// A path on the root filesystem the write probe tries to create.
    pub root_probe: PathBuf,
    /// Each fixture root as the matrix spells it (logical) and where it really is (host).
    pub fixture_roots: Vec<(String, PathBuf)>,
    /// `PATH` given to the candidate.
    pub candidate_path_env: String,
}

impl Layout {
    /// The paths inside the evidence container (`scopebox_schema::layout`).
    pub fn container() -> Layout {
        Layout {
            evidence_dir: layout::EVIDENCE_DIR.into(),
            matrix_path: layout::MATRIX_PATH.into(),
            candidate_bin: layout::CANDIDATE_BIN.into(),
            sentinel_bin: layout::SENTINEL_BIN.into(),
            runner_bin: layout::RUNNER_BIN.into(),
            sentinel_marker: layout::SENTINEL_MARKER.into(),
            scratch_dir: "/tmp".into(),
            root_probe: "/.scopebox-root-write-probe".into(),
            fixture_roots: layout::FIXTURE_ROOTS
                .iter()
                .map(|r| (r.to_string(), PathBuf::from(r)))
                .collect(),
            candidate_path_env: "/scopebox/bin".into(),
        }
    }

    /// The container layout moved below `base` (which must exist): fixture roots at
    /// `base/work`, `base/home/node`, `base/etc/claude-code`, evidence at `base/evidence`,
    /// scratch and marker below `base/tmp` (the marker of fake sentinels in unit tests: the
    /// real one always writes `layout::SENTINEL_MARKER`, which `run-rebased` isolates in a
    /// private mount). The runner is this executable. Creates those directories.
    pub fn rebased(
        base: &Path,
        candidate_bin: &Path,
        sentinel_bin: &Path,
    ) -> std::io::Result<Layout> {
        let mut l = Layout::container();
        l.fixture_roots = layout::FIXTURE_ROOTS
            .iter()
            .map(|r| (r.to_string(), base.join(r.trim_start_matches('/'))))
            .collect();
        for (_, host) in &l.fixture_roots {
            std::fs::create_dir_all(host)?;
        }
        l.evidence_dir = base.join("evidence");
        l.matrix_path = base.join("matrix.json");
        l.scratch_dir = base.join("tmp");
        std::fs::create_dir_all(&l.scratch_dir)?;
        l.sentinel_marker = base.join("tmp/scopebox-sentinel/fired");
        l.root_probe = base.join("root-write-probe");
        l.candidate_bin = candidate_bin.into();
        l.sentinel_bin = sentinel_bin.into();
        l.runner_bin = std::env::current_exe()?;
        Ok(l)
    }

    /// Where a matrix path really is: paths at or below a fixture root are mapped, others are
    /// returned unchanged.
    pub fn host(&self, logical: &str) -> PathBuf {
        for (root, host) in &self.fixture_roots {
            if logical == root {
                return host.clone();
            }
            if let Some(rest) = logical.strip_prefix(root.as_str()) {
                if let Some(rest) = rest.strip_prefix('/') {
                    return host.join(rest);
                }
            }
        }
        PathBuf::from(logical)
    }

    /// The matrix spelling of a real path (the inverse of `host`).
    pub fn logical(&self, host: &Path) -> String {
        for (root, host_root) in &self.fixture_roots {
            if let Ok(rest) = host.strip_prefix(host_root) {
                if rest.as_os_str().is_empty() {
                    return root.clone();
                }
                return format!("{root}/{}", rest.to_string_lossy());
            }
        }
        host.to_string_lossy().into_owned()
    }

    /// A matrix argument as passed to the candidate: absolute paths below a fixture root are
    /// mapped, anything else is passed verbatim.
    pub fn arg(&self, arg: &str) -> String {
        if arg.starts_with('/') {
            self.host(arg).to_string_lossy().into_owned()
        } else {
            arg.to_string()
        }
    }

    /// A symlink target as read from disk, in matrix spelling.
    pub fn logical_target(&self, target: &Path) -> String {
        if target.is_absolute() {
            self.logical(target)
        } else {
            target.to_string_lossy().into_owned()
        }
    }
}

/// An I/O failure of the harness itself, with the path it concerned.
#[derive(Debug, thiserror::Error)]
#[error("{action} {}", path.display())]
pub struct HarnessError {
    /// What was being done, lowercase ("write", "lay out", "walk", ...).
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl HarnessError {
    pub fn new(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        HarnessError {
            action,
            path: path.into(),
            source,
        }
    }
}

/// Adds the path and action to an `io::Result`.
pub(crate) trait IoContext<T> {
    fn at(self, action: &'static str, path: &Path) -> Result<T, HarnessError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, action: &'static str, path: &Path) -> Result<T, HarnessError> {
        self.map_err(|e| HarnessError::new(action, path, e))
    }
}

/// For unit tests: a layout rebased into a fresh temporary directory, with no candidate or
/// sentinel behind it.
#[cfg(test)]
pub(crate) fn scratch_layout() -> (tempfile::TempDir, Layout) {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::rebased(
        dir.path(),
        Path::new("/nonexistent"),
        Path::new("/nonexistent"),
    )
    .unwrap();
    (dir, layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_container_layout_maps_nothing() {
        let l = Layout::container();
        assert_eq!(
            l.host("/work/p/.mcp.json"),
            PathBuf::from("/work/p/.mcp.json")
        );
        assert_eq!(l.logical(Path::new("/home/node/x")), "/home/node/x");
        assert_eq!(l.arg("--json"), "--json");
    }

    #[test]
    fn a_rebased_layout_maps_roots_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        let l = Layout::rebased(dir.path(), Path::new("/c"), Path::new("/s")).unwrap();
        let b = dir.path();
        assert_eq!(l.host("/work"), b.join("work"));
        assert_eq!(l.host("/work/p/a"), b.join("work/p/a"));
        assert_eq!(
            l.host("/etc/claude-code/managed-mcp.json"),
            b.join("etc/claude-code/managed-mcp.json")
        );
        // Only whole components match: /workshop is not below /work.
        assert_eq!(l.host("/workshop"), PathBuf::from("/workshop"));
        assert_eq!(
            l.logical(&b.join("home/node/.claude.json")),
            "/home/node/.claude.json"
        );
        assert_eq!(l.logical(&b.join("work")), "/work");
        assert_eq!(l.arg("/work/p"), b.join("work/p").to_string_lossy());
        assert_eq!(l.arg(""), "");
        assert_eq!(l.logical_target(Path::new("../x")), "../x");
        assert!(b.join("etc/claude-code").is_dir());
    }
}
