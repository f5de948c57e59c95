//! End to end: every hostile shape of issue 14, built from the synthetic specimen (a real run's
//! reference bundle is used by the benchmark; `hostile` builds from either), run through the
//! `scopebox-verify` binary. Each must be
//! rejected (exit 1) or unreadable (exit 2) with the named check or error, nothing may be
//! written outside the bundle (nor into it), and neither stream may carry a raw control or
//! format character — in the human report and in `--json`, whose values stay exact. Speed is
//! measured by the benchmark (`examples/bench.rs`), never asserted here.

use crate::hostile::{self, raw_controls, NASTY};
use crate::util::{specimen, tempdir, Run};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The base every shape is built from: a consistent two-platform specimen of two cases,
/// kept for the whole test binary.
fn reference() -> PathBuf {
    static BASE: std::sync::OnceLock<(tempfile::TempDir, PathBuf)> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        let tmp = tempdir();
        let bundle = specimen(tmp.path(), 2);
        (tmp, bundle)
    })
    .1
    .clone()
}

/// Every path below `dir` with its bytes' length and mtime: what "nothing written" compares.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            }
            out.insert(entry.path(), (meta.len(), meta.modified().unwrap()));
        }
    }
    out
}

/// Run scopebox-verify with `TMPDIR` pointing at an empty directory of the test's, and
/// require: the exit code, no raw control on either stream, nothing changed in `root` (the
/// bundle and everything around it) and nothing left in the temp dir.
fn verify_hostile(root: &Path, args: &[&str], code: i32) -> Run {
    let scratch = tempdir();
    let before = snapshot(root);
    let out = Command::new(env!("CARGO_BIN_EXE_scopebox-verify"))
        .args(args)
        .env("TMPDIR", scratch.path())
        .output()
        .expect("run scopebox-verify");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(run.code, code, "{args:?}\n{}{}", run.stdout, run.stderr);
    assert_eq!(
        raw_controls(&out.stdout),
        Vec::<String>::new(),
        "{}",
        run.stdout
    );
    assert_eq!(
        raw_controls(&out.stderr),
        Vec::<String>::new(),
        "{}",
        run.stderr
    );
    assert!(
        snapshot(root) == before,
        "{args:?} changed files below {}",
        root.display()
    );
    assert_eq!(
        std::fs::read_dir(scratch.path()).unwrap().count(),
        0,
        "{args:?} left files in TMPDIR"
    );
    run
}

/// Build shape `name` from `base` below a fresh temp dir; verify it as a person and as a
/// machine would.
fn check_shape(base: &Path, name: &str, code: i32, check: &str) -> (Run, Run) {
    let tmp = tempdir();
    let bundle = hostile::build(name, base, &tmp.path().join("bundle")).expect("build the shape");
    let b = bundle.to_str().unwrap();
    let human = verify_hostile(tmp.path(), &[b], code);
    let json = verify_hostile(tmp.path(), &[b, "--json"], code);
    let text = format!("{}{}", human.stdout, human.stderr);
    assert!(text.contains(check), "{name}: no {check} in\n{text}");
    (human, json)
}

fn failed_ids(json: &Run) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == false)
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn escapes_in_every_bundle_string_are_shown_escaped_and_kept_exact_in_json() {
    {
        let base = reference();
        let (human, json) = check_shape(&base, "escapes", 1, "✗ files.layout");
        // The forged "verified" line never starts a line of its own.
        assert!(
            !human.stdout.lines().any(|l| l.starts_with("verified")),
            "{}",
            human.stdout
        );
        assert!(
            human.stdout.contains("\\u{1b}]0;owned\\u{7}"),
            "{}",
            human.stdout
        );
        assert!(human
            .stdout
            .lines()
            .last()
            .unwrap()
            .starts_with("rejected: "));
        let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        assert_eq!(doc["subject"]["runId"], format!("run{NASTY}"));
        assert_eq!(
            doc["subject"]["platforms"][0]["candidateArchive"],
            format!("mcpscope{NASTY}.tar.gz")
        );
        assert!(failed_ids(&json).contains(&"files.digests".to_string()));
    }
}

#[test]
fn an_escaping_unknown_key_in_a_record_is_a_named_failure_shown_escaped() {
    let (human, _) = check_shape(&reference(), "unknown-key-escape", 1, "unknown field");
    assert!(
        human.stdout.contains("✗ linux-amd64/cases.coverage"),
        "{}",
        human.stdout
    );
}

