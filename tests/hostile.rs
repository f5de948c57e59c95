//! Hostile candidates against the real engine (issue 12, "Done when"): `scopebox-hostile` (the
//! `hostile/` member), built statically like mcpscope and packed as `bin/mcpscope` with the
//! attack it is to make, goes through `scopebox run --candidate FILE --expect-sha256 HEX` over
//! a small Claude Code matrix whose fixtures configure stdio servers. Each attack must make the
//! run fail (exit 1), every case fail for the reason that names the attack, and the bundle fail
//! `scopebox-verify` in the check that re-derives that reason. The honest control beside them:
//! the real mcpscope over the same matrix passes, and its bundle verifies. Slow (static builds,
//! one container per attack): run selectively, `cargo test -p scopebox --test tests hostile`.

use crate::support::{run_matrix, small_matrix, tempdir, workspace, Outcome};
use scopebox_receipts::archive::{self, ArchiveFile, ARCHIVE_BIN};
use scopebox_receipts::verify::{verify_dir, Report};
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::evidence::CaseRecord;
use scopebox_schema::platform::Platform;
use scopebox_schema::receipt::{Receipt, RECEIPT_FILE};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where the archive tells the hostile binary which attack to make (beside `bin/`).
const ATTACK_FILE: &str = "share/scopebox-hostile/attack";
/// Cases of the Claude Code matrix each run covers: both configure stdio servers with canaries.
const CASES: usize = 2;

/// The static `scopebox-hostile` for linux/amd64, built once per test binary.
fn hostile_binary() -> &'static [u8] {
    static BINARY: OnceLock<Vec<u8>> = OnceLock::new();
    BINARY.get_or_init(|| {
        let root = workspace();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(scopebox::toolchain::build_static(
                &root,
                &[Platform::LinuxAmd64],
                &["scopebox-hostile"],
                scopebox::toolchain::Priority::Normal,
            ))
            .expect("scopebox-hostile builds statically");
        scopebox::toolchain::read_bin(&root, Platform::LinuxAmd64, "scopebox-hostile")
            .expect("the built binary")
    })
}

/// A candidate archive (the pack format) whose `bin/mcpscope` makes `attack`; its path and
/// sha256.
fn hostile_archive(dir: &Path, attack: &str) -> (PathBuf, String) {
    let files = vec![
        ArchiveFile {
            path: ARCHIVE_BIN.to_string(),
            mode: 0o755,
            bytes: hostile_binary().to_vec(),
        },
        ArchiveFile {
            path: ATTACK_FILE.to_string(),
            mode: 0o644,
            bytes: format!("{attack}\n").into_bytes(),
        },
    ];
    let bytes = archive::write_archive(&files);
    let path = dir.join(format!("mcpscope-hostile-{attack}-x86_64-linux.tar.gz"));
    std::fs::write(&path, &bytes).unwrap();
    (path, sha256_hex(&bytes))
}

/// What a run of one candidate left: the exit code, the per-case failures the runner recorded,
/// the verdicts the orchestrator wrote into the receipt after judging the evidence again, and
/// the independent verifier's report on the bundle.
struct Judged {
    code: i32,
    stderr: String,
    /// The `--json` summary.
    stdout: String,
    junit: String,
    case_failures: Vec<(String, Vec<String>)>,
    receipt_verdicts: Vec<String>,
    report: Report,
}

/// `scopebox run --platform linux/amd64` of the small matrix into `dir/bundle`, with the
/// candidate archive and its digest when given: what it said, the bundle and its receipt.
fn run_small(dir: &Path, candidate: Option<(&Path, &str)>) -> (Outcome, PathBuf, Receipt) {
    run_small_with(dir, candidate, &[])
}

/// `run_small` with more arguments for `scopebox run`.
fn run_small_with(
    dir: &Path,
    candidate: Option<(&Path, &str)>,
    more: &[&str],
) -> (Outcome, PathBuf, Receipt) {
    let matrix = small_matrix(dir, CASES);
    let bundle = dir.join("bundle");
    let mut extra = vec!["--platform", "linux/amd64"];
    extra.extend_from_slice(more);
    if let Some((path, digest)) = candidate {
        extra.extend([
            "--candidate",
            path.to_str().unwrap(),
            "--expect-sha256",
            digest,
        ]);
    }
    let out = run_matrix(&bundle, &matrix, &extra);
    let receipt: Receipt = serde_json::from_slice(
        &std::fs::read(bundle.join(RECEIPT_FILE))
            .unwrap_or_else(|e| panic!("no receipt ({e}): {}", out.stderr)),
    )
    .expect("receipt.json parses");
    (out, bundle, receipt)
}

