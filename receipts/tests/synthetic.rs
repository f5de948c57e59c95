//! A synthetic, fully consistent receipt bundle: what a good run of N simple cases would leave
//! behind, built from the shared schema without Docker. Tests, the benchmark and the mutation
//! self-test's own tests use it as a specimen that must verify. It is never evidence: its
//! container inspection is a real one taken from a policy container by hand
//! (`schema/tests/fixtures/container-inspect.json`), re-labelled for the synthetic run, and every
//! other outer record is made up to be consistent.

use scopebox_receipts::image::Recipe;
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::evidence::{
    AdversarialControl, CaseRecord, Controls, ExecutedCommand, FixtureObservation, InnerBoundary,
    NegativeControlRecord, PositiveControlRecord, RunSummary, Verdict, ADVERSARIAL_CONTROLS,
    NEGATIVE_CONTROL_RECORD_FILE, NEGATIVE_CONTROL_STDERR_FILE, NEGATIVE_CONTROL_STDOUT_FILE,
    NEGATIVE_CONTROL_WITNESS_FILE, POSITIVE_CONTROL_RECORD_FILE, POSITIVE_CONTROL_WITNESS_FILE,
};
use scopebox_schema::judge::{
    adversarial_control, expected_observation, judge_witnessed, negative_control,
    negative_control_argv, negative_control_fixture, positive_control, positive_control_argv,
    CONTROL_CANARY, NEGATIVE_CONTROL_ARG, NEGATIVE_CONTROL_ID, NEGATIVE_CONTROL_ROOT,
    POSITIVE_CONTROL_ARG,
};
use scopebox_schema::layout;
use scopebox_schema::matrix::{Case, Expectations, FileContent, FixtureEntry, JsonFact, Matrix};
use scopebox_schema::platform::Platform;
use scopebox_schema::receipt::*;
use scopebox_schema::witness::{
    SentinelReport, Survivor, WitnessEvent, WitnessLevel, WitnessRecord, WitnessSyscall,
    MECHANISM_SECCOMP_USER_NOTIFY, WITNESS_FILE,
};
use std::collections::BTreeMap;
use std::path::Path;

const INSPECT_FIXTURE: &str = include_str!("../../schema/tests/fixtures/container-inspect.json");
pub const RUN_ID: &str = "synthetic-0001";
pub const CANARIES: [&str; 2] = ["CANARY-ARG-1", "CANARY-ENV-1"];

/// The ids of `cases` cases as the synthetic matrix names them: `case-000`, `case-001`, …
fn default_case_ids(cases: usize) -> Vec<String> {
    (0..cases).map(|i| format!("case-{i:03}")).collect()
}

