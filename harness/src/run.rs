//! The runner's whole sequence inside the container: load and validate the matrix, observe the
//! boundary, run both controls (their raw records first, then `controls.json` derived from
//! them), run every case in order (a failing case never stops the
//! others; a `stall` fault blocks forever so the outer deadline can be tested), and write
//! `summary.json` last. Progress goes to the given writer (stderr in the binary), one line per
//! case. This module decides the run's status; the binary maps it to an exit code. It must
//! never write outside the evidence directory and the fixture roots.

use crate::journal::{Journal, JOURNAL_FILE};
use crate::watch::Watch;
use crate::{boundary, case, controls, evidence_file, fixture, HarnessError, IoContext, Layout};
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::evidence::Shard;
use scopebox_schema::evidence::{
    AdversarialControl, Controls, RunError, RunSummary, BOUNDARY_FILE, CASES_DIR, CONTROLS_DIR,
    CONTROLS_FILE, ERROR_FILE, NEGATIVE_CONTROL_RECORD_FILE, NEGATIVE_CONTROL_STDERR_FILE,
    NEGATIVE_CONTROL_STDOUT_FILE, NEGATIVE_CONTROL_WITNESS_FILE, POSITIVE_CONTROL_RECORD_FILE,
    POSITIVE_CONTROL_WITNESS_FILE, SUMMARY_FILE,
};
use scopebox_schema::judge;
use scopebox_schema::matrix::{Case, Fault, Matrix};
use std::io::Write;
use std::path::Path;

/// How a run ended. `exit_code` is the one place these become process exit codes.
#[derive(Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// Every case passed and both controls behaved.
    Passed,
    /// At least one case failed or a control misbehaved; the evidence is complete.
    Failed,
    /// The matrix could not be read, parsed or validated; `error.json` says why.
    MatrixRefused,
    /// The harness itself failed (evidence not writable, fixture roots unusable).
    HarnessFailed,
}

impl RunStatus {
    /// 0 passed, 1 failed, 2 matrix refused, 3 harness failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunStatus::Passed => 0,
            RunStatus::Failed => 1,
            RunStatus::MatrixRefused => 2,
            RunStatus::HarnessFailed => 3,
        }
    }
}

/// Reads, parses and validates a matrix file; on failure the `RunError` to record.
pub fn load_matrix(path: &Path) -> Result<(Matrix, String), RunError> {
    load_checked(path, |m: &Matrix| {
        judge::validate_matrix(m).err().unwrap_or_default()
    })
}

/// Reads and parses a JSON matrix of any kind and applies `check` (its problems, empty when
/// fine); on failure the `RunError` to record (`matrix-unreadable`, `-malformed`, `-invalid`),
/// with the sha256 of the bytes once they were read.
pub fn load_checked<T: serde::de::DeserializeOwned>(
    path: &Path,
    check: impl FnOnce(&T) -> Vec<String>,
) -> Result<(T, String), RunError> {
    let bytes = std::fs::read(path).map_err(|e| RunError {
        kind: "matrix-unreadable".into(),
        message: format!("failed to read {}: {e}", path.display()),
        problems: vec![],
        matrix_sha256: None,
    })?;
    let sha = sha256_hex(&bytes);
    // Kept for the whole run: out of the forks' way (`unforked`).
    let parsed = crate::unforked::hold(|| serde_json::from_slice::<T>(&bytes));
    let matrix: T = parsed.map_err(|e| RunError {
        kind: "matrix-malformed".into(),
        message: format!("failed to parse {}: {e}", path.display()),
        problems: vec![],
        matrix_sha256: Some(sha.clone()),
    })?;
    let problems = check(&matrix);
    if !problems.is_empty() {
        return Err(RunError {
            kind: "matrix-invalid".into(),
            message: format!(
                "failed to validate {}: {} problem(s)",
                path.display(),
                problems.len()
            ),
            problems,
            matrix_sha256: Some(sha),
        });
    }
    Ok((matrix, sha))
}

/// Refuses the run before anything ran (no kernel witness): `error.json` of `kind` with
/// `message`, a line on `progress`, `HarnessFailed`.
pub fn refuse(layout: &Layout, kind: &str, message: &str, progress: &mut dyn Write) -> RunStatus {
    let _ = writeln!(progress, "error: {message}");
    let error = RunError {
        kind: kind.into(),
        message: message.into(),
        problems: vec![],
        matrix_sha256: None,
    };
    let _ = evidence_file::write_json(&layout.evidence_dir.join(ERROR_FILE), &error);
    RunStatus::HarnessFailed
}

