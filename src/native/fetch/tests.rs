//! fetch and resolve against a fake registry that serves files built in the test (a zip wheel,
//! a `.deb` made with dpkg-deb): no network. Every refusal path is driven by a real byte
//! difference — a wrong pin, a tampered cache entry, a missing member — never by a stub.

use super::*;
use crate::native::artifact::tests::{write_deb, write_zip};
use crate::native::lock::tests::sample;
use scopebox_schema::digest::sha256_hex;
use std::os::unix::fs::PermissionsExt;

const BINARY: &[u8] = b"\x7fELF pretend client";
const LD: &[u8] = b"pretend ld.so";
const LIBC: &[u8] = b"pretend libc";
const MEMBER: &str = "claude_agent_sdk/_bundled/claude";

/// Serves fixed local files; counts what it was asked.
struct FakeRegistry {
    wheel: PathBuf,
    /// Wheels served instead of `wheel` for (package name, pip platform).
    others: Vec<((String, String), PathBuf)>,
    deb: PathBuf,
    calls: Vec<String>,
    refuse: Option<RegistryError>,
}

impl Registry for FakeRegistry {
    fn wheel(&mut self, r: &WheelRequest, dir: &Path) -> Result<PathBuf, RegistryError> {
        self.calls.push(format!(
            "wheel {}=={} {}",
            r.name, r.version, r.pip_platform
        ));
        if let Some(e) = self.refuse.take() {
            return Err(e);
        }
        let key = (r.name.clone(), r.pip_platform.clone());
        let from = self
            .others
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(&self.wheel, |(_, p)| p);
        let to = dir.join(from.file_name().unwrap());
        std::fs::copy(from, &to).unwrap();
        Ok(to)
    }

    fn deb(&mut self, r: &DebRequest, dir: &Path) -> Result<PathBuf, RegistryError> {
        self.calls
            .push(format!("deb {}:{}={}", r.name, r.architecture, r.version));
        let to = dir.join(self.deb.file_name().unwrap());
        std::fs::copy(&self.deb, &to).unwrap();
        Ok(to)
    }
}

struct World {
    _dir: tempfile::TempDir,
    cache_root: PathBuf,
    registry: FakeRegistry,
    lock: Lock,
}

/// A wheel and a deb on disk, and a lock that pins them exactly.
fn world() -> World {
    world_with_binary(BINARY)
}

fn world_with_binary(binary: &[u8]) -> World {
    let dir = tempfile::tempdir().unwrap();
    let mut lock = sample();
    let wheel_name = lock.clients[0].platforms[0].wheel.file.clone();
    let deb_name = lock.runtimes[0].deb.file.clone();
    let wheel = dir.path().join(&wheel_name);
    write_zip(
        &wheel,
        &[
            (MEMBER, binary),
            (
                "claude_agent_sdk/_bundled/claude.version",
                b"2.1.327 (Claude Code)\n",
            ),
        ],
    );
    let deb = dir.path().join(&deb_name);
    write_deb(
        &deb,
        &[
            ("./lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", LD, 0o755),
            ("./lib/x86_64-linux-gnu/libc.so.6", LIBC, 0o755),
            ("./usr/share/doc/libc6/copyright", b"c", 0o644),
        ],
        &[(
            "./lib64/ld-linux-x86-64.so.2",
            "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
        )],
    );
    let pin = |path: &Path| {
        let bytes = std::fs::read(path).unwrap();
        (sha256_hex(&bytes), bytes.len() as u64)
    };
    let p = &mut lock.clients[0].platforms[0];
    (p.wheel.sha256, p.wheel.size) = pin(&wheel);
    p.binary.sha256 = sha256_hex(binary);
    p.binary.size = binary.len() as u64;
    let r = &mut lock.runtimes[0];
    (r.deb.sha256, r.deb.size) = pin(&deb);
    r.files[0].sha256 = sha256_hex(LD);
    r.files[0].size = LD.len() as u64;
    r.files[1].sha256 = sha256_hex(LIBC);
    r.files[1].size = LIBC.len() as u64;
    assert_eq!(lock.problems(), Vec::<String>::new());
    World {
        cache_root: dir.path().join("cache"),
        _dir: dir,
        registry: FakeRegistry {
            wheel,
            others: Vec::new(),
            deb,
            calls: Vec::new(),
            refuse: None,
        },
        lock,
    }
}

