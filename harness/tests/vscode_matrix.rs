//! The shipped vscode matrix (`harness/matrix/vscode.json`): as data (valid, at least 25
//! cases covering all four origins, JSONC vs strict, the bare map and its regression, the
//! file states and the unchanged explicit Claude Code output; every canary planted; every stdio
//! server runs the sentinel; no id or canary clashes with the claude-code matrix), and its
//! host-stable part run by the real runner logic against the real mcpscope in a rebased layout,
//! then re-judged from the evidence files. Host-stable excludes what only the container makes
//! true: mode-0000 denial (tests may run as root), paths and instruction levels spelled as
//! container paths, and `~/.claude.json` project keys.

use crate::support::{
    args_of, assert_every_canary_planted, host_stable, layout, mcpscope_bin, run_and_replay,
    runs_sentinel, shipped,
};
use scopebox_schema::judge;
use scopebox_schema::matrix::{Case, FixtureEntry, Matrix};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const ORIGIN_FILES: [&str; 4] = [
    "/work/proj/.vscode/mcp.json",
    "/work/proj/.mcp.json",
    "/home/node/.config/Code/User/mcp.json",
    "/home/node/.copilot/mcp-config.json",
];

fn matrix() -> Matrix {
    shipped("vscode.json")
}

fn facts(c: &Case) -> BTreeMap<&str, &Value> {
    c.expect
        .json
        .iter()
        .filter_map(|f| f.equals.as_ref().map(|v| (f.pointer.as_str(), v)))
        .collect()
}

/// Every value a fact expects anywhere in the case.
fn expects(c: &Case, value: &str) -> bool {
    c.expect
        .json
        .iter()
        .any(|f| f.equals.as_ref().and_then(Value::as_str) == Some(value))
}

#[test]
fn the_vscode_matrix_validates_and_covers_the_profile() {
    let m = matrix();
    assert_eq!(m.name, "vscode");
    assert!(m.cases.len() >= 25, "{} cases", m.cases.len());
    let vscode: Vec<&Case> = m.cases.iter().filter(|c| c.client == "vscode").collect();
    assert!(vscode.len() >= 25, "{} vscode cases", vscode.len());
    for c in &m.cases {
        assert!(c.fault.is_none(), "{}: faults belong in faults/", c.id);
        assert!(c.id.starts_with("vscode-"), "{}", c.id);
        let selects_vscode = c.args.windows(2).any(|w| w == ["--client", "vscode"]);
        // A vscode case either selects the profile or is a usage error about it.
        if selects_vscode || c.client == "claude-code" {
            assert_eq!(
                selects_vscode,
                c.client == "vscode",
                "{}: client field vs args",
                c.id
            );
        } else {
            assert_eq!(c.expect.exit_code, 2, "{}", c.id);
        }
    }
    // Every origin's file appears in some fixture, present and in a non-present state.
    for file in ORIGIN_FILES {
        let cases: Vec<&&Case> = vscode
            .iter()
            .filter(|c| c.fixture.iter().any(|e| judge::entry_path(e) == file))
            .collect();
        assert!(cases.len() >= 3, "{file}: only {} cases", cases.len());
    }
    let states: BTreeSet<&str> = vscode
        .iter()
        .flat_map(|c| c.expect.json.iter())
        .filter(|f| f.pointer.ends_with("/state"))
        .filter_map(|f| f.equals.as_ref().and_then(Value::as_str))
        .collect();
    for s in [
        "present",
        "missing",
        "unreadable",
        "malformed",
        "symlink-skipped",
        "not-file",
        "too-large",
    ] {
        assert!(states.contains(s), "no case expects a {s} source");
    }
    let need = [
        "bare-map",
        "mixed-container",
        "duplicate-key",
        "invalid-utf8",
        "comment",
        "trailing-comma",
        "byte-order-mark",
        "symlink-in-path",
        "permission-denied",
        "fifo",
        "wrong-container-type",
        "home-not-set",
    ];
    for value in need {
        assert!(
            vscode.iter().any(|c| expects(c, value)),
            "no case expects {value}"
        );
    }
    // The malformed-neighbour regression, JSONC accepted, and the unchanged Claude output.
    let by_id: BTreeMap<&str, &Case> = m.cases.iter().map(|c| (c.id.as_str(), c)).collect();
    let regression = facts(by_id["vscode-bare-map-malformed-servers-neighbour"]);
    assert_eq!(regression["/servers/3/name"], "servers");
    assert_eq!(regression["/servers/3/shape/valid"], false);
    assert_eq!(regression["/sources/1/serverCount"], 4);
    for origin in ["vscode-project", "copilot-project", "vscode-user"] {
        let c = by_id[format!("vscode-jsonc-{origin}").as_str()];
        assert_eq!(c.expect.exit_code, 0);
        let bytes = match &c.fixture[1] {
            FixtureEntry::File { content, .. } => judge::file_bytes(content).unwrap(),
            other => panic!("{other:?}"),
        };
        assert!(bytes.starts_with("\u{feff}//".as_bytes()) && bytes.ends_with(b",},}\n"));
    }
    let explicit = by_id["vscode-claude-explicit-unchanged"];
    assert_eq!(explicit.args[1..3], ["--client", "claude-code"]);
    assert_eq!(facts(explicit)["/client"], "claude-code");
}

