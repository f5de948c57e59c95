//! The shipped matrix files as data. What these pin down: the claude-code matrix validates and
//! is big enough, every canary is planted somewhere and every fixture's stdio servers run the
//! sentinel (directly or through a symlink to it), every case with servers carries a canary in
//! every sensitive field kind, and the stall fixture stalls at its second case.

use crate::support::{args_of, assert_every_canary_planted, runs_sentinel, shipped};
use scopebox_schema::judge;
use scopebox_schema::matrix::{Case, Fault, FileContent, FixtureEntry, Matrix};
use serde_json::Value;
use std::collections::BTreeMap;

/// Every config document a case's fixture holds (files that parse as JSON objects, after
/// stripping a BOM/comment is NOT attempted: malformed files are checked by canary text only).
fn documents(m: &Matrix) -> Vec<(&Case, String, Value)> {
    let mut out = Vec::new();
    for c in &m.cases {
        for e in &c.fixture {
            if let FixtureEntry::File { path, content, .. } = e {
                let bytes = judge::file_bytes(content).unwrap();
                if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
                    out.push((c, path.clone(), v));
                }
            }
        }
    }
    out
}

fn server_maps(doc: &Value) -> Vec<&serde_json::Map<String, Value>> {
    let mut maps = Vec::new();
    if let Some(m) = doc.get("mcpServers").and_then(Value::as_object) {
        maps.push(m);
    }
    if let Some(projects) = doc.get("projects").and_then(Value::as_object) {
        for p in projects.values() {
            if let Some(m) = p.get("mcpServers").and_then(Value::as_object) {
                maps.push(m);
            }
        }
    }
    maps
}

#[test]
fn the_claude_code_matrix_validates_and_has_at_least_40_cases() {
    let m = shipped("claude-code.json");
    assert_eq!(m.name, "claude-code");
    assert!(m.cases.len() >= 40, "{} cases", m.cases.len());
    assert!(m.cases.iter().all(|c| c.client == "claude-code"));
    assert!(
        m.cases.iter().all(|c| c.fault.is_none()),
        "faults belong in faults/"
    );
}

#[test]
fn every_canary_is_planted_in_some_fixture() {
    assert_every_canary_planted(&shipped("claude-code.json"));
}

#[test]
fn every_stdio_server_runs_the_sentinel() {
    let m = shipped("claude-code.json");
    let mut stdio = 0;
    for (case, path, doc) in documents(&m) {
        for servers in server_maps(&doc) {
            for (name, s) in servers {
                let Some(cmd) = s.get("command") else {
                    continue;
                };
                let Some(cmd) = cmd.as_str() else { continue }; // deliberately malformed entries
                stdio += 1;
                // A command may be a canary-named link to the sentinel the case lays out.
                assert!(
                    runs_sentinel(case, cmd),
                    "{}: {path}: server {name} runs {cmd}, not the sentinel",
                    case.id
                );
            }
        }
    }
    assert!(stdio > 100, "only {stdio} stdio servers checked");
}

#[test]
fn every_case_with_servers_plants_a_canary_in_every_sensitive_field() {
    let m = shipped("claude-code.json");
    let is_canary = |s: &str| m.canaries.iter().any(|c| s.contains(c.as_str()));
    let mut checked = 0;
    for (c, path, doc) in documents(&m) {
        let case = &c.id;
        let mut kinds: BTreeMap<&str, bool> = BTreeMap::new();
        let mut any = false;
        for servers in server_maps(&doc) {
            for s in servers.values() {
                any = true;
                let str_of = |k: &str| s.get(k).and_then(Value::as_str);
                if let Some(c) = str_of("command") {
                    *kinds.entry("command").or_default() |= is_canary(c);
                }
                if let Some(u) = str_of("url") {
                    *kinds.entry("url").or_default() |= is_canary(u);
                }
                for a in args_of(s) {
                    assert!(is_canary(a), "{case}: {path}: arg {a:?} carries no canary");
                }
                for (field, names, values) in [
                    ("env", "env-name", "env-value"),
                    ("headers", "header-name", "header-value"),
                ] {
                    for (k, v) in s
                        .get(field)
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten()
                    {
                        *kinds.entry(names).or_default() |= is_canary(k);
                        *kinds.entry(values).or_default() |=
                            is_canary(v.as_str().unwrap_or_default());
                    }
                }
            }
        }
        if !any {
            continue;
        }
        checked += 1;
        let planted: Vec<&str> = kinds
            .iter()
            .filter(|(_, has)| **has)
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(
            planted,
            [
                "command",
                "env-name",
                "env-value",
                "header-name",
                "header-value",
                "url"
            ],
            "{case}: {path}: canaries missing from some sensitive field kind"
        );
    }
    assert!(checked >= 40, "only {checked} documents with servers");
}

#[test]
fn the_stall_fixture_stalls_at_its_second_case() {
    let m = shipped("faults/stall.json");
    let faults: Vec<Option<Fault>> = m.cases.iter().map(|c| c.fault).collect();
    assert_eq!(faults, [None, Some(Fault::Stall), None]);
}

#[test]
fn matrices_concatenate_by_case_list() {
    // The lead merges profiles by concatenating case lists and canaries: the result must
    // still validate as long as ids stay unique.
    let mut a = shipped("claude-code.json");
    let b = shipped("faults/stall.json");
    a.canaries.extend(
        b.canaries
            .iter()
            .filter(|c| !a.canaries.contains(c))
            .cloned()
            .collect::<Vec<_>>(),
    );
    a.cases.extend(b.cases.clone());
    assert_eq!(judge::validate_matrix(&a), Ok(()));
    a.cases.extend(b.cases);
    let problems = judge::validate_matrix(&a).unwrap_err();
    assert!(
        problems.iter().any(|p| p == "case stall: id is not unique"),
        "{problems:?}"
    );
}

#[test]
fn fill_sizes_straddle_the_read_limit() {
    let m = shipped("claude-code.json");
    let sizes: Vec<u64> = m
        .cases
        .iter()
        .flat_map(|c| &c.fixture)
        .filter_map(|e| match e {
            FixtureEntry::File {
                content: FileContent::Fill { size, .. },
                ..
            } => Some(*size),
            _ => None,
        })
        .collect();
    assert!(sizes.contains(&(1 << 20)));
    assert!(sizes.contains(&((1 << 20) + 1)));
}