fn matrix(case_ids: &[String]) -> Matrix {
    Matrix {
        schema_version: 1,
        name: "synthetic".into(),
        canaries: CANARIES.iter().map(|c| c.to_string()).collect(),
        cases: case_ids
            .iter()
            .enumerate()
            .map(|(i, id)| Case {
                id: id.clone(),
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
        fixtures_after_problems: vec![],
        marker_present: true,
        verdict: Verdict {
            pass: false,
            failures: Vec::new(),
        },
        written: Vec::new(),
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

/// The runner's pid in every synthetic witness record.
const RUNNER_PID: i32 = 7;

fn witness_event(seq: u64, syscall: WitnessSyscall, pid: i32, ppid: i32) -> WitnessEvent {
    WitnessEvent {
        seq,
        syscall,
        pid,
        ppid: Some(ppid),
        path: None,
        path_error: None,
        dirfd: None,
        dirfd_target: None,
        argc: None,
        flags: None,
    }
}

/// What the witness of a good run records for a window in which the runner started `program`
/// (as `pid`) and nothing else happened: the runner's clone, then the one exec.
pub fn honest_witness(emulated: bool, program: &str, seq: u64, pid: i32) -> WitnessRecord {
    WitnessRecord {
        mechanism: MECHANISM_SECCOMP_USER_NOTIFY.into(),
        level: if emulated {
            WitnessLevel::BesideEmulator
        } else {
            WitnessLevel::Native
        },
        witness_machine: "x86_64".into(),
        runner_pid: RUNNER_PID,
        program: program.into(),
        events: vec![
            witness_event(seq, WitnessSyscall::Clone, RUNNER_PID, 1),
            WitnessEvent {
                path: Some(program.into()),
                argc: Some(3),
                ..witness_event(seq + 1, WitnessSyscall::Execve, pid, RUNNER_PID)
            },
        ],
        events_dropped: 0,
        survivors: Vec::new(),
        sentinel_reports: Vec::new(),
        reports_dropped: 0,
    }
}

/// One hostile stand-in as a conforming runner records it: the runner re-executed as
/// `scopebox-runner hostile <name>`, then what its attack makes the kernel report (or, for the
/// canary leak, what it prints). Returns the record, stdout and witness record.
fn adversarial_records(
    matrix: &Matrix,
    emulated: bool,
    index: usize,
    name: &str,
) -> (CaseRecord, Vec<u8>, WitnessRecord) {
    let seq = 1_000 + 10 * index as u64;
    let pid = 100 + 10 * index as i32;
    let mut witness = honest_witness(emulated, layout::RUNNER_BIN, seq, pid);
    let exec = |seq: u64, syscall: WitnessSyscall, by: i32, parent: i32, path: &str| WitnessEvent {
        path: Some(path.into()),
        argc: Some(2),
        ..witness_event(seq, syscall, by, parent)
    };
    let mut stdout = b"{}\n".to_vec();
    match name {
        "exec-delete-marker" | "exec-redirected-marker" => {
            witness.events.push(witness_event(
                seq + 2,
                WitnessSyscall::Fork,
                pid,
                RUNNER_PID,
            ));
            witness.events.push(exec(
                seq + 3,
                WitnessSyscall::Execve,
                pid + 1,
                pid,
                layout::SENTINEL_BIN,
            ));
        }
        "double-fork-daemon" => {
            witness.events.push(witness_event(
                seq + 2,
                WitnessSyscall::Fork,
                pid,
                RUNNER_PID,
            ));
            witness
                .events
                .push(witness_event(seq + 3, WitnessSyscall::Fork, pid + 1, pid));
            witness.survivors.push(Survivor {
                pid: pid + 2,
                ppid: RUNNER_PID,
                pgid: pid + 1,
                sid: pid + 1,
                state: "S".into(),
                comm: "scopebox-runner".into(),
            });
        }
        "memfd-exec" => witness.events.push(WitnessEvent {
            dirfd: Some(3),
            dirfd_target: Some("/memfd:scopebox (deleted)".into()),
            flags: Some(0x1000),
            ..exec(seq + 2, WitnessSyscall::Execveat, pid, RUNNER_PID, "")
        }),
        "base64-canary" => {
            use base64::Engine as _;
            let leak = base64::engine::general_purpose::STANDARD.encode(CONTROL_CANARY);
            stdout = format!("{{\"schemaVersion\":1,\"extra\":\"{leak}\"}}\n").into_bytes();
        }
        "tmp-file-canary" => witness.events.push(WitnessEvent {
            path: Some("/tmp/scopebox-control-leak".into()),
            dirfd: Some(-100),
            flags: Some(0o1101),
            ..witness_event(seq + 2, WitnessSyscall::Openat, pid, RUNNER_PID)
        }),
        _ => {}
    }
    let mut record = CaseRecord {
        id: name.into(),
        argv: vec![layout::RUNNER_BIN.into(), "hostile".into(), name.into()],
        cwd: "/work".into(),
        env: Vec::new(),
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        duration_micros: 2_000,
        stdout_sha256: sha256_hex(&stdout),
        stderr_sha256: sha256_hex(b""),
        fixtures_before: Vec::new(),
        fixtures_after: Vec::new(),
        fixtures_after_problems: vec![],
        marker_present: false,
        verdict: Verdict {
            pass: false,
            failures: Vec::new(),
        },
        written: Vec::new(),
    };
    let control = adversarial_control(name, matrix, &record, &stdout, b"", &witness);
    record.verdict.failures = control.failures;
    (record, stdout, witness)
}

/// Files written below a bundle and their digests (for `files`).
pub(crate) struct Writer<'a> {
    pub(crate) dir: &'a Path,
    pub(crate) files: BTreeMap<String, String>,
}

impl Writer<'_> {
    pub(crate) fn put(&mut self, rel: &str, bytes: &[u8]) -> std::io::Result<String> {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes)?;
        let digest = sha256_hex(bytes);
        self.files.insert(rel.to_string(), digest.clone());
        Ok(digest)
    }

    pub(crate) fn put_json<T: serde::Serialize>(
        &mut self,
        rel: &str,
        value: &T,
    ) -> std::io::Result<String> {
        let mut bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        self.put(rel, &bytes)
    }
}

/// A 64-byte ELF header of `platform`'s machine, then `tag`: enough for every ELF check.
pub fn fake_elf(platform: Platform, tag: &[u8]) -> Vec<u8> {
    let mut elf = vec![0u8; 64];
    elf[..4].copy_from_slice(b"\x7fELF");
    elf[4] = 2;
    elf[5] = 1;
    elf[18..20].copy_from_slice(&platform.elf_machine().to_le_bytes());
    elf.extend_from_slice(tag);
    elf
}

/// The recipe the synthetic images are generated from (the project's own).
pub const RECIPE: &[u8] = include_bytes!("../../images/recipe.json");

/// Write a consistent bundle with `cases` passing cases on both platforms (amd64 native, arm64
/// emulated on an x86_64 engine) into `dir` (created if needed). Every image is generated with
/// the shared generator from synthetic blobs, so the verifier's regeneration must agree.
pub fn write_bundle(dir: &Path, cases: usize) -> std::io::Result<()> {
    write_bundle_for(dir, cases, &Platform::ALL, &[])
}

/// `write_bundle` for the given platforms; `not_covered` platforms are recorded as such.
pub fn write_bundle_for(
    dir: &Path,
    cases: usize,
    platforms: &[Platform],
    not_covered: &[Platform],
) -> std::io::Result<()> {
    write_bundle_shaped(dir, &default_case_ids(cases), platforms, not_covered)
}

/// `write_bundle` with one case per id of `case_ids` (each `[a-z0-9-]+`, as a matrix's): long
/// ids give the bundle's longest real paths (`platforms/<dir>/evidence/cases/<id>/…`).
#[allow(dead_code)] // the tests' only; the benchmark includes this file too
pub fn write_bundle_with_case_ids(dir: &Path, case_ids: &[String]) -> std::io::Result<()> {
    write_bundle_shaped(dir, case_ids, &Platform::ALL, &[])
}

fn write_bundle_shaped(
    dir: &Path,
    case_ids: &[String],
    platforms: &[Platform],
    not_covered: &[Platform],
) -> std::io::Result<()> {
    let cases = case_ids.len();
    std::fs::create_dir_all(dir)?;
    let mut w = Writer {
        dir,
        files: BTreeMap::new(),
    };
    let policy = scopebox_receipts::verify::reference_policy();

    // Shared inputs.
    let matrix = matrix(case_ids);
    let matrix_bytes = serde_json::to_vec_pretty(&matrix).map_err(std::io::Error::other)?;
    let matrix_sha = w.put(MATRIX_FILE, &matrix_bytes)?;
    let policy_sha = w.put(
        POLICY_FILE,
        scopebox_receipts::verify::REFERENCE_POLICY_JSON.as_bytes(),
    )?;
    let recipe_sha = w.put(RECIPE_FILE, RECIPE)?;
    let recipe = Recipe::parse(RECIPE).map_err(std::io::Error::other)?;
    let mut blobs: BTreeMap<String, Blob> = BTreeMap::new();
    let mut runs = Vec::new();
    let engine_arch = "x86_64";

    for &platform in platforms {
        let pdir = platform_dir(platform);
        let candidate_files = vec![
            scopebox_receipts::archive::ArchiveFile {
                path: "LICENSE".into(),
                mode: 0o644,
                bytes: b"Apache-2.0".to_vec(),
            },
            scopebox_receipts::archive::ArchiveFile {
                path: "bin/mcpscope".into(),
                mode: 0o755,
                bytes: fake_elf(platform, b"synthetic mcpscope"),
            },
        ];
        let archive_name = format!("mcpscope-0.1.0-{}-linux.tar.gz", platform.machine());
        let archive_bytes = scopebox_receipts::archive::write_archive(&candidate_files);
        let pack =
            scopebox_receipts::archive::manifest(&archive_name, &archive_bytes, &candidate_files);
        let runner = fake_elf(platform, b"synthetic runner");
        let sentinel = fake_elf(platform, b"synthetic sentinel");
        let image = scopebox_receipts::image::build(
            &recipe,
            RECIPE,
            &scopebox_receipts::image::Contents {
                platform,
                candidate: &candidate_files,
                runner: &runner,
                sentinel: &sentinel,
                matrix: &matrix_bytes,
                witnesses: &[],
            },
        )
        .map_err(std::io::Error::other)?;
        for (bytes, role, name) in [
            (
                &archive_bytes,
                BlobRole::CandidateArchive,
                archive_name.clone(),
            ),
            (&runner, BlobRole::Runner, layout::RUNNER_BIN.to_string()),
            (
                &sentinel,
                BlobRole::Sentinel,
                layout::SENTINEL_BIN.to_string(),
            ),
        ] {
            let sha = w.put(&blob_path(&sha256_hex(bytes)), bytes)?;
            blobs
                .entry(sha.clone())
                .or_insert_with(|| Blob {
                    sha256: sha,
                    size: bytes.len() as u64,
                    uses: Vec::new(),
                })
                .uses
                .push(BlobUse {
                    role,
                    platform,
                    machine: None,
                    name,
                });
        }
        w.put_json(&format!("{pdir}/{PACK_MANIFEST_FILE}"), &pack)?;
        w.put_json(
            &format!("{pdir}/{LAYER_MANIFEST_FILE}"),
            &image.layer_manifest,
        )?;
        let config_sha = w.put(&format!("{pdir}/{IMAGE_CONFIG_FILE}"), &image.config)?;
        let image_id = image.id.clone();
        let diff_id = image.diff_id.clone();

        // Outer records.
        let mut inspect: serde_json::Value =
            serde_json::from_str(INSPECT_FIXTURE).map_err(std::io::Error::other)?;
        inspect["Image"] = image_id.clone().into();
        inspect["Config"]["Image"] = image_id.clone().into();
        inspect["Config"]["Labels"] = serde_json::json!({"scopebox.run": RUN_ID});
        inspect["Config"]["Env"] = serde_json::json!([
            "PATH=/scopebox/bin",
            "HOME=/home/node",
            "LANG=C.UTF-8",
            format!("{}={engine_arch}", layout::ENGINE_MACHINE_ENV)
        ]);
        inspect["Path"] = layout::RUNNER_BIN.into();
        w.put_json(&format!("{pdir}/{CONTAINER_INSPECT_FILE}"), &inspect)?;
        w.put_json(
            &format!("{pdir}/{IMAGE_INSPECT_FILE}"),
            &serde_json::json!({
                "Id": image_id,
                "Architecture": platform.oci_architecture(),
                "RootFS": {"Type": "layers", "Layers": [diff_id]}
            }),
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
        w.put_json(&format!("{pdir}/{EXECUTION_FILE}"), &execution)?;

        // The evidence tree.
        let mut observed = conforming_observation();
        observed.machine = platform.machine().to_string();
        w.put_json(&format!("{pdir}/evidence/boundary.json"), &observed)?;
        let (positive, negative) = control_records(&matrix)?;
        w.put_json(
            &format!("{pdir}/evidence/{POSITIVE_CONTROL_RECORD_FILE}"),
            &positive,
        )?;
        w.put_json(
            &format!("{pdir}/evidence/{NEGATIVE_CONTROL_RECORD_FILE}"),
            &negative,
        )?;
        w.put(
            &format!("{pdir}/evidence/{NEGATIVE_CONTROL_STDOUT_FILE}"),
            b"",
        )?;
        w.put(
            &format!("{pdir}/evidence/{NEGATIVE_CONTROL_STDERR_FILE}"),
            b"",
        )?;
        let emulated = platform != Platform::LinuxAmd64;
        for (i, rel) in [POSITIVE_CONTROL_WITNESS_FILE, NEGATIVE_CONTROL_WITNESS_FILE]
            .into_iter()
            .enumerate()
        {
            let pid = 50 + i as i32;
            let mut witness =
                honest_witness(emulated, layout::SENTINEL_BIN, 500 + 2 * i as u64, pid);
            // The sentinel writes its marker: the one write these controls allow.
            witness.events.push(WitnessEvent {
                path: Some(layout::SENTINEL_MARKER.into()),
                dirfd: Some(-100),
                flags: Some(0o1101),
                ..witness_event(502 + 2 * i as u64, WitnessSyscall::Openat, pid, RUNNER_PID)
            });
            witness.sentinel_reports.push(SentinelReport {
                pid,
                uid: 1000,
                argc: 2,
            });
            w.put_json(&format!("{pdir}/evidence/{rel}"), &witness)?;
        }
        let mut adversarial: Vec<AdversarialControl> = Vec::new();
        for (i, name) in ADVERSARIAL_CONTROLS.iter().enumerate() {
            let (record, stdout, witness) = adversarial_records(&matrix, emulated, i, name);
            let base = format!("{pdir}/evidence/controls/{name}");
            w.put(&format!("{base}/stdout"), &stdout)?;
            w.put(&format!("{base}/stderr"), b"")?;
            w.put_json(&format!("{base}/record.json"), &record)?;
            w.put_json(&format!("{base}/{WITNESS_FILE}"), &witness)?;
            adversarial.push(adversarial_control(
                name, &matrix, &record, &stdout, b"", &witness,
            ));
        }
        let controls = Controls {
            positive: positive_control(&positive),
            negative: negative_control(&matrix, &negative, b"", b"").0,
            adversarial,
        };
        w.put_json(&format!("{pdir}/evidence/controls.json"), &controls)?;
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
                fixtures_after_problems: vec![],
                marker_present: false,
                verdict: Verdict {
                    pass: true,
                    failures: Vec::new(),
                },
                written: Vec::new(),
            };
            let witness = honest_witness(
                emulated,
                layout::CANDIDATE_BIN,
                10 + 2 * i as u64,
                20 + i as i32,
            );
            record.verdict =
                judge_witnessed(&matrix, case, stdout.as_bytes(), stderr, &record, &witness);
            let base = format!("{pdir}/evidence/cases/{}", case.id);
            w.put_json(&format!("{base}/{WITNESS_FILE}"), &witness)?;
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
            &format!("{pdir}/evidence/summary.json"),
            &RunSummary {
                matrix_sha256: matrix_sha.clone(),
                total: cases,
                passed,
                failed: cases - passed,
                case_ids: matrix.cases.iter().map(|c| c.id.clone()).collect(),
                median_case_micros: 1_500,
                shard: Default::default(),
            },
        )?;

        let applied_failures = scopebox_schema::policy::check_applied(
            &policy,
            &inspect,
            scopebox_schema::engine::EngineName::Docker,
        );
        let observed_failures = scopebox_schema::policy::check_observed(&policy, &observed);
        runs.push(PlatformRun {
            platform,
            dir: pdir.clone(),
            emulated: platform != Platform::LinuxAmd64,
            engine_architecture: engine_arch.into(),
            engine: scopebox_schema::engine::EngineName::Docker,
            engine_version: "20.10.24+dfsg1".into(),
            inputs: PlatformInputs {
                candidate_archive: pack.archive.clone(),
                runtime_manifest_sha256: pack.runtime_manifest_sha256.clone(),
                runner_sha256: sha256_hex(&runner),
                sentinel_sha256: sha256_hex(&sentinel),
                witness_sha256: BTreeMap::new(),
                image_id,
                image_config_sha256: config_sha,
                layer_diff_ids: vec![diff_id],
            },
            boundary: BoundaryRecord {
                policy: policy.clone(),
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
            shards: Vec::new(),
        });
    }
    let mut blobs: Vec<Blob> = blobs.into_values().collect();
    for b in &mut blobs {
        b.uses.sort();
    }
    w.put(JUNIT_FILE, junit(&runs, not_covered).as_bytes())?;
    let receipt = Receipt {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "scopebox".into(),
            version: "0.1.0".into(),
        },
        run_id: RUN_ID.into(),
        started_at: "2026-11-29T18:00:00Z".into(),
        finished_at: "2026-11-29T18:00:04.5Z".into(),
        matrix: MatrixRef {
            sha256: matrix_sha,
            name: matrix.name.clone(),
            case_count: cases,
        },
        boundary_policy_sha256: policy_sha,
        recipe_sha256: recipe_sha,
        blobs,
        summary: OverallSummary {
            platforms: runs.len(),
            platforms_passed: runs.len(),
            cases: cases * runs.len(),
            cases_passed: cases * runs.len(),
        },
        platforms: runs,
        not_covered: not_covered
            .iter()
            .map(|&platform| NotCovered {
                platform,
                reason: "the engine (x86_64) cannot run it (synthetic)".into(),
            })
            .collect(),
        files: w.files.clone(),
        provenance: None,
    };
    let mut bytes = serde_json::to_vec_pretty(&receipt).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    std::fs::write(dir.join(RECEIPT_FILE), bytes)
}