/// The whole run of `shard`'s cases (`Shard::WHOLE`: every case; the boundary and every
/// control run in every shard). Never panics on bad input; every outcome is a `RunStatus`. The
/// container and `run-rebased` always pass `Watch::Kernel`.
pub fn run(
    layout: &Layout,
    shard: Shard,
    watch: &mut Watch,
    progress: &mut dyn Write,
) -> RunStatus {
    let (matrix, matrix_sha256) = match load_matrix(&layout.matrix_path) {
        Ok(m) => m,
        Err(error) => {
            let _ = writeln!(progress, "error: {}", error.message);
            for p in &error.problems {
                let _ = writeln!(progress, "  {p}");
            }
            let _ = evidence_file::write_json(&layout.evidence_dir.join(ERROR_FILE), &error);
            return RunStatus::MatrixRefused;
        }
    };
    match run_matrix(layout, &matrix, &matrix_sha256, shard, watch, progress) {
        Ok(status) => status,
        Err(e) => {
            let message = format!("failed to {e}: {}", e.source);
            let _ = writeln!(progress, "error: {message}");
            // (Not for what the runner found changed behind it: those are `Other` errors that
            // say what they found.)
            let unusable = e.source.kind() != std::io::ErrorKind::Other;
            if unusable && e.path.starts_with(&layout.evidence_dir) {
                let _ = writeln!(
                    progress,
                    "hint: {} must be the evidence volume, writable by uid 1000 (an image directory owned 1000:1000)",
                    layout.evidence_dir.display()
                );
            }
            let error = RunError {
                kind: "harness".into(),
                message,
                problems: vec![],
                matrix_sha256: Some(matrix_sha256),
            };
            let _ = evidence_file::write_json(&layout.evidence_dir.join(ERROR_FILE), &error);
            RunStatus::HarnessFailed
        }
    }
}

