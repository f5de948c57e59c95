//! `receipt.json`: the index of a receipt bundle (`contracts/receipt-v1.md`). It binds every
//! other file in the bundle by SHA-256 and records what the orchestrator concluded; the verifier
//! trusts none of the conclusions without recomputing them from the files.
//!
//! Bundle layout:
//! ```text
//! <bundle>/
//!   receipt.json                 Receipt
//!   receipt.dsse.json            optional DSSE envelope (in-toto Statement v1)
//!   inputs/pack-manifest.json    PackManifest
//!   inputs/matrix.json           the matrix exactly as run (byte-identical to /scopebox/matrix.json)
//!   inputs/boundary-policy.json  BoundaryPolicy
//!   inputs/image-config.json     the image config JSON, exact bytes (its sha256 = image ID)
//!   inputs/image-layer.json      LayerManifest: every entry of the one layer tar
//!   outer/container-inspect.json raw engine JSON of the container, taken after it stopped
//!   outer/image-inspect.json     raw engine JSON of the image
//!   outer/execution.json         Execution
//!   evidence/...                 the /evidence tree (see `evidence`)
//! ```

use crate::evidence::{Controls, InnerBoundary};
use crate::policy::BoundaryPolicy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const RECEIPT_FILE: &str = "receipt.json";
pub const ENVELOPE_FILE: &str = "receipt.dsse.json";
pub const PACK_MANIFEST_FILE: &str = "inputs/pack-manifest.json";
pub const MATRIX_FILE: &str = "inputs/matrix.json";
pub const POLICY_FILE: &str = "inputs/boundary-policy.json";
pub const IMAGE_CONFIG_FILE: &str = "inputs/image-config.json";
pub const LAYER_MANIFEST_FILE: &str = "inputs/image-layer.json";
pub const CONTAINER_INSPECT_FILE: &str = "outer/container-inspect.json";
pub const IMAGE_INSPECT_FILE: &str = "outer/image-inspect.json";
pub const EXECUTION_FILE: &str = "outer/execution.json";
pub const EVIDENCE_DIR: &str = "evidence";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Receipt {
    /// Always 1.
    pub schema_version: u32,
    pub tool: Tool,
    /// Also the value of the `scopebox.run` label on the container and volume.
    pub run_id: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub finished_at: String,
    pub inputs: Inputs,
    pub boundary: BoundaryRecord,
    pub controls: Controls,
    pub cases: Vec<CaseEntry>,
    pub summary: CaseSummary,
    pub execution: Execution,
    pub cleanup: Cleanup,
    /// Every file in the bundle except receipt.json and the envelope: relative path → sha256.
    pub files: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Inputs {
    pub candidate_archive: NamedDigest,
    pub runtime_manifest_sha256: String,
    pub runner_sha256: String,
    pub sentinel_sha256: String,
    pub matrix_sha256: String,
    pub boundary_policy_sha256: String,
    /// "sha256:<hex>" = sha256 of inputs/image-config.json.
    pub image_id: String,
    pub image_config_sha256: String,
    /// "sha256:<hex>" of each uncompressed layer tar, in order.
    pub layer_diff_ids: Vec<String>,
    /// "linux/amd64".
    pub platform: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NamedDigest {
    pub name: String,
    pub sha256: String,
}

/// `inputs/pack-manifest.json`: what `scopebox pack` produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PackManifest {
    pub schema_version: u32,
    pub archive: NamedDigest,
    pub archive_size: u64,
    /// Digest of the canonical JSON of `runtime` (serde_json::to_vec of the array).
    pub runtime_manifest_sha256: String,
    /// Every file inside the archive, sorted by path.
    pub runtime: Vec<RuntimeFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuntimeFile {
    /// Path inside the archive, e.g. "bin/mcpscope".
    pub path: String,
    pub size: u64,
    /// Octal text, "0755".
    pub mode: String,
    pub sha256: String,
}

/// `inputs/image-layer.json`: every entry of the layer tar, so the verifier can tie the
/// candidate, runner, sentinel and matrix digests to the image without the layer itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LayerManifest {
    /// "sha256:<hex>" of the uncompressed layer tar.
    pub diff_id: String,
    pub entries: Vec<LayerEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LayerEntry {
    /// Absolute path in the image, e.g. "/scopebox/bin/scopebox-runner".
    pub path: String,
    /// "file" or "dir".
    pub kind: String,
    pub mode: String,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub sha256: Option<String>,
}

/// The three views of the boundary and whether each pair agrees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BoundaryRecord {
    pub policy: BoundaryPolicy,
    pub observed: Option<InnerBoundary>,
    /// Each failed check by name; empty when the inspection meets the policy.
    pub applied_failures: Vec<String>,
    /// Each failed check by name; empty when the inner observation meets the policy.
    pub observed_failures: Vec<String>,
    pub applied_meets_policy: bool,
    pub observed_meets_policy: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaseEntry {
    pub id: String,
    /// "pass" or "fail".
    pub verdict: String,
    /// Bundle-relative paths → sha256 of the files the verdict was judged from.
    pub record_sha256: String,
    pub stdout_sha256: String,
    pub stderr_sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaseSummary {
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
}

/// `outer/execution.json`: how the container ended, and what was done to it, as the
/// orchestrator saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Execution {
    /// "exited", "timed-out" or "interrupted".
    pub status: String,
    pub exit_code: Option<i64>,
    pub signal: Option<String>,
    pub timed_out: bool,
    pub oom_killed: bool,
    pub deadline_seconds: u64,
    pub durations: Durations,
    /// What the orchestrator did to the volume and the container, in the order it did it: the
    /// proof that the container had stopped (killed first, when the deadline passed) before its
    /// evidence was copied out, that it was inspected before it was removed, and that it and
    /// the volume were removed. Absent in bundles written before it existed, which therefore
    /// fail `execution.lifecycle`.
    #[serde(default)]
    pub events: Vec<LifecycleEvent>,
}

/// One step of the container lifecycle, when it completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LifecycleEvent {
    pub event: EventKind,
    /// Milliseconds from the start of the run (`startedAt`) on a monotonic clock, so the
    /// offsets never go backwards.
    pub at_ms: u64,
}

/// The lifecycle steps, as spelled in `outer/execution.json`. Each is recorded when the engine
/// confirmed the step, never when it was merely attempted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// The labelled `/evidence` volume exists.
    VolumeCreated,
    /// The container exists (not running).
    ContainerCreated,
    /// The container is running; the deadline counts from here.
    Started,
    /// The engine reported the container stopped, with an exit code (also after a kill).
    Exited,
    /// Waiting for the container failed; it is killed next.
    WaitFailed,
    /// The deadline passed with the container still running; it is killed next.
    DeadlinePassed,
    /// Ctrl-C: the step in flight was abandoned; the container is killed next.
    Interrupted,
    /// The engine confirmed SIGKILL was delivered.
    Killed,
    /// `/evidence` was copied out of the stopped container.
    EvidenceExported,
    /// The container was inspected (`outer/container-inspect.json`).
    ContainerInspected,
    /// The image was inspected (`outer/image-inspect.json`).
    ImageInspected,
    /// `--keep-on-failure`: nothing was removed.
    Kept,
    /// The container is gone: removed, or reported absent by the engine.
    ContainerRemoved,
    /// The volume is gone: removed, or reported absent by the engine.
    VolumeRemoved,
    /// The final sweep by `scopebox.run=<id>` listed what is left (`cleanup.leftovers`).
    Swept,
}

