//! The one set of rules that decides whether a case passed, what the two controls showed, and
//! whether a matrix may be run at all. The runner calls `judge` inside the container right
//! after a case (and `positive_control`/`negative_control` on the controls' raw records, then
//! `control_failures` on what they derive); the orchestrator and the verifier call them again
//! on the raw captures copied out, and the results must agree. Everything here is a
//! pure function of its arguments: it must never touch the filesystem, the clock, the
//! environment or a process, or the verifier could not replay it.
//!
//! Failure strings are stable and meant for people: one per failed check, naming the path,
//! canary, pointer or value involved.
//!
//! The case judge proper is here; what it draws on has a file per concern: `controls` (the
//! positive, negative and adversarial controls), `environment` (the candidate's environment),
//! `fixture` (fixture trees as declared and as walked), `content` (a fixture file's bytes and
//! base64), `expect` (a case's own expectations) and `validate` (whether a matrix may be run).
//! Every public item is re-exported here, at the path it has always had.

mod content;
mod controls;
mod environment;
mod expect;
mod fixture;
#[cfg(test)]
mod test_support;
mod validate;

pub use content::{
    decode_base64, encode_base64, file_bytes, file_sha256, file_size, MAX_FILL_SIZE,
};
pub use controls::{
    adversarial_control, adversarial_control_failures, adversarial_expected, control_failures,
    exit_text, negative_control, negative_control_argv, negative_control_failures,
    negative_control_fixture, positive_control, positive_control_argv, positive_control_failures,
    CONTROL_CANARY, NEGATIVE_CONTROL_ARG, NEGATIVE_CONTROL_ID, NEGATIVE_CONTROL_ROOT,
    POSITIVE_CONTROL_ARG, REFERENCE_HOST,
};
pub use environment::{environment_failures, expected_env, RESERVED_ENV_PREFIX};
pub use expect::{contains_bytes, json_fact_failure};
pub use fixture::{
    entry_path, expected_observation, fixture_change_failures, fixture_layout_failures,
    format_mode, layout_failures, parse_mode, DEFAULT_DIR_MODE, DEFAULT_FILE_MODE,
};
pub use validate::{bounds, matrix_bound_failures, validate_matrix};

use crate::canary;
use crate::digest::sha256_hex;
use crate::evidence::{CaseRecord, Verdict};
use crate::layout;
use crate::matrix::{Case, Matrix};
use crate::witness::WitnessRecord;
use expect::expectations;
use std::collections::BTreeSet;

/// Failures of one case or control quoted wherever they are shown (the runner's progress, the
/// orchestrator's problems, `--json`, junit.xml); the record keeps every one. A candidate that
/// leaves 20,000 files fails with 20,000 failures, and no output may become megabytes of them.
pub const FAILURES_QUOTED: usize = 16;

/// The failures to quote (at most `FAILURES_QUOTED`) and, when some are left out, the line
/// that counts them: "… and N more (see the record)".
pub fn quoted_failures(failures: &[String]) -> (&[String], Option<String>) {
    let shown = &failures[..failures.len().min(FAILURES_QUOTED)];
    let more = (failures.len() > FAILURES_QUOTED).then(|| {
        format!(
            "… and {} more (see the record)",
            failures.len() - FAILURES_QUOTED
        )
    });
    (shown, more)
}

/// Judge one case from what the candidate printed and what the runner recorded.
///
/// Checks, in this order: the record belongs to the case; the candidate was neither timed out
/// nor killed by a signal; the sentinel marker is absent; the fixture tree was laid out as
/// declared and is unchanged; no canary appears in stdout or stderr; the captures match the
/// recorded digests; then the case's own expectations.
pub fn judge(
    matrix: &Matrix,
    case: &Case,
    stdout: &[u8],
    stderr: &[u8],
    record: &CaseRecord,
) -> Verdict {
    let mut failures = Vec::new();
    if record.id != case.id {
        failures.push(format!(
            "record is for case {:?}, expected {:?}",
            record.id, case.id
        ));
    }
    invariants(matrix, stdout, stderr, record, &mut failures);
    failures.extend(environment_failures(case, &record.env));
    failures.extend(fixture_layout_failures(case, &record.fixtures_before));
    expectations(
        &case.expect,
        record.exit_code,
        stdout,
        stderr,
        &mut failures,
    );
    Verdict {
        pass: failures.is_empty(),
        failures,
    }
}

