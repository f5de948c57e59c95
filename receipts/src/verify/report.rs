//! Rendering a verification outcome for people (a ✓/✗ check list with the reason of every
//! failure) and for machines (`--json`, the same list as a versioned document). Rendering only:
//! it never decides anything and never prints a check that was not run with a ✓ (a check not
//! run is shown with `-` and its reason). Every bundle-derived string (run id, archive names,
//! failure lines quoting file names, keys, case ids or serde's error text) is escaped for the
//! terminal with `scopebox_terminal::escape` in the human report; the JSON document keeps
//! every value exactly.

use super::{BundleError, BundleErrorKind, Report};
use scopebox_terminal::escape;
use serde::{Deserialize, Serialize};

/// Why `signature.verified` is not run when the bundle has an envelope but no `--key` was given.
pub const SIGNATURE_NOT_CHECKED: &str =
    "no --key given: the envelope's signature was not checked against any key";

/// The `--json` document, version 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JsonReport {
    pub schema_version: u32,
    /// "verified", "rejected", "unreadable" (the bundle could not be read) or "usage" (a bad
    /// argument, `--key` or `--policy`; nothing was verified).
    pub result: String,
    /// The bundle as named (empty when the arguments could not be parsed).
    pub bundle: String,
    /// Present when verification stopped early: "failed to …" (one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What to do next, when the error has a hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// What was verified (absent when the bundle could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<super::Subject>,
    pub checks: Vec<super::Check>,
    /// Checks not run and why (e.g. the signature without `--key`).
    #[serde(default)]
    pub not_checked: Vec<super::NotChecked>,
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
            hint: None,
            subject: Some(report.subject.clone()),
            checks: report.checks.clone(),
            not_checked: report.not_checked.clone(),
            notes: report.notes.clone(),
        }
    }

    pub fn from_error(bundle: &str, error: &BundleError) -> Self {
        // A message's own "\nhint: …" line goes to `hint`, so `error` is one line.
        let text = format!("failed to {error}");
        let (message, hint) = match text.split_once("\nhint: ") {
            Some((message, hint)) => (message.to_string(), Some(hint.to_string())),
            None => (text, None),
        };
        JsonReport {
            schema_version: 1,
            result: "unreadable".into(),
            bundle: bundle.to_string(),
            error: Some(message),
            hint,
            subject: None,
            checks: Vec::new(),
            not_checked: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// What the report is about, first: run, matrix, per platform the candidate and image, what
/// was not covered, and the signer when a key was checked.
pub fn render_subject(subject: &super::Subject, key_given: bool) -> String {
    let mut out = String::new();
    out.push_str(&format!("  run      {}\n", escape(&subject.run_id)));
    out.push_str(&format!(
        "  matrix   sha256:{}\n",
        escape(&subject.matrix_sha256)
    ));
    for p in &subject.platforms {
        out.push_str(&format!(
            "  {:<12} candidate {} sha256:{}\n  {:<12} image {}{}\n",
            escape(&p.platform),
            escape(&p.candidate_archive),
            escape(&p.candidate_sha256),
            "",
            escape(&p.image_id),
            if p.emulated { " (emulated)" } else { "" }
        ));
    }
    for n in &subject.not_covered {
        out.push_str(&format!("  NOT COVERED {}\n", escape(n)));
    }
    match &subject.signer_key_id {
        Some(k) => out.push_str(&format!("  signer   key id {}\n", escape(k))),
        None if key_given => out.push_str(
            "  signer   none: no signature of the envelope verifies with the given key\n",
        ),
        None => {
            out.push_str("  signer   none: no signature was checked against any key (no --key)\n")
        }
    }
    out
}

/// The human check list.
pub fn render_text(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(&format!("scopebox-verify {}\n", escape(&report.bundle)));
    // A key was given when the signature was checked at all (it is "not checked" without one).
    let key_given = report.checks.iter().any(|c| c.id == "signature.verified");
    out.push_str(&render_subject(&report.subject, key_given));
    for check in &report.checks {
        let id = escape(&check.id);
        let title = escape(&check.title);
        if check.ok {
            out.push_str(&format!("  ✓ {id:<22} {title}\n"));
        } else {
            out.push_str(&format!("  ✗ {id:<22} {title}\n"));
            for failure in &check.failures {
                out.push_str(&format!("      - {}\n", escape(failure)));
            }
        }
    }
    for skipped in &report.not_checked {
        out.push_str(&format!(
            "  - {:<22} {}: NOT CHECKED ({})\n",
            escape(&skipped.id),
            escape(&skipped.title),
            escape(&skipped.reason)
        ));
    }
    for note in &report.notes {
        out.push_str(&format!("  note: {}\n", escape(note)));
    }
    let failed = report.checks.iter().filter(|c| !c.ok).count();
    let unchecked = if report.not_checked.is_empty() {
        String::new()
    } else {
        format!(
            "; not checked: {}",
            report
                .not_checked
                .iter()
                .map(|n| n.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    if report.verified {
        out.push_str(&format!(
            "verified: all {} checks passed{unchecked}\n",
            report.checks.len()
        ));
    } else {
        out.push_str(&format!(
            "rejected: {failed} of {} checks failed ({}){unchecked}\n",
            report.checks.len(),
            escape(&report.failed_ids().join(", "))
        ));
    }
    out
}

/// A `BundleError` for a terminal: the bundle path and any bundle-derived text (serde's error
/// on receipt.json quotes its keys and values, a file's name, the archive reader's errors)
/// escaped, the message's own hint lines kept (those messages quote nothing of the bundle).
pub fn render_error(error: &BundleError) -> String {
    let kind = match &error.kind {
        hinted @ (BundleErrorKind::NotADirectory
        | BundleErrorKind::NoReceipt
        | BundleErrorKind::ReceiptIsADirectory) => hinted.to_string(),
        other => escape(&other.to_string()).into_owned(),
    };
    format!(
        "error: failed to read the bundle {}: {kind}\n",
        escape(&error.path.display().to_string())
    )
}

/// `value` as pretty JSON that is also safe on a terminal: every character
/// `scopebox_terminal::needs_escape` names (C1 controls, bidi overrides, zero-width and other
/// format characters, which JSON allows raw) is written as a `\uXXXX` escape (a surrogate
/// pair above U+FFFF). A JSON reader gets exactly the same strings back.
pub fn to_json_text<T: Serialize>(value: &T) -> serde_json::Result<String> {
    to_json_with(value, serde_json::ser::PrettyFormatter::new())
}

/// The same on one line (serde_json's compact form), for a command's one-line summary object.
pub fn to_json_line<T: Serialize>(value: &T) -> serde_json::Result<String> {
    to_json_with(value, serde_json::ser::CompactFormatter)
}

fn to_json_with<T: Serialize, F: serde_json::ser::Formatter>(
    value: &T,
    formatter: F,
) -> serde_json::Result<String> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, TerminalSafe(formatter));
    value.serialize(&mut ser)?;
    out.push(b'\n');
    // serde_json writes UTF-8 only.
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// A JSON formatter that escapes terminal-unsafe characters inside strings and otherwise
/// formats like the one it wraps.
struct TerminalSafe<F>(F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for TerminalSafe<F> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        scopebox_terminal::write_json_fragment(writer, fragment)
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_text_escapes_what_a_terminal_would_act_on_and_keeps_every_value() {
        let value = serde_json::json!({
            "k\u{202e}": ["\u{1b}[2J\u{9b}\u{200b}\u{feff}\u{1d173}\\ ok é"]
        });
        let text = to_json_text(&value).unwrap();
        assert!(scopebox_terminal::obeyed(&text).is_empty(), "{text}");
        assert!(text.contains("\\u202e"), "{text}");
        assert!(
            text.contains("\\u009b\\u200b\\ufeff\\ud834\\udd73"),
            "{text}"
        );
        assert!(text.contains(" ok é"), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }
}
