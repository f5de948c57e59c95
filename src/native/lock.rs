//! The pinned native lock (`images/native.lock.json`, schema in docs/native-lock.md): per client
//! and platform the registry package, the wheel and the binary inside it, and per platform the
//! Debian runtime package and each file taken out of it — every one with its sha256 and size.
//! It owns parsing (strict: unknown fields, bad digests, unnormalized paths and dangling
//! references are refused), validation and the canonical rendering `scopebox native lock` writes.
//! It never downloads or reads anything but the lock itself.

use scopebox_schema::digest::is_sha256_hex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub const LOCK_SCHEMA_VERSION: u32 = 1;
/// The lock, relative to the workspace root.
pub const DEFAULT_LOCK: &str = "images/native.lock.json";
/// The platforms a lock may name, with their Debian architecture and multiarch triplet.
pub const PLATFORMS: [(&str, &str, &str); 2] = [
    ("linux/amd64", "amd64", "x86_64-linux-gnu"),
    ("linux/arm64", "arm64", "aarch64-linux-gnu"),
];

/// The clients `scopebox native lock --add-client CLIENT=VERSION` knows how to pin: the mcpscope
/// profile id, the PyPI package, the binary and version members in its wheel, where the binary
/// goes in the image, and the wheel's platform tag per platform (as the registry tags it).
pub struct KnownClient {
    pub client: &'static str,
    pub package: &'static str,
    pub binary_member: &'static str,
    pub version_member: Option<&'static str>,
    pub image_path: &'static str,
    pub pip_platforms: [(&'static str, &'static str); 2],
}

pub const KNOWN_CLIENTS: [KnownClient; 2] = [
    KnownClient {
        client: "claude-code",
        package: "claude-agent-sdk",
        binary_member: "claude_agent_sdk/_bundled/claude",
        version_member: Some("claude_agent_sdk/_bundled/claude.version"),
        image_path: "/scopebox/native/claude-code/claude",
        pip_platforms: [
            ("linux/amd64", "manylinux_2_17_x86_64"),
            ("linux/arm64", "manylinux_2_17_aarch64"),
        ],
    },
    // Codex's wheel carries a static musl binary, tagged manylinux_2_17 all the same; its
    // version is the `version` of the JSON member.
    KnownClient {
        client: "codex",
        package: "openai-codex-cli-bin",
        binary_member: "codex_cli_bin/bin/codex",
        version_member: Some("codex_cli_bin/codex-package.json"),
        image_path: "/scopebox/native/codex/codex",
        pip_platforms: [
            ("linux/amd64", "manylinux_2_17_x86_64"),
            ("linux/arm64", "manylinux_2_17_aarch64"),
        ],
    },
];

