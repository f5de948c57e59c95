//! Full runs against the real engine: a small matrix passes on every platform (amd64 natively,
//! arm64 under emulation where it is set up) with one complete bundle that the independent
//! verifier accepts, and the candidates it tested are the ones `scopebox pack` writes; a
//! platform the engine cannot run is refused when named and reported as not covered when
//! defaulted; the stall fault matrix runs into the deadline, is killed and exported — in that
//! order, as its lifecycle log shows — and leaves nothing behind.

use crate::support::{
    assert_no_reaper_remains, labelled, run_id, run_matrix, scopebox, small_matrix, tempdir,
    workspace,
};
use scopebox_schema::digest::sha256_file;
use scopebox_schema::platform::Platform;
use scopebox_schema::receipt::{Execution, Receipt, ENVELOPE_FILE, RECEIPT_FILE};
use std::path::Path;

/// Whether this machine's engine can run linux/arm64 (natively or with a registered handler).
fn arm64_runs_here() -> bool {
    std::env::consts::ARCH == "aarch64"
        || std::fs::read_to_string("/proc/sys/fs/binfmt_misc/qemu-aarch64")
            .is_ok_and(|s| s.starts_with("enabled"))
}

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
        "inputs/matrix.json",
        "inputs/boundary-policy.json",
        "inputs/image-recipe.json",
    ] {
        assert!(receipt.files.contains_key(required), "{required} missing");
    }
    for run in &receipt.platforms {
        for required in [
            "inputs/pack-manifest.json",
            "inputs/image-config.json",
            "inputs/image-layer.json",
            "outer/container-inspect.json",
            "outer/image-inspect.json",
            "outer/execution.json",
        ] {
            assert!(
                receipt.files.contains_key(&run.path(required)),
                "{} missing",
                run.path(required)
            );
        }
        // The candidate archive's bytes are bound into the bundle.
        let blob = format!("inputs/blobs/{}", run.inputs.candidate_archive.sha256);
        assert!(receipt.files.contains_key(&blob), "{blob} missing");
    }
    receipt
}

/// The platform run of `platform` in `receipt`.
fn platform_run(receipt: &Receipt, platform: Platform) -> &scopebox_schema::receipt::PlatformRun {
    receipt
        .platform(platform)
        .unwrap_or_else(|| panic!("{platform} did not run: {:?}", receipt.not_covered))
}

