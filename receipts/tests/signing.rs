//! Signing: keygen writes a 0600 PKCS#8 private key and an SPKI public key; a signed bundle
//! verifies with its key, not with another, and not after any edit of the receipt or the
//! envelope; the statement names the candidate, the receipt and the run's configuration.

use crate::util::{edit_json, specimen, tempdir, verify_bin};
use scopebox_receipts::attestation::{
    sign_bundle, sign_bundle_with, SignError, SignOptions, Statement, TEST_RESULT_PREDICATE,
};
use scopebox_receipts::dsse::{self, Envelope, IN_TOTO_PAYLOAD_TYPE};
use scopebox_schema::digest::sha256_file;
use std::os::unix::fs::PermissionsExt;

fn keypair(dir: &std::path::Path, name: &str) -> (String, std::path::PathBuf) {
    let paths = dsse::write_keypair(&dir.join(name)).expect("keygen");
    (
        std::fs::read_to_string(&paths.private).unwrap(),
        paths.public,
    )
}

#[test]
fn keygen_writes_a_private_key_only_its_owner_can_read_and_never_overwrites() {
    let tmp = tempdir();
    let paths = dsse::write_keypair(&tmp.path().join("release")).unwrap();
    assert_eq!(paths.private, tmp.path().join("release.pem"));
    assert_eq!(paths.public, tmp.path().join("release.pub.pem"));
    let mode = std::fs::metadata(&paths.private)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let private = std::fs::read_to_string(&paths.private).unwrap();
    assert!(private.starts_with("-----BEGIN PRIVATE KEY-----\n"));
    let public = std::fs::read_to_string(&paths.public).unwrap();
    assert!(public.starts_with("-----BEGIN PUBLIC KEY-----\n"));
    assert_eq!(paths.keyid.len(), 64);
    let again = dsse::write_keypair(&tmp.path().join("release")).unwrap_err();
    assert!(again.to_string().contains("already exists"), "{again}");
    assert_eq!(std::fs::read_to_string(&paths.private).unwrap(), private);
}

#[test]
fn a_signed_bundle_verifies_with_its_key_only() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    let (private, public) = keypair(tmp.path(), "k");
    let (_, other_public) = keypair(tmp.path(), "other");
    sign_bundle(&bundle, &private).unwrap();
    let b = bundle.to_str().unwrap();
    let good = verify_bin(&[b, "--key", public.to_str().unwrap()]);
    assert_eq!(good.code, 0, "{}", good.stdout);
    assert!(good.stdout.contains("✓ signature.verified"));
    assert!(good.stdout.contains("✓ signature.statement"));
    let wrong = verify_bin(&[b, "--key", other_public.to_str().unwrap()]);
    assert_eq!(wrong.code, 1);
    assert!(
        wrong.stdout.contains("✗ signature.verified"),
        "{}",
        wrong.stdout
    );
    // Without a key the binding is still checked; the signature is shown as not checked
    // against any key, and no ✓ line claims a signed statement.
    let keyless = verify_bin(&[b]);
    assert_eq!(keyless.code, 0);
    assert!(
        keyless.stdout.contains("- signature.verified")
            && keyless.stdout.contains(
                "NOT CHECKED (no --key given: the envelope's signature was not checked against any key)"
            ),
        "{}",
        keyless.stdout
    );
    assert!(keyless
        .stdout
        .contains("signer   none: no signature was checked against any key"));
    assert!(keyless.stdout.contains("not checked: signature.verified"));
    for line in keyless.stdout.lines().filter(|l| l.contains('✓')) {
        assert!(
            !line.contains("signature.verified") && !line.contains("signed"),
            "{line}"
        );
    }
}