fn run_matrix(
    layout: &Layout,
    matrix: &Matrix,
    matrix_sha256: &str,
    shard: Shard,
    watch: &mut Watch,
    progress: &mut dyn Write,
) -> Result<RunStatus, HarnessError> {
    let cases_dir = layout.evidence_dir.join(CASES_DIR);
    std::fs::create_dir_all(&cases_dir).at("create", &cases_dir)?;

    let mut phases = Phases::default();
    // Before anything forks: the controls' judging is the search's first use.
    slim_for_forks(matrix);
    phases.lap("canaries");
    let inner = boundary::observe(layout, watch);
    evidence_file::write_json(&layout.evidence_dir.join(BOUNDARY_FILE), &inner)?;
    let _ = writeln!(
        progress,
        "boundary uid={} gid={} capEff={} noNewPrivs={} seccomp={} net={} rootWriteErrno={} tmpfsExecErrno={}",
        inner.uid,
        inner.gid,
        inner.cap_eff,
        inner.no_new_privs,
        inner.seccomp,
        inner.net_interfaces.join(","),
        errno_text(inner.root_write_errno),
        errno_text(inner.tmpfs_exec_errno)
    );

    phases.lap("boundary");
    // A marker left over from anything before the controls would make them meaningless; the
    // positive control records it (and fails) rather than silently deleting it.
    let (positive_record, positive_witness) = controls::positive(layout, watch)?;
    let negative_outcome = controls::negative(layout, matrix, watch)?;
    let adversarial = controls::adversarial(layout, matrix, watch)?;
    // The raw records first: controls.json is only what they derive.
    evidence_file::write_json(
        &layout.evidence_dir.join(POSITIVE_CONTROL_RECORD_FILE),
        &positive_record,
    )?;
    evidence_file::write_json(
        &layout.evidence_dir.join(NEGATIVE_CONTROL_RECORD_FILE),
        &negative_outcome.record,
    )?;
    evidence_file::write(
        &layout.evidence_dir.join(NEGATIVE_CONTROL_STDOUT_FILE),
        &negative_outcome.stdout,
    )?;
    evidence_file::write(
        &layout.evidence_dir.join(NEGATIVE_CONTROL_STDERR_FILE),
        &negative_outcome.stderr,
    )?;
    if let Some(w) = &positive_witness {
        evidence_file::write_json(&layout.evidence_dir.join(POSITIVE_CONTROL_WITNESS_FILE), w)?;
    }
    if let Some(w) = &negative_outcome.witness {
        evidence_file::write_json(&layout.evidence_dir.join(NEGATIVE_CONTROL_WITNESS_FILE), w)?;
    }
    for a in &adversarial {
        let dir = layout.evidence_dir.join(CONTROLS_DIR).join(&a.control.name);
        case::write_run(&dir, &a.run)?;
    }
    let adversarial: Vec<AdversarialControl> = adversarial.into_iter().map(|a| a.control).collect();
    let adversarial_ok = judge::adversarial_control_failures(&adversarial).is_empty();
    for a in &adversarial {
        let _ = writeln!(
            progress,
            "control {} {}",
            a.name,
            if a.caught { "caught" } else { "NOT CAUGHT" }
        );
        if !a.caught {
            write_failures(progress, &a.failures);
        }
    }
    let positive = judge::positive_control(&positive_record);
    let negative = negative_outcome.control;
    let positive_ok = judge::positive_control_failures(&positive).is_empty();
    let negative_ok = judge::negative_control_failures(&negative).is_empty();
    let controls_ok = positive_ok && negative_ok && adversarial_ok;
    let _ = writeln!(
        progress,
        "controls positive {} negative {}",
        if positive_ok { "ok" } else { "FAILED" },
        if negative_ok { "caught" } else { "FAILED" },
    );
    evidence_file::write_json(
        &layout.evidence_dir.join(CONTROLS_FILE),
        &Controls {
            positive,
            negative,
            adversarial,
        },
    )?;

    phases.lap("controls");
    let mut passed = 0;
    // This shard's cases, in matrix order; each case's evidence is the same bytes whichever
    // shard runs it (each case starts from cleared fixture roots and no marker).
    let cases: Vec<&Case> = matrix
        .cases
        .iter()
        .enumerate()
        .filter(|(position, _)| shard.runs(*position))
        .map(|(_, c)| c)
        .collect();
    let mut durations = Vec::with_capacity(cases.len());
    let mut journal = Journal::create(&layout.evidence_dir.join(JOURNAL_FILE))?;
    for c in cases.iter().copied() {
        if c.fault == Some(Fault::Stall) {
            let _ = writeln!(
                progress,
                "case {} stall (fault injected; waiting for the outer deadline)",
                c.id
            );
            let _ = progress.flush();
            stall();
        }
        let outcome = case::run_case(layout, matrix, c, watch)?;
        case::write_outcome(&mut journal, &outcome)?;
        let r = &outcome.record;
        durations.push(r.duration_micros);
        if r.verdict.pass {
            passed += 1;
        }
        let _ = writeln!(
            progress,
            "case {} {} {}",
            r.id,
            if r.verdict.pass { "pass" } else { "fail" },
            r.duration_micros
        );
        write_failures(progress, &r.verdict.failures);
    }
    journal.finish()?;
    fixture::clear(layout)?;
    phases.lap("cases");
    // Figures for people and the benchmark, never evidence: in no record.
    let _ = writeln!(
        progress,
        "phases {} cpu={}us",
        phases.line(),
        cpu_micros_so_far()
    );

    let total = cases.len();
    let summary = RunSummary {
        matrix_sha256: matrix_sha256.to_string(),
        total,
        passed,
        failed: total - passed,
        case_ids: cases.iter().map(|c| c.id.clone()).collect(),
        median_case_micros: median(&mut durations),
        shard,
    };
    let _ = writeln!(
        progress,
        "summary {}/{} passed, median case {} us, controls {}",
        passed,
        total,
        summary.median_case_micros,
        if controls_ok { "ok" } else { "FAILED" }
    );
    evidence_file::write_json(&layout.evidence_dir.join(SUMMARY_FILE), &summary)?;
    Ok(if controls_ok && passed == total {
        RunStatus::Passed
    } else {
        RunStatus::Failed
    })
}

/// A case's or control's failures as progress lines, as many as `judge::quoted_failures`
/// quotes, then the line that counts the rest.
fn write_failures(progress: &mut dyn Write, failures: &[String]) {
    let (shown, more) = judge::quoted_failures(failures);
    for f in shown.iter().chain(&more) {
        let _ = writeln!(progress, "  {f}");
    }
}

