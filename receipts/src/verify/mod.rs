//! Independent verification of a receipt bundle (schema 2, every platform of a run). Nothing
//! recorded is trusted without recomputation: digests are recomputed from bytes, every image
//! layer and config is regenerated from the bundled recipe, blobs and matrix and its ID
//! recomputed, verdicts re-derived from raw captures with `judge`, the boundary re-checked
//! against the policy from the inspection and the inner observations, and the signature checked
//! over the exact `receipt.json`. Bundle-wide checks run once (`files`, `blobs`, `platforms`,
//! the matrix and policy); every per-platform family runs once per platform that ran, its check
//! ids prefixed with the platform's directory name (`linux-arm64/cases.verdicts`). Each family
//! lives in its own module and yields named checks (`Check`); the report is the ordered list,
//! headed by what was verified (`Subject`). This module never writes, never runs anything, and
//! never needs Docker: an auditor runs it on a copied directory.
//!
//! Outcomes: `Ok(report)` with `report.verified` true (every check passed) or false (rejected:
//! at least one check failed), or `Err(BundleError)` when the bundle could not be read at all.

mod blobs;
mod boundary;
pub mod bounds;
pub mod bundle;
mod candidate;
mod cases;
mod controls;
mod execution;
mod files;
mod image;
mod junit;
mod native;
mod platforms;
pub mod report;
mod signature;
mod witness;

pub use bundle::{Bundle, BundleError, BundleErrorKind};
pub use execution::{cleanup_failures, completion_failures, lifecycle_failures};
pub use report::SIGNATURE_NOT_CHECKED;

use crate::digest::sha256_hex;
use crate::evidence::CASES_DIR;
use crate::matrix::Matrix;
use crate::platform::Platform;
use crate::policy::BoundaryPolicy;
use crate::receipt::{PlatformRun, Receipt, EVIDENCE_DIR, MATRIX_FILE, SCHEMA_VERSION};
use crate::strict_json;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The project's boundary policy (`images/boundary-policy.json`), built in: a bundle whose
/// policy differs from it is rejected, so a weakened policy cannot vouch for a weak container.
pub const REFERENCE_POLICY_JSON: &str = include_str!("../../../images/boundary-policy.json");

/// The most failure lines a check keeps; the rest are counted.
const MAX_FAILURES_PER_CHECK: usize = 50;

/// How to verify.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// SPKI PEM of the trusted public key. When set, a valid envelope is required.
    pub public_key_pem: Option<String>,
    /// Use this policy instead of the built-in reference.
    pub policy: Option<BoundaryPolicy>,
    /// Skip the envelope entirely (used when signing: the old envelope is about to be replaced).
    pub ignore_envelope: bool,
    /// `--expect-candidate SHA256` (repeatable): each must be the candidate archive digest of
    /// a platform that ran (`expect.candidate`).
    pub expect_candidates: Vec<String>,
    /// `--expect-image ID` (repeatable): each must be the image ID of a platform that ran
    /// (`expect.image`).
    pub expect_images: Vec<String>,
}

/// One named check and, when it failed, every reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Check {
    /// Stable id, `family.name` (e.g. `cases.verdicts`).
    pub id: String,
    /// What the check establishes, one line.
    pub title: String,
    pub ok: bool,
    /// The failures joined for a one-line display; `None` when ok.
    pub reason: Option<String>,
    /// Every failure (capped at 50, then a count).
    pub failures: Vec<String>,
}

/// What a report is about, as the receipt names it (every value is checked by some check of
/// the report; reading this alone proves nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Subject {
    pub run_id: String,
    pub matrix_sha256: String,
    pub platforms: Vec<SubjectPlatform>,
    /// Platforms of the default set that did not run, with the reason.
    pub not_covered: Vec<String>,
    /// The key id of the signer, when a key was given and the signature checked with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer_key_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SubjectPlatform {
    pub platform: String,
    pub emulated: bool,
    pub candidate_archive: String,
    pub candidate_sha256: String,
    pub image_id: String,
}

