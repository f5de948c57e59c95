//! The run's closing report on stderr: per platform its cases, boundary, controls and cleanup
//! (or its interruption) with the first of its problems, then the verdict with the bundle, then
//! whether the receipt verified — rendered from values into lines the caller prints. Every
//! problem and failed check may quote what the candidate named or printed (a file it left, a
//! path it opened), so all such text is escaped for the terminal here, once. This module must
//! never decide an outcome or a verdict: it renders the ones it is given.

use crate::exit::Outcome;
use crate::receipt::Conclusion;
use scopebox_receipts::verify::{BundleError, Report};
use scopebox_schema::receipt::{EventKind, PlatformRun, Receipt};
use scopebox_terminal::escape;
use std::path::Path;

/// Said when Ctrl-C came after every container's evidence had been exported.
pub const LATE_CTRL_C: &str = "scopebox: Ctrl-C (or SIGTERM, SIGHUP) came after every container's evidence had been exported: the run was finished, and its exit code is its verdict";

/// Problems shown per platform; the rest are counted (the receipt has them all).
pub const SHOWN_PROBLEMS: usize = 12;

/// One platform's part of the closing report.
pub struct PlatformClosing<'a> {
    pub platform: &'a str,
    pub emulated: bool,
    pub passed: usize,
    pub total: usize,
    pub problems: &'a [String],
    pub boundary_met: bool,
    pub controls_ok: bool,
    pub cleaned_up: bool,
    /// The platform's containers, and how many of them had their evidence copied out: fewer
    /// only when Ctrl-C came first (a platform that finished before it is judged as usual).
    pub containers: usize,
    pub exported: usize,
}

/// Everything the closing report says.
pub struct Closing<'a> {
    pub outcome: Outcome,
    /// Ctrl-C ended the run: the evidence of the platforms still running was not exported.
    pub interrupted: bool,
    /// Ctrl-C came only once every container's evidence had been exported: the run was
    /// finished (judging, writing and verifying take about a second) and said so.
    pub late_ctrl_c: bool,
    pub platforms: Vec<PlatformClosing<'a>>,
    /// The platforms not covered, by name.
    pub not_covered: Vec<&'a str>,
    pub cases_passed: usize,
    pub cases: usize,
    pub bundle: &'a Path,
    pub seconds: f64,
    pub verification: &'a Result<Report, BundleError>,
}

/// How many of a platform's containers had their evidence copied out (all of them, but after
/// Ctrl-C for a platform still running).
pub fn exported_containers(run: &PlatformRun) -> usize {
    std::iter::once(&run.execution)
        .chain(run.shards.iter().map(|shard| &shard.execution))
        .filter(|execution| {
            execution
                .events
                .iter()
                .any(|e| e.event == EventKind::EvidenceExported)
        })
        .count()
}

