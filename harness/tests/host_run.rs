//! The host-stable part of the shipped claude-code matrix, run by the real runner logic
//! against the real mcpscope in a rebased layout, then re-judged from the evidence files the
//! way the verifier does. Host-stable excludes what only the container makes true: mode-0000
//! denial (tests may run as root), the fixed /etc/claude-code location, project keys and
//! paths spelled as container paths, instruction levels above the root.

use crate::util::{install_matrix, layout, mcpscope_bin, shipped};
use scopebox_harness::run::{run, RunStatus};
use scopebox_receipts::evidence::{
    CaseRecord, Controls, NegativeControlRecord, PositiveControlRecord, RunSummary, CONTROLS_FILE,
    NEGATIVE_CONTROL_RECORD_FILE, NEGATIVE_CONTROL_STDERR_FILE, NEGATIVE_CONTROL_STDOUT_FILE,
    POSITIVE_CONTROL_RECORD_FILE,
};
use scopebox_receipts::judge;
use scopebox_receipts::matrix::{Case, FixtureEntry, Matrix};

fn host_stable(c: &Case) -> bool {
    let fixture_ok = c.fixture.iter().all(|e| match e {
        FixtureEntry::File {
            path,
            content,
            mode,
        } => {
            let bytes = judge::file_bytes(content).unwrap();
            let text_ok = !judge::contains_bytes(&bytes, b"\"projects\"");
            mode.as_deref() != Some("0000") && !path.starts_with("/etc/claude-code") && text_ok
        }
        FixtureEntry::Dir { path, mode } | FixtureEntry::Fifo { path, mode } => {
            mode.as_deref() != Some("0000") && !path.starts_with("/etc/claude-code")
        }
        FixtureEntry::Symlink { path, .. } => !path.starts_with("/etc/claude-code"),
    });
    let facts_ok = c.expect.json.iter().all(|f| {
        !f.pointer.starts_with("/root/")
            && !f.pointer.starts_with("/instructions/")
            && !f.pointer.ends_with("/path")
            && !f.pointer.ends_with("/container")
    });
    let text_ok = c
        .expect
        .stdout_contains
        .iter()
        .all(|s| !s.contains("/work/") && !s.contains("/home/"));
    fixture_ok && facts_ok && text_ok && !c.env.contains_key("HOME")
}

#[test]
fn host_stable_shipped_cases_pass_against_the_real_mcpscope_and_replay() {
    if std::path::Path::new("/etc/claude-code").exists() {
        eprintln!(
            "skipped: this host has /etc/claude-code; the managed source would not be missing"
        );
        return;
    }
    let full = shipped("claude-code.json");
    let cases: Vec<Case> = full
        .cases
        .iter()
        .filter(|c| host_stable(c))
        .cloned()
        .collect();
    assert!(cases.len() >= 15, "only {} host-stable cases", cases.len());
    let matrix = Matrix { cases, ..full };
    let (_dir, l) = layout(&mcpscope_bin());
    install_matrix(&l, &matrix);
    let mut progress = Vec::new();
    let status = run(&l, &mut progress);
    let progress = String::from_utf8(progress).unwrap();
    assert_eq!(status, RunStatus::Passed, "{progress}");
    assert!(
        progress.contains("controls positive ok negative caught"),
        "{progress}"
    );

    // Replay every verdict from the evidence files alone, as the verifier does.
    let cases_dir = l.evidence_dir.join("cases");
    for c in &matrix.cases {
        let dir = cases_dir.join(&c.id);
        let record: CaseRecord =
            serde_json::from_slice(&std::fs::read(dir.join("record.json")).unwrap()).unwrap();
        let stdout = std::fs::read(dir.join("stdout")).unwrap();
        let stderr = std::fs::read(dir.join("stderr")).unwrap();
        let again = judge::judge(&matrix, c, &stdout, &stderr, &record);
        assert_eq!(again, record.verdict, "{}", c.id);
        assert!(
            record.verdict.pass,
            "{}: {:?}",
            c.id, record.verdict.failures
        );
        assert!(!record.marker_present);
    }
    // Both controls re-derived from their raw records, as the verifier does.
    let read = |rel: &str| std::fs::read(l.evidence_dir.join(rel)).unwrap();
    let controls: Controls = serde_json::from_slice(&read(CONTROLS_FILE)).unwrap();
    let positive: PositiveControlRecord =
        serde_json::from_slice(&read(POSITIVE_CONTROL_RECORD_FILE)).unwrap();
    assert_eq!(judge::positive_control(&positive), controls.positive);
    let negative: NegativeControlRecord =
        serde_json::from_slice(&read(NEGATIVE_CONTROL_RECORD_FILE)).unwrap();
    let (again, verdict) = judge::negative_control(
        &matrix,
        &negative,
        &read(NEGATIVE_CONTROL_STDOUT_FILE),
        &read(NEGATIVE_CONTROL_STDERR_FILE),
    );
    assert_eq!(again, controls.negative);
    assert!(again.caught, "{verdict:?}");
    assert_eq!(verdict, negative.run.verdict);

    let summary: RunSummary =
        serde_json::from_slice(&std::fs::read(l.evidence_dir.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary.total, matrix.cases.len());
    assert_eq!(summary.passed, matrix.cases.len());
    assert_eq!(summary.failed, 0);
    let ids: Vec<String> = matrix.cases.iter().map(|c| c.id.clone()).collect();
    assert_eq!(summary.case_ids, ids);
    assert_eq!(
        summary.matrix_sha256,
        scopebox_receipts::digest::sha256_file(&l.matrix_path).unwrap()
    );
    // The fixture roots are left empty.
    assert_eq!(scopebox_harness::fixture::walk(&l).unwrap(), vec![]);
}