impl Subject {
    fn of(receipt: &Receipt) -> Subject {
        Subject {
            run_id: receipt.run_id.clone(),
            matrix_sha256: receipt.matrix.sha256.clone(),
            platforms: receipt
                .platforms
                .iter()
                .map(|p| SubjectPlatform {
                    platform: p.platform.name().to_string(),
                    emulated: p.emulated,
                    candidate_archive: p.inputs.candidate_archive.name.clone(),
                    candidate_sha256: p.inputs.candidate_archive.sha256.clone(),
                    image_id: p.inputs.image_id.clone(),
                })
                .collect(),
            not_covered: receipt
                .not_covered
                .iter()
                .map(|n| format!("{}: {}", n.platform, n.reason))
                .collect(),
            signer_key_id: None,
        }
    }
}

/// The full verification outcome of a readable bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Report {
    pub bundle: String,
    /// What was verified: candidates, images, matrix, platforms, run id, signer.
    pub subject: Subject,
    /// True only when every check passed.
    pub verified: bool,
    pub checks: Vec<Check>,
    /// Checks that were not run and why (the envelope's signature without `--key`): never a
    /// pass, never shown with a ✓.
    #[serde(default)]
    pub not_checked: Vec<NotChecked>,
    /// Things the reader should know that are not failures (e.g. a signature not checked).
    pub notes: Vec<String>,
}

/// A check that could not be run with what was given, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NotChecked {
    pub id: String,
    pub title: String,
    pub reason: String,
}

impl Report {
    /// Ids of the failed checks, in order.
    pub fn failed_ids(&self) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.id.as_str())
            .collect()
    }
}

/// Collects checks in order; while a platform is being checked, ids and titles carry it.
#[derive(Debug, Default)]
pub(crate) struct Checks {
    list: Vec<Check>,
    not_checked: Vec<NotChecked>,
    notes: Vec<String>,
    scope: Option<Platform>,
    /// While a further container of a sharded platform is checked: its index (ids then read
    /// `linux-arm64/shards/1/boundary.applied`).
    shard: Option<usize>,
    signer_key_id: Option<String>,
}

impl Checks {
    pub(crate) fn record(&mut self, id: &str, title: &str, mut failures: Vec<String>) {
        let (id, title) = match (self.scope, self.shard) {
            (Some(p), Some(i)) => (
                format!("{}/{}/{i}/{id}", p.dir_name(), crate::receipt::SHARDS_DIR),
                format!("{title} ({}, shard {i})", p.name()),
            ),
            (Some(p), None) => (
                format!("{}/{id}", p.dir_name()),
                format!("{title} ({})", p.name()),
            ),
            (None, _) => (id.to_string(), title.to_string()),
        };
        if failures.len() > MAX_FAILURES_PER_CHECK {
            let more = failures.len() - MAX_FAILURES_PER_CHECK;
            failures.truncate(MAX_FAILURES_PER_CHECK);
            failures.push(format!("… and {more} more"));
        }
        let reason = if failures.is_empty() {
            None
        } else {
            let shown: Vec<&str> = failures.iter().take(5).map(String::as_str).collect();
            let mut line = shown.join("; ");
            if failures.len() > 5 {
                line.push_str(&format!("; (+{} more)", failures.len() - 5));
            }
            Some(line)
        };
        self.list.push(Check {
            id,
            title,
            ok: failures.is_empty(),
            reason,
            failures,
        });
    }

    /// Appends `other`'s checks, skipped checks and notes (a platform's, checked apart).
    fn absorb(&mut self, other: Checks) {
        self.list.extend(other.list);
        self.not_checked.extend(other.not_checked);
        self.notes.extend(other.notes);
    }

