//! Talking to the two registries the native lock names, through their ordinary clients as
//! subprocesses: PyPI through `pip download` (pip resolves the wheel for a foreign platform tag
//! and, given the pinned digest, checks it with `--require-hashes`), Debian through `apt-get
//! download` against a private apt state inside the cache (its own package lists for amd64 and
//! arm64, from the host's configured sources, with apt's own signature checks), so the host's
//! dpkg architectures and lists are never changed. Re-implementing either protocol (simple-index
//! parsing, InRelease signatures) would be more code to trust for no gain. The `Registry` trait
//! lets fetch's logic be tested with local files; nothing here decides what is accepted — the
//! caller verifies every digest itself.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelRequest {
    pub name: String,
    pub version: String,
    pub pip_platform: String,
    /// The digest pip must check (`--require-hashes`); None when resolving a new lock.
    pub sha256: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebRequest {
    pub name: String,
    pub architecture: String,
    pub version: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The registry does not serve what was asked (any more): a refusal, not a retry.
    #[error("fetch {what}: the registry no longer serves it ({detail})")]
    NotServed { what: String, detail: String },
    /// The registry's own client saw a digest other than the pinned one.
    #[error("accept {what} from the registry: its sha256 is {actual}, expected {expected}")]
    Mismatch {
        what: String,
        expected: String,
        actual: String,
    },
    #[error("download {what}: {detail}")]
    Failed { what: String, detail: String },
    #[error("run {tool}")]
    Tool {
        tool: String,
        #[source]
        source: io::Error,
    },
}

impl RegistryError {
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            RegistryError::NotServed { .. } | RegistryError::Mismatch { .. }
        )
    }
}

pub trait Registry {
    /// Download the wheel into the empty directory `dir`; returns the file pip wrote.
    fn wheel(&mut self, request: &WheelRequest, dir: &Path) -> Result<PathBuf, RegistryError>;
    /// Download the `.deb` into the empty directory `dir`; returns the file apt wrote.
    fn deb(&mut self, request: &DebRequest, dir: &Path) -> Result<PathBuf, RegistryError>;
}

/// The real registries: `python3 -m pip` and `apt-get` with a private state under `apt_dir`.
pub struct Subprocess {
    apt_dir: PathBuf,
    apt_updated: bool,
}

impl Subprocess {
    pub fn new(cache: &Path) -> Subprocess {
        Subprocess {
            apt_dir: cache.join("apt"),
            apt_updated: false,
        }
    }

    fn apt(&self) -> Command {
        let mut c = Command::new("apt-get");
        c.arg("-q")
            .arg("-o")
            .arg(format!(
                "Dir::State::Lists={}",
                self.apt_dir.join("lists").display()
            ))
            .arg("-o")
            .arg(format!(
                "Dir::Cache={}",
                self.apt_dir.join("cache").display()
            ))
            .args(["-o", "APT::Architectures::=amd64"])
            .args(["-o", "APT::Architectures::=arm64"])
            .args(["-o", "Debug::NoLocking=1"]);
        // As root apt would hand downloads to the `_apt` user, who cannot write into a
        // private cache below root's home.
        if std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
            c.args(["-o", "APT::Sandbox::User=root"]);
        }
        c
    }

    fn apt_update(&mut self) -> Result<(), RegistryError> {
        if self.apt_updated {
            return Ok(());
        }
        for sub in ["lists/partial", "cache/archives/partial"] {
            std::fs::create_dir_all(self.apt_dir.join(sub)).map_err(|source| {
                RegistryError::Tool {
                    tool: "apt-get update (private state)".into(),
                    source,
                }
            })?;
        }
        let out = run(self.apt().arg("update"), "apt-get update")?;
        if !out.status.success() || out.stderr_text.contains("E: ") {
            return Err(RegistryError::Failed {
                what: "the Debian package lists (apt-get update)".into(),
                detail: last_lines(&out.stderr_text),
            });
        }
        self.apt_updated = true;
        Ok(())
    }
}

impl Registry for Subprocess {
    fn wheel(&mut self, request: &WheelRequest, dir: &Path) -> Result<PathBuf, RegistryError> {
        let what = format!(
            "{}=={} for {}",
            request.name, request.version, request.pip_platform
        );
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
            .args([
                "--disable-pip-version-check",
                "--no-input",
                "--no-cache-dir",
            ])
            .args(["--platform", &request.pip_platform])
            .arg("--dest")
            .arg(dir);
        let spec = format!("{}=={}", request.name, request.version);
        match &request.sha256 {
            Some(hex) => {
                let requirements = dir.join("requirements.txt");
                std::fs::write(&requirements, format!("{spec} --hash=sha256:{hex}\n")).map_err(
                    |source| RegistryError::Tool {
                        tool: "pip (requirements file)".into(),
                        source,
                    },
                )?;
                cmd.arg("--require-hashes").arg("-r").arg(&requirements);
            }
            None => {
                cmd.arg(&spec);
            }
        }
        let out = run(&mut cmd, "python3 -m pip")?;
        let _ = std::fs::remove_file(dir.join("requirements.txt"));
        if !out.status.success() {
            let text = &out.stderr_text;
            if text.contains("No matching distribution found")
                || text.contains("Could not find a version that satisfies")
            {
                return Err(RegistryError::NotServed {
                    what,
                    detail: last_lines(text),
                });
            }
            if text.contains("DO NOT MATCH THE HASHES") {
                return Err(RegistryError::Mismatch {
                    what,
                    expected: request.sha256.clone().unwrap_or_default(),
                    actual: pip_got_digest(text).unwrap_or_else(|| "(not shown by pip)".into()),
                });
            }
            return Err(RegistryError::Failed {
                what,
                detail: last_lines(text),
            });
        }
        only_file(dir, ".whl", &what)
    }

