//! The signed form of a receipt: an in-toto Statement v1 with a test-result v0.1 predicate,
//! wrapped in a DSSE envelope at `<bundle>/receipt.dsse.json`. The statement is a pure
//! function of the exact `receipt.json` bytes and the verification outcome, so the verifier
//! rebuilds it and compares; nothing in the envelope is trusted without that comparison.
//! This module never decides whether a bundle is good (that is `verify`); it only states it.
//!
//! Statement:
//! - `subject`: every platform's candidate archive (`name`, `sha256`) and `receipt.json`;
//! - `predicate.result`: `PASSED` when the bundle verified (every check but the signature's),
//!   else `FAILED`;
//! - `predicate.configuration`: the matrix, the boundary policy, the image recipe, and per
//!   platform its image (by ID), runner and sentinel, each with its sha256;
//! - `predicate.passedTests` / `failedTests`: `<platform dir>/<case id>` by recorded verdict;
//! - `predicate.warnedTests`: `<platform>: not covered: <reason>` for each platform of the
//!   default set that did not run, so a one-platform statement never reads as two.

use crate::digest::sha256_hex;
use crate::dsse::{self, DsseError, Envelope, IN_TOTO_PAYLOAD_TYPE};
use crate::receipt::{Receipt, ENVELOPE_FILE, MATRIX_FILE, POLICY_FILE, RECEIPT_FILE, RECIPE_FILE};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
pub const TEST_RESULT_PREDICATE: &str = "https://in-toto.io/attestation/test-result/v0.1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Statement {
    #[serde(rename = "_type")]
    pub statement_type: String,
    pub subject: Vec<ResourceDescriptor>,
    pub predicate_type: String,
    pub predicate: TestResult,
}

/// The subset of an in-toto ResourceDescriptor we write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResourceDescriptor {
    pub name: String,
    pub digest: BTreeMap<String, String>,
}

/// The test-result v0.1 predicate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TestResult {
    /// "PASSED" or "FAILED".
    pub result: String,
    pub configuration: Vec<ResourceDescriptor>,
    pub passed_tests: Vec<String>,
    pub warned_tests: Vec<String>,
    pub failed_tests: Vec<String>,
}

fn descriptor(name: &str, sha256: &str) -> ResourceDescriptor {
    ResourceDescriptor {
        name: name.to_string(),
        digest: BTreeMap::from([("sha256".to_string(), sha256.to_string())]),
    }
}

/// The statement for a receipt: `receipt_bytes` are the exact bytes of `receipt.json`,
/// `receipt` their parse, `verified` the outcome of every check except the signature's.
pub fn statement_for(receipt: &Receipt, receipt_bytes: &[u8], verified: bool) -> Statement {
    let mut subject: Vec<ResourceDescriptor> = receipt
        .platforms
        .iter()
        .map(|p| {
            descriptor(
                &p.inputs.candidate_archive.name,
                &p.inputs.candidate_archive.sha256,
            )
        })
        .collect();
    subject.push(descriptor(RECEIPT_FILE, &sha256_hex(receipt_bytes)));
    let mut configuration = vec![
        descriptor(MATRIX_FILE, &receipt.matrix.sha256),
        descriptor(POLICY_FILE, &receipt.boundary_policy_sha256),
        descriptor(RECIPE_FILE, &receipt.recipe_sha256),
    ];
    let mut passed = Vec::new();
    let mut failed = Vec::new();
    for p in &receipt.platforms {
        let i = &p.inputs;
        let image_hex = i.image_id.strip_prefix("sha256:").unwrap_or(&i.image_id);
        configuration.push(descriptor(&format!("image {}", p.platform), image_hex));
        configuration.push(descriptor(
            &format!("{} {}", crate::layout::RUNNER_BIN, p.platform),
            &i.runner_sha256,
        ));
        configuration.push(descriptor(
            &format!("{} {}", crate::layout::SENTINEL_BIN, p.platform),
            &i.sentinel_sha256,
        ));
        for c in &p.cases {
            let name = format!("{}/{}", p.platform.dir_name(), c.id);
            if c.verdict == "pass" {
                passed.push(name);
            } else {
                failed.push(name);
            }
        }
    }
    Statement {
        statement_type: STATEMENT_TYPE.to_string(),
        subject,
        predicate_type: TEST_RESULT_PREDICATE.to_string(),
        predicate: TestResult {
            result: if verified { "PASSED" } else { "FAILED" }.to_string(),
            configuration,
            passed_tests: passed,
            warned_tests: receipt
                .not_covered
                .iter()
                .map(|n| format!("{}: not covered: {}", n.platform, n.reason))
                .collect(),
            failed_tests: failed,
        },
    }
}

/// Why a bundle could not be signed. Messages fit "failed to …".
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error("read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("sign the bundle: {0}")]
    Key(#[source] DsseError),
    #[error("sign the bundle: it could not be read\nhint: run `scopebox-verify` on it to see why")]
    Unreadable(#[source] crate::verify::BundleError),
    #[error("write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Sign a bundle: verify it (without any existing envelope), state the outcome, sign the
/// statement with the PKCS#8 `private_pem` and write `<bundle>/receipt.dsse.json` (replacing
/// an existing one). A bundle that is rejected is still signed, with result `FAILED`: a failed
/// run is evidence too. One that cannot be read is refused.
pub fn sign_bundle(bundle_dir: &Path, private_pem: &str) -> Result<Envelope, SignError> {
    let key = dsse::signing_key_from_pem(private_pem).map_err(SignError::Key)?;
    let bundle = crate::verify::Bundle::read(bundle_dir).map_err(SignError::Unreadable)?;
    let outcome = crate::verify::verify_loaded(
        &bundle,
        &crate::verify::VerifyOptions {
            ignore_envelope: true,
            ..Default::default()
        },
    )
    .map_err(SignError::Unreadable)?;
    let receipt: Receipt = crate::strict_json::from_slice(&bundle.receipt_bytes)
        .map_err(|e| SignError::Unreadable(crate::verify::BundleError::receipt(bundle_dir, e)))?;
    let statement = statement_for(&receipt, &bundle.receipt_bytes, outcome.verified);
    let payload = serde_json::to_vec(&statement).unwrap_or_default();
    let envelope = dsse::sign(IN_TOTO_PAYLOAD_TYPE, &payload, &key);
    let path = bundle_dir.join(ENVELOPE_FILE);
    let mut bytes = serde_json::to_vec_pretty(&envelope).unwrap_or_default();
    bytes.push(b'\n');
    std::fs::write(&path, bytes).map_err(|source| SignError::Write { path, source })?;
    Ok(envelope)
}

/// Sign a bundle with the private key in the PEM file at `key_path`.
pub fn sign_bundle_with_key_file(
    bundle_dir: &Path,
    key_path: &Path,
) -> Result<Envelope, SignError> {
    let pem = std::fs::read_to_string(key_path).map_err(|source| SignError::Read {
        path: key_path.to_path_buf(),
        source,
    })?;
    sign_bundle(bundle_dir, &pem)
}
