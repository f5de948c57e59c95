//! The boundary policy made concrete: `images/boundary-policy.json` (fixed, shared with the
//! verifier) becomes the container create request — network none, read-only root, the user,
//! cap-drop, no-new-privileges, init, pids/memory/swap/CPU limits, the tmpfs fixture roots, one
//! labelled named volume at `/evidence` — and nothing else: no binds, no devices, no socket, no
//! auto-remove. It also names and labels the run's objects. It never checks the policy (that is
//! `scopebox_schema::policy`) and never talks to the engine.

use crate::engine::{Labels, KEEP_LABEL, LANE_LABEL, OWNER_LABEL, RUN_LABEL};
use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType};
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

/// The create request: the policy, the image, the volume, the labels, nothing more.
pub fn create_body(
    policy: &BoundaryPolicy,
    image_id: &str,
    volume: &str,
    labels: &Labels,
) -> ContainerCreateBody {
    create_body_for(policy, image_id, volume, labels, None)
}

/// The create request of an evidence container that is told the engine's machine
/// (`layout::ENGINE_MACHINE_ENV`): the runner picks the native witness by it. Environment, not
/// image content: the image stays the same on every host.
pub fn create_body_for(
    policy: &BoundaryPolicy,
    image_id: &str,
    volume: &str,
    labels: &Labels,
    engine_machine: Option<&str>,
) -> ContainerCreateBody {
    let host = HostConfig {
        network_mode: Some(policy.network_mode.clone()),
        readonly_rootfs: Some(policy.read_only_root),
        cap_drop: Some(policy.cap_drop.clone()),
        security_opt: policy
            .no_new_privileges
            .then(|| vec!["no-new-privileges".to_string()]),
        init: Some(policy.init),
        pids_limit: Some(policy.pids_limit),
        memory: Some(policy.memory_bytes),
        memory_swap: Some(policy.memory_swap_bytes),
        nano_cpus: Some(policy.nano_cpus),
        tmpfs: Some(policy.tmpfs.clone().into_iter().collect()),
        mounts: Some(vec![Mount {
            target: Some(policy.evidence_volume.clone()),
            source: Some(volume.to_string()),
            typ: Some(MountType::VOLUME),
            read_only: Some(false),
            ..Default::default()
        }]),
        privileged: Some(false),
        auto_remove: Some(false),
        ..Default::default()
    };
    ContainerCreateBody {
        image: Some(image_id.to_string()),
        env: engine_machine.map(|m| {
            vec![format!(
                "{}={m}",
                scopebox_schema::layout::ENGINE_MACHINE_ENV
            )]
        }),
        user: Some(policy.user.clone()),
        labels: Some(labels.clone().into_iter().collect()),
        tty: Some(false),
        open_stdin: Some(false),
        attach_stdin: Some(false),
        host_config: Some(host),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::workspace_root;

    #[test]
    fn the_create_request_carries_the_whole_policy_and_nothing_else() {
        let (policy, _) = load_policy(&workspace_root()).unwrap();
        let labels = labels("r1", false);
        let body = create_body(&policy, "sha256:abc", "vol-1", &labels);
        let host = body.host_config.as_ref().unwrap();
        assert_eq!(host.network_mode.as_deref(), Some("none"));
        assert_eq!(host.readonly_rootfs, Some(true));
        assert_eq!(host.cap_drop, Some(vec!["ALL".to_string()]));
        assert_eq!(
            host.security_opt,
            Some(vec!["no-new-privileges".to_string()])
        );
        assert_eq!(host.init, Some(true));
        assert_eq!(host.pids_limit, Some(256));
        assert_eq!(host.memory, Some(2 * 1024 * 1024 * 1024));
        assert_eq!(host.memory_swap, host.memory);
        assert_eq!(host.nano_cpus, Some(2_000_000_000));
        let tmpfs = host.tmpfs.as_ref().unwrap();
        // Every tmpfs of the policy (the work areas and each fixture root), nothing else.
        assert_eq!(tmpfs.len(), policy.tmpfs.len());
        for root in [
            "/work",
            "/home/node",
            "/tmp",
            "/etc/claude-code",
            "/etc/codex",
        ] {
            assert!(tmpfs.contains_key(root), "{root}");
        }
        for opts in tmpfs.values() {
            assert!(opts.starts_with("rw,noexec,nosuid,size="), "{opts}");
            assert!(opts.ends_with("uid=1000,gid=1000"), "{opts}");
        }
        let mounts = host.mounts.as_ref().unwrap();
        assert_eq!(mounts.len(), 1);
        assert_eq!(mounts[0].typ, Some(MountType::VOLUME));
        assert_eq!(mounts[0].target.as_deref(), Some("/evidence"));
        assert_eq!(mounts[0].source.as_deref(), Some("vol-1"));
        assert!(host.binds.is_none() && host.devices.is_none());
        assert_eq!(host.privileged, Some(false));
        assert_eq!(body.user.as_deref(), Some("1000:1000"));
        assert_eq!(body.labels.as_ref().unwrap()[RUN_LABEL], "r1");
        assert!(!body.labels.as_ref().unwrap().contains_key(KEEP_LABEL));
    }

    #[test]
    fn keep_on_failure_marks_the_objects() {
        assert_eq!(labels("r", true)[KEEP_LABEL], "1");
        assert!(labels("r", false)[OWNER_LABEL].ends_with(&format!("/{}", std::process::id())));
    }
}
