//! mcpscope against the native references: every scenario of
//! `harness/matrix/native-claude-code.json` and `native-codex.json` laid out
//! (rebased) in a temp dir exactly as the box lays it out, inventoried by the
//! library with the matrix's client profile, and judged by
//! `scopebox_schema::native` against what the real Claude Code 2.1.327 and
//! Codex 0.163.0 were recorded to launch and list in each mode. Also checks
//! that mcpscope says exactly what the matrix documents for each declaration,
//! and that the judge fails on doctored observations and inventories.

use std::path::{Path, PathBuf};

use mcpscope::{Client, Host, Os};
use scopebox_harness::{fixture, Layout};
use scopebox_schema::judge;
use scopebox_schema::matrix::{FileContent, FixtureEntry};
use scopebox_schema::native::{
    self, DivergenceKind, Failure, InventoryRow, Mode, NativeMatrix, Observation, RunVerdict,
    Scenario,
};

fn matrix_named(file: &str) -> NativeMatrix {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../harness/matrix")
        .join(file);
    let m: NativeMatrix = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(m.kind, native::KIND);
    m
}

fn matrix() -> NativeMatrix {
    matrix_named("native-claude-code.json")
}

fn codex_matrix() -> NativeMatrix {
    let m = matrix_named("native-codex.json");
    assert_eq!(
        (m.client.id.as_str(), m.client.version.as_str()),
        ("codex", "0.163.0")
    );
    m
}

/// A rebased layout below a fresh, canonical temp dir.
struct NativeTree {
    _dir: tempfile::TempDir,
    base: PathBuf,
    layout: Layout,
}

impl NativeTree {
    fn new() -> NativeTree {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let layout =
            Layout::rebased(&base, Path::new("/nonexistent"), Path::new("/nonexistent")).unwrap();
        NativeTree {
            _dir: dir,
            base,
            layout,
        }
    }

    /// Lay out `scenario`'s fixture. File contents that spell a project key
    /// (`"/work/...`) get the rebased spelling, as the keys are paths.
    fn lay_out(&self, scenario: &Scenario) {
        fixture::clear(&self.layout).unwrap();
        let rebased = format!("\"{}/work/", self.base.display());
        let entries: Vec<FixtureEntry> = scenario
            .fixture
            .iter()
            .map(|e| match e {
                FixtureEntry::File {
                    path,
                    content,
                    mode,
                } => {
                    let bytes = judge::file_bytes(content).unwrap();
                    let text = String::from_utf8(bytes).expect("native fixtures are UTF-8");
                    FixtureEntry::File {
                        path: path.clone(),
                        content: FileContent::Text(text.replace("\"/work/", &rebased)),
                        mode: mode.clone(),
                    }
                }
                other => other.clone(),
            })
            .collect();
        fixture::lay_out(&self.layout, &entries).unwrap();
    }

    /// mcpscope's inventory (the library's JSON document) of the laid-out tree,
    /// with the profile of the matrix's client. `/etc/codex` and `CODEX_HOME`
    /// (from the scenario's environment) are the tree's.
    fn inventory(&self, scenario: &Scenario, m: &NativeMatrix) -> serde_json::Value {
        let root = self.layout.host(scenario.root(&m.defaults));
        let codex_home = scenario
            .env
            .as_ref()
            .and_then(|e| e.get("CODEX_HOME"))
            .or_else(|| m.environment.get("CODEX_HOME"))
            .map(|h| self.layout.host(h));
        let host = Host {
            home: Some(self.layout.host("/home/node")),
            cwd: Some(root.clone()),
            os: Os::Linux,
            claude_managed_dir: self.layout.host("/etc/claude-code"),
            system_root: self.base.clone(),
            codex_home,
        };
        let selected = mcpscope::root::select(root.as_os_str(), host.cwd.as_deref()).unwrap();
        let client = Client::parse(&m.client.id).expect("a known mcpscope profile");
        let doc = mcpscope::document(client, &selected, &host);
        serde_json::from_str(&mcpscope::to_json(&doc)).unwrap()
    }

    fn rows(&self, document: &serde_json::Value) -> Vec<InventoryRow> {
        native::inventory_rows(document, |p| self.layout.logical(Path::new(p))).unwrap()
    }
}

