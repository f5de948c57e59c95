//! The matrix and the cases: the bundled matrix is the one named and is valid (once per bundle);
//! per platform, every case in it ran exactly once; each verdict is re-derived from the raw stdout, stderr and record with
//! `judge::judge` (the runner's own rules) and compared with both recorded verdicts; canaries (in
//! every encoding of `canary`) and
//! the sentinel marker are re-checked directly from the captures and records; the summary counts
//! are recomputed. It never trusts a recorded verdict or count.

use super::bounds::MAX_OBSERVATIONS;
use super::witness::case_witness_path;
use super::{Checks, Context, PlatformContext};
use crate::evidence::{
    CaseRecord, RunSummary, Shard, CASES_DIR, RECORD_FILE, STDERR_FILE, STDOUT_FILE, SUMMARY_FILE,
};
use crate::judge::{decode_base64, environment_failures, judge, judge_witnessed, validate_matrix};
use crate::layout;
use crate::matrix::Matrix;
use crate::receipt::{CaseEntry, EVIDENCE_DIR, MATRIX_FILE};
use scopebox_schema::canary;
use scopebox_schema::witness::WitnessRecord;
use std::collections::{BTreeMap, BTreeSet};

pub(crate) fn case_file(id: &str, name: &str) -> String {
    format!("{EVIDENCE_DIR}/{CASES_DIR}/{id}/{name}")
}

pub(crate) fn summary_path() -> String {
    format!("{EVIDENCE_DIR}/{SUMMARY_FILE}")
}

const CASE_CHECKS: [(&str, &str); 8] = [
    (
        "cases.coverage",
        "every matrix case ran exactly once and has its captures",
    ),
    (
        "cases.captures",
        "recorded capture digests match the raw stdout, stderr and record",
    ),
    (
        "cases.invocation",
        "each record shows the candidate invoked with the case's argv, cwd and exactly its env",
    ),
    (
        "cases.verdicts",
        "each verdict re-derived from raw captures equals both recorded verdicts",
    ),
    ("cases.pass", "every re-derived verdict passes"),
    (
        "cases.canaries",
        "no canary appears in any stdout, stderr or file left written, raw or encoded",
    ),
    (
        "cases.sentinel",
        "the sentinel marker was absent after every case",
    ),
    (
        "cases.summary",
        "the summary counts match the re-derived verdicts",
    ),
];

/// `matrix.digest` and `matrix.valid`, once per bundle.
pub(crate) fn check_matrix(ctx: &Context, checks: &mut Checks) {
    let named = &ctx.receipt.matrix;
    if ctx.native.is_some() && ctx.receipt.platforms.is_empty() {
        // Native-only: the receipt's matrix is the native matrix, checked by `native.section`;
        // no candidate matrix may be bundled.
        let mut failures = Vec::new();
        if ctx.bundle.files.contains_key(MATRIX_FILE) {
            failures.push(format!(
                "a native-only bundle holds {MATRIX_FILE}, but no candidate platform ran"
            ));
        }
        checks.record(
            "matrix.digest",
            "the bundled matrix is the one the receipt names",
            failures,
        );
        // The receipt's matrix is the native matrix: its shape and bounds.
        let valid = match ctx.native.as_ref().map(|n| &n.matrix) {
            Some(Ok(m)) => scopebox_schema::native_observe::matrix_problems(m),
            Some(Err(e)) => vec![e.clone()],
            None => Vec::new(),
        };
        checks.record(
            "matrix.valid",
            "the matrix parses and passes the runner's validation",
            valid,
        );
        return;
    }
    let mut digest_failures = Vec::new();
    match ctx.digest(MATRIX_FILE) {
        None => digest_failures.push(format!("{MATRIX_FILE} is missing")),
        Some(d) if d != named.sha256 => digest_failures.push(format!(
            "{MATRIX_FILE} has sha256 {d}, matrix.sha256 says {}",
            named.sha256
        )),
        Some(_) => {}
    }
    checks.record(
        "matrix.digest",
        "the bundled matrix is the one the receipt names",
        digest_failures,
    );

    let mut valid_failures = Vec::new();
    match &ctx.matrix {
        Err(e) => valid_failures.push(e.clone()),
        Ok(m) => {
            if let Err(problems) = validate_matrix(m) {
                valid_failures.extend(problems);
            }
            if m.name != named.name || m.cases.len() != named.case_count {
                valid_failures.push(format!(
                    "the matrix is {:?} with {} cases, the receipt names {:?} with {}",
                    m.name,
                    m.cases.len(),
                    named.name,
                    named.case_count
                ));
            }
        }
    }
    checks.record(
        "matrix.valid",
        "the matrix parses and passes the runner's validation",
        valid_failures,
    );
}

