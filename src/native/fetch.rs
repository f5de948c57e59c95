//! `scopebox native fetch`: make every file the lock pins for the asked platforms present and
//! verified in the content-addressed cache — the wheel, the binary inside it, the runtime `.deb`
//! and each file taken out of it — downloading only what is absent and extracting only what is
//! not yet there, so a verified cache hit does no network at all. Every digest and size is
//! checked by us (the registries' own checks are a first line only); a mismatch, a member
//! missing from its package, a version the registry no longer serves, or a corrupt cache entry
//! is a refusal naming the file with the expected and actual digests. Also `resolve`, the
//! engine of `scopebox native lock`: download the pinned versions afresh and compute a new lock.

use super::artifact::{
    elf_facts, machine_of, walk_deb, with_wheel_member, ArtifactError, DebEntry,
};
use super::lock::{
    image_path_of, platform, Artifact, Client, ClientPlatform, Digest, KnownClient, Lock, Runtime,
    RuntimeFile, RuntimeSymlink, KNOWN_CLIENTS,
};
use super::registry::{DebRequest, Registry, RegistryError, WheelRequest};
use super::store::{Entry, Mismatch, Store};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("accept {file}: its sha256 is {actual} ({actual_size} bytes), the lock pins {expected} ({expected_size} bytes)")]
    DigestMismatch {
        file: String,
        expected: String,
        actual: String,
        expected_size: u64,
        actual_size: u64,
    },
    #[error("accept the cached {path}: its sha256 is {actual} ({actual_size} bytes), its name says {expected}")]
    CacheCorrupt {
        path: PathBuf,
        expected: String,
        actual: String,
        actual_size: u64,
    },
    #[error("find {member} in {artifact}: {problem}")]
    MissingMember {
        artifact: String,
        member: String,
        problem: String,
    },
    #[error("fetch {file}: it is not in the cache, and --offline forbids the network")]
    Offline { file: String },
    #[error("fetch for {platform}: the lock names it for no client (it names {})", known.join(", "))]
    UnknownPlatform {
        platform: String,
        known: Vec<String>,
    },
    #[error("fetch {client}: the lock pins no such client (it pins {})", known.join(", "))]
    UnknownClient { client: String, known: Vec<String> },
    #[error("resolve {what}: {problem}")]
    Unresolvable { what: String, problem: String },
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    #[error("use the native cache at {path}")]
    Cache {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl FetchError {
    /// A pinned input was refused (the lock or the cache needs a person), as opposed to a
    /// failure worth retrying (network, a missing tool).
    pub fn is_refusal(&self) -> bool {
        match self {
            FetchError::Registry(e) => e.is_refusal(),
            FetchError::DigestMismatch { .. }
            | FetchError::CacheCorrupt { .. }
            | FetchError::MissingMember { .. }
            | FetchError::Offline { .. }
            | FetchError::UnknownPlatform { .. }
            | FetchError::UnknownClient { .. }
            | FetchError::Unresolvable { .. } => true,
            FetchError::Artifact(_) | FetchError::Cache { .. } => false,
        }
    }

    /// The kebab-case code `--json` reports.
    pub fn code(&self) -> &'static str {
        match self {
            FetchError::DigestMismatch { .. } => "digest-mismatch",
            FetchError::CacheCorrupt { .. } => "cache-corrupt",
            FetchError::MissingMember { .. } => "missing-member",
            FetchError::Offline { .. } => "offline-miss",
            FetchError::UnknownPlatform { .. } => "unknown-platform",
            FetchError::UnknownClient { .. } => "unknown-client",
            FetchError::Unresolvable { .. } => "unresolvable",
            FetchError::Registry(RegistryError::NotServed { .. }) => "not-served",
            FetchError::Registry(RegistryError::Mismatch { .. }) => "digest-mismatch",
            FetchError::Registry(_) => "download-failed",
            FetchError::Artifact(_) => "unreadable-artifact",
            FetchError::Cache { .. } => "cache-io",
        }
    }

    /// The digests involved, for `--json`: (file, expected, actual).
    pub fn digests(&self) -> Option<(String, String, String)> {
        match self {
            FetchError::DigestMismatch {
                file,
                expected,
                actual,
                ..
            } => Some((file.clone(), expected.clone(), actual.clone())),
            FetchError::CacheCorrupt {
                path,
                expected,
                actual,
                ..
            } => Some((path.display().to_string(), expected.clone(), actual.clone())),
            FetchError::Registry(RegistryError::Mismatch {
                what,
                expected,
                actual,
            }) => Some((what.clone(), expected.clone(), actual.clone())),
            _ => None,
        }
    }
}

