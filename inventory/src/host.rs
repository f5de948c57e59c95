//! The host the inventory runs on: home directory, current directory, OS and
//! the fixed system locations. The binary builds it from the real process
//! environment ([`Host::from_env`]); tests build it by hand to point the
//! managed location at a temporary directory.
//!
//! It must never read configuration and never offer an environment override
//! for the managed or system locations: the binary always inspects the
//! documented fixed paths. The one environment override it honours is the one
//! a client documents for its own home (`CODEX_HOME`).

use std::path::{Path, PathBuf};

/// Operating systems with documented Claude Code managed locations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
}

impl Os {
    /// The OS this binary was built for (other Unixes use the Linux paths).
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }

    /// Claude Code's managed policy directory (holds managed-mcp.json and
    /// the managed CLAUDE.md).
    pub fn claude_managed_dir(self) -> &'static Path {
        Path::new(match self {
            Os::Linux => "/etc/claude-code",
            Os::MacOs => "/Library/Application Support/ClaudeCode",
            Os::Windows => "C:\\Program Files\\ClaudeCode",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Absolute home directory; `None` when HOME is unset, empty or relative.
    pub home: Option<PathBuf>,
    /// Current directory for relative roots; `None` when it cannot be read.
    pub cwd: Option<PathBuf>,
    pub os: Os,
    /// Trusted base of managed-mcp.json and the managed CLAUDE.md.
    pub claude_managed_dir: PathBuf,
    /// Where the other clients' fixed system locations (`/etc/codex`,
    /// `/etc/gemini-cli`, ...) are looked up: `/` on a real host; tests point
    /// it at a temporary directory. Never taken from the environment.
    pub system_root: PathBuf,
    /// `CODEX_HOME` when set and not empty (made absolute against the current
    /// directory, as Codex does); `None` means `~/.codex`.
    pub codex_home: Option<PathBuf>,
}

impl Host {
    /// The real host: `$HOME`, `getcwd()`, and the documented fixed managed
    /// directory of this OS.
    pub fn from_env() -> Host {
        let os = Os::current();
        let cwd = std::env::current_dir().ok();
        Host {
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute()),
            codex_home: codex_home(std::env::var_os("CODEX_HOME"), cwd.as_deref()),
            cwd,
            os,
            claude_managed_dir: os.claude_managed_dir().to_path_buf(),
            system_root: PathBuf::from("/"),
        }
    }

    /// A fixed absolute system path (`/etc/codex/config.toml`) below
    /// [`Host::system_root`].
    pub fn system_path(&self, absolute: &str) -> PathBuf {
        let rel = absolute.trim_start_matches('/');
        if self.system_root == Path::new("/") {
            Path::new("/").join(rel)
        } else {
            self.system_root.join(rel)
        }
    }
}

/// `CODEX_HOME` as Codex takes it: ignored when empty; a relative value is
/// relative to the current directory.
pub fn codex_home(value: Option<std::ffi::OsString>, cwd: Option<&Path>) -> Option<PathBuf> {
    let v = PathBuf::from(value.filter(|v| !v.is_empty())?);
    if v.is_absolute() {
        Some(v)
    } else {
        cwd.map(|c| c.join(v))
    }
}
