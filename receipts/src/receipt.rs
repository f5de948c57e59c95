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

/// `outer/execution.json`: how the container ended, as the orchestrator saw it.
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
