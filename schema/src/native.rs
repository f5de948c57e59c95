//! The native matrix (`harness/matrix/native-claude-code.json`, schema in `docs/native-matrix.md`)
//! and the differential judge: for each scenario and mode, what the real client launched and
//! listed against mcpscope's inventory of the same tree. A pure function of its inputs, so the
//! runner, the orchestrator and the verifier reach the same verdicts from the same records.
//!
//! Rules (per run): (1) the client's facts equal the scenario's expectation, else *client drift*
//! (the reference changed, not mcpscope); (2) every launched tag is a declared one; (3) *no miss*:
//! every launched or listed declaration has an mcpscope row, unless a `missed` divergence names it
//! for the mode; (4) *predictions hold*: a declaration mcpscope predicts `launch` for the mode
//! (for `get NAME`: a row named NAME predicted `launch` for `get`, or for `list` when the row
//! gives no `get`) was launched, and one launched
//! was predicted `launch`, except rows predicted `unknown` (no claim) and divergences the scenario
//! names for the mode; (5) every named divergence really diverges (a stale one fails, so the
//! matrix cannot hide a fixed bug). The client executing the sentinels is what it is expected to
//! do and never counts against the candidate.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::matrix::FixtureEntry;

/// `kind` of a native matrix.
pub const KIND: &str = "native";

/// The whole native matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NativeMatrix {
    pub schema_version: u32,
    pub kind: String,
    pub name: String,
    pub client: NativeClient,
    pub environment: BTreeMap<String, String>,
    pub model_api: ModelApi,
    pub listeners: Vec<u16>,
    pub sentinel: String,
    pub tag_arg_prefix: String,
    /// Absolute paths the client is observed to try to exec that the native image does not hold
    /// (each attempt fails with ENOENT: nothing runs), so the witness's exec of one is not
    /// "other execution". Codex 0.163.0 tries `getconf` and `lsb_release` through `PATH`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent_execs: Vec<String>,
    pub modes: Modes,
    pub defaults: Defaults,
    pub scenarios: Vec<Scenario>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NativeClient {
    pub id: String,
    pub version: String,
    pub lock: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelApi {
    pub port: u16,
    pub status: u16,
}

/// argv after the client, per mode (`{name}` stands for the run's name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Modes {
    pub list: Vec<String>,
    pub get: Vec<String>,
    pub headless: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Defaults {
    pub cwd: String,
    pub root: String,
    pub deadline_s: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub id: String,
    pub description: String,
    pub behaviours: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    pub fixture: Vec<FixtureEntry>,
    pub declarations: Vec<Declaration>,
    pub runs: Vec<Run>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub divergences: Vec<Divergence>,
}

impl Scenario {
    /// The root mcpscope is given (matrix spelling).
    pub fn root<'a>(&'a self, defaults: &'a Defaults) -> &'a str {
        self.root.as_deref().unwrap_or(&defaults.root)
    }
}

/// One server declaration in the fixture, with what mcpscope is documented to say about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declaration {
    pub tag: String,
    pub name: String,
    pub scope: String,
    pub transport: String,
    pub file: String,
    /// `None`: mcpscope has no row for it (its file is malformed as a whole).
    pub predicted: Option<ModePredictions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalView>,
}

/// `predictedLaunch` without `validatedAgainst`. `get` is given where `mcp get NAME` does not
/// launch what `mcp list` would under NAME (Codex: list contacts http servers, get nothing);
/// without it, `get` is judged by `list` (Claude Code).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModePredictions {
    pub list: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get: Option<String>,
    pub headless: String,
}

impl ModePredictions {
    /// The prediction for `mcp get` of this declaration's name.
    pub fn for_get(&self) -> &str {
        self.get.as_deref().unwrap_or(&self.list)
    }
}

/// `approval` as the inventory writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalView {
    pub state: String,
    pub by: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    List,
    Get,
    Headless,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::List => "list",
            Mode::Get => "get",
            Mode::Headless => "headless",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub expect: Observation,
}

/// What the client did in one run: recorded (from raw captures), or expected (the matrix).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Observation {
    pub exit_code: i32,
    /// Sorted tags that fired or connected.
    pub launched: Vec<String>,
    pub listed: Vec<Listed>,
}