impl World {
    fn fetch(&mut self, offline: bool) -> Result<Fetched, FetchError> {
        let cache = Cache::open(&self.cache_root).unwrap();
        let plan = FetchPlan {
            lock: &self.lock,
            platforms: &[],
            clients: &[],
            offline,
        };
        fetch(&plan, &cache, &mut self.registry, &mut |_| {})
    }

    fn resolve(&mut self, current: &Lock, bumps: &Bumps) -> Result<Lock, FetchError> {
        let cache = Cache::open(&self.cache_root).unwrap();
        resolve(current, bumps, &cache, &mut self.registry, &mut |_| {})
    }

    fn store_path(&self, bytes: &[u8]) -> PathBuf {
        self.cache_root.join("sha256").join(sha256_hex(bytes))
    }
}

fn states(f: &Fetched) -> Vec<(Role, State)> {
    f.platforms[0]
        .files
        .iter()
        .map(|f| (f.role, f.state))
        .collect()
}

#[test]
fn a_first_fetch_downloads_verifies_and_extracts_every_pinned_file() {
    let mut w = world();
    let got = w.fetch(false).unwrap();
    assert_eq!(got.downloads, 2);
    assert_eq!(
        states(&got),
        vec![
            (Role::Wheel, State::Downloaded),
            (Role::Binary, State::Extracted),
            (Role::Deb, State::Downloaded),
            (Role::RuntimeFile, State::Extracted),
            (Role::RuntimeFile, State::Extracted),
        ]
    );
    assert_eq!(
        w.registry.calls,
        vec![
            "wheel claude-agent-sdk==0.2.184 manylinux_2_17_x86_64",
            "deb libc6:amd64=2.36-9+deb12u14"
        ]
    );
    let files = &got.platforms[0].files;
    assert_eq!(std::fs::read(&files[1].path).unwrap(), BINARY);
    assert_eq!(files[1].path, w.store_path(BINARY));
    assert_eq!(
        files[1].image_path.as_deref(),
        Some("/scopebox/native/claude-code/claude")
    );
    let mode = std::fs::metadata(&files[1].path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o555, "the binary is stored executable, read only");
    assert_eq!(std::fs::read(&files[4].path).unwrap(), LIBC);
    assert_eq!(got.platforms[0].symlinks, w.lock.runtimes[0].symlinks);
    // Nothing else was taken out of the package (the copyright file is not pinned).
    let stored = std::fs::read_dir(w.cache_root.join("sha256"))
        .unwrap()
        .count();
    assert_eq!(stored, 5);
}

#[test]
fn a_second_fetch_is_a_verified_cache_hit_without_the_network() {
    let mut w = world();
    w.fetch(false).unwrap();
    w.registry.calls.clear();
    let again = w.fetch(false).unwrap();
    assert_eq!(again.downloads, 0);
    assert!(w.registry.calls.is_empty(), "{:?}", w.registry.calls);
    assert!(states(&again).iter().all(|(_, s)| *s == State::Cached));
    // --offline is satisfied by the same cache.
    assert!(w.fetch(true).is_ok());
}

#[test]
fn an_extracted_file_deleted_from_the_cache_comes_back_from_the_cached_package() {
    let mut w = world();
    w.fetch(false).unwrap();
    std::fs::remove_file(w.store_path(LIBC)).unwrap();
    std::fs::remove_file(w.store_path(BINARY)).unwrap();
    w.registry.calls.clear();
    let got = w.fetch(true).unwrap();
    assert!(w.registry.calls.is_empty());
    assert_eq!(got.platforms[0].files[1].state, State::Extracted);
    assert_eq!(got.platforms[0].files[4].state, State::Extracted);
    assert_eq!(got.platforms[0].files[3].state, State::Cached);
}

