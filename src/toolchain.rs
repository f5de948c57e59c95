//! Building the workspace's own static binaries (`mcpscope`, `scopebox-runner`,
//! `scopebox-sentinel`, `scopebox-witness`) with cargo, every platform at once, in a target
//! directory of their own so that a nested cargo (the orchestrator run from `cargo test`) never
//! waits on the outer build lock. Shipped binaries use the `static` profile (one codegen unit,
//! LTO, panic=abort, stripped: small and reproducible); the host-only orchestrator keeps the
//! lighter `release` profile. amd64 links glibc statically (`+crt-static`), arm64 links musl
//! self-contained with `rust-lld` — no C cross toolchain. It only runs cargo and locates the
//! outputs; it must never package, hash or judge them.

use scopebox_schema::platform::Platform;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// The cargo profile of every binary that goes into an image (`[profile.static]`).
pub const STATIC_PROFILE: &str = "static";
/// The candidate's package.
pub const CANDIDATE_PACKAGE: &str = "mcpscope";
/// The in-box harness: runner and sentinel.
pub const HARNESS_PACKAGE: &str = "scopebox-harness";
/// The kernel witness binary the harness builds (`scopebox-witness`); every image carries it for
/// every machine (`layout::witness_bin`), so the harness is built for every platform.
pub const WITNESS_BIN: Option<&str> = Some(scopebox_schema::layout::WITNESS_NAME);

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("run `{program} build` for {packages} ({target})")]
    Spawn {
        program: String,
        packages: String,
        target: String,
        #[source]
        source: std::io::Error,
    },
    #[error("build {packages} statically for {target}: cargo exited with {status}")]
    Cargo {
        packages: String,
        target: String,
        status: String,
    },
    #[error("find the built binary {path}")]
    Missing {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl BuildError {
    /// A hint for the person reading the error.
    pub fn hint(&self) -> Option<String> {
        match self {
            BuildError::Cargo { target, .. } if target.contains("musl") => Some(format!(
                "is the Rust target installed? rustup target add {}",
                Platform::LinuxArm64.rust_target()
            )),
            _ => None,
        }
    }
}

/// The workspace root: this package is the root package, so its manifest dir is the root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the static builds land (every target below it).
pub fn static_target_dir(root: &Path) -> PathBuf {
    root.join("target").join("static")
}

/// Path of a built static binary of `platform`.
pub fn static_bin(root: &Path, platform: Platform, name: &str) -> PathBuf {
    static_target_dir(root)
        .join(platform.rust_target())
        .join(STATIC_PROFILE)
        .join(name)
}

/// The RUSTFLAGS of a platform's static build (target artifacts only: with `--target`, build
/// scripts and proc macros are built for the host without them).
pub fn static_rustflags(platform: Platform) -> &'static str {
    match platform {
        Platform::LinuxAmd64 => "-C target-feature=+crt-static",
        // musl is static by default; rust-lld with Rust's self-contained crt objects and libc.
        Platform::LinuxArm64 => "-C target-feature=+crt-static -C linker=rust-lld",
    }
}

/// What `build_shipped` says it does, for the progress line: the packages and every target.
pub fn building() -> String {
    let targets: Vec<&str> = Platform::ALL.iter().map(|p| p.rust_target()).collect();
    format!(
        "building {}, {} (static: {})",
        CANDIDATE_PACKAGE,
        HARNESS_PACKAGE,
        targets.join(", ")
    )
}

/// Every binary the images carry (`mcpscope` and the harness), for every platform, in one
/// cargo invocation: `pack`, `build`, `run` and `native` all come here, so a binary's bytes
/// never depend on which command built it (one feature resolution, one set of artifacts), and a
/// warm check costs one cargo start instead of one per package and platform.
pub async fn build_shipped(root: &Path) -> Result<(), BuildError> {
    build_static(root, &Platform::ALL, &[CANDIDATE_PACKAGE, HARNESS_PACKAGE]).await
}

/// `cargo build --profile static --locked --target <each platform's> -p …`, each target with its
/// own rustflags (`CARGO_TARGET_<TRIPLE>_RUSTFLAGS`; RUSTFLAGS would apply to every target).
/// Cargo's own diagnostics go to our stderr; nothing goes to stdout. Concurrent calls share the
/// target directory (and so the host-built proc macros); cargo's lock serializes them.
pub async fn build_static(
    root: &Path,
    platforms: &[Platform],
    packages: &[&str],
) -> Result<(), BuildError> {
    let program = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let listed = packages.join(", ");
    let targets = platforms
        .iter()
        .map(|p| p.rust_target())
        .collect::<Vec<_>>()
        .join(", ");
    let mut cmd = tokio::process::Command::new(&program);
    cmd.current_dir(root)
        .args(["build", "--profile", STATIC_PROFILE, "--locked", "--quiet"])
        // Outer flags would apply to every target and override the per-target ones.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("CARGO_TARGET_DIR", static_target_dir(root))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        // Ctrl-C drops the future: take the build down with it.
        .kill_on_drop(true);
    for platform in platforms {
        let target = platform.rust_target();
        cmd.args(["--target", target]).env(
            format!(
                "CARGO_TARGET_{}_RUSTFLAGS",
                target.to_ascii_uppercase().replace('-', "_")
            ),
            static_rustflags(*platform),
        );
    }
    for p in packages {
        cmd.args(["-p", p]);
    }
    let status = cmd.status().await.map_err(|source| BuildError::Spawn {
        program: program.clone(),
        packages: listed.clone(),
        target: targets.clone(),
        source,
    })?;
    if !status.success() {
        return Err(BuildError::Cargo {
            packages: listed,
            target: targets,
            status: match status.code() {
                Some(code) => format!("exit code {code}"),
                None => "a signal".to_string(),
            },
        });
    }
    Ok(())
}

/// Read a built binary's bytes.
pub fn read_bin(root: &Path, platform: Platform, name: &str) -> Result<Vec<u8>, BuildError> {
    let path = static_bin(root, platform, name);
    std::fs::read(&path).map_err(|source| BuildError::Missing { path, source })
}
