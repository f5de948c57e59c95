//! `receipt.json`, schema version 2: the index of a receipt bundle (`docs/receipt-v2.md`). One
//! bundle covers every platform of a run. It binds every other file in the bundle by SHA-256,
//! names the content-addressed blobs the image layers are made of, and records per platform
//! what the orchestrator concluded; the verifier trusts none of the conclusions without
//! recomputing them from the files.
//!
//! Bundle layout:
//! ```text
//! <bundle>/
//!   receipt.json                   Receipt (schemaVersion 2)
//!   receipt.dsse.json              optional DSSE envelope (in-toto Statement v1)
//!   inputs/matrix.json             the matrix exactly as run (the same bytes in every image)
//!   inputs/boundary-policy.json    BoundaryPolicy
//!   inputs/image-recipe.json       the image recipe (its sha256 is named in every image config)
//!   inputs/blobs/<sha256 hex>      every byte the layers are made of: candidate archives, runner,
//!                                  sentinel, witness binaries (one file per distinct digest)
//!   platforms/<os>-<arch>/         one per platform that ran (`PlatformRun::dir`)
//!     inputs/pack-manifest.json    PackManifest of this platform's candidate archive
//!     inputs/image-config.json     exact bytes; sha256 = image ID
//!     inputs/image-layer.json      LayerManifest: every entry of the one layer tar
//!     outer/container-inspect.json raw engine JSON of the container, taken after it stopped
//!     outer/image-inspect.json     raw engine JSON of the image
//!     outer/execution.json         Execution
//!     evidence/...                 this platform's /evidence tree (see `evidence`)
//!   native.json                    optional: the native reference (`native_receipt`), with
//!   inputs/native-matrix.json,     the native matrix and lock as used, and per native platform
//!   inputs/native.lock.json,       its /evidence tree (`native_capture`); a native-only bundle
//!   native/<client>-<os>-<arch>/evidence/...   has no platform run (see `native_receipt`)
//! ```

use crate::engine::EngineName;
use crate::evidence::{Controls, InnerBoundary};
use crate::platform::Platform;
use crate::policy::BoundaryPolicy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// This schema's version; the verifier reports any other as rejected.
pub const SCHEMA_VERSION: u32 = 2;

pub const RECEIPT_FILE: &str = "receipt.json";
pub const ENVELOPE_FILE: &str = "receipt.dsse.json";
/// The JUnit report of the run (listed in `files`, like every input and evidence file).
pub const JUNIT_FILE: &str = "junit.xml";
/// The SLSA Provenance v1 statement in DSSE form, written by `scopebox sign` beside
/// `receipt.dsse.json` (like it, not listed in `files`).
pub const PROVENANCE_ENVELOPE_FILE: &str = "provenance.dsse.json";
pub const MATRIX_FILE: &str = "inputs/matrix.json";
pub const POLICY_FILE: &str = "inputs/boundary-policy.json";
pub const RECIPE_FILE: &str = "inputs/image-recipe.json";
/// `inputs/blobs/<sha256 hex>`: content-addressed layer inputs.
pub const BLOBS_DIR: &str = "inputs/blobs";
/// Where the per-platform directories live.
pub const PLATFORMS_DIR: &str = "platforms";
// Below a platform directory:
pub const PACK_MANIFEST_FILE: &str = "inputs/pack-manifest.json";
pub const IMAGE_CONFIG_FILE: &str = "inputs/image-config.json";
pub const LAYER_MANIFEST_FILE: &str = "inputs/image-layer.json";
pub const CONTAINER_INSPECT_FILE: &str = "outer/container-inspect.json";
pub const IMAGE_INSPECT_FILE: &str = "outer/image-inspect.json";
pub const EXECUTION_FILE: &str = "outer/execution.json";
pub const EVIDENCE_DIR: &str = "evidence";

/// `platforms/<os>-<arch>`: where a platform's files live in the bundle.
pub fn platform_dir(platform: Platform) -> String {
    format!("{PLATFORMS_DIR}/{}", platform.dir_name())
}

/// Below a platform's directory, the directories of its other containers when its matrix was
/// split across several (`evidence::Shard`): `shards/<index>/{outer,evidence}`, index ≥ 1.
pub const SHARDS_DIR: &str = "shards";