    fn deb(&mut self, request: &DebRequest, dir: &Path) -> Result<PathBuf, RegistryError> {
        let what = format!(
            "{}:{}={}",
            request.name, request.architecture, request.version
        );
        self.apt_update()?;
        let out = run(
            self.apt().current_dir(dir).arg("download").arg(&what),
            "apt-get download",
        )?;
        if !out.status.success() || out.stderr_text.contains("E: ") {
            let text = &out.stderr_text;
            if text.contains("was not found")
                || text.contains("Unable to locate package")
                || text.contains("Can't select")
                || text.contains("has no installation candidate")
            {
                return Err(RegistryError::NotServed {
                    what,
                    detail: last_lines(text),
                });
            }
            return Err(RegistryError::Failed {
                what,
                detail: last_lines(text),
            });
        }
        only_file(dir, ".deb", &what)
    }
}

struct Ran {
    status: std::process::ExitStatus,
    stderr_text: String,
}

fn run(cmd: &mut Command, tool: &str) -> Result<Ran, RegistryError> {
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|source| RegistryError::Tool {
            tool: tool.into(),
            source,
        })?;
    // pip and apt print some errors on stdout: keep both.
    let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    Ok(Ran {
        status: out.status,
        stderr_text: text,
    })
}

/// The one file with `suffix` the client wrote into `dir`.
fn only_file(dir: &Path, suffix: &str, what: &str) -> Result<PathBuf, RegistryError> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| RegistryError::Tool {
            tool: "read the download directory".into(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    match found.len() {
        1 => Ok(found.remove(0)),
        n => Err(RegistryError::Failed {
            what: what.into(),
            detail: format!("expected one {suffix} file, the client wrote {n}"),
        }),
    }
}

/// The actual digest from pip's hash-mismatch report ("Got        <hex>").
fn pip_got_digest(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("Got")?.trim();
        scopebox_schema::digest::is_sha256_hex(rest).then(|| rest.to_string())
    })
}

/// The last few non-empty lines of a client's output, for an error message, joined on one
/// line and kept raw: they may quote what a registry sent, and whoever prints the error
/// escapes it (`exit::finish`), exactly once.
fn last_lines(text: &str) -> String {
    const MAX_LINE: usize = 240;
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| match l.char_indices().nth(MAX_LINE) {
            Some((cut, _)) => format!("{}…", &l[..cut]),
            None => l.to_string(),
        })
        .collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pips_mismatch_report_gives_the_actual_digest() {
        let text = "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.\n    claude-agent-sdk==0.2.184 from https://x/y.whl:\n        Expected sha256 aaaa\n             Got        40509cadce72d62ded6c3ed831bbcffbff1a7fed8a19cfe1670b3a55418ed089\n";
        assert_eq!(
            pip_got_digest(text).as_deref(),
            Some("40509cadce72d62ded6c3ed831bbcffbff1a7fed8a19cfe1670b3a55418ed089")
        );
        assert_eq!(pip_got_digest("Got nothing"), None);
    }

    #[test]
    fn only_the_last_lines_are_kept_and_the_printed_error_escapes_them_once() {
        assert_eq!(last_lines("a\n\nb\nc\n d \n"), "b | c | d");
        let long = "v".repeat(1000);
        assert_eq!(last_lines(&long).chars().count(), 241);
        // As `exit::finish` prints it: the registry's escape sequence shown, once, on one line.
        let error = crate::exit::CommandError::Native(crate::native::NativeError::Fetch(
            crate::native::fetch::FetchError::Registry(RegistryError::Failed {
                what: "the Debian package lists".into(),
                detail: last_lines("W: fine\nE: \u{1b}]0;pwned\u{7}\n"),
            }),
        ));
        let printed = scopebox_terminal::escape_lines(&crate::exit::render(&error));
        assert!(
            printed.contains("W: fine | E: \\u{1b}]0;pwned\\u{7}"),
            "{printed}"
        );
        assert!(!printed.contains("\\\\u{1b}"), "{printed}");
        assert_eq!(
            printed.lines().next().map(|l| l.contains("pwned")),
            Some(true)
        );
    }

    #[test]
    fn one_file_is_expected_in_the_download_directory() {
        let dir = tempfile::tempdir().unwrap();
        assert!(only_file(dir.path(), ".whl", "x").is_err());
        std::fs::write(dir.path().join("a.whl"), b"").unwrap();
        assert_eq!(
            only_file(dir.path(), ".whl", "x").unwrap(),
            dir.path().join("a.whl")
        );
        std::fs::write(dir.path().join("b.whl"), b"").unwrap();
        assert!(only_file(dir.path(), ".whl", "x").is_err());
    }
}
