//! What the judge's tests share: a small matrix, its one clean case, the walk and record a
//! clean run of a case leaves, the failures `judge` finds in a record, and a JSON fact.

use super::{expected_env, expected_observation, judge};
use crate::digest::sha256_hex;
use crate::evidence::{CaseRecord, FixtureObservation, Verdict};
use crate::matrix::{Case, Expectations, FileContent, FixtureEntry, JsonFact, Matrix};
use std::collections::BTreeMap;

pub(super) fn matrix(cases: Vec<Case>) -> Matrix {
    Matrix {
        schema_version: 1,
        name: "t".into(),
        canaries: vec!["CANARY-CMD-7f3a".into(), "CANARY-ENV-1".into()],
        cases,
    }
}

pub(super) fn case() -> Case {
    Case {
        id: "present".into(),
        client: "claude-code".into(),
        description: "d".into(),
        args: vec!["/work/p".into(), "--json".into()],
        cwd: None,
        env: BTreeMap::new(),
        fixture: vec![FixtureEntry::File {
            path: "/work/p/.mcp.json".into(),
            content: FileContent::Text("{}".into()),
            mode: None,
        }],
        expect: Expectations {
            exit_code: 0,
            ..Default::default()
        },
        fault: None,
        deadline_ms: None,
    }
}

pub(super) fn walk_of(case: &Case) -> Vec<FixtureObservation> {
    let mut obs: Vec<FixtureObservation> = case
        .fixture
        .iter()
        .map(|e| expected_observation(e).unwrap())
        .collect();
    obs.push(FixtureObservation {
        path: "/work/p".into(),
        kind: "dir".into(),
        mode: "0755".into(),
        size: 4096,
        sha256: None,
    });
    obs.sort();
    obs
}

pub(super) fn record(case: &Case, stdout: &[u8], stderr: &[u8]) -> CaseRecord {
    let walk = walk_of(case);
    CaseRecord {
        id: case.id.clone(),
        argv: vec![],
        cwd: "/work".into(),
        env: expected_env(case)
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        duration_micros: 1,
        stdout_sha256: sha256_hex(stdout),
        stderr_sha256: sha256_hex(stderr),
        fixtures_before: walk.clone(),
        fixtures_after: walk,
        fixtures_after_problems: vec![],
        marker_present: false,
        verdict: Verdict {
            pass: true,
            failures: vec![],
        },
        written: vec![],
    }
}

pub(super) fn failures_of(
    case: &Case,
    stdout: &[u8],
    stderr: &[u8],
    rec: &CaseRecord,
) -> Vec<String> {
    let m = matrix(vec![case.clone()]);
    let v = judge(&m, case, stdout, stderr, rec);
    assert_eq!(v.pass, v.failures.is_empty());
    v.failures
}

pub(super) fn fact(pointer: &str) -> JsonFact {
    JsonFact {
        pointer: pointer.into(),
        equals: None,
        length: None,
        absent: None,
    }
}
