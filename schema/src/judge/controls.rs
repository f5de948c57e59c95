//! The controls: the positive control (the sentinel fires and is seen), the negative control
//! (the reference host executes a configured command and the invariants catch it) and the
//! adversarial controls (each attack caught by the failure it must produce) — their argv,
//! fixture and constants, what `controls.json` states of each, and every way one misbehaved.

use super::{invariants, invariants_against, marker_failure, witness_failures};
use crate::canary;
use crate::evidence::{
    AdversarialControl, CaseRecord, Controls, NegativeControl, NegativeControlRecord,
    PositiveControl, PositiveControlRecord, Verdict, ADVERSARIAL_CONTROLS,
};
use crate::matrix::{FileContent, FixtureEntry, Matrix};
use crate::witness::WitnessRecord;

/// Where the negative control's project lives (matrix spelling).
pub const NEGATIVE_CONTROL_ROOT: &str = "/work/scopebox-negative-control";
/// The id of the negative control's run record (never a case id: the runner writes it apart).
pub const NEGATIVE_CONTROL_ID: &str = "negative-control";
/// The argument the control fixture configures for its sentinel command; the sentinel writes
/// it into the marker, so the marker names the control that fired it.
pub const NEGATIVE_CONTROL_ARG: &str = "negative-control";
/// The argument the runner gives the sentinel in the positive control.
pub const POSITIVE_CONTROL_ARG: &str = "positive-control";
/// The name the reference host's run is recorded under: it is the runner itself acting as a
/// host, not a program.
pub const REFERENCE_HOST: &str = "reference-host";

/// The sentinel's argv in the positive control.
pub fn positive_control_argv(sentinel_bin: &str) -> Vec<String> {
    vec![sentinel_bin.to_string(), POSITIVE_CONTROL_ARG.to_string()]
}

/// The argv recorded for the reference host's run over the control fixture.
pub fn negative_control_argv() -> Vec<String> {
    vec![
        REFERENCE_HOST.to_string(),
        NEGATIVE_CONTROL_ROOT.to_string(),
    ]
}

/// The control fixture: one project `.mcp.json` whose only server's command is the sentinel
/// with `NEGATIVE_CONTROL_ARG`. Spelled by hand, not through a JSON map, so the bytes (and the
/// digest the walk records) never depend on a serializer feature.
pub fn negative_control_fixture(sentinel_bin: &str) -> Vec<FixtureEntry> {
    let quote = |text: &str| serde_json::Value::from(text).to_string();
    let config = format!(
        "{{\"mcpServers\":{{\"reference-control\":{{\"command\":{},\"args\":[{}]}}}}}}",
        quote(sentinel_bin),
        quote(NEGATIVE_CONTROL_ARG)
    );
    vec![FixtureEntry::File {
        path: format!("{NEGATIVE_CONTROL_ROOT}/.mcp.json"),
        content: FileContent::Text(config),
        mode: None,
    }]
}

/// The positive control as `controls.json` states it, derived from what was observed.
pub fn positive_control(record: &PositiveControlRecord) -> PositiveControl {
    PositiveControl {
        marker_present_before: record.marker_present_before,
        sentinel_exit_code: record.exit_code,
        marker_appeared: record.marker_present_after,
        marker_removed: !record.marker_present_after_removal,
    }
}

/// The negative control as `controls.json` states it, derived from the reference host's run
/// and its raw output by replaying `invariants`: caught exactly when `marker_failure` fires.
/// Also returns the replayed verdict, which must equal the one the runner recorded.
pub fn negative_control(
    matrix: &Matrix,
    record: &NegativeControlRecord,
    stdout: &[u8],
    stderr: &[u8],
) -> (NegativeControl, Verdict) {
    let mut failures = Vec::new();
    invariants(matrix, stdout, stderr, &record.run, &mut failures);
    let control = NegativeControl {
        commands_executed: u32::try_from(record.executed.len()).unwrap_or(u32::MAX),
        marker_appeared: record.run.marker_present,
        caught: failures.contains(&marker_failure()),
        marker_removed: !record.marker_present_after_removal,
    };
    let verdict = Verdict {
        pass: failures.is_empty(),
        failures,
    };
    (control, verdict)
}

