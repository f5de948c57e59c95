//! The boundary policy made concrete: `images/boundary-policy.json` (fixed, shared with the
//! verifier) becomes the container's `Sandbox` — network none, read-only root, the user,
//! cap-drop, no-new-privileges, init, pids/memory/swap/CPU limits, the tmpfs fixture roots, one
//! labelled named volume at `/evidence` — and nothing else: no binds, no devices, no socket, no
//! auto-remove. It also names and labels the run's objects. It never checks the policy (that is
//! `scopebox_schema::policy`) and never talks to the engine.

use crate::engine::{Labels, KEEP_LABEL, LANE_LABEL, OWNER_LABEL, RUN_LABEL};
use crate::sandbox::{Limits, Sandbox, Tmpfs, VolumeMount};
use scopebox_schema::platform::Platform;
use scopebox_schema::policy::BoundaryPolicy;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum BoundaryError {
    #[error("read boundary policy {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("parse boundary policy {path}")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

/// Read `images/boundary-policy.json` strictly; returns it with its exact bytes.
pub fn load_policy(root: &Path) -> Result<(BoundaryPolicy, Vec<u8>), BoundaryError> {
    let path = root.join(crate::image::POLICY_FILE);
    let bytes = std::fs::read(&path).map_err(|source| BoundaryError::Read {
        path: path.clone(),
        source,
    })?;
    let policy: BoundaryPolicy =
        serde_json::from_slice(&bytes).map_err(|source| BoundaryError::Parse {
            path: path.clone(),
            source,
        })?;
    Ok((policy, bytes))
}

/// The names of one run's objects (of one platform, when several run at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    pub run_id: String,
    pub container: String,
    pub volume: String,
    /// What the final sweep lists: `scopebox.run=<id>` for a single-platform plan,
    /// `scopebox.lane=<id>-<arch>` per platform, so one platform's cleanup never removes
    /// another's container while it still runs.
    pub sweep_label: String,
}

impl Names {
    pub fn for_run(run_id: &str) -> Names {
        Names {
            run_id: run_id.to_string(),
            container: format!("scopebox-{run_id}"),
            volume: format!("scopebox-{run_id}-evidence"),
            sweep_label: format!("{RUN_LABEL}={run_id}"),
        }
    }

    /// The names of `platform`'s container and volume in run `run_id`.
    pub fn for_platform(run_id: &str, platform: Platform) -> Names {
        let arch = platform.oci_architecture();
        Names {
            run_id: run_id.to_string(),
            container: format!("scopebox-{run_id}-{arch}"),
            volume: format!("scopebox-{run_id}-{arch}-evidence"),
            sweep_label: format!("{LANE_LABEL}={}", lane(run_id, platform)),
        }
    }
}

impl Names {
    /// The names of shard `index` of `platform`'s containers: shard 0 is the platform's own
    /// (`for_platform`); shard i ≥ 1 adds `-s<i>`, with a lane of its own so that one
    /// container's final sweep never removes a sibling that still runs.
    pub fn for_shard(run_id: &str, platform: Platform, index: usize) -> Names {
        if index == 0 {
            return Names::for_platform(run_id, platform);
        }
        let arch = platform.oci_architecture();
        Names {
            run_id: run_id.to_string(),
            container: format!("scopebox-{run_id}-{arch}-s{index}"),
            volume: format!("scopebox-{run_id}-{arch}-s{index}-evidence"),
            sweep_label: format!("{LANE_LABEL}={}", shard_lane(run_id, platform, index)),
        }
    }
}

/// The lane of shard `index` of a platform: the platform's lane, `-s<i>` for i ≥ 1.
pub fn shard_lane(run_id: &str, platform: Platform, index: usize) -> String {
    if index == 0 {
        lane(run_id, platform)
    } else {
        format!("{}-s{index}", lane(run_id, platform))
    }
}

/// `platform_labels` with the lane of shard `index`.
pub fn shard_labels(
    run_id: &str,
    platform: Platform,
    index: usize,
    keep_on_failure: bool,
) -> Labels {
    let mut labels = labels(run_id, keep_on_failure);
    labels.insert(LANE_LABEL.to_string(), shard_lane(run_id, platform, index));
    labels
}

/// `<run id>-<arch>`: the value of `LANE_LABEL` on a platform's objects.
pub fn lane(run_id: &str, platform: Platform) -> String {
    format!("{run_id}-{}", platform.oci_architecture())
}

/// A run id unique on this host: start time in milliseconds and our pid.
pub fn new_run_id() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("{ms:x}-{:x}", std::process::id())
}

/// This host's name, as the owner label spells it.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

/// `<hostname>/<pid>` of this process.
pub fn owner() -> String {
    format!("{}/{}", hostname(), std::process::id())
}

/// Labels for the container and the volume.
pub fn labels(run_id: &str, keep_on_failure: bool) -> Labels {
    let mut labels = Labels::new();
    labels.insert(RUN_LABEL.to_string(), run_id.to_string());
    labels.insert(OWNER_LABEL.to_string(), owner());
    if keep_on_failure {
        labels.insert(KEEP_LABEL.to_string(), "1".to_string());
    }
    labels
}

