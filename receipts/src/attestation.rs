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
//! - with the native reference (`native.json`): `configuration` also names the native matrix,
//!   the native lock and, per native run, the pinned client binary (`native client <client>
//!   <version> <platform>`, its sha256), and the tests list every native run as
//!   `native/<client>-<os>-<arch>/<scenario>/<mode>` by its recomputed verdict (the run's
//!   directory itself when the evidence fails as a whole), so a native-only statement is never
//!   an empty PASSED;
//! - `predicate.warnedTests`: `<platform>: not covered: <reason>` for each platform of the
//!   default set that did not run, so a one-platform statement never reads as two.

use crate::digest::sha256_hex;
use crate::dsse::{self, DsseError, Envelope, IN_TOTO_PAYLOAD_TYPE};
use crate::receipt::{Receipt, ENVELOPE_FILE, MATRIX_FILE, POLICY_FILE, RECEIPT_FILE, RECIPE_FILE};
use scopebox_schema::native_receipt::{
    native_dir, NativeSection, NATIVE_LOCK_FILE, NATIVE_MATRIX_FILE, NATIVE_SECTION_FILE,
};
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
/// `receipt` their parse, `native` the bundle's `native.json` when it has one, `verified` the
/// outcome of every check except the signature's.
pub fn statement_for(
    receipt: &Receipt,
    receipt_bytes: &[u8],
    native: Option<&NativeSection>,
    verified: bool,
) -> Statement {
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
    if let Some(section) = native {
        configuration.push(descriptor(NATIVE_MATRIX_FILE, &section.matrix.sha256));
        configuration.push(descriptor(NATIVE_LOCK_FILE, &section.lock_sha256));
        for run in &section.platforms {
            configuration.push(descriptor(
                &format!(
                    "native client {} {} {}",
                    run.client, run.pinned.version, run.platform
                ),
                &run.pinned.binary_sha256,
            ));
            if !run.judgement.failures.is_empty() {
                failed.push(native_dir(&run.client, run.platform));
            }
            for (name, pass) in native_tests(run) {
                if pass {
                    passed.push(name);
                } else {
                    failed.push(name);
                }
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

/// Why a bundle could not be signed. Messages fit "failed to …"; bundle-derived text in them
/// is already escaped for a terminal.
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
    #[error(
        "sign the bundle: it could not be read ({0})\nhint: run `scopebox-verify` on it to see why"
    )]
    Unreadable(String),
    #[error("sign the bundle: it does not verify ({0} failed); a bundle is signed only when every check passes\nhint: run `scopebox-verify` on it to see why")]
    Rejected(String),
    #[error("sign the bundle: {ENVELOPE_FILE} already exists\nhint: pass --force to replace it")]
    Exists,
    #[error("sign the bundle: {ENVELOPE_FILE} is a {0}, not a regular file; refusing to write through or over it\nhint: remove it, then sign again")]
    NotAFile(&'static str),
    #[error("sign the bundle: the statement would not agree with the receipt ({0})")]
    Disagrees(String),
    #[error("write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl SignError {
    /// Whether the input was refused (the key, the bundle, an envelope in the way), rather than
    /// a step failing on good input.
    pub fn is_refusal(&self) -> bool {
        match self {
            SignError::Read { .. }
            | SignError::Key(_)
            | SignError::Unreadable(_)
            | SignError::Rejected(_)
            | SignError::Exists
            | SignError::NotAFile(_) => true,
            SignError::Disagrees(_) | SignError::Write { .. } => false,
        }
    }
}

/// How to sign.
#[derive(Debug, Clone, Copy, Default)]
pub struct SignOptions {
    /// Replace an existing regular `receipt.dsse.json` (never a symlink, FIFO or directory).
    pub force: bool,
}

/// Sign a bundle that verifies, refusing to replace an existing envelope
/// (`sign_bundle_with` with default options).
pub fn sign_bundle(bundle_dir: &Path, private_pem: &str) -> Result<Envelope, SignError> {
    sign_bundle_with(bundle_dir, private_pem, SignOptions::default())
}

/// Sign a bundle: refuse when `receipt.dsse.json` exists as anything but a regular file, or
/// exists at all without `force`; verify the bundle (ignoring the old envelope) and refuse
/// unless every check passes; state the outcome (`PASSED`, every case of the receipt passed,
/// none failed — checked, not assumed); sign the statement with the PKCS#8 `private_pem`; and
/// write the envelope as a fresh temporary file in the bundle directory (exclusive create,
/// `O_NOFOLLOW`) renamed into place: without `force` by a hard link that fails if the name
/// appeared meanwhile, so nothing is ever replaced unasked and no link is followed. An
/// existing path is only ever `lstat`ed, never opened, so a FIFO cannot block it.
pub fn sign_bundle_with(
    bundle_dir: &Path,
    private_pem: &str,
    options: SignOptions,
) -> Result<Envelope, SignError> {
    let key = dsse::signing_key_from_pem(private_pem).map_err(SignError::Key)?;
    let path = bundle_dir.join(ENVELOPE_FILE);
    existing_envelope(&path, options.force)?;
    let unreadable = |e: crate::verify::BundleError| {
        SignError::Unreadable(
            crate::verify::report::render_error(&e)
                .trim_end()
                .to_string(),
        )
    };
    let bundle = crate::verify::Bundle::read(bundle_dir).map_err(unreadable)?;
    let outcome = crate::verify::verify_loaded(
        &bundle,
        &crate::verify::VerifyOptions {
            ignore_envelope: true,
            ..Default::default()
        },
    )
    .map_err(unreadable)?;
    if !outcome.verified {
        // Raw, like every error's text: whoever prints it escapes it, once.
        return Err(SignError::Rejected(outcome.failed_ids().join(", ")));
    }
    let receipt: Receipt = crate::strict_json::from_slice(&bundle.receipt_bytes)
        .map_err(|e| unreadable(crate::verify::BundleError::receipt(bundle_dir, e)))?;
    let native = native_section(&bundle.files)
        .map_err(|e| unreadable(crate::verify::BundleError::receipt(bundle_dir, e)))?;
    let statement = statement_for(
        &receipt,
        &bundle.receipt_bytes,
        native.as_ref(),
        outcome.verified,
    );
    predicate_agrees(&receipt, native.as_ref(), &statement.predicate)?;
    let payload = serde_json::to_vec(&statement).unwrap_or_default();
    let envelope = dsse::sign(IN_TOTO_PAYLOAD_TYPE, &payload, &key);
    let mut bytes = serde_json::to_vec_pretty(&envelope).unwrap_or_default();
    bytes.push(b'\n');
    write_envelope(bundle_dir, &path, &bytes, options.force)
        .map_err(|source| SignError::Write { path, source })?;
    Ok(envelope)
}

/// Refuse a `receipt.dsse.json` that is not a regular file, or any at all without `force`.
pub(crate) fn existing_envelope(path: &Path, force: bool) -> Result<(), SignError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(SignError::Read {
            path: path.to_path_buf(),
            source,
        }),
        Ok(meta) => {
            let kind = kind_of(&meta.file_type());
            if kind != "regular file" {
                Err(SignError::NotAFile(kind))
            } else if force {
                Ok(())
            } else {
                Err(SignError::Exists)
            }
        }
    }
}

fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_symlink() {
        "symlink"
    } else if file_type.is_dir() {
        "directory"
    } else if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_block_device() || file_type.is_char_device() {
        "device"
    } else {
        "regular file"
    }
}

/// Each run of a native platform run as the statement names it
/// (`native/<client>-<os>-<arch>/<scenario>/<mode>`), with its verdict.
fn native_tests(
    run: &scopebox_schema::native_receipt::NativePlatformRun,
) -> impl Iterator<Item = (String, bool)> + '_ {
    let dir = native_dir(&run.client, run.platform);
    run.judgement
        .runs
        .iter()
        .map(move |r| (format!("{dir}/{}", r.dir), r.passed))
}

/// The bundle's `native.json`, parsed, when it has one (`None` for a candidate-only bundle).
pub fn native_section(
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<Option<NativeSection>, crate::strict_json::StrictJsonError> {
    files
        .get(NATIVE_SECTION_FILE)
        .map(|bytes| crate::strict_json::from_slice(bytes))
        .transpose()
}

/// The statement says what the receipt says: `PASSED` only with every recorded case and every
/// native run passing, the passed list exactly the receipt's cases then the native runs, and
/// the failed list empty.
fn predicate_agrees(
    receipt: &Receipt,
    native: Option<&NativeSection>,
    predicate: &TestResult,
) -> Result<(), SignError> {
    let native_runs = native.map_or(&[][..], |n| n.platforms.as_slice());
    let cases: Vec<String> = receipt
        .platforms
        .iter()
        .flat_map(|run| {
            run.cases
                .iter()
                .map(move |c| format!("{}/{}", run.platform.dir_name(), c.id))
        })
        .chain(
            native_runs
                .iter()
                .flat_map(|run| native_tests(run).map(|(name, _)| name)),
        )
        .collect();
    let all_pass = receipt
        .platforms
        .iter()
        .all(|run| run.cases.iter().all(|c| c.verdict == "pass"))
        && native_runs.iter().all(|run| run.judgement.passed);
    if predicate.result != "PASSED" || !all_pass {
        return Err(SignError::Disagrees(format!(
            "result {}, every case passed: {all_pass}",
            predicate.result
        )));
    }
    if !predicate.failed_tests.is_empty() || predicate.passed_tests != cases {
        return Err(SignError::Disagrees(
            "the passed and failed lists are not the receipt's cases".into(),
        ));
    }
    Ok(())
}

/// Write `bytes` to `path` through a fresh temporary file in `dir` (exclusive create, no
/// symlink followed, owner-writable, world-readable), then move it into place.
pub(crate) fn write_envelope(
    dir: &Path,
    path: &Path,
    bytes: &[u8],
    force: bool,
) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut suffix = [0u8; 8];
    getrandom::fill(&mut suffix).map_err(|_| std::io::Error::other("no OS randomness"))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| ENVELOPE_FILE.to_string());
    let temp = dir.join(format!(".{name}.{}.tmp", hex::encode(suffix)));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        // O_NOFOLLOW | O_NONBLOCK: create_new already refuses an existing name (a link
        // included); these make the intent explicit and never wait on a FIFO.
        .custom_flags(libc_flags::O_NOFOLLOW | libc_flags::O_NONBLOCK)
        .open(&temp)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            if force {
                std::fs::rename(&temp, path)
            } else {
                // A hard link fails with EEXIST if the name exists now: no replace unasked.
                std::fs::hard_link(&temp, path).and_then(|()| std::fs::remove_file(&temp))
            }
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// The two open(2) flags used above (Linux values; this crate builds for Linux only).
mod libc_flags {
    pub const O_NOFOLLOW: i32 = 0o400000;
    pub const O_NONBLOCK: i32 = 0o4000;
}
