//! Interoperability with an independent DSSE/ed25519 implementation (Python `cryptography`,
//! `tests/interop/dsse_interop.py`): it verifies the envelope we write, rejects it under
//! another key, and produces one with its own key that our verifier accepts. Under `CI=true`
//! a missing python3 or `cryptography` is a failure; elsewhere the test says it skipped.

use crate::util::{specimen, tempdir, verify_bin};
use std::path::{Path, PathBuf};
use std::process::Command;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/dsse_interop.py")
}

fn python_ready() -> bool {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import cryptography.hazmat.primitives.asymmetric.ed25519",
        ])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but python3 with the `cryptography` package is not available (pip install cryptography)");
        }
        eprintln!("skipping interop: python3 with `cryptography` not available (pip install cryptography)");
    }
    ok
}

fn python(args: &[&str]) -> (i32, String, String) {
    let out = Command::new("python3")
        .arg(script())
        .args(args)
        .output()
        .expect("run python3");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn python_cryptography_verifies_our_envelope_and_we_verify_its_envelope() {
    if !python_ready() {
        return;
    }
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    let keys = scopebox_receipts::dsse::write_keypair(&tmp.path().join("ours")).unwrap();
    let other = scopebox_receipts::dsse::write_keypair(&tmp.path().join("other")).unwrap();
    let private = std::fs::read_to_string(&keys.private).unwrap();
    scopebox_receipts::attestation::sign_bundle(&bundle, &private).unwrap();
    let envelope = bundle.join("receipt.dsse.json");
    let envelope_str = envelope.to_str().unwrap();

    // (a) Theirs verifies ours, and only with our key.
    let (code, stdout, stderr) = python(&["verify", envelope_str, keys.public.to_str().unwrap()]);
    assert_eq!(code, 0, "python rejected our envelope: {stderr}");
    assert_eq!(
        stdout.trim(),
        "https://in-toto.io/Statement/v1 https://in-toto.io/attestation/test-result/v0.1"
    );
    let (code, _, _) = python(&["verify", envelope_str, other.public.to_str().unwrap()]);
    assert_eq!(code, 1, "python accepted our envelope under another key");

    // (b) Ours verifies theirs (URL-safe, unpadded base64, their own key).
    let theirs_pub = tmp.path().join("python.pub.pem");
    let theirs_env = tmp.path().join("python.dsse.json");
    let (code, _, stderr) = python(&[
        "resign",
        envelope_str,
        theirs_env.to_str().unwrap(),
        theirs_pub.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "python could not sign: {stderr}");
    std::fs::copy(&theirs_env, &envelope).unwrap();
    let run = verify_bin(&[
        bundle.to_str().unwrap(),
        "--key",
        theirs_pub.to_str().unwrap(),
    ]);
    assert_eq!(
        run.code, 0,
        "we rejected python's envelope:\n{}",
        run.stdout
    );
    assert!(run.stdout.contains("✓ signature.verified"));
    // And not under our own key, which did not sign it.
    let run = verify_bin(&[
        bundle.to_str().unwrap(),
        "--key",
        keys.public.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1);
}

fn sslib_ready() -> bool {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import securesystemslib.dsse, securesystemslib.signer",
        ])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but python3 with `securesystemslib` is not available (pip install 'securesystemslib[crypto]')");
        }
        eprintln!("skipping interop: python3 with `securesystemslib` not available (pip install 'securesystemslib[crypto]')");
    }
    ok
}

fn sslib(args: &[&str]) -> (i32, String, String) {
    let out = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/sslib_interop.py"))
        .args(args)
        .output()
        .expect("run python3");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn securesystemslib_finds_our_signature_by_our_key_id_and_we_verify_its_envelope() {
    if !sslib_ready() {
        return;
    }
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    let keys = scopebox_receipts::dsse::write_keypair(&tmp.path().join("ours")).unwrap();
    let other = scopebox_receipts::dsse::write_keypair(&tmp.path().join("other")).unwrap();
    let private = std::fs::read_to_string(&keys.private).unwrap();
    let envelope = scopebox_receipts::attestation::sign_bundle(&bundle, &private).unwrap();
    let path = bundle.join("receipt.dsse.json");
    let path_str = path.to_str().unwrap();

    // The key id rule: theirs computes the same id from the public key alone.
    let (code, stdout, _) = sslib(&["keyid", keys.public.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(stdout.trim(), keys.keyid);
    assert_eq!(
        envelope.signatures[0].keyid.as_deref(),
        Some(keys.keyid.as_str())
    );

    // securesystemslib's Envelope.verify accepts ours under our key, and only that key.
    let (code, stdout, stderr) = sslib(&["verify", path_str, keys.public.to_str().unwrap()]);
    assert_eq!(code, 0, "securesystemslib rejected our envelope: {stderr}");
    assert_eq!(
        stdout.trim(),
        "https://in-toto.io/Statement/v1 https://in-toto.io/attestation/test-result/v0.1"
    );
    let (code, _, _) = sslib(&["verify", path_str, other.public.to_str().unwrap()]);
    assert_eq!(
        code, 1,
        "securesystemslib accepted our envelope under another key"
    );

    // Its CryptoSigner's envelope over the same statement verifies with ours.
    let theirs_env = tmp.path().join("sslib.dsse.json");
    let theirs_pub = tmp.path().join("sslib.pub.pem");
    let (code, _, stderr) = sslib(&[
        "sign",
        path_str,
        theirs_env.to_str().unwrap(),
        theirs_pub.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "securesystemslib could not sign: {stderr}");
    std::fs::copy(&theirs_env, &path).unwrap();
    let run = verify_bin(&[
        bundle.to_str().unwrap(),
        "--key",
        theirs_pub.to_str().unwrap(),
    ]);
    assert_eq!(
        run.code, 0,
        "we rejected securesystemslib's envelope:\n{}",
        run.stdout
    );
    assert!(run.stdout.contains("✓ signature.verified"));
}
