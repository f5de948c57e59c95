//! Shared helpers: a temp dir per test, the synthetic specimen bundle, copying a bundle, and
//! running the `scopebox-verify` binary with its exit code and both streams captured together.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// A fresh temp dir that lives as long as the returned guard.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("scopebox-receipts-test-")
        .tempdir()
        .expect("a temp dir")
}

/// A consistent synthetic bundle of `cases` cases at `<tmp>/bundle`.
pub fn specimen(tmp: &Path, cases: usize) -> PathBuf {
    let dir = tmp.join("bundle");
    crate::synthetic::write_bundle(&dir, cases).expect("write the specimen");
    dir
}

pub fn verify_bin(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_scopebox-verify"))
        .args(args)
        .output()
        .expect("run scopebox-verify");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Edit a JSON file in place.
pub fn edit_json(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("read")).expect("parse");
    edit(&mut value);
    std::fs::write(path, serde_json::to_vec_pretty(&value).expect("render")).expect("write");
}

/// Re-list one file's digest in receipt.json (a digest-consistent edit).
pub fn relist(bundle: &Path, rel: &str) {
    let digest = scopebox_schema::digest::sha256_file(&bundle.join(rel)).expect("hash");
    edit_json(&bundle.join("receipt.json"), |r| {
        r["files"][rel] = digest.into()
    });
}

/// A copy of a directory tree (`hostile.rs` owns it: the bench example includes that file alone).
pub use crate::hostile::copy_tree;

/// A FIFO at `path` (made directly: no `mkfifo` program needed).
pub fn make_fifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap_or_else(|e| panic!("mkfifo {}: {e}", path.display()));
}
