//! The clients matrix (`harness/matrix/clients.json`, the fourteen clients beyond Claude Code,
//! VS Code and DSH, plus `--client all` and `--fail-on`) as data: it validates; every client of
//! `shipped.json` but the first three has its standard cases (every file present in JSON and in
//! the human report, nothing configured, malformed with a position, too large, a symlink, a
//! same-name case); every canary is planted; no case id or canary clashes with the other
//! shipped files; and the shipped manifest lists every matrix file in this directory.

use crate::support::{assert_every_canary_planted, shipped, workspace_root};
use scopebox_schema::shipped::manifest;
use std::collections::BTreeSet;

#[test]
fn the_clients_matrix_validates_and_every_new_client_has_its_standard_cases() {
    let m = shipped("clients.json");
    assert_eq!(m.name, "clients");
    let ids: BTreeSet<&str> = m.cases.iter().map(|c| c.id.as_str()).collect();
    let clients = &manifest().clients;
    for client in clients.iter().skip(3).filter(|c| *c != "all") {
        for suffix in [
            "all-present-json",
            "all-present-human",
            "nothing-configured",
            "malformed",
            "malformed-human",
            "too-large",
            "symlink",
        ] {
            let id = format!("{client}-{suffix}");
            assert!(ids.contains(id.as_str()), "missing case {id}");
        }
        assert!(
            ids.contains(format!("{client}-same-name-two-scopes").as_str())
                || ids.contains(format!("{client}-same-name-duplicate-key").as_str()),
            "{client}: no same-name case"
        );
        let case = m
            .cases
            .iter()
            .find(|c| c.id == format!("{client}-malformed"))
            .unwrap();
        assert!(
            case.expect
                .json
                .iter()
                .any(|f| f.pointer.ends_with("/position/line")),
            "{client}: the malformed case pins no position"
        );
    }
    assert!(m.cases.iter().filter(|c| c.client == "all").count() >= 4);
    assert!(m.cases.iter().all(|c| c.fault.is_none()));
}

#[test]
fn every_clients_canary_is_planted() {
    assert_every_canary_planted(&shipped("clients.json"));
}

#[test]
fn no_case_id_or_canary_is_shared_between_shipped_files() {
    let mut ids = BTreeSet::new();
    let mut canaries: Vec<(String, String)> = Vec::new();
    for file in &manifest().matrices {
        let m = shipped(file);
        for c in &m.cases {
            assert!(
                ids.insert(c.id.clone()),
                "case id {} repeats ({file})",
                c.id
            );
        }
        canaries.extend(m.canaries.iter().map(|c| (c.clone(), file.clone())));
    }
    let clients: BTreeSet<&str> = canaries
        .iter()
        .filter(|(_, f)| f == "clients.json")
        .map(|(c, _)| c.as_str())
        .collect();
    for (c, f) in &canaries {
        if f != "clients.json" {
            assert!(
                !clients.contains(c.as_str()),
                "canary {c} in {f} and clients.json"
            );
        }
    }
}

#[test]
fn the_manifest_lists_every_matrix_file_in_the_directory() {
    let dir = workspace_root().join("harness/matrix");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        // The native reference's scenario files (`native-*.json`) are not case matrices: the
        // native run reads them, the shipped matrix never does.
        .filter(|n| n.ends_with(".json") && n != "shipped.json" && !n.starts_with("native-"))
        .collect();
    on_disk.sort();
    let mut listed = manifest().matrices.clone();
    listed.sort();
    assert_eq!(on_disk, listed);
}