/// The JUnit report the orchestrator writes for these runs (the shape `src/junit.rs` gives it).
fn junit(runs: &[PlatformRun], not_covered: &[Platform]) -> String {
    let testcase = |name: &str, classname: &str, ok: bool| {
        if ok {
            format!("<testcase name=\"{name}\" classname=\"{classname}\"/>")
        } else {
            format!(
                "<testcase name=\"{name}\" classname=\"{classname}\"><failure message=\"failed\"/></testcase>"
            )
        }
    };
    let mut suites = String::new();
    let (mut tests, mut failures) = (0, 0);
    for run in runs {
        let p = run.platform.name();
        let mut cases = vec![
            testcase(&format!("platform {p}"), p, true),
            testcase(
                "positive control",
                &format!("{p}.controls"),
                scopebox_schema::judge::positive_control_failures(&run.controls.positive)
                    .is_empty(),
            ),
            testcase(
                "negative control",
                &format!("{p}.controls"),
                scopebox_schema::judge::negative_control_failures(&run.controls.negative)
                    .is_empty(),
            ),
        ];
        cases.extend(
            run.cases
                .iter()
                .map(|c| testcase(&c.id, &format!("{p}.cases"), c.verdict == "pass")),
        );
        let failed = cases.iter().filter(|c| c.contains("<failure")).count();
        tests += cases.len();
        failures += failed;
        suites.push_str(&format!(
            "<testsuite name=\"{p}\" tests=\"{}\" failures=\"{failed}\">{}</testsuite>\n",
            cases.len(),
            cases.concat()
        ));
    }
    for platform in not_covered {
        let p = platform.name();
        tests += 1;
        suites.push_str(&format!(
            "<testsuite name=\"{p}\" tests=\"1\" skipped=\"1\"><testcase name=\"platform {p}\" classname=\"{p}\"><skipped message=\"not covered\"/></testcase></testsuite>\n"
        ));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"scopebox run {RUN_ID}\" tests=\"{tests}\" failures=\"{failures}\">\n{suites}</testsuites>\n"
    )
}