/// How a process ended, for a sentence: "exited with code N", or "did not exit (no exit code)".
pub fn exit_text(code: Option<impl std::fmt::Display>) -> String {
    match code {
        Some(code) => format!("exited with code {code}"),
        None => "did not exit (no exit code)".to_string(),
    }
}

/// Every way the positive control did not prove detection, from its flags: the marker was
/// absent before, the sentinel exited 0, the marker appeared, and it was removed. Empty when it
/// behaved. The runner, the orchestrator and the verifier all judge the flags with this.
pub fn positive_control_failures(p: &PositiveControl) -> Vec<String> {
    failed([
        (
            p.marker_present_before,
            "the marker was present before the sentinel ran".into(),
        ),
        (
            p.sentinel_exit_code != Some(0),
            format!(
                "the sentinel {}, expected exit code 0",
                exit_text(p.sentinel_exit_code)
            ),
        ),
        (
            !p.marker_appeared,
            "the marker did not appear when the sentinel ran".into(),
        ),
        (
            !p.marker_removed,
            "the marker was not removed after the control".into(),
        ),
    ])
}

/// Every way the negative control did not prove the check can fail, from its flags: the
/// reference host executed a configured command, the marker appeared, the case invariants
/// caught it, and the marker was removed. Empty when it behaved.
pub fn negative_control_failures(n: &NegativeControl) -> Vec<String> {
    failed([
        (
            n.commands_executed == 0,
            "the reference host executed no configured command".into(),
        ),
        (
            !n.marker_appeared,
            "the marker did not appear under the reference host".into(),
        ),
        (
            !n.caught,
            "the invariant check did not catch the reference host".into(),
        ),
        (
            !n.marker_removed,
            "the marker was not removed after the negative control".into(),
        ),
    ])
}

/// The messages of the checks that failed, in order.
fn failed<const N: usize>(checks: [(bool, String); N]) -> Vec<String> {
    checks
        .into_iter()
        .filter_map(|(failed, message)| failed.then_some(message))
        .collect()
}

/// Both controls' failures, each prefixed with the control it belongs to (`positive control:
/// …`, `negative control: …`); empty when both behaved.
pub fn control_failures(c: &Controls) -> Vec<String> {
    let positive = positive_control_failures(&c.positive)
        .into_iter()
        .map(|f| format!("positive control: {f}"));
    let negative = negative_control_failures(&c.negative)
        .into_iter()
        .map(|f| format!("negative control: {f}"));
    let mut all: Vec<String> = positive.chain(negative).collect();
    all.extend(adversarial_control_failures(&c.adversarial));
    all
}

/// Every way the adversarial controls did not prove the judge catches their attacks: one
/// control per `ADVERSARIAL_CONTROLS` name, in order, each caught.
pub fn adversarial_control_failures(controls: &[AdversarialControl]) -> Vec<String> {
    let mut failures = Vec::new();
    let names: Vec<&str> = controls.iter().map(|c| c.name.as_str()).collect();
    if names != ADVERSARIAL_CONTROLS {
        failures.push(format!(
            "adversarial controls are {names:?}, expected {ADVERSARIAL_CONTROLS:?}"
        ));
    }
    for c in controls {
        let caught = c.failures.iter().any(|f| f.starts_with(&c.expected));
        if !c.caught || !caught {
            failures.push(format!(
                "adversarial control {}: not caught (no failure starting {:?})",
                c.name, c.expected
            ));
        }
        if adversarial_expected(&c.name) != Some(c.expected.as_str()) {
            failures.push(format!(
                "adversarial control {}: expects {:?}, not what its attack must produce",
                c.name, c.expected
            ));
        }
    }
    failures
}

/// The failure (prefix) each adversarial control's attack must produce.
pub fn adversarial_expected(name: &str) -> Option<&'static str> {
    Some(match name {
        "exec-delete-marker" | "exec-redirected-marker" => "witness: executed execve",
        "double-fork-daemon" => "witness: process created",
        // execveat natively; under qemu-user (no execveat) the /proc/self/fd execve fallback.
        "memfd-exec" => "witness: executed ",
        "base64-canary" => "canary ",
        "tmp-file-canary" => "witness: opened for writing",
        _ => return None,
    })
}