fn cache_error(path: &Path) -> impl FnOnce(io::Error) -> FetchError + '_ {
    move |source| FetchError::Cache {
        path: path.to_path_buf(),
        source,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Wheel,
    Binary,
    Deb,
    RuntimeFile,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Found in the cache and re-verified.
    Cached,
    /// Downloaded now and verified.
    Downloaded,
    /// Taken out of its (verified) package now and verified.
    Extracted,
}

/// One verified file, where it is in the cache and where it goes in the image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchedFile {
    pub role: Role,
    pub name: String,
    pub sha256: String,
    pub size: u64,
    pub path: PathBuf,
    pub image_path: Option<String>,
    pub mode: Option<String>,
    pub state: State,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchedPlatform {
    pub platform: String,
    pub clients: Vec<String>,
    pub files: Vec<FetchedFile>,
    pub symlinks: Vec<RuntimeSymlink>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fetched {
    pub platforms: Vec<FetchedPlatform>,
    /// How many files came from a registry in this run (0: the cache answered everything).
    pub downloads: usize,
}

/// The cache directory while a fetch or lock holds it: an exclusive lock on `<cache>/.lock`
/// (so leftovers of an interrupted run can be swept safely), the store, and a scratch area.
pub struct Cache {
    pub root: PathBuf,
    pub store: Store,
    _lock: File,
}

impl Cache {
    pub fn open(root: &Path) -> Result<Cache, FetchError> {
        std::fs::create_dir_all(root).map_err(cache_error(root))?;
        let lock_path = root.join(".lock");
        let lock = File::create(&lock_path).map_err(cache_error(&lock_path))?;
        lock.lock().map_err(cache_error(&lock_path))?;
        let store = Store::open(root).map_err(cache_error(root))?;
        let cache = Cache {
            root: root.to_path_buf(),
            store,
            _lock: lock,
        };
        cache.sweep_leftovers();
        Ok(cache)
    }

    /// Remove what an interrupted run left: scratch directories and half-written entries.
    fn sweep_leftovers(&self) {
        let _ = std::fs::remove_dir_all(self.root.join("tmp"));
        if let Ok(entries) = std::fs::read_dir(self.store.path_of("")) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with(".incoming-") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }

    fn scratch(&self) -> Result<tempfile::TempDir, FetchError> {
        let dir = self.root.join("tmp");
        std::fs::create_dir_all(&dir).map_err(cache_error(&dir))?;
        tempfile::tempdir_in(&dir).map_err(cache_error(&dir))
    }
}

/// Options of one fetch.
pub struct FetchPlan<'a> {
    pub lock: &'a Lock,
    /// Empty: every platform the lock names.
    pub platforms: &'a [String],
    /// Empty: every client the lock names.
    pub clients: &'a [String],
    pub offline: bool,
}

