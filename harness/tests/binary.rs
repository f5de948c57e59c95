//! The scopebox-runner binary: its exit codes, `check-matrix`, matrix refusal with
//! evidence/error.json, and the `stall` fault (the runner blocks at the stalled case, having
//! written the evidence of every earlier case and no summary).

use crate::support::{
    mcpscope_bin, runner_bin, script, sentinel_bin, workspace_root, JournalFiles,
};
use scopebox_schema::evidence::RunError;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn check_matrix_accepts_the_shipped_files_and_refuses_a_bad_one() {
    let dir = workspace_root().join("harness/matrix");
    let out = Command::new(runner_bin())
        .arg("check-matrix")
        .arg(dir.join("claude-code.json"))
        .arg(dir.join("faults/stall.json"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("claude-code.json: ok, "));

    let t = tempfile::tempdir().unwrap();
    let bad = t.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"schemaVersion":1,"name":"x","canaries":[""],"cases":[]}"#,
    )
    .unwrap();
    let out = Command::new(runner_bin())
        .arg("check-matrix")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("canaries[0] is empty"), "{stderr}");
    assert!(stderr.contains("matrix has no cases"), "{stderr}");
}

#[test]
fn unexpected_arguments_are_a_usage_error() {
    let out = Command::new(runner_bin())
        .arg("--frobnicate")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: scopebox-runner"));
}

#[test]
fn a_malformed_matrix_exits_2_with_error_json_and_no_summary() {
    let t = tempfile::tempdir().unwrap();
    let matrix = t.path().join("m.json");
    std::fs::write(&matrix, "{ not json").unwrap();
    let base = t.path().join("run");
    let out = Command::new(runner_bin())
        .arg("run-rebased")
        .arg(&base)
        .arg(&matrix)
        .arg(sentinel_bin())
        .arg(sentinel_bin())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let error: RunError =
        serde_json::from_slice(&std::fs::read(base.join("evidence/error.json")).unwrap()).unwrap();
    assert_eq!(error.kind, "matrix-malformed");
    assert!(error.message.starts_with("failed to parse "));
    assert!(!base.join("evidence/summary.json").exists());
    assert!(
        !base.join("evidence/boundary.json").exists(),
        "nothing runs before the matrix is accepted"
    );
}

#[test]
fn a_failing_case_exits_1() {
    let t = tempfile::tempdir().unwrap();
    let candidate = script(t.path(), "c", "exit 3");
    let matrix = t.path().join("m.json");
    std::fs::write(
        &matrix,
        r#"{"schemaVersion":1,"name":"x","canaries":[],"cases":[
            {"id":"one","client":"claude-code","description":"","args":[],"expect":{"exitCode":0}}]}"#,
    )
    .unwrap();
    let base = t.path().join("run");
    let out = Command::new(runner_bin())
        .arg("run-rebased")
        .args([&base, &matrix, &candidate, &sentinel_bin()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("case one fail "), "{stderr}");
    assert!(stderr.contains("  exit code 3, expected 0"), "{stderr}");
    assert!(base.join("evidence/summary.json").exists());
}

#[test]
fn the_stall_fault_blocks_after_the_earlier_cases_are_recorded() {
    let t = tempfile::tempdir().unwrap();
    let base = t.path().join("run");
    let mut child = Command::new(runner_bin())
        .arg("run-rebased")
        .arg(&base)
        .arg(workspace_root().join("harness/matrix/faults/stall.json"))
        .arg(mcpscope_bin())
        .arg(sentinel_bin())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        let stalled = line.starts_with("case stall stall");
        seen.push(line);
        if stalled {
            break;
        }
    }
    // The runner announced the stall; it must still be running (blocked), never exited.
    assert_eq!(child.try_wait().unwrap(), None, "{seen:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        seen.iter()
            .any(|l| l.starts_with("case before-stall pass ")),
        "{seen:?}"
    );
    let ev = base.join("evidence");
    // The journal the killed runner left has no trailer; its complete entries are the evidence.
    let journal = JournalFiles::read(&ev);
    assert!(!journal.file("before-stall", "record.json").is_empty());
    assert!(!journal.recorded("stall"));
    assert!(!journal.recorded("after-stall"));
    assert!(!ev.join("summary.json").exists());
}
