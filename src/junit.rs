//! `junit.xml`: the run as a JUnit report for CI, written into every bundle (and, with
//! `--junit FILE`, beside it). One test suite per platform that ran — a test case per matrix
//! case, one per control, and one for the platform as a whole (boundary, cleanup, execution,
//! verification) — and one skipped test case per platform not covered. Serialized with
//! `quick-junit`. It only restates the receipt's verdicts; it never judges. A problem may quote
//! what the candidate named (a file it left): such text goes in escaped (`\u{1b}`,
//! `\u{202e}`), so a CI page shows it as it is instead of quick-junit stripping its escape
//! sequences and passing its bidirectional overrides through.

use crate::receipt::Conclusion;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use scopebox_schema::receipt::{NotCovered, PlatformRun};
use scopebox_terminal::escape;
use std::time::Duration;

/// The bundle file name (`docs/receipt-v2.md`).
pub const JUNIT_FILE: &str = scopebox_schema::receipt::JUNIT_FILE;

fn failure(message: &str, description: Option<String>) -> TestCaseStatus {
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
    status.set_message(message);
    if let Some(d) = description {
        status.set_description(d);
    }
    status
}

fn case(name: &str, classname: &str, status: TestCaseStatus) -> TestCase {
    let mut case = TestCase::new(name, status);
    case.set_classname(classname);
    case
}

/// The report's XML bytes.
pub fn report(
    run_id: &str,
    runs: &[PlatformRun],
    conclusions: &[Conclusion],
    not_covered: &[NotCovered],
) -> Vec<u8> {
    let mut report = Report::new(format!("scopebox run {run_id}"));
    for (run, conclusion) in runs.iter().zip(conclusions) {
        let platform = run.platform.name();
        let mut suite = TestSuite::new(platform);
        let execution = &run.execution;
        suite.set_time(Duration::from_millis(execution.durations.run_ms));
        let overall = if conclusion.pass() {
            TestCaseStatus::success()
        } else {
            failure(
                &format!("{} problem(s)", conclusion.problems.len()),
                Some(
                    conclusion
                        .problems
                        .iter()
                        .map(|p| escape(p))
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
            )
        };
        let mut whole = case(&format!("platform {platform}"), platform, overall);
        whole.set_time(Duration::from_millis(execution.durations.run_ms));
        suite.add_test_case(whole);
        let controls = [
            (
                "positive control",
                scopebox_schema::judge::positive_control_failures(&run.controls.positive),
            ),
            (
                "negative control",
                scopebox_schema::judge::negative_control_failures(&run.controls.negative),
            ),
        ];
        for (name, failures) in controls {
            let status = if failures.is_empty() {
                TestCaseStatus::success()
            } else {
                failure(&escape(&failures.join("; ")), None)
            };
            suite.add_test_case(case(name, &format!("{platform}.controls"), status));
        }
        for entry in &run.cases {
            let status = if entry.verdict == "pass" {
                TestCaseStatus::success()
            } else {
                failure(
                    &format!("verdict {}", entry.verdict),
                    Some(format!(
                        "see {}/evidence/cases/{}/record.json in the bundle",
                        run.dir, entry.id
                    )),
                )
            };
            suite.add_test_case(case(&entry.id, &format!("{platform}.cases"), status));
        }
        report.add_test_suite(suite);
    }
    for n in not_covered {
        let platform = n.platform.name();
        let mut suite = TestSuite::new(platform);
        let mut status = TestCaseStatus::skipped();
        status.set_message(format!("not covered: {}", escape(&n.reason)));
        suite.add_test_case(case(&format!("platform {platform}"), platform, status));
        report.add_test_suite(suite);
    }
    let mut xml = report
        .to_string()
        .expect("a report of plain strings always serializes")
        .into_bytes();
    if !xml.ends_with(b"\n") {
        xml.push(b'\n');
    }
    xml
}
