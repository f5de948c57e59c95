//! What one container is, in the orchestrator's own terms: the boundary policy as a create
//! request means it (image, platform, user, environment, labels, network, read-only root,
//! capabilities, no-new-privileges, init, limits, tmpfs mounts, the one evidence volume). The
//! engine backends translate a `Sandbox` into their own API (bollard's types live only in
//! `engine::docker`); nothing here names a backend or talks to one.

use crate::engine::Labels;

/// Everything a container is created with. Fields left `None`/empty are not asked for (the
/// platform probe asks for less than an evidence container).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// Image ID (`sha256:…`).
    pub image: String,
    /// OCI platform ("linux/arm64"): which image platform the engine must run.
    pub platform: String,
    /// `"<uid>:<gid>"`.
    pub user: String,
    /// `KEY=value` pairs, in order; empty for none.
    pub env: Vec<(String, String)>,
    pub labels: Labels,
    /// "none".
    pub network_mode: String,
    pub read_only_root: bool,
    /// Capabilities dropped ("ALL").
    pub cap_drop: Vec<String>,
    pub no_new_privileges: bool,
    /// A minimal init as PID 1 (reaps, forwards signals).
    pub init: bool,
    pub limits: Limits,
    /// In the policy's order (sorted by mount point).
    pub tmpfs: Vec<Tmpfs>,
    /// The one named volume, when there is one.
    pub volume: Option<VolumeMount>,
}

/// Resource limits; `None` leaves the engine's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    pub pids: Option<i64>,
    pub memory_bytes: Option<i64>,
    /// Memory + swap.
    pub memory_swap_bytes: Option<i64>,
    /// CPU, in 1e-9 CPUs.
    pub nano_cpus: Option<i64>,
}

/// One tmpfs mount: its mount point and its options in the policy's spelling
/// (`rw,noexec,nosuid,size=64m,uid=1000,gid=1000`), one option per element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tmpfs {
    pub target: String,
    pub options: Vec<String>,
}

impl Tmpfs {
    /// From the policy's comma-separated option string.
    pub fn new(target: &str, options: &str) -> Tmpfs {
        Tmpfs {
            target: target.to_string(),
            options: options
                .split(',')
                .filter(|o| !o.is_empty())
                .map(str::to_string)
                .collect(),
        }
    }

    /// The `uid=`/`gid=` owner the options ask for, when both are given.
    pub fn owner(&self) -> Option<(String, String)> {
        let value = |key: &str| {
            self.options
                .iter()
                .find_map(|o| o.strip_prefix(key))
                .map(str::to_string)
        };
        Some((value("uid=")?, value("gid=")?))
    }

    /// The options as one comma-separated string, as given.
    pub fn joined(&self) -> String {
        self.options.join(",")
    }
}

/// A named volume mounted read-write at `target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeMount {
    pub name: String,
    pub target: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmpfs_options_keep_their_order_and_name_their_owner() {
        let t = Tmpfs::new("/tmp", "rw,noexec,nosuid,size=64m,uid=1000,gid=1000");
        assert_eq!(t.joined(), "rw,noexec,nosuid,size=64m,uid=1000,gid=1000");
        assert_eq!(t.owner(), Some(("1000".into(), "1000".into())));
        assert_eq!(Tmpfs::new("/x", "rw,uid=1000").owner(), None);
        assert_eq!(Tmpfs::new("/x", "").options, Vec::<String>::new());
    }
}