pub fn a_full_run_passes_on_every_platform_and_writes_one_complete_verifiable_bundle() {
    let dir = tempdir();
    let matrix = small_matrix(dir.path(), 5);
    let bundle = dir.path().join("bundle");
    let out = run_matrix(&bundle, &matrix, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let expected: Vec<Platform> = if arm64_runs_here() {
        Platform::ALL.to_vec()
    } else {
        vec![Platform::LinuxAmd64]
    };
    let per_platform = 5 * expected.len();
    assert!(
        out.stderr.contains("cases passed — bundle") && out.stderr.contains("PASSED: "),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(&format!("{per_platform}/{per_platform} cases passed")),
        "{}",
        out.stderr
    );

    let receipt = assert_bundle_complete(&bundle);
    let ran: Vec<Platform> = receipt.platforms.iter().map(|p| p.platform).collect();
    assert_eq!(ran, expected, "{:?}", receipt.not_covered);
    assert_eq!(receipt.summary.cases, per_platform);
    assert_eq!(receipt.summary.cases_passed, per_platform);
    assert_eq!(receipt.summary.platforms_passed, expected.len());
    assert_eq!(
        std::fs::read(bundle.join("inputs/matrix.json")).unwrap(),
        std::fs::read(&matrix).unwrap(),
        "the matrix is bundled byte for byte"
    );
    // Each platform's matrix is split across the containers the CPU limit (2) and this host's
    // CPUs allow — a native platform beside an emulated one across one, the emulation filling
    // the cores; every further container observed its boundary, exited 0 and was removed.
    let host = std::thread::available_parallelism().map_or(1, |n| n.get());
    let any_emulated = receipt.platforms.iter().any(|p| p.emulated);
    for run in &receipt.platforms {
        let expected = if any_emulated && !run.emulated {
            1
        } else {
            host.clamp(1, 2)
        };
        assert_eq!(run.shard_count(), expected, "{}", run.platform);
        for shard in &run.shards {
            assert!(shard.boundary.applied_meets_policy && shard.boundary.observed_meets_policy);
            assert!(shard.cleanup.container_removed && shard.cleanup.volume_removed);
            assert_eq!(shard.execution.exit_code, Some(0));
            assert!(bundle
                .join(&shard.dir)
                .join("evidence/summary.json")
                .is_file());
        }
    }
    for run in &receipt.platforms {
        assert!(run.cases.iter().all(|c| c.verdict == "pass"));
        assert!(run.boundary.applied_meets_policy && run.boundary.observed_meets_policy);
        assert!(run.cleanup.container_removed && run.cleanup.volume_removed);
        assert_eq!(run.cleanup.leftovers, 0);
        assert_eq!(run.execution.exit_code, Some(0));
        // The runner saw the platform's machine; emulated exactly off the engine's arch.
        let observed = run.boundary.observed.as_ref().expect("observed");
        assert_eq!(observed.machine, run.platform.machine());
        assert_eq!(
            run.emulated,
            Platform::from_machine(&run.engine_architecture) != Some(run.platform)
        );
        // The image ID is the digest of the bundled config, as the engine reported it, and
        // the config carries the platform.
        let config = std::fs::read(bundle.join(run.path("inputs/image-config.json"))).unwrap();
        assert_eq!(
            run.inputs.image_id,
            format!("sha256:{}", scopebox_schema::digest::sha256_hex(&config))
        );
        let config: serde_json::Value = serde_json::from_slice(&config).unwrap();
        assert_eq!(config["architecture"], run.platform.oci_architecture());
        let inspect: serde_json::Value = serde_json::from_slice(
            &std::fs::read(bundle.join(run.path("outer/image-inspect.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(inspect["Id"], run.inputs.image_id.as_str());
        assert_eq!(inspect["Architecture"], run.platform.oci_architecture());
    }

    // Pack = run: `scopebox pack` writes exactly the archives this run tested.
    let packed = dir.path().join("packed");
    let mut args = vec!["pack", "--out", packed.to_str().unwrap(), "--json"];
    for p in &expected {
        args.extend(["--platform", p.name()]);
    }
    let pack = scopebox(&args, &[]);
    assert_eq!(pack.code, 0, "{pack:?}");
    let summary: serde_json::Value = serde_json::from_str(pack.stdout.trim()).unwrap();
    for p in &expected {
        let archive = summary["archives"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["platform"] == p.name())
            .unwrap_or_else(|| panic!("pack wrote no archive for {p}"));
        let run = platform_run(&receipt, *p);
        assert_eq!(
            archive["sha256"],
            run.inputs.candidate_archive.sha256.as_str(),
            "{p}: pack and run give different candidate archives"
        );
    }

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
    // A run that ended by itself leaves no reaper behind.
    assert_no_reaper_remains(&id);

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
    // keygen never overwrites: an existing key pair is refused input (exit 2).
    let out = scopebox(&["keygen", "--out", prefix.to_str().unwrap()], &[]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("it already exists"), "{out:?}");
}

pub fn the_stall_fault_hits_the_deadline_is_killed_exported_and_removed() {
    let dir = tempdir();
    let bundle = dir.path().join("bundle");
    let matrix = workspace().join("harness/matrix/faults/stall.json");
    let out = run_matrix(
        &bundle,
        &matrix,
        // One container: this is the single container's deadline lifecycle (with shards, the
        // stall's container is the one that times out; the others exit).
        &[
            "--deadline",
            "5",
            "--platform",
            "linux/amd64",
            "--shards",
            "1",
        ],
    );
    assert_eq!(out.code, 124, "{}", out.stderr);
    assert!(out.stderr.contains("TIMED OUT"), "{}", out.stderr);

    let pdir = bundle.join("platforms/linux-amd64");
    let execution: Execution =
        serde_json::from_slice(&std::fs::read(pdir.join("outer/execution.json")).unwrap()).unwrap();
    assert_eq!(execution.status, "timed-out");
    assert!(execution.timed_out);
    assert_eq!(execution.signal.as_deref(), Some("SIGKILL"));
    assert_eq!(execution.deadline_seconds, 5);
    // Killed before the export: the inspection taken after it shows a stopped, killed container.
    let inspect: serde_json::Value =
        serde_json::from_slice(&std::fs::read(pdir.join("outer/container-inspect.json")).unwrap())
            .unwrap();
    assert_eq!(inspect["State"]["Running"], false);
    assert_eq!(inspect["State"]["ExitCode"], 137);
    // The evidence written before the stall was still exported.
    assert!(pdir.join("evidence/boundary.json").is_file());
    assert!(pdir
        .join("evidence/cases/before-stall/record.json")
        .is_file());
    assert!(
        !pdir.join("evidence/summary.json").exists(),
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
    let run = platform_run(&receipt, Platform::LinuxAmd64);
    assert!(run.execution.timed_out);
    assert!(run.cleanup.container_removed && run.cleanup.volume_removed);
    // The verifier rejects the run (it timed out) but finds its lifecycle in a safe order.
    let report =
        scopebox_receipts::verify::verify_dir(&bundle, &Default::default()).expect("readable");
    let check = |id: &str| report.checks.iter().find(|c| c.id == id).unwrap().clone();
    assert!(
        check("linux-amd64/execution.lifecycle").ok,
        "{:?}",
        check("linux-amd64/execution.lifecycle")
    );
    assert!(!check("linux-amd64/execution.completed").ok);
    assert!(!report.verified);
    let id = run_id(&out.stdout);
    assert!(labelled(&format!("scopebox.run={id}")).is_empty());
}

pub fn a_failing_case_fails_the_run_with_exit_1_and_still_cleans_up() {
    let dir = tempdir();
    let matrix_path = small_matrix(dir.path(), 2);
    let mut matrix: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&matrix_path).unwrap()).unwrap();
    // The second case now expects an exit code the candidate never gives.
    matrix["cases"][1]["expect"]["exitCode"] = 42.into();
    std::fs::write(&matrix_path, serde_json::to_vec(&matrix).unwrap()).unwrap();
    let bundle = dir.path().join("bundle");
    let out = run_matrix(&bundle, &matrix_path, &["--platform", "linux/amd64"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("FAILED: linux/amd64 — 1/2 cases passed"),
        "{}",
        out.stderr
    );
    let receipt = assert_bundle_complete(&bundle);
    let run = platform_run(&receipt, Platform::LinuxAmd64);
    assert_eq!(run.cases[0].verdict, "pass");
    assert_eq!(run.cases[1].verdict, "fail");
    assert!(run.cleanup.container_removed && run.cleanup.volume_removed);
    let report =
        scopebox_receipts::verify::verify_dir(&bundle, &Default::default()).expect("readable");
    assert!(
        !report.verified,
        "the verifier must reject a failed case too"
    );
    let id = run_id(&out.stdout);
    assert!(labelled(&format!("scopebox.run={id}")).is_empty());
}

/// `scopebox run --out BUNDLE --matrix MATRIX --json EXTRA…` on an engine that, as far as the
/// run can tell, cannot run linux/arm64: its probe is an ELF no kernel or emulator knows, which
/// the engine answers exactly as it does a real arm64 binary without a binfmt handler (exec
/// format error).
fn run_without_arm64(bundle: &Path, matrix: &Path, extra: &[&str]) -> crate::support::Outcome {
    let mut args = vec![
        "run",
        "--out",
        bundle.to_str().unwrap(),
        "--matrix",
        matrix.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    scopebox(
        &args,
        &[(scopebox::run::UNRUNNABLE_FOR_TESTS_ENV, "linux/arm64")],
    )
}

pub fn a_named_platform_the_engine_cannot_run_is_refused_before_anything_with_exit_4() {
    let dir = tempdir();
    let matrix = small_matrix(dir.path(), 2);
    let bundle = dir.path().join("bundle");
    let out = run_without_arm64(&bundle, &matrix, &["--platform", "linux/arm64"]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(out.stderr.contains("linux/arm64"), "{}", out.stderr);
    assert!(out.stderr.contains("qemu-user-static"), "{}", out.stderr);
    assert!(out.stderr.contains("exec format error"), "{}", out.stderr);
    let summary: serde_json::Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("--json gives one object ({e}): {:?}", out.stdout));
    assert_eq!(summary["exitCode"], 4);
    assert_eq!(summary["outcome"], "error");
    // Nothing left behind: no bundle directory, no container or volume of any run.
    assert!(
        !bundle.exists(),
        "a refused run created its bundle directory"
    );
    let leftovers: Vec<_> = labelled("scopebox.owner")
        .into_iter()
        .filter(|o| {
            o.labels.get("scopebox.owner").is_some_and(|owner| {
                owner.ends_with(&format!("/{}", std::process::id()))
                    || owner.contains("scopebox-e2e")
            })
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

pub fn the_default_set_runs_what_the_engine_can_and_says_plainly_what_it_did_not_cover() {
    let dir = tempdir();
    let matrix = small_matrix(dir.path(), 2);
    let bundle = dir.path().join("bundle");
    let out = run_without_arm64(&bundle, &matrix, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("PASSED: linux/amd64; linux/arm64 NOT COVERED — 2/2 cases passed"),
        "{}",
        out.stderr
    );
    let summary: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(summary["notCovered"][0]["platform"], "linux/arm64");
    let receipt = assert_bundle_complete(&bundle);
    assert_eq!(receipt.platforms.len(), 1);
    assert_eq!(receipt.not_covered.len(), 1);
    assert_eq!(receipt.not_covered[0].platform, Platform::LinuxArm64);
    // Why, and what to install. The engine's own words vary (Docker's runc says "exec format
    // error" on the probe's output; Podman under load may lose that output), so the test asks
    // for the orchestrator's sentence, which names the platform and the fix either way.
    let reason = &receipt.not_covered[0].reason;
    assert!(
        reason.contains("cannot run linux/arm64 images") && reason.contains("qemu-user-static"),
        "{reason}"
    );
    // The signed statement says so too.
    let statement = scopebox_receipts::attestation::statement_for(
        &receipt,
        &std::fs::read(bundle.join(RECEIPT_FILE)).unwrap(),
        None,
        true,
    );
    assert_eq!(statement.subject.len(), 2, "one archive and the receipt");
    assert!(statement.predicate.warned_tests[0].starts_with("linux/arm64: not covered"));
    let report =
        scopebox_receipts::verify::verify_dir(&bundle, &Default::default()).expect("readable");
    assert!(report.verified, "{:?}", report.failed_ids());
    assert_eq!(report.subject.not_covered.len(), 1);
}

pub fn a_build_that_fails_answers_json_and_leaves_no_bundle_directory() {
    let dir = tempdir();
    let matrix = small_matrix(dir.path(), 1);
    let bundle = dir.path().join("bundle");
    // The static builds run `$CARGO build …`: here a program that always fails.
    let out = scopebox(
        &[
            "run",
            "--out",
            bundle.to_str().unwrap(),
            "--matrix",
            matrix.to_str().unwrap(),
            "--platform",
            "linux/amd64",
            "--json",
        ],
        &[("CARGO", "false")],
    );
    assert_eq!(out.code, 1, "{out:?}");
    let v = crate::refusals::error_object(&out.stdout);
    assert_eq!(v["exitCode"], 1, "{v}");
    assert_eq!(v["error"]["code"], "build", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("cargo exited with exit code 1"), "{v}");
    assert_eq!(out.stderr.matches(message).count(), 1, "{}", out.stderr);
    assert!(
        !bundle.exists(),
        "a run that built nothing created its bundle"
    );
}

pub fn a_warm_run_goes_ahead_while_cargo_checks_and_keeps_its_bundle_when_nothing_changed() {
    let dir = tempdir();
    // A pack builds and waits for cargo: afterwards every binary is current.
    let pack = scopebox(
        &[
            "pack",
            "--platform",
            "linux/amd64",
            "--out",
            dir.path().join("pack").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(pack.code, 0, "{pack:?}");
    let matrix = small_matrix(dir.path(), 2);
    let bundle = dir.path().join("bundle");
    let out = run_matrix(&bundle, &matrix, &["--platform", "linux/amd64"]);
    assert_eq!(out.code, 0, "{out:?}");
    let going_ahead = out
        .stderr
        .find("scopebox: going ahead on the binaries built earlier while cargo checks them")
        .unwrap_or_else(|| panic!("the warm run did not go ahead: {}", out.stderr));
    let answered = out.stderr.find("scopebox: engine ").unwrap();
    assert!(
        going_ahead < answered,
        "said after the engine's line: {}",
        out.stderr
    );
    assert!(!out.stderr.contains("discarded"), "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["outcome"], "passed", "{v}");
    assert_eq!(v["verified"], true, "{v}");
    // And the bundle holds the candidate that was packed from the same binaries.
    let packed: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("pack").join("pack-manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        v["platforms"][0]["candidateSha256"], packed["archive"]["sha256"],
        "{v}\n{packed}"
    );
}

pub fn a_run_writes_junit_and_one_archive_that_verifies_on_its_own() {
    let dir = tempdir();
    let matrix = small_matrix(dir.path(), 3);
    let bundle = dir.path().join("bundle");
    let archive = dir.path().join("bundle.tar.gz");
    let junit = dir.path().join("report.xml");
    let out = run_matrix(
        &bundle,
        &matrix,
        &[
            "--platform",
            "linux/amd64",
            "--archive",
            archive.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let receipt = assert_bundle_complete(&bundle);
    // junit.xml is a bundle file (listed with its digest), and --junit is the same bytes.
    let xml = std::fs::read_to_string(bundle.join("junit.xml")).unwrap();
    assert!(receipt.files.contains_key("junit.xml"));
    assert_eq!(std::fs::read_to_string(&junit).unwrap(), xml);
    // One testcase per case, per control and for the platform; none failing.
    assert_eq!(xml.matches("<testcase ").count(), 3 + 2 + 1, "{xml}");
    assert!(
        xml.contains(r#"tests="6""#) && xml.contains(r#"failures="0""#),
        "{xml}"
    );
    for case in &receipt.platforms[0].cases {
        assert!(xml.contains(&format!(r#"name="{}""#, case.id)), "{xml}");
    }
    // The one file verifies by itself, under the directory's checks.
    let from_file = scopebox_receipts::bundle_file::read_archive(&archive).unwrap();
    let report = scopebox_receipts::verify::verify_loaded(&from_file, &Default::default()).unwrap();
    assert!(report.verified, "{:?}", report.failed_ids());
    let from_dir = scopebox_receipts::verify::verify_dir(&bundle, &Default::default()).unwrap();
    assert_eq!(report.checks.len(), from_dir.checks.len());
    let summary: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(summary["archive"], archive.to_str().unwrap());
    // An archive path that exists is refused before anything runs, and left as it was.
    let again = run_matrix(
        &dir.path().join("other"),
        &matrix,
        &[
            "--platform",
            "linux/amd64",
            "--archive",
            archive.to_str().unwrap(),
        ],
    );
    assert_eq!(again.code, 2, "{again:?}");
    assert!(!dir.path().join("other").exists());
    assert_eq!(
        scopebox_receipts::bundle_file::read_archive(&archive)
            .unwrap()
            .receipt_bytes,
        from_file.receipt_bytes
    );
}

pub fn a_signed_run_carries_provenance_that_the_verifier_ties_to_the_receipt() {
    let dir = tempdir();
    let matrix = small_matrix(dir.path(), 1);
    let bundle = dir.path().join("bundle");
    let out = run_matrix(&bundle, &matrix, &["--platform", "linux/amd64"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let receipt = assert_bundle_complete(&bundle);
    let provenance = receipt.provenance.clone().expect("a provenance record");
    // The facts are this checkout's and this engine's.
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(workspace())
        .output()
        .unwrap();
    let head = String::from_utf8(head.stdout).unwrap();
    assert_eq!(provenance.source.as_ref().unwrap().commit, head.trim());
    assert_eq!(
        provenance.cargo_lock_sha256,
        sha256_file(&workspace().join("Cargo.lock")).unwrap()
    );
    assert!(
        provenance.rustc.starts_with("rustc "),
        "{}",
        provenance.rustc
    );
    assert_eq!(
        provenance.engine.architecture,
        receipt.platforms[0].engine_architecture
    );
    assert!(!provenance.engine.version.is_empty());
    assert_eq!(provenance.candidates[0].origin, "built");

    let key = dir.path().join("release");
    let keygen = scopebox(&["keygen", "--out", key.to_str().unwrap()], &[]);
    assert_eq!(keygen.code, 0, "{keygen:?}");
    let pem = |suffix: &str| format!("{}{suffix}", key.display());
    let sign = scopebox(
        &[
            "sign",
            bundle.to_str().unwrap(),
            "--key",
            &pem(".pem"),
            "--json",
        ],
        &[],
    );
    assert_eq!(sign.code, 0, "{sign:?}");
    assert!(bundle.join("provenance.dsse.json").is_file());
    let options = scopebox_receipts::verify::VerifyOptions {
        public_key_pem: Some(std::fs::read_to_string(pem(".pub.pem")).unwrap()),
        ..Default::default()
    };
    let report = scopebox_receipts::verify::verify_dir(&bundle, &options).unwrap();
    assert!(report.verified, "{:?}", report.failed_ids());
    let ids: Vec<&str> = report.checks.iter().map(|c| c.id.as_str()).collect();
    for id in [
        "provenance.record",
        "provenance.signature",
        "provenance.statement",
    ] {
        assert!(ids.contains(&id), "{id} missing: {ids:?}");
    }
    // The statement names the archive the receipt names, as SLSA Provenance v1.
    let envelope: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("provenance.dsse.json")).unwrap())
            .unwrap();
    let payload =
        scopebox_receipts::dsse::decode_base64(envelope["payload"].as_str().unwrap()).unwrap();
    let statement: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(statement["predicateType"], "https://slsa.dev/provenance/v1");
    assert_eq!(
        statement["subject"][0]["digest"]["sha256"],
        receipt.platforms[0].inputs.candidate_archive.sha256
    );
    // A provenance envelope signed by another key is rejected under --key.
    let other = dir.path().join("other");
    assert_eq!(
        scopebox(&["keygen", "--out", other.to_str().unwrap()], &[]).code,
        0
    );
    let forged = scopebox_receipts::dsse::sign(
        scopebox_receipts::dsse::IN_TOTO_PAYLOAD_TYPE,
        &payload,
        &scopebox_receipts::dsse::signing_key_from_pem(
            &std::fs::read_to_string(format!("{}.pem", other.display())).unwrap(),
        )
        .unwrap(),
    );
    std::fs::write(
        bundle.join("provenance.dsse.json"),
        serde_json::to_vec(&forged).unwrap(),
    )
    .unwrap();
    let report = scopebox_receipts::verify::verify_dir(&bundle, &options).unwrap();
    // Its signature fails, and so its statement is not taken as the receipt's; nothing else.
    assert_eq!(
        report.failed_ids(),
        ["provenance.signature", "provenance.statement"]
    );
}