    /// A check that was not run (and so neither passed nor failed), with the reason.
    pub(crate) fn not_checked(&mut self, id: &str, title: &str, reason: impl Into<String>) {
        self.not_checked.push(NotChecked {
            id: id.to_string(),
            title: title.to_string(),
            reason: reason.into(),
        });
    }

    /// The report of these checks.
    fn into_report(self, bundle: &Bundle, subject: Subject) -> Report {
        Report {
            bundle: bundle.root.display().to_string(),
            subject,
            verified: self.all_ok(),
            checks: self.list,
            not_checked: self.not_checked,
            notes: self.notes,
        }
    }

    #[allow(dead_code)] // for families with something to say that is neither pass nor fail
    pub(crate) fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// The key id the signature was checked with (for the report's subject).
    pub(crate) fn signed_by(&mut self, keyid: String) {
        self.signer_key_id = Some(keyid);
    }

    fn all_ok(&self) -> bool {
        self.list.iter().all(|c| c.ok)
    }
}

/// Everything the check families share: the bundle, the parsed receipt, the policy judged
/// against, each file's digest (computed once) and the matrix (parsed once, within bounds).
pub(crate) struct Context<'a> {
    pub bundle: &'a Bundle,
    pub receipt: &'a Receipt,
    pub policy: &'a BoundaryPolicy,
    pub digests: BTreeMap<&'a str, String>,
    pub matrix: Result<Matrix, String>,
    /// The native section and matrix, when the bundle holds `native.json`.
    pub native: Option<native::NativeInputs>,
    /// Candidate archives unpacked so far, by (name, sha256): `image` and `candidate` both
    /// need the files, and inflating twice was a fifth of the verification time.
    archives: std::sync::Mutex<BTreeMap<(String, String), ArchiveRead>>,
}

/// An unpacked candidate archive, or the failure line of unpacking it.
pub(crate) type ArchiveRead = std::sync::Arc<Result<Vec<crate::archive::ArchiveFile>, String>>;

impl<'a> Context<'a> {
    /// The bytes of a bundle file, or a failure line naming it.
    pub fn bytes(&self, path: &str) -> Result<&'a [u8], String> {
        self.bundle
            .files
            .get(path)
            .map(Vec::as_slice)
            .ok_or_else(|| format!("{path} is missing"))
    }

    /// A bundle file parsed strictly as `T` (`strict_json`: no duplicate key at any depth, one
    /// value, the type's own unknown-field rules), or a failure line naming it.
    pub fn parse<T: DeserializeOwned>(&self, path: &str) -> Result<T, String> {
        let bytes = self.bytes(path)?;
        strict_json::from_slice(bytes).map_err(|e| format!("{path} does not parse: {e}"))
    }

    /// The unpacked archives (a poisoned lock only means another platform's checks panicked).
    fn archives_read(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), ArchiveRead>> {
        self.archives.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The candidate archive `name` with bytes `bytes` (digest `sha256`), unpacked once.
    pub fn archive(&self, name: &str, sha256: &str, bytes: &[u8]) -> ArchiveRead {
        let key = (name.to_string(), sha256.to_string());
        if let Some(read) = self.archives_read().get(&key) {
            return read.clone();
        }
        let read = std::sync::Arc::new(
            crate::archive::read_archive(name, bytes).map_err(|e| format!("failed to {e}")),
        );
        self.archives_read().insert(key, read.clone());
        read
    }

    /// The recomputed sha256 of a bundle file, if present.
    pub fn digest(&self, path: &str) -> Option<&str> {
        self.digests.get(path).map(String::as_str)
    }
}

/// One platform's view of the bundle: the same accessors, with paths relative to the
/// platform's directory (`platforms/<os>-<arch>/`). When the platform ran in several
/// containers (`PlatformRun::shards`), `outer/` and `evidence/` paths are those of the
/// container `shard` names, except a case's files (`evidence/cases/<id>/…`), which are always
/// where its shard ran it — position in the matrix mod the shard count, recomputed here.
pub(crate) struct PlatformContext<'a> {
    pub ctx: &'a Context<'a>,
    pub run: &'a PlatformRun,
    /// The container whose records plain paths name (0: the platform's own directory).
    pub shard: usize,
    /// Case id → the shard that ran it (empty when the matrix is unusable).
    pub case_shards: &'a BTreeMap<String, usize>,
}

