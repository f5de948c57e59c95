//! The kernel witness end to end on this host: `run-rebased` under `scopebox-witness` (private
//! namespaces, the real sentinel with its fixed marker and socket). Every adversarial control
//! is caught by the judge from its raw records; an honest case's window holds exactly the
//! runner's spawn and the candidate's exec; a candidate that double-forks, writes /tmp or execs
//! through a memfd fails; a witness that cannot install its filter refuses the run.

use crate::support::{runner_bin, script, sentinel_bin, JournalFiles};
use scopebox_schema::evidence::{CaseRecord, Controls, RunError, ADVERSARIAL_CONTROLS};
use scopebox_schema::judge;
use scopebox_schema::matrix::Matrix;
use scopebox_schema::witness::{WitnessLevel, WitnessRecord, WitnessSyscall};
use std::path::Path;
use std::process::{Command, Output};

fn run_rebased(base: &Path, matrix: &Path, candidate: &Path) -> Output {
    Command::new(runner_bin())
        .arg("run-rebased")
        .arg(base)
        .arg(matrix)
        .arg(candidate)
        .arg(sentinel_bin())
        .output()
        .unwrap()
}

fn read<T: serde::de::DeserializeOwned>(path: &Path) -> T {
    serde_json::from_slice(
        &std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

const MATRIX: &str = r#"{"schemaVersion":1,"name":"w","canaries":["CANARY-W-1"],"cases":[
    {"id":"one","client":"claude-code","description":"","args":[],"expect":{"exitCode":0}}]}"#;

/// One case whose candidate is `body` (a shell script with the host's PATH).
fn case_with(body: &str) -> (tempfile::TempDir, Output) {
    let t = tempfile::tempdir().unwrap();
    let candidate = script(
        t.path(),
        "candidate",
        &format!("PATH=/usr/bin:/bin\n{body}"),
    );
    let matrix = t.path().join("m.json");
    std::fs::write(&matrix, MATRIX).unwrap();
    let out = run_rebased(&t.path().join("run"), &matrix, &candidate);
    (t, out)
}

fn case_failures(t: &tempfile::TempDir) -> (CaseRecord, WitnessRecord) {
    let journal = JournalFiles::read(&t.path().join("run/evidence"));
    (
        serde_json::from_slice(journal.file("one", "record.json")).unwrap(),
        serde_json::from_slice(journal.file("one", "witness.json")).unwrap(),
    )
}

#[test]
fn an_honest_case_is_witnessed_as_one_exec_and_every_control_is_caught() {
    let (t, out) = case_with("exit 0");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let (record, w) = case_failures(&t);
    assert!(record.verdict.pass, "{:?}", record.verdict.failures);
    assert_eq!(w.level, WitnessLevel::Native);
    let execs: Vec<_> = w.events.iter().filter(|e| e.syscall.is_exec()).collect();
    assert_eq!(execs.len(), 1, "{w:?}");
    assert_eq!(execs[0].path.as_deref(), Some(record.argv[0].as_str()));
    assert_eq!(execs[0].ppid, Some(w.runner_pid));
    assert!(
        w.events
            .iter()
            .all(|e| e.syscall.is_exec() || e.pid == w.runner_pid),
        "{w:?}"
    );
    assert!(w.survivors.is_empty() && w.sentinel_reports.is_empty());

    let evidence = t.path().join("run/evidence");
    let controls: Controls = read(&evidence.join("controls.json"));
    let names: Vec<&str> = controls
        .adversarial
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ADVERSARIAL_CONTROLS);
    let matrix: Matrix = serde_json::from_str(MATRIX).unwrap();
    for c in &controls.adversarial {
        assert!(c.caught, "{}: {:?}", c.name, c.failures);
        // Re-derived from the raw records alone, as the verifier does.
        let dir = evidence.join("controls").join(&c.name);
        let again = judge::adversarial_control(
            &c.name,
            &matrix,
            &read(&dir.join("record.json")),
            &std::fs::read(dir.join("stdout")).unwrap(),
            &std::fs::read(dir.join("stderr")).unwrap(),
            &read(&dir.join("witness.json")),
        );
        assert_eq!(&again, c);
    }
    let memfd: WitnessRecord = read(&evidence.join("controls/memfd-exec/witness.json"));
    let at = memfd
        .events
        .iter()
        .find(|e| e.syscall == WitnessSyscall::Execveat)
        .expect("the memfd exec was seen");
    assert!(
        at.dirfd_target
            .as_deref()
            .unwrap_or_default()
            .starts_with("/memfd:"),
        "{at:?}"
    );
    let daemon: WitnessRecord = read(&evidence.join("controls/double-fork-daemon/witness.json"));
    assert_eq!(daemon.survivors.len(), 1, "{daemon:?}");
    assert_eq!(
        daemon.survivors[0].ppid, daemon.runner_pid,
        "reparented to the subreaper"
    );
    let positive: WitnessRecord = read(&evidence.join("controls/positive/witness.json"));
    assert_eq!(
        positive.sentinel_reports.len(),
        1,
        "the sentinel reported over its socket"
    );
}

