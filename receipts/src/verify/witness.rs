//! The kernel witness, re-judged from its raw records: every case's `witness.json` with the
//! schema's witness rules (`judge::witness_failures`: exactly one exec — the candidate, by a
//! child of the runner — no process created, no write-open, no survivor, no sentinel report,
//! nothing dropped), at the level the platform implies (natively, or beside the emulator on
//! the engine's own machine); and every adversarial control re-derived from its record, output
//! and witness record with `judge::adversarial_control`, equal to what `controls.json` states,
//! and caught (`judge::adversarial_control_failures`). A run whose stand-ins were not all
//! caught proves nothing about its cases, so it fails. It never trusts a recorded conclusion.

use super::{Checks, PlatformContext};
use crate::evidence::{
    AdversarialControl, CaseRecord, Controls, ADVERSARIAL_CONTROLS, CASES_DIR, CONTROLS_DIR,
    CONTROLS_FILE, NEGATIVE_CONTROL_WITNESS_FILE, POSITIVE_CONTROL_WITNESS_FILE, RECORD_FILE,
    STDERR_FILE, STDOUT_FILE,
};
use crate::judge;
use crate::layout::{RUNNER_BIN, SENTINEL_BIN, SENTINEL_MARKER};
use crate::matrix::Matrix;
use crate::receipt::EVIDENCE_DIR;
use scopebox_schema::witness::{WitnessLevel, WitnessRecord, WITNESS_FILE};

/// A case's witness record, relative to the platform directory.
pub(crate) fn case_witness_path(id: &str) -> String {
    format!("{EVIDENCE_DIR}/{CASES_DIR}/{id}/{WITNESS_FILE}")
}

/// A file of a control's directory, relative to the platform directory.
pub(crate) fn control_file(name: &str, file: &str) -> String {
    format!("{EVIDENCE_DIR}/{CONTROLS_DIR}/{name}/{file}")
}

pub(crate) fn check(p: &PlatformContext, checks: &mut Checks) {
    // The matrix as the context parsed it once (strictly, within bounds).
    let cases = match &p.ctx.matrix {
        Ok(m) => case_failures(p, m),
        Err(e) => vec![format!("no usable matrix: {e}")],
    };
    checks.record(
        "cases.witness",
        "each case's kernel witness record, re-judged, shows the candidate executed once and nothing else executed, created, written or surviving",
        cases,
    );
    check_controls(p, checks);
}

/// The witness of one container's controls (every shard runs every control).
pub(crate) fn check_controls(p: &PlatformContext, checks: &mut Checks) {
    let adversarial = match &p.ctx.matrix {
        Ok(m) => adversarial_failures(p, m),
        Err(e) => vec![format!("no usable matrix: {e}")],
    };
    checks.record(
        "controls.witness",
        "under both sentinel controls the witness saw the sentinel executed once, by the runner, and the sentinel's report reached the runner",
        sentinel_control_failures(p),
    );
    checks.record(
        "controls.adversarial",
        "every hostile stand-in, re-judged from its raw record, output and witness record, was caught by the judge",
        adversarial,
    );
}

/// The level and machine a witness record must state on this platform: beside the emulator
/// when the platform is emulated, natively otherwise; always on the engine's machine.
fn level_failures(p: &PlatformContext, what: &str, witness: &WitnessRecord) -> Vec<String> {
    let mut failures = Vec::new();
    let level = if p.run.emulated {
        WitnessLevel::BesideEmulator
    } else {
        WitnessLevel::Native
    };
    if witness.level != level {
        failures.push(format!(
            "{what}: witness level {:?}, the platform implies {level:?}",
            witness.level
        ));
    }
    if witness.witness_machine != p.run.engine_architecture {
        failures.push(format!(
            "{what}: witness ran on {:?}, the engine is {:?}",
            witness.witness_machine, p.run.engine_architecture
        ));
    }
    failures
}

/// The positive control (the runner executes the sentinel) and the negative control (the
/// reference host executes the configured sentinel) prove the witness sees an exec and the
/// sentinel's socket works: each record must show exactly the sentinel executed once by a child
/// of the runner, nothing else but the sentinel writing its marker, and at least one sentinel
/// report.
fn sentinel_control_failures(p: &PlatformContext) -> Vec<String> {
    let mut failures = Vec::new();
    for (what, rel) in [
        ("positive control", POSITIVE_CONTROL_WITNESS_FILE),
        ("negative control", NEGATIVE_CONTROL_WITNESS_FILE),
    ] {
        let witness = match p.parse::<WitnessRecord>(&format!("{EVIDENCE_DIR}/{rel}")) {
            Ok(w) => w,
            Err(e) => {
                failures.push(format!("{what}: {e}"));
                continue;
            }
        };
        failures.extend(level_failures(p, what, &witness));
        if witness.program != SENTINEL_BIN {
            failures.push(format!(
                "{what}: the witness watched {:?}, not the sentinel {SENTINEL_BIN}",
                witness.program
            ));
        }
        // What this control must produce — the sentinel's reports, and the sentinel (the one
        // process the runner executed) opening its marker for writing — is set aside; anything
        // else the witness judges (another exec, a process created, another write, a survivor,
        // a drop) is a failure here too.
        let sentinel_pids: Vec<i32> = witness
            .events
            .iter()
            .filter(|e| e.syscall.is_exec())
            .map(|e| e.pid)
            .take(1)
            .collect();
        let mut rest = witness.clone();
        rest.sentinel_reports.clear();
        rest.events.retain(|e| {
            !(e.syscall.is_write_open()
                && e.path.as_deref() == Some(SENTINEL_MARKER)
                && sentinel_pids.contains(&e.pid))
        });
        failures.extend(
            scopebox_schema::witness::judge(&rest)
                .into_iter()
                .map(|f| format!("{what}: {f}")),
        );
        if witness.sentinel_reports.is_empty() {
            failures.push(format!(
                "{what}: no report of the sentinel reached the runner"
            ));
        }
    }
    failures
}

