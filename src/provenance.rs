//! The receipt's `provenance`: what the candidates were built from (the git commit of the
//! source checkout and whether its tree was dirty, when it is a git checkout), the Cargo.lock
//! digest, `rustc -vV`, this scopebox's version, and the engine (name, version, OS,
//! architecture). Gathered once: the checkout's part from the run's start, while cargo checks or
//! builds the static binaries (it writes only under target/, which git ignores), the engine's
//! from its `/info`. A fact that cannot be had (no git, no rustc) is recorded as absent or
//! empty, never guessed; it never fails a run.

use crate::engine::EngineInfo;
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::platform::Platform;
use scopebox_schema::receipt::{CandidateOrigin, EngineFacts, Provenance, SourceRevision};
use std::path::Path;
use std::process::{Command, Stdio};

/// What a program printed on stdout when it exited 0.
fn output_of(program: &str, args: &[&str], dir: &Path) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The commit and dirty flag of the git checkout at `root`, when it is one.
pub fn source_revision(root: &Path) -> Option<SourceRevision> {
    let top = output_of("git", &["rev-parse", "--show-toplevel"], root)?;
    // Only the checkout that is the workspace itself, not one it happens to sit inside.
    if std::fs::canonicalize(top.trim()).ok()? != std::fs::canonicalize(root).ok()? {
        return None;
    }
    let commit = output_of("git", &["rev-parse", "HEAD"], root)?
        .trim()
        .to_string();
    let status = output_of("git", &["status", "--porcelain"], root)?;
    Some(SourceRevision {
        commit,
        dirty: !status.trim().is_empty(),
    })
}

/// `rustc -vV` of the toolchain cargo uses in `root` (`$RUSTC`, else `rustc`).
pub fn rustc_version(root: &Path) -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    output_of(&rustc, &["-vV"], root).unwrap_or_default()
}

/// The engine facts of its `/info`.
pub fn engine_facts(info: &EngineInfo) -> EngineFacts {
    EngineFacts {
        name: info.name.as_str().to_string(),
        version: info.server_version.clone(),
        operating_system: info.operating_system.clone(),
        os_type: info.os_type.clone(),
        architecture: info.architecture.clone(),
    }
}

/// What the checkout and the toolchain say: read apart from the engine, on a thread of its own
/// from the run's start (three git commands and `rustc -vV` take ~30 ms, which the run no
/// longer waits for after the engine's answers).
#[derive(Debug, Clone)]
pub struct Checkout {
    source: Option<SourceRevision>,
    cargo_lock_sha256: String,
    rustc: String,
}

impl Checkout {
    /// The checkout at `root`; its revision only when some candidate may be built from it.
    pub fn read(root: &Path, wants_source: bool) -> Checkout {
        Checkout {
            source: if wants_source {
                source_revision(root)
            } else {
                None
            },
            cargo_lock_sha256: std::fs::read(root.join("Cargo.lock"))
                .map(|b| sha256_hex(&b))
                .unwrap_or_default(),
            rustc: rustc_version(root),
        }
    }
}

/// Everything, for a run whose candidates are `built` (packed here) or given, per platform: the
/// source revision only when one was built from the checkout.
pub fn gather(
    checkout: Checkout,
    info: &EngineInfo,
    candidates: &[(Platform, bool)],
) -> Provenance {
    let any_built = candidates.iter().any(|(_, built)| *built);
    Provenance {
        source: checkout.source.filter(|_| any_built),
        cargo_lock_sha256: checkout.cargo_lock_sha256,
        rustc: checkout.rustc,
        scopebox_version: env!("CARGO_PKG_VERSION").to_string(),
        candidates: candidates
            .iter()
            .map(|&(platform, built)| CandidateOrigin {
                platform,
                origin: if built { "built" } else { "given" }.to_string(),
            })
            .collect(),
        engine: engine_facts(info),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_checkout_gives_its_commit_and_a_changed_tree_reads_dirty() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        assert_eq!(source_revision(dir.path()), None, "not a checkout yet");
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("a"), b"1").unwrap();
        git(&["add", "a"]);
        git(&["commit", "-qm", "one"]);
        let clean = source_revision(dir.path()).unwrap();
        assert_eq!(clean.commit.len(), 40, "{clean:?}");
        assert!(!clean.dirty);
        std::fs::write(dir.path().join("a"), b"2").unwrap();
        let dirty = source_revision(dir.path()).unwrap();
        assert_eq!(dirty.commit, clean.commit);
        assert!(dirty.dirty);
        // A directory inside a checkout is not that checkout.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert_eq!(source_revision(&dir.path().join("sub")), None);
    }

    #[test]
    fn given_candidates_name_no_source_and_the_engine_is_described() {
        let info = EngineInfo {
            name: scopebox_schema::engine::EngineName::Docker,
            architecture: "x86_64".into(),
            os_type: "linux".into(),
            server_version: "20.10.24".into(),
            operating_system: "Debian GNU/Linux 13".into(),
        };
        let root = crate::toolchain::workspace_root();
        let checkout = Checkout::read(&root, true);
        let p = gather(checkout.clone(), &info, &[(Platform::LinuxAmd64, false)]);
        assert_eq!(p.source, None, "no candidate was built from the checkout");
        // Built from the checkout: its revision, as read (the workspace is one in CI's clone).
        let built = gather(checkout, &info, &[(Platform::LinuxAmd64, true)]);
        assert_eq!(built.source, source_revision(&root));
        assert_eq!(built.candidates[0].origin, "built");
        // Not asked for: never read.
        assert!(Checkout::read(&root, false).source.is_none());
        assert_eq!(p.candidates[0].origin, "given");
        assert_eq!(p.engine.version, "20.10.24");
        assert_eq!(p.engine.name, "docker");
        assert_eq!(p.engine.architecture, "x86_64");
        assert_eq!(p.cargo_lock_sha256.len(), 64);
        assert!(p.rustc.contains("host: "), "{}", p.rustc);
    }
}
