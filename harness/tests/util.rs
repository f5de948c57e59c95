//! Helpers shared by the integration tests: temp layouts, the built binaries, matrices.

use scopebox_harness::Layout;
use scopebox_receipts::matrix::Matrix;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn sentinel_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_scopebox-sentinel"))
}

pub fn runner_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_scopebox-runner"))
}

/// The real mcpscope: `$SCOPEBOX_TEST_MCPSCOPE`, else built once with `cargo build -p mcpscope`.
pub fn mcpscope_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("SCOPEBOX_TEST_MCPSCOPE") {
            return PathBuf::from(p);
        }
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "mcpscope", "--bin", "mcpscope"])
            .current_dir(workspace_root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build -p mcpscope failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("target"));
        let bin = target.join("debug/mcpscope");
        assert!(bin.is_file(), "{} was not built", bin.display());
        bin
    })
    .clone()
}

/// A fresh rebased layout for `candidate`, with the real sentinel.
pub fn layout(candidate: &Path) -> (tempfile::TempDir, Layout) {
    let dir = tempfile::tempdir().unwrap();
    let l = Layout::rebased(dir.path(), candidate, &sentinel_bin()).unwrap();
    (dir, l)
}

pub fn shipped(name: &str) -> Matrix {
    let path = workspace_root().join("harness/matrix").join(name);
    let (m, _) = scopebox_harness::run::load_matrix(&path)
        .unwrap_or_else(|e| panic!("{name}: {} {:?}", e.message, e.problems));
    m
}

/// Writes `matrix` as the layout's matrix file.
pub fn install_matrix(layout: &Layout, matrix: &Matrix) {
    std::fs::write(&layout.matrix_path, serde_json::to_vec(matrix).unwrap()).unwrap();
}

/// An executable shell script (the fake candidates of `detection`).
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}