/// Fetch and verify everything the plan asks for. `note` receives one progress line per
/// download or extraction.
pub fn fetch(
    plan: &FetchPlan<'_>,
    cache: &Cache,
    registry: &mut dyn Registry,
    note: &mut dyn FnMut(String),
) -> Result<Fetched, FetchError> {
    let pinned: Vec<String> = plan.lock.clients.iter().map(|c| c.client.clone()).collect();
    for c in plan.clients {
        if !pinned.contains(c) {
            return Err(FetchError::UnknownClient {
                client: c.clone(),
                known: pinned,
            });
        }
    }
    let known: Vec<String> = plan
        .lock
        .platforms()
        .iter()
        .map(|p| p.to_string())
        .collect();
    let wanted: Vec<String> = if plan.platforms.is_empty() {
        known.clone()
    } else {
        plan.platforms.to_vec()
    };
    for p in &wanted {
        if !known.contains(p) {
            return Err(FetchError::UnknownPlatform {
                platform: p.clone(),
                known,
            });
        }
    }
    let mut out = Fetched {
        platforms: Vec::new(),
        downloads: 0,
    };
    for p in &wanted {
        let mut files = Vec::new();
        let mut clients = Vec::new();
        let mut runtimes = BTreeSet::new();
        for c in &plan.lock.clients {
            if !plan.clients.is_empty() && !plan.clients.contains(&c.client) {
                continue;
            }
            let Some(cp) = c.platforms.iter().find(|cp| &cp.platform == p) else {
                continue;
            };
            clients.push(c.client.clone());
            let request = WheelRequest {
                name: c.package.name.clone(),
                version: c.package.version.clone(),
                pip_platform: cp.pip_platform.clone(),
                sha256: Some(cp.wheel.sha256.clone()),
            };
            let wheel = ensure_artifact(cache, &cp.wheel, plan.offline, note, |dir| {
                registry.wheel(&request, dir)
            })?;
            let wheel_path = wheel.path.clone();
            out.downloads += usize::from(wheel.state == State::Downloaded);
            files.push(FetchedFile {
                role: Role::Wheel,
                ..wheel
            });
            files.push(ensure_binary(cache, c, cp, &wheel_path, note)?);
            if let Some(id) = &cp.runtime {
                runtimes.insert(id.clone());
            }
        }
        let mut symlinks = Vec::new();
        for id in runtimes {
            let runtime = plan.lock.runtime(&id).expect("validated: runtimes exist");
            let request = DebRequest {
                name: runtime.package.name.clone(),
                architecture: runtime.package.architecture.clone(),
                version: runtime.package.version.clone(),
            };
            let deb = ensure_artifact(cache, &runtime.deb, plan.offline, note, |dir| {
                registry.deb(&request, dir)
            })?;
            out.downloads += usize::from(deb.state == State::Downloaded);
            let deb_path = deb.path.clone();
            files.push(FetchedFile {
                role: Role::Deb,
                ..deb
            });
            files.extend(ensure_runtime_files(cache, runtime, &deb_path, note)?);
            symlinks.extend(runtime.symlinks.iter().cloned());
        }
        out.platforms.push(FetchedPlatform {
            platform: p.clone(),
            clients,
            files,
            symlinks,
        });
    }
    Ok(out)
}

/// A registry file: from the cache if there and intact, else downloaded and verified.
fn ensure_artifact(
    cache: &Cache,
    pinned: &Artifact,
    offline: bool,
    note: &mut dyn FnMut(String),
    download: impl FnOnce(&Path) -> Result<PathBuf, RegistryError>,
) -> Result<FetchedFile, FetchError> {
    let found = |path: PathBuf, state| FetchedFile {
        role: Role::Wheel,
        name: pinned.file.clone(),
        sha256: pinned.sha256.clone(),
        size: pinned.size,
        path,
        image_path: None,
        mode: None,
        state,
    };
    match lookup(cache, &pinned.sha256, pinned.size)? {
        Some(path) => return Ok(found(path, State::Cached)),
        None if offline => {
            return Err(FetchError::Offline {
                file: pinned.file.clone(),
            })
        }
        None => {}
    }
    note(format!("downloading {}", pinned.file));
    let scratch = cache.scratch()?;
    let got = download(scratch.path())?;
    let got_name = got
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let shown = if got_name == pinned.file {
        pinned.file.clone()
    } else {
        format!("{} (the registry sent {got_name})", pinned.file)
    };
    let reader = File::open(&got).map_err(cache_error(&got))?;
    let stored = cache
        .store
        .insert(reader, &pinned.sha256, pinned.size, false)
        .map_err(cache_error(&cache.root))?;
    match stored {
        Ok(path) => Ok(found(path, State::Downloaded)),
        Err(Mismatch { actual, size }) => Err(FetchError::DigestMismatch {
            file: shown,
            expected: pinned.sha256.clone(),
            actual,
            expected_size: pinned.size,
            actual_size: size,
        }),
    }
}

