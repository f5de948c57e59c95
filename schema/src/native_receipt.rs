//! The native section of a receipt bundle (`native.json`, contract addition "Native
//! reference"; `docs/receipt-v2.md`): the pinned client of each platform the native reference
//! ran on, and the differential judgement (`native_observe::NativeJudgement`) derived from that
//! platform's raw captures, which the bundle carries byte for byte. One builder
//! (`platform_run`, `section`) for the orchestrator that writes the section and the verifier
//! that rebuilds it, so both reach it by one code path. It describes and builds; it never reads
//! a file.
//!
//! The section is its own file, listed in `receipt.json`'s `files` like every other (so bound by
//! its digest and covered by the signature over `receipt.json`), not a field of `Receipt`: the
//! judgement of 153 runs with every raw file's digest is most of a megabyte, which the index
//! and the signed statement need not carry, and `Receipt` stays the type its writers know.
//!
//! Bundle layout (additions to receipt v2):
//! ```text
//! native.json                                NativeSection
//! inputs/native-matrix.json                  the native matrix exactly as run
//! inputs/native.lock.json                    the native lock exactly as used
//! <dir>/evidence/                            the native container's /evidence tree, byte for byte:
//!   boundary.json, native/index.json, native/<scenario>/<mode>/...   (`native_capture`)
//! <dir>/inputs/image-config.json, image-layer.json, <dir>/outer/*.json   as for a candidate platform
//! ```
//! A *native bundle* holds `native.json`. A *native-only* bundle (written by `scopebox native`)
//! has no candidate platform run: `platforms`, `notCovered` and `blobs` empty, `summary` all
//! zeros, no `inputs/matrix.json`, `matrix` naming the native matrix
//! (`inputs/native-matrix.json`: its sha256, its name, its run count as `caseCount`),
//! `inputs/image-recipe.json` the recipe of the native image (`native_only_receipt` builds it);
//! its native run's `<dir>` is the platform's own directory, `platforms/<os>-<arch>`. Beside
//! candidate platforms (a combined bundle) `<dir>` is `native/<client>-<os>-<arch>`.

use serde::{Deserialize, Serialize};

use crate::digest::sha256_hex;
use crate::native::NativeMatrix;
use crate::native_observe::{LockView, NativeJudgement};
use crate::platform::Platform;
use crate::strict_json;

/// The section, at the bundle's root.
pub const NATIVE_SECTION_FILE: &str = "native.json";
pub const NATIVE_MATRIX_FILE: &str = "inputs/native-matrix.json";
pub const NATIVE_LOCK_FILE: &str = "inputs/native.lock.json";
/// Where the per-platform native directories live.
pub const NATIVE_RUNS_DIR: &str = "native";
/// Below a native directory: the container's `/evidence` tree.
pub const NATIVE_EVIDENCE_DIR: &str = "evidence";
/// Most native platform runs a section may carry (two platforms per client, two clients).
pub const MAX_NATIVE_PLATFORMS: usize = 4;

/// `native/<client>-<os>-<arch>`: a native run's directory beside candidate platforms.
pub fn native_dir(client: &str, platform: Platform) -> String {
    format!("{NATIVE_RUNS_DIR}/{client}-{}", platform.dir_name())
}

/// Where a native run's files live: its platform's own directory (`platforms/<os>-<arch>`) in a
/// native-only bundle, `native_dir` beside candidate platforms.
pub fn run_dir_of(client: &str, platform: Platform, native_only: bool) -> String {
    if native_only {
        crate::receipt::platform_dir(platform)
    } else {
        native_dir(client, platform)
    }
}

/// `native.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NativeSection {
    /// `inputs/native-matrix.json`.
    pub matrix: NativeMatrixRef,
    /// sha256 of `inputs/native.lock.json`.
    pub lock_sha256: String,
    /// Every platform the native reference ran on, in `Platform::ALL` order per client.
    pub platforms: Vec<NativePlatformRun>,
    pub summary: NativeSummary,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NativeMatrixRef {
    pub sha256: String,
    pub name: String,
    /// Scenarios × modes.
    pub run_count: usize,
}

