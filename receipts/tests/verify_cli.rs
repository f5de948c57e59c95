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
    for line in [
        "0  verified",
        "1  rejected",
        "2  could not read the bundle",
        "3  the report could not be written to stdout",
    ] {
        assert!(
            help.stdout.contains(line),
            "{line:?} not in help:\n{}",
            help.stdout
        );
    }
}

#[test]
fn a_key_that_is_not_a_pem_is_a_usage_error_with_the_hint_on_its_own_line() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let key = tmp.path().join("key.pub.pem");
    std::fs::write(&key, "not a key").unwrap();
    let b = bundle.to_str().unwrap();
    let run = verify_bin(&[b, "--key", key.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        format!(
            "error: failed to read the key {}: it is not an SPKI ed25519 public key PEM\n\
             hint: pass the PREFIX.pub.pem written by `scopebox keygen`\n",
            key.display()
        )
    );
    let doc = json_error(&[b, "--key", key.to_str().unwrap(), "--json"], 2, "usage");
    assert_eq!(
        doc.hint.as_deref(),
        Some("pass the PREFIX.pub.pem written by `scopebox keygen`")
    );
    let missing = verify_bin(&[b, "--key", "/nonexistent.pem"]);
    assert_eq!(missing.code, 2);
    assert!(
        missing
            .stderr
            .starts_with("error: failed to read the key /nonexistent.pem: "),
        "{}",
        missing.stderr
    );
}

/// Runs the verifier with `--json` added and requires exit `code` and exactly one JSON object
/// on stdout, of the report's shape, saying `result` with a one-line error.
fn json_error(args: &[&str], code: i32, result: &str) -> JsonReport {
    let run = verify_bin(args);
    assert_eq!(run.code, code, "{args:?}: {}{}", run.stdout, run.stderr);
    let doc: JsonReport = serde_json::from_str(&run.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: one JSON object on stdout ({e}): {:?}",
            run.stdout
        )
    });
    assert_eq!(doc.schema_version, 1);
    assert_eq!(doc.result, result, "{args:?}");
    let error = doc.error.clone().expect("an error");
    assert!(
        error.starts_with("failed to ") || result == "usage",
        "{args:?}: {error}"
    );
    assert!(!error.contains('\n'), "{args:?}: {error:?}");
    assert!(!doc.hint.clone().unwrap_or_default().contains('\n'));
    assert!(doc.checks.is_empty() && doc.subject.is_none());
    // stderr says it too, for a person.
    assert!(
        run.stderr.starts_with("error: "),
        "{args:?}: {}",
        run.stderr
    );
    doc
}

#[test]
fn json_answers_on_every_exit_path() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let b = bundle.to_str().unwrap();
    let doc = json_error(&["--json", "--key", "/nonexistent", b], 2, "usage");
    assert!(
        doc.error
            .unwrap()
            .starts_with("failed to read the key /nonexistent: "),
        "{}",
        b
    );
    assert_eq!(doc.bundle, b);
    let doc = json_error(&["--json", "--policy", "/nonexistent", b], 2, "usage");
    assert!(doc
        .error
        .unwrap()
        .starts_with("failed to read the policy /nonexistent: "));
    // A usage error clap reports: its message, and its tip (or --help) as the hint.
    let doc = json_error(&["--json", "--bogus", b], 2, "usage");
    assert_eq!(
        doc.error.as_deref(),
        Some("unexpected argument '--bogus' found")
    );
    assert!(doc.hint.is_some());
    let doc = json_error(&["--json"], 2, "usage");
    assert!(doc
        .error
        .unwrap()
        .contains("required arguments were not provided: <BUNDLE>"),);
    // An unreadable bundle: the hint out of the message.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let doc = json_error(&["--json", empty.to_str().unwrap()], 2, "unreadable");
    assert_eq!(
        doc.hint.as_deref(),
        Some("pass the run's bundle directory (the one holding receipt.json)")
    );

    // --self-test: a FIFO for a bundle, a bundle with duplicate keys, a bundle that does not
    // verify unmutated.
    let fifo = tmp.path().join("fifo");
    crate::util::make_fifo(&fifo);
    json_error(
        &["--self-test", "--json", fifo.to_str().unwrap()],
        2,
        "unreadable",
    );
    let doubled = tmp.path().join("doubled");
    crate::util::copy_tree(&bundle, &doubled).unwrap();
    let receipt = std::fs::read_to_string(doubled.join("receipt.json")).unwrap();
    let receipt = receipt.replacen('{', "{\"runId\": \"x\", ", 1);
    std::fs::write(doubled.join("receipt.json"), receipt).unwrap();
    json_error(
        &["--self-test", "--json", doubled.to_str().unwrap()],
        2,
        "unreadable",
    );
    std::fs::write(bundle.join("platforms/linux-amd64/evidence/extra"), b"x").unwrap();
    let doc = json_error(&["--self-test", "--json", b], 1, "rejected");
    assert!(doc
        .hint
        .unwrap()
        .starts_with("run `scopebox-verify` on it first"));
}

