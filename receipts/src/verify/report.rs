//! Rendering a verification outcome for people (a ✓/✗ check list with the reason of every
//! failure) and for machines (`--json`, the same list as a versioned document). Rendering only:
//! it never decides anything and never prints a check that was not run.

use super::{BundleError, Report};
use serde::{Deserialize, Serialize};

/// The `--json` document, version 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JsonReport {
    pub schema_version: u32,
    /// "verified", "rejected" or "unreadable".
    pub result: String,
    pub bundle: String,
    /// Present when the bundle could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What was verified (absent when the bundle could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<super::Subject>,
    pub checks: Vec<super::Check>,
    pub notes: Vec<String>,
}

impl JsonReport {
    pub fn from_report(report: &Report) -> Self {
        JsonReport {
            schema_version: 1,
            result: if report.verified {
                "verified"
            } else {
                "rejected"
            }
            .into(),
            bundle: report.bundle.clone(),
            error: None,
            subject: Some(report.subject.clone()),
            checks: report.checks.clone(),
            notes: report.notes.clone(),
        }
    }

    pub fn from_error(bundle: &str, error: &BundleError) -> Self {
        JsonReport {
            schema_version: 1,
            result: "unreadable".into(),
            bundle: bundle.to_string(),
            error: Some(format!("failed to {error}")),
            subject: None,
            checks: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// What the report is about, first: run, matrix, per platform the candidate and image, what
/// was not covered, and the signer when a key was checked.
pub fn render_subject(subject: &super::Subject) -> String {
    let mut out = String::new();
    out.push_str(&format!("  run      {}\n", subject.run_id));
    out.push_str(&format!("  matrix   sha256:{}\n", subject.matrix_sha256));
    for p in &subject.platforms {
        out.push_str(&format!(
            "  {:<12} candidate {} sha256:{}\n  {:<12} image {}{}\n",
            p.platform,
            p.candidate_archive,
            p.candidate_sha256,
            "",
            p.image_id,
            if p.emulated { " (emulated)" } else { "" }
        ));
    }
    for n in &subject.not_covered {
        out.push_str(&format!("  NOT COVERED {n}\n"));
    }
    match &subject.signer_key_id {
        Some(k) => out.push_str(&format!("  signer   key id {k}\n")),
        None => out.push_str("  signer   not checked (no --key)\n"),
    }
    out
}

/// The human check list.
pub fn render_text(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(&format!("scopebox-verify {}\n", report.bundle));
    out.push_str(&render_subject(&report.subject));
    for check in &report.checks {
        if check.ok {
            out.push_str(&format!("  ✓ {:<22} {}\n", check.id, check.title));
        } else {
            out.push_str(&format!("  ✗ {:<22} {}\n", check.id, check.title));
            for failure in &check.failures {
                out.push_str(&format!("      - {failure}\n"));
            }
        }
    }
    for note in &report.notes {
        out.push_str(&format!("  note: {note}\n"));
    }
    let failed = report.checks.iter().filter(|c| !c.ok).count();
    if report.verified {
        out.push_str(&format!(
            "verified: all {} checks passed\n",
            report.checks.len()
        ));
    } else {
        out.push_str(&format!(
            "rejected: {failed} of {} checks failed ({})\n",
            report.checks.len(),
            report.failed_ids().join(", ")
        ));
    }
    out
}
