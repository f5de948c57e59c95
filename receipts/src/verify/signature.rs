//! The signature: when a key is given the envelope must exist and verify with it; when an
//! envelope exists its statement must be exactly the one `attestation::statement_for` derives
//! from the exact `receipt.json` bytes and the outcome of every other check. Without a key the
//! signature's authenticity is not claimed (a note says so); the binding still is checked.
//! An envelope with more than `dsse::MAX_SIGNATURES` signatures fails `signature.envelope`.

use super::{Checks, Context, VerifyOptions};
use crate::attestation::{statement_for, Statement};
use crate::dsse::{self, Envelope, IN_TOTO_PAYLOAD_TYPE};
use crate::receipt::ENVELOPE_FILE;

pub(crate) fn check(
    ctx: &Context,
    options: &VerifyOptions,
    verified_so_far: bool,
    checks: &mut Checks,
) {
    let envelope_bytes = ctx.bundle.envelope_bytes.as_deref();
    let key = match options
        .public_key_pem
        .as_deref()
        .map(dsse::verifying_key_from_pem)
    {
        None => None,
        Some(Ok(k)) => Some(k),
        Some(Err(e)) => {
            // The error's hint line is for a person choosing a file, not a check's reason.
            let text = e.to_string();
            let reason = text
                .split_once("\nhint: ")
                .map_or(text.as_str(), |(m, _)| m);
            checks.record(
                "signature.verified",
                "the envelope verifies with the given key",
                vec![format!("failed to {reason}")],
            );
            return;
        }
    };
    let Some(bytes) = envelope_bytes else {
        if key.is_some() {
            checks.record(
                "signature.verified",
                "the envelope verifies with the given key",
                vec![format!(
                    "--key was given but the bundle has no {ENVELOPE_FILE}"
                )],
            );
        } else {
            checks.not_checked(
                "signature.verified",
                "the envelope verifies with the given key",
                format!("unsigned bundle: no {ENVELOPE_FILE}, no --key"),
            );
        }
        return;
    };

    let envelope: Envelope = match crate::strict_json::from_slice(bytes) {
        Ok(e) => e,
        Err(e) => {
            checks.record(
                "signature.envelope",
                "receipt.dsse.json is a DSSE envelope over an in-toto statement",
                vec![format!("{ENVELOPE_FILE} does not parse: {e}")],
            );
            return;
        }
    };
    // More signatures than a verifier checks: a failed envelope, with or without a key (with
    // one, `dsse::verify` refuses it too, so `signature.verified` fails for the same reason).
    checks.record(
        "signature.envelope",
        "receipt.dsse.json is a DSSE envelope over an in-toto statement",
        match dsse::check_signature_count(&envelope) {
            Ok(()) => Vec::new(),
            Err(e) => vec![format!("{ENVELOPE_FILE}: failed to {e}")],
        },
    );

    // Authenticity, with the trusted key.
    let payload = match &key {
        Some(key) => {
            let result = dsse::verify(&envelope, key, IN_TOTO_PAYLOAD_TYPE);
            if result.is_ok() {
                checks.signed_by(dsse::keyid(key));
            }
            checks.record(
                "signature.verified",
                "the envelope verifies with the given key",
                match &result {
                    Ok(_) => Vec::new(),
                    Err(e) => vec![format!("failed to {e}")],
                },
            );
            result.ok()
        }
        None => {
            checks.not_checked(
                "signature.verified",
                "the envelope verifies with the given key",
                super::SIGNATURE_NOT_CHECKED,
            );
            dsse::decode_base64(&envelope.payload).ok()
        }
    };

    // Binding: the statement is the one this exact receipt and outcome give.
    let mut binding = Vec::new();
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE {
        binding.push(format!(
            "payloadType {:?}, expected {IN_TOTO_PAYLOAD_TYPE:?}",
            envelope.payload_type
        ));
    }
    match payload {
        None => binding.push("the payload could not be decoded or did not verify".into()),
        Some(payload) => match crate::strict_json::from_slice::<Statement>(&payload) {
            Err(e) => binding.push(format!("the payload is not an in-toto statement: {e}")),
            Ok(statement) => {
                let native = ctx.native.as_ref().and_then(|n| n.section.as_ref().ok());
                let expected = statement_for(
                    ctx.receipt,
                    &ctx.bundle.receipt_bytes,
                    native,
                    verified_so_far,
                );
                if statement.subject != expected.subject {
                    binding.push(
                        "the statement's subjects are not this receipt.json and every platform's candidate archive"
                            .into(),
                    );
                }
                if statement.predicate_type != expected.predicate_type
                    || statement.statement_type != expected.statement_type
                {
                    binding.push("the statement has another type or predicate type".into());
                }
                if statement.predicate.configuration != expected.predicate.configuration {
                    binding.push("the statement names another image, matrix or policy".into());
                }
                if statement.predicate.result != expected.predicate.result {
                    binding.push(format!(
                        "the statement says {}, verification says {}",
                        statement.predicate.result, expected.predicate.result
                    ));
                }
                if statement.predicate.passed_tests != expected.predicate.passed_tests
                    || statement.predicate.failed_tests != expected.predicate.failed_tests
                {
                    binding.push("the statement lists other passed or failed cases".into());
                }
                if statement.predicate.warned_tests != expected.predicate.warned_tests {
                    binding.push(
                        "the statement does not name exactly the platforms that were not covered"
                            .into(),
                    );
                }
            }
        },
    }
    // Without a key nobody is known to have signed the statement: the check says what it
    // establishes (the envelope's statement agrees with this receipt), never "signed".
    let title = if key.is_some() {
        "the signed statement binds this exact receipt.json and its outcome"
    } else {
        "the envelope's statement (signature not checked against any key) names this exact receipt.json and its outcome"
    };
    checks.record("signature.statement", title, binding);
}