#[test]
fn the_statement_names_candidate_receipt_image_matrix_and_policy() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    let (private, _) = keypair(tmp.path(), "k");
    let envelope = sign_bundle(&bundle, &private).unwrap();
    assert_eq!(envelope.payload_type, IN_TOTO_PAYLOAD_TYPE);
    let on_disk: Envelope =
        serde_json::from_slice(&std::fs::read(bundle.join("receipt.dsse.json")).unwrap()).unwrap();
    assert_eq!(on_disk, envelope);
    let statement: Statement =
        serde_json::from_slice(&dsse::decode_base64(&envelope.payload).unwrap()).unwrap();
    assert_eq!(statement.statement_type, "https://in-toto.io/Statement/v1");
    assert_eq!(statement.predicate_type, TEST_RESULT_PREDICATE);
    // Every platform's candidate archive, then the receipt.
    assert_eq!(statement.subject.len(), 3);
    assert_eq!(statement.subject[2].name, "receipt.json");
    assert_eq!(
        statement.subject[2].digest["sha256"],
        sha256_file(&bundle.join("receipt.json")).unwrap()
    );
    let receipt: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("receipt.json")).unwrap()).unwrap();
    for (i, platform) in ["linux/amd64", "linux/arm64"].iter().enumerate() {
        let run = &receipt["platforms"][i];
        assert_eq!(run["platform"], *platform);
        assert_eq!(
            statement.subject[i].digest["sha256"],
            run["inputs"]["candidateArchive"]["sha256"]
        );
        assert_eq!(
            statement.subject[i].name,
            run["inputs"]["candidateArchive"]["name"].as_str().unwrap()
        );
    }
    assert_eq!(statement.predicate.result, "PASSED");
    assert_eq!(
        statement.predicate.passed_tests,
        vec![
            "linux-amd64/case-000",
            "linux-amd64/case-001",
            "linux-arm64/case-000",
            "linux-arm64/case-001"
        ]
    );
    assert!(statement.predicate.warned_tests.is_empty());
    let names: Vec<&str> = statement
        .predicate
        .configuration
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert!(names.contains(&"image linux/amd64") && names.contains(&"inputs/matrix.json"));
    assert!(names.contains(&"image linux/arm64"));
    assert!(names.contains(&"inputs/boundary-policy.json"));
    assert!(names.contains(&"inputs/image-recipe.json"));
    let image = statement
        .predicate
        .configuration
        .iter()
        .find(|d| d.name == "image linux/arm64")
        .unwrap();
    assert_eq!(
        format!("sha256:{}", image.digest["sha256"]),
        receipt["platforms"][1]["inputs"]["imageId"]
            .as_str()
            .unwrap()
    );
}

#[test]
fn any_edit_after_signing_fails_the_signature() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let (private, public) = keypair(tmp.path(), "k");
    sign_bundle(&bundle, &private).unwrap();
    let key = public.to_str().unwrap();
    let b = bundle.to_str().unwrap();

    // Whitespace only in receipt.json: the exact bytes are signed.
    let receipt = bundle.join("receipt.json");
    let original = std::fs::read(&receipt).unwrap();
    let mut spaced = original.clone();
    spaced.push(b' ');
    std::fs::write(&receipt, &spaced).unwrap();
    let run = verify_bin(&[b, "--key", key]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("✗ signature.statement"),
        "{}",
        run.stdout
    );
    std::fs::write(&receipt, &original).unwrap();
    assert_eq!(verify_bin(&[b, "--key", key]).code, 0);

    // One signature byte changed.
    let envelope_path = bundle.join("receipt.dsse.json");
    let saved = std::fs::read(&envelope_path).unwrap();
    edit_json(&envelope_path, |e| {
        let sig = e["signatures"][0]["sig"].as_str().unwrap().to_string();
        let mut raw = dsse::decode_base64(&sig).unwrap();
        raw[10] ^= 1;
        e["signatures"][0]["sig"] = dsse::encode_base64(&raw).into();
    });
    assert_eq!(verify_bin(&[b, "--key", key]).code, 1);
    std::fs::write(&envelope_path, &saved).unwrap();

    // The payload type changed (the PAE binds it).
    edit_json(&envelope_path, |e| {
        e["payloadType"] = "application/json".into()
    });
    let run = verify_bin(&[b, "--key", key]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("✗ signature.verified"),
        "{}",
        run.stdout
    );
    std::fs::write(&envelope_path, &saved).unwrap();

    // URL-safe, unpadded base64 of the same envelope is accepted, as DSSE requires.
    let url_safe = |v: &serde_json::Value| -> serde_json::Value {
        let text = v.as_str().unwrap();
        assert!(
            text.contains(['+', '/', '=']),
            "the re-encoding must change something"
        );
        text.replace('+', "-")
            .replace('/', "_")
            .trim_end_matches('=')
            .into()
    };
    edit_json(&envelope_path, |e| {
        e["payload"] = url_safe(&e["payload"]);
        e["signatures"][0]["sig"] = url_safe(&e["signatures"][0]["sig"]);
    });
    let run = verify_bin(&[b, "--key", key]);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