impl EventKind {
    /// Every kind, in lifecycle order.
    pub const ALL: [EventKind; 15] = [
        EventKind::VolumeCreated,
        EventKind::ContainerCreated,
        EventKind::Started,
        EventKind::Exited,
        EventKind::WaitFailed,
        EventKind::DeadlinePassed,
        EventKind::Interrupted,
        EventKind::Killed,
        EventKind::EvidenceExported,
        EventKind::ContainerInspected,
        EventKind::ImageInspected,
        EventKind::Kept,
        EventKind::ContainerRemoved,
        EventKind::VolumeRemoved,
        EventKind::Swept,
    ];

    /// The name as written in the record.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::VolumeCreated => "volume-created",
            EventKind::ContainerCreated => "container-created",
            EventKind::Started => "started",
            EventKind::Exited => "exited",
            EventKind::WaitFailed => "wait-failed",
            EventKind::DeadlinePassed => "deadline-passed",
            EventKind::Interrupted => "interrupted",
            EventKind::Killed => "killed",
            EventKind::EvidenceExported => "evidence-exported",
            EventKind::ContainerInspected => "container-inspected",
            EventKind::ImageInspected => "image-inspected",
            EventKind::Kept => "kept",
            EventKind::ContainerRemoved => "container-removed",
            EventKind::VolumeRemoved => "volume-removed",
            EventKind::Swept => "swept",
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Durations {
    pub pack_ms: u64,
    pub image_ms: u64,
    pub run_ms: u64,
    pub export_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Cleanup {
    pub container_removed: bool,
    pub volume_removed: bool,
    /// Containers and volumes labelled with this run id still present after the final sweep.
    pub leftovers: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_are_the_serialized_spelling() {
        for kind in EventKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<EventKind>(&json).unwrap(), kind);
        }
        let event: LifecycleEvent =
            serde_json::from_str(r#"{"event":"deadline-passed","atMs":5000}"#).unwrap();
        assert_eq!(event.event, EventKind::DeadlinePassed);
        assert!(serde_json::from_str::<EventKind>("\"teleported\"").is_err());
    }
}