#[test]
fn a_candidate_that_runs_a_program_and_hides_the_marker_fails() {
    let sentinel = sentinel_bin();
    let (t, out) = case_with(&format!(
        "{} x; rm -f /tmp/scopebox-sentinel/fired; exit 0",
        sentinel.display()
    ));
    assert_eq!(out.status.code(), Some(1));
    let (record, _) = case_failures(&t);
    let f = &record.verdict.failures;
    assert!(!record.marker_present, "the marker was deleted");
    assert!(
        f.iter().any(|f| f.starts_with("witness: executed execve")),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|f| f.starts_with("sentinel reported execution")),
        "{f:?}"
    );
}

#[test]
fn a_candidate_whose_daemon_outlives_it_fails() {
    // A subshell in the background that sleeps: forked (a process created) and still alive
    // when the candidate exits (a survivor, killed).
    let (t, out) = case_with("( sleep 30 ) & exit 0");
    assert_eq!(out.status.code(), Some(1));
    let (record, w) = case_failures(&t);
    let f = &record.verdict.failures;
    assert!(
        f.iter().any(|f| f.starts_with("witness: process created")),
        "{f:?}"
    );
    assert!(!w.survivors.is_empty(), "{w:?}");
}

#[test]
fn a_candidate_that_writes_tmp_fails_even_after_deleting_the_file() {
    let (t, out) =
        case_with("echo CANARY-W-1 > /tmp/scopebox-w-$$; rm -f /tmp/scopebox-w-$$; exit 0");
    assert_eq!(out.status.code(), Some(1));
    let (record, _) = case_failures(&t);
    let f = &record.verdict.failures;
    assert!(
        f.iter()
            .any(|f| f.starts_with("witness: opened for writing: ")),
        "{f:?}"
    );
}

#[test]
fn a_witness_that_cannot_install_its_filter_refuses_the_run() {
    let t = tempfile::tempdir().unwrap();
    let matrix = t.path().join("m.json");
    std::fs::write(&matrix, MATRIX).unwrap();
    let base = t.path().join("run");
    let out = Command::new(runner_bin())
        .arg("run-rebased")
        .arg(&base)
        .arg(&matrix)
        .arg(sentinel_bin())
        .arg(sentinel_bin())
        .env(
            "SCOPEBOX_WITNESS_ERROR",
            "failed to install the kernel witness: test",
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let error: RunError = read(&base.join("evidence/error.json"));
    assert_eq!(error.kind, "witness");
    assert_eq!(error.message, "failed to install the kernel witness: test");
    assert!(!base.join("evidence/controls.json").exists(), "nothing ran");
}

#[test]
fn the_container_entry_needs_the_engine_machine() {
    let out = Command::new(runner_bin())
        .env_remove("SCOPEBOX_ENGINE_MACHINE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("SCOPEBOX_ENGINE_MACHINE is not set"),
        "{stderr}"
    );
    let out = Command::new(runner_bin())
        .env("SCOPEBOX_ENGINE_MACHINE", "../../tmp")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a machine name"));
}
