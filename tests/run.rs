//! Full runs against the real engine: a small matrix passes with a complete bundle that the
//! independent verifier accepts; the stall fault matrix runs into the deadline, is killed and
//! exported — in that order, as its lifecycle log shows — and leaves nothing behind.

use crate::support::{
    labelled, require_engine, run_id, run_matrix, scopebox, small_matrix, tempdir, workspace,
};
use scopebox_schema::digest::sha256_file;
use scopebox_schema::receipt::{Execution, Receipt, ENVELOPE_FILE, RECEIPT_FILE};
use std::path::Path;

/// Every file in the bundle is listed in receipt.json with its digest, and nothing else is.
fn assert_bundle_complete(bundle: &Path) -> Receipt {
    let receipt: Receipt =
        serde_json::from_slice(&std::fs::read(bundle.join(RECEIPT_FILE)).unwrap())
            .expect("receipt.json parses strictly");
    let on_disk = scopebox::receipt::list_files(bundle).unwrap();
    assert_eq!(
        on_disk.keys().collect::<Vec<_>>(),
        receipt.files.keys().collect::<Vec<_>>(),
        "files on disk and files listed differ"
    );
    for (path, digest) in &receipt.files {
        assert_ne!(path, RECEIPT_FILE);
        assert_ne!(path, ENVELOPE_FILE);
        assert_eq!(
            &sha256_file(&bundle.join(path)).unwrap(),
            digest,
            "{path} does not match its listed digest"
        );
    }
    for required in [
        "inputs/pack-manifest.json",
        "inputs/matrix.json",
        "inputs/boundary-policy.json",
        "inputs/image-config.json",
        "inputs/image-layer.json",
        "outer/container-inspect.json",
        "outer/image-inspect.json",
        "outer/execution.json",
        "evidence/boundary.json",
        "evidence/controls.json",
        "evidence/controls/positive/record.json",
        "evidence/controls/negative/record.json",
        "evidence/controls/negative/stdout",
        "evidence/controls/negative/stderr",
    ] {
        assert!(receipt.files.contains_key(required), "{required} missing");
    }
    receipt
}