/// The labels of one platform's container and volume: the run's, plus its lane.
pub fn platform_labels(run_id: &str, platform: Platform, keep_on_failure: bool) -> Labels {
    let mut labels = labels(run_id, keep_on_failure);
    labels.insert(LANE_LABEL.to_string(), lane(run_id, platform));
    labels
}

/// The sandbox of an evidence container: the policy, the image, the volume, the labels,
/// nothing more. With `engine_machine`, the container is told the engine's machine
/// (`layout::ENGINE_MACHINE_ENV`): the runner picks the native witness by it. Environment, not
/// image content: the image stays the same on every host.
pub fn sandbox(
    policy: &BoundaryPolicy,
    image_id: &str,
    platform: Platform,
    volume: &str,
    labels: &Labels,
    engine_machine: Option<&str>,
) -> Sandbox {
    Sandbox {
        image: image_id.to_string(),
        platform: platform.name().to_string(),
        user: policy.user.clone(),
        env: engine_machine
            .map(|m| {
                vec![(
                    scopebox_schema::layout::ENGINE_MACHINE_ENV.to_string(),
                    m.to_string(),
                )]
            })
            .unwrap_or_default(),
        labels: labels.clone(),
        network_mode: policy.network_mode.clone(),
        read_only_root: policy.read_only_root,
        cap_drop: policy.cap_drop.clone(),
        no_new_privileges: policy.no_new_privileges,
        init: policy.init,
        limits: Limits {
            pids: Some(policy.pids_limit),
            memory_bytes: Some(policy.memory_bytes),
            memory_swap_bytes: Some(policy.memory_swap_bytes),
            nano_cpus: Some(policy.nano_cpus),
        },
        tmpfs: policy
            .tmpfs
            .iter()
            .map(|(target, options)| Tmpfs::new(target, options))
            .collect(),
        volume: Some(VolumeMount {
            name: volume.to_string(),
            target: policy.evidence_volume.clone(),
        }),
    }
}

/// The sandbox of the platform probe: the image's own entrypoint, confined (no network,
/// read-only root, cap-drop ALL, no-new-privileges), without limits, tmpfs or volume.
pub fn probe_sandbox(image_id: &str, platform: Platform, labels: &Labels) -> Sandbox {
    Sandbox {
        image: image_id.to_string(),
        platform: platform.name().to_string(),
        user: "1000:1000".to_string(),
        env: Vec::new(),
        labels: labels.clone(),
        network_mode: "none".to_string(),
        read_only_root: true,
        cap_drop: vec!["ALL".to_string()],
        no_new_privileges: true,
        init: false,
        limits: Limits::default(),
        tmpfs: Vec::new(),
        volume: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::workspace_root;

    #[test]
    fn the_sandbox_carries_the_whole_policy_and_nothing_else() {
        let (policy, _) = load_policy(&workspace_root()).unwrap();
        let labels = labels("r1", false);
        let sb = sandbox(
            &policy,
            "sha256:abc",
            Platform::LinuxArm64,
            "vol-1",
            &labels,
            Some("x86_64"),
        );
        assert_eq!(sb.image, "sha256:abc");
        assert_eq!(sb.platform, "linux/arm64");
        assert_eq!(sb.network_mode, "none");
        assert!(sb.read_only_root && sb.no_new_privileges && sb.init);
        assert_eq!(sb.cap_drop, vec!["ALL".to_string()]);
        assert_eq!(sb.limits.pids, Some(256));
        assert_eq!(sb.limits.memory_bytes, Some(2 * 1024 * 1024 * 1024));
        assert_eq!(sb.limits.memory_swap_bytes, sb.limits.memory_bytes);
        assert_eq!(sb.limits.nano_cpus, Some(2_000_000_000));
        // Every tmpfs of the policy (the work areas and each fixture root), nothing else.
        assert_eq!(sb.tmpfs.len(), policy.tmpfs.len());
        for root in [
            "/work",
            "/home/node",
            "/tmp",
            "/etc/claude-code",
            "/etc/codex",
        ] {
            assert!(sb.tmpfs.iter().any(|t| t.target == root), "{root}");
        }
        for t in &sb.tmpfs {
            assert_eq!(t.joined(), policy.tmpfs[&t.target]);
            assert_eq!(t.owner(), Some(("1000".into(), "1000".into())));
        }
        assert_eq!(
            sb.volume,
            Some(VolumeMount {
                name: "vol-1".into(),
                target: "/evidence".into()
            })
        );
        assert_eq!(sb.user, "1000:1000");
        assert_eq!(
            sb.env,
            vec![("SCOPEBOX_ENGINE_MACHINE".to_string(), "x86_64".to_string())]
        );
        assert_eq!(sb.labels[RUN_LABEL], "r1");
        assert!(!sb.labels.contains_key(KEEP_LABEL));
    }

    #[test]
    fn keep_on_failure_marks_the_objects() {
        assert_eq!(labels("r", true)[KEEP_LABEL], "1");
        assert!(labels("r", false)[OWNER_LABEL].ends_with(&format!("/{}", std::process::id())));
    }
}
