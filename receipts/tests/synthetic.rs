//! A synthetic, fully consistent receipt bundle: what a good run of N simple cases would leave
//! behind, built from the shared schema without Docker. Tests, the benchmark and the mutation
//! self-test's own tests use it as a specimen that must verify. It is never evidence: its
//! container inspection is a real one taken from a policy container by hand
//! (`schema/tests/fixtures/container-inspect.json`), re-labelled for the synthetic run, and every
//! other outer record is made up to be consistent.

use scopebox_schema::digest::sha256_hex;
use scopebox_schema::evidence::{
    CaseRecord, Controls, ExecutedCommand, FixtureObservation, InnerBoundary,
    NegativeControlRecord, PositiveControlRecord, RunSummary, Verdict,
    NEGATIVE_CONTROL_RECORD_FILE, NEGATIVE_CONTROL_STDERR_FILE, NEGATIVE_CONTROL_STDOUT_FILE,
    POSITIVE_CONTROL_RECORD_FILE,
};
use scopebox_schema::judge::{
    expected_observation, judge, negative_control, negative_control_argv, negative_control_fixture,
    positive_control, positive_control_argv, NEGATIVE_CONTROL_ARG, NEGATIVE_CONTROL_ID,
    NEGATIVE_CONTROL_ROOT, POSITIVE_CONTROL_ARG,
};
use scopebox_schema::layout;
use scopebox_schema::matrix::{Case, Expectations, FileContent, FixtureEntry, JsonFact, Matrix};
use scopebox_schema::receipt::*;
use std::collections::BTreeMap;
use std::path::Path;

const INSPECT_FIXTURE: &str = include_str!("../../schema/tests/fixtures/container-inspect.json");
pub const RUN_ID: &str = "synthetic-0001";
pub const CANARIES: [&str; 2] = ["CANARY-ARG-1", "CANARY-ENV-1"];

fn matrix(cases: usize) -> Matrix {
    Matrix {
        schema_version: 1,
        name: "synthetic".into(),
        canaries: CANARIES.iter().map(|c| c.to_string()).collect(),
        cases: (0..cases)
            .map(|i| Case {
                id: format!("case-{i:03}"),
                client: "claude-code".into(),
                description: "one project server; JSON output".into(),
                args: vec!["/work/p".into(), "--json".into()],
                cwd: None,
                env: BTreeMap::new(),
                fixture: vec![FixtureEntry::File {
                    path: "/work/p/.mcp.json".into(),
                    content: FileContent::Text(format!(
                        "{{\"mcpServers\":{{\"s{i}\":{{\"command\":\"{}\",\"env\":{{\"K\":\"{}\"}}}}}}}}",
                        CANARIES[0], CANARIES[1]
                    )),
                    mode: Some("0644".into()),
                }],
                expect: Expectations {
                    exit_code: 0,
                    json: vec![JsonFact {
                        pointer: "/schemaVersion".into(),
                        equals: Some(1.into()),
                        length: None,
                        absent: None,
                    }],
                    stdout_contains: vec![format!("\"s{i}\"")],
                    stderr_empty: Some(true),
                    ..Default::default()
                },
                fault: None,
                deadline_ms: None,
            })
            .collect(),
    }
}

/// What a conforming runner observes inside a policy container (the fixture the schema's policy
/// tests use too).
pub fn conforming_observation() -> InnerBoundary {
    serde_json::from_str(include_str!(
        "../../schema/tests/fixtures/conforming-observation.json"
    ))
    .expect("the conforming observation fixture parses")
}