/// One listed entry: `list` and `get` carry the tag (and `get` the client's scope label);
/// `headless` the `system/init` entry's `source`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listed {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DivergenceKind {
    Missed,
    Prediction,
}

/// A divergence the scenario expects, with its reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Divergence {
    pub tag: String,
    pub modes: Vec<Mode>,
    pub kind: DivergenceKind,
    pub reason: String,
}

/// The part of one mcpscope server row the judge needs, paths in matrix spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryRow {
    pub scope: String,
    pub name: String,
    pub path: String,
    /// `None`: the row carries no `predictedLaunch`.
    pub predicted: Option<ModePredictions>,
    pub approval: Option<ApprovalView>,
}

/// The rows of an mcpscope `--json` document; `logical` maps a path as mcpscope printed it to
/// the matrix spelling (the identity in the box).
pub fn inventory_rows(
    document: &serde_json::Value,
    logical: impl Fn(&str) -> String,
) -> Result<Vec<InventoryRow>, String> {
    let servers = document
        .get("servers")
        .and_then(|s| s.as_array())
        .ok_or("the inventory has no servers array")?;
    let text = |row: &serde_json::Value, key: &str| -> Result<String, String> {
        row.get(key)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .ok_or_else(|| format!("a server row has no string {key}"))
    };
    servers
        .iter()
        .map(|row| {
            let predicted = match row.get("predictedLaunch") {
                None => None,
                Some(p) => Some(ModePredictions {
                    list: text(p, "list")?,
                    get: match p.get("get") {
                        None => None,
                        Some(_) => Some(text(p, "get")?),
                    },
                    headless: text(p, "headless")?,
                }),
            };
            let approval = match row.get("approval") {
                None => None,
                Some(a) => Some(ApprovalView {
                    state: text(a, "state")?,
                    by: match a.get("by") {
                        Some(serde_json::Value::String(s)) => Some(logical(s)),
                        Some(serde_json::Value::Null) | None => None,
                        Some(_) => return Err("approval.by is not a string or null".into()),
                    },
                }),
            };
            Ok(InventoryRow {
                scope: text(row, "scope")?,
                name: text(row, "name")?,
                path: logical(&text(row, "path")?),
                predicted,
                approval,
            })
        })
        .collect()
}

/// One failure of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "failure", rename_all = "kebab-case")]
pub enum Failure {
    /// The client's exit code, launched set or listed entries differ from the expectation.
    ClientDrift { what: String },
    /// A tag fired that no declaration has.
    UndeclaredLaunch { tag: String },
    /// A launched or listed declaration mcpscope has no row for (hard failure).
    Missed { tag: String },
    /// mcpscope's `predictedLaunch` disagrees with what was launched.
    Prediction {
        tag: String,
        predicted: String,
        launched: bool,
    },
    /// A row mcpscope must carry a prediction on has none.
    NoPrediction { tag: String },
    /// A named divergence that does not diverge.
    StaleDivergence { tag: String, kind: DivergenceKind },
}

impl Failure {
    /// The failure in words, one line (tags and texts are the matrix's and the client's:
    /// escape them before a terminal).
    pub fn describe(&self) -> String {
        match self {
            Failure::ClientDrift { what } => format!("client drift: {what}"),
            Failure::UndeclaredLaunch { tag } => {
                format!("undeclared launch: {tag:?} fired, and no declaration has that tag")
            }
            Failure::Missed { tag } => format!(
                "missed: the client launched or listed {tag}, and mcpscope has no row for it"
            ),
            Failure::Prediction {
                tag,
                predicted,
                launched,
            } => format!(
                "prediction: mcpscope predicts {predicted} for {tag}, the client {}",
                if *launched {
                    "launched it"
                } else {
                    "did not launch it"
                }
            ),
            Failure::NoPrediction { tag } => {
                format!("no prediction: mcpscope's row for {tag} has no predictedLaunch")
            }
            Failure::StaleDivergence { tag, kind } => format!(
                "stale divergence: the {} divergence named for {tag} no longer diverges",
                match kind {
                    DivergenceKind::Missed => "missed",
                    DivergenceKind::Prediction => "prediction",
                }
            ),
        }
    }
}

/// A divergence the scenario names and that did diverge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedDivergence {
    pub tag: String,
    pub kind: DivergenceKind,
    pub reason: String,
}