/// Every scenario's inventory rows, in matrix order.
fn all_rows(m: &NativeMatrix) -> Vec<Vec<InventoryRow>> {
    let b = NativeTree::new();
    m.scenarios
        .iter()
        .map(|s| {
            b.lay_out(s);
            b.rows(&b.inventory(s, m))
        })
        .collect()
}

fn judge_all(
    m: &NativeMatrix,
    rows: &[Vec<InventoryRow>],
    observed: impl Fn(&Scenario, &native::Run) -> Observation,
) -> Vec<RunVerdict> {
    let mut n = 0;
    native::judge_matrix(m, observed, |_| {
        n += 1;
        rows[n - 1].clone()
    })
}

/// Every expected divergence of `verdicts`, one line each (what the note reports).
fn divergence_lines(verdicts: &[RunVerdict]) -> Vec<String> {
    verdicts
        .iter()
        .flat_map(|v| {
            v.expected_divergences.iter().map(move |d| {
                format!(
                    "{} {} {} {:?}: {}",
                    v.scenario,
                    v.mode.as_str(),
                    d.tag,
                    d.kind,
                    d.reason
                )
            })
        })
        .collect()
}

#[test]
fn every_native_scenario_and_mode_passes_the_differential_judge() {
    let m = matrix();
    assert_eq!(m.scenarios.len(), 51);
    let rows = all_rows(&m);
    let verdicts = judge_all(&m, &rows, |_, run| run.expect.clone());
    assert_eq!(verdicts.len(), 153);
    let failed: Vec<&RunVerdict> = verdicts.iter().filter(|v| !v.passed()).collect();
    assert!(failed.is_empty(), "{failed:#?}");

    // What the note reports: agreements and every expected divergence.
    let diverging = divergence_lines(&verdicts);
    let agree = verdicts
        .iter()
        .filter(|v| v.expected_divergences.is_empty())
        .count();
    eprintln!(
        "native differential: {} of {} runs pass; {agree} agree outright, {} carry named divergences:\n{}",
        verdicts.len(),
        verdicts.len(),
        verdicts.len() - agree,
        diverging.join("\n")
    );
    // Since mcpscope reads deniedMcpServers and disabledMcpServers, only the
    // strict-JSON misses (BOM, duplicate keys) are left, all of kind `missed`.
    assert!(!diverging.is_empty());
    assert!(verdicts
        .iter()
        .flat_map(|v| &v.expected_divergences)
        .all(|d| d.kind == DivergenceKind::Missed));
}

#[test]
fn mcpscope_says_what_the_matrix_documents_for_every_declaration() {
    let m = matrix();
    assert!(documented_rows(&m) >= 90);
}

/// Every declaration's row says exactly what the matrix documents (or there is
/// no row where it says none), and no row is undeclared; returns how many
/// declarations have rows.
fn documented_rows(m: &NativeMatrix) -> usize {
    let rows = all_rows(m);
    let mut checked = 0;
    for (s, rows) in m.scenarios.iter().zip(&rows) {
        for d in &s.declarations {
            let row = rows
                .iter()
                .find(|r| r.scope == d.scope && r.name == d.name && r.path == d.file);
            match (&d.predicted, row) {
                (None, None) => {}
                (None, Some(r)) => panic!("{} {}: unexpected row {r:?}", s.id, d.tag),
                (Some(_), None) => panic!("{} {}: no row", s.id, d.tag),
                (Some(p), Some(r)) => {
                    assert_eq!(r.predicted.as_ref(), Some(p), "{} {}", s.id, d.tag);
                    assert_eq!(r.approval, d.approval, "{} {}", s.id, d.tag);
                    checked += 1;
                }
            }
        }
        // No row the matrix does not know of.
        for r in rows {
            assert!(
                s.declarations
                    .iter()
                    .any(|d| d.scope == r.scope && d.name == r.name && d.file == r.path),
                "{}: undeclared row {r:?}",
                s.id
            );
        }
    }
    checked
}

#[test]
fn every_row_is_validated_against_the_pinned_version() {
    let m = matrix();
    let b = NativeTree::new();
    for s in &m.scenarios {
        b.lay_out(s);
        let doc = b.inventory(s, &m);
        for row in doc["servers"].as_array().unwrap() {
            assert_eq!(
                row["predictedLaunch"]["validatedAgainst"], m.client.version,
                "{}: {row}",
                s.id
            );
        }
    }
}