/// The canary every adversarial control leaks (besides the matrix's, which it is not given).
pub const CONTROL_CANARY: &str = "SCOPEBOX-CONTROL-CANARY-7f3a";

/// An adversarial control as `controls.json` states it, derived from its raw record, output
/// and witness record: the case invariants (with `CONTROL_CANARY` among the canaries) plus the
/// witness's judgement; caught when a failure starts with the attack's expected prefix.
pub fn adversarial_control(
    name: &str,
    matrix: &Matrix,
    record: &CaseRecord,
    stdout: &[u8],
    stderr: &[u8],
    witness: &WitnessRecord,
) -> AdversarialControl {
    // The matrix's canaries and then the control's: what one search over both lists reports,
    // without compiling the matrix's a second time.
    let control = [CONTROL_CANARY.to_string()];
    let canaries = canary::CanarySearches::of(&[&matrix.canaries, &control]);
    let mut failures = Vec::new();
    if record.id != name {
        failures.push(format!("record is for {:?}, expected {name:?}", record.id));
    }
    invariants_against(&canaries, stdout, stderr, record, &mut failures);
    failures.extend(witness_failures(record, witness));
    let expected = adversarial_expected(name).unwrap_or("<unknown control>");
    AdversarialControl {
        name: name.to_string(),
        expected: expected.to_string(),
        caught: failures.iter().any(|f| f.starts_with(expected)),
        failures,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn behaved() -> Controls {
        Controls {
            positive: PositiveControl {
                marker_present_before: false,
                sentinel_exit_code: Some(0),
                marker_appeared: true,
                marker_removed: true,
            },
            negative: NegativeControl {
                commands_executed: 1,
                marker_appeared: true,
                caught: true,
                marker_removed: true,
            },
            adversarial: ADVERSARIAL_CONTROLS
                .iter()
                .map(|name| AdversarialControl {
                    name: name.to_string(),
                    expected: adversarial_expected(name).unwrap().to_string(),
                    caught: true,
                    failures: vec![format!("{} …", adversarial_expected(name).unwrap())],
                })
                .collect(),
        }
    }

    #[test]
    fn an_adversarial_control_not_caught_missing_or_mislabelled_fails() {
        let mut c = behaved();
        c.adversarial[0].failures = vec!["canary X in stdout".into()];
        c.adversarial[1].expected = "canary ".into();
        c.adversarial[1].failures = vec!["canary X in stdout".into()];
        c.adversarial.pop();
        let f = control_failures(&c);
        assert_eq!(f.len(), 3, "{f:?}");
        assert!(f[0].starts_with("adversarial controls are "));
        assert!(f[1].starts_with("adversarial control exec-delete-marker: not caught"));
        assert!(f[2].starts_with("adversarial control exec-redirected-marker: expects"));
    }

    #[test]
    fn controls_that_behaved_have_no_failures() {
        assert_eq!(control_failures(&behaved()), Vec::<String>::new());
    }

    #[test]
    fn each_misbehaving_control_flag_is_named_under_its_control() {
        let mut c = behaved();
        c.positive = PositiveControl {
            marker_present_before: true,
            sentinel_exit_code: Some(1),
            marker_appeared: false,
            marker_removed: false,
        };
        c.negative = NegativeControl {
            commands_executed: 0,
            marker_appeared: false,
            caught: false,
            marker_removed: false,
        };
        assert_eq!(
            control_failures(&c),
            [
                "positive control: the marker was present before the sentinel ran",
                "positive control: the sentinel exited with code 1, expected exit code 0",
                "positive control: the marker did not appear when the sentinel ran",
                "positive control: the marker was not removed after the control",
                "negative control: the reference host executed no configured command",
                "negative control: the marker did not appear under the reference host",
                "negative control: the invariant check did not catch the reference host",
                "negative control: the marker was not removed after the negative control",
            ]
        );
        // A sentinel that could not be started has no exit code: that fails too.
        let mut c = behaved();
        c.positive.sentinel_exit_code = None;
        assert_eq!(
            positive_control_failures(&c.positive),
            ["the sentinel did not exit (no exit code), expected exit code 0"]
        );
        assert!(negative_control_failures(&c.negative).is_empty());
    }
}
