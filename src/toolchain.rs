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
/// The harness's binaries every image carries for its own platform.
pub const RUNNER_BIN: &str = "scopebox-runner";
pub const SENTINEL_BIN: &str = "scopebox-sentinel";
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
            BuildError::Spawn {
                program, source, ..
            } if source.kind() == std::io::ErrorKind::NotFound => Some(format!(
                "`{program}` was not found on PATH: install Rust with rustup (https://rustup.rs), or set CARGO to cargo's path"
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
pub async fn build_shipped(root: &Path, priority: Priority) -> Result<(), BuildError> {
    build_shipped_with(&cargo_program(), root, priority).await
}

async fn build_shipped_with(
    program: &str,
    root: &Path,
    priority: Priority,
) -> Result<(), BuildError> {
    let started = std::time::SystemTime::now();
    let packages = [CANDIDATE_PACKAGE, HARNESS_PACKAGE];
    run_cargo(program, root, &Platform::ALL, &packages, priority).await?;
    mark_checked(root, started);
    Ok(())
}

/// `$CARGO`, or `cargo`.
fn cargo_program() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

/// The file whose modification time says when cargo last started a check of every shipped
/// binary that then succeeded (cargo leaves a fresh binary's own time alone, so the binaries'
/// times cannot say it).
const CHECKED_STAMP: &str = "scopebox-checked";

/// Records that a check started at `started` succeeded (best effort: without the stamp, the
/// next run only waits for its check).
fn mark_checked(root: &Path, started: std::time::SystemTime) {
    let stamp = static_target_dir(root).join(CHECKED_STAMP);
    let _ = std::fs::File::create(&stamp).and_then(|f| f.set_modified(started));
}

/// The CPU priority cargo (and any compiler it starts) runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// As the caller: the build is what the caller waits for.
    Normal,
    /// Niceness 19: a check that runs beside the containers of a run that went ahead, which
    /// then get the CPU first, leaving cargo the gaps (the engine's create, start and export).
    Background,
}

/// `cargo build --profile static --locked --target <each platform's> -p …`, each target with its
/// own rustflags (`CARGO_TARGET_<TRIPLE>_RUSTFLAGS`; RUSTFLAGS would apply to every target).
/// Cargo's own diagnostics go to our stderr; nothing goes to stdout. Concurrent calls share the
/// target directory (and so the host-built proc macros); cargo's lock serializes them.
pub async fn build_static(
    root: &Path,
    platforms: &[Platform],
    packages: &[&str],
    priority: Priority,
) -> Result<(), BuildError> {
    run_cargo(&cargo_program(), root, platforms, packages, priority).await
}

async fn run_cargo(
    program: &str,
    root: &Path,
    platforms: &[Platform],
    packages: &[&str],
    priority: Priority,
) -> Result<(), BuildError> {
    let program = program.to_string();
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
    if priority == Priority::Background {
        // SAFETY: one raw setpriority(2) on the child itself, async-signal-safe; nothing else
        // runs between fork and exec. A refusal leaves the build at its inherited priority.
        unsafe {
            cmd.pre_exec(|| {
                let _ = rustix::process::setpriority_process(None, 19);
                Ok(())
            });
        }
    }
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

/// Every binary `build_shipped` makes, as (platform, name): the candidate and the harness of
/// every platform, the witness of every machine.
pub fn shipped_bins() -> Vec<(Platform, &'static str)> {
    let mut bins = Vec::new();
    for platform in Platform::ALL {
        bins.push((platform, CANDIDATE_PACKAGE));
        bins.push((platform, RUNNER_BIN));
        bins.push((platform, SENTINEL_BIN));
        if let Some(witness) = WITNESS_BIN {
            bins.push((platform, witness));
        }
    }
    bins
}

/// Whether a build check would likely find nothing to do: every shipped binary exists, and
/// every file its dep-info (`<bin>.d`, written by cargo) lists and every manifest of the
/// workspace (`Cargo.lock`, the root's and each member's `Cargo.toml`) is older than the start
/// of the last check that succeeded (`mark_checked`). A guess, never a verdict: it only lets a
/// run go ahead on the binaries there while cargo checks them, and the run is kept only if
/// cargo then left every one of them as it was (`run::evidence_run`). Anything unreadable
/// makes it false.
pub fn looks_built(root: &Path) -> bool {
    let mut manifests = vec![root.join("Cargo.lock"), root.join("Cargo.toml")];
    let Ok(members) = std::fs::read_dir(root) else {
        return false;
    };
    for member in members.flatten() {
        let manifest = member.path().join("Cargo.toml");
        if manifest.is_file() {
            manifests.push(manifest);
        }
    }
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let Some(checked) = modified(&static_target_dir(root).join(CHECKED_STAMP)) else {
        return false;
    };
    // The binaries share most of their inputs: each is looked at once.
    let mut inputs: std::collections::BTreeSet<PathBuf> = manifests.into_iter().collect();
    for (platform, name) in shipped_bins() {
        let bin = static_bin(root, platform, name);
        let Ok(dep_info) = std::fs::read_to_string(bin.with_file_name(format!("{name}.d"))) else {
            return false;
        };
        let listed = dep_info_inputs(&dep_info);
        if !bin.is_file() || listed.is_empty() {
            return false;
        }
        inputs.extend(listed.into_iter().map(PathBuf::from));
    }
    inputs
        .iter()
        .all(|input| modified(input).is_some_and(|m| m < checked))
}

/// The inputs a Makefile-style dep-info line names (`target: input input…`, a space inside a
/// name escaped as `\ `); only the first rule counts, as cargo writes one per binary.
fn dep_info_inputs(dep_info: &str) -> Vec<String> {
    let Some(line) = dep_info.lines().next() else {
        return Vec::new();
    };
    let Some((_, inputs)) = line.split_once(": ") else {
        return Vec::new();
    };
    let mut names = Vec::new();
    let mut current = String::new();
    let mut chars = inputs.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(' ') => current.push(' '),
                Some(other) => {
                    current.push('\\');
                    current.push(other);
                }
                None => current.push('\\'),
            },
            ' ' => {
                if !current.is_empty() {
                    names.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        names.push(current);
    }
    names
}

/// Read a built binary's bytes.
pub fn read_bin(root: &Path, platform: Platform, name: &str) -> Result<Vec<u8>, BuildError> {
    let path = static_bin(root, platform, name);
    std::fs::read(&path).map_err(|source| BuildError::Missing { path, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    /// A `cargo` in `dir` that runs the shell lines `body`.
    fn fake_cargo(dir: &Path, body: &str) -> PathBuf {
        let cargo = dir.join("cargo");
        std::fs::write(&cargo, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        cargo
    }

    /// The niceness in a `/proc/<pid>/stat` line: field 19, the 17th after the command.
    fn niceness_in(stat: &str) -> i32 {
        let (_, after_comm) = stat.rsplit_once(')').unwrap();
        after_comm
            .split_whitespace()
            .nth(16)
            .unwrap()
            .parse()
            .unwrap()
    }

    /// The niceness a `cargo` started at `priority` runs at (a script that records its own).
    fn niceness_of_cargo_at(priority: Priority) -> i32 {
        let dir = tempfile::tempdir().unwrap();
        let seen = dir.path().join("stat");
        // `exec cat` keeps the script's process.
        let cargo = fake_cargo(
            dir.path(),
            &format!("exec cat /proc/self/stat > '{}'", seen.display()),
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime
            .block_on(run_cargo(
                cargo.to_str().unwrap(),
                dir.path(),
                &Platform::ALL,
                &[CANDIDATE_PACKAGE],
                priority,
            ))
            .unwrap();
        niceness_in(&std::fs::read_to_string(&seen).unwrap())
    }

    /// No cargo to start: the hint says to install it (not to read a compiler's errors).
    #[test]
    fn a_cargo_that_is_not_there_gets_a_hint_to_install_it() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-cargo-here");
        let e = runtime
            .block_on(run_cargo(
                missing.to_str().unwrap(),
                dir.path(),
                &Platform::ALL,
                &[CANDIDATE_PACKAGE],
                Priority::Normal,
            ))
            .unwrap_err();
        assert!(matches!(e, BuildError::Spawn { .. }), "{e:?}");
        let hint = e.hint().unwrap();
        assert!(
            hint.contains("was not found on PATH: install Rust with rustup"),
            "{hint}"
        );
    }

    #[test]
    fn only_a_check_that_succeeded_is_recorded_with_the_time_it_started() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for (script, recorded) in [("exit 0", true), ("exit 1", false)] {
            let dir = tempfile::tempdir().unwrap();
            let cargo = fake_cargo(dir.path(), &format!("sleep 1\n{script}"));
            std::fs::create_dir_all(static_target_dir(dir.path())).unwrap();
            let before = SystemTime::now();
            let built = runtime.block_on(build_shipped_with(
                cargo.to_str().unwrap(),
                dir.path(),
                Priority::Normal,
            ));
            assert_eq!(built.is_ok(), recorded);
            let stamp = std::fs::metadata(static_target_dir(dir.path()).join(CHECKED_STAMP));
            assert_eq!(stamp.is_ok(), recorded);
            let after = SystemTime::now();
            if let Ok(stamp) = stamp {
                // The check's start, not its end: the fake cargo slept a whole second after it.
                let at = stamp.modified().unwrap();
                assert!(at >= before, "{at:?} {before:?}");
                assert!(at + Duration::from_secs(1) <= after, "{at:?} {after:?}");
            }
        }
    }

    #[test]
    fn a_background_check_runs_at_the_lowest_priority_and_a_normal_one_as_its_caller() {
        let own = niceness_in(&std::fs::read_to_string("/proc/self/stat").unwrap());
        assert_eq!(niceness_of_cargo_at(Priority::Normal), own);
        assert_eq!(niceness_of_cargo_at(Priority::Background), 19);
    }

    #[test]
    fn dep_info_names_every_input_of_the_first_rule_with_escaped_spaces_kept() {
        let line = "/t/bin: /w/src/a.rs /w/my\\ dir/b.rs  /w/c\\\\d.rs\n/w/src/a.rs:\n";
        assert_eq!(
            dep_info_inputs(line),
            vec!["/w/src/a.rs", "/w/my dir/b.rs", "/w/c\\\\d.rs"]
        );
        assert!(dep_info_inputs("no rule here").is_empty());
        assert!(dep_info_inputs("").is_empty());
    }

    fn set_age(path: &Path, seconds_ago: u64) {
        let at = SystemTime::now() - Duration::from_secs(seconds_ago);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(at)
            .unwrap();
    }

    /// A workspace whose every shipped binary a check found current 60 s ago, built from one
    /// source last changed 120 s ago.
    fn built_workspace() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let source = root.join("member/src/main.rs");
        std::fs::create_dir_all(source.parent().unwrap()).unwrap();
        for file in [&source, &root.join("member/Cargo.toml")] {
            std::fs::write(file, b"").unwrap();
        }
        for file in ["Cargo.toml", "Cargo.lock"] {
            std::fs::write(root.join(file), b"").unwrap();
        }
        for file in [&source, &root.join("member/Cargo.toml")] {
            set_age(file, 120);
        }
        set_age(&root.join("Cargo.toml"), 120);
        set_age(&root.join("Cargo.lock"), 120);
        for (platform, name) in shipped_bins() {
            let bin = static_bin(&root, platform, name);
            std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
            std::fs::write(&bin, b"\x7fELF").unwrap();
            let dep_info = format!("{}: {}\n", bin.display(), source.display());
            std::fs::write(bin.with_file_name(format!("{name}.d")), dep_info).unwrap();
            // The binaries' own times do not matter (cargo leaves a fresh one's alone).
            set_age(&bin, 600);
        }
        mark_checked(&root, SystemTime::now() - Duration::from_secs(60));
        (dir, source)
    }

    #[test]
    fn binaries_checked_after_their_inputs_last_changed_look_built_and_nothing_else_does() {
        let (dir, source) = built_workspace();
        let root = dir.path();
        assert!(looks_built(root));

        // An edited source, an edited lock file or member manifest.
        for input in [
            source.clone(),
            root.join("Cargo.lock"),
            root.join("member/Cargo.toml"),
        ] {
            let (dir, _) = built_workspace();
            let input = dir.path().join(input.strip_prefix(root).unwrap());
            set_age(&input, 0);
            assert!(!looks_built(dir.path()), "{} is newer", input.display());
        }

        // A source changed after the last check started, even by a second.
        let (dir, source) = built_workspace();
        set_age(&source, 59);
        assert!(!looks_built(dir.path()));

        // No check recorded, a binary, its dep-info, or a listed input missing.
        let (dir, _) = built_workspace();
        std::fs::remove_file(static_target_dir(dir.path()).join(CHECKED_STAMP)).unwrap();
        assert!(!looks_built(dir.path()));
        let (dir, source) = built_workspace();
        std::fs::remove_file(&source).unwrap();
        assert!(!looks_built(dir.path()));
        let (dir, _) = built_workspace();
        let (platform, name) = shipped_bins()[5];
        std::fs::remove_file(static_bin(dir.path(), platform, name)).unwrap();
        assert!(!looks_built(dir.path()));
        let (dir, _) = built_workspace();
        let bin = static_bin(dir.path(), Platform::LinuxArm64, CANDIDATE_PACKAGE);
        std::fs::write(
            bin.with_file_name(format!("{CANDIDATE_PACKAGE}.d")),
            b"garbage",
        )
        .unwrap();
        assert!(!looks_built(dir.path()));
    }
}
