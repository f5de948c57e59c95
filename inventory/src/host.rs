//! The host the inventory runs on: home directory, current directory, OS and
//! the fixed system locations. The binary builds it from the real process
//! environment ([`Host::from_env`]); tests build it by hand to point the
//! managed location at a temporary directory.
//!
//! It must never read configuration and never offer an environment override
//! for the managed location: the binary always inspects the documented fixed
//! path.

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
}

impl Host {
    /// The real host: `$HOME`, `getcwd()`, and the documented fixed managed
    /// directory of this OS.
    pub fn from_env() -> Host {
        let os = Os::current();
        Host {
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute()),
            cwd: std::env::current_dir().ok(),
            os,
            claude_managed_dir: os.claude_managed_dir().to_path_buf(),
        }
    }
}