#[test]
fn a_bundle_that_does_not_verify_is_not_signed() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    edit_json(&bundle.join("receipt.json"), |r| {
        r["platforms"][0]["cleanup"]["volumeRemoved"] = false.into()
    });
    let (private, _) = keypair(tmp.path(), "k");
    let error = sign_bundle(&bundle, &private).unwrap_err();
    assert!(matches!(error, SignError::Rejected(_)), "{error}");
    let text = error.to_string();
    assert!(
        text.contains("it does not verify (linux-amd64/execution.cleanup failed)"),
        "{text}"
    );
    assert!(!bundle.join("receipt.dsse.json").exists());
    let leftovers: Vec<_> = std::fs::read_dir(&bundle)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn the_signed_predicate_agrees_with_the_receipt() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 3);
    let (private, _) = keypair(tmp.path(), "k");
    let envelope = sign_bundle(&bundle, &private).unwrap();
    let statement: Statement =
        serde_json::from_slice(&dsse::decode_base64(&envelope.payload).unwrap()).unwrap();
    let receipt: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("receipt.json")).unwrap()).unwrap();
    let cases: Vec<String> = receipt["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            let dir = p["dir"]
                .as_str()
                .unwrap()
                .trim_start_matches("platforms/")
                .to_string();
            p["cases"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |c| format!("{dir}/{}", c["id"].as_str().unwrap()))
        })
        .collect();
    assert_eq!(statement.predicate.result, "PASSED");
    assert_eq!(statement.predicate.passed_tests, cases);
    assert!(statement.predicate.failed_tests.is_empty());
}

#[test]
fn an_existing_envelope_is_replaced_only_with_force() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let (private, public) = keypair(tmp.path(), "k");
    let (other, other_public) = keypair(tmp.path(), "other");
    sign_bundle(&bundle, &private).unwrap();
    let path = bundle.join("receipt.dsse.json");
    let first = std::fs::read(&path).unwrap();
    let error = sign_bundle(&bundle, &other).unwrap_err();
    assert!(matches!(error, SignError::Exists), "{error}");
    assert!(error.to_string().contains("pass --force"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), first);
    sign_bundle_with(&bundle, &other, SignOptions { force: true }).unwrap();
    assert_ne!(std::fs::read(&path).unwrap(), first);
    let b = bundle.to_str().unwrap();
    assert_eq!(
        verify_bin(&[b, "--key", other_public.to_str().unwrap()]).code,
        0
    );
    assert_eq!(verify_bin(&[b, "--key", public.to_str().unwrap()]).code, 1);
}

#[test]
fn a_symlinked_envelope_is_never_followed_even_with_force() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let (private, _) = keypair(tmp.path(), "k");
    let outside = tmp.path().join("outside.txt");
    std::fs::write(&outside, b"precious").unwrap();
    std::os::unix::fs::symlink(&outside, bundle.join("receipt.dsse.json")).unwrap();
    for force in [false, true] {
        let error = sign_bundle_with(&bundle, &private, SignOptions { force }).unwrap_err();
        assert!(matches!(error, SignError::NotAFile("symlink")), "{error}");
    }
    assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
    // A dangling link is refused the same way: nothing is created at its target.
    std::fs::remove_file(bundle.join("receipt.dsse.json")).unwrap();
    let target = tmp.path().join("created-by-sign");
    std::os::unix::fs::symlink(&target, bundle.join("receipt.dsse.json")).unwrap();
    assert!(sign_bundle(&bundle, &private).is_err());
    assert!(!target.exists());
}

#[test]
fn a_fifo_envelope_is_refused_without_blocking() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let (private, _) = keypair(tmp.path(), "k");
    let fifo = bundle.join("receipt.dsse.json");
    crate::util::make_fifo(&fifo);
    // Would hang forever if the FIFO were opened for writing with no reader.
    let error = sign_bundle_with(&bundle, &private, SignOptions { force: true }).unwrap_err();
    assert!(matches!(error, SignError::NotAFile("FIFO")), "{error}");
}