#[test]
fn an_escaping_unknown_key_in_the_receipt_is_unreadable_with_an_escaped_error() {
    let (human, json) = check_shape(&reference(), "receipt-unknown-key", 2, "unknown field");
    assert!(
        human
            .stderr
            .starts_with("error: failed to read the bundle "),
        "{}",
        human.stderr
    );
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["result"], "unreadable");
    assert!(doc["error"].as_str().unwrap().contains(NASTY), "{doc}");
}

#[test]
fn a_matrix_of_fill_fixtures_is_stopped_by_the_bounds() {
    let (_, json) = check_shape(&reference(), "fill-matrix", 1, "✗ bundle.bounds");
    assert_eq!(failed_ids(&json), ["bundle.bounds"]);
    let size = std::fs::metadata(
        hostile::build("fill-matrix", &reference(), &tempdir().path().join("b"))
            .unwrap()
            .join("inputs/matrix.json"),
    )
    .unwrap()
    .len();
    assert!(size > 6_000_000, "the hostile matrix is {size} bytes");
}

#[test]
fn sixty_thousand_fixture_entries_in_one_case_are_stopped_by_the_bounds() {
    let (human, json) = check_shape(
        &reference(),
        "fixture-flood",
        1,
        "fixture entries, more than 4096",
    );
    assert_eq!(failed_ids(&json), ["bundle.bounds"], "{}", human.stdout);
}

#[test]
fn a_receipt_listing_twenty_thousand_cases_is_stopped_by_the_bounds() {
    let (_, json) = check_shape(&reference(), "case-flood", 1, "✗ bundle.bounds");
    assert_eq!(failed_ids(&json), ["bundle.bounds"]);
}

#[test]
fn forty_thousand_unlisted_files_are_rejected_with_a_capped_list() {
    let (human, json) = check_shape(&reference(), "many-files", 1, "✗ files.unlisted");
    assert!(failed_ids(&json).contains(&"files.layout".to_string()));
    assert!(
        human.stdout.contains("… and 39950 more"),
        "{}",
        human.stdout
    );
}

#[test]
fn sixty_thousand_files_are_unreadable_before_any_is_read() {
    check_shape(
        &reference(),
        "too-many-files",
        2,
        "the bundle has more than 50000 entries",
    );
}

#[test]
fn forty_thousand_listed_files_outside_the_layout_are_rejected() {
    let (_, json) = check_shape(&reference(), "many-listed-files", 1, "✗ files.layout");
    assert!(!failed_ids(&json).contains(&"files.unlisted".to_string()));
}

#[test]
fn a_duplicate_network_mode_is_rejected_not_read_last_wins() {
    let (human, _) = check_shape(
        &reference(),
        "duplicate-keys",
        1,
        "duplicate key \"NetworkMode\"",
    );
    assert!(
        human.stdout.contains("✗ linux-amd64/boundary.applied"),
        "{}",
        human.stdout
    );
}

