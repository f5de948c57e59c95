//! Building the workspace's own static binaries (`mcpscope`, `scopebox-runner`,
//! `scopebox-sentinel`) with cargo, in a target directory of their own so that a nested cargo
//! (the orchestrator run from `cargo test`) never waits on the outer build lock. It only runs
//! cargo and locates the outputs; it must never package, hash or judge them.

use std::path::{Path, PathBuf};
use std::process::Stdio;

/// The one target triple the image runs; explicit so build scripts stay dynamic.
pub const TARGET: &str = "x86_64-unknown-linux-gnu";
/// `-C target-feature=+crt-static`: no base image, so every binary must stand alone.
pub const STATIC_RUSTFLAGS: &str = "-C target-feature=+crt-static";

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("run `{program} build` for {packages}")]
    Spawn {
        program: String,
        packages: String,
        #[source]
        source: std::io::Error,
    },
    #[error("build {packages} statically: cargo exited with {status}")]
    Cargo { packages: String, status: String },
    #[error("find the built binary {path}")]
    Missing {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The workspace root: this package is the root package, so its manifest dir is the root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the static builds land.
pub fn static_target_dir(root: &Path) -> PathBuf {
    root.join("target").join("static")
}

/// Path of a built static binary.
pub fn static_bin(root: &Path, name: &str) -> PathBuf {
    static_target_dir(root)
        .join(TARGET)
        .join("release")
        .join(name)
}

/// `cargo build --release --locked --target x86_64-unknown-linux-gnu -p …` with static
/// rustflags. Cargo's own diagnostics go to our stderr; nothing goes to stdout.
pub async fn build_static(root: &Path, packages: &[&str]) -> Result<(), BuildError> {
    let program = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let listed = packages.join(", ");
    let mut cmd = tokio::process::Command::new(&program);
    cmd.current_dir(root)
        .args([
            "build",
            "--release",
            "--locked",
            "--quiet",
            "--target",
            TARGET,
        ])
        .env("RUSTFLAGS", STATIC_RUSTFLAGS)
        // An outer cargo's encoded flags would override RUSTFLAGS.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("CARGO_TARGET_DIR", static_target_dir(root))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        // Ctrl-C drops the future: take the build down with it.
        .kill_on_drop(true);
    for p in packages {
        cmd.args(["-p", p]);
    }
    let status = cmd.status().await.map_err(|source| BuildError::Spawn {
        program: program.clone(),
        packages: listed.clone(),
        source,
    })?;
    if !status.success() {
        return Err(BuildError::Cargo {
            packages: listed,
            status: status.to_string(),
        });
    }
    Ok(())
}

/// Read a built binary's bytes.
pub fn read_bin(root: &Path, name: &str) -> Result<Vec<u8>, BuildError> {
    let path = static_bin(root, name);
    std::fs::read(&path).map_err(|source| BuildError::Missing { path, source })
}