#[test]
fn key_and_policy_must_be_small_regular_files() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let b = bundle.to_str().unwrap();
    let big_key = tmp.path().join("big.pub.pem");
    std::fs::write(&big_key, vec![b'a'; 64 * 1024 + 1]).unwrap();
    let big_policy = tmp.path().join("big.json");
    std::fs::write(&big_policy, vec![b' '; 1024 * 1024 + 1]).unwrap();
    let fifo = tmp.path().join("fifo");
    crate::util::make_fifo(&fifo);
    let f = fifo.to_str().unwrap();
    // The cheap refusals first: were a bound lost, /dev/zero would be read until killed.
    let cases: [(&str, &str, &str); 6] = [
        (
            "--key",
            big_key.to_str().unwrap(),
            "it is larger than 65536 bytes, the most the key may hold",
        ),
        (
            "--policy",
            big_policy.to_str().unwrap(),
            "it is larger than 1048576 bytes, the most the policy may hold",
        ),
        ("--key", f, "it is a FIFO, not a regular file"),
        ("--policy", f, "it is a FIFO, not a regular file"),
        (
            "--key",
            "/dev/zero",
            "it is a character device, not a regular file",
        ),
        (
            "--policy",
            "/dev/zero",
            "it is a character device, not a regular file",
        ),
    ];
    for (flag, path, why) in cases {
        let run = run_bounded(&[b, flag, path], None);
        let what = if flag == "--key" { "key" } else { "policy" };
        assert_eq!(run.code, 2, "{flag} {path}: {}", run.stderr);
        assert_eq!(
            run.stderr,
            format!("error: failed to read the {what} {path}: {why}\n"),
            "{flag} {path}"
        );
    }
}

/// Runs the verifier with stdout to `stdout` (a file such as /dev/full; else discarded), and
/// fails the test, instead of hanging it, when it has not exited within 60 s.
fn run_bounded(args: &[&str], stdout: Option<std::fs::File>) -> crate::util::Run {
    use std::process::{Command, Stdio};
    let stderr = tempdir();
    let err_path = stderr.path().join("stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_scopebox-verify"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout.map_or_else(Stdio::null, Stdio::from))
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?}: still running after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    crate::util::Run {
        code: status.code().unwrap_or(-1),
        stdout: String::new(),
        stderr: std::fs::read_to_string(err_path).unwrap(),
    }
}

#[test]
fn a_report_stdout_refuses_is_exit_3_and_a_closed_pipe_is_no_error() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let b = bundle.to_str().unwrap();
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for args in [vec![b], vec![b, "--json"], vec!["--json", "--bogus", b]] {
        let run = run_bounded(&args, Some(full()));
        assert_eq!(run.code, 3, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("error: failed to write the report to stdout: No space left on device"),
            "{args:?}: {}",
            run.stderr
        );
    }
    // A reader that stops early (`| head`): the verdict stands, nothing is said.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_scopebox-verify"))
        .arg(b)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
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
