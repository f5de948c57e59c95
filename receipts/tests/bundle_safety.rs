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
        matches!(err.kind, BundleErrorKind::ReceiptNotAFile("symlink")),
        "{err}"
    );
    assert!(err
        .to_string()
        .ends_with("receipt.json is a symlink, not a regular file"));
}

#[test]
fn a_receipt_that_is_a_directory_is_named_as_one() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    std::fs::remove_file(bundle.join("receipt.json")).unwrap();
    std::fs::create_dir(bundle.join("receipt.json")).unwrap();
    let run = verify_bin(&[bundle.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains(": receipt.json is a directory, not a file\nhint: pass the run's bundle"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_file_over_the_size_bound_is_named_escaped() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    // Sparse: no 64 MiB written.
    let big =
        std::fs::File::create(bundle.join("platforms/linux-amd64/evidence/\x1b[31mbig")).unwrap();
    big.set_len(scopebox_receipts::verify::bundle::MAX_FILE_BYTES + 1)
        .unwrap();
    let run = verify_bin(&[bundle.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            ": platforms/linux-amd64/evidence/\\u{1b}[31mbig is larger than 67108864 bytes\n"
        ),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains('\x1b'), "{}", run.stderr);
}

#[test]
fn a_file_that_cannot_be_read_is_named() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let rel = "platforms/linux-amd64/outer/execution.json";
    std::fs::set_permissions(bundle.join(rel), std::fs::Permissions::from_mode(0o000)).unwrap();
    let verify = env!("CARGO_BIN_EXE_scopebox-verify");
    // As root, permissions are only enforced without the capabilities that bypass them.
    let as_root = std::fs::metadata(tmp.path()).unwrap().uid() == 0;
    let drop_caps = ["--bounding-set=-dac_override,-dac_read_search"];
    let mut command = if as_root {
        let usable = std::process::Command::new("setpriv")
            .args(drop_caps)
            .arg("true")
            .status()
            .is_ok_and(|s| s.success());
        if !usable {
            eprintln!("skipping: running as root without setpriv to drop CAP_DAC_OVERRIDE");
            return;
        }
        let mut command = std::process::Command::new("setpriv");
        command.args(drop_caps).arg(verify);
        command
    } else {
        std::process::Command::new(verify)
    };
    let out = command.arg(&bundle).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{rel} cannot be read: Permission denied")),
        "{stderr}"
    );
}

#[test]
fn a_fifo_in_the_bundle_is_rejected_without_blocking() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let fifo = bundle.join("platforms/linux-amd64/evidence/pipe");
    crate::util::make_fifo(&fifo);
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