fn run_candidate(dir: &Path, candidate: Option<(&Path, &str)>) -> Judged {
    let (out, bundle, receipt) = run_small(dir, candidate);
    let run = receipt
        .platform(Platform::LinuxAmd64)
        .unwrap_or_else(|| panic!("linux/amd64 did not run: {}", out.stderr));
    let case_failures = run
        .cases
        .iter()
        .enumerate()
        .map(|(position, c)| {
            // Each case's evidence is in the directory of the shard that ran it.
            let dir = run.shard_dir(position % run.shard_count());
            let record: CaseRecord = serde_json::from_slice(
                &std::fs::read(bundle.join(format!("{dir}/evidence/cases/{}/record.json", c.id)))
                    .unwrap(),
            )
            .unwrap();
            (c.id.clone(), record.verdict.failures)
        })
        .collect();
    let receipt_verdicts = run.cases.iter().map(|c| c.verdict.clone()).collect();
    let report = verify_dir(&bundle, &Default::default()).expect("the bundle is readable");
    Judged {
        code: out.code,
        stderr: out.stderr,
        stdout: out.stdout,
        junit: std::fs::read_to_string(bundle.join("junit.xml")).expect("junit.xml"),
        case_failures,
        receipt_verdicts,
        report,
    }
}

fn failures_of<'a>(report: &'a Report, check: &str) -> &'a [String] {
    let c = report
        .checks
        .iter()
        .find(|c| c.id == check)
        .unwrap_or_else(|| panic!("no check {check}: {:?}", report.failed_ids()));
    assert!(!c.ok, "{check} passed: {:?}", report.failed_ids());
    &c.failures
}

/// Runs `attack` and asserts the run and the bundle fail: exit 1, every case names `reason`,
/// and each of the verifier's `checks` fails naming it too. What the run left, for more.
fn assert_caught(attack: &str, reason: &str, checks: &[&str]) -> Judged {
    let dir = tempdir();
    let (archive, digest) = hostile_archive(dir.path(), attack);
    let judged = run_candidate(dir.path(), Some((&archive, &digest)));
    assert_eq!(judged.code, 1, "{attack}: {}", judged.stderr);
    // Whatever the candidate named or printed is shown escaped: no control or format character
    // but the line break on stderr, in the `--json` summary (JSON lets format characters
    // through raw) or in the bundle's junit.xml, which CI pages render.
    for (what, text) in [
        ("stderr", &judged.stderr),
        ("stdout", &judged.stdout),
        ("junit.xml", &judged.junit),
    ] {
        let raw = scopebox_terminal::obeyed(text);
        assert!(raw.is_empty(), "{attack}: raw {raw:?} in {what}: {text}");
    }
    assert_eq!(judged.case_failures.len(), CASES);
    // The orchestrator's own judging fails every case too, not only the runner's and the
    // verifier's.
    assert_eq!(judged.receipt_verdicts, vec!["fail"; CASES], "{attack}");
    for (id, failures) in &judged.case_failures {
        assert!(
            failures.iter().any(|f| f.contains(reason)),
            "{attack}: case {id} does not fail with {reason:?}: {failures:#?}"
        );
    }
    assert!(!judged.report.verified, "{attack}: the bundle verified");
    for check in checks {
        let failed = failures_of(&judged.report, check);
        assert!(
            failed.iter().any(|f| f.contains(reason)),
            "{attack}: {check} does not name {reason:?}: {failed:#?}"
        );
    }
    judged
}

/// The verifier's checks a witnessed attack must fail: the re-derived verdicts, and the
/// witness records re-judged on their own.
const WITNESS_CHECKS: [&str; 2] = ["linux-amd64/cases.pass", "linux-amd64/cases.witness"];

pub fn executing_every_configured_command_then_deleting_the_marker_is_caught_by_the_witness() {
    assert_caught(
        "exec-delete-marker",
        "witness: executed execve",
        &WITNESS_CHECKS,
    );
}

pub fn executing_with_a_redirected_marker_environment_is_caught_by_the_witness() {
    assert_caught(
        "exec-redirected-marker",
        "witness: executed execve",
        &WITNESS_CHECKS,
    );
}

pub fn a_double_forked_daemon_that_executes_later_is_caught() {
    assert_caught(
        "double-fork-daemon",
        "witness: process created",
        &WITNESS_CHECKS,
    );
}

pub fn executing_through_memfd_create_and_execveat_is_caught() {
    assert_caught("memfd-exec", "witness: executed execveat", &WITNESS_CHECKS);
}