/// One platform's native reference run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NativePlatformRun {
    pub client: String,
    pub platform: Platform,
    /// `native/<client>-<os>-<arch>`: its evidence tree is below `<dir>/evidence/`.
    pub dir: String,
    /// The engine ran it under emulation.
    pub emulated: bool,
    pub pinned: PinnedClient,
    /// `native_observe::judge_evidence` of the platform's evidence tree, the matrix and the lock.
    pub judgement: NativeJudgement,
    /// The engine that ran the container, for a native-only bundle (whose run directory holds
    /// the container's inspection and the runner's boundary observation): the verifier reads the
    /// inspection in that engine's dialect (`policy::check_applied`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<crate::engine::EngineName>,
    /// How many containers a native-only run spread its scenarios over (`--shards`; scenario i
    /// in container i mod N). Container 0's inspection and boundary observation are in the run
    /// directory itself; container i ≥ 1's in `<dir>/shards/<i>/` (`shard_dir`), each checked
    /// against the policy like the first. Absent: one container.
    #[serde(default = "one_container", skip_serializing_if = "is_one_container")]
    pub containers: usize,
}

fn one_container() -> usize {
    1
}

fn is_one_container(n: &usize) -> bool {
    *n == 1
}

impl NativePlatformRun {
    /// The directory of container `index`'s records (0: the run directory itself).
    pub fn shard_dir(&self, index: usize) -> String {
        if index == 0 {
            self.dir.clone()
        } else {
            crate::receipt::shard_dir(&self.dir, index)
        }
    }
}