impl<'a> Closing<'a> {
    /// The report of a run that wrote `receipt`, from the receipt's platforms with their
    /// `conclusions` (in the same order) and the bundle's `verification`.
    pub fn of_receipt(
        outcome: Outcome,
        interrupted: bool,
        receipt: &'a Receipt,
        conclusions: &'a [Conclusion],
        bundle: &'a Path,
        seconds: f64,
        verification: &'a Result<Report, BundleError>,
    ) -> Closing<'a> {
        Closing {
            outcome,
            interrupted,
            late_ctrl_c: false,
            platforms: receipt
                .platforms
                .iter()
                .zip(conclusions)
                .map(|(run, conclusion)| PlatformClosing {
                    platform: run.platform.name(),
                    emulated: run.emulated,
                    passed: conclusion.passed,
                    total: conclusion.total,
                    problems: &conclusion.problems,
                    boundary_met: run.boundary.applied_meets_policy
                        && run.boundary.observed_meets_policy,
                    controls_ok: scopebox_schema::judge::control_failures(&run.controls).is_empty(),
                    cleaned_up: run.cleanup.container_removed && run.cleanup.volume_removed,
                    containers: run.shard_count(),
                    exported: exported_containers(run),
                })
                .collect(),
            not_covered: receipt
                .not_covered
                .iter()
                .map(|n| n.platform.name())
                .collect(),
            cases_passed: receipt.summary.cases_passed,
            cases: receipt.summary.cases,
            bundle,
            seconds,
            verification,
        }
    }

    /// The report's lines, in order, each ready to print.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for p in &self.platforms {
            let cleanup = if p.cleaned_up { "done" } else { "INCOMPLETE" };
            let emulated = if p.emulated { " (emulated)" } else { "" };
            if self.interrupted && p.exported < p.containers {
                // Downstream of a missing export nothing was judged: the boundary and the
                // controls are not reported failing, and the cases counted are only those whose
                // evidence was copied out before Ctrl-C (the progress lines are not evidence).
                let exported = match p.exported {
                    0 => "none of its evidence was exported".to_string(),
                    n => format!(
                        "the evidence of {n} of its {} containers was exported",
                        p.containers
                    ),
                };
                lines.push(format!(
                    "scopebox: {}{emulated}: interrupted: {exported}, {}/{} cases passed in it, cleanup {cleanup}",
                    p.platform, p.passed, p.total,
                ));
                continue;
            }
            for problem in p.problems.iter().take(SHOWN_PROBLEMS) {
                lines.push(format!("  problem ({}): {}", p.platform, escape(problem)));
            }
            if p.problems.len() > SHOWN_PROBLEMS {
                lines.push(format!(
                    "  … and {} more on {} (see the receipt)",
                    p.problems.len() - SHOWN_PROBLEMS,
                    p.platform
                ));
            }
            lines.push(format!(
                "scopebox: {}{emulated}: {}/{} cases passed, boundary {}, controls {}, cleanup {cleanup}",
                p.platform,
                p.passed,
                p.total,
                if p.boundary_met { "met" } else { "NOT met" },
                if p.controls_ok { "ok" } else { "FAILED" },
            ));
        }
        let verdict = match self.outcome {
            Outcome::Passed => "PASSED",
            Outcome::Failed => "FAILED",
            Outcome::TimedOut => "TIMED OUT",
            Outcome::Interrupted => "INTERRUPTED",
        };
        let covered: Vec<&str> = self.platforms.iter().map(|p| p.platform).collect();
        let not_covered: String = self
            .not_covered
            .iter()
            .map(|n| format!("; {n} NOT COVERED"))
            .collect();
        let bundle = self.bundle.display().to_string();
        lines.push(format!(
            "scopebox: {verdict}: {}{not_covered} — {}/{} cases passed — bundle {} ({:.1} s)",
            covered.join(" + "),
            self.cases_passed,
            self.cases,
            escape(&bundle),
            self.seconds
        ));
        let receipt = self.bundle.join(scopebox_schema::receipt::RECEIPT_FILE);
        let receipt = receipt.display().to_string();
        let receipt = escape(&receipt);
        lines.push(match self.verification {
            _ if self.interrupted => format!(
                "scopebox: receipt {receipt} records the interruption; it is not evidence of a run"
            ),
            Ok(report) if report.verified => format!(
                "scopebox: receipt {receipt} — verified: all {} checks of scopebox-verify passed",
                report.checks.len()
            ),
            Ok(report) => format!(
                "scopebox: receipt {receipt} — NOT verified: scopebox-verify rejected it ({})",
                escape(&report.failed_ids().join(", "))
            ),
            Err(e) => format!(
                "scopebox: receipt {receipt} — NOT verified: the bundle could not be read back ({})",
                escape(&e.to_string())
            ),
        });
        if self.late_ctrl_c && !self.interrupted {
            lines.push(LATE_CTRL_C.to_string());
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scopebox_receipts::verify::BundleErrorKind;

    const HOSTILE: &str = "case c: fixture /work/\u{1b}]0;pwned\u{7}\u{1b}[2Jred added";

    fn platform<'a>(name: &'a str, problems: &'a [String]) -> PlatformClosing<'a> {
        PlatformClosing {
            platform: name,
            emulated: false,
            passed: 1,
            total: 2,
            problems,
            boundary_met: true,
            controls_ok: true,
            cleaned_up: true,
            containers: 1,
            exported: 1,
        }
    }

    fn unreadable() -> Result<Report, BundleError> {
        Err(BundleError::new("/b", BundleErrorKind::NoReceipt))
    }

    fn closing<'a>(
        platforms: Vec<PlatformClosing<'a>>,
        verification: &'a Result<Report, BundleError>,
    ) -> Closing<'a> {
        Closing {
            outcome: Outcome::Failed,
            interrupted: false,
            late_ctrl_c: false,
            platforms,
            not_covered: vec!["linux/arm64"],
            cases_passed: 1,
            cases: 2,
            bundle: Path::new("out/runs/\u{1b}[31mrun"),
            seconds: 1.25,
            verification,
        }
    }

    /// The closing report of a passing two-platform run, verified: the verification is the
    /// verifier's own report of the committed reference bundle (two platforms, one emulated).
    #[test]
    fn snapshot_of_a_passing_two_platform_run() {
        let reference =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("receipts/tests/reference-bundle");
        let verification = scopebox_receipts::verify::verify_dir(&reference, &Default::default());
        let none: Vec<String> = Vec::new();
        let mut arm64 = platform("linux/arm64", &none);
        arm64.emulated = true;
        let mut platforms = vec![platform("linux/amd64", &none), arm64];
        for p in &mut platforms {
            (p.passed, p.total) = (4, 4);
        }
        let closing = Closing {
            outcome: Outcome::Passed,
            not_covered: vec![],
            cases_passed: 8,
            cases: 8,
            bundle: Path::new("out/runs/1a23f09bf3b-6217"),
            seconds: 6.55,
            ..closing(platforms, &verification)
        };
        insta::assert_snapshot!(closing.lines().join("\n"));
    }

    /// The closing report of a failed run: a platform with more problems than are shown, one of
    /// them naming what a hostile candidate left, its boundary and cleanup not met, one platform
    /// not covered, and a bundle that could not be read back.
    #[test]
    fn snapshot_of_a_failed_run() {
        let mut problems = vec![HOSTILE.to_string()];
        problems.extend(
            (1..=SHOWN_PROBLEMS + 1).map(|i| format!("case c{i}: fixture /work/f{i} added")),
        );
        let verification = unreadable();
        let mut amd64 = platform("linux/amd64", &problems);
        amd64.boundary_met = false;
        amd64.cleaned_up = false;
        insta::assert_snapshot!(closing(vec![amd64], &verification).lines().join("\n"));
    }

    #[test]
    fn what_the_candidate_named_is_escaped_and_every_line_stays_one_line() {
        let problems = vec![HOSTILE.to_string()];
        let verification = unreadable();
        let lines = closing(vec![platform("linux/amd64", &problems)], &verification).lines();
        assert_eq!(
            lines[0],
            "  problem (linux/amd64): case c: fixture /work/\\u{1b}]0;pwned\\u{7}\\u{1b}[2Jred added"
        );
        for line in &lines {
            assert!(scopebox_terminal::obeyed(line).is_empty(), "{line:?}");
        }
        assert_eq!(
            lines[2],
            "scopebox: FAILED: linux/amd64; linux/arm64 NOT COVERED — 1/2 cases passed — bundle out/runs/\\u{1b}[31mrun (1.2 s)"
        );
        assert!(lines[3].contains("NOT verified: the bundle could not be read back"));
    }

    #[test]
    fn problems_past_the_shown_ones_are_counted_not_printed() {
        let problems: Vec<String> = (0..SHOWN_PROBLEMS + 3).map(|i| format!("p{i}")).collect();
        let verification = unreadable();
        let lines = closing(vec![platform("linux/amd64", &problems)], &verification).lines();
        let shown = lines.iter().filter(|l| l.starts_with("  problem")).count();
        assert_eq!(shown, SHOWN_PROBLEMS);
        assert!(lines.contains(&"  … and 3 more on linux/amd64 (see the receipt)".to_string()));
    }

    #[test]
    fn an_interrupted_platform_reports_no_judgement_and_the_receipt_says_so() {
        let problems = vec![HOSTILE.to_string()];
        let verification = unreadable();
        let mut amd64 = platform("linux/amd64", &problems);
        (amd64.exported, amd64.passed) = (0, 0);
        let mut c = closing(vec![amd64], &verification);
        c.interrupted = true;
        c.outcome = Outcome::Interrupted;
        let lines = c.lines();
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert_eq!(
            lines[0],
            "scopebox: linux/amd64: interrupted: none of its evidence was exported, 0/2 cases passed in it, cleanup done"
        );
        assert!(lines[1].starts_with("scopebox: INTERRUPTED: linux/amd64"));
        assert!(lines[2].ends_with("records the interruption; it is not evidence of a run"));
    }

    /// Ctrl-C while the emulated platform ran: the native one had finished and been judged, so
    /// it is reported as judged (not as "not exported"), and a platform with one of its two
    /// containers exported says which part its count covers.
    #[test]
    fn in_an_interrupted_run_a_platform_that_finished_is_reported_as_judged() {
        let problems = vec![HOSTILE.to_string()];
        let none: Vec<String> = Vec::new();
        let verification = unreadable();
        let amd64 = platform("linux/amd64", &problems);
        let mut arm64 = platform("linux/arm64", &none);
        (arm64.emulated, arm64.containers, arm64.exported) = (true, 2, 1);
        let mut c = closing(vec![amd64, arm64], &verification);
        c.interrupted = true;
        c.outcome = Outcome::Interrupted;
        let lines = c.lines();
        assert_eq!(
            lines[0],
            format!("  problem (linux/amd64): {}", escape(HOSTILE))
        );
        assert_eq!(
            lines[1],
            "scopebox: linux/amd64: 1/2 cases passed, boundary met, controls ok, cleanup done"
        );
        assert_eq!(
            lines[2],
            "scopebox: linux/arm64 (emulated): interrupted: the evidence of 1 of its 2 containers was exported, 1/2 cases passed in it, cleanup done"
        );
        assert!(lines[3].starts_with("scopebox: INTERRUPTED: linux/amd64 + linux/arm64"));
    }

    /// Ctrl-C after the export: the verdict and the verification are reported as for any run,
    /// then the line that says the keypress came too late to stop anything. During an
    /// interrupted run it is not said (the interruption is).
    #[test]
    fn a_late_ctrl_c_is_said_after_the_verdict_and_only_then() {
        let none: Vec<String> = Vec::new();
        let verification = unreadable();
        let mut c = closing(vec![platform("linux/amd64", &none)], &verification);
        c.late_ctrl_c = true;
        let lines = c.lines();
        assert!(
            lines[1].starts_with("scopebox: FAILED: linux/amd64"),
            "{lines:#?}"
        );
        assert!(lines[2].contains("NOT verified"), "{lines:#?}");
        assert_eq!(lines[3], LATE_CTRL_C);
        assert_eq!(lines.len(), 4);
        c.interrupted = true;
        assert!(!c.lines().contains(&LATE_CTRL_C.to_string()));
    }
}
