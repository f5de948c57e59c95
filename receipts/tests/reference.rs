//! The committed reference bundle (`tests/reference-bundle/`), produced by a real
//! `scopebox run` against the Docker engine with a 4-case subset of the claude-code matrix
//! (`--matrix` of the bundle's own `inputs/matrix.json`; the candidate packed by `scopebox pack`
//! from a clean export of the committed tree, passed with `--candidate --expect-sha256`) and
//! signed with a throw-away key whose public half is `tests/reference-key.pub.pem` (the private
//! half was discarded). It carries the lifecycle log and the raw control records. It verifies as
//! committed, with and without the key; it fails under another key; and every mutation class
//! applied to it is rejected, the lifecycle and control classes by the checks that recompute
//! them.

use crate::util::{tempdir, verify_bin};
use std::path::PathBuf;

fn reference() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference-bundle")
}

fn reference_key() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference-key.pub.pem")
}

#[test]
fn the_reference_bundle_verifies_with_its_key() {
    let run = verify_bin(&[
        reference().to_str().unwrap(),
        "--key",
        reference_key().to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("✓ signature.verified"));
    assert!(run.stdout.contains("✓ cases.verdicts"));
    assert!(run.stdout.contains("✓ boundary.observed"));
    assert!(run.stdout.contains("✓ execution.lifecycle"));
    assert!(run.stdout.contains("✓ controls.negative"));
}

#[test]
fn the_reference_bundle_is_rejected_under_another_key() {
    let tmp = tempdir();
    let other = scopebox_receipts::dsse::write_keypair(&tmp.path().join("other")).unwrap();
    let run = verify_bin(&[
        reference().to_str().unwrap(),
        "--key",
        other.public.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("✗ signature.verified"));
}

#[test]
fn every_mutation_of_the_reference_bundle_is_rejected() {
    let report = scopebox_receipts::selftest::run(&reference()).expect("self-test runs");
    assert!(report.rows.len() >= 25, "{} classes", report.rows.len());
    let not_rejected: Vec<_> = report.rows.iter().filter(|r| !r.rejected()).collect();
    assert!(not_rejected.is_empty(), "not rejected: {not_rejected:#?}");
    crate::selftest::assert_recomputing_checks_reject(&report);
}