/// The store path of a verified entry, None when absent; a corrupt entry is refused.
fn lookup(cache: &Cache, sha256: &str, size: u64) -> Result<Option<PathBuf>, FetchError> {
    match cache
        .store
        .lookup(sha256, size)
        .map_err(cache_error(&cache.root))?
    {
        Entry::Verified(path) => Ok(Some(path)),
        Entry::Absent => Ok(None),
        Entry::Corrupt { path, actual, size } => Err(FetchError::CacheCorrupt {
            path,
            expected: sha256.to_string(),
            actual,
            actual_size: size,
        }),
    }
}

fn ensure_binary(
    cache: &Cache,
    client: &Client,
    cp: &ClientPlatform,
    wheel: &Path,
    note: &mut dyn FnMut(String),
) -> Result<FetchedFile, FetchError> {
    let name = format!("{}!{}", cp.wheel.file, client.binary_member);
    let file = |path, state| FetchedFile {
        role: Role::Binary,
        name: name.clone(),
        sha256: cp.binary.sha256.clone(),
        size: cp.binary.size,
        path,
        image_path: Some(client.image_path.clone()),
        mode: Some("0755".into()),
        state,
    };
    if let Some(path) = lookup(cache, &cp.binary.sha256, cp.binary.size)? {
        return Ok(file(path, State::Cached));
    }
    note(format!("extracting {name}"));
    let stored = with_wheel_member(wheel, &client.binary_member, |reader| {
        cache
            .store
            .insert(reader, &cp.binary.sha256, cp.binary.size, true)
    })?;
    match stored {
        None => Err(FetchError::MissingMember {
            artifact: cp.wheel.file.clone(),
            member: client.binary_member.clone(),
            problem: "no such file in the wheel".into(),
        }),
        Some(Ok(path)) => Ok(file(path, State::Extracted)),
        Some(Err(Mismatch { actual, size })) => Err(FetchError::DigestMismatch {
            file: name,
            expected: cp.binary.sha256.clone(),
            actual,
            expected_size: cp.binary.size,
            actual_size: size,
        }),
    }
}