/// The lock's entry for the client on the platform, as pinned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PinnedClient {
    pub client: String,
    /// The client's own version (`2.1.327`).
    pub version: String,
    pub package: PinnedPackage,
    pub wheel: PinnedFile,
    pub binary_sha256: String,
    pub binary_size: u64,
    /// Where the binary is in the image.
    pub image_path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PinnedPackage {
    pub registry: String,
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PinnedFile {
    pub file: String,
    pub sha256: String,
    pub size: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NativeSummary {
    pub platforms: usize,
    pub platforms_passed: usize,
    pub runs: usize,
    pub runs_passed: usize,
}

/// The lock's pin of `client` on `platform`.
pub fn pinned_client(
    lock_bytes: &[u8],
    client: &str,
    platform: Platform,
) -> Result<PinnedClient, String> {
    let lock = LockView::parse(lock_bytes)?;
    let (c, p) = lock
        .entry(client, platform.name())
        .ok_or_else(|| format!("the native lock has no {client} entry for {platform}"))?;
    Ok(PinnedClient {
        client: c.client.clone(),
        version: c.version.clone(),
        package: PinnedPackage {
            registry: c.package.registry.clone(),
            name: c.package.name.clone(),
            version: c.package.version.clone(),
        },
        wheel: PinnedFile {
            file: p.wheel.file.clone(),
            sha256: p.wheel.sha256.clone(),
            size: p.wheel.size,
        },
        binary_sha256: p.binary.sha256.clone(),
        binary_size: p.binary.size,
        image_path: c.image_path.clone(),
    })
}

/// One platform's entry of the section: the lock's pin of the judgement's client on
/// `platform`, and the judgement as `judge_evidence` returned it; `native_only` places it
/// (`run_dir_of`).
pub fn platform_run(
    lock_bytes: &[u8],
    platform: Platform,
    emulated: bool,
    judgement: NativeJudgement,
    native_only: bool,
) -> Result<NativePlatformRun, String> {
    let pinned = pinned_client(lock_bytes, &judgement.client, platform)?;
    Ok(NativePlatformRun {
        client: judgement.client.clone(),
        platform,
        dir: run_dir_of(&judgement.client, platform, native_only),
        emulated,
        pinned,
        judgement,
        engine: None,
        containers: 1,
    })
}

/// The whole section over the platforms' runs (in the order given: `Platform::ALL` order).
pub fn section(
    matrix_bytes: &[u8],
    lock_bytes: &[u8],
    platforms: Vec<NativePlatformRun>,
) -> Result<NativeSection, String> {
    let matrix: NativeMatrix = strict_json::from_slice(matrix_bytes)
        .map_err(|e| format!("the native matrix does not parse: {e}"))?;
    let summary = summary_of(&platforms);
    Ok(NativeSection {
        matrix: NativeMatrixRef {
            sha256: sha256_hex(matrix_bytes),
            name: matrix.name.clone(),
            run_count: matrix.scenarios.iter().map(|s| s.runs.len()).sum(),
        },
        lock_sha256: sha256_hex(lock_bytes),
        platforms,
        summary,
    })
}

/// What a native-only receipt says beyond the native section.
#[derive(Debug, Clone)]
pub struct NativeOnlyRun {
    pub tool_version: String,
    pub run_id: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub finished_at: String,
    /// sha256 of `inputs/boundary-policy.json` and of `inputs/image-recipe.json` (the native
    /// image's recipe).
    pub boundary_policy_sha256: String,
    pub recipe_sha256: String,
    /// Every file of the bundle but `receipt.json` and the envelopes, `native.json` included.
    pub files: std::collections::BTreeMap<String, String>,
    pub provenance: Option<crate::receipt::Provenance>,
}

/// `receipt.json` of a native-only bundle: no candidate platform, `matrix` naming the native
/// matrix (`matrix_bytes`: sha256, name, scenarios × modes as `caseCount`).
pub fn native_only_receipt(
    run: NativeOnlyRun,
    matrix_bytes: &[u8],
) -> Result<crate::receipt::Receipt, String> {
    use crate::receipt::{MatrixRef, OverallSummary, Receipt, Tool, SCHEMA_VERSION};
    let matrix: NativeMatrix = strict_json::from_slice(matrix_bytes)
        .map_err(|e| format!("the native matrix does not parse: {e}"))?;
    Ok(Receipt {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "scopebox".to_string(),
            version: run.tool_version,
        },
        run_id: run.run_id,
        started_at: run.started_at,
        finished_at: run.finished_at,
        matrix: MatrixRef {
            sha256: sha256_hex(matrix_bytes),
            name: matrix.name.clone(),
            case_count: matrix.scenarios.iter().map(|s| s.runs.len()).sum(),
        },
        boundary_policy_sha256: run.boundary_policy_sha256,
        recipe_sha256: run.recipe_sha256,
        blobs: Vec::new(),
        platforms: Vec::new(),
        not_covered: Vec::new(),
        summary: OverallSummary {
            platforms: 0,
            platforms_passed: 0,
            cases: 0,
            cases_passed: 0,
        },
        files: run.files,
        provenance: run.provenance,
    })
}

/// A native-only bundle: a native section and no candidate platform run.
pub fn is_native_only(receipt: &crate::receipt::Receipt, has_section: bool) -> bool {
    has_section && receipt.platforms.is_empty()
}

/// The summary the platforms' judgements imply.
pub fn summary_of(platforms: &[NativePlatformRun]) -> NativeSummary {
    NativeSummary {
        platforms: platforms.len(),
        platforms_passed: platforms.iter().filter(|p| p.judgement.passed).count(),
        runs: platforms.iter().map(|p| p.judgement.totals.runs).sum(),
        runs_passed: platforms.iter().map(|p| p.judgement.totals.passed).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native_observe::judge_evidence;
    use crate::native_sample::sample;

    #[test]
    fn the_section_pins_the_lock_entry_and_carries_the_judgement() {
        let s = sample();
        let j = judge_evidence(&s.matrix, &s.lock, &s.reader());
        let run = platform_run(&s.lock, Platform::LinuxAmd64, false, j.clone(), false).unwrap();
        assert_eq!(run.dir, "native/claude-code-linux-amd64");
        let alone = platform_run(&s.lock, Platform::LinuxAmd64, false, j.clone(), true).unwrap();
        assert_eq!(alone.dir, "platforms/linux-amd64");
        assert_eq!(run.pinned.package.name, "claude-agent-sdk");
        assert_eq!(run.pinned.binary_sha256, j.client_sha256.clone().unwrap());
        let section = section(&s.matrix, &s.lock, vec![run]).unwrap();
        assert_eq!(section.summary.runs, 21);
        assert_eq!(section.summary.runs_passed, 21);
        assert_eq!(section.summary.platforms_passed, 1);
        assert_eq!(section.lock_sha256, sha256_hex(&s.lock));
        let json = serde_json::to_vec(&section).unwrap();
        let back: NativeSection = strict_json::from_slice(&json).unwrap();
        assert_eq!(back, section);
        assert!(pinned_client(&s.lock, "codex", Platform::LinuxAmd64).is_err());
        assert!(pinned_client(b"{}", "claude-code", Platform::LinuxAmd64).is_err());
    }
}