impl<'a> PlatformContext<'a> {
    /// The bundle path of a platform-relative path.
    pub fn path(&self, rel: &str) -> String {
        let shard = rel
            .strip_prefix(EVIDENCE_DIR)
            .and_then(|r| r.strip_prefix('/'))
            .and_then(|r| r.strip_prefix(CASES_DIR))
            .and_then(|r| r.strip_prefix('/'))
            .and_then(|r| r.split_once('/'))
            .and_then(|(id, _)| self.case_shards.get(id).copied())
            .unwrap_or(self.shard);
        let container_file = rel.starts_with("outer/") || rel.starts_with("evidence/");
        if shard == 0 || !container_file {
            self.run.path(rel)
        } else {
            format!("{}/{rel}", self.run.shard_dir(shard))
        }
    }

    /// The receipt's records of this context's container: shard 0's are the platform's own.
    fn shard_run(&self) -> Option<&'a crate::receipt::ShardRun> {
        self.shard
            .checked_sub(1)
            .and_then(|i| self.run.shards.get(i))
    }

    pub fn boundary(&self) -> &'a crate::receipt::BoundaryRecord {
        self.shard_run().map_or(&self.run.boundary, |s| &s.boundary)
    }

    pub fn controls(&self) -> &'a crate::evidence::Controls {
        self.shard_run().map_or(&self.run.controls, |s| &s.controls)
    }

    pub fn execution(&self) -> &'a crate::receipt::Execution {
        self.shard_run()
            .map_or(&self.run.execution, |s| &s.execution)
    }

    pub fn cleanup(&self) -> &'a crate::receipt::Cleanup {
        self.shard_run().map_or(&self.run.cleanup, |s| &s.cleanup)
    }

    pub fn bytes(&self, rel: &str) -> Result<&'a [u8], String> {
        self.ctx.bytes(&self.path(rel))
    }

    pub fn parse<T: DeserializeOwned>(&self, rel: &str) -> Result<T, String> {
        self.ctx.parse(&self.path(rel))
    }

    pub fn digest(&self, rel: &str) -> Option<&'a str> {
        self.ctx
            .digests
            .get(self.path(rel).as_str())
            .map(String::as_str)
    }

    /// Whether the bundle holds this platform-relative file.
    pub fn has(&self, rel: &str) -> bool {
        self.ctx.bundle.files.contains_key(&self.path(rel))
    }
}

/// Read and verify the bundle at `path`.
pub fn verify_dir(path: &Path, options: &VerifyOptions) -> Result<Report, BundleError> {
    let bundle = Bundle::read(path)?;
    verify_loaded(&bundle, options)
}