fn ensure_runtime_files(
    cache: &Cache,
    runtime: &Runtime,
    deb: &Path,
    note: &mut dyn FnMut(String),
) -> Result<Vec<FetchedFile>, FetchError> {
    let fetched = |f: &RuntimeFile, path, state| FetchedFile {
        role: Role::RuntimeFile,
        name: format!("{}!{}", runtime.deb.file, f.member),
        sha256: f.sha256.clone(),
        size: f.size,
        path,
        image_path: Some(f.image_path.clone()),
        mode: Some(f.mode.clone()),
        state,
    };
    let mut done: BTreeMap<&str, FetchedFile> = BTreeMap::new();
    let mut missing: BTreeMap<&str, &RuntimeFile> = BTreeMap::new();
    for f in &runtime.files {
        match lookup(cache, &f.sha256, f.size)? {
            Some(path) => {
                done.insert(&f.member, fetched(f, path, State::Cached));
            }
            None => {
                missing.insert(&f.member, f);
            }
        }
    }
    if !missing.is_empty() {
        note(format!(
            "extracting {} file(s) from {}",
            missing.len(),
            runtime.deb.file
        ));
        // The first refusal met inside the walk (the walk itself only sees io errors).
        let mut refusal: Option<FetchError> = None;
        walk_deb(deb, |name, entry, reader| {
            let Some(f) = missing.get(name) else {
                return Ok(());
            };
            if refusal.is_some() {
                return Ok(());
            }
            if !matches!(entry, DebEntry::File { .. }) {
                refusal = Some(FetchError::MissingMember {
                    artifact: runtime.deb.file.clone(),
                    member: f.member.clone(),
                    problem: "not a regular file in the package".into(),
                });
                return Ok(());
            }
            let executable = f.mode.ends_with(['5', '7']);
            match cache.store.insert(reader, &f.sha256, f.size, executable)? {
                Ok(path) => {
                    done.insert(&f.member, fetched(f, path, State::Extracted));
                }
                Err(Mismatch { actual, size }) => {
                    refusal = Some(FetchError::DigestMismatch {
                        file: format!("{}!{}", runtime.deb.file, f.member),
                        expected: f.sha256.clone(),
                        actual,
                        expected_size: f.size,
                        actual_size: size,
                    })
                }
            }
            Ok(())
        })?;
        if let Some(e) = refusal {
            return Err(e);
        }
    }
    // In lock order; anything never met in the package is missing from it.
    let mut out = Vec::new();
    for f in &runtime.files {
        match done.remove(f.member.as_str()) {
            Some(file) => out.push(file),
            None => {
                return Err(FetchError::MissingMember {
                    artifact: runtime.deb.file.clone(),
                    member: f.member.clone(),
                    problem: "no such member in the package".into(),
                })
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------- `scopebox native lock`

/// Version changes asked of `scopebox native lock`.
#[derive(Debug, Default, Clone)]
pub struct Bumps {
    /// client id → new package version.
    pub packages: BTreeMap<String, String>,
    /// New version of every runtime package.
    pub runtime_version: Option<String>,
    /// Clients to add (client id → package version), from `lock::KNOWN_CLIENTS`.
    pub add: BTreeMap<String, String>,
}

/// Download the lock's pinned versions (with `bumps` applied) afresh and compute the lock they
/// make: every digest, size and file name, the client version, the ELF facts, and the runtime
/// files those facts need. Everything lands verified in the cache, as after a fetch.
pub fn resolve(
    current: &Lock,
    bumps: &Bumps,
    cache: &Cache,
    registry: &mut dyn Registry,
    note: &mut dyn FnMut(String),
) -> Result<Lock, FetchError> {
    for id in bumps.packages.keys() {
        if !current.clients.iter().any(|c| &c.client == id) {
            return Err(FetchError::Unresolvable {
                what: format!("--package-version {id}=…"),
                problem: "the lock has no such client".into(),
            });
        }
    }
    let mut to_resolve = current.clients.clone();
    for (id, version) in &bumps.add {
        if current.clients.iter().any(|c| &c.client == id) {
            return Err(FetchError::Unresolvable {
                what: format!("--add-client {id}={version}"),
                problem: "the lock has it already (bump it with --package-version)".into(),
            });
        }
        let Some(known) = KnownClient::find(id) else {
            return Err(FetchError::Unresolvable {
                what: format!("--add-client {id}={version}"),
                problem: format!(
                    "no known package for that client (known: {})",
                    KNOWN_CLIENTS
                        .iter()
                        .map(|k| k.client)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        };
        to_resolve.push(known.skeleton(version));
    }
    let mut clients = Vec::new();
    // platform → what the clients there need from its runtime.
    let mut needs: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> = BTreeMap::new();
    for c in &to_resolve {
        let mut client = c.clone();
        if let Some(v) = bumps.packages.get(&c.client) {
            client.package.version = v.clone();
        }
        let mut versions = BTreeSet::new();
        client.platforms.clear();
        for cp in &c.platforms {
            let request = WheelRequest {
                name: client.package.name.clone(),
                version: client.package.version.clone(),
                pip_platform: cp.pip_platform.clone(),
                sha256: None,
            };
            note(format!(
                "resolving {}=={} for {}",
                request.name, request.version, cp.platform
            ));
            let scratch = cache.scratch()?;
            let wheel_path = registry.wheel(&request, scratch.path())?;
            let (wheel, stored_wheel) = store_any(cache, &wheel_path, false)?;
            let binary = with_wheel_member(&stored_wheel, &client.binary_member, |r| {
                store_reader(cache, r, true)
            })?
            .ok_or_else(|| FetchError::MissingMember {
                artifact: wheel.file.clone(),
                member: client.binary_member.clone(),
                problem: "no such file in the wheel".into(),
            })?;
            if let Some(member) = &client.version_member {
                let text = with_wheel_member(&stored_wheel, member, |r| {
                    let mut s = String::new();
                    io::Read::read_to_string(&mut io::Read::take(r, 4096), &mut s)?;
                    Ok(s)
                })?
                .map(|text| version_text(member, &text))
                .ok_or_else(|| FetchError::MissingMember {
                    artifact: wheel.file.clone(),
                    member: member.clone(),
                    problem: "no such file in the wheel".into(),
                })?;
                versions.insert(text);
            }
            let facts = elf_facts(&cache.store.path_of(&binary.sha256))?;
            if Some(facts.machine.as_str()) != machine_of(&cp.platform) {
                return Err(FetchError::Unresolvable {
                    what: format!("{}!{}", wheel.file, client.binary_member),
                    problem: format!(
                        "its ELF machine is {}, not the one of {}",
                        facts.machine, cp.platform
                    ),
                });
            }
            let runtime = facts.interpreter.as_ref().map(|_| {
                let (_, arch, _) = platform(&cp.platform).expect("validated platform");
                format!("libc6-{arch}")
            });
            if facts.interpreter.is_some() {
                let entry = needs.entry(cp.platform.clone()).or_default();
                entry.0.extend(facts.interpreter.iter().cloned());
                entry.1.extend(facts.needed.iter().cloned());
            }
            client.platforms.push(ClientPlatform {
                platform: cp.platform.clone(),
                pip_platform: cp.pip_platform.clone(),
                wheel,
                binary,
                interpreter: facts.interpreter,
                needed: facts.needed,
                runtime,
            });
        }
        if versions.contains("") {
            return Err(FetchError::Unresolvable {
                what: format!("the version of {}", c.client),
                problem: format!(
                    "{} states no version",
                    c.version_member.as_deref().unwrap_or("")
                ),
            });
        }
        if let Some(v) = versions.iter().next() {
            if versions.len() > 1 {
                return Err(FetchError::Unresolvable {
                    what: format!("the version of {}", c.client),
                    problem: format!(
                        "its platforms say different versions: {}",
                        versions.iter().cloned().collect::<Vec<_>>().join(", ")
                    ),
                });
            }
            client.version = v.clone();
        }
        clients.push(client);
    }
    let mut runtimes = Vec::new();
    for (platform_name, (interpreters, needed)) in needs {
        let (_, arch, triplet) = platform(&platform_name).expect("validated platform");
        let previous = current
            .runtimes
            .iter()
            .find(|r| r.platform == platform_name);
        let name = previous.map_or("libc6".to_string(), |r| r.package.name.clone());
        let version =
            match (&bumps.runtime_version, previous) {
                (Some(v), _) => v.clone(),
                (None, Some(r)) => r.package.version.clone(),
                (None, None) => return Err(FetchError::Unresolvable {
                    what: format!("the runtime for {platform_name}"),
                    problem:
                        "the lock names no runtime version to start from; pass --runtime-version"
                            .into(),
                }),
            };
        let request = DebRequest {
            name: name.clone(),
            architecture: arch.to_string(),
            version: version.clone(),
        };
        note(format!("resolving {name}:{arch}={version}"));
        let scratch = cache.scratch()?;
        let deb_path = registry.deb(&request, scratch.path())?;
        let (deb, stored_deb) = store_any(cache, &deb_path, false)?;
        let mut wanted: BTreeSet<String> = interpreters.iter().map(|i| format!(".{i}")).collect();
        wanted.extend(needed.iter().map(|n| format!("./lib/{triplet}/{n}")));
        let (files, symlinks) = runtime_members(cache, &stored_deb, &deb.file, &wanted)?;
        runtimes.push(Runtime {
            id: format!("libc6-{arch}"),
            platform: platform_name.clone(),
            package: super::lock::DebianPackage {
                registry: "debian".into(),
                name,
                architecture: arch.to_string(),
                version,
            },
            deb,
            files,
            symlinks,
        });
    }
    let lock = Lock {
        schema_version: current.schema_version,
        clients,
        runtimes,
    };
    let problems = lock.problems();
    if !problems.is_empty() {
        return Err(FetchError::Unresolvable {
            what: "the new lock".into(),
            problem: problems.join("; "),
        });
    }
    Ok(lock)
}

/// The version a version member states: a `.json` member's `version` string (Codex's
/// `codex-package.json`), else the text's first word (Claude Code's `claude.version`); empty
/// when it states none (refused by `resolve`).
fn version_text(member: &str, text: &str) -> String {
    if member.ends_with(".json") {
        return serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("version")?.as_str().map(str::to_owned))
            .unwrap_or_default();
    }
    text.split_whitespace().next().unwrap_or("").to_string()
}

/// Find the wanted members in the `.deb` (following symlinks inside the package to the file
/// they name) and store each file; returns the lock's files and symlinks, sorted.
fn runtime_members(
    cache: &Cache,
    deb: &Path,
    deb_name: &str,
    wanted: &BTreeSet<String>,
) -> Result<(Vec<RuntimeFile>, Vec<RuntimeSymlink>), FetchError> {
    let mut index: BTreeMap<String, DebEntry> = BTreeMap::new();
    walk_deb(deb, |name, entry, _| {
        index.insert(name.to_string(), entry.clone());
        Ok(())
    })?;
    let missing = |member: &str, problem: &str| FetchError::MissingMember {
        artifact: deb_name.to_string(),
        member: member.to_string(),
        problem: problem.to_string(),
    };
    let mut files: BTreeMap<String, u32> = BTreeMap::new();
    let mut symlinks = Vec::new();
    for member in wanted {
        let mut at = member.clone();
        // A short chain of symlinks inside the package, ending at a regular file.
        for _ in 0..8 {
            match index.get(&at) {
                Some(DebEntry::File { mode, .. }) => {
                    files.insert(at.clone(), *mode);
                    break;
                }
                Some(DebEntry::Symlink { target }) => {
                    symlinks.push(RuntimeSymlink {
                        image_path: image_path_of(&at),
                        target: target.clone(),
                    });
                    at = resolve_link(&at, target)
                        .ok_or_else(|| missing(&at, "a symlink leaving the package"))?;
                }
                Some(DebEntry::Other) => return Err(missing(&at, "not a file or symlink")),
                None => return Err(missing(&at, "no such member in the package")),
            }
        }
        if !files.contains_key(&at) {
            return Err(missing(member, "too many symlinks"));
        }
    }
    symlinks.sort_by(|a, b| a.image_path.cmp(&b.image_path));
    symlinks.dedup();
    let mut stored: BTreeMap<String, Digest> = BTreeMap::new();
    walk_deb(deb, |name, _, reader| {
        if let Some(mode) = files.get(name) {
            let d = store_reader(cache, reader, mode & 0o111 != 0).map_err(io::Error::other)?;
            stored.insert(name.to_string(), d);
        }
        Ok(())
    })?;
    let files = files
        .iter()
        .map(|(member, mode)| {
            let d = &stored[member];
            RuntimeFile {
                member: member.clone(),
                image_path: image_path_of(member),
                mode: format!("{mode:04o}"),
                sha256: d.sha256.clone(),
                size: d.size,
            }
        })
        .collect();
    Ok((files, symlinks))
}

/// The member a symlink at `member` names (`./lib/ld.so` + `x/ld.so` → `./lib/x/ld.so`;
/// absolute targets are inside the package root). None if it climbs out.
fn resolve_link(member: &str, target: &str) -> Option<String> {
    let mut parts: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        let dir = member.trim_start_matches("./");
        let mut p: Vec<&str> = dir.split('/').collect();
        p.pop();
        p
    };
    for c in target.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(format!("./{}", parts.join("/")))
}

/// Store a downloaded file under its own digest; returns its lock entry and store path.
fn store_any(
    cache: &Cache,
    path: &Path,
    executable: bool,
) -> Result<(Artifact, PathBuf), FetchError> {
    let reader = File::open(path).map_err(cache_error(path))?;
    let d = store_reader(cache, reader, executable).map_err(cache_error(&cache.root))?;
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((
        Artifact {
            file,
            sha256: d.sha256.clone(),
            size: d.size,
        },
        cache.store.path_of(&d.sha256),
    ))
}

/// Store whatever `reader` yields under its own digest.
fn store_reader(cache: &Cache, reader: impl io::Read, executable: bool) -> io::Result<Digest> {
    let (_, sha256, size) = cache.store.insert_as_hashed(reader, executable)?;
    Ok(Digest { sha256, size })
}

#[cfg(test)]
mod tests;
