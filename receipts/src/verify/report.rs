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
            checks: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// The human check list.
pub fn render_text(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(&format!("scopebox-verify {}\n", report.bundle));
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