fn scenario_index(m: &NativeMatrix, id: &str) -> usize {
    m.scenarios.iter().position(|s| s.id == id).unwrap()
}

fn verdict<'v>(v: &'v [RunVerdict], id: &str, mode: Mode) -> &'v RunVerdict {
    v.iter()
        .find(|r| r.scenario == id && r.mode == mode)
        .unwrap()
}

#[test]
fn the_judge_fails_a_launch_mcpscope_did_not_predict_and_a_drifted_client() {
    let m = matrix();
    let rows = all_rows(&m);
    // The client also ran the pending project server in `mcp list`.
    let v = judge_all(&m, &rows, |s, run| {
        let mut o = run.expect.clone();
        if s.id == "baseline-stdio-all-scopes" && run.mode == Mode::List {
            o.launched.push("project/p1".into());
            o.launched.sort();
        }
        o
    });
    let r = verdict(&v, "baseline-stdio-all-scopes", Mode::List);
    assert!(r.failures.contains(&Failure::Prediction {
        tag: "project/p1".into(),
        predicted: "pending".into(),
        launched: true,
    }));
    assert!(r
        .failures
        .iter()
        .any(|f| matches!(f, Failure::ClientDrift { .. })));
    assert_eq!(v.iter().filter(|r| !r.passed()).count(), 1);
}

#[test]
fn the_judge_fails_a_miss_a_stale_divergence_and_a_missing_prediction() {
    let m = matrix();
    let mut rows = all_rows(&m);
    // mcpscope "forgets" the user server of the baseline.
    let i = scenario_index(&m, "baseline-stdio-all-scopes");
    rows[i].retain(|r| r.scope != "user");
    // mcpscope "reads" the BOM file: the named `missed` divergence is stale.
    let j = scenario_index(&m, "malformed-project-bom");
    rows[j].push(InventoryRow {
        scope: "project".into(),
        name: "p1".into(),
        path: "/work/proj/.mcp.json".into(),
        predicted: Some(native::ModePredictions {
            list: "launch".into(),
            get: None,
            headless: "launch".into(),
        }),
        approval: None,
    });
    // A row without predictedLaunch.
    let k = scenario_index(&m, "get-user-server");
    rows[k].iter_mut().for_each(|r| r.predicted = None);
    let v = judge_all(&m, &rows, |_, run| run.expect.clone());

    for mode in [Mode::List, Mode::Get, Mode::Headless] {
        let r = verdict(&v, "baseline-stdio-all-scopes", mode);
        let missed = r.failures.contains(&Failure::Missed {
            tag: "user/u1".into(),
        });
        // `get p1` neither lists nor runs u1.
        assert_eq!(missed, mode != Mode::Get, "{r:?}");
        let r = verdict(&v, "malformed-project-bom", mode);
        assert!(
            r.failures.contains(&Failure::StaleDivergence {
                tag: "project/p1".into(),
                kind: DivergenceKind::Missed,
            }),
            "{r:?}"
        );
        let r = verdict(&v, "get-user-server", mode);
        assert!(
            r.failures
                .iter()
                .all(|f| matches!(f, Failure::NoPrediction { .. })),
            "{r:?}"
        );
        assert_eq!(r.failures.len(), 3, "{r:?}");
    }
}

#[test]
fn the_judge_fails_an_undeclared_launch_and_a_listed_stranger() {
    let m = matrix();
    let rows = all_rows(&m);
    let v = judge_all(&m, &rows, |s, run| {
        let mut o = run.expect.clone();
        if s.id == "get-unknown-name" && run.mode == Mode::Headless {
            o.launched.push("user/ghost".into());
            o.listed.push(native::Listed {
                name: "ghost".into(),
                tag: None,
                status: "failed".into(),
                scope: None,
                source: Some("user".into()),
            });
        }
        o
    });
    let r = verdict(&v, "get-unknown-name", Mode::Headless);
    assert!(r.failures.contains(&Failure::UndeclaredLaunch {
        tag: "user/ghost".into()
    }));
    assert!(r.failures.iter().any(
        |f| matches!(f, Failure::ClientDrift { what } if what.contains("matches no declaration"))
    ));
}