/// What a conforming runner records for both controls: the sentinel fires under the positive
/// control and under the reference host, whose run the invariants catch.
fn control_records(
    matrix: &Matrix,
) -> std::io::Result<(PositiveControlRecord, NegativeControlRecord)> {
    let marker = |arg: &str, pid: u32| {
        Some(format!(
            "pid={pid} argv=[\"{}\", \"{arg}\"]\n",
            layout::SENTINEL_BIN
        ))
    };
    let positive = PositiveControlRecord {
        argv: positive_control_argv(layout::SENTINEL_BIN),
        marker_present_before: false,
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        marker_present_after: true,
        marker_text: marker(POSITIVE_CONTROL_ARG, 7),
        marker_present_after_removal: false,
    };
    let mut walk = vec![FixtureObservation {
        path: NEGATIVE_CONTROL_ROOT.into(),
        kind: "dir".into(),
        mode: "0755".into(),
        size: 0,
        sha256: None,
    }];
    for entry in negative_control_fixture(layout::SENTINEL_BIN) {
        walk.push(expected_observation(&entry).map_err(std::io::Error::other)?);
    }
    walk.sort();
    let mut run = CaseRecord {
        id: NEGATIVE_CONTROL_ID.into(),
        argv: negative_control_argv(),
        cwd: NEGATIVE_CONTROL_ROOT.into(),
        env: Vec::new(),
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        duration_micros: 900,
        stdout_sha256: sha256_hex(b""),
        stderr_sha256: sha256_hex(b""),
        fixtures_before: walk.clone(),
        fixtures_after: walk,
        marker_present: true,
        verdict: Verdict {
            pass: false,
            failures: Vec::new(),
        },
    };
    let mut negative = NegativeControlRecord {
        run: run.clone(),
        executed: vec![ExecutedCommand {
            program: layout::SENTINEL_BIN.into(),
            args: vec![NEGATIVE_CONTROL_ARG.into()],
            exit_code: Some(0),
            signal: None,
            timed_out: false,
        }],
        marker_text: marker(NEGATIVE_CONTROL_ARG, 8),
        marker_present_after_removal: false,
    };
    run.verdict = negative_control(matrix, &negative, b"", b"").1;
    negative.run = run;
    Ok((positive, negative))
}

struct Writer<'a> {
    dir: &'a Path,
    files: BTreeMap<String, String>,
}

impl Writer<'_> {
    fn put(&mut self, rel: &str, bytes: &[u8]) -> std::io::Result<String> {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes)?;
        let digest = sha256_hex(bytes);
        self.files.insert(rel.to_string(), digest.clone());
        Ok(digest)
    }

    fn put_json<T: serde::Serialize>(&mut self, rel: &str, value: &T) -> std::io::Result<String> {
        let mut bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        self.put(rel, &bytes)
    }
}