/// Compiles the cases' canary search before the first fork, in the memory forks do not copy
/// (`unforked`), and returns the heap the compiler left free to the system: every case forks
/// the runner, and a fork (and the exec that follows it) costs in proportion to the memory the
/// runner has mapped.
fn slim_for_forks(matrix: &Matrix) {
    crate::unforked::hold(|| {
        let _ = scopebox_schema::canary::search_for(&matrix.canaries);
    });
    // musl's allocator returns free memory by itself; glibc's keeps it until asked.
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases free heap pages.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Wall time of the runner's own phases, one lap after another.
struct Phases {
    last: std::time::Instant,
    laps: Vec<(&'static str, u128)>,
}

impl Default for Phases {
    fn default() -> Phases {
        Phases {
            last: std::time::Instant::now(),
            laps: Vec::new(),
        }
    }
}

impl Phases {
    fn lap(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        self.laps
            .push((name, now.duration_since(self.last).as_micros()));
        self.last = now;
    }

    /// `boundary=812us controls=...`
    fn line(&self) -> String {
        self.laps
            .iter()
            .map(|(name, us)| format!("{name}={us}us"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// CPU time (user and system) the runner and every child it reaped have used: a figure for
/// benchmarks (the wall time of a shared machine varies more than the work does).
fn cpu_micros_so_far() -> u128 {
    let used = |who: libc::c_int| {
        // SAFETY: getrusage fills the struct it is given.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &mut usage) } != 0 {
            return 0;
        }
        let micros = |t: libc::timeval| t.tv_sec as u128 * 1_000_000 + t.tv_usec as u128;
        micros(usage.ru_utime) + micros(usage.ru_stime)
    };
    used(libc::RUSAGE_SELF) + used(libc::RUSAGE_CHILDREN)
}

fn errno_text(errno: Option<i32>) -> String {
    errno.map_or_else(|| "none".to_string(), |e| e.to_string())
}

/// Blocks forever: only the orchestrator's outer deadline ends a stalled run.
fn stall() -> ! {
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// The lower median (the middle element for odd counts, the lower middle for even); 0 if empty.
pub fn median(values: &mut [u64]) -> u64 {
    if values.is_empty() {
        return 0;
    }
    values.sort_unstable();
    values[(values.len() - 1) / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_documented_values() {
        assert_eq!(RunStatus::Passed.exit_code(), 0);
        assert_eq!(RunStatus::Failed.exit_code(), 1);
        assert_eq!(RunStatus::MatrixRefused.exit_code(), 2);
        assert_eq!(RunStatus::HarnessFailed.exit_code(), 3);
    }

    #[test]
    fn an_unwritable_evidence_dir_is_a_harness_failure_with_a_hint() {
        let d = tempfile::tempdir().unwrap();
        let mut l =
            Layout::rebased(d.path(), Path::new("/bin/true"), Path::new("/bin/true")).unwrap();
        std::fs::write(
            &l.matrix_path,
            r#"{"schemaVersion":1,"name":"x","canaries":[],"cases":[
                {"id":"a","client":"claude-code","description":"","args":[],"expect":{"exitCode":0}}]}"#,
        )
        .unwrap();
        // A file where the evidence directory's parent should be: nothing can be created.
        std::fs::write(d.path().join("blocker"), "").unwrap();
        l.evidence_dir = d.path().join("blocker/evidence");
        let mut progress = Vec::new();
        assert_eq!(
            run(&l, Shard::WHOLE, &mut Watch::Unwatched, &mut progress),
            RunStatus::HarnessFailed
        );
        let progress = String::from_utf8(progress).unwrap();
        assert!(
            progress.starts_with("error: failed to create "),
            "{progress}"
        );
        assert!(progress.contains("\nhint: "), "{progress}");
    }

    #[test]
    fn median_is_the_lower_middle() {
        assert_eq!(median(&mut []), 0);
        assert_eq!(median(&mut [5]), 5);
        assert_eq!(median(&mut [9, 1, 5]), 5);
        assert_eq!(median(&mut [4, 1, 3, 2]), 2);
    }

    #[test]
    fn unreadable_malformed_and_invalid_matrices_are_refused_with_a_kind() {
        let d = tempfile::tempdir().unwrap();
        let e = load_matrix(&d.path().join("missing.json")).unwrap_err();
        assert_eq!(e.kind, "matrix-unreadable");
        assert!(e.message.starts_with("failed to read "));

        let p = d.path().join("m.json");
        std::fs::write(&p, "{\"schemaVersion\":1,").unwrap();
        let e = load_matrix(&p).unwrap_err();
        assert_eq!(e.kind, "matrix-malformed");
        assert_eq!(
            e.matrix_sha256.as_deref(),
            Some(sha256_hex(b"{\"schemaVersion\":1,").as_str())
        );

        std::fs::write(
            &p,
            r#"{"schemaVersion":2,"name":"x","canaries":[],"cases":[]}"#,
        )
        .unwrap();
        let e = load_matrix(&p).unwrap_err();
        assert_eq!(e.kind, "matrix-invalid");
        assert_eq!(
            e.problems,
            ["schemaVersion is 2, expected 1", "matrix has no cases"]
        );
    }

    #[test]
    fn progress_lists_the_first_failures_and_counts_the_rest() {
        let failures: Vec<String> = (0..judge::FAILURES_QUOTED + 5)
            .map(|i| format!("f{i}"))
            .collect();
        let mut out = Vec::new();
        write_failures(&mut out, &failures);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), judge::FAILURES_QUOTED + 1, "{text}");
        assert!(
            text.ends_with("  … and 5 more (see the record)\n"),
            "{text}"
        );
        let mut few = Vec::new();
        write_failures(&mut few, &failures[..2]);
        assert_eq!(String::from_utf8(few).unwrap(), "  f0\n  f1\n");
    }
}