pub fn a_canary_leaked_base64_encoded_in_an_extra_json_field_is_caught() {
    // The configs hold the case's canaries; the verifier's direct re-check names the encoding.
    assert_caught(
        "base64-canary",
        " in stdout (base64)",
        &["linux-amd64/cases.pass", "linux-amd64/cases.canaries"],
    );
}

pub fn a_canary_written_to_a_file_in_tmp_and_deleted_is_caught_by_the_witness() {
    assert_caught(
        "tmp-file-canary",
        "witness: opened for writing",
        &WITNESS_CHECKS,
    );
}

pub fn a_file_named_with_terminal_escapes_is_caught_and_never_printed_raw() {
    let judged = assert_caught(
        "escape-names",
        "witness: opened for writing",
        &WITNESS_CHECKS,
    );
    // Shown, not stripped: the name is there to read, escape by escape.
    for (what, text) in [("stderr", &judged.stderr), ("junit.xml", &judged.junit)] {
        assert!(
            text.contains(r"/work/\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mred\u{202e}txt.exe"),
            "{what}: {text}"
        );
    }
}

pub fn a_flood_of_files_is_caught_and_reported_within_bounds() {
    // 5,000 files a case: each is a failure in its record (which keeps them all), but what is
    // shown — the runner's progress, the closing problems, `--json`, junit.xml — quotes the
    // first few and counts the rest.
    let judged = assert_caught("file-flood", "witness: opened for writing", &WITNESS_CHECKS);
    for (what, text) in [
        ("stderr", &judged.stderr),
        ("stdout", &judged.stdout),
        ("junit.xml", &judged.junit),
    ] {
        assert!(text.len() < 256 * 1024, "{what}: {} bytes", text.len());
        assert!(text.contains(" more (see the record)"), "{what}: {text}");
    }
}

/// Runs `attack`, which takes the harness down instead of a case, and asserts the run fails
/// closed: exit 1, no case passes in the receipt, the verifier rejects the bundle naming the
/// runner's end in `check`, and nothing is left on the engine.
fn assert_fails_closed(attack: &str, check: &str, reason: &str) {
    let dir = tempdir();
    let (archive, digest) = hostile_archive(dir.path(), attack);
    let (out, bundle, receipt) = run_small(dir.path(), Some((&archive, &digest)));
    assert_eq!(out.code, 1, "{attack}: {}", out.stderr);
    assert!(
        scopebox_terminal::obeyed(&out.stderr).is_empty(),
        "{}",
        out.stderr
    );
    let run = receipt.platform(Platform::LinuxAmd64).unwrap();
    let verdicts: Vec<&str> = run.cases.iter().map(|c| c.verdict.as_str()).collect();
    assert_eq!(verdicts, vec!["fail"; CASES], "{attack}");
    let report = verify_dir(&bundle, &Default::default()).expect("the bundle is readable");
    assert!(!report.verified, "{attack}: the bundle verified");
    let failed = failures_of(&report, check);
    assert!(
        failed.iter().any(|f| f.contains(reason)),
        "{attack}: {check} does not name {reason:?}: {failed:#?}"
    );
    let id = &receipt.run_id;
    assert!(crate::support::labelled(&format!("scopebox.run={id}")).is_empty());
}

pub fn a_candidate_that_empties_and_moves_the_journal_fails_the_run_closed() {
    // truncate(2) and rename(2) open nothing, so the witness has nothing to report: the runner
    // finds it when it finishes the journal, and says so instead of finishing it.
    assert_fails_closed(
        "truncate-journal",
        "linux-amd64/execution.completed",
        "the runner stopped: harness: failed to finish /evidence/journal.tar: its path names nothing (No such file or directory (os error 2)): something else than the runner changed the case journal",
    );
}

pub fn a_fifo_planted_where_the_runner_writes_its_summary_fails_the_run_closed_at_once() {
    // mknod(2) opens nothing; a plain write of the summary would then wait for a reader until
    // the deadline (180 s). Evidence files are created new, so it is refused at once.
    assert_fails_closed(
        "plant-summary",
        "linux-amd64/execution.completed",
        "the runner stopped: harness: failed to write /evidence/summary.json: something is at its path already",
    );
}