#[test]
fn registry_bytes_other_than_the_pinned_ones_are_refused_naming_the_file() {
    let mut w = world();
    let real = w.lock.clients[0].platforms[0].wheel.sha256.clone();
    let pinned = "0".repeat(64);
    w.lock.clients[0].platforms[0].wheel.sha256 = pinned.clone();
    let err = w.fetch(false).unwrap_err();
    match &err {
        FetchError::DigestMismatch {
            file,
            expected,
            actual,
            ..
        } => {
            assert_eq!(
                file,
                "claude_agent_sdk-0.2.184-py3-none-manylinux_2_17_x86_64.whl"
            );
            assert_eq!(expected, &pinned);
            assert_eq!(actual, &real);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.is_refusal());
    assert_eq!(err.code(), "digest-mismatch");
    assert!(!w.cache_root.join("sha256").join(&pinned).exists());
    assert!(
        !w.cache_root.join("sha256").join(&real).exists(),
        "nothing unpinned is kept"
    );
}

#[test]
fn a_binary_inside_the_wheel_other_than_the_pinned_one_is_refused() {
    let mut w = world_with_binary(b"\x7fELF a different client");
    w.lock.clients[0].platforms[0].binary.sha256 = sha256_hex(BINARY);
    w.lock.clients[0].platforms[0].binary.size = BINARY.len() as u64;
    let err = w.fetch(false).unwrap_err();
    match &err {
        FetchError::DigestMismatch {
            file,
            expected,
            actual,
            ..
        } => {
            assert!(
                file.ends_with(".whl!claude_agent_sdk/_bundled/claude"),
                "{file}"
            );
            assert_eq!(expected, &sha256_hex(BINARY));
            assert_eq!(actual, &sha256_hex(b"\x7fELF a different client"));
        }
        other => panic!("{other:?}"),
    }
    assert!(!w.store_path(BINARY).exists());
}

#[test]
fn a_member_missing_from_its_package_is_refused() {
    let mut w = world();
    w.lock.clients[0].binary_member = "claude_agent_sdk/_bundled/claude-gone".into();
    let err = w.fetch(false).unwrap_err();
    assert!(
        matches!(&err, FetchError::MissingMember { member, .. } if member == "claude_agent_sdk/_bundled/claude-gone"),
        "{err:?}"
    );
    assert_eq!(err.code(), "missing-member");

    let mut w = world();
    w.lock.runtimes[0].files[1].member = "./lib/x86_64-linux-gnu/libc.so.7".into();
    let err = w.fetch(false).unwrap_err();
    assert!(
        matches!(&err, FetchError::MissingMember { member, .. } if member.ends_with("libc.so.7")),
        "{err:?}"
    );
    // A member that is a symlink in the package is not the file the lock pins.
    let mut w = world();
    w.lock.runtimes[0].files[1].member = "./lib64/ld-linux-x86-64.so.2".into();
    let err = w.fetch(false).unwrap_err();
    assert!(
        matches!(&err, FetchError::MissingMember { problem, .. } if problem.contains("not a regular file")),
        "{err:?}"
    );
}

#[test]
fn a_runtime_file_other_than_the_pinned_one_is_refused() {
    let mut w = world();
    w.lock.runtimes[0].files[1].sha256 = sha256_hex(b"another libc");
    let err = w.fetch(false).unwrap_err();
    assert!(
        matches!(&err, FetchError::DigestMismatch { file, actual, .. }
            if file.ends_with(".deb!./lib/x86_64-linux-gnu/libc.so.6") && *actual == sha256_hex(LIBC)),
        "{err:?}"
    );
}

#[test]
fn a_tampered_cache_entry_is_refused_and_never_used() {
    let mut w = world();
    w.fetch(false).unwrap();
    let entry = w.store_path(BINARY);
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(&entry, b"#!/bin/sh\necho pwned\n").unwrap();
    w.registry.calls.clear();
    let err = w.fetch(false).unwrap_err();
    match &err {
        FetchError::CacheCorrupt {
            path,
            expected,
            actual,
            ..
        } => {
            assert_eq!(path, &entry);
            assert_eq!(expected, &sha256_hex(BINARY));
            assert_eq!(actual, &sha256_hex(b"#!/bin/sh\necho pwned\n"));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.is_refusal());
    assert!(w.registry.calls.is_empty());
    // The evidence is left for a person to look at.
    assert_eq!(std::fs::read(&entry).unwrap(), b"#!/bin/sh\necho pwned\n");
}

#[test]
fn a_version_the_registry_no_longer_serves_is_a_refusal() {
    let mut w = world();
    w.registry.refuse = Some(RegistryError::NotServed {
        what: "claude-agent-sdk==0.2.184 for manylinux_2_17_x86_64".into(),
        detail: "No matching distribution found".into(),
    });
    let err = w.fetch(false).unwrap_err();
    assert!(err.is_refusal());
    assert_eq!(err.code(), "not-served");
    assert!(
        err.to_string().contains("claude-agent-sdk==0.2.184"),
        "{err}"
    );
    // A transient failure is not a refusal.
    let mut w = world();
    w.registry.refuse = Some(RegistryError::Failed {
        what: "x".into(),
        detail: "connection reset".into(),
    });
    let err = w.fetch(false).unwrap_err();
    assert!(!err.is_refusal());
    assert_eq!(err.code(), "download-failed");
}

#[test]
fn offline_with_an_empty_cache_is_refused_before_any_download() {
    let mut w = world();
    let err = w.fetch(true).unwrap_err();
    assert!(
        matches!(&err, FetchError::Offline { file } if file.ends_with(".whl")),
        "{err:?}"
    );
    assert!(w.registry.calls.is_empty());
}

#[test]
fn an_unknown_platform_is_refused() {
    let mut w = world();
    let cache = Cache::open(&w.cache_root).unwrap();
    let platforms = ["linux/arm64".to_string()];
    let plan = FetchPlan {
        lock: &w.lock,
        platforms: &platforms,
        clients: &[],
        offline: false,
    };
    let err = fetch(&plan, &cache, &mut w.registry, &mut |_| {}).unwrap_err();
    assert!(
        matches!(&err, FetchError::UnknownPlatform { platform, known } if platform == "linux/arm64" && known == &["linux/amd64"]),
        "{err:?}"
    );
}

#[test]
fn leftovers_of_an_interrupted_run_are_swept_when_the_cache_is_opened() {
    let w = world();
    {
        let cache = Cache::open(&w.cache_root).unwrap();
        std::fs::create_dir_all(w.cache_root.join("tmp/partial")).unwrap();
        std::fs::write(cache.store.path_of(".incoming-x"), b"half").unwrap();
    }
    let cache = Cache::open(&w.cache_root).unwrap();
    assert!(!w.cache_root.join("tmp").exists());
    assert!(!cache.store.path_of(".incoming-x").exists());
}

#[test]
fn links_inside_a_package_resolve_within_it() {
    assert_eq!(
        resolve_link(
            "./lib/ld-linux-aarch64.so.1",
            "aarch64-linux-gnu/ld-linux-aarch64.so.1"
        )
        .as_deref(),
        Some("./lib/aarch64-linux-gnu/ld-linux-aarch64.so.1")
    );
    assert_eq!(
        resolve_link("./lib64/ld.so", "/lib/x/ld.so").as_deref(),
        Some("./lib/x/ld.so")
    );
    assert_eq!(resolve_link("./a/b", "../../../etc/x"), None);
}

/// The sample lock moved to `platform` (its digests stale: resolve recomputes them).
fn sample_on(platform: &str) -> Lock {
    let (_, arch, _) = super::platform(platform).unwrap();
    let mut l = sample();
    l.clients[0].platforms[0].platform = platform.into();
    l.runtimes[0].platform = platform.into();
    l.runtimes[0].package.architecture = arch.into();
    l
}

/// The host's own /bin/true: a small dynamically linked ELF of the host's architecture.
fn host_elf() -> Option<(Vec<u8>, &'static str, &'static str)> {
    let bytes = std::fs::read("/bin/true").ok()?;
    let facts = elf_facts(Path::new("/bin/true")).ok()?;
    let platform = match facts.machine.as_str() {
        "x86_64" => "linux/amd64",
        "aarch64" => "linux/arm64",
        _ => return None,
    };
    let (_, _, triplet) = super::platform(platform)?;
    Some((bytes, platform, triplet))
}

/// A world whose client binary is the host's /bin/true, with a deb providing exactly what it
/// needs (through a symlinked interpreter): resolving `sample_on(platform)` works in it.
fn host_world() -> Option<(World, Vec<u8>, &'static str)> {
    let (true_bytes, platform, triplet) = host_elf()?;
    let facts = elf_facts(Path::new("/bin/true")).unwrap();
    let w = world_with_binary(&true_bytes);
    // A deb providing exactly what /bin/true needs, through a symlinked interpreter.
    let interp = facts.interpreter.clone().unwrap();
    let interp_name = interp.rsplit('/').next().unwrap().to_string();
    let mut files: Vec<(String, Vec<u8>, u32)> = vec![(
        format!("./lib/{triplet}/{interp_name}"),
        b"ld".to_vec(),
        0o755,
    )];
    for lib in &facts.needed {
        files.push((
            format!("./lib/{triplet}/{lib}"),
            lib.as_bytes().to_vec(),
            0o644,
        ));
    }
    let file_refs: Vec<(&str, &[u8], u32)> = files
        .iter()
        .map(|(m, b, mode)| (m.as_str(), b.as_slice(), *mode))
        .collect();
    let link_member = format!(".{interp}");
    let link_target = format!("/lib/{triplet}/{interp_name}");
    let links: Vec<(&str, &str)> = if link_member != format!("./lib/{triplet}/{interp_name}") {
        vec![(link_member.as_str(), link_target.as_str())]
    } else {
        vec![]
    };
    write_deb(&w.registry.deb, &file_refs, &links);
    Some((w, true_bytes, platform))
}

#[test]
fn resolve_computes_the_lock_from_the_registry_and_fetch_then_accepts_it() {
    let Some((mut w, true_bytes, platform)) = host_world() else {
        eprintln!("skipped: /bin/true is not a readable ELF of a known architecture");
        return;
    };
    let facts = elf_facts(Path::new("/bin/true")).unwrap();
    let interp = facts.interpreter.clone().unwrap();
    let interp_name = interp.rsplit('/').next().unwrap().to_string();
    // Start from the sample lock moved to the host's platform, its digests stale.
    let resolved = w.resolve(&sample_on(platform), &Bumps::default()).unwrap();
    assert_eq!(resolved.problems(), Vec::<String>::new());
    let c = &resolved.clients[0];
    assert_eq!(c.version, "2.1.327");
    let p = &c.platforms[0];
    assert_eq!(p.binary.sha256, sha256_hex(&true_bytes));
    assert_eq!(p.interpreter.as_deref(), Some(interp.as_str()));
    assert_eq!(p.needed, facts.needed);
    let (_, arch, _) = super::platform(platform).unwrap();
    assert_eq!(p.runtime.as_deref(), Some(format!("libc6-{arch}").as_str()));
    let r = &resolved.runtimes[0];
    assert_eq!(
        r.deb.sha256,
        sha256_hex(&std::fs::read(&w.registry.deb).unwrap())
    );
    assert_eq!(r.files.len(), facts.needed.len() + 1);
    assert!(r
        .files
        .iter()
        .any(|f| f.member.ends_with(&interp_name) && f.mode == "0755"));
    // Everything resolved is already in the cache: fetch of the new lock needs no network.
    w.lock = resolved.clone();
    w.registry.calls.clear();
    let got = w.fetch(true).unwrap();
    assert!(got.platforms[0]
        .files
        .iter()
        .all(|f| f.state == State::Cached));
    // Resolving again gives the same lock, byte for byte: an unchanged registry, no diff.
    let again = w.resolve(&resolved, &Bumps::default()).unwrap();
    assert_eq!(again.render(), resolved.render());
    // A bump is applied to the request.
    w.registry.calls.clear();
    let bumps = Bumps {
        packages: [("claude-code".to_string(), "0.2.185".to_string())].into(),
        runtime_version: Some("2.36-9+deb12u15".into()),
        add: Default::default(),
    };
    let bumped = w.resolve(&resolved, &bumps).unwrap();
    assert_eq!(bumped.clients[0].package.version, "0.2.185");
    assert_eq!(bumped.runtimes[0].package.version, "2.36-9+deb12u15");
    assert!(w.registry.calls[0].contains("==0.2.185"));
    assert!(w.registry.calls[1].ends_with("=2.36-9+deb12u15"));
    // A bump for a client the lock lacks is refused.
    let bad = Bumps {
        packages: [("codex".to_string(), "1".to_string())].into(),
        runtime_version: None,
        add: Default::default(),
    };
    assert!(matches!(
        w.resolve(&resolved, &bad),
        Err(FetchError::Unresolvable { .. })
    ));
}

#[test]
fn resolve_refuses_a_binary_of_another_architecture() {
    let Some((true_bytes, platform, _)) = host_elf() else {
        return;
    };
    let mut w = world_with_binary(&true_bytes);
    let other = if platform == "linux/amd64" {
        "linux/arm64"
    } else {
        "linux/amd64"
    };
    let err = w.resolve(&sample_on(other), &Bumps::default()).unwrap_err();
    assert!(
        matches!(&err, FetchError::Unresolvable { problem, .. } if problem.contains("ELF machine")),
        "{err:?}"
    );
}

/// A minimal static ELF64 (no program headers: no PT_INTERP, no DT_NEEDED) for `machine`.
fn static_elf(machine: u16) -> Vec<u8> {
    let mut b = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    b.extend(3u16.to_le_bytes()); // ET_DYN (static-pie, as Codex's musl binary)
    b.extend(machine.to_le_bytes());
    b.extend(1u32.to_le_bytes());
    b.extend([0u8; 24]); // entry, phoff, shoff
    b.extend(0u32.to_le_bytes()); // flags
    b.extend(64u16.to_le_bytes());
    b.extend(56u16.to_le_bytes());
    b.extend(0u16.to_le_bytes());
    b.extend(64u16.to_le_bytes());
    b.extend([0u8; 4]); // shnum, shstrndx
    b.extend(b"pretend codex");
    b
}

const CODEX_MEMBER: &str = "codex_cli_bin/bin/codex";

/// Serve Codex wheels (one static binary per platform, the version in codex-package.json).
fn serve_codex(w: &mut World) -> [(String, Vec<u8>); 2] {
    let out = [
        ("manylinux_2_17_x86_64", goblin::elf::header::EM_X86_64),
        ("manylinux_2_17_aarch64", goblin::elf::header::EM_AARCH64),
    ]
    .map(|(tag, machine)| {
        let binary = static_elf(machine);
        let wheel = w
            ._dir
            .path()
            .join(format!("openai_codex_cli_bin-0.163.0-py3-none-{tag}.whl"));
        write_zip(
            &wheel,
            &[
                (CODEX_MEMBER, binary.as_slice()),
                (
                    "codex_cli_bin/codex-package.json",
                    b"{\n  \"layoutVersion\": 1,\n  \"version\": \"0.163.0\"\n}\n",
                ),
            ],
        );
        w.registry
            .others
            .push((("openai-codex-cli-bin".to_string(), tag.to_string()), wheel));
        (tag.to_string(), binary)
    });
    out
}

fn add_codex() -> Bumps {
    Bumps {
        add: [("codex".to_string(), "0.163.0".to_string())].into(),
        ..Bumps::default()
    }
}

#[test]
fn adding_codex_pins_a_static_binary_per_platform_and_fetch_client_codex_verifies_it() {
    let Some((mut w, _, platform)) = host_world() else {
        eprintln!("skipped: /bin/true is not a readable ELF of a known architecture");
        return;
    };
    let binaries = serve_codex(&mut w);
    let current = w.resolve(&sample_on(platform), &Bumps::default()).unwrap();
    let added = w.resolve(&current, &add_codex()).unwrap();
    assert_eq!(added.problems(), Vec::<String>::new());
    assert_eq!(
        added.clients[0], current.clients[0],
        "claude-code untouched"
    );
    let codex = &added.clients[1];
    assert_eq!(
        (codex.client.as_str(), codex.version.as_str()),
        ("codex", "0.163.0")
    );
    assert_eq!(codex.package.name, "openai-codex-cli-bin");
    assert_eq!(codex.image_path, "/scopebox/native/codex/codex");
    assert_eq!(codex.platforms.len(), 2);
    for (cp, (tag, binary)) in codex.platforms.iter().zip(&binaries) {
        assert_eq!(&cp.pip_platform, tag);
        assert_eq!(cp.binary.sha256, sha256_hex(binary));
        assert_eq!(
            cp.wheel.file,
            format!("openai_codex_cli_bin-0.163.0-py3-none-{tag}.whl")
        );
        // Static: no interpreter, no libraries, no runtime files.
        assert_eq!(
            (
                cp.interpreter.as_ref(),
                cp.needed.len(),
                cp.runtime.as_ref()
            ),
            (None, 0, None)
        );
    }
    assert_eq!(added.runtimes, current.runtimes, "codex adds no runtime");
    // Re-resolving the new lock is byte for byte the same; adding it again is refused.
    assert_eq!(
        w.resolve(&added, &Bumps::default()).unwrap().render(),
        added.render()
    );
    assert!(matches!(
        w.resolve(&added, &add_codex()),
        Err(FetchError::Unresolvable { problem, .. }) if problem.contains("has it already")
    ));
    let unknown = Bumps {
        add: [("cursor".to_string(), "1".to_string())].into(),
        ..Bumps::default()
    };
    assert!(matches!(
        w.resolve(&current, &unknown),
        Err(FetchError::Unresolvable { problem, .. }) if problem.contains("known: claude-code, codex")
    ));

    // fetch --client codex: only Codex's wheel and binary, verified from the cache offline.
    w.lock = added.clone();
    let cache = Cache::open(&w.cache_root).unwrap();
    let codex_only = ["codex".to_string()];
    let plan = FetchPlan {
        lock: &w.lock,
        platforms: &[],
        clients: &codex_only,
        offline: true,
    };
    let got = fetch(&plan, &cache, &mut w.registry, &mut |_| {}).unwrap();
    assert_eq!(got.platforms.len(), 2);
    for p in &got.platforms {
        assert_eq!(p.clients, ["codex"]);
        let roles: Vec<Role> = p.files.iter().map(|f| f.role).collect();
        assert_eq!(roles, [Role::Wheel, Role::Binary]);
        assert!(p.symlinks.is_empty());
        assert_eq!(
            p.files[1].image_path.as_deref(),
            Some("/scopebox/native/codex/codex")
        );
    }
    // An unknown client is refused before anything is touched.
    let cursor = ["cursor".to_string()];
    let plan = FetchPlan {
        clients: &cursor,
        ..plan
    };
    assert!(matches!(
        fetch(&plan, &cache, &mut w.registry, &mut |_| {}),
        Err(FetchError::UnknownClient { client, known }) if client == "cursor" && known == ["claude-code", "codex"]
    ));
}

#[test]
fn a_codex_binary_or_wheel_other_than_the_pinned_one_is_refused_naming_it() {
    let Some((mut w, _, platform)) = host_world() else {
        return;
    };
    serve_codex(&mut w);
    let current = w.resolve(&sample_on(platform), &Bumps::default()).unwrap();
    let added = w.resolve(&current, &add_codex()).unwrap();
    let codex_only = ["codex".to_string()];
    // A fresh cache: the wheel is downloaded and checked against the pin.
    let fresh = w._dir.path().join("fresh-cache");
    let mut wrong_wheel = added.clone();
    wrong_wheel.clients[1].platforms[0].wheel.sha256 = "f".repeat(64);
    let cache = Cache::open(&fresh).unwrap();
    let err = fetch(
        &FetchPlan {
            lock: &wrong_wheel,
            platforms: &[],
            clients: &codex_only,
            offline: false,
        },
        &cache,
        &mut w.registry,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(
        matches!(&err, FetchError::DigestMismatch { file, expected, .. }
            if file.starts_with("openai_codex_cli_bin-0.163.0-py3-none-manylinux_2_17_x86_64.whl") && *expected == "f".repeat(64)),
        "{err:?}"
    );
    assert_eq!(err.code(), "digest-mismatch");
    drop(cache);
    // The pinned binary is not what the (verified) wheel holds.
    let mut wrong_binary = added.clone();
    wrong_binary.clients[1].platforms[1].binary.sha256 = "e".repeat(64);
    let cache = Cache::open(&fresh).unwrap();
    let err = fetch(
        &FetchPlan {
            lock: &wrong_binary,
            platforms: &["linux/arm64".to_string()],
            clients: &codex_only,
            offline: false,
        },
        &cache,
        &mut w.registry,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(
        matches!(&err, FetchError::DigestMismatch { file, .. }
            if file == "openai_codex_cli_bin-0.163.0-py3-none-manylinux_2_17_aarch64.whl!codex_cli_bin/bin/codex"),
        "{err:?}"
    );
}

#[test]
fn a_json_version_member_gives_its_version_string() {
    assert_eq!(
        version_text(
            "x/codex-package.json",
            "{\"version\": \"0.163.0\", \"target\": \"x\"}"
        ),
        "0.163.0"
    );
    assert_eq!(
        version_text("x/codex-package.json", "{\"layoutVersion\": 1}"),
        ""
    );
    assert_eq!(version_text("x/codex-package.json", "not json"), "");
    assert_eq!(
        version_text("x/claude.version", "2.1.327 (Claude Code)\n"),
        "2.1.327"
    );
}