/// `platforms/<os>-<arch>/shards/<index>`: shard `index` ≥ 1 of a platform (shard 0 is the
/// platform's directory itself, so a one-container bundle has no `shards/`).
pub fn shard_dir(platform_dir: &str, index: usize) -> String {
    format!("{platform_dir}/{SHARDS_DIR}/{index}")
}

/// `inputs/blobs/<hex>`.
pub fn blob_path(sha256: &str) -> String {
    format!("{BLOBS_DIR}/{sha256}")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Receipt {
    /// Always `SCHEMA_VERSION` (2).
    pub schema_version: u32,
    pub tool: Tool,
    /// Also the value of the `scopebox.run` label on every container and volume of the run.
    pub run_id: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub finished_at: String,
    /// The matrix run on every platform (`inputs/matrix.json`).
    pub matrix: MatrixRef,
    pub boundary_policy_sha256: String,
    /// sha256 of `inputs/image-recipe.json`.
    pub recipe_sha256: String,
    /// What each file under `inputs/blobs/` is. Sorted by sha256, one entry per blob.
    pub blobs: Vec<Blob>,
    /// Every platform that ran, in `Platform::ALL` order.
    pub platforms: Vec<PlatformRun>,
    /// Platforms of the default set the engine could not run, and why. A platform named with
    /// `--platform` is never here: the run refuses instead.
    pub not_covered: Vec<NotCovered>,
    /// Over every platform that ran.
    pub summary: OverallSummary,
    /// Every file in the bundle except receipt.json and the envelope: relative path → sha256.
    pub files: BTreeMap<String, String>,
    /// What the candidates were built from and by, and the engine they ran on. Absent in
    /// bundles written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

/// `provenance` (contract addition "Provenance").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Provenance {
    /// The git checkout the candidates were built from, when they were built from one (not
    /// when every candidate was given with `--candidate`).
    pub source: Option<SourceRevision>,
    /// sha256 of the workspace's Cargo.lock the builds used (`--locked`).
    pub cargo_lock_sha256: String,
    /// `rustc -vV`, verbatim.
    pub rustc: String,
    /// The scopebox that ran the matrix and wrote the bundle (`tool.version`, repeated here so
    /// provenance reads on its own).
    pub scopebox_version: String,
    /// Whether each platform's candidate was built by this run (`pack`) or given
    /// (`--candidate`), in `platforms` order.
    pub candidates: Vec<CandidateOrigin>,
    pub engine: EngineFacts,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SourceRevision {
    /// `git rev-parse HEAD`.
    pub commit: String,
    /// Whether `git status --porcelain` listed anything (tracked changes or untracked files).
    pub dirty: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CandidateOrigin {
    pub platform: Platform,
    /// "built" (packed by this run, from `source`) or "given" (`--candidate`).
    pub origin: String,
}

/// The engine, from its `/info` and `/version`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EngineFacts {
    /// "docker" or "podman" (every platform's `engine`); `version` is every platform's
    /// `engineVersion`.
    pub name: String,
    pub version: String,
    pub operating_system: String,
    pub os_type: String,
    /// The engine's architecture, `uname -m` spelling; equal to every platform's
    /// `engineArchitecture`.
    pub architecture: String,
}

impl Receipt {
    /// The run of `platform`, when it ran.
    pub fn platform(&self, platform: Platform) -> Option<&PlatformRun> {
        self.platforms.iter().find(|p| p.platform == platform)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MatrixRef {
    pub sha256: String,
    pub name: String,
    pub case_count: usize,
}

/// The roles a blob can play in an image layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlobRole {
    /// A platform's candidate archive (`.tar.gz` as packed), unpacked below
    /// `layout::CANDIDATE_DIR`.
    CandidateArchive,
    Runner,
    Sentinel,
    /// A kernel witness binary for one machine (`Blob::machine`); every image carries all.
    Witness,
}

/// One file under `inputs/blobs/`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Blob {
    pub sha256: String,
    pub size: u64,
    /// Every use of these bytes (one blob can be, say, the same witness in two images).
    pub uses: Vec<BlobUse>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BlobUse {
    pub role: BlobRole,
    /// The platform whose image carries it.
    pub platform: Platform,
    /// For a witness: the machine it runs on natively (`x86_64`, `aarch64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// The archive's file name, or the binary's path in the image.
    pub name: String,
}

/// A platform of the default set that did not run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NotCovered {
    pub platform: Platform,
    /// One line, e.g. "the engine (x86_64) cannot run linux/arm64 images: exec format error
    /// (no binfmt_misc handler; install qemu-user-static)".
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OverallSummary {
    /// Platforms that ran, and how many of them passed everything.
    pub platforms: usize,
    pub platforms_passed: usize,
    /// Cases over every platform.
    pub cases: usize,
    pub cases_passed: usize,
}

/// One platform's run: inputs, boundary, controls, cases, execution and cleanup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlatformRun {
    pub platform: Platform,
    /// `platforms/<os>-<arch>`: every path of this platform is below it.
    pub dir: String,
    /// The engine ran this platform under emulation (its architecture differs).
    pub emulated: bool,
    /// The engine's own architecture, from its `/info` (`x86_64`, `aarch64`).
    pub engine_architecture: String,
    /// Which engine ran it (its `/version` components): the dialect of `outer/` inspections.
    pub engine: EngineName,
    /// The engine's version, as its `/version` says.
    pub engine_version: String,
    pub inputs: PlatformInputs,
    pub boundary: BoundaryRecord,
    pub controls: Controls,
    pub cases: Vec<CaseEntry>,
    pub summary: CaseSummary,
    pub execution: Execution,
    pub cleanup: Cleanup,
    /// The platform's other containers when its matrix was split across several
    /// (`evidence::Shard`: the case at position p ran in shard p mod (1 + shards.len())):
    /// shards 1, 2, … in order. `boundary`, `controls`, `execution` and `cleanup` above are
    /// shard 0's (the platform's own directory); `cases` and `summary` cover every shard.
    /// Absent: the platform ran in one container.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardRun>,
}

/// One more container of a platform whose matrix was split: the same image and boundary, its
/// own inspection, boundary observation, controls, lifecycle and cleanup, and the cases of its
/// shard (`evidence/cases/<id>/` below `dir`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ShardRun {
    /// 1, 2, …: the shard this container ran (`SCOPEBOX_SHARD=<index>/<count>`).
    pub index: usize,
    /// `platforms/<os>-<arch>/shards/<index>`.
    pub dir: String,
    pub boundary: BoundaryRecord,
    pub controls: Controls,
    pub execution: Execution,
    pub cleanup: Cleanup,
}

impl PlatformRun {
    /// A path below this platform's directory.
    pub fn path(&self, rel: &str) -> String {
        format!("{}/{rel}", self.dir)
    }

    /// How many containers ran this platform's matrix.
    pub fn shard_count(&self) -> usize {
        1 + self.shards.len()
    }

    /// The directory of shard `index` (0: the platform's own).
    pub fn shard_dir(&self, index: usize) -> String {
        if index == 0 {
            self.dir.clone()
        } else {
            shard_dir(&self.dir, index)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlatformInputs {
    pub candidate_archive: NamedDigest,
    pub runtime_manifest_sha256: String,
    pub runner_sha256: String,
    pub sentinel_sha256: String,
    /// Machine (`x86_64`, `aarch64`) → sha256 of the witness binary for it in this image.
    /// Empty while no witness is built.
    pub witness_sha256: BTreeMap<String, String>,
    /// `"sha256:<hex>"` = sha256 of `inputs/image-config.json`.
    pub image_id: String,
    pub image_config_sha256: String,
    /// `"sha256:<hex>"` of each uncompressed layer tar, in order.
    pub layer_diff_ids: Vec<String>,
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

/// `inputs/image-layer.json`: every entry of the layer tar. The verifier regenerates the layer
/// from the recipe, the blobs and the matrix and requires exactly this listing and diff_id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LayerManifest {
    /// `"sha256:<hex>"` of the uncompressed layer tar.
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
    /// Containers and volumes labelled with this run id still present after the final sweep;
    /// when the engine could not list them, the run's own container and volume that it never
    /// saw removed.
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