/// The verdict of one scenario and mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunVerdict {
    pub scenario: String,
    pub mode: Mode,
    pub failures: Vec<Failure>,
    pub expected_divergences: Vec<ExpectedDivergence>,
}

impl RunVerdict {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// The scope a headless `system/init` entry's `source` names.
fn scope_of_source(source: &str) -> &str {
    match source {
        "enterprise" => "managed",
        other => other,
    }
}

/// Judge one run of `scenario`: `observed` is what the client did in it (`run.expect` is what
/// it should have done), `rows` mcpscope's inventory of the same tree.
pub fn judge_run(
    scenario: &Scenario,
    run: &Run,
    observed: &Observation,
    rows: &[InventoryRow],
) -> RunVerdict {
    let mut failures = Vec::new();
    let mut expected = Vec::new();
    let mode = run.mode;

    // (1) client drift.
    let want = &run.expect;
    if observed.exit_code != want.exit_code {
        failures.push(Failure::ClientDrift {
            what: format!(
                "exit code {} (expected {})",
                observed.exit_code, want.exit_code
            ),
        });
    }
    let launched: BTreeSet<&str> = observed.launched.iter().map(String::as_str).collect();
    let want_launched: BTreeSet<&str> = want.launched.iter().map(String::as_str).collect();
    if launched != want_launched {
        failures.push(Failure::ClientDrift {
            what: format!("launched {launched:?} (expected {want_launched:?})"),
        });
    }
    if observed.listed != want.listed {
        failures.push(Failure::ClientDrift {
            what: format!("listed {:?} (expected {:?})", observed.listed, want.listed),
        });
    }

    let declared: BTreeMap<&str, &Declaration> = scenario
        .declarations
        .iter()
        .map(|d| (d.tag.as_str(), d))
        .collect();
    let row_of = |d: &Declaration| {
        rows.iter()
            .find(|r| r.scope == d.scope && r.name == d.name && r.path == d.file)
    };
    let divergence = |tag: &str, kind: DivergenceKind| {
        scenario
            .divergences
            .iter()
            .find(|v| v.tag == tag && v.kind == kind && v.modes.contains(&mode))
    };

    // (2) every launched tag is declared.
    for tag in &launched {
        if !declared.contains_key(tag) {
            failures.push(Failure::UndeclaredLaunch {
                tag: (*tag).to_owned(),
            });
        }
    }

    // (3) no miss: each launched or listed entry, as the candidate declarations it may be.
    let mut seen: Vec<Vec<&Declaration>> = launched
        .iter()
        .filter_map(|t| declared.get(t).map(|d| vec![*d]))
        .collect();
    for entry in &observed.listed {
        let candidates: Vec<&Declaration> = match (&entry.tag, &entry.source) {
            (Some(tag), _) => declared.get(tag.as_str()).copied().into_iter().collect(),
            (None, Some(source)) => scenario
                .declarations
                .iter()
                .filter(|d| d.scope == scope_of_source(source) && d.name == entry.name)
                .collect(),
            (None, None) => Vec::new(),
        };
        if candidates.is_empty() {
            failures.push(Failure::ClientDrift {
                what: format!("listed {:?} matches no declaration", entry.name),
            });
        } else {
            seen.push(candidates);
        }
    }
    let mut missed_named: BTreeSet<&str> = BTreeSet::new();
    let mut missed_failed: BTreeSet<&str> = BTreeSet::new();
    for candidates in &seen {
        if candidates.iter().any(|d| row_of(d).is_some()) {
            continue;
        }
        match candidates
            .iter()
            .find_map(|d| divergence(&d.tag, DivergenceKind::Missed))
        {
            Some(v) => {
                missed_named.insert(v.tag.as_str());
            }
            None => {
                missed_failed.insert(candidates[0].tag.as_str());
            }
        }
    }
    for tag in missed_failed {
        failures.push(Failure::Missed {
            tag: tag.to_owned(),
        });
    }

    // (4) predictions hold.
    let mut prediction_diverged: BTreeSet<&str> = BTreeSet::new();
    for d in &scenario.declarations {
        let Some(row) = row_of(d) else { continue };
        let Some(p) = &row.predicted else {
            failures.push(Failure::NoPrediction { tag: d.tag.clone() });
            continue;
        };
        let (claim, in_scope) = match mode {
            Mode::List => (p.list.as_str(), true),
            Mode::Get => (p.for_get(), run.name.as_deref() == Some(d.name.as_str())),
            Mode::Headless => (p.headless.as_str(), true),
        };
        if claim == "unknown" && in_scope {
            continue;
        }
        let predicted_launch = in_scope && claim == "launch";
        let was_launched = launched.contains(d.tag.as_str());
        if predicted_launch == was_launched {
            continue;
        }
        if divergence(&d.tag, DivergenceKind::Prediction).is_some() {
            prediction_diverged.insert(d.tag.as_str());
        } else {
            failures.push(Failure::Prediction {
                tag: d.tag.clone(),
                predicted: if in_scope {
                    claim.to_owned()
                } else {
                    format!("not {}", run.name.as_deref().unwrap_or(""))
                },
                launched: was_launched,
            });
        }
    }

    // (5) every named divergence for this mode diverged.
    for v in scenario
        .divergences
        .iter()
        .filter(|v| v.modes.contains(&mode))
    {
        let diverged = match v.kind {
            DivergenceKind::Missed => missed_named.contains(v.tag.as_str()),
            DivergenceKind::Prediction => prediction_diverged.contains(v.tag.as_str()),
        };
        if diverged {
            expected.push(ExpectedDivergence {
                tag: v.tag.clone(),
                kind: v.kind,
                reason: v.reason.clone(),
            });
        } else {
            failures.push(Failure::StaleDivergence {
                tag: v.tag.clone(),
                kind: v.kind,
            });
        }
    }

    RunVerdict {
        scenario: scenario.id.clone(),
        mode,
        failures,
        expected_divergences: expected,
    }
}

/// Judge every run of every scenario; `observed(scenario, run)` gives what the client did and
/// `rows(scenario)` mcpscope's inventory of that scenario's tree.
pub fn judge_matrix<'m>(
    matrix: &'m NativeMatrix,
    mut observed: impl FnMut(&'m Scenario, &'m Run) -> Observation,
    mut rows: impl FnMut(&'m Scenario) -> Vec<InventoryRow>,
) -> Vec<RunVerdict> {
    let mut verdicts = Vec::new();
    for scenario in &matrix.scenarios {
        let inventory = rows(scenario);
        for run in &scenario.runs {
            let seen = observed(scenario, run);
            verdicts.push(judge_run(scenario, run, &seen, &inventory));
        }
    }
    verdicts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One project server p1, run headless; `launched` is what the client did and
    /// `divergences` what the scenario names.
    fn scenario(launched: &[&str], divergences: serde_json::Value) -> (Scenario, Observation) {
        let s: Scenario = serde_json::from_value(serde_json::json!({
            "id": "s", "description": "", "behaviours": [], "fixture": [],
            "declarations": [{"tag": "project/p1", "name": "p1", "scope": "project",
                              "transport": "stdio", "file": "/work/proj/.mcp.json",
                              "predicted": {"list": "pending", "headless": "launch"}}],
            "runs": [{"mode": "headless", "expect": {"exitCode": 1, "launched": launched, "listed": []}}],
            "divergences": divergences,
        }))
        .unwrap();
        let o = s.runs[0].expect.clone();
        (s, o)
    }

    fn row(headless: &str) -> Vec<InventoryRow> {
        vec![InventoryRow {
            scope: "project".into(),
            name: "p1".into(),
            path: "/work/proj/.mcp.json".into(),
            predicted: Some(ModePredictions {
                list: "pending".into(),
                get: None,
                headless: headless.into(),
            }),
            approval: None,
        }]
    }

    #[test]
    fn a_named_prediction_divergence_passes_only_while_it_diverges() {
        let named = serde_json::json!([{"tag": "project/p1", "modes": ["headless"],
                                        "kind": "prediction", "reason": "because"}]);
        // mcpscope says excluded, the client ran it: named, so expected.
        let (s, o) = scenario(&["project/p1"], named.clone());
        let v = judge_run(&s, &s.runs[0], &o, &row("excluded"));
        assert!(v.passed(), "{v:?}");
        assert_eq!(v.expected_divergences.len(), 1);
        assert_eq!(v.expected_divergences[0].reason, "because");
        // mcpscope now agrees: the divergence is stale.
        let v = judge_run(&s, &s.runs[0], &o, &row("launch"));
        assert_eq!(
            v.failures,
            [Failure::StaleDivergence {
                tag: "project/p1".into(),
                kind: DivergenceKind::Prediction
            }]
        );
        // Not named: a prediction failure.
        let (s, o) = scenario(&["project/p1"], serde_json::json!([]));
        let v = judge_run(&s, &s.runs[0], &o, &row("excluded"));
        assert_eq!(
            v.failures,
            [Failure::Prediction {
                tag: "project/p1".into(),
                predicted: "excluded".into(),
                launched: true
            }]
        );
    }

    #[test]
    fn unknown_is_no_claim_but_a_launch_prediction_must_launch() {
        let (s, o) = scenario(&[], serde_json::json!([]));
        assert!(judge_run(&s, &s.runs[0], &o, &row("unknown")).passed());
        let v = judge_run(&s, &s.runs[0], &o, &row("launch"));
        assert_eq!(
            v.failures,
            [Failure::Prediction {
                tag: "project/p1".into(),
                predicted: "launch".into(),
                launched: false
            }]
        );
    }

    #[test]
    fn a_launch_without_a_row_is_a_miss_and_drift_is_reported_apart() {
        let (s, mut o) = scenario(&["project/p1"], serde_json::json!([]));
        let v = judge_run(&s, &s.runs[0], &o, &[]);
        assert_eq!(
            v.failures,
            [Failure::Missed {
                tag: "project/p1".into()
            }]
        );
        o.exit_code = 0;
        let v = judge_run(&s, &s.runs[0], &o, &row("launch"));
        assert!(
            matches!(&v.failures[..], [Failure::ClientDrift { what }] if what.contains("exit code 0"))
        );
    }

    #[test]
    fn get_is_judged_by_its_own_prediction_when_the_row_gives_one() {
        // Codex: `mcp list` contacts the http server, `mcp get` does not.
        let s: Scenario = serde_json::from_value(serde_json::json!({
            "id": "s", "description": "", "behaviours": [], "fixture": [],
            "declarations": [{"tag": "user/h1", "name": "h1", "scope": "user", "transport": "http",
                              "file": "/home/node/.codex/config.toml",
                              "predicted": {"list": "launch", "get": "listed", "headless": "launch"}}],
            "runs": [{"mode": "get", "name": "h1", "expect": {"exitCode": 0, "launched": [], "listed": []}}],
        }))
        .unwrap();
        let rows = |get: Option<&str>| {
            vec![InventoryRow {
                scope: "user".into(),
                name: "h1".into(),
                path: "/home/node/.codex/config.toml".into(),
                predicted: Some(ModePredictions {
                    list: "launch".into(),
                    get: get.map(str::to_owned),
                    headless: "launch".into(),
                }),
                approval: None,
            }]
        };
        let o = s.runs[0].expect.clone();
        assert!(judge_run(&s, &s.runs[0], &o, &rows(Some("listed"))).passed());
        // Without `get`, list's `launch` is claimed for get too: a prediction failure.
        let v = judge_run(&s, &s.runs[0], &o, &rows(None));
        assert_eq!(
            v.failures,
            [Failure::Prediction {
                tag: "user/h1".into(),
                predicted: "launch".into(),
                launched: false
            }]
        );
    }

    #[test]
    fn inventory_rows_read_the_document_and_map_paths() {
        let doc = serde_json::json!({"servers": [
            {"scope": "project", "name": "p1", "path": "/b/work/proj/.mcp.json",
             "approval": {"state": "approved", "by": "/b/home/node/.claude/settings.json"},
             "predictedLaunch": {"list": "launch", "headless": "launch", "validatedAgainst": "2.1.327"}},
            {"scope": "user", "name": "u1", "path": "/b/home/node/.claude.json"}]});
        let rows = inventory_rows(&doc, |p| p.trim_start_matches("/b").to_owned()).unwrap();
        assert_eq!(rows[0].path, "/work/proj/.mcp.json");
        assert_eq!(
            rows[0].approval.as_ref().unwrap().by.as_deref(),
            Some("/home/node/.claude/settings.json")
        );
        assert_eq!(rows[1].predicted, None);
        assert_eq!(rows[0].predicted.as_ref().unwrap().for_get(), "launch");
        assert!(
            inventory_rows(&serde_json::json!({"servers": [{"name": "x"}]}), |p| p
                .into())
            .is_err()
        );
        assert!(inventory_rows(&serde_json::json!({}), |p| p.into()).is_err());
    }
}