/// An envelope is bounded to `dsse::MAX_SIGNATURES` (16) signatures: each costs a hash of the
/// whole payload, so thousands of copies of one would take the verifier minutes to hours.
#[test]
fn more_than_16_signatures_fail_the_signature_checks() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let (private, public) = keypair(tmp.path(), "k");
    sign_bundle(&bundle, &private).unwrap();
    let path = bundle.join("receipt.dsse.json");
    let signed: Envelope = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let with_copies = |n: usize| {
        let mut envelope = signed.clone();
        envelope.signatures = vec![signed.signatures[0].clone(); n];
        std::fs::write(&path, serde_json::to_vec(&envelope).unwrap()).unwrap();
    };
    let (b, k) = (bundle.to_str().unwrap(), public.to_str().unwrap());
    with_copies(dsse::MAX_SIGNATURES);
    let at_limit = verify_bin(&[b, "--key", k]);
    assert_eq!(at_limit.code, 0, "{}", at_limit.stdout);
    with_copies(2000);
    let why = "failed to verify the envelope: it carries 2000 signatures, more than the 16 a verifier checks";
    for args in [vec![b, "--key", k], vec![b]] {
        let run = verify_bin(&args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stdout);
        assert!(
            run.stdout.contains("✗ signature.envelope") && run.stdout.contains(why),
            "{args:?}: {}",
            run.stdout
        );
    }
    let keyed = verify_bin(&[b, "--key", k]);
    assert!(
        keyed.stdout.contains("✗ signature.verified"),
        "{}",
        keyed.stdout
    );
}

/// The DSSE repository's ed25519 test vectors (testvectors/vectors.json): each envelope with
/// key A (RFC 8032 test 1) verifies or is rejected as published.
#[test]
fn dsse_spec_vectors_verify_as_published() {
    let public_a = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n-----END PUBLIC KEY-----\n";
    let key = dsse::verifying_key_from_pem(public_a).unwrap();
    let statement_b64 = "eyJfdHlwZSI6Imh0dHBzOi8vaW4tdG90by5pby9TdGF0ZW1lbnQvdjEifQ==";
    let vectors: [(&str, &str, &str, bool); 5] = [
        (statement_b64, IN_TOTO_PAYLOAD_TYPE, "2WAfaHm5jluo0w+0rk8uVkluELJYWjSmU9x7EUzx+AyteDGJ4/nqyJXfmAUVFIAoQafWm7AxBZNw5M9ixNHiCA==", true),
        ("-_-_Pj8=", IN_TOTO_PAYLOAD_TYPE, "P-_KHICeR7tI6S_YyejJTRtrXhcQyQ2LYPaL8h90KjC9qN8HU_svOQ6TuDOT1HIrsGW886DbWNWcCmX5twLrAw==", true),
        ("", IN_TOTO_PAYLOAD_TYPE, "gSggCAaTLTYyRH6FIDBem6meyIynsYy8RTHVzwx9tnTb7Bg/1jMWnuVgI/gffqmbsC2VX5/jHfkkDqsj7CDbDg==", true),
        (statement_b64, "application/vnd.exämple+json", "xmSk/ug66ysT7ayhkCIjhAq42zgZXSsEWuzUaNL7w2eGAdF/NU6/fRXPtmfN+5DNSAs5/i2lUnHjbbjPsu0tAw==", true),
        // payload-type-swapped: the signature covers in-toto, the envelope claims another type.
        (statement_b64, "application/vnd.example.other+json", "2WAfaHm5jluo0w+0rk8uVkluELJYWjSmU9x7EUzx+AyteDGJ4/nqyJXfmAUVFIAoQafWm7AxBZNw5M9ixNHiCA==", false),
    ];
    for (payload, payload_type, sig, accept) in vectors {
        let envelope = Envelope {
            payload: payload.into(),
            payload_type: payload_type.into(),
            signatures: vec![dsse::EnvelopeSignature {
                keyid: Some("A".into()),
                sig: sig.into(),
            }],
        };
        let result = dsse::verify(&envelope, &key, payload_type);
        assert_eq!(
            result.is_ok(),
            accept,
            "{payload_type} {payload}: {result:?}"
        );
    }
}
