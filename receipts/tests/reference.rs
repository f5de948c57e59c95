//! The committed reference bundle (`tests/reference-bundle/`, schema 2), produced by a real
//! two-platform `scopebox run` against the Docker engine — linux/amd64 natively and linux/arm64
//! under qemu-user on an x86_64 host — with a 4-case subset of the claude-code matrix
//! (`--matrix` of the bundle's own `inputs/matrix.json`; both candidates packed by `scopebox
//! pack` from the committed tree, passed with one `--candidate --expect-sha256` pair each) and
//! signed with a throw-away key whose public half is `tests/reference-key.pub.pem` (the private
//! half was discarded). It carries the bytes every layer was made of (`inputs/blobs/`), the
//! lifecycle logs and the raw control records. It verifies as
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
    for platform in ["linux-amd64", "linux-arm64"] {
        for check in [
            "cases.verdicts",
            "boundary.observed",
            "boundary.machine",
            "image.regenerated",
            "image.elf",
            "execution.lifecycle",
            "controls.negative",
        ] {
            assert!(
                run.stdout.contains(&format!("✓ {platform}/{check}")),
                "{platform}/{check}: {}",
                run.stdout
            );
        }
    }
    assert!(run.stdout.contains("(emulated)"), "{}", run.stdout);
    assert!(run.stdout.contains("signer   key id "), "{}", run.stdout);
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
    // The header says a key was given and nothing verified with it (not "no --key").
    assert!(
        run.stdout
            .contains("signer   none: no signature of the envelope verifies with the given key"),
        "{}",
        run.stdout
    );
}

#[test]
fn every_mutation_of_the_reference_bundle_is_rejected() {
    let report = scopebox_receipts::selftest::run(&reference()).expect("self-test runs");
    assert!(report.rows.len() >= 25, "{} classes", report.rows.len());
    let not_rejected: Vec<_> = report.rows.iter().filter(|r| !r.rejected()).collect();
    assert!(not_rejected.is_empty(), "not rejected: {not_rejected:#?}");
    crate::selftest::assert_recomputing_checks_reject(&report);
}

#[test]
fn the_report_keeps_the_receipts_platform_order_whatever_the_threads_did() {
    use scopebox_receipts::verify::verify_dir;
    // Each platform is checked on a thread of its own: the report must still read platform by
    // platform in the receipt's order (amd64's checks, then arm64's), after every bundle-wide
    // check, and be the same report each time.
    let first = verify_dir(&reference(), &Default::default()).unwrap();
    assert!(first.verified, "{first:?}");
    let ids: Vec<&str> = first.checks.iter().map(|c| c.id.as_str()).collect();
    let scoped = |id: &str| id.starts_with("linux-amd64/") || id.starts_with("linux-arm64/");
    let first_scoped = ids.iter().position(|id| scoped(id)).unwrap();
    let last_scoped = ids.iter().rposition(|id| scoped(id)).unwrap();
    let last_amd64 = ids
        .iter()
        .rposition(|id| id.starts_with("linux-amd64/"))
        .unwrap();
    let first_arm64 = ids
        .iter()
        .position(|id| id.starts_with("linux-arm64/"))
        .unwrap();
    assert!(ids[first_scoped].starts_with("linux-amd64/"), "{ids:?}");
    assert!(last_amd64 < first_arm64, "{ids:?}");
    assert!(
        ids[first_scoped..=last_scoped].iter().all(|id| scoped(id)),
        "{ids:?}"
    );
    assert!(ids[..first_scoped].contains(&"bundle.bounds"), "{ids:?}");
    for _ in 0..3 {
        assert_eq!(
            verify_dir(&reference(), &Default::default()).unwrap(),
            first
        );
    }
}

#[test]
fn case_counts_that_overflow_when_summed_are_a_failed_check_not_a_panic() {
    let tmp = tempdir();
    let bundle = tmp.path().join("reference");
    crate::hostile::copy_tree(&reference(), &bundle).unwrap();
    std::fs::remove_file(bundle.join("receipt.dsse.json")).unwrap();
    crate::util::edit_json(&bundle.join("receipt.json"), |r| {
        for p in r["platforms"].as_array_mut().unwrap() {
            p["summary"]["total"] = u64::MAX.into();
            p["summary"]["passed"] = u64::MAX.into();
        }
    });
    let report = scopebox_receipts::verify::verify_dir(&bundle, &Default::default()).unwrap();
    let summary = report
        .checks
        .iter()
        .find(|c| c.id == "platforms.summary")
        .unwrap();
    assert!(!summary.ok);
    assert!(
        summary
            .reason
            .as_deref()
            .unwrap_or_default()
            .contains("add up to more than any summary can hold"),
        "{summary:?}"
    );
}