impl KnownClient {
    pub fn find(client: &str) -> Option<&'static KnownClient> {
        KNOWN_CLIENTS.iter().find(|k| k.client == client)
    }

    /// A lock entry to resolve: the package at `version`, every platform, digests unknown
    /// (zeros: `scopebox native lock` computes them and never writes this skeleton as is).
    pub fn skeleton(&self, version: &str) -> Client {
        let zero = "0".repeat(64);
        Client {
            client: self.client.into(),
            version: version.into(),
            package: PypiPackage {
                registry: "pypi".into(),
                name: self.package.into(),
                version: version.into(),
            },
            binary_member: self.binary_member.into(),
            version_member: self.version_member.map(str::to_owned),
            image_path: self.image_path.into(),
            platforms: self
                .pip_platforms
                .iter()
                .map(|(platform, tag)| ClientPlatform {
                    platform: (*platform).into(),
                    pip_platform: (*tag).into(),
                    wheel: Artifact {
                        file: "unresolved.whl".into(),
                        sha256: zero.clone(),
                        size: 0,
                    },
                    binary: Digest {
                        sha256: zero.clone(),
                        size: 0,
                    },
                    interpreter: None,
                    needed: Vec::new(),
                    runtime: None,
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lock {
    pub schema_version: u32,
    pub clients: Vec<Client>,
    pub runtimes: Vec<Runtime>,
}

/// One native client, e.g. Claude Code from the `claude-agent-sdk` wheel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Client {
    /// The mcpscope profile id it is the reference for (`claude-code`).
    pub client: String,
    /// The client's own version, as its version member says (informative; the digests pin it).
    pub version: String,
    pub package: PypiPackage,
    /// The binary's path inside the wheel.
    pub binary_member: String,
    /// A member holding the client's version, read by `scopebox native lock`: its first word,
    /// or for a `.json` member its `version` string.
    pub version_member: Option<String>,
    /// Where the binary goes in the native image.
    pub image_path: String,
    pub platforms: Vec<ClientPlatform>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PypiPackage {
    /// Always `pypi`.
    pub registry: String,
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClientPlatform {
    pub platform: String,
    /// The tag given to `pip download --platform`.
    pub pip_platform: String,
    pub wheel: Artifact,
    pub binary: Digest,
    /// The ELF's PT_INTERP, or null for a static binary.
    pub interpreter: Option<String>,
    /// The ELF's DT_NEEDED entries, in file order.
    pub needed: Vec<String>,
    /// The id of the runtime (in `runtimes`) that provides `interpreter` and `needed`, or null.
    pub runtime: Option<String>,
}

/// A file fetched from a registry as is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Artifact {
    pub file: String,
    pub sha256: String,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Digest {
    pub sha256: String,
    pub size: u64,
}

/// The C runtime of one platform: files taken from one Debian package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Runtime {
    pub id: String,
    pub platform: String,
    pub package: DebianPackage,
    pub deb: Artifact,
    pub files: Vec<RuntimeFile>,
    pub symlinks: Vec<RuntimeSymlink>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DebianPackage {
    /// Always `debian`.
    pub registry: String,
    pub name: String,
    pub architecture: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimeFile {
    /// The member's name in the package's data archive, e.g. `./lib/x86_64-linux-gnu/libc.so.6`.
    pub member: String,
    pub image_path: String,
    /// Octal, as in the package (e.g. `0755`).
    pub mode: String,
    pub sha256: String,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimeSymlink {
    pub image_path: String,
    /// Written verbatim, as in the package.
    pub target: String,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("read native lock {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("parse native lock {path}")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("accept native lock {path}: {}", problems.join("; "))]
    Invalid {
        path: PathBuf,
        problems: Vec<String>,
    },
}

impl Lock {
    /// Read, parse strictly and validate a lock file.
    pub fn load(path: &Path) -> Result<Lock, LockError> {
        let bytes = std::fs::read(path).map_err(|source| LockError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Lock::parse(path, &bytes)
    }

    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Lock, LockError> {
        let lock: Lock = serde_json::from_slice(bytes).map_err(|source| LockError::Parse {
            path: path.to_path_buf(),
            source,
        })?;
        let problems = lock.problems();
        if problems.is_empty() {
            Ok(lock)
        } else {
            Err(LockError::Invalid {
                path: path.to_path_buf(),
                problems,
            })
        }
    }

    /// The canonical bytes: two-space JSON, fields in schema order, a final newline. What
    /// `scopebox native lock` writes, so an unchanged resolution is an unchanged file.
    pub fn render(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a lock always serializes");
        bytes.push(b'\n');
        bytes
    }

    pub fn runtime(&self, id: &str) -> Option<&Runtime> {
        self.runtimes.iter().find(|r| r.id == id)
    }

    /// Every platform some client or runtime names, in `PLATFORMS` order.
    pub fn platforms(&self) -> Vec<&'static str> {
        PLATFORMS
            .iter()
            .map(|(p, _, _)| *p)
            .filter(|p| {
                self.clients
                    .iter()
                    .any(|c| c.platforms.iter().any(|cp| cp.platform == *p))
            })
            .collect()
    }

    /// Everything wrong with the lock, each problem naming where it is.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.schema_version != LOCK_SCHEMA_VERSION {
            out.push(format!(
                "schemaVersion is {}, this scopebox reads {LOCK_SCHEMA_VERSION}",
                self.schema_version
            ));
        }
        if self.clients.is_empty() {
            out.push("no clients".into());
        }
        // Everything here may be printed: no control or format characters anywhere.
        let value = serde_json::to_value(self).expect("a lock always serializes");
        check_printable(&mut out, "", &value);
        let mut client_ids = BTreeSet::new();
        let mut used_runtimes = BTreeSet::new();
        for c in &self.clients {
            let at = format!("client {:?}", c.client);
            if !client_ids.insert(c.client.as_str()) {
                out.push(format!("{at}: listed twice"));
            }
            if c.package.registry != "pypi" {
                out.push(format!("{at}: package registry must be \"pypi\""));
            }
            check_member(&mut out, &at, "binaryMember", &c.binary_member);
            if let Some(m) = &c.version_member {
                check_member(&mut out, &at, "versionMember", m);
            }
            check_image_path(&mut out, &at, "imagePath", &c.image_path);
            if c.platforms.is_empty() {
                out.push(format!("{at}: no platforms"));
            }
            let mut seen = BTreeSet::new();
            for p in &c.platforms {
                let at = format!("{at} {}", p.platform);
                if !seen.insert(p.platform.as_str()) {
                    out.push(format!("{at}: listed twice"));
                }
                if platform(&p.platform).is_none() {
                    out.push(format!("{at}: unknown platform"));
                }
                check_file_name(&mut out, &at, "wheel.file", &p.wheel.file);
                check_digest(&mut out, &at, "wheel.sha256", &p.wheel.sha256);
                check_digest(&mut out, &at, "binary.sha256", &p.binary.sha256);
                if let Some(i) = &p.interpreter {
                    check_image_path(&mut out, &at, "interpreter", i);
                }
                match (&p.runtime, &p.interpreter) {
                    (Some(id), _) => match self.runtime(id) {
                        None => out.push(format!("{at}: runtime {id:?} is not in runtimes")),
                        Some(r) if r.platform != p.platform => out.push(format!(
                            "{at}: runtime {id:?} is for {}, not {}",
                            r.platform, p.platform
                        )),
                        Some(r) => {
                            used_runtimes.insert(id.as_str());
                            out.extend(provides(r, p).into_iter().map(|m| format!("{at}: {m}")));
                        }
                    },
                    (None, Some(_)) => out.push(format!("{at}: a dynamic binary needs a runtime")),
                    (None, None) => {}
                }
            }
        }
        let mut runtime_ids = BTreeSet::new();
        for r in &self.runtimes {
            let at = format!("runtime {:?}", r.id);
            if !runtime_ids.insert(r.id.as_str()) {
                out.push(format!("{at}: listed twice"));
            }
            if !used_runtimes.contains(r.id.as_str()) {
                out.push(format!("{at}: no client uses it"));
            }
            match platform(&r.platform) {
                None => out.push(format!("{at}: unknown platform {:?}", r.platform)),
                Some((_, arch, _)) if arch != r.package.architecture => out.push(format!(
                    "{at}: package architecture {:?} is not {arch:?}",
                    r.package.architecture
                )),
                Some(_) => {}
            }
            if r.package.registry != "debian" {
                out.push(format!("{at}: package registry must be \"debian\""));
            }
            check_file_name(&mut out, &at, "deb.file", &r.deb.file);
            check_digest(&mut out, &at, "deb.sha256", &r.deb.sha256);
            if r.files.is_empty() {
                out.push(format!("{at}: no files"));
            }
            let mut paths = BTreeSet::new();
            for f in &r.files {
                let at = format!("{at} file {:?}", f.member);
                check_member(&mut out, &at, "member", f.member.trim_start_matches("./"));
                check_image_path(&mut out, &at, "imagePath", &f.image_path);
                check_digest(&mut out, &at, "sha256", &f.sha256);
                if !is_mode(&f.mode) {
                    out.push(format!("{at}: mode {:?} is not 4 octal digits", f.mode));
                }
                if !paths.insert(f.image_path.as_str()) {
                    out.push(format!("{at}: imagePath {:?} twice", f.image_path));
                }
            }
            for s in &r.symlinks {
                let at = format!("{at} symlink {:?}", s.image_path);
                check_image_path(&mut out, &at, "imagePath", &s.image_path);
                if s.target.is_empty() || s.target.contains('\0') {
                    out.push(format!("{at}: empty or NUL target"));
                }
                if !paths.insert(s.image_path.as_str()) {
                    out.push(format!("{at}: imagePath twice"));
                }
            }
        }
        out
    }
}

/// The platform's (name, Debian architecture, multiarch triplet), if known.
pub fn platform(name: &str) -> Option<(&'static str, &'static str, &'static str)> {
    PLATFORMS.iter().copied().find(|(p, _, _)| *p == name)
}

/// What the runtime fails to provide for the client platform: the interpreter and each needed
/// library must be an image path the runtime lays out (a file, or a symlink to one).
fn provides(r: &Runtime, p: &ClientPlatform) -> Vec<String> {
    let Some((_, _, triplet)) = platform(&p.platform) else {
        return Vec::new();
    };
    let laid_out = |path: &str| {
        r.files.iter().any(|f| f.image_path == path)
            || r.symlinks.iter().any(|s| s.image_path == path)
    };
    let mut out = Vec::new();
    if let Some(i) = &p.interpreter {
        if !laid_out(i) {
            out.push(format!("the interpreter {i} is not laid out by {:?}", r.id));
        }
    }
    for lib in &p.needed {
        let path = format!("/lib/{triplet}/{lib}");
        if !laid_out(&path) {
            out.push(format!(
                "the needed {lib} ({path}) is not laid out by {:?}",
                r.id
            ));
        }
    }
    out
}

fn check_printable(out: &mut Vec<String>, at: &str, value: &serde_json::Value) {
    match value {
        serde_json::Value::String(s) if s.chars().any(|c| c.is_control() || is_invisible(c)) => out
            .push(format!(
                "{at}: {s:?} holds a control or invisible character"
            )),
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                check_printable(out, &format!("{at}/{i}"), v);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                check_printable(out, &format!("{at}/{k}"), v);
            }
        }
        _ => {}
    }
}

/// Format characters that change how a line reads (bidi overrides and isolates, zero-width).
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

fn check_digest(out: &mut Vec<String>, at: &str, field: &str, hex: &str) {
    if !is_sha256_hex(hex) {
        out.push(format!("{at}: {field} is not 64 lowercase hex digits"));
    }
}

fn check_file_name(out: &mut Vec<String>, at: &str, field: &str, name: &str) {
    if name.is_empty() || name.contains('/') || name.contains('\0') || name == "." || name == ".." {
        out.push(format!("{at}: {field} {name:?} is not a plain file name"));
    }
}

/// A relative path inside an archive: no leading `/`, no `.`/`..`/empty components.
fn check_member(out: &mut Vec<String>, at: &str, field: &str, member: &str) {
    if member.is_empty()
        || member.starts_with('/')
        || member.contains('\0')
        || member
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
    {
        out.push(format!(
            "{at}: {field} {member:?} is not a normalized relative path"
        ));
    }
}

/// An absolute, normalized path in the image.
fn check_image_path(out: &mut Vec<String>, at: &str, field: &str, path: &str) {
    if !path.starts_with('/')
        || path.len() < 2
        || path.contains('\0')
        || path[1..]
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
    {
        out.push(format!(
            "{at}: {field} {path:?} is not a normalized absolute path"
        ));
    }
}

fn is_mode(mode: &str) -> bool {
    mode.len() == 4 && mode.bytes().all(|b| (b'0'..=b'7').contains(&b))
}

/// The image path a data-archive member lands at (`./lib/x/libc.so.6` → `/lib/x/libc.so.6`).
pub fn image_path_of(member: &str) -> String {
    format!("/{}", member.trim_start_matches("./"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn digest(c: char) -> String {
        c.to_string().repeat(64)
    }

    /// A small valid lock: one client on linux/amd64 with its runtime.
    pub fn sample() -> Lock {
        Lock {
            schema_version: 1,
            clients: vec![Client {
                client: "claude-code".into(),
                version: "2.1.327".into(),
                package: PypiPackage {
                    registry: "pypi".into(),
                    name: "claude-agent-sdk".into(),
                    version: "0.2.184".into(),
                },
                binary_member: "claude_agent_sdk/_bundled/claude".into(),
                version_member: Some("claude_agent_sdk/_bundled/claude.version".into()),
                image_path: "/scopebox/native/claude-code/claude".into(),
                platforms: vec![ClientPlatform {
                    platform: "linux/amd64".into(),
                    pip_platform: "manylinux_2_17_x86_64".into(),
                    wheel: Artifact {
                        file: "claude_agent_sdk-0.2.184-py3-none-manylinux_2_17_x86_64.whl".into(),
                        sha256: digest('a'),
                        size: 10,
                    },
                    binary: Digest {
                        sha256: digest('b'),
                        size: 5,
                    },
                    interpreter: Some("/lib64/ld-linux-x86-64.so.2".into()),
                    needed: vec!["libc.so.6".into()],
                    runtime: Some("libc6-amd64".into()),
                }],
            }],
            runtimes: vec![Runtime {
                id: "libc6-amd64".into(),
                platform: "linux/amd64".into(),
                package: DebianPackage {
                    registry: "debian".into(),
                    name: "libc6".into(),
                    architecture: "amd64".into(),
                    version: "2.36-9+deb12u14".into(),
                },
                deb: Artifact {
                    file: "libc6_2.36-9+deb12u14_amd64.deb".into(),
                    sha256: digest('c'),
                    size: 20,
                },
                files: vec![
                    RuntimeFile {
                        member: "./lib/x86_64-linux-gnu/ld-linux-x86-64.so.2".into(),
                        image_path: "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2".into(),
                        mode: "0755".into(),
                        sha256: digest('d'),
                        size: 3,
                    },
                    RuntimeFile {
                        member: "./lib/x86_64-linux-gnu/libc.so.6".into(),
                        image_path: "/lib/x86_64-linux-gnu/libc.so.6".into(),
                        mode: "0755".into(),
                        sha256: digest('e'),
                        size: 4,
                    },
                ],
                symlinks: vec![RuntimeSymlink {
                    image_path: "/lib64/ld-linux-x86-64.so.2".into(),
                    target: "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2".into(),
                }],
            }],
        }
    }

    fn problems_of(edit: impl FnOnce(&mut Lock)) -> Vec<String> {
        let mut lock = sample();
        edit(&mut lock);
        lock.problems()
    }

    #[test]
    fn the_sample_is_valid_and_round_trips_byte_for_byte() {
        let lock = sample();
        assert_eq!(lock.problems(), Vec::<String>::new());
        let bytes = lock.render();
        let back = Lock::parse(Path::new("l.json"), &bytes).unwrap();
        assert_eq!(back, lock);
        assert_eq!(back.render(), bytes);
        assert!(bytes.ends_with(b"}\n"));
    }

    #[test]
    fn the_shipped_lock_is_valid_and_canonical() {
        let path = crate::toolchain::workspace_root().join(DEFAULT_LOCK);
        let bytes = std::fs::read(&path).unwrap();
        let lock = Lock::parse(&path, &bytes).unwrap();
        assert_eq!(
            lock.render(),
            bytes,
            "the shipped lock is not in canonical form"
        );
        assert_eq!(lock.platforms(), vec!["linux/amd64", "linux/arm64"]);
        // Codex 0.163.0: a static binary on both platforms, no runtime; as the table says.
        let codex = lock.clients.iter().find(|c| c.client == "codex").unwrap();
        let known = KnownClient::find("codex").unwrap();
        assert_eq!(
            (codex.version.as_str(), codex.package.name.as_str()),
            ("0.163.0", known.package)
        );
        assert_eq!(codex.binary_member, known.binary_member);
        assert_eq!(codex.platforms.len(), 2);
        for p in &codex.platforms {
            assert_eq!(
                (&p.interpreter, p.needed.len(), &p.runtime),
                (&None, 0, &None)
            );
        }
    }

    #[test]
    fn unknown_fields_are_refused_at_every_level() {
        let value = serde_json::to_value(sample()).unwrap();
        let pointers = [
            "",
            "/clients/0",
            "/clients/0/package",
            "/clients/0/platforms/0",
            "/clients/0/platforms/0/wheel",
            "/clients/0/platforms/0/binary",
            "/runtimes/0",
            "/runtimes/0/package",
            "/runtimes/0/deb",
            "/runtimes/0/files/0",
            "/runtimes/0/symlinks/0",
        ];
        for pointer in pointers {
            let mut v = value.clone();
            v.pointer_mut(pointer)
                .unwrap()
                .as_object_mut()
                .unwrap()
                .insert("extra".into(), serde_json::json!(1));
            let err =
                Lock::parse(Path::new("l.json"), &serde_json::to_vec(&v).unwrap()).unwrap_err();
            assert!(
                matches!(&err, LockError::Parse { source, .. } if source.to_string().contains("unknown field `extra`")),
                "{pointer}: {err:?}"
            );
        }
    }

    #[test]
    fn a_missing_field_is_refused() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v.pointer_mut("/clients/0/platforms/0/wheel")
            .unwrap()
            .as_object_mut()
            .unwrap()
            .remove("sha256");
        assert!(matches!(
            Lock::parse(Path::new("l.json"), &serde_json::to_vec(&v).unwrap()),
            Err(LockError::Parse { .. })
        ));
    }

    #[test]
    fn bad_values_are_each_named() {
        type Edit = Box<dyn FnOnce(&mut Lock)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|l| l.schema_version = 2), "schemaVersion is 2"),
            (
                Box::new(|l| l.clients[0].platforms[0].wheel.sha256 = "A".repeat(64)),
                "wheel.sha256 is not 64 lowercase hex digits",
            ),
            (
                Box::new(|l| l.runtimes[0].files[1].sha256 = "short".into()),
                "sha256 is not 64 lowercase hex digits",
            ),
            (
                Box::new(|l| l.clients[0].platforms[0].wheel.file = "../x.whl".into()),
                "is not a plain file name",
            ),
            (
                Box::new(|l| l.clients[0].binary_member = "a/../b".into()),
                "is not a normalized relative path",
            ),
            (
                Box::new(|l| l.clients[0].image_path = "/scopebox//claude".into()),
                "is not a normalized absolute path",
            ),
            (
                Box::new(|l| l.clients[0].platforms[0].platform = "linux/s390x".into()),
                "unknown platform",
            ),
            (
                Box::new(|l| l.clients[0].platforms[0].runtime = Some("nope".into())),
                "runtime \"nope\" is not in runtimes",
            ),
            (
                Box::new(|l| l.clients[0].platforms[0].runtime = None),
                "a dynamic binary needs a runtime",
            ),
            (
                Box::new(|l| l.clients[0].platforms[0].needed.push("libm.so.6".into())),
                "the needed libm.so.6 (/lib/x86_64-linux-gnu/libm.so.6) is not laid out",
            ),
            (
                Box::new(|l| l.runtimes[0].symlinks.clear()),
                "the interpreter /lib64/ld-linux-x86-64.so.2 is not laid out",
            ),
            (
                Box::new(|l| l.runtimes[0].package.architecture = "arm64".into()),
                "package architecture \"arm64\" is not \"amd64\"",
            ),
            (
                Box::new(|l| l.clients[0].version = "2.1\u{1b}[2J".into()),
                "/clients/0/version: \"2.1\\u{1b}[2J\" holds a control or invisible character",
            ),
            (
                Box::new(|l| l.runtimes[0].deb.file = "libc6\u{202e}bed.deb".into()),
                "holds a control or invisible character",
            ),
            (
                Box::new(|l| l.runtimes[0].files[0].mode = "755".into()),
                "is not 4 octal digits",
            ),
            (
                Box::new(|l| {
                    let again = l.runtimes[0].files[0].clone();
                    l.runtimes[0].files.push(again)
                }),
                "twice",
            ),
            (
                Box::new(|l| {
                    let mut other = l.runtimes[0].clone();
                    other.id = "spare".into();
                    l.runtimes.push(other)
                }),
                "runtime \"spare\": no client uses it",
            ),
        ];
        for (edit, expected) in cases {
            let problems = problems_of(edit);
            assert!(
                problems.iter().any(|p| p.contains(expected)),
                "{expected:?} not in {problems:?}"
            );
        }
    }

    #[test]
    fn image_paths_of_members_drop_the_dot() {
        assert_eq!(image_path_of("./lib/x/libc.so.6"), "/lib/x/libc.so.6");
        assert_eq!(image_path_of("lib64/ld.so"), "/lib64/ld.so");
    }
}
