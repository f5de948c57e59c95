//! The committed reference bundle (`tests/reference-bundle/`), produced by a real
//! `scopebox run` against the Docker engine with a small matrix: it verifies as committed, and
//! every mutation class applied to it is rejected.

use crate::util::verify_bin;
use std::path::PathBuf;

fn reference() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference-bundle")
}

#[test]
fn the_reference_bundle_verifies() {
    let run = verify_bin(&[reference().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn every_mutation_of_the_reference_bundle_is_rejected() {
    let report = scopebox_receipts::selftest::run(&reference()).expect("self-test runs");
    assert!(report.rows.len() >= 25);
    let accepted: Vec<_> = report.rows.iter().filter(|r| !r.rejected()).collect();
    assert!(accepted.is_empty(), "not rejected: {accepted:#?}");
}
