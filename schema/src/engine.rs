//! Which container engine ran a platform, and what its create request and inspection differ in:
//! Docker and Podman's Docker-compatible API take the same calls, but Podman spells a tmpfs
//! owned by the container user `U` (no `uid=`/`gid=`), appends its own mount options, adds
//! writable tmpfs mounts of its own on a read-only root unless they are given, and lists the
//! capabilities it dropped instead of `ALL`. The orchestrator translates for the engine it
//! talks to; the verifier reads each engine's inspection in its own dialect (`policy`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineName {
    Docker,
    Podman,
}

impl EngineName {
    pub fn as_str(self) -> &'static str {
        match self {
            EngineName::Docker => "docker",
            EngineName::Podman => "podman",
        }
    }

    /// From `GET /version`'s component names: Podman names itself "Podman Engine".
    pub fn from_components<'a>(names: impl IntoIterator<Item = &'a str>) -> EngineName {
        if names
            .into_iter()
            .any(|n| n.to_ascii_lowercase().contains("podman"))
        {
            EngineName::Podman
        } else {
            EngineName::Docker
        }
    }
}

impl std::fmt::Display for EngineName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The writable tmpfs mounts Podman adds on a read-only root (`--read-only-tmpfs`, default
/// true) unless the request mounts these paths itself. The orchestrator mounts each one the
/// policy does not name read-only and noexec (`PODMAN_READ_ONLY_TMPFS_OPTIONS`), so nothing
/// writable appears that the policy did not ask for.
pub const PODMAN_IMPLICIT_TMPFS: [&str; 3] = ["/run", "/tmp", "/var/tmp"];
/// Options of those overrides.
pub const PODMAN_READ_ONLY_TMPFS_OPTIONS: &str = "ro,noexec,nosuid,nodev,size=64k";
/// Options Podman appends to every tmpfs in its inspection; they only tighten or describe
/// propagation, so the verifier drops them before comparing with the request.
pub const PODMAN_APPENDED_TMPFS_OPTIONS: [&str; 3] = ["rprivate", "nodev", "tmpcopyup"];

/// A policy tmpfs option list as Podman must be asked for it: `uid=<u>,gid=<g>` naming the
/// container user becomes `U` (chown to the container user) at the place of `uid=`. `None`
/// when the options ask for an owner other than `user` (Podman cannot express that).
pub fn podman_tmpfs_options(options: &[String], user: &str) -> Option<Vec<String>> {
    let uid = options.iter().find_map(|o| o.strip_prefix("uid="));
    let gid = options.iter().find_map(|o| o.strip_prefix("gid="));
    match (uid, gid) {
        (None, None) => Some(options.to_vec()),
        (Some(u), Some(g)) if format!("{u}:{g}") == user => Some(
            options
                .iter()
                .filter(|o| !o.starts_with("gid="))
                .map(|o| {
                    if o.starts_with("uid=") {
                        "U".to_string()
                    } else {
                        o.clone()
                    }
                })
                .collect(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(s: &str) -> Vec<String> {
        s.split(',').map(str::to_string).collect()
    }

    #[test]
    fn the_owner_becomes_u_only_when_it_is_the_container_user() {
        assert_eq!(
            podman_tmpfs_options(
                &opts("rw,noexec,nosuid,size=8m,uid=1000,gid=1000"),
                "1000:1000"
            ),
            Some(opts("rw,noexec,nosuid,size=8m,U"))
        );
        assert_eq!(
            podman_tmpfs_options(&opts("rw,uid=0,gid=0"), "1000:1000"),
            None
        );
        assert_eq!(
            podman_tmpfs_options(&opts("rw,uid=1000"), "1000:1000"),
            None
        );
        assert_eq!(
            podman_tmpfs_options(&opts("rw,size=1m"), "1000:1000"),
            Some(opts("rw,size=1m"))
        );
    }

    #[test]
    fn podman_is_recognised_by_its_version_components() {
        assert_eq!(
            EngineName::from_components(["Podman Engine", "Conmon"]),
            EngineName::Podman
        );
        assert_eq!(
            EngineName::from_components(["Engine", "containerd", "runc"]),
            EngineName::Docker
        );
        assert_eq!(
            serde_json::to_string(&EngineName::Podman).unwrap(),
            "\"podman\""
        );
    }
}