#[test]
fn a_full_run_passes_and_writes_a_complete_verifiable_bundle() {
    require_engine!();
    let dir = tempdir();
    let matrix = small_matrix(dir.path(), 5);
    let bundle = dir.path().join("bundle");
    let out = run_matrix(&bundle, &matrix, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("scopebox: PASSED: 5/5 cases passed"),
        "{}",
        out.stderr
    );

    let receipt = assert_bundle_complete(&bundle);
    assert_eq!(receipt.summary.total, 5);
    assert_eq!(receipt.summary.passed, 5);
    assert!(receipt.cases.iter().all(|c| c.verdict == "pass"));
    assert!(receipt.boundary.applied_meets_policy && receipt.boundary.observed_meets_policy);
    assert!(receipt.cleanup.container_removed && receipt.cleanup.volume_removed);
    assert_eq!(receipt.cleanup.leftovers, 0);
    assert_eq!(receipt.execution.exit_code, Some(0));
    assert_eq!(
        std::fs::read(bundle.join("inputs/matrix.json")).unwrap(),
        std::fs::read(&matrix).unwrap(),
        "the matrix is bundled byte for byte"
    );
    // The image ID is the digest of the bundled config, as the engine reported it.
    let config = std::fs::read(bundle.join("inputs/image-config.json")).unwrap();
    assert_eq!(
        receipt.inputs.image_id,
        format!("sha256:{}", scopebox_schema::digest::sha256_hex(&config))
    );
    let inspect: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("outer/image-inspect.json")).unwrap())
            .unwrap();
    assert_eq!(inspect["Id"], receipt.inputs.image_id.as_str());

    // The independent verifier accepts it.
    let report =
        scopebox_receipts::verify::verify_dir(&bundle, &Default::default()).expect("readable");
    assert!(
        report.verified,
        "verifier failed: {:?}",
        report.failed_ids()
    );

    // Nothing of this run is left in the engine.
    let id = run_id(&out.stdout);
    assert_eq!(receipt.run_id, id);
    assert!(labelled(&format!("scopebox.run={id}")).is_empty());

    // Signed with a fresh key, it verifies against the public half.
    let prefix = dir.path().join("release-key");
    let out = scopebox(&["keygen", "--out", prefix.to_str().unwrap()], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let private = dir.path().join("release-key.pem");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&private).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    let out = scopebox(
        &[
            "sign",
            bundle.to_str().unwrap(),
            "--key",
            private.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(bundle.join(ENVELOPE_FILE).is_file());
    let public = std::fs::read_to_string(dir.path().join("release-key.pub.pem")).unwrap();
    let report = scopebox_receipts::verify::verify_dir(
        &bundle,
        &scopebox_receipts::verify::VerifyOptions {
            public_key_pem: Some(public),
            ..Default::default()
        },
    )
    .expect("readable");
    assert!(report.verified, "signed bundle: {:?}", report.failed_ids());
    // keygen never overwrites.
    let out = scopebox(&["keygen", "--out", prefix.to_str().unwrap()], &[]);
    assert_eq!(out.code, 1, "{out:?}");
}

#[test]
fn the_stall_fault_hits_the_deadline_is_killed_exported_and_removed() {
    require_engine!();
    let dir = tempdir();
    let bundle = dir.path().join("bundle");
    let matrix = workspace().join("harness/matrix/faults/stall.json");
    let out = run_matrix(&bundle, &matrix, &["--deadline", "5"]);
    assert_eq!(out.code, 124, "{}", out.stderr);
    assert!(out.stderr.contains("TIMED OUT"), "{}", out.stderr);

    let execution: Execution =
        serde_json::from_slice(&std::fs::read(bundle.join("outer/execution.json")).unwrap())
            .unwrap();
    assert_eq!(execution.status, "timed-out");
    assert!(execution.timed_out);
    assert_eq!(execution.signal.as_deref(), Some("SIGKILL"));
    assert_eq!(execution.deadline_seconds, 5);
    // Killed before the export: the inspection taken after it shows a stopped, killed container.
    let inspect: serde_json::Value = serde_json::from_slice(
        &std::fs::read(bundle.join("outer/container-inspect.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(inspect["State"]["Running"], false);
    assert_eq!(inspect["State"]["ExitCode"], 137);
    // The evidence written before the stall was still exported.
    assert!(bundle.join("evidence/boundary.json").is_file());
    assert!(bundle
        .join("evidence/cases/before-stall/record.json")
        .is_file());
    assert!(
        !bundle.join("evidence/summary.json").exists(),
        "the runner never finished"
    );

    // The lifecycle log proves the order: the deadline passed at least 5 s after the start,
    // then the kill, then the export, the inspection, and the removals.
    let names: Vec<&str> = execution.events.iter().map(|e| e.event.name()).collect();
    let pos = |name: &str| {
        names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("{name} not logged: {names:?}"))
    };
    assert!(pos("started") < pos("deadline-passed"), "{names:?}");
    assert!(pos("deadline-passed") < pos("killed"), "{names:?}");
    assert!(pos("killed") < pos("evidence-exported"), "{names:?}");
    assert!(
        pos("container-inspected") < pos("container-removed"),
        "{names:?}"
    );
    assert_eq!(names.last(), Some(&"swept"));
    let at = |name: &str| execution.events[pos(name)].at_ms;
    assert!(at("deadline-passed") - at("started") >= 5_000);

    let receipt = assert_bundle_complete(&bundle);
    assert!(receipt.execution.timed_out);
    assert!(receipt.cleanup.container_removed && receipt.cleanup.volume_removed);
    // The verifier rejects the run (it timed out) but finds its lifecycle in a safe order.
    let report =
        scopebox_receipts::verify::verify_dir(&bundle, &Default::default()).expect("readable");
    let check = |id: &str| report.checks.iter().find(|c| c.id == id).unwrap().clone();
    assert!(
        check("execution.lifecycle").ok,
        "{:?}",
        check("execution.lifecycle")
    );
    assert!(!check("execution.completed").ok);
    assert!(!report.verified);
    let id = run_id(&out.stdout);
    assert!(labelled(&format!("scopebox.run={id}")).is_empty());
}

#[test]
fn a_failing_case_fails_the_run_with_exit_1_and_still_cleans_up() {
    require_engine!();
    let dir = tempdir();
    let matrix_path = small_matrix(dir.path(), 2);
    let mut matrix: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&matrix_path).unwrap()).unwrap();
    // The second case now expects an exit code the candidate never gives.
    matrix["cases"][1]["expect"]["exitCode"] = 42.into();
    std::fs::write(&matrix_path, serde_json::to_vec(&matrix).unwrap()).unwrap();
    let bundle = dir.path().join("bundle");
    let out = run_matrix(&bundle, &matrix_path, &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("FAILED: 1/2 cases passed"),
        "{}",
        out.stderr
    );
    let receipt = assert_bundle_complete(&bundle);
    assert_eq!(receipt.cases[0].verdict, "pass");
    assert_eq!(receipt.cases[1].verdict, "fail");
    assert!(receipt.cleanup.container_removed && receipt.cleanup.volume_removed);
    let report =
        scopebox_receipts::verify::verify_dir(&bundle, &Default::default()).expect("readable");
    assert!(
        !report.verified,
        "the verifier must reject a failed case too"
    );
    let id = run_id(&out.stdout);
    assert!(labelled(&format!("scopebox.run={id}")).is_empty());
}