/// Verify a bundle already read into memory.
pub fn verify_loaded(bundle: &Bundle, options: &VerifyOptions) -> Result<Report, BundleError> {
    if let Some(report) = other_schema(bundle)? {
        return Ok(report);
    }
    let receipt: Receipt = strict_json::from_slice(&bundle.receipt_bytes)
        .map_err(|e| BundleError::receipt(&bundle.root, e))?;
    // Counts first: a receipt or matrix beyond the bounds is rejected by `bundle.bounds` before
    // any digest is computed or any case judged.
    let matrix = bundle
        .files
        .get(MATRIX_FILE)
        .ok_or_else(|| format!("{MATRIX_FILE} is missing"))
        .and_then(|bytes| {
            Matrix::from_strict_json(bytes)
                .map_err(|e| format!("{MATRIX_FILE} does not parse: {e}"))
        });
    let native = native::read(&bundle.files);
    // A native-only bundle has no candidate matrix: its `matrix` names the native one.
    let matrix = match (&native, matrix) {
        (Some(_), Err(_)) if receipt.platforms.is_empty() => Err(
            "a native-only bundle has no candidate matrix (its matrix is inputs/native-matrix.json)"
                .to_string(),
        ),
        (_, m) => m,
    };
    let mut bound_failures = bounds::failures(&receipt, matrix.as_ref().ok());
    if let Some(n) = &native {
        bound_failures.extend(native::bound_failures(n));
    }
    if !bound_failures.is_empty() {
        let mut checks = Checks::default();
        checks.record("bundle.bounds", bounds::TITLE, bound_failures);
        return Ok(checks.into_report(bundle, Subject::of(&receipt)));
    }
    let reference;
    let policy = match &options.policy {
        Some(p) => p,
        None => {
            reference = reference_policy();
            &reference
        }
    };
    let digests = parallel_digests(&bundle.files);
    let ctx = Context {
        bundle,
        receipt: &receipt,
        policy,
        digests,
        matrix,
        native,
        archives: Default::default(),
    };
    let mut checks = Checks::default();
    checks.record("bundle.bounds", bounds::TITLE, Vec::new());
    execution::check_header(&ctx, &mut checks);
    files::check(&ctx, &mut checks);
    platforms::check(&ctx, options, &mut checks);
    blobs::check(&ctx, &mut checks);
    cases::check_matrix(&ctx, &mut checks);
    boundary::check_policy(&ctx, &mut checks);
    native::check(&ctx, &mut checks);
    // Every platform's checks side by side (one thread each), reported in receipt order.
    let per_platform: Vec<Checks> = std::thread::scope(|scope| {
        let workers: Vec<_> = receipt
            .platforms
            .iter()
            .map(|run| {
                let ctx = &ctx;
                scope.spawn(move || check_platform(ctx, run))
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("the platform checks never panic"))
            .collect()
    });
    for platform_checks in per_platform {
        checks.absorb(platform_checks);
    }
    // After every platform's checks: a platform's whole-run test case passes when they did.
    junit::check(&ctx, &mut checks);
    if !options.ignore_envelope {
        let verified_so_far = checks.all_ok();
        signature::check(&ctx, options, verified_so_far, &mut checks);
    }
    crate::provenance::check(&ctx, options, &mut checks);
    let mut subject = Subject::of(&receipt);
    subject.signer_key_id = checks.signer_key_id.take();
    Ok(checks.into_report(bundle, subject))
}

/// One platform's checks, every container of it, ids and titles scoped to the platform.
fn check_platform(ctx: &Context, run: &PlatformRun) -> Checks {
    let scoped = || Checks {
        scope: Some(run.platform),
        ..Checks::default()
    };
    let case_shards = case_shards(ctx.matrix.as_ref().ok(), run.shard_count());
    let p = PlatformContext {
        ctx,
        run,
        shard: 0,
        case_shards: &case_shards,
    };
    // The cases (the judge replayed over every capture, most of a platform's time) on a thread
    // of their own beside everything else; reported first, as if checked first.
    let (mut checks, rest) = std::thread::scope(|scope| {
        let cases = scope.spawn(|| {
            let mut checks = scoped();
            cases::check(&p, &mut checks);
            checks
        });
        let rest = check_platform_apart_from_cases(&p, scoped());
        (cases.join().expect("the case checks never panic"), rest)
    });
    checks.absorb(rest);
    checks
}

/// `check_platform`'s checks other than the cases', in their order.
fn check_platform_apart_from_cases(p: &PlatformContext, mut checks: Checks) -> Checks {
    boundary::check(p, &mut checks);
    image::check(p, &mut checks);
    candidate::check(p, &mut checks);
    controls::check(p, &mut checks);
    witness::check(p, &mut checks);
    execution::check(p, &mut checks);
    // Every further container of the platform: the same image, its own boundary, controls,
    // lifecycle and cleanup (its cases were judged above, with every other case).
    for index in 1..p.run.shard_count() {
        let s = PlatformContext { shard: index, ..*p };
        checks.shard = Some(index);
        boundary::check(&s, &mut checks);
        image::check_inspection(&s, &mut checks);
        controls::check(&s, &mut checks);
        witness::check_controls(&s, &mut checks);
        execution::check(&s, &mut checks);
    }
    checks
}

/// The sha256 of every file of the bundle, hashed on two threads (every other file each, so
/// neighbouring large blobs land on both).
fn parallel_digests(files: &BTreeMap<String, Vec<u8>>) -> BTreeMap<&str, String> {
    let mut even = Vec::new();
    let mut odd = Vec::new();
    for (i, (path, bytes)) in files.iter().enumerate() {
        let part = if i % 2 == 0 { &mut even } else { &mut odd };
        part.push((path.as_str(), bytes.as_slice()));
    }
    std::thread::scope(|scope| {
        let other = scope.spawn(|| hash_all(&odd));
        let mut digests: BTreeMap<&str, String> = hash_all(&even).into_iter().collect();
        digests.extend(other.join().expect("hashing never panics"));
        digests
    })
}

fn hash_all<'a>(files: &[(&'a str, &[u8])]) -> Vec<(&'a str, String)> {
    files
        .iter()
        .map(|(path, bytes)| (*path, sha256_hex(bytes)))
        .collect()
}