/// Write a consistent bundle with `cases` passing cases into `dir` (created if needed).
pub fn write_bundle(dir: &Path, cases: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut w = Writer {
        dir,
        files: BTreeMap::new(),
    };
    let policy = scopebox_receipts::verify::reference_policy();

    // Inputs.
    let matrix = matrix(cases);
    let matrix_bytes = serde_json::to_vec_pretty(&matrix).map_err(std::io::Error::other)?;
    let matrix_sha = w.put(MATRIX_FILE, &matrix_bytes)?;
    let policy_sha = w.put(
        POLICY_FILE,
        scopebox_receipts::verify::REFERENCE_POLICY_JSON.as_bytes(),
    )?;
    let candidate_bytes = b"\x7fELF synthetic mcpscope".to_vec();
    let runtime = vec![
        RuntimeFile {
            path: "LICENSE".into(),
            size: 10,
            mode: "0644".into(),
            sha256: sha256_hex(b"Apache-2.0"),
        },
        RuntimeFile {
            path: "bin/mcpscope".into(),
            size: candidate_bytes.len() as u64,
            mode: "0755".into(),
            sha256: sha256_hex(&candidate_bytes),
        },
    ];
    let runtime_sha = sha256_hex(&serde_json::to_vec(&runtime).map_err(std::io::Error::other)?);
    let archive = NamedDigest {
        name: "mcpscope-0.1.0-x86_64-unknown-linux-gnu.tar.gz".into(),
        sha256: sha256_hex(b"synthetic archive"),
    };
    w.put_json(
        PACK_MANIFEST_FILE,
        &PackManifest {
            schema_version: 1,
            archive: archive.clone(),
            archive_size: 4096,
            runtime_manifest_sha256: runtime_sha.clone(),
            runtime: runtime.clone(),
        },
    )?;
    let runner_sha = sha256_hex(b"synthetic runner");
    let sentinel_sha = sha256_hex(b"synthetic sentinel");
    let diff_id = format!("sha256:{}", sha256_hex(b"synthetic layer"));
    let dir_entry = |path: &str, uid: u32| LayerEntry {
        path: path.into(),
        kind: "dir".into(),
        mode: "0755".into(),
        uid,
        gid: uid,
        size: 0,
        sha256: None,
    };
    let file_entry = |path: &str, size: u64, sha: &str, mode: &str| LayerEntry {
        path: path.into(),
        kind: "file".into(),
        mode: mode.into(),
        uid: 0,
        gid: 0,
        size,
        sha256: Some(sha.into()),
    };
    let mut entries = vec![
        dir_entry("/evidence", 1000),
        dir_entry("/scopebox", 0),
        dir_entry("/scopebox/bin", 0),
        file_entry(layout::RUNNER_BIN, 16, &runner_sha, "0755"),
        file_entry(layout::SENTINEL_BIN, 18, &sentinel_sha, "0755"),
        dir_entry("/scopebox/candidate", 0),
        dir_entry("/scopebox/candidate/bin", 0),
        file_entry(
            layout::MATRIX_PATH,
            matrix_bytes.len() as u64,
            &matrix_sha,
            "0644",
        ),
    ];
    for f in &runtime {
        entries.push(file_entry(
            &format!("{}/{}", layout::CANDIDATE_DIR, f.path),
            f.size,
            &f.sha256,
            &f.mode,
        ));
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    w.put_json(
        LAYER_MANIFEST_FILE,
        &LayerManifest {
            diff_id: diff_id.clone(),
            entries,
        },
    )?;
    let config = serde_json::json!({
        "architecture": "amd64",
        "config": {"Entrypoint": [layout::RUNNER_BIN], "Env": ["PATH=/scopebox/bin"], "User": "1000:1000", "WorkingDir": "/"},
        "created": "1970-01-01T00:00:00Z",
        "os": "linux",
        "rootfs": {"diff_ids": [diff_id], "type": "layers"}
    });
    let config_bytes = serde_json::to_vec(&config).map_err(std::io::Error::other)?;
    let config_sha = w.put(IMAGE_CONFIG_FILE, &config_bytes)?;
    let image_id = format!("sha256:{config_sha}");

    // Outer records.
    let mut inspect: serde_json::Value =
        serde_json::from_str(INSPECT_FIXTURE).map_err(std::io::Error::other)?;
    inspect["Image"] = image_id.clone().into();
    inspect["Config"]["Image"] = image_id.clone().into();
    inspect["Config"]["Labels"] = serde_json::json!({"scopebox.run": RUN_ID});
    inspect["Path"] = layout::RUNNER_BIN.into();
    w.put_json(CONTAINER_INSPECT_FILE, &inspect)?;
    w.put_json(
        IMAGE_INSPECT_FILE,
        &serde_json::json!({"Id": image_id, "RootFS": {"Type": "layers", "Layers": [diff_id]}}),
    )?;
    let execution = Execution {
        status: "exited".into(),
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        oom_killed: false,
        deadline_seconds: 180,
        durations: Durations {
            pack_ms: 900,
            image_ms: 120,
            run_ms: 2_300,
            export_ms: 40,
        },
        events: [
            (EventKind::VolumeCreated, 1_030),
            (EventKind::ContainerCreated, 1_045),
            (EventKind::Started, 1_090),
            (EventKind::Exited, 3_390),
            (EventKind::EvidenceExported, 3_430),
            (EventKind::ContainerInspected, 3_436),
            (EventKind::ImageInspected, 3_439),
            (EventKind::ContainerRemoved, 3_480),
            (EventKind::VolumeRemoved, 3_495),
            (EventKind::Swept, 3_497),
        ]
        .into_iter()
        .map(|(event, at_ms)| LifecycleEvent { event, at_ms })
        .collect(),
    };
    w.put_json(EXECUTION_FILE, &execution)?;

    // The evidence tree.
    let observed = conforming_observation();
    w.put_json("evidence/boundary.json", &observed)?;
    let (positive, negative) = control_records(&matrix)?;
    w.put_json(
        &format!("evidence/{POSITIVE_CONTROL_RECORD_FILE}"),
        &positive,
    )?;
    w.put_json(
        &format!("evidence/{NEGATIVE_CONTROL_RECORD_FILE}"),
        &negative,
    )?;
    w.put(&format!("evidence/{NEGATIVE_CONTROL_STDOUT_FILE}"), b"")?;
    w.put(&format!("evidence/{NEGATIVE_CONTROL_STDERR_FILE}"), b"")?;
    let controls = Controls {
        positive: positive_control(&positive),
        negative: negative_control(&matrix, &negative, b"", b"").0,
    };
    w.put_json("evidence/controls.json", &controls)?;
    let mut case_entries = Vec::new();
    for (i, case) in matrix.cases.iter().enumerate() {
        let stdout = format!("{{\"schemaVersion\":1,\"servers\":[{{\"name\":\"s{i}\"}}]}}\n");
        let stderr: &[u8] = b"";
        let mut before = vec![FixtureObservation {
            path: "/work/p".into(),
            kind: "dir".into(),
            mode: "0755".into(),
            size: 0,
            sha256: None,
        }];
        for entry in &case.fixture {
            before.push(expected_observation(entry).map_err(std::io::Error::other)?);
        }
        before.sort();
        let mut record = CaseRecord {
            id: case.id.clone(),
            argv: vec![
                layout::CANDIDATE_BIN.into(),
                "/work/p".into(),
                "--json".into(),
            ],
            cwd: "/work".into(),
            env: vec![
                "HOME=/home/node".into(),
                "LANG=C.UTF-8".into(),
                "PATH=/scopebox/bin".into(),
            ],
            exit_code: Some(0),
            signal: None,
            timed_out: false,
            duration_micros: 1_500 + i as u64,
            stdout_sha256: sha256_hex(stdout.as_bytes()),
            stderr_sha256: sha256_hex(stderr),
            fixtures_before: before.clone(),
            fixtures_after: before,
            marker_present: false,
            verdict: Verdict {
                pass: true,
                failures: Vec::new(),
            },
        };
        record.verdict = judge(&matrix, case, stdout.as_bytes(), stderr, &record);
        let base = format!("evidence/cases/{}", case.id);
        let stdout_sha = w.put(&format!("{base}/stdout"), stdout.as_bytes())?;
        let stderr_sha = w.put(&format!("{base}/stderr"), stderr)?;
        let record_sha = w.put_json(&format!("{base}/record.json"), &record)?;
        case_entries.push(CaseEntry {
            id: case.id.clone(),
            verdict: if record.verdict.pass { "pass" } else { "fail" }.into(),
            record_sha256: record_sha,
            stdout_sha256: stdout_sha,
            stderr_sha256: stderr_sha,
        });
    }
    let passed = case_entries.iter().filter(|c| c.verdict == "pass").count();
    w.put_json(
        "evidence/summary.json",
        &RunSummary {
            matrix_sha256: matrix_sha.clone(),
            total: cases,
            passed,
            failed: cases - passed,
            case_ids: matrix.cases.iter().map(|c| c.id.clone()).collect(),
            median_case_micros: 1_500,
        },
    )?;

    let applied_failures = scopebox_schema::policy::check_applied(&policy, &inspect);
    let observed_failures = scopebox_schema::policy::check_observed(&policy, &observed);
    let receipt = Receipt {
        schema_version: 1,
        tool: Tool {
            name: "scopebox".into(),
            version: "0.1.0".into(),
        },
        run_id: RUN_ID.into(),
        started_at: "2026-11-29T18:00:00Z".into(),
        finished_at: "2026-11-29T18:00:04.5Z".into(),
        inputs: Inputs {
            candidate_archive: archive,
            runtime_manifest_sha256: runtime_sha,
            runner_sha256: runner_sha,
            sentinel_sha256: sentinel_sha,
            matrix_sha256: matrix_sha,
            boundary_policy_sha256: policy_sha,
            image_id,
            image_config_sha256: config_sha,
            layer_diff_ids: vec![diff_id],
            platform: "linux/amd64".into(),
        },
        boundary: BoundaryRecord {
            policy,
            observed: Some(observed),
            applied_meets_policy: applied_failures.is_empty(),
            observed_meets_policy: observed_failures.is_empty(),
            applied_failures,
            observed_failures,
        },
        controls,
        cases: case_entries,
        summary: CaseSummary {
            total: cases,
            passed,
            failed: cases - passed,
        },
        execution,
        cleanup: Cleanup {
            container_removed: true,
            volume_removed: true,
            leftovers: 0,
        },
        files: w.files.clone(),
    };
    let mut bytes = serde_json::to_vec_pretty(&receipt).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    std::fs::write(dir.join(RECEIPT_FILE), bytes)
}
