//! The host-stable part of the shipped claude-code matrix, run by the real runner logic
//! against the real mcpscope in a rebased layout, then re-judged from the evidence files the
//! way the verifier does. Host-stable excludes what only the container makes true: mode-0000
//! denial (tests may run as root), the fixed /etc/claude-code location, project keys and
//! paths spelled as container paths, instruction levels above the root.

use crate::support::{
    host_stable, layout, mcpscope_bin, run_and_replay, run_and_replay_shard, shipped, JournalFiles,
};
use scopebox_schema::evidence::{
    Controls, NegativeControlRecord, PositiveControlRecord, RunSummary, Shard, CONTROLS_FILE,
    NEGATIVE_CONTROL_RECORD_FILE, NEGATIVE_CONTROL_STDERR_FILE, NEGATIVE_CONTROL_STDOUT_FILE,
    POSITIVE_CONTROL_RECORD_FILE,
};
use scopebox_schema::judge;
use scopebox_schema::matrix::{Case, Matrix};

/// The host-stable cases of the shipped claude-code matrix (and the matrix), or `None` (with a
/// note) on a host with a real /etc/claude-code.
fn host_stable_claude_code() -> Option<(Matrix, Vec<Case>)> {
    if std::path::Path::new("/etc/claude-code").exists() {
        eprintln!(
            "skipped: this host has /etc/claude-code; the managed source would not be missing"
        );
        return None;
    }
    let full = shipped("claude-code.json");
    let cases: Vec<Case> = full
        .cases
        .iter()
        // Managed files would be the host's real /etc/claude-code; the local source's
        // container names a project key, which is a container path.
        .filter(|c| host_stable(c, &["/etc/claude-code"], &["/path", "/container"]))
        .cloned()
        .collect();
    Some((full, cases))
}

#[test]
fn host_stable_shipped_cases_pass_against_the_real_mcpscope_and_replay() {
    let Some((full, cases)) = host_stable_claude_code() else {
        return;
    };
    assert!(cases.len() >= 15, "only {} host-stable cases", cases.len());
    let matrix = Matrix { cases, ..full };
    let (_dir, l) = layout(&mcpscope_bin());
    // Every verdict is replayed from the evidence files alone, as the verifier does.
    let progress = run_and_replay(&l, &matrix);
    assert!(
        progress.contains("controls positive ok negative caught"),
        "{progress}"
    );
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
        scopebox_schema::digest::sha256_file(&l.matrix_path).unwrap()
    );
    // The fixture roots are left empty.
    assert_eq!(scopebox_harness::fixture::walk(&l).unwrap(), vec![]);
}

/// Evidence that does not depend on the order: every case's stdout, stderr and record are the
/// same bytes when the matrix runs in reverse (in the same rebased layout, so the paths agree),
/// once the inherently per-run field — the duration — is redacted. A case that leaked state
/// into the next (a leftover fixture, a marker, a straggler) would show up here.
#[test]
fn each_case_leaves_the_same_evidence_whatever_order_the_cases_run_in() {
    let Some((full, cases)) = host_stable_claude_code() else {
        return;
    };
    let forward = Matrix {
        cases: cases.clone(),
        ..full.clone()
    };
    let mut reversed = forward.clone();
    reversed.cases.reverse();
    let (_dir, l) = layout(&mcpscope_bin());
    let evidence_of = |matrix: &Matrix| {
        let _ = std::fs::remove_dir_all(&l.evidence_dir);
        run_and_replay(&l, matrix);
        let journal = JournalFiles::read(&l.evidence_dir);
        let mut by_case = std::collections::BTreeMap::new();
        for c in &matrix.cases {
            let file = |name: &str| journal.file(&c.id, name).to_vec();
            let mut record: serde_json::Value =
                serde_json::from_slice(&file("record.json")).unwrap();
            record["durationMicros"] = 0.into();
            by_case.insert(c.id.clone(), (file("stdout"), file("stderr"), record));
        }
        by_case
    };
    let a = evidence_of(&forward);
    let b = evidence_of(&reversed);
    assert_eq!(a.len(), cases.len());
    for (id, evidence) in &a {
        assert_eq!(
            Some(evidence),
            b.get(id),
            "case {id} differs when run in reverse"
        );
    }
}

/// One case's evidence with the inherently per-run fields redacted: stdout, stderr, the record
/// (duration zeroed) and the witness record (pids and timings zeroed).
type CaseEvidence = (Vec<u8>, Vec<u8>, serde_json::Value, serde_json::Value);

fn case_evidence(l: &scopebox_harness::Layout, id: &str) -> CaseEvidence {
    let journal = JournalFiles::read(&l.evidence_dir);
    let file = |name: &str| journal.file(id, name).to_vec();
    let mut record: serde_json::Value = serde_json::from_slice(&file("record.json")).unwrap();
    record["durationMicros"] = 0.into();
    let mut witness: serde_json::Value = serde_json::from_slice(&file("witness.json")).unwrap();
    redact_per_run(&mut witness);
    (file("stdout"), file("stderr"), record, witness)
}

/// Zeroes every number under a key that names a process id or a time.
fn redact_per_run(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                let k = key.to_ascii_lowercase();
                if v.is_number()
                    && (k.contains("pid")
                        || k.contains("micros")
                        || k.ends_with("ms")
                        || k.contains("nanos"))
                {
                    *v = 0.into();
                } else {
                    redact_per_run(v);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_per_run),
        _ => {}
    }
}

/// Evidence that does not depend on the parallelism: the matrix split across 1, 2 and 3 shards
/// (`SCOPEBOX_SHARD`, as the orchestrator splits a platform across containers) leaves every
/// case's stdout, stderr, record and witness record the same bytes (per-run fields redacted),
/// each shard runs exactly its cases and every control, and the shards' summaries together
/// count the whole matrix.
#[test]
fn each_case_leaves_the_same_evidence_whatever_the_number_of_shards() {
    let Some((full, cases)) = host_stable_claude_code() else {
        return;
    };
    let matrix = Matrix { cases, ..full };
    let (_dir, l) = layout(&mcpscope_bin());
    let mut by_shards = Vec::new();
    for of in [1, 2, 3] {
        let mut evidence = std::collections::BTreeMap::new();
        let mut ran = 0;
        for index in 0..of {
            let _ = std::fs::remove_dir_all(&l.evidence_dir);
            let shard = Shard { index, of };
            let progress = run_and_replay_shard(&l, &matrix, shard);
            assert!(
                progress.contains("controls positive ok negative caught"),
                "{progress}"
            );
            let summary: RunSummary = serde_json::from_slice(
                &std::fs::read(l.evidence_dir.join("summary.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(summary.shard, shard);
            let mine: Vec<String> = matrix
                .cases
                .iter()
                .enumerate()
                .filter(|(p, _)| p % of == index)
                .map(|(_, c)| c.id.clone())
                .collect();
            assert_eq!(summary.case_ids, mine);
            assert_eq!(summary.passed, mine.len());
            ran += summary.total;
            for id in &mine {
                evidence.insert(id.clone(), case_evidence(&l, id));
            }
        }
        assert_eq!(ran, matrix.cases.len());
        by_shards.push(evidence);
    }
    let whole = &by_shards[0];
    assert_eq!(whole.len(), matrix.cases.len());
    for (of, split) in by_shards.iter().enumerate().skip(1) {
        for (id, evidence) in whole {
            assert_eq!(
                Some(evidence),
                split.get(id),
                "case {id} differs when the matrix runs in {} shards",
                of + 1
            );
        }
    }
}