/// Every case family, for one platform.
pub(crate) fn check(p: &PlatformContext, checks: &mut Checks) {
    let matrix = match &p.ctx.matrix {
        Ok(m) => m,
        Err(e) => {
            for (id, title) in CASE_CHECKS {
                checks.record(id, title, vec![format!("no usable matrix: {e}")]);
            }
            return;
        }
    };
    judge_cases(p, matrix, checks);
}

#[derive(Default)]
struct Failures {
    coverage: Vec<String>,
    captures: Vec<String>,
    invocation: Vec<String>,
    verdicts: Vec<String>,
    pass: Vec<String>,
    canaries: Vec<String>,
    sentinel: Vec<String>,
    summary: Vec<String>,
}

fn judge_cases(p: &PlatformContext, matrix: &Matrix, checks: &mut Checks) {
    let receipt = p.run;
    let mut f = Failures::default();

    // Coverage: the same ids, in the same order, in the matrix, the receipt and the evidence tree.
    let matrix_ids: Vec<&str> = matrix.cases.iter().map(|c| c.id.as_str()).collect();
    let receipt_ids: Vec<&str> = receipt.cases.iter().map(|c| c.id.as_str()).collect();
    if matrix_ids != receipt_ids {
        let m: BTreeSet<&str> = matrix_ids.iter().copied().collect();
        let r: BTreeSet<&str> = receipt_ids.iter().copied().collect();
        for id in m.difference(&r) {
            f.coverage
                .push(format!("case {id} is in the matrix but not in the receipt"));
        }
        for id in r.difference(&m) {
            f.coverage
                .push(format!("case {id} is in the receipt but not in the matrix"));
        }
        if m == r {
            f.coverage
                .push("the receipt lists the cases in another order, or twice".into());
        }
    }
    // Every container's evidence tree holds exactly its shard's cases.
    let count = receipt.shard_count();
    let matrix_id_set: BTreeSet<&str> = matrix_ids.iter().copied().collect();
    for index in 0..count {
        let prefix = format!("{}/{EVIDENCE_DIR}/{CASES_DIR}/", receipt.shard_dir(index));
        let evidence_ids: BTreeSet<&str> = p
            .ctx
            .bundle
            .files
            .keys()
            .filter_map(|p| p.strip_prefix(&prefix))
            .filter_map(|rest| rest.split_once('/').map(|(id, _)| id))
            .collect();
        for id in &evidence_ids {
            if !matrix_id_set.contains(id) {
                f.coverage.push(format!(
                    "evidence for case {id}, which the matrix does not have"
                ));
            } else if p.case_shards.get(*id) != Some(&index) {
                f.coverage.push(format!(
                    "evidence for case {id} in shard {index}, which did not run it"
                ));
            }
        }
    }

    let entries: BTreeMap<&str, &CaseEntry> =
        receipt.cases.iter().map(|c| (c.id.as_str(), c)).collect();
    let canaries = canary::search_for(&matrix.canaries);
    let mut passed = 0usize;
    let mut passed_in = vec![0usize; count];
    let mut judged = 0usize;
    for (position, case) in matrix.cases.iter().enumerate() {
        let id = case.id.as_str();
        let stdout_path = case_file(id, STDOUT_FILE);
        let stderr_path = case_file(id, STDERR_FILE);
        let record_path = case_file(id, RECORD_FILE);
        let (Ok(stdout), Ok(stderr)) = (p.bytes(&stdout_path), p.bytes(&stderr_path)) else {
            f.coverage
                .push(format!("case {id} has no stdout or stderr capture"));
            f.pass
                .push(format!("case {id}: not judged (captures missing)"));
            continue;
        };
        let record: CaseRecord = match p.parse(&record_path) {
            Ok(r) => r,
            Err(e) => {
                f.coverage.push(format!("case {id}: {e}"));
                f.pass
                    .push(format!("case {id}: not judged (record unusable)"));
                continue;
            }
        };
        let observations = record
            .fixtures_before
            .len()
            .max(record.fixtures_after.len());
        if observations > MAX_OBSERVATIONS {
            f.coverage.push(format!(
                "case {id}: the record holds {observations} fixture observations, more than {MAX_OBSERVATIONS}"
            ));
            f.pass
                .push(format!("case {id}: not judged (record beyond bounds)"));
            continue;
        }
        judged += 1;

        // Captures: the receipt's per-case digests and the record's digests are the bytes here.
        let actual = |path: &str| p.digest(path).unwrap_or("").to_string();
        match entries.get(id) {
            Some(entry) => {
                for (what, recorded, path) in [
                    ("stdout", &entry.stdout_sha256, &stdout_path),
                    ("stderr", &entry.stderr_sha256, &stderr_path),
                    ("record", &entry.record_sha256, &record_path),
                ] {
                    if *recorded != actual(path) {
                        f.captures.push(format!(
                            "case {id}: receipt {what} sha256 {recorded} differs from the file's {}",
                            actual(path)
                        ));
                    }
                }
            }
            None => f.captures.push(format!("case {id}: no receipt entry")),
        }
        for (what, recorded, path) in [
            ("stdout", &record.stdout_sha256, &stdout_path),
            ("stderr", &record.stderr_sha256, &stderr_path),
        ] {
            if *recorded != actual(path) {
                f.captures.push(format!(
                    "case {id}: record {what} sha256 differs from the captured bytes"
                ));
            }
        }

        // Invocation: what ran is what the matrix says.
        let mut want_argv = vec![layout::CANDIDATE_BIN.to_string()];
        want_argv.extend(case.args.iter().cloned());
        if record.argv != want_argv {
            f.invocation.push(format!(
                "case {id}: argv {:?}, expected {want_argv:?}",
                record.argv
            ));
        }
        let want_cwd = case.cwd.as_deref().unwrap_or("/work");
        if record.cwd != want_cwd {
            f.invocation.push(format!(
                "case {id}: cwd {}, expected {want_cwd}",
                record.cwd
            ));
        }
        // Exactly the matrix's environment: no extra (LD_PRELOAD), no duplicate, in order.
        for failure in environment_failures(case, &record.env) {
            f.invocation.push(format!("case {id}: {failure}"));
        }

        // Verdicts: re-derived with the runner's rules from raw bytes, and with the kernel
        // witness's record when there is one (`cases.witness` requires it).
        let verdict = match p.parse::<WitnessRecord>(&case_witness_path(id)) {
            Ok(witness) => judge_witnessed(matrix, case, stdout, stderr, &record, &witness),
            Err(_) => judge(matrix, case, stdout, stderr, &record),
        };
        if verdict != record.verdict {
            f.verdicts.push(format!(
                "case {id}: re-derived {} ({}), the record says {} ({})",
                pass_fail(verdict.pass),
                verdict.failures.join("; "),
                pass_fail(record.verdict.pass),
                record.verdict.failures.join("; ")
            ));
        }
        if let Some(entry) = entries.get(id) {
            if entry.verdict != pass_fail(verdict.pass) {
                f.verdicts.push(format!(
                    "case {id}: re-derived {}, the receipt says {}",
                    pass_fail(verdict.pass),
                    entry.verdict
                ));
            }
        }
        if verdict.pass {
            passed += 1;
            passed_in[position % count] += 1;
        } else {
            f.pass
                .push(format!("case {id}: {}", verdict.failures.join("; ")));
        }

        // Canaries and the sentinel, checked directly rather than through `judge`.
        for (stream, bytes) in [("stdout", stdout), ("stderr", stderr)] {
            for failure in canaries.failures(bytes, stream) {
                f.canaries.push(format!("case {id}: {failure}"));
            }
        }
        for file in &record.written {
            let content = decode_base64(&file.content_base64).unwrap_or_default();
            for failure in canaries.failures(&content, &format!("file {}", file.path)) {
                f.canaries.push(format!("case {id}: {failure}"));
            }
        }
        if record.marker_present {
            f.sentinel.push(format!(
                "case {id}: the sentinel marker {} was present after the run",
                layout::SENTINEL_MARKER
            ));
        }
    }

    // Summary: recomputed counts against the receipt and the runner's summary.json.
    let total = matrix.cases.len();
    let failed = total - passed;
    let s = &receipt.summary;
    if (s.total, s.passed, s.failed) != (total, passed, failed) {
        f.summary.push(format!(
            "receipt summary says {}/{}/{} (total/passed/failed), re-derived {total}/{passed}/{failed}",
            s.total, s.passed, s.failed
        ));
    }
    // Each container's summary.json: its shard's cases and counts.
    for (index, &passed) in passed_in.iter().enumerate() {
        let shard = Shard { index, of: count };
        let container = PlatformContext {
            ctx: p.ctx,
            run: p.run,
            shard: index,
            case_shards: p.case_shards,
        };
        let path = container.path(&summary_path());
        let ids: Vec<&str> = matrix
            .cases
            .iter()
            .enumerate()
            .filter(|(position, _)| shard.runs(*position))
            .map(|(_, c)| c.id.as_str())
            .collect();
        let total = ids.len();
        let failed = total - passed;
        match container.parse::<RunSummary>(&summary_path()) {
            Err(e) => f.summary.push(e),
            Ok(run) => {
                if run.matrix_sha256 != p.ctx.receipt.matrix.sha256 {
                    f.summary.push(format!(
                        "{path} names matrix {}, the receipt {}",
                        run.matrix_sha256, p.ctx.receipt.matrix.sha256
                    ));
                }
                if (run.total, run.passed, run.failed) != (total, passed, failed) {
                    f.summary.push(format!(
                        "{path} says {}/{}/{} (total/passed/failed), re-derived {total}/{passed}/{failed}",
                        run.total, run.passed, run.failed
                    ));
                }
                if run.case_ids != ids {
                    f.coverage.push(format!(
                        "{path} lists other case ids than the matrix gives shard {index} of {count}"
                    ));
                }
                if run.shard != shard {
                    f.coverage.push(format!(
                        "{path} names shard {}, expected {}",
                        run.shard.text(),
                        shard.text()
                    ));
                }
            }
        }
    }
    if judged == 0 && total > 0 {
        f.pass.push("no case could be judged".into());
    }

    let Failures {
        coverage,
        captures,
        invocation,
        verdicts,
        pass,
        canaries,
        sentinel,
        summary,
    } = f;
    for ((id, title), failures) in CASE_CHECKS.into_iter().zip([
        coverage, captures, invocation, verdicts, pass, canaries, sentinel, summary,
    ]) {
        checks.record(id, title, failures);
    }
}

fn pass_fail(pass: bool) -> &'static str {
    if pass {
        "pass"
    } else {
        "fail"
    }
}