/// The checks every run of anything over a fixture must pass, whatever the case expects:
/// no timeout, no signal, no sentinel marker, fixtures unchanged, no canary leaked in any
/// encoding `canary::Encoding` names (raw, base64, hex, ...), captures
/// matching their recorded digests. The negative control runs exactly these.
pub fn invariants(
    matrix: &Matrix,
    stdout: &[u8],
    stderr: &[u8],
    record: &CaseRecord,
    failures: &mut Vec<String>,
) {
    let canaries = canary::CanarySearches::of(&[&matrix.canaries]);
    invariants_against(&canaries, stdout, stderr, record, failures);
}

/// `invariants` with the canaries already compiled (the matrix's, and for the adversarial
/// controls `CONTROL_CANARY` after them).
pub(super) fn invariants_against(
    canaries: &canary::CanarySearches,
    stdout: &[u8],
    stderr: &[u8],
    record: &CaseRecord,
    failures: &mut Vec<String>,
) {
    if record.timed_out {
        failures.push("candidate timed out and was killed".to_string());
    }
    if let Some(signal) = record.signal {
        failures.push(format!("candidate killed by signal {signal}"));
    }
    if record.marker_present {
        failures.push(marker_failure());
    }
    for problem in &record.fixtures_after_problems {
        failures.push(format!("fixture walk after the run: {problem}"));
    }
    failures.extend(fixture_change_failures(
        &record.fixtures_before,
        &record.fixtures_after,
        record.fixtures_after_problems.is_empty(),
    ));
    failures.extend(canaries.failures(stdout, "stdout"));
    failures.extend(canaries.failures(stderr, "stderr"));
    // What else the candidate could write that the record carries: the names of the entries it
    // added below the fixture roots (a canary spelled as a file name). Their contents are not
    // recorded; writing at all fails the case (`fixture … added`, and the witness's write-open).
    let existed: BTreeSet<&str> = record
        .fixtures_before
        .iter()
        .map(|o| o.path.as_str())
        .collect();
    for added in record
        .fixtures_after
        .iter()
        .filter(|o| !existed.contains(o.path.as_str()))
    {
        failures.extend(canaries.failures(
            added.path.as_bytes(),
            &format!("the name of fixture {}", added.path),
        ));
    }
    failures.extend(written_failures(record, canaries));
    if sha256_hex(stdout) != record.stdout_sha256 {
        failures.push("stdout does not match its recorded sha256".to_string());
    }
    if sha256_hex(stderr) != record.stderr_sha256 {
        failures.push("stderr does not match its recorded sha256".to_string());
    }
}

/// The files the run left written (`CaseRecord::written`): one outside the fixture roots (in
/// `/tmp`) fails by itself — the fixture walk reports those below the roots — and every canary
/// in any of them, in any encoding, fails; so does content that is not what the record says.
fn written_failures(record: &CaseRecord, canaries: &canary::CanarySearches) -> Vec<String> {
    let mut failures = Vec::new();
    for file in &record.written {
        let path = &file.path;
        let below_roots = layout::FIXTURE_ROOTS.iter().any(|r| {
            path.strip_prefix(r)
                .is_some_and(|rest| rest.starts_with('/'))
        });
        if !below_roots {
            failures.push(match &file.kind {
                None => format!("file {path} written outside the fixture roots"),
                Some(kind) => format!("{kind} {path} made outside the fixture roots"),
            });
        }
        let content = match decode_base64(&file.content_base64) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("written file {path}: content is not base64 ({e})"));
                continue;
            }
        };
        let consistent = if file.truncated {
            content.len() as u64 <= file.size
        } else {
            content.len() as u64 == file.size && sha256_hex(&content) == file.sha256
        };
        if !consistent {
            failures.push(format!(
                "written file {path}: content does not match its recorded size and sha256"
            ));
        }
        let what = file.kind.as_deref().unwrap_or("file");
        failures.extend(canaries.failures(&content, &format!("{what} {path}")));
    }
    failures
}

/// The failure `invariants` reports when the sentinel marker is present: the negative control
/// counts as caught only when this exact failure fires.
pub fn marker_failure() -> String {
    format!(
        "sentinel marker {} present: a configured command was executed",
        layout::SENTINEL_MARKER
    )
}

/// `judge` plus the kernel witness: what the runner and the verifier decide a case with.
pub fn judge_witnessed(
    matrix: &Matrix,
    case: &Case,
    stdout: &[u8],
    stderr: &[u8],
    record: &CaseRecord,
    witness: &WitnessRecord,
) -> Verdict {
    let mut verdict = judge(matrix, case, stdout, stderr, record);
    verdict.failures.extend(witness_failures(record, witness));
    verdict.pass = verdict.failures.is_empty();
    verdict
}

