//! The binary: a ✓/✗ check list naming every failure, the `--json` document (deserialized
//! strictly, so drift fails), and the documented exit codes 0 / 1 / 2.

use crate::util::{edit_json, relist, specimen, tempdir, verify_bin};
use scopebox_receipts::verify::report::JsonReport;

#[test]
fn a_consistent_bundle_verifies_with_exit_0_and_a_check_list() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 3);
    let run = verify_bin(&[bundle.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("✓ linux-amd64/cases.verdicts"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("✓ linux-amd64/boundary.applied"));
    assert!(!run.stdout.contains('✗'));
    // Unsigned and no key: the signature is listed as not checked, never as passed.
    assert!(
        run.stdout
            .ends_with("checks passed; not checked: signature.verified\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_rejected_bundle_exits_1_and_names_the_failed_check_and_reason() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    edit_json(
        &bundle.join("platforms/linux-amd64/outer/container-inspect.json"),
        |d| d["HostConfig"]["NetworkMode"] = "host".into(),
    );
    relist(
        &bundle,
        "platforms/linux-amd64/outer/container-inspect.json",
    );
    let run = verify_bin(&[bundle.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains("✗ linux-amd64/boundary.applied"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("network-mode: expected none, got host"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("rejected:"), "{}", run.stdout);
}

#[test]
fn json_output_is_the_same_list_as_a_strict_document() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    let good = verify_bin(&[bundle.to_str().unwrap(), "--json"]);
    assert_eq!(good.code, 0);
    let doc: JsonReport = serde_json::from_str(&good.stdout).expect("strict JSON report");
    assert_eq!(doc.result, "verified");
    assert!(doc.checks.iter().all(|c| c.ok && c.reason.is_none()));
    let text = verify_bin(&[bundle.to_str().unwrap()]);
    for check in &doc.checks {
        assert!(
            text.stdout.contains(&check.id),
            "{} missing from text",
            check.id
        );
    }

    std::fs::write(bundle.join("platforms/linux-amd64/evidence/extra"), b"x").unwrap();
    let bad = verify_bin(&[bundle.to_str().unwrap(), "--json"]);
    assert_eq!(bad.code, 1);
    let doc: JsonReport = serde_json::from_str(&bad.stdout).expect("strict JSON report");
    assert_eq!(doc.result, "rejected");
    let unlisted = doc
        .checks
        .iter()
        .find(|c| c.id == "files.unlisted")
        .unwrap();
    assert!(!unlisted.ok);
    assert_eq!(
        unlisted.failures,
        vec!["platforms/linux-amd64/evidence/extra is present but not listed"]
    );
}

#[test]
fn an_unreadable_bundle_exits_2_with_a_hint() {
    let tmp = tempdir();
    let missing = tmp.path().join("nope");
    let run = verify_bin(&[missing.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("failed to read the bundle"),
        "{}",
        run.stderr
    );

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let run = verify_bin(&[empty.to_str().unwrap(), "--json"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    let doc: JsonReport = serde_json::from_str(&run.stdout).expect("JSON even when unreadable");
    assert_eq!(doc.result, "unreadable");
    assert!(doc.error.unwrap().contains("no receipt.json"));
}

#[test]
fn usage_errors_exit_2_and_help_documents_the_exit_codes() {
    assert_eq!(verify_bin(&[]).code, 2);
    assert_eq!(verify_bin(&["a", "--frobnicate"]).code, 2);
    let help = verify_bin(&["--help"]);
    assert_eq!(help.code, 0);
    for line in ["0  verified", "1  rejected", "2  could not read the bundle"] {
        assert!(
            help.stdout.contains(line),
            "{line:?} not in help:\n{}",
            help.stdout
        );
    }
}

#[test]
fn a_key_that_is_not_a_pem_is_a_failed_signature_check_not_a_panic() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let key = tmp.path().join("key.pub.pem");
    std::fs::write(&key, "not a key").unwrap();
    let run = verify_bin(&[bundle.to_str().unwrap(), "--key", key.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("✗ signature.verified"),
        "{}",
        run.stdout
    );
    let missing = verify_bin(&[bundle.to_str().unwrap(), "--key", "/nonexistent.pem"]);
    assert_eq!(missing.code, 2);
}

#[test]
fn another_policy_can_be_named_and_is_then_the_one_judged_against() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let policy = tmp.path().join("policy.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(scopebox_receipts::verify::REFERENCE_POLICY_JSON).unwrap();
    doc["pidsLimit"] = 128.into();
    std::fs::write(&policy, serde_json::to_vec(&doc).unwrap()).unwrap();
    let run = verify_bin(&[
        bundle.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("pidsLimit differ"), "{}", run.stdout);
    assert!(
        run.stdout.contains("pids-limit: expected 128, got 256"),
        "{}",
        run.stdout
    );
    std::fs::write(&policy, b"{}").unwrap();
    assert_eq!(
        verify_bin(&[
            bundle.to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap()
        ])
        .code,
        2
    );
}

#[test]
fn the_report_starts_with_what_was_verified_and_expectations_are_named_checks() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let receipt: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("receipt.json")).unwrap()).unwrap();
    let amd = &receipt["platforms"][0]["inputs"];
    let candidate = amd["candidateArchive"]["sha256"].as_str().unwrap();
    let image = amd["imageId"].as_str().unwrap();
    let b = bundle.to_str().unwrap();

    let run = verify_bin(&[b, "--expect-candidate", candidate, "--expect-image", image]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let header: Vec<&str> = run.stdout.lines().take(8).collect();
    assert!(
        header[1].contains("run") && header[1].contains("synthetic-0001"),
        "{header:?}"
    );
    assert!(header[2].contains(receipt["matrix"]["sha256"].as_str().unwrap()));
    assert!(header
        .iter()
        .any(|l| l.contains("linux/amd64") && l.contains(candidate)));
    assert!(header.iter().any(|l| l.contains(image)));
    assert!(
        header.iter().any(|l| l.contains("(emulated)")),
        "{header:?}"
    );
    assert!(header
        .iter()
        .any(|l| l.contains("signer   none: no signature was checked against any key")));
    assert!(run.stdout.contains("✓ expect.candidate"));
    assert!(run.stdout.contains("✓ expect.image"));

    // Another candidate or image: a named failure, exit 1.
    let other = "0".repeat(64);
    let run = verify_bin(&[b, "--expect-candidate", &other, "--expect-image", &other]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("✗ expect.candidate"), "{}", run.stdout);
    assert!(run.stdout.contains("✗ expect.image"), "{}", run.stdout);

    let json = verify_bin(&[b, "--json"]);
    let doc: JsonReport = serde_json::from_str(&json.stdout).unwrap();
    let subject = doc.subject.expect("the JSON report names its subject");
    assert_eq!(subject.run_id, "synthetic-0001");
    assert_eq!(subject.platforms.len(), 2);
    assert_eq!(subject.platforms[0].candidate_sha256, candidate);
}

#[test]
fn a_schema_1_bundle_is_rejected_by_one_named_check() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    edit_json(&bundle.join("receipt.json"), |r| {
        r["schemaVersion"] = 1.into()
    });
    let run = verify_bin(&[bundle.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("✗ receipt.schema"), "{}", run.stdout);
    assert!(run.stdout.contains("predates"), "{}", run.stdout);
}

#[test]
fn a_platform_whose_runner_saw_another_machine_is_rejected() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let rel = "platforms/linux-arm64/evidence/boundary.json";
    edit_json(&bundle.join(rel), |o| o["machine"] = "x86_64".into());
    relist(&bundle, rel);
    edit_json(&bundle.join("receipt.json"), |r| {
        r["platforms"][1]["boundary"]["observed"]["machine"] = "x86_64".into()
    });
    let run = verify_bin(&[bundle.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains("✗ linux-arm64/boundary.machine"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("✓ linux-amd64/boundary.machine"),
        "{}",
        run.stdout
    );
}