// ---------------------------------------------------------------- Codex 0.163.0

#[test]
fn every_codex_scenario_and_mode_passes_the_differential_judge() {
    let m = codex_matrix();
    assert!(m.scenarios.len() >= 16);
    let rows = all_rows(&m);
    let verdicts = judge_all(&m, &rows, |_, run| run.expect.clone());
    assert_eq!(verdicts.len(), 3 * m.scenarios.len());
    let failed: Vec<&RunVerdict> = verdicts.iter().filter(|v| !v.passed()).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    let diverging = divergence_lines(&verdicts);
    eprintln!(
        "codex differential: {} of {} runs pass; {} named divergences:\n{}",
        verdicts.len(),
        verdicts.len(),
        diverging.len(),
        diverging.join("\n")
    );
    // Every launched declaration has an mcpscope row (no `missed` divergence is named).
    assert!(m
        .scenarios
        .iter()
        .flat_map(|s| &s.divergences)
        .all(|d| d.kind == DivergenceKind::Prediction));
}

#[test]
fn mcpscope_says_what_the_codex_matrix_documents_and_validates_against_0_163_0() {
    let m = codex_matrix();
    assert!(documented_rows(&m) >= 40);
    let b = NativeTree::new();
    for s in &m.scenarios {
        b.lay_out(s);
        let doc = b.inventory(s, &m);
        for row in doc["servers"].as_array().unwrap() {
            let p = &row["predictedLaunch"];
            // Null only where nothing was decided (trust or a file not read).
            let expected = if p["list"] == "unknown" && p["headless"] == "unknown" {
                serde_json::Value::Null
            } else {
                serde_json::json!("0.163.0")
            };
            assert_eq!(p["validatedAgainst"], expected, "{}: {row}", s.id);
        }
    }
}

#[test]
fn the_codex_judge_fails_a_dropped_row_and_a_wrong_prediction() {
    let m = codex_matrix();
    let mut rows = all_rows(&m);
    // mcpscope "forgets" the user server: exec launched it, list and get listed it.
    let i = scenario_index(&m, "user-stdio");
    rows[i].clear();
    // mcpscope "says" an untrusted project's server runs in exec.
    let j = scenario_index(&m, "project-untrusted");
    for r in rows[j].iter_mut().filter(|r| r.scope == "project") {
        let p = r.predicted.as_mut().unwrap();
        p.headless = "launch".into();
    }
    // mcpscope "says" mcp get contacts the http server, as mcp list does.
    let k = scenario_index(&m, "user-http");
    rows[k]
        .iter_mut()
        .for_each(|r| r.predicted.as_mut().unwrap().get = None);
    let v = judge_all(&m, &rows, |_, run| run.expect.clone());
    for mode in [Mode::List, Mode::Get, Mode::Headless] {
        let r = verdict(&v, "user-stdio", mode);
        assert_eq!(
            r.failures,
            [Failure::Missed {
                tag: "user/u1".into()
            }],
            "{r:?}"
        );
    }
    let r = verdict(&v, "project-untrusted", Mode::Headless);
    assert_eq!(
        r.failures,
        [Failure::Prediction {
            tag: "project/p1".into(),
            predicted: "launch".into(),
            launched: false
        }]
    );
    let r = verdict(&v, "user-http", Mode::Get);
    assert_eq!(
        r.failures,
        [Failure::Prediction {
            tag: "user/h1".into(),
            predicted: "launch".into(),
            launched: false
        }]
    );
    assert_eq!(v.iter().filter(|r| !r.passed()).count(), 5);
    // A stale divergence: mcpscope "learns" that an empty .git is no project root.
    let mut rows = all_rows(&m);
    let e = scenario_index(&m, "ancestor-empty-git-dir");
    for r in rows[e].iter_mut() {
        r.predicted.as_mut().unwrap().headless = "not-read".into();
    }
    let v = judge_all(&m, &rows, |_, run| run.expect.clone());
    let r = verdict(&v, "ancestor-empty-git-dir", Mode::Headless);
    assert!(
        r.failures
            .iter()
            .all(|f| matches!(f, Failure::StaleDivergence { .. })),
        "{r:?}"
    );
    assert_eq!(r.failures.len(), 2);
}