#[test]
fn a_sparse_two_gib_file_is_unreadable_and_the_self_test_copies_nothing() {
    let tmp = tempdir();
    let bundle = hostile::build("sparse", &reference(), &tmp.path().join("bundle")).unwrap();
    let b = bundle.to_str().unwrap();
    let run = verify_hostile(tmp.path(), &[b], 2);
    assert!(
        run.stderr.contains(
            ": platforms/linux-amd64/evidence/cases/case-000/stdout is larger than 67108864 bytes"
        ),
        "{}",
        run.stderr
    );
    // The self-test measures before copying: refused with nothing written to TMPDIR (checked
    // by verify_hostile), and quickly, since no byte of the 2 GiB is read.
    let run = verify_hostile(tmp.path(), &["--self-test", b], 2);
    assert!(
        run.stderr
            .contains("beyond the verifier's bounds, nothing was copied"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_self_test_refuses_a_fifo_by_its_name_escaped_once_and_copies_nothing() {
    let tmp = tempdir();
    let bundle = tmp.path().join("bundle");
    crate::hostile_copy(&reference(), &bundle);
    let fifo = bundle.join("fifo\x1b[31mred");
    crate::util::make_fifo(&fifo);
    // verify_hostile: exit 2, no raw control on either stream, nothing written anywhere.
    let run = verify_hostile(tmp.path(), &["--self-test", bundle.to_str().unwrap()], 2);
    assert!(
        run.stderr
            .contains("nothing was copied: fifo\\u{1b}[31mred is a fifo, not a file or directory"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_all_zero_signature_without_a_key_shows_no_check_mark_on_the_signature() {
    let tmp = tempdir();
    let bundle = tmp.path().join("bundle");
    // The specimen signed with a fresh key, the signature zeroed.
    crate::hostile_copy(&reference(), &bundle);
    let keys = scopebox_receipts::dsse::write_keypair(&tmp.path().join("k")).unwrap();
    let private = std::fs::read_to_string(&keys.private).unwrap();
    scopebox_receipts::attestation::sign_bundle(&bundle, &private).unwrap();
    let envelope = bundle.join("receipt.dsse.json");
    crate::util::edit_json(&envelope, |e| {
        e["signatures"][0]["sig"] = scopebox_receipts::dsse::encode_base64(&[0; 64]).into();
    });
    let run = verify_hostile(tmp.path(), &[bundle.to_str().unwrap()], 0);
    for line in run.stdout.lines().filter(|l| l.contains('✓')) {
        assert!(
            !line.contains("signature.verified") && !line.contains("signed"),
            "{line}"
        );
    }
    assert!(
        run.stdout.contains("- signature.verified"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("not checked against any key"),
        "{}",
        run.stdout
    );
    // With the key, the zeroed signature fails.
    let key = keys.public;
    let run = verify_hostile(
        tmp.path(),
        &[bundle.to_str().unwrap(), "--key", key.to_str().unwrap()],
        1,
    );
    assert!(
        run.stdout.contains("✗ signature.verified"),
        "{}",
        run.stdout
    );
}

#[test]
fn clap_echoes_a_bad_argument_escaped() {
    let tmp = tempdir();
    // Everything but the NUL (no argv can carry one).
    let bad = format!("--{}", NASTY.replace('\0', ""));
    let run = verify_hostile(tmp.path(), &[&bad], 2);
    assert!(run.stderr.contains("\\u{1b}]0;owned"), "{}", run.stderr);
    // The argument's own CR LF cannot start a forged line.
    assert!(
        !run.stderr.lines().any(|l| l.starts_with("verified")),
        "{}",
        run.stderr
    );
}

#[test]
fn a_hostile_native_capture_is_rejected_escaped_and_writes_nothing() {
    // The client's stdout lists a server whose name hides the report (ESC[8m, RLO), digests
    // re-listed; the recomputed judgement names it, escaped, in both forms.
    let tmp = tempdir();
    let dir = crate::native::native_bundle(tmp.path());
    let rel = "native/claude-code-linux-amd64/evidence/native/baseline-stdio-all-scopes/list/client.stdout";
    let mut bytes = std::fs::read(dir.join(rel)).unwrap();
    bytes.extend_from_slice(format!("{NASTY}: x - ✘ Failed to connect\n").as_bytes());
    std::fs::write(dir.join(rel), &bytes).unwrap();
    crate::util::relist(&dir, rel);
    let b = dir.to_str().unwrap();
    let human = verify_hostile(tmp.path(), &[b], 1);
    let json = verify_hostile(tmp.path(), &[b, "--json"], 1);
    assert!(
        human.stdout.contains("native.judgement"),
        "{}",
        human.stdout
    );
    let failed = failed_ids(&json);
    assert!(
        failed.contains(&"native-claude-code-linux-amd64/native.pass".to_string()),
        "{failed:?}"
    );
}

#[test]
fn a_junit_report_that_does_not_restate_the_receipt_is_rejected_and_shown_escaped() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    let junit = bundle.join("junit.xml");
    let honest = std::fs::read_to_string(&junit).unwrap();
    // A CI page would show a failure and a test case whose name retitles the terminal; its
    // digest is updated, so only the restatement check can catch it.
    let forged = honest.replacen(
        "<testcase name=\"positive control\" classname=\"linux/amd64.controls\"/>",
        "<testcase name=\"\u{1b}]0;PWN\u{7}\" classname=\"linux/amd64.controls\"><failure message=\"x\"/></testcase>",
        1,
    );
    assert_ne!(forged, honest);
    std::fs::write(&junit, &forged).unwrap();
    crate::util::relist(&bundle, "junit.xml");
    let out = crate::util::verify_bin(&[bundle.to_str().unwrap()]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("✗ junit.report"), "{}", out.stdout);
    assert!(
        raw_controls(out.stdout.as_bytes()).is_empty(),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("\\u{1b}]0;PWN"), "{}", out.stdout);
}
