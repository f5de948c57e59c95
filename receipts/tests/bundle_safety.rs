//! Hostile bundles: nothing below the bundle root is followed, special files are refused,
//! garbage anywhere is a clear failure and never a panic or a pass.

use crate::util::{relist, specimen, tempdir, verify_bin};
use scopebox_receipts::verify::{verify_dir, BundleErrorKind, VerifyOptions};

#[test]
fn a_symlinked_capture_is_rejected_even_with_identical_bytes() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let stdout = bundle.join("platforms/linux-amd64/evidence/cases/case-000/stdout");
    let outside = tmp.path().join("outside");
    std::fs::copy(&stdout, &outside).unwrap();
    std::fs::remove_file(&stdout).unwrap();
    std::os::unix::fs::symlink(&outside, &stdout).unwrap();
    let report = verify_dir(&bundle, &VerifyOptions::default()).unwrap();
    assert!(!report.verified);
    let kinds = report
        .checks
        .iter()
        .find(|c| c.id == "files.kinds")
        .unwrap();
    assert_eq!(
        kinds.failures,
        vec!["platforms/linux-amd64/evidence/cases/case-000/stdout is a symlink"]
    );
}

#[test]
fn a_symlinked_receipt_makes_the_bundle_unreadable() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let receipt = bundle.join("receipt.json");
    let real = tmp.path().join("receipt.json");
    std::fs::rename(&receipt, &real).unwrap();
    std::os::unix::fs::symlink(&real, &receipt).unwrap();
    let err = verify_dir(&bundle, &VerifyOptions::default()).unwrap_err();
    assert!(
        matches!(err.kind, BundleErrorKind::ReceiptNotAFile),
        "{err}"
    );
}

#[test]
fn a_fifo_in_the_bundle_is_rejected_without_blocking() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let fifo = bundle.join("platforms/linux-amd64/evidence/pipe");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !matches!(status, Ok(s) if s.success()) {
        eprintln!("skipping: mkfifo unavailable");
        return;
    }
    let report = verify_dir(&bundle, &VerifyOptions::default()).unwrap();
    assert!(!report.verified);
    assert!(report.failed_ids().contains(&"files.kinds"));
}

#[test]
fn garbage_receipt_is_unreadable_and_garbage_records_are_failed_checks() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    // Garbage inside the bundle: failed checks naming the file, not a crash.
    for rel in [
        "platforms/linux-amd64/evidence/cases/case-001/record.json",
        "platforms/linux-amd64/outer/execution.json",
        "platforms/linux-amd64/inputs/image-layer.json",
        "platforms/linux-amd64/evidence/controls.json",
    ] {
        std::fs::write(bundle.join(rel), b"\x00\xff{not json").unwrap();
        relist(&bundle, rel);
    }
    let report = verify_dir(&bundle, &VerifyOptions::default()).unwrap();
    assert!(!report.verified);
    let all: Vec<&String> = report.checks.iter().flat_map(|c| &c.failures).collect();
    for rel in [
        "case-001/record.json",
        "platforms/linux-amd64/outer/execution.json",
        "platforms/linux-amd64/inputs/image-layer.json",
    ] {
        assert!(
            all.iter()
                .any(|f| f.contains(rel) && f.contains("does not parse")),
            "{rel}: {all:?}"
        );
    }
    // A receipt that is not a receipt: exit 2.
    std::fs::write(bundle.join("receipt.json"), b"[1,2,3]").unwrap();
    let run = verify_bin(&[bundle.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("does not parse as a version 2 receipt"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_listed_path_that_escapes_the_bundle_is_rejected() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    crate::util::edit_json(&bundle.join("receipt.json"), |r| {
        r["files"]["../outside"] = "0".repeat(64).into();
    });
    let report = verify_dir(&bundle, &VerifyOptions::default()).unwrap();
    let digests = report
        .checks
        .iter()
        .find(|c| c.id == "files.digests")
        .unwrap();
    assert_eq!(
        digests.failures,
        vec!["\"../outside\" is not a bundle file path"]
    );
}