/// Which shard ran each case of `matrix` among `count` (`evidence::Shard::of_position`).
fn case_shards(matrix: Option<&Matrix>, count: usize) -> BTreeMap<String, usize> {
    matrix
        .map(|m| {
            m.cases
                .iter()
                .enumerate()
                .map(|(position, c)| (c.id.clone(), position % count.max(1)))
                .collect()
        })
        .unwrap_or_default()
}

/// A receipt of another schema version is rejected by one named check (`receipt.schema`) and
/// read no further: its fields mean other things. Schema 1 predates the kernel witness and the
/// bound inputs, so nothing it says can be checked to today's standard.
fn other_schema(bundle: &Bundle) -> Result<Option<Report>, BundleError> {
    #[derive(Deserialize)]
    struct Version {
        #[serde(rename = "schemaVersion")]
        schema_version: Option<serde_json::Value>,
        #[serde(rename = "runId")]
        run_id: Option<serde_json::Value>,
    }
    let version: Version = strict_json::from_slice(&bundle.receipt_bytes)
        .map_err(|e| BundleError::receipt(&bundle.root, e))?;
    let found = version.schema_version.as_ref().and_then(|v| v.as_u64());
    if found == Some(u64::from(SCHEMA_VERSION)) {
        return Ok(None);
    }
    let mut checks = Checks::default();
    checks.record(
        "receipt.schema",
        "receipt.json is a schema version 2 receipt",
        vec![match found {
            Some(1) => "schemaVersion 1: this bundle predates the kernel witness and the bound inputs (the layer's bytes), so it cannot be verified to schema 2; re-run it with this scopebox".to_string(),
            Some(v) => format!("schemaVersion {v}, expected {SCHEMA_VERSION}"),
            None => "no numeric schemaVersion".to_string(),
        }],
    );
    let subject = Subject {
        run_id: version
            .run_id
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        ..Subject::default()
    };
    Ok(Some(checks.into_report(bundle, subject)))
}

/// The built-in reference policy.
pub fn reference_policy() -> BoundaryPolicy {
    // The file is part of this build and covered by a unit test; a parse failure is a build bug.
    BoundaryPolicy::from_json(REFERENCE_POLICY_JSON.as_bytes())
        .expect("images/boundary-policy.json is a valid policy")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_reference_policy_parses() {
        let policy = super::reference_policy();
        assert_eq!(policy.network_mode, "none");
        assert_eq!(policy.evidence_volume, "/evidence");
    }
}