fn case_failures(p: &PlatformContext, matrix: &Matrix) -> Vec<String> {
    let mut failures = Vec::new();
    for case in &matrix.cases {
        let id = case.id.as_str();
        let record =
            p.parse::<CaseRecord>(&format!("{EVIDENCE_DIR}/{CASES_DIR}/{id}/{RECORD_FILE}"));
        let witness = p.parse::<WitnessRecord>(&case_witness_path(id));
        match (record, witness) {
            (Err(e), _) | (_, Err(e)) => failures.push(format!("case {id}: {e}")),
            (Ok(record), Ok(witness)) => {
                failures.extend(
                    level_failures(p, &format!("case {id}"), &witness)
                        .into_iter()
                        .chain(
                            judge::witness_failures(&record, &witness)
                                .into_iter()
                                .map(|f| format!("case {id}: {f}")),
                        ),
                );
            }
        }
    }
    failures
}

fn adversarial_failures(p: &PlatformContext, matrix: &Matrix) -> Vec<String> {
    let controls_path = format!("{EVIDENCE_DIR}/{CONTROLS_FILE}");
    let stated = match p.parse::<Controls>(&controls_path) {
        Ok(c) => c.adversarial,
        Err(e) => return vec![e],
    };
    let mut failures = Vec::new();
    let mut derived: Vec<AdversarialControl> = Vec::new();
    for name in ADVERSARIAL_CONTROLS {
        match rederive(p, matrix, name) {
            Err(e) => failures.push(format!("adversarial control {name}: {e}")),
            Ok((control, mut problems)) => {
                failures.append(&mut problems);
                match stated.iter().find(|s| s.name == name) {
                    None => failures.push(format!(
                        "adversarial control {name}: {controls_path} does not state it"
                    )),
                    Some(s) if *s != control => failures.push(format!(
                        "adversarial control {name}: re-derived {} ({}), {controls_path} says {} ({})",
                        caught_word(control.caught),
                        control.failures.join("; "),
                        caught_word(s.caught),
                        s.failures.join("; ")
                    )),
                    Some(_) => {}
                }
                derived.push(control);
            }
        }
    }
    if stated.len() != ADVERSARIAL_CONTROLS.len() {
        failures.push(format!(
            "{controls_path} states {} adversarial controls, expected {}",
            stated.len(),
            ADVERSARIAL_CONTROLS.len()
        ));
    }
    failures.extend(judge::adversarial_control_failures(&derived));
    if p.controls().adversarial != stated {
        failures.push(format!(
            "the receipt's adversarial controls differ from {controls_path}"
        ));
    }
    failures
}

/// One stand-in re-judged from its raw files, with what its record shows about how it ran.
fn rederive(
    p: &PlatformContext,
    matrix: &Matrix,
    name: &str,
) -> Result<(AdversarialControl, Vec<String>), String> {
    let record = p.parse::<CaseRecord>(&control_file(name, RECORD_FILE))?;
    let stdout = p.bytes(&control_file(name, STDOUT_FILE))?;
    let stderr = p.bytes(&control_file(name, STDERR_FILE))?;
    let witness = p.parse::<WitnessRecord>(&control_file(name, WITNESS_FILE))?;
    let mut problems = level_failures(p, &format!("adversarial control {name}"), &witness);
    // The stand-in is the runner re-executed as `scopebox-runner hostile <name> …`: a record
    // naming another program (the candidate, say) would prove nothing about the judge.
    let argv: Vec<&str> = record.argv.iter().map(String::as_str).collect();
    if argv.get(..3) != Some(&[RUNNER_BIN, "hostile", name][..]) {
        problems.push(format!(
            "adversarial control {name}: ran {:?}, not {RUNNER_BIN} hostile {name}",
            record.argv
        ));
    }
    let control = judge::adversarial_control(name, matrix, &record, stdout, stderr, &witness);
    Ok((control, problems))
}

fn caught_word(caught: bool) -> &'static str {
    if caught {
        "caught"
    } else {
        "not caught"
    }
}
