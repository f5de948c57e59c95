//! The controls, recomputed from what the runner observed: the sentinel positive control proved
//! detection works inside this boundary (marker absent, the sentinel ran, the marker appeared
//! naming the control, the marker was removed), and the executing negative control — the
//! reference host run over the control fixture whose command is the sentinel — was caught by
//! replaying the very invariant check every case passes (`judge::invariants`, caught exactly
//! when `judge::marker_failure` fires). The flags are judged by the rules the runner and the
//! orchestrator use (`judge::positive_control_failures`, `judge::negative_control_failures`);
//! what only the records show (the argv, the fixture, what the marker names) is checked here. The raw records under `evidence/controls/` are the
//! source; the runner's `controls.json` must equal what they derive, and the receipt's copy must
//! equal `controls.json`. It never accepts a control flag it did not re-derive.

use super::{Checks, PlatformContext};
use crate::evidence::{
    Controls, NegativeControlRecord, PositiveControlRecord, CONTROLS_FILE,
    NEGATIVE_CONTROL_RECORD_FILE, NEGATIVE_CONTROL_STDERR_FILE, NEGATIVE_CONTROL_STDOUT_FILE,
    POSITIVE_CONTROL_RECORD_FILE,
};
use crate::judge;
use crate::layout::SENTINEL_BIN;
use crate::receipt::EVIDENCE_DIR;

pub(crate) fn controls_path() -> String {
    format!("{EVIDENCE_DIR}/{CONTROLS_FILE}")
}

fn evidence(rel: &str) -> String {
    format!("{EVIDENCE_DIR}/{rel}")
}

pub(crate) fn check(p: &PlatformContext, checks: &mut Checks) {
    let path = controls_path();
    let controls = p.parse::<Controls>(&path);
    let mut positive = positive_failures(p, controls.as_ref().ok());
    let mut negative = negative_failures(p, controls.as_ref().ok());
    let mut recorded = Vec::new();
    match &controls {
        Err(e) => {
            positive.insert(0, e.clone());
            negative.insert(0, e.clone());
            recorded.push(e.clone());
        }
        Ok(c) => {
            if c != p.controls() {
                recorded.push(format!("receipt controls differ from {path}"));
            }
        }
    }
    checks.record(
        "controls.positive",
        "re-derived from its record, the sentinel positive control fired and was cleaned up",
        positive,
    );
    checks.record(
        "controls.negative",
        "re-judged from its record, the executing reference host was caught by the case invariants",
        negative,
    );
    checks.record(
        "controls.record",
        "the receipt's controls are the runner's",
        recorded,
    );
}

fn positive_failures(p: &PlatformContext, stated: Option<&Controls>) -> Vec<String> {
    let path = evidence(POSITIVE_CONTROL_RECORD_FILE);
    let record = match p.parse::<PositiveControlRecord>(&path) {
        Ok(r) => r,
        Err(e) => return vec![e],
    };
    let mut failures = Vec::new();
    if record.argv != judge::positive_control_argv(SENTINEL_BIN) {
        failures.push(format!(
            "the positive control ran {:?}, not the sentinel {SENTINEL_BIN} {}",
            record.argv,
            judge::POSITIVE_CONTROL_ARG
        ));
    }
    let p = judge::positive_control(&record);
    if let Some(stated) = stated {
        if let Some(diff) = differences(&stated.positive, &p) {
            failures.push(format!(
                "{} says {diff}: its record shows otherwise",
                controls_path()
            ));
        }
    }
    failures.extend(judge::positive_control_failures(&p));
    if p.marker_appeared && !names(&record.marker_text, judge::POSITIVE_CONTROL_ARG) {
        failures.push(format!(
            "the marker does not name {}: this sentinel run did not write it",
            judge::POSITIVE_CONTROL_ARG
        ));
    }
    failures
}

fn negative_failures(p: &PlatformContext, stated: Option<&Controls>) -> Vec<String> {
    let path = evidence(NEGATIVE_CONTROL_RECORD_FILE);
    let parsed = (
        p.parse::<NegativeControlRecord>(&path),
        p.bytes(&evidence(NEGATIVE_CONTROL_STDOUT_FILE)),
        p.bytes(&evidence(NEGATIVE_CONTROL_STDERR_FILE)),
        p.ctx.matrix.as_ref().map_err(Clone::clone),
    );
    let (record, stdout, stderr, matrix) = match parsed {
        (Ok(r), Ok(out), Ok(err), Ok(m)) => (r, out, err, m),
        (r, out, err, m) => {
            return [r.err(), out.err(), err.err(), m.err()]
                .into_iter()
                .flatten()
                .collect();
        }
    };
    let mut failures = Vec::new();
    let run = &record.run;
    if run.id != judge::NEGATIVE_CONTROL_ID
        || run.argv != judge::negative_control_argv()
        || run.cwd != judge::NEGATIVE_CONTROL_ROOT
    {
        failures.push(format!(
            "the record is of {:?} running {:?} in {}, not of the reference host over {}",
            run.id,
            run.argv,
            run.cwd,
            judge::NEGATIVE_CONTROL_ROOT
        ));
    }
    // The host ran over exactly the control fixture, whose one command is the sentinel.
    let fixture = judge::negative_control_fixture(SENTINEL_BIN);
    for f in judge::layout_failures(&fixture, &run.fixtures_before) {
        failures.push(format!("not the control fixture: {f}"));
    }
    for command in &record.executed {
        if command.program != SENTINEL_BIN || command.args != [judge::NEGATIVE_CONTROL_ARG] {
            failures.push(format!(
                "the reference host executed {} {:?}, which the control fixture does not configure",
                command.program, command.args
            ));
        }
    }
    let (n, verdict) = judge::negative_control(matrix, &record, stdout, stderr);
    if verdict != run.verdict {
        failures.push(format!(
            "re-judged, the reference host's run fails with {:?}; the runner recorded {:?}",
            verdict.failures, run.verdict.failures
        ));
    }
    if let Some(stated) = stated {
        if let Some(diff) = differences(&stated.negative, &n) {
            failures.push(format!(
                "{} says {diff}: its record, re-judged, shows otherwise",
                controls_path()
            ));
        }
    }
    failures.extend(judge::negative_control_failures(&n));
    if n.marker_appeared && !names(&record.marker_text, judge::NEGATIVE_CONTROL_ARG) {
        failures.push(format!(
            "the marker does not name {}: the reference host's command did not write it",
            judge::NEGATIVE_CONTROL_ARG
        ));
    }
    failures
}

/// The fields where the stated control differs from the derived one, as `name stated (derived
/// derived)`, comma-joined; `None` when they agree.
fn differences<T: serde::Serialize>(stated: &T, derived: &T) -> Option<String> {
    let (Ok(serde_json::Value::Object(stated)), Ok(serde_json::Value::Object(derived))) =
        (serde_json::to_value(stated), serde_json::to_value(derived))
    else {
        return None;
    };
    let diff: Vec<String> = stated
        .iter()
        .filter_map(|(key, value)| {
            let other = derived.get(key).unwrap_or(&serde_json::Value::Null);
            (value != other).then(|| format!("{key} {value} (derived {other})"))
        })
        .collect();
    (!diff.is_empty()).then(|| diff.join(", "))
}

/// Whether the marker text carries `arg` as one of the sentinel's quoted arguments (the
/// sentinel writes `pid=N argv=["…", "arg"]`).
fn names(marker_text: &Option<String>, arg: &str) -> bool {
    marker_text
        .as_deref()
        .is_some_and(|text| text.contains(&format!("\"{arg}\"")))
}
