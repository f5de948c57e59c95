//! Release provenance: the receipt's `provenance` checked for consistency with the rest of the
//! receipt, and the in-toto SLSA Provenance v1 statement for the candidate archives this run
//! built — derived from the receipt alone (so the verifier recomputes it and compares), signed
//! by `scopebox sign` into `provenance.dsse.json` in the same DSSE form as the test-result
//! statement, and checked by `scopebox-verify` (signature with `--key`, and byte-for-byte
//! agreement of its statement with the receipt).

use crate::attestation::STATEMENT_TYPE;
use crate::digest::sha256_hex;
use crate::dsse::{self, Envelope, IN_TOTO_PAYLOAD_TYPE};
use crate::receipt::{Receipt, PROVENANCE_ENVELOPE_FILE};
use crate::verify::{Checks, Context, VerifyOptions};
use serde_json::{json, Value};
use std::path::Path;

pub const SLSA_PROVENANCE_PREDICATE: &str = "https://slsa.dev/provenance/v1";
/// How scopebox builds a candidate (`pack`): `cargo build --profile static --locked
/// --target <platform's> -p mcpscope`, in a cargo invocation of its own, then the
/// deterministic archive.
pub const BUILD_TYPE: &str = "urn:scopebox:build-type:pack:v1";
/// The builder: scopebox, at the version the receipt names.
pub const BUILDER_ID_PREFIX: &str = "urn:scopebox:builder:scopebox@";

/// The SLSA Provenance v1 statement of the candidates the receipt's run built; `None` when
/// the receipt has no provenance or every candidate was given (`--candidate`): scopebox then
/// built nothing it could vouch for.
pub fn statement_for(receipt: &Receipt, receipt_bytes: &[u8]) -> Option<Value> {
    let provenance = receipt.provenance.as_ref()?;
    let built: Vec<_> = receipt
        .platforms
        .iter()
        .filter(|run| {
            provenance
                .candidates
                .iter()
                .any(|c| c.platform == run.platform && c.origin == "built")
        })
        .collect();
    if built.is_empty() {
        return None;
    }
    let subject: Vec<Value> = built
        .iter()
        .map(|run| {
            json!({
                "name": run.inputs.candidate_archive.name,
                "digest": {"sha256": run.inputs.candidate_archive.sha256},
            })
        })
        .collect();
    let mut dependencies = Vec::new();
    if let Some(source) = &provenance.source {
        dependencies.push(json!({
            "name": "source",
            "digest": {"gitCommit": source.commit},
            "annotations": {"dirty": source.dirty},
        }));
    }
    dependencies.push(json!({
        "name": "Cargo.lock",
        "digest": {"sha256": provenance.cargo_lock_sha256},
    }));
    Some(json!({
        "_type": STATEMENT_TYPE,
        "subject": subject,
        "predicateType": SLSA_PROVENANCE_PREDICATE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {
                    "package": "mcpscope",
                    "profile": "static",
                    "platforms": built.iter().map(|r| r.platform.name()).collect::<Vec<_>>(),
                },
                "internalParameters": {
                    "rustc": provenance.rustc,
                },
                "resolvedDependencies": dependencies,
            },
            "runDetails": {
                "builder": {
                    "id": format!("{BUILDER_ID_PREFIX}{}", provenance.scopebox_version),
                    "version": {"scopebox": provenance.scopebox_version},
                },
                "metadata": {
                    "invocationId": receipt.run_id,
                    "startedOn": receipt.started_at,
                    "finishedOn": receipt.finished_at,
                },
                "byproducts": [{
                    "name": crate::receipt::RECEIPT_FILE,
                    "digest": {"sha256": sha256_hex(receipt_bytes)},
                }],
            },
        },
    }))
}