#[test]
fn every_canary_is_planted_and_none_clashes_with_the_claude_code_matrix() {
    let m = matrix();
    assert_every_canary_planted(&m);
    // The lead concatenates matrices: ids and canaries must stay unique.
    let mut merged = shipped("claude-code.json");
    merged.cases.extend(m.cases.clone());
    merged.canaries.extend(m.canaries.clone());
    judge::validate_matrix(&merged).unwrap();
}

#[test]
fn every_stdio_server_runs_the_sentinel_and_carries_canaries() {
    let m = matrix();
    let is_canary = |s: &str| m.canaries.iter().any(|c| s.contains(c.as_str()));
    let mut stdio = 0;
    for c in &m.cases {
        for e in &c.fixture {
            let FixtureEntry::File { path, content, .. } = e else {
                continue;
            };
            let bytes = judge::file_bytes(content).unwrap();
            // JSONC fixtures are checked through their strict twins in other cases.
            let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(&bytes) else {
                continue;
            };
            let maps: Vec<&serde_json::Map<String, Value>> = match path.as_str() {
                "/work/proj/.mcp.json" if !doc.contains_key("mcpServers") => vec![&doc],
                _ => ["servers", "mcpServers"]
                    .iter()
                    .filter_map(|k| doc.get(*k).and_then(Value::as_object))
                    .chain(
                        doc.get("projects")
                            .and_then(Value::as_object)
                            .into_iter()
                            .flat_map(|p| p.values())
                            .filter_map(|p| p.get("mcpServers").and_then(Value::as_object)),
                    )
                    .collect(),
            };
            for servers in maps {
                for (name, s) in servers {
                    let Some(cmd) = s.get("command").and_then(Value::as_str) else {
                        continue;
                    };
                    stdio += 1;
                    assert!(runs_sentinel(c, cmd), "{}: {path}: {name} runs {cmd}", c.id);
                    for a in args_of(s) {
                        assert!(
                            is_canary(a),
                            "{}: {path}: arg {a:?} carries no canary",
                            c.id
                        );
                    }
                    for (k, v) in s
                        .get("env")
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten()
                    {
                        assert!(is_canary(k), "{}: {path}: env name {k:?}", c.id);
                        if let Some(v) = v.as_str() {
                            assert!(is_canary(v), "{}: {path}: env value {v:?}", c.id);
                        }
                    }
                }
            }
        }
    }
    assert!(stdio > 100, "only {stdio} stdio servers checked");
}

#[test]
fn host_stable_vscode_cases_pass_against_the_real_mcpscope_and_replay() {
    let full = matrix();
    let cases: Vec<Case> = full
        .cases
        .iter()
        // Source containers name no path in this profile: only `/path` facts are container paths.
        .filter(|c| host_stable(c, &[], &["/path"]))
        .cloned()
        .collect();
    assert!(cases.len() >= 30, "only {} host-stable cases", cases.len());
    let matrix = Matrix { cases, ..full };
    let (_dir, l) = layout(&mcpscope_bin());
    run_and_replay(&l, &matrix);
}
