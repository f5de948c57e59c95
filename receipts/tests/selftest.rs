//! The mutation self-test over the synthetic specimen: at least 60 classes, every one applied
//! and rejected; the digest-consistent ones are caught by something other than file hashing.

use crate::util::{specimen, tempdir, verify_bin};
use scopebox_receipts::selftest;

#[test]
fn every_mutation_class_is_rejected() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 3);
    let report = selftest::run(&bundle).expect("self-test runs");
    assert!(
        report.rows.len() >= 60,
        "only {} classes",
        report.rows.len()
    );
    for row in &report.rows {
        assert_eq!(row.outcome, "rejected", "{}: {:?}", row.class, row);
    }
    let classes: std::collections::BTreeSet<&str> =
        report.rows.iter().map(|r| r.class.as_str()).collect();
    assert_eq!(classes.len(), report.rows.len(), "class names are distinct");
}

#[test]
fn digest_consistent_mutations_are_caught_by_semantic_checks() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    let report = selftest::run(&bundle).expect("self-test runs");
    for row in report.rows.iter().filter(|r| r.digest_consistent) {
        assert!(
            row.rejected_by
                .iter()
                .any(|id| !id.starts_with("files.") || id == "files.kinds" || id == "files.layout"),
            "{} was only caught by hashing: {:?}",
            row.class,
            row.rejected_by
        );
        assert!(
            !row.rejected_by
                .iter()
                .any(|id| id == "files.digests" || id == "files.unlisted")
                || row.class == "symlink-smuggled",
            "{} left a digest inconsistent: {:?}",
            row.class,
            row.rejected_by
        );
    }
}

/// The lifecycle and raw-control classes are caught by the checks that recompute them, not
/// only by a neighbouring check that happens to fail too.
pub fn assert_recomputing_checks_reject(report: &selftest::SelfTestReport) {
    let by = |class: &str| {
        report
            .rows
            .iter()
            .find(|r| r.class == class)
            .unwrap_or_else(|| panic!("no class {class}"))
            .rejected_by
            .iter()
            // junit.xml restates the receipt: a mutation of what it restates (a control's
            // records) fails it too, beside the check that recomputes them.
            .filter(|id| *id != "junit.report")
            .cloned()
            .collect::<Vec<_>>()
    };
    for class in [
        "execution-export-before-exit",
        "execution-inspect-after-removal",
        "execution-removal-unrecorded",
    ] {
        assert_eq!(by(class), ["linux-amd64/execution.lifecycle"], "{class}");
    }
    // Recast as timed out, it fails `execution.completed` too; the order check must fire anyway.
    assert!(
        by("execution-export-before-kill").contains(&"linux-amd64/execution.lifecycle".to_string()),
        "{:?}",
        by("execution-export-before-kill")
    );
    for class in [
        "negative-control-not-caught",
        "negative-control-fixture-swapped",
        "negative-control-other-command",
        "negative-control-record-removed",
        "negative-control-missed",
    ] {
        assert_eq!(by(class), ["linux-amd64/controls.negative"], "{class}");
    }
    for class in ["positive-control-not-fired", "positive-control-failed"] {
        assert_eq!(by(class), ["linux-amd64/controls.positive"], "{class}");
    }
    // A canary leaked base64-encoded is found by the direct canary re-check, not only because
    // the re-derived verdict differs.
    for class in ["stdout-leaks-base64-canary", "written-file-canary-hidden"] {
        assert!(
            by(class).contains(&"linux-amd64/cases.canaries".to_string()),
            "{class}: {:?}",
            by(class)
        );
    }
    // The witness: re-judging the raw witness records catches each edit; a stand-in forged
    // consistently (controls.json re-derived) is rejected because it is no longer caught.
    for class in [
        "witness-exec-dropped",
        "witness-record-removed",
        "witness-events-reordered",
        "witness-pid-changed",
        "witness-path-changed",
    ] {
        assert!(
            by(class).contains(&"linux-amd64/cases.witness".to_string()),
            "{class}: {:?}",
            by(class)
        );
    }
    for class in [
        "positive-control-witness-report-dropped",
        "positive-control-witness-other-write",
        "negative-control-witness-second-exec",
    ] {
        assert_eq!(by(class), ["linux-amd64/controls.witness"], "{class}");
    }
    for class in ["adversarial-exec-dropped", "adversarial-descendant-dropped"] {
        assert_eq!(by(class), ["linux-amd64/controls.adversarial"], "{class}");
    }
    // The exact environment: the invocation check names it, whatever else re-judging finds.
    for class in [
        "env-superset-ld-preload",
        "env-duplicate-home",
        "env-reordered",
    ] {
        assert!(
            by(class).contains(&"linux-amd64/cases.invocation".to_string()),
            "{class}: {:?}",
            by(class)
        );
    }
    // The bound inputs: each edit with every digest recomputed is caught by regenerating the
    // layer from the bundled bytes.
    for class in [
        "layer-listing-edited",
        "matrix-stripped-digests-recomputed",
        "candidate-relabelled",
    ] {
        assert!(
            by(class).contains(&"linux-amd64/image.regenerated".to_string()),
            "{class}: {:?}",
            by(class)
        );
    }
    assert!(
        by("matrix-stripped-digests-recomputed")
            .contains(&"linux-arm64/image.regenerated".to_string()),
        "{:?}",
        by("matrix-stripped-digests-recomputed")
    );
    assert!(
        by("platform-dropped-silently").contains(&"blobs.bound".to_string()),
        "{:?}",
        by("platform-dropped-silently")
    );
    // Strictness and bounds: each hostile shape is stopped by the check built for it.
    for class in [
        "matrix-fill-bomb",
        "matrix-fixture-flood",
        "receipt-case-flood",
    ] {
        assert_eq!(by(class), ["bundle.bounds"], "{class}");
    }
    let named = |class: &str, check: &str| {
        assert!(
            by(class).contains(&check.to_string()),
            "{class}: {:?}",
            by(class)
        )
    };
    named("duplicate-key-inspect", "linux-amd64/boundary.applied");
    named("duplicate-key-record", "linux-amd64/cases.coverage");
    named("duplicate-key-matrix", "matrix.valid");
    named("env-superset", "linux-amd64/cases.invocation");
    named("run-id-replayed", "linux-amd64/image.inspect");
    named("record-observation-flood", "linux-amd64/cases.coverage");
    named("file-name-escape-smuggled", "files.layout");
    named(
        "matrix-case-dropped-all-digests",
        "linux-amd64/image.regenerated",
    );
    named(
        "matrix-case-dropped-all-digests",
        "linux-arm64/image.regenerated",
    );
}