#[derive(Debug, thiserror::Error)]
pub enum ProvenanceError {
    #[error("read the bundle")]
    Unreadable(#[source] crate::verify::BundleError),
    #[error("sign with the key")]
    Key(#[source] dsse::DsseError),
    #[error("write {path}")]
    Write {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Sign the provenance statement of the bundle at `bundle_dir` and write
/// `provenance.dsse.json` the way `receipt.dsse.json` is written (an existing one only as a
/// regular file and only with `force`; a fresh exclusive, no-follow temporary file moved into
/// place). Called after the test-result envelope, whose signing refuses a bundle that does not
/// verify. `Ok(None)`: the run built no candidate, nothing written.
pub fn sign_bundle(
    bundle_dir: &Path,
    private_pem: &str,
    force: bool,
) -> Result<Option<Envelope>, ProvenanceError> {
    let key = dsse::signing_key_from_pem(private_pem).map_err(ProvenanceError::Key)?;
    crate::attestation::existing_envelope(&bundle_dir.join(PROVENANCE_ENVELOPE_FILE), force)
        .map_err(|e| ProvenanceError::Write {
            path: bundle_dir.join(PROVENANCE_ENVELOPE_FILE),
            source: std::io::Error::other(e.to_string()),
        })?;
    let bundle = crate::verify::Bundle::read(bundle_dir).map_err(ProvenanceError::Unreadable)?;
    let receipt: Receipt = crate::strict_json::from_slice(&bundle.receipt_bytes).map_err(|e| {
        ProvenanceError::Unreadable(crate::verify::BundleError::receipt(bundle_dir, e))
    })?;
    let Some(statement) = statement_for(&receipt, &bundle.receipt_bytes) else {
        return Ok(None);
    };
    let payload = serde_json::to_vec(&statement).unwrap_or_default();
    let envelope = dsse::sign(IN_TOTO_PAYLOAD_TYPE, &payload, &key);
    let mut bytes = serde_json::to_vec_pretty(&envelope).unwrap_or_default();
    bytes.push(b'\n');
    let path = bundle_dir.join(PROVENANCE_ENVELOPE_FILE);
    crate::attestation::write_envelope(bundle_dir, &path, &bytes, force).map_err(|source| {
        ProvenanceError::Write {
            path: path.clone(),
            source,
        }
    })?;
    Ok(Some(envelope))
}

/// `provenance.record` (the receipt's provenance agrees with the rest of the receipt) and,
/// when `provenance.dsse.json` is present (or a key is given and the run built a candidate),
/// `provenance.signature` and `provenance.statement`.
pub(crate) fn check(ctx: &Context, options: &VerifyOptions, checks: &mut Checks) {
    let receipt = ctx.receipt;
    let Some(p) = &receipt.provenance else {
        checks.note(
            if scopebox_schema::native_receipt::is_native_only(receipt, ctx.native.is_some()) {
                "no provenance in the receipt: a native reference run attests no candidate"
            } else {
                "no provenance in the receipt (written before it existed)"
            },
        );
        return;
    };
    let mut record = Vec::new();
    if p.scopebox_version != receipt.tool.version {
        record.push(format!(
            "scopeboxVersion {} is not tool.version {}",
            p.scopebox_version, receipt.tool.version
        ));
    }
    if !is_hex(&p.cargo_lock_sha256, 64) {
        record.push("cargoLockSha256 is not a sha256".into());
    }
    if let Some(source) = &p.source {
        if !is_hex(&source.commit, 40) && !is_hex(&source.commit, 64) {
            record.push(format!(
                "source commit {:?} is not a git object id",
                source.commit
            ));
        }
    }
    let ran: Vec<_> = receipt.platforms.iter().map(|r| r.platform).collect();
    let origins: Vec<_> = p.candidates.iter().map(|c| c.platform).collect();
    if ran != origins {
        record.push("candidates do not name exactly the platforms that ran, in order".into());
    }
    for c in &p.candidates {
        if c.origin != "built" && c.origin != "given" {
            record.push(format!(
                "{}: origin {:?} is neither built nor given",
                c.platform, c.origin
            ));
        }
    }
    if p.source.is_some() && !p.candidates.iter().any(|c| c.origin == "built") {
        record.push("a source revision is named but no candidate was built".into());
    }
    for run in &receipt.platforms {
        if run.engine.as_str() != p.engine.name || run.engine_version != p.engine.version {
            record.push(format!(
                "{}: engine {} {} is not the provenance's {} {}",
                run.platform, run.engine, run.engine_version, p.engine.name, p.engine.version
            ));
        }
        if run.engine_architecture != p.engine.architecture {
            record.push(format!(
                "{}: engineArchitecture {} is not the engine's {}",
                run.platform, run.engine_architecture, p.engine.architecture
            ));
        }
    }
    checks.record(
        "provenance.record",
        "the provenance agrees with the receipt (version, platforms, engine)",
        record,
    );

    let expected = statement_for(receipt, &ctx.bundle.receipt_bytes);
    let Some(bytes) = ctx.bundle.provenance_envelope_bytes.as_deref() else {
        if options.public_key_pem.is_some() && expected.is_some() {
            checks.record(
                "provenance.signature",
                "provenance.dsse.json verifies with the given key",
                vec![format!(
                    "--key was given but the bundle has no {PROVENANCE_ENVELOPE_FILE}"
                )],
            );
        }
        return;
    };
    let envelope: Envelope = match serde_json::from_slice(bytes) {
        Ok(e) => e,
        Err(e) => {
            checks.record(
                "provenance.statement",
                "provenance.dsse.json's statement is the one the receipt gives",
                vec![format!("{PROVENANCE_ENVELOPE_FILE} does not parse: {e}")],
            );
            return;
        }
    };
    let payload = match options
        .public_key_pem
        .as_deref()
        .map(dsse::verifying_key_from_pem)
    {
        Some(Ok(key)) => {
            let result = dsse::verify(&envelope, &key, IN_TOTO_PAYLOAD_TYPE);
            checks.record(
                "provenance.signature",
                "provenance.dsse.json verifies with the given key",
                match &result {
                    Ok(_) => Vec::new(),
                    Err(e) => vec![format!("failed to {e}")],
                },
            );
            result.ok()
        }
        Some(Err(e)) => {
            checks.record(
                "provenance.signature",
                "provenance.dsse.json verifies with the given key",
                vec![format!("failed to {e}")],
            );
            None
        }
        None => {
            checks.note(format!(
                "{PROVENANCE_ENVELOPE_FILE} present but no --key given: its statement is checked against the receipt, its signature's authenticity is not"
            ));
            dsse::decode_base64(&envelope.payload).ok()
        }
    };
    let mut binding = Vec::new();
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE {
        binding.push(format!(
            "payloadType {:?}, expected {IN_TOTO_PAYLOAD_TYPE:?}",
            envelope.payload_type
        ));
    }
    match (payload, expected) {
        (None, _) => binding.push("the payload could not be decoded or did not verify".into()),
        (Some(_), None) => binding.push(
            "the receipt names no candidate this run built, yet a provenance statement is present"
                .into(),
        ),
        (Some(payload), Some(expected)) => match serde_json::from_slice::<Value>(&payload) {
            Ok(got) if got == expected => {}
            Ok(got) => {
                if got["subject"] != expected["subject"] {
                    binding.push("its subjects are not this run's built candidate archives".into());
                }
                if got["predicateType"] != expected["predicateType"] {
                    binding.push(format!("predicateType is not {SLSA_PROVENANCE_PREDICATE}"));
                }
                if got["predicate"] != expected["predicate"] {
                    binding.push(
                        "its predicate differs from the one the receipt's provenance gives".into(),
                    );
                }
                if binding.is_empty() {
                    binding.push("the statement differs from the one the receipt gives".into());
                }
            }
            Err(e) => binding.push(format!("the payload is not JSON: {e}")),
        },
    }
    checks.record(
        "provenance.statement",
        "provenance.dsse.json's statement is the one the receipt gives",
        binding,
    );
}

fn is_hex(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
