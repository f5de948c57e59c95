//! `scopebox native` end to end: the pinned real client in the box over a few scenarios of the
//! shipped native matrix. Needs the engine and the fetched client (~540 MB of cache): it runs
//! only with `SCOPEBOX_NATIVE_SUITE=1` (`.ci/run` fetches, then sets it), and is reported as
//! ignored otherwise, so the README's test command works on a fresh machine.

use crate::support::{labelled, scopebox, tempdir, workspace};
use scopebox_schema::native_capture::{ClientRecord, HttpLog, NativeIndex};

/// The first `n` scenarios of the shipped native matrix, written to `dir/native-small.json`.
fn small_native_matrix(dir: &std::path::Path, n: usize) -> std::path::PathBuf {
    let path = workspace().join("harness/matrix/native-claude-code.json");
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    m["scenarios"].as_array_mut().unwrap().truncate(n);
    let out = dir.join("native-small.json");
    std::fs::write(&out, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    out
}

pub fn the_real_client_runs_in_the_box_and_every_run_is_recorded() {
    let dir = tempdir();
    let matrix = small_native_matrix(dir.path(), 3);
    let bundle = dir.path().join("bundle");
    // What a nightly CI job asks for: no per-run lines, the JUnit report and the bundle as one
    // file where its pipeline collects them.
    let junit = dir.path().join("native-junit.xml");
    let archive = dir.path().join("native.tar.gz");
    let out = scopebox(
        &[
            "native",
            "--offline",
            "--matrix",
            matrix.to_str().unwrap(),
            "--out",
            bundle.to_str().unwrap(),
            "--quiet",
            "--junit",
            junit.to_str().unwrap(),
            "--archive",
            archive.to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    let summary: serde_json::Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("one JSON object ({e}): {out:?}"));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(summary["ok"], true, "{summary}");
    assert_eq!(summary["runs"]["recorded"], 9, "{summary}");
    assert!(
        !out.stderr.contains("] pass ") && !out.stderr.contains("runner: summary"),
        "--quiet prints no per-run progress: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("PASSED: 9/9 runs passed"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read(&junit).unwrap(),
        std::fs::read(bundle.join("junit.xml")).unwrap(),
        "--junit is the bundle's junit.xml"
    );
    assert_eq!(summary["archive"], archive.to_str().unwrap(), "{summary}");
    let from_archive = scopebox_receipts::bundle_file::read_archive(&archive).unwrap();
    assert_eq!(
        from_archive.receipt_bytes,
        std::fs::read(bundle.join("receipt.json")).unwrap()
    );
    let report =
        scopebox_receipts::verify::verify_loaded(&from_archive, &Default::default()).unwrap();
    assert!(report.verified, "{:?}", report.failed_ids());
    let run_id = summary["runId"].as_str().unwrap();
    assert!(labelled(&format!("scopebox.run={run_id}")).is_empty());

    let evidence = bundle.join("platforms/linux-amd64/evidence");
    let index: NativeIndex =
        serde_json::from_slice(&std::fs::read(evidence.join("native/index.json")).unwrap())
            .unwrap();
    assert_eq!(index.runs.len(), 9);
    assert_eq!(index.machine, "x86_64");
    let lock: serde_json::Value = serde_json::from_slice(
        &std::fs::read(workspace().join("images/native.lock.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        index.client_sha256,
        lock["clients"][0]["platforms"][0]["binary"]["sha256"]
    );
    for run in &index.runs {
        assert!(run.completed, "{run:?}");
        let d = evidence.join("native").join(&run.dir);
        let rec: ClientRecord =
            serde_json::from_slice(&std::fs::read(d.join("client.json")).unwrap()).unwrap();
        assert!(!rec.timed_out, "{rec:?}");
        assert!(d.join("witness.json").is_file());
        assert!(d.join("inventory/record.json").is_file());
        let http: HttpLog =
            serde_json::from_slice(&std::fs::read(d.join("http.json")).unwrap()).unwrap();
        if run.mode == "headless" {
            // The stand-in for the model API was asked (and answered at once).
            assert!(!http.model_api.requests.is_empty(), "{http:?}");
        }
    }
    // The baseline scenario's user server ran in `mcp list`: its sentinel fired.
    let fired = std::fs::read_to_string(
        evidence
            .join("native")
            .join(&index.runs[0].dir)
            .join("sentinel.txt"),
    )
    .unwrap();
    assert!(fired.contains("--scopebox-tag="), "{fired}");
    assert!(bundle.join("junit.xml").is_file());
    // Two containers (the default --shards): the second's records are kept beside the first's,
    // and the native section says so, so the verifier holds both to the boundary.
    let second = bundle.join("platforms/linux-amd64/shards/1");
    for file in ["outer/container-inspect.json", "evidence/boundary.json"] {
        assert!(
            second.join(file).is_file(),
            "{file} of the second container"
        );
    }
    let section: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("native.json")).unwrap()).unwrap();
    assert_eq!(section["platforms"][0]["containers"], 2, "{section}");
    // The bundle is a receipt the verifier accepts from its bytes alone…
    assert_eq!(summary["verified"], true, "{summary}");
    let report = scopebox_receipts::verify::verify_dir(&bundle, &Default::default()).unwrap();
    assert!(report.verified, "{:?}", report.failed_ids());
    // A release pipeline signs it as it signs a candidate bundle, and the signed statement
    // names every native run and the pinned client binary.
    let key = dir.path().join("release");
    let keygen = scopebox(&["keygen", "--out", key.to_str().unwrap()], &[]);
    assert_eq!(keygen.code, 0, "{keygen:?}");
    let private = dir.path().join("release.pem");
    let sign = scopebox(
        &[
            "sign",
            bundle.to_str().unwrap(),
            "--key",
            private.to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    assert_eq!(sign.code, 0, "{sign:?}");
    let envelope: scopebox_receipts::dsse::Envelope =
        serde_json::from_slice(&std::fs::read(bundle.join("receipt.dsse.json")).unwrap()).unwrap();
    let statement: scopebox_receipts::attestation::Statement =
        serde_json::from_slice(&scopebox_receipts::dsse::decode_base64(&envelope.payload).unwrap())
            .unwrap();
    let named: Vec<String> = index
        .runs
        .iter()
        .map(|r| format!("native/claude-code-linux-amd64/{}", r.dir))
        .collect();
    assert_eq!(statement.predicate.passed_tests, named);
    assert!(statement.predicate.configuration.iter().any(|d| {
        d.name == "native client claude-code 2.1.327 linux/amd64"
            && d.digest["sha256"] == index.client_sha256
    }));
    let report = scopebox_receipts::verify::verify_dir(
        &bundle,
        &scopebox_receipts::verify::VerifyOptions {
            public_key_pem: Some(
                std::fs::read_to_string(dir.path().join("release.pub.pem")).unwrap(),
            ),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(report.verified, "signed: {:?}", report.failed_ids());
    // The edits below re-digest receipt.json, which no longer is the one signed: unsigned again,
    // so each is caught by the check it is about alone.
    std::fs::remove_file(bundle.join("receipt.dsse.json")).unwrap();
    // …and the second container's inspection is read: one outside the policy is rejected.
    let inspect = second.join("outer/container-inspect.json");
    let original = std::fs::read(&inspect).unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&original).unwrap();
    doc["HostConfig"]["NetworkMode"] = "bridge".into();
    let tampered = serde_json::to_vec_pretty(&doc).unwrap();
    std::fs::write(&inspect, &tampered).unwrap();
    // Listed with its new digest, so that only the boundary check can catch it.
    let receipt_path = bundle.join("receipt.json");
    let receipt_bytes = std::fs::read(&receipt_path).unwrap();
    let mut receipt: serde_json::Value = serde_json::from_slice(&receipt_bytes).unwrap();
    receipt["files"]["platforms/linux-amd64/shards/1/outer/container-inspect.json"] =
        scopebox_schema::digest::sha256_hex(&tampered).into();
    std::fs::write(&receipt_path, serde_json::to_vec_pretty(&receipt).unwrap()).unwrap();
    let report = scopebox_receipts::verify::verify_dir(&bundle, &Default::default()).unwrap();
    assert_eq!(
        report.failed_ids(),
        ["native-claude-code-linux-amd64/native.boundary"],
        "a second container outside the policy must be rejected by the boundary check"
    );
    std::fs::write(&inspect, original).unwrap();
    std::fs::write(&receipt_path, receipt_bytes).unwrap();
    // …and a tampered capture (a sentinel firing taken out of the marker) it rejects.
    let marker = evidence
        .join("native")
        .join(&index.runs[0].dir)
        .join("sentinel.txt");
    let kept: String = fired.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(&marker, kept).unwrap();
    let report = scopebox_receipts::verify::verify_dir(&bundle, &Default::default()).unwrap();
    assert!(!report.verified, "a tampered marker must be rejected");
}