#[test]
fn lifecycle_and_control_mutations_are_caught_by_the_checks_that_recompute_them() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    let report = selftest::run(&bundle).expect("self-test runs");
    assert_recomputing_checks_reject(&report);
}

#[test]
fn the_self_test_binary_prints_the_table_and_exits_0() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    let run = verify_bin(&["--self-test", bundle.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("stdout-rewritten"));
    assert!(run.stdout.contains("cases.canaries"));
    assert!(
        run.stdout.contains("mutation classes rejected\n"),
        "{}",
        run.stdout
    );
    // The original bundle is untouched.
    assert_eq!(verify_bin(&[bundle.to_str().unwrap()]).code, 0);
}

#[test]
fn a_bundle_that_does_not_verify_cannot_be_self_tested() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    std::fs::write(bundle.join("platforms/linux-amd64/evidence/extra"), b"x").unwrap();
    let err = selftest::run(&bundle).unwrap_err();
    assert!(err.to_string().contains("files.unlisted"), "{err}");
    assert_eq!(
        verify_bin(&["--self-test", bundle.to_str().unwrap()]).code,
        1
    );
}

#[test]
fn a_real_bundle_with_provenance_and_its_signatures_can_be_self_tested() {
    // The committed reference bundle came from a real run: its receipt has provenance (the run
    // built its candidate), so a keyed verification requires provenance.dsse.json as well.
    let tmp = tempdir();
    let bundle = tmp.path().join("reference");
    crate::hostile::copy_tree(
        &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference-bundle"),
        &bundle,
    )
    .unwrap();
    // Signed with a key the self-test does not hold, envelopes of both kinds.
    std::fs::write(bundle.join("provenance.dsse.json"), b"{}").unwrap();
    let report = selftest::run(&bundle).expect("the self-test runs on a real bundle");
    for row in &report.rows {
        assert_eq!(row.outcome, "rejected", "{}: {:?}", row.class, row);
    }
}
