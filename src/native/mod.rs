//! The native reference's inputs: the pinned lock (`lock`), the content-addressed cache
//! (`store`), what is read out of wheels, `.deb`s and ELF headers (`artifact`), the registries
//! (`registry`: pip and apt-get as subprocesses), and the two commands built on them —
//! `scopebox native fetch` (make the pinned files present and verified; a verified cache hit
//! does no network) and `scopebox native lock` (re-resolve the pinned versions and rewrite the
//! lock, so an update is a reviewable diff). Nothing here ever executes a downloaded file.
//!
//! Exit codes (through `exit`): 0 done; 1 a download or tool failed (worth retrying);
//! 2 refused — a digest mismatch, a member missing from its package, a version the registry no
//! longer serves, a corrupt cache entry, an `--offline` miss, an invalid lock, a bad argument;
//! 130 interrupted. With `--json` one object is printed on stdout on every exit path:
//! `{"ok": true, ...}` or `{"ok": false, "error": {"code", "message", "file"?, "expected"?, "actual"?}}`.

pub mod artifact;
pub mod fetch;
pub mod lock;
pub mod registry;
pub mod run;
pub mod store;

use crate::exit::{CommandError, Outcome};
use crate::toolchain::workspace_root;
use clap::{Args, Subcommand};
use fetch::{Bumps, Cache, FetchError, FetchPlan};
use lock::{Lock, LockError, DEFAULT_LOCK};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `scopebox native [run flags]` is `scopebox native run [flags]`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct NativeArgs {
    #[command(subcommand)]
    pub command: Option<NativeCommand>,
    #[command(flatten)]
    pub run: run::RunArgs,
}