pub fn evidence_past_the_journal_budget_stops_the_runner_and_keeps_the_cases_before() {
    // 64 MiB on each stream (all a capture keeps) for each case, both cases in one container:
    // the second would take the case journal past its 192 MiB budget, past which the
    // orchestrator's download of the container's evidence (256 MiB) would refuse all of it.
    let dir = tempdir();
    let (archive, digest) = hostile_archive(dir.path(), "flood-output");
    let (out, bundle, receipt) =
        run_small_with(dir.path(), Some((&archive, &digest)), &["--shards", "1"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = verify_dir(&bundle, &Default::default()).expect("the bundle is readable");
    assert!(!report.verified);
    let run = receipt.platform(Platform::LinuxAmd64).unwrap();
    let [first, second] = &run.cases[..] else {
        panic!("{} cases", run.cases.len());
    };
    let stopped = failures_of(&report, "linux-amd64/execution.completed");
    let budget = format!(
        "the runner stopped: harness: failed to append to /evidence/journal.tar: cases/{}'s evidence (",
        second.id
    );
    assert!(
        stopped
            .iter()
            .any(|f| f.starts_with(&budget) && f.contains("past its budget of 201326592 bytes")),
        "{stopped:#?}"
    );
    // The first case's evidence is all there (its 64 MiB of stdout with it), and judged: fail.
    let kept = bundle.join(format!("{}/evidence/cases/{}", run.shard_dir(0), first.id));
    let stdout = std::fs::metadata(kept.join("stdout")).expect("the first case's stdout");
    assert_eq!(stdout.len(), 64 * 1024 * 1024);
    assert!(kept.join("record.json").is_file());
    assert_eq!(first.verdict, "fail");
    assert!(!bundle
        .join(format!("{}/evidence/cases/{}", run.shard_dir(0), second.id))
        .exists());
    assert!(crate::support::labelled(&format!("scopebox.run={}", receipt.run_id)).is_empty());
}

pub fn a_candidate_that_kills_the_runner_fails_the_run_closed() {
    assert_fails_closed(
        "kill-runner",
        "linux-amd64/execution.completed",
        "the runner did not finish",
    );
}

pub fn a_candidate_that_kills_the_witness_fails_the_run_closed() {
    assert_fails_closed(
        "kill-witness",
        "linux-amd64/execution.completed",
        "the runner did not finish",
    );
}

pub fn a_tree_deeper_than_a_path_can_name_is_caught_and_cleared() {
    // The walk after the case stops at its depth bound and says so; clearing removes the tree
    // through directory fds, so the next case runs (the run completes: each case fails for its
    // own tree, not for the one before).
    let judged = assert_caught(
        "deep-tree",
        "deeper than 128 levels below its fixture root",
        &["linux-amd64/cases.pass"],
    );
    assert_completed(&judged);
}

pub fn fixture_roots_locked_by_the_candidate_are_caught_and_given_back() {
    let judged = assert_caught(
        "lock-roots",
        "fixture walk after the run: mode of fixture root /work: 0000, not 0755 as before (given back)",
        &["linux-amd64/cases.pass"],
    );
    assert_completed(&judged);
}

pub fn entries_left_in_tmp_without_an_open_are_caught_and_cleared() {
    // mkdir, symlink and mknod open nothing, so the witness reports none of them: the scratch's
    // listing after the case finds each, and it is emptied before the next.
    let judged = assert_caught(
        "plant-tmp",
        "dir /tmp/cache made outside the fixture roots",
        &["linux-amd64/cases.pass"],
    );
    for (id, failures) in &judged.case_failures {
        for other in [
            "symlink /tmp/journal made outside the fixture roots",
            "fifo /tmp/pipe made outside the fixture roots",
        ] {
            assert!(failures.iter().any(|f| f == other), "{id}: {failures:#?}");
        }
    }
    assert_completed(&judged);
}

pub fn times_and_extended_attributes_changed_without_an_open_are_caught() {
    // utimensat and setxattr open nothing and leave kind, mode, size and content as they were:
    // the walk after the case compares the times and attributes the walk before noted.
    let judged = assert_caught(
        "touch-configs",
        "modification time changed, though what the walk records of it did not",
        &["linux-amd64/cases.pass"],
    );
    assert_completed(&judged);
}

/// The runner finished its shard with the exit code of failed cases (1), not of a harness
/// failure (3) nor without its journal's trailer: the attack failed the cases, not the harness.
fn assert_completed(judged: &Judged) {
    assert_eq!(
        failures_of(&judged.report, "linux-amd64/execution.completed"),
        ["the runner exited with code 1, expected exit code 0"]
    );
}

pub fn the_honest_candidate_passes_the_same_matrix_and_its_bundle_verifies() {
    let dir = tempdir();
    let judged = run_candidate(dir.path(), None);
    assert_eq!(judged.code, 0, "{}", judged.stderr);
    for (id, failures) in &judged.case_failures {
        assert!(failures.is_empty(), "case {id}: {failures:#?}");
    }
    assert_eq!(judged.receipt_verdicts, vec!["pass"; CASES]);
    assert!(
        judged.report.verified,
        "verifier failed: {:?}",
        judged.report.failed_ids()
    );
}
