//! Test harness: a per-test temporary tree (root, home, managed directory),
//! running the real binary with HOME pointed into it, running the library
//! with an injected [`Host`] (for the managed location, which the binary
//! always takes from the fixed system path), and redaction of temp paths and
//! the crate version so snapshots are stable.

use std::fmt;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcpscope::{Client, Format, Host, Os, Request};

/// The project root inside every tree: three levels below the temp dir, so
/// ancestor instructions can be planted at several levels.
pub const ROOT: &str = "work/team/proj";

pub struct Tree {
    _tmp: tempfile::TempDir,
    /// Canonical path of the temp dir (what the output shows).
    pub base: PathBuf,
}

impl Tree {
    /// A fresh tree under `/tmp` (a fixed depth keeps instruction counts
    /// stable) with `home/`, `managed/` and the root directory created.
    pub fn new() -> Tree {
        let tmp = tempfile::Builder::new()
            .prefix("mcpscope-test.")
            .tempdir_in("/tmp")
            .unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let t = Tree { _tmp: tmp, base };
        t.mkdir("home");
        t.mkdir("managed");
        t.mkdir(ROOT);
        t
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }

    pub fn root(&self) -> PathBuf {
        self.path(ROOT)
    }

    pub fn home(&self) -> PathBuf {
        self.path("home")
    }

    pub fn managed(&self) -> PathBuf {
        self.path("managed")
    }

    pub fn mkdir(&self, rel: &str) {
        std::fs::create_dir_all(self.path(rel)).unwrap();
    }

    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    pub fn symlink(&self, target: impl AsRef<Path>, rel: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        symlink(target, p).unwrap();
    }

    pub fn fifo(&self, rel: &str) {
        use rustix::fs::{mknodat, FileType, Mode, CWD};
        mknodat(
            CWD,
            self.path(rel),
            FileType::Fifo,
            Mode::RUSR | Mode::WUSR,
            0,
        )
        .unwrap();
    }

    pub fn chmod(&self, rel: &str, mode: u32) {
        std::fs::set_permissions(self.path(rel), std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Run the real binary with `HOME` = `home/`, cwd = the root and an
    /// otherwise empty environment. Fails the test instead of hanging.
    pub fn run(&self, args: &[&str]) -> Transcript {
        self.run_in(&self.root(), args)
    }

    pub fn run_in(&self, cwd: &Path, args: &[&str]) -> Transcript {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpscope"));
        cmd.args(args)
            .current_dir(cwd)
            .env_clear()
            .env("HOME", self.home());
        self.transcript(cmd)
    }

    pub fn transcript(&self, mut cmd: Command) -> Transcript {
        use std::io::Read;
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Drain both pipes while waiting: a large document (--client all)
        // would otherwise fill the pipe and block the child.
        let drain = |mut pipe: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                pipe.read_to_end(&mut buf).unwrap();
                buf
            })
        };
        let out = drain(Box::new(child.stdout.take().unwrap()));
        let err = drain(Box::new(child.stderr.take().unwrap()));
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("mcpscope did not finish within 20 s (blocked?)");
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let stdout = out.join().unwrap();
        let stderr = err.join().unwrap();
        Transcript {
            code: status.code().expect("exited normally"),
            stdout: self.redact(&String::from_utf8(stdout).unwrap()),
            stderr: self.redact(&String::from_utf8(stderr).unwrap()),
        }
    }

    /// The library's whole program with a host whose managed directory is
    /// `managed/` (the binary always uses the fixed system path).
    pub fn run_lib(&self, json: bool) -> Transcript {
        let host = Host {
            home: Some(self.home()),
            cwd: Some(self.root()),
            os: Os::Linux,
            claude_managed_dir: self.managed(),
            system_root: self.path("system"),
            codex_home: None,
        };
        let req = Request {
            root: ".".into(),
            client: Client::default_profile(),
            format: if json { Format::Json } else { Format::Human },
            dsh_profile: None,
            fail_on: None,
        };
        let out = mcpscope::run(&req, &host);
        Transcript {
            code: out.status.exit_code() as i32,
            stdout: self.redact(&out.stdout),
            stderr: self.redact(&out.stderr),
        }
    }

    /// The library's whole program for `client` (an id or `all`), with the
    /// managed directory at `managed/`, the other clients' system locations
    /// below `system/` (e.g. `system/etc/codex`) and `codex_home`.
    pub fn run_client(&self, client: &str, json: bool, codex_home: Option<&str>) -> Transcript {
        let host = Host {
            home: Some(self.home()),
            cwd: Some(self.root()),
            os: Os::Linux,
            claude_managed_dir: self.managed(),
            system_root: self.path("system"),
            codex_home: codex_home.map(|p| self.path(p)),
        };
        let req = Request {
            root: ".".into(),
            client: Client::parse(client).expect("a registered client"),
            format: if json { Format::Json } else { Format::Human },
            dsh_profile: None,
            fail_on: None,
        };
        let out = mcpscope::run(&req, &host);
        Transcript {
            code: out.status.exit_code() as i32,
            stdout: self.redact(&out.stdout),
            stderr: self.redact(&out.stderr),
        }
    }

    /// Replace the temp dir with `[TMP]` and the crate version with
    /// `[VERSION]`.
    pub fn redact(&self, s: &str) -> String {
        let v = env!("CARGO_PKG_VERSION");
        s.replace(self.base.to_str().unwrap(), "[TMP]")
            .replace(
                &format!("\"version\": \"{v}\""),
                "\"version\": \"[VERSION]\"",
            )
            .replace(&format!("mcpscope {v} "), "mcpscope [VERSION] ")
    }
}

/// Exit code, stdout and stderr of one invocation, redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Transcript {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).expect("stdout is one JSON document")
    }

    /// Everything the user sees.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

impl fmt::Display for Transcript {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "exit: {}\n----- stdout -----\n{}----- stderr -----\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Snapshot a [`Transcript`] (exit code + stdout + stderr together).
#[macro_export]
macro_rules! snapshot {
    ($name:expr, $transcript:expr) => {
        insta::assert_snapshot!($name, $transcript.to_string())
    };
}

/// The binary reads the fixed managed path; these tests assume the machine
/// has none (true on developer machines, CI and the container).
pub fn assert_no_system_managed_dir() {
    assert!(
        !Path::new("/etc/claude-code").exists(),
        "these tests expect no /etc/claude-code on the test machine"
    );
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}