/// `witness::judge`, after checking the witness record is about this run's program: its
/// `program` is the record's `argv[0]`.
pub fn witness_failures(record: &CaseRecord, witness: &WitnessRecord) -> Vec<String> {
    let mut failures = Vec::new();
    if record.argv.first() != Some(&witness.program) {
        failures.push(format!(
            "witness record is about {:?}, the run started {:?}",
            witness.program,
            record.argv.first()
        ));
    }
    failures.extend(crate::witness::judge(witness));
    failures
}

#[cfg(test)]
mod tests {
    use super::test_support::{case, failures_of, record};
    use super::*;
    use crate::evidence::FixtureObservation;

    #[test]
    fn a_clean_case_passes() {
        let c = case();
        let r = record(&c, b"out", b"");
        assert_eq!(failures_of(&c, b"out", b"", &r), Vec::<String>::new());
    }

    #[test]
    fn record_for_another_case_fails() {
        let c = case();
        let mut r = record(&c, b"", b"");
        r.id = "other".into();
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec!["record is for case \"other\", expected \"present\""]
        );
    }

    #[test]
    fn timeout_and_signal_fail() {
        let c = case();
        let mut r = record(&c, b"", b"");
        r.timed_out = true;
        r.signal = Some(9);
        r.exit_code = None;
        let f = failures_of(&c, b"", b"", &r);
        assert!(f.contains(&"candidate timed out and was killed".to_string()));
        assert!(f.contains(&"candidate killed by signal 9".to_string()));
        assert!(f.contains(&"no exit code, expected 0".to_string()));
    }

    #[test]
    fn marker_present_fails() {
        let c = case();
        let mut r = record(&c, b"", b"");
        r.marker_present = true;
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "sentinel marker /tmp/scopebox-sentinel/fired present: a configured command was executed"
            ]
        );
    }

    #[test]
    fn an_incomplete_walk_after_fails_with_its_problems_and_does_not_call_unseen_paths_removed() {
        let c = case();
        let mut r = record(&c, b"", b"");
        assert_eq!(failures_of(&c, b"", b"", &r), Vec::<String>::new());
        // The walk stopped before it reached /work/p/.mcp.json (a tree too deep beside it).
        r.fixtures_after.retain(|o| o.path != "/work/p/.mcp.json");
        r.fixtures_after_problems =
            vec!["/work/d/d: deeper than 128 levels below its fixture root".into()];
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "fixture walk after the run: /work/d/d: deeper than 128 levels below its fixture root",
                "fixture /work/p/.mcp.json not seen after the run",
            ]
        );
        // A problem fails the case by itself, even when everything the walk saw is unchanged.
        let mut r = record(&c, b"", b"");
        r.fixtures_after_problems = vec!["fixture root /work: mode 1777 -> 0000".into()];
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec!["fixture walk after the run: fixture root /work: mode 1777 -> 0000"]
        );
    }

    #[test]
    fn a_canary_is_found_raw_and_base64_encoded_at_every_alignment() {
        let canary = "CANARY-B64-1";
        let search = canary::CanarySearch::new(&[canary.to_string()]);
        let canary_in = |haystack: &[u8], _: &str| !search.find(haystack).is_empty();
        assert!(canary_in(b"x CANARY-B64-1 y", canary));
        // base64 of the canary behind 0, 1 and 2 bytes of prefix.
        for encoded in [
            "Q0FOQVJZLUI2NC0x",
            "eENBTkFSWS1CNjQtMQ==",
            "eHhDQU5BUlktQjY0LTE=",
        ] {
            assert!(canary_in(encoded.as_bytes(), canary), "{encoded}");
        }
        assert!(!canary_in(b"Q0FOQVJZ", canary));
        assert!(!canary_in(b"nothing here", canary));
    }

    #[test]
    fn canaries_in_either_stream_fail() {
        let c = case();
        let out = b"x CANARY-CMD-7f3a y";
        let err = b"CANARY-ENV-1";
        let r = record(&c, out, err);
        assert_eq!(
            failures_of(&c, out, err, &r),
            vec![
                "canary CANARY-CMD-7f3a in stdout",
                "canary CANARY-ENV-1 in stderr"
            ]
        );
        // A prefix of a canary is not the canary.
        let r = record(&c, b"CANARY-CMD-7f3", b"");
        assert!(failures_of(&c, b"CANARY-CMD-7f3", b"", &r).is_empty());
    }

    #[test]
    fn an_encoded_canary_smuggled_in_an_extra_json_field_fails() {
        let c = case();
        // base64 of "pid=7 CANARY-CMD-7f3a" (the canary at an odd alignment) and the hex of
        // the other canary, as a hostile candidate would tuck them into its report.
        let out = br#"{"schemaVersion":1,"extra":"cGlkPTcgQ0FOQVJZLUNNRC03ZjNh","x":"43414e4152592d454e562d31"}"#;
        let r = record(&c, out, b"");
        assert_eq!(
            failures_of(&c, out, b"", &r),
            vec![
                "canary CANARY-CMD-7f3a in stdout (base64)",
                "canary CANARY-ENV-1 in stdout (hex)"
            ]
        );
    }

    #[test]
    fn a_canary_spelled_as_an_added_file_name_fails() {
        let c = case();
        let mut r = record(&c, b"", b"");
        r.fixtures_after.push(FixtureObservation {
            path: "/work/p/Q0FOQVJZLUNNRC03ZjNh".into(),
            kind: "file".into(),
            mode: "0644".into(),
            size: 0,
            sha256: Some(sha256_hex(b"")),
        });
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "fixture /work/p/Q0FOQVJZLUNNRC03ZjNh added",
                "canary CANARY-CMD-7f3a in the name of fixture /work/p/Q0FOQVJZLUNNRC03ZjNh (base64)"
            ]
        );
    }

    fn written(path: &str, content: &[u8]) -> crate::evidence::WrittenFile {
        crate::evidence::WrittenFile {
            path: path.into(),
            kind: None,
            size: content.len() as u64,
            sha256: sha256_hex(content),
            content_base64: encode_base64(content),
            truncated: false,
        }
    }

    #[test]
    fn a_file_left_in_tmp_fails_and_its_canaries_are_found_in_any_encoding() {
        let c = case();
        let mut r = record(&c, b"", b"");
        r.written = vec![
            written("/tmp/leak", b"pid=7 Q0FOQVJZLUNNRC03ZjNh\n"),
            written(
                "/work/p/.mcp.json",
                "CANARY-ENV-1"
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes)
                    .collect::<Vec<u8>>()
                    .as_slice(),
            ),
        ];
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "file /tmp/leak written outside the fixture roots",
                "canary CANARY-CMD-7f3a in file /tmp/leak (base64)",
                "canary CANARY-ENV-1 in file /work/p/.mcp.json (utf-16le)",
            ]
        );
        // A written file below a fixture root without a canary adds nothing here: the walk
        // reports it (`fixture … changed`/`added`).
        r.written = vec![written("/work/p/notes", b"nothing")];
        assert!(failures_of(&c, b"", b"", &r).is_empty());
        // Other entries left in /tmp fail too, named by kind; a symlink's target is searched.
        let mut dir = written("/tmp/scopebox-sentinel", b"");
        dir.kind = Some("dir".into());
        let mut link = written("/tmp/l", b"/evidence/Q0FOQVJZLUNNRC03ZjNh");
        link.kind = Some("symlink".into());
        r.written = vec![dir, link];
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "dir /tmp/scopebox-sentinel made outside the fixture roots",
                "symlink /tmp/l made outside the fixture roots",
                "canary CANARY-CMD-7f3a in symlink /tmp/l (base64)",
            ]
        );
    }

    #[test]
    fn written_content_must_be_what_the_record_says() {
        let c = case();
        let mut r = record(&c, b"", b"");
        let mut forged = written("/work/p/x", b"honest");
        forged.content_base64 = encode_base64(b"other!");
        let mut bad = written("/work/p/y", b"");
        bad.content_base64 = "%%%%".into();
        let mut cut = written("/work/p/z", b"CANARY-ENV-1 and more");
        cut.content_base64 = encode_base64(b"CANARY-ENV-1");
        cut.truncated = true;
        r.written = vec![forged, bad, cut];
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "written file /work/p/x: content does not match its recorded size and sha256",
                "written file /work/p/y: content is not base64 (base64 has a character outside the alphabet)",
                "canary CANARY-ENV-1 in file /work/p/z",
            ]
        );
    }

    #[test]
    fn captures_must_match_recorded_digests() {
        let c = case();
        let r = record(&c, b"one", b"two");
        assert_eq!(
            failures_of(&c, b"ONE", b"TWO", &r),
            vec![
                "stdout does not match its recorded sha256",
                "stderr does not match its recorded sha256"
            ]
        );
    }
}
