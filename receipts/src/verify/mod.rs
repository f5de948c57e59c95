//! Independent verification of a receipt bundle. Nothing recorded is trusted without
//! recomputation: digests are recomputed from bytes, verdicts re-derived from raw captures with
//! `judge`, the boundary re-checked against the policy from the inspection and the inner
//! observations, the image ID recomputed from its config, and the signature checked over the
//! exact `receipt.json`. Each family of checks lives in its own module and yields named checks
//! (`Check`); the report is the ordered list. This module never writes, never runs anything,
//! and never needs Docker: an auditor runs it on a copied directory.
//!
//! Outcomes: `Ok(report)` with `report.verified` true (every check passed) or false (rejected:
//! at least one check failed), or `Err(BundleError)` when the bundle could not be read at all.

mod boundary;
pub mod bundle;
mod candidate;
mod cases;
mod controls;
mod execution;
mod files;
mod image;
pub mod report;
mod signature;

pub use bundle::{Bundle, BundleError, BundleErrorKind};
pub use execution::{cleanup_failures, completion_failures, lifecycle_failures};

use crate::digest::sha256_hex;
use crate::policy::BoundaryPolicy;
use crate::receipt::Receipt;
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

/// The full verification outcome of a readable bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Report {
    pub bundle: String,
    /// True only when every check passed.
    pub verified: bool,
    pub checks: Vec<Check>,
    /// Things the reader should know that are not failures (e.g. a signature not checked).
    pub notes: Vec<String>,
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

/// Collects checks in order.
#[derive(Debug, Default)]
pub(crate) struct Checks {
    list: Vec<Check>,
    notes: Vec<String>,
}

impl Checks {
    pub(crate) fn record(&mut self, id: &str, title: &str, mut failures: Vec<String>) {
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
            id: id.to_string(),
            title: title.to_string(),
            ok: failures.is_empty(),
            reason,
            failures,
        });
    }

    pub(crate) fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    fn all_ok(&self) -> bool {
        self.list.iter().all(|c| c.ok)
    }
}

/// Everything the check families share: the bundle, the parsed receipt, the policy judged
/// against, and each file's digest (computed once).
pub(crate) struct Context<'a> {
    pub bundle: &'a Bundle,
    pub receipt: &'a Receipt,
    pub policy: &'a BoundaryPolicy,
    pub digests: BTreeMap<&'a str, String>,
}

impl<'a> Context<'a> {
    /// The bytes of a bundle file, or a failure line naming it.
    pub fn bytes(&self, path: &str) -> Result<&'a [u8], String> {
        self.bundle
            .files
            .get(path)
            .map(Vec::as_slice)
            .ok_or_else(|| format!("{path} is missing"))
    }

    /// A bundle file parsed strictly as `T`, or a failure line naming it.
    pub fn parse<T: DeserializeOwned>(&self, path: &str) -> Result<T, String> {
        let bytes = self.bytes(path)?;
        serde_json::from_slice(bytes).map_err(|e| format!("{path} does not parse: {e}"))
    }

    /// The recomputed sha256 of a bundle file, if present.
    pub fn digest(&self, path: &str) -> Option<&str> {
        self.digests.get(path).map(String::as_str)
    }
}

/// Read and verify the bundle at `path`.
pub fn verify_dir(path: &Path, options: &VerifyOptions) -> Result<Report, BundleError> {
    let bundle = Bundle::read(path)?;
    verify_loaded(&bundle, options)
}

/// Verify a bundle already read into memory.
pub fn verify_loaded(bundle: &Bundle, options: &VerifyOptions) -> Result<Report, BundleError> {
    let receipt: Receipt = serde_json::from_slice(&bundle.receipt_bytes)
        .map_err(|e| BundleError::receipt(&bundle.root, e))?;
    let reference;
    let policy = match &options.policy {
        Some(p) => p,
        None => {
            reference = reference_policy();
            &reference
        }
    };
    let digests = bundle
        .files
        .iter()
        .map(|(path, bytes)| (path.as_str(), sha256_hex(bytes)))
        .collect();
    let ctx = Context {
        bundle,
        receipt: &receipt,
        policy,
        digests,
    };
    let mut checks = Checks::default();
    files::check(&ctx, &mut checks);
    execution::check_header(&ctx, &mut checks);
    cases::check(&ctx, &mut checks);
    boundary::check(&ctx, &mut checks);
    image::check(&ctx, &mut checks);
    candidate::check(&ctx, &mut checks);
    controls::check(&ctx, &mut checks);
    execution::check(&ctx, &mut checks);
    if !options.ignore_envelope {
        let verified_so_far = checks.all_ok();
        signature::check(&ctx, options, verified_so_far, &mut checks);
    }
    Ok(Report {
        bundle: bundle.root.display().to_string(),
        verified: checks.all_ok(),
        checks: checks.list,
        notes: checks.notes,
    })
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