impl NativeArgs {
    /// Whether `--json` was given.
    pub fn wants_json(&self) -> bool {
        match &self.command {
            None => self.run.common.json,
            Some(NativeCommand::Run(a)) => a.common.json,
            Some(NativeCommand::Fetch(a)) => a.common.json,
            Some(NativeCommand::Lock(a)) => a.common.json,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum NativeCommand {
    /// Run the native matrix against the pinned real client in the box and judge it (the
    /// default: `scopebox native [flags]`)
    Run(run::RunArgs),
    /// Download (if absent) and verify every file the native lock pins into the cache
    Fetch(FetchArgs),
    /// Re-resolve the lock's pinned versions from the registries and rewrite the lock
    Lock(LockArgs),
}

#[derive(Debug, Clone, Args)]
pub struct CacheArgs {
    /// The native lock [default: images/native.lock.json in the workspace]
    #[arg(long, value_name = "FILE")]
    pub lock: Option<PathBuf>,
    /// The cache directory [default: $SCOPEBOX_NATIVE_CACHE, else $XDG_CACHE_HOME/scopebox/native,
    /// else ~/.cache/scopebox/native]
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Print a JSON summary on stdout (also on failure)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct FetchArgs {
    /// A platform to fetch (linux/amd64, linux/arm64); repeat for several [default: every
    /// platform the lock names]
    #[arg(long, value_name = "PLATFORM")]
    pub platform: Vec<String>,
    /// A client to fetch (claude-code, codex); repeat for several [default: every client the
    /// lock names]
    #[arg(long, value_name = "CLIENT")]
    pub client: Vec<String>,
    /// Never touch the network: anything not already in the cache is refused
    #[arg(long)]
    pub offline: bool,
    #[command(flatten)]
    pub common: CacheArgs,
}

#[derive(Debug, Args)]
pub struct LockArgs {
    /// Pin another package version for a client, e.g. claude-code=0.2.185 (repeatable)
    #[arg(long, value_name = "CLIENT=VERSION")]
    pub package_version: Vec<String>,
    /// Pin another version of every runtime package (Debian libc6), e.g. 2.36-9+deb12u15
    #[arg(long, value_name = "VERSION")]
    pub runtime_version: Option<String>,
    /// Add a client the lock does not pin yet at a package version, e.g. codex=0.163.0
    /// (repeatable; the package and members are scopebox's own table, `lock::KNOWN_CLIENTS`)
    #[arg(long, value_name = "CLIENT=VERSION")]
    pub add_client: Vec<String>,
    #[command(flatten)]
    pub common: CacheArgs,
}

/// Why a native command stopped. Messages fit "failed to {error}".
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("accept {0}")]
    Argument(String),
    #[error("write native lock {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl NativeError {
    pub fn is_refusal(&self) -> bool {
        match self {
            NativeError::Lock(LockError::Read { .. }) | NativeError::Write { .. } => false,
            NativeError::Lock(_) | NativeError::Argument(_) => true,
            NativeError::Fetch(e) => e.is_refusal(),
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            NativeError::Lock(LockError::Read { .. }) => "lock-unreadable",
            NativeError::Lock(_) => "lock-invalid",
            NativeError::Argument(_) => "bad-argument",
            NativeError::Write { .. } => "lock-unwritable",
            NativeError::Fetch(e) => e.code(),
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            NativeError::Fetch(FetchError::CacheCorrupt { path, .. }) => Some(format!(
                "the cache entry is not what its name says (tampered or damaged): inspect it, remove {}, and fetch again",
                path.display()
            )),
            NativeError::Fetch(FetchError::DigestMismatch { .. })
            | NativeError::Fetch(FetchError::Registry(registry::RegistryError::Mismatch { .. })) => Some(
                "the registry's bytes are not the pinned ones: do not use them; if the change is expected, review it with `scopebox native lock` and the diff it writes"
                    .into(),
            ),
            NativeError::Fetch(FetchError::Registry(registry::RegistryError::NotServed { .. })) => Some(
                "pin a version the registry serves: `scopebox native lock --package-version CLIENT=VERSION` or `--runtime-version VERSION`, then review the diff"
                    .into(),
            ),
            NativeError::Fetch(FetchError::Offline { .. }) => {
                Some("run `scopebox native fetch` once with the network".into())
            }
            NativeError::Fetch(FetchError::Registry(registry::RegistryError::Tool { tool, .. })) => Some(format!(
                "{tool} is needed: python3 with pip for PyPI wheels, apt-get and dpkg-deb for Debian packages"
            )),
            _ => None,
        }
    }
}

/// The cache directory the arguments and environment name.
pub fn cache_dir(given: Option<&Path>) -> PathBuf {
    if let Some(p) = given {
        return p.to_path_buf();
    }
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(p) = env("SCOPEBOX_NATIVE_CACHE") {
        return p;
    }
    if let Some(p) = env("XDG_CACHE_HOME") {
        return p.join("scopebox/native");
    }
    env("HOME")
        .unwrap_or_else(|| PathBuf::from("/tmp"))
        .join(".cache/scopebox/native")
}

pub(crate) fn lock_path(given: Option<&Path>) -> PathBuf {
    given.map_or_else(|| workspace_root().join(DEFAULT_LOCK), Path::to_path_buf)
}

/// Run a native command; with `--json`, print its one object whatever happens (Ctrl-C
/// included: the work runs on a blocking thread raced against the signal).
pub async fn run(args: NativeArgs) -> Result<Outcome, CommandError> {
    let json = args.wants_json();
    let command = match args.command {
        None => return run::run(args.run).await,
        Some(NativeCommand::Run(a)) => return run::run(a).await,
        Some(c) => c,
    };
    let work = tokio::task::spawn_blocking(move || match command {
        NativeCommand::Fetch(a) => fetch_command(&a),
        NativeCommand::Lock(a) => lock_command(&a),
        NativeCommand::Run(_) => unreachable!("handled above"),
    });
    let result = tokio::select! {
        done = work => done.unwrap_or_else(|e| Err(NativeError::Argument(format!("the native command ({e})")))),
        () = crate::run::CtrlC::listen().hit() => {
            if json {
                crate::exit::print_summary(&serde_json::json!({"ok": false, "exitCode": crate::exit::INTERRUPTED, "error": {"code": "interrupted", "refusal": false, "message": "interrupted (Ctrl-C, SIGTERM or SIGHUP)"}}));
            }
            return Ok(Outcome::Interrupted);
        }
    };
    match result {
        Ok(summary) => {
            if json {
                crate::exit::print_summary(&summary);
            }
            Ok(Outcome::Passed)
        }
        Err(e) => {
            let error = CommandError::Native(e);
            if json {
                if let CommandError::Native(e) = &error {
                    let mut object = error_json(e, crate::exit::render(&error));
                    object["exitCode"] = error.code().into();
                    object["error"]["causes"] = error.causes().into();
                    object["error"]["hint"] = error.hint().into();
                    crate::exit::print_summary(&object);
                }
            }
            Err(error)
        }
    }
}

fn error_json(e: &NativeError, message: String) -> serde_json::Value {
    let mut error = serde_json::json!({
        "code": e.code(),
        "refusal": e.is_refusal(),
        "message": message,
    });
    if let NativeError::Fetch(f) = e {
        if let Some((file, expected, actual)) = f.digests() {
            error["file"] = file.into();
            error["expected"] = expected.into();
            error["actual"] = actual.into();
        }
        if let FetchError::MissingMember {
            artifact, member, ..
        } = f
        {
            error["file"] = format!("{artifact}!{member}").into();
        }
        if let FetchError::Offline { file } = f {
            error["file"] = file.clone().into();
        }
    }
    serde_json::json!({"ok": false, "error": error})
}

fn note(line: String) {
    say!("scopebox: native: {line}");
}

fn fetch_command(args: &FetchArgs) -> Result<serde_json::Value, NativeError> {
    let lock_file = lock_path(args.common.lock.as_deref());
    let lock = Lock::load(&lock_file)?;
    let cache_root = cache_dir(args.common.cache.as_deref());
    let cache = Cache::open(&cache_root)?;
    let mut registry = registry::Subprocess::new(&cache_root);
    let plan = FetchPlan {
        lock: &lock,
        platforms: &args.platform,
        clients: &args.client,
        offline: args.offline,
    };
    let fetched = fetch::fetch(&plan, &cache, &mut registry, &mut note)?;
    for p in &fetched.platforms {
        say!(
            "scopebox: native: {} verified for {} ({} file(s), {} symlink(s))",
            p.platform,
            p.clients.join(", "),
            p.files.len(),
            p.symlinks.len()
        );
    }
    say!(
        "scopebox: native: {} download(s); cache {}",
        fetched.downloads,
        cache_root.display()
    );
    Ok(serde_json::json!({
        "ok": true,
        "lock": lock_file,
        "lockSha256": scopebox_schema::digest::sha256_hex(&lock.render()),
        "cache": cache_root,
        "downloads": fetched.downloads,
        "platforms": fetched.platforms,
    }))
}

fn lock_command(args: &LockArgs) -> Result<serde_json::Value, NativeError> {
    let lock_file = lock_path(args.common.lock.as_deref());
    let current = Lock::load(&lock_file)?;
    let mut bumps = Bumps {
        packages: BTreeMap::new(),
        runtime_version: args.runtime_version.clone(),
        add: BTreeMap::new(),
    };
    for (flag, given, into) in [
        (
            "--package-version",
            &args.package_version,
            &mut bumps.packages,
        ),
        ("--add-client", &args.add_client, &mut bumps.add),
    ] {
        for pv in given {
            let Some((client, version)) = pv
                .split_once('=')
                .filter(|(c, v)| !c.is_empty() && !v.is_empty())
            else {
                return Err(NativeError::Argument(format!(
                    "{flag} {pv:?}: expected CLIENT=VERSION"
                )));
            };
            into.insert(client.to_string(), version.to_string());
        }
    }
    let cache_root = cache_dir(args.common.cache.as_deref());
    let cache = Cache::open(&cache_root)?;
    let mut registry = registry::Subprocess::new(&cache_root);
    let new = fetch::resolve(&current, &bumps, &cache, &mut registry, &mut note)?;
    let bytes = new.render();
    let old = std::fs::read(&lock_file).unwrap_or_default();
    let changed = old != bytes;
    if changed {
        write_atomically(&lock_file, &bytes).map_err(|source| NativeError::Write {
            path: lock_file.clone(),
            source,
        })?;
    }
    say!(
        "scopebox: native: {} {}",
        lock_file.display(),
        if changed {
            "rewritten: review the diff (git diff) before committing it"
        } else {
            "unchanged: the registries serve exactly what it pins"
        }
    );
    Ok(serde_json::json!({
        "ok": true,
        "lock": lock_file,
        "changed": changed,
        "sha256": scopebox_schema::digest::sha256_hex(&bytes),
    }))
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut temp, bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
