//! Writing the receipt bundle (`docs/receipt-v2.md`): the shared `inputs/` (the matrix, policy
//! and recipe as run, and `inputs/blobs/<sha256>` — every byte the layers are made of), and per
//! platform `platforms/<os>-<arch>/` with its `inputs/` (pack manifest, the image config's exact
//! bytes, the layer manifest), `outer/` (the engine's container and image inspections as
//! received, the execution status) and `evidence/` (extracted by `evidence`); then
//! `receipt.json` binding every other file by sha256. Verdicts, controls, the boundary, the
//! execution status and the cleanup are judged with the rules the verifier uses
//! (`scopebox_schema::judge`, `::policy`, `::verify`), never with a copy of them, and the
//! verdicts must agree with the runner's. It never talks to the engine and never overwrites a
//! non-empty directory.

use crate::image::Image;
use crate::pack::Candidate;
use crate::run::Record;
use scopebox_receipts::verify::{cleanup_failures, completion_failures};
use scopebox_schema::digest::{sha256_file, sha256_hex};
use scopebox_schema::engine::EngineName;
use scopebox_schema::evidence::CaseRecord;
use scopebox_schema::evidence::{
    Controls, InnerBoundary, NegativeControl, NegativeControlRecord, PositiveControl,
    PositiveControlRecord, BOUNDARY_FILE, CASES_DIR, CONTROLS_FILE, NEGATIVE_CONTROL_RECORD_FILE,
    NEGATIVE_CONTROL_STDERR_FILE, NEGATIVE_CONTROL_STDOUT_FILE, POSITIVE_CONTROL_RECORD_FILE,
    RECORD_FILE, STDERR_FILE, STDOUT_FILE,
};
use scopebox_schema::judge;
use scopebox_schema::matrix::{Case, Matrix};
use scopebox_schema::platform::Platform;
use scopebox_schema::policy::{check_applied, check_observed, BoundaryPolicy};
use scopebox_schema::receipt::{
    blob_path, platform_dir, shard_dir, Blob, BlobRole, BlobUse, BoundaryRecord, CaseEntry,
    CaseSummary, Durations, Execution, MatrixRef, NotCovered, OverallSummary, PlatformInputs,
    PlatformRun, Receipt, ShardRun, Tool, CONTAINER_INSPECT_FILE, ENVELOPE_FILE, EVIDENCE_DIR,
    EXECUTION_FILE, IMAGE_CONFIG_FILE, IMAGE_INSPECT_FILE, LAYER_MANIFEST_FILE, MATRIX_FILE,
    PACK_MANIFEST_FILE, POLICY_FILE, RECEIPT_FILE, RECIPE_FILE, SCHEMA_VERSION,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    #[error("use {path} as the bundle directory: it is not empty")]
    NotEmpty { path: PathBuf },
    #[error("use {path} as the bundle directory: it is not a directory")]
    NotDir { path: PathBuf },
    #[error("use {path} as the bundle directory: it cannot be made in {parent}")]
    NotMakeable {
        path: PathBuf,
        parent: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ReceiptError {
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            ReceiptError::NotEmpty { .. }
                | ReceiptError::NotDir { .. }
                | ReceiptError::NotMakeable { .. }
        )
    }
}

/// Refuse a non-empty or non-directory `dir` without creating anything: nothing is left
/// behind by a run refused before it has something to put in its bundle.
pub fn check_dir(dir: &Path) -> Result<(), ReceiptError> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => match entries.next() {
            Some(_) => Err(ReceiptError::NotEmpty {
                path: dir.to_path_buf(),
            }),
            None => Ok(()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => check_makeable(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Err(ReceiptError::NotDir {
            path: dir.to_path_buf(),
        }),
        Err(source) => Err(ReceiptError::Read {
            path: dir.to_path_buf(),
            source,
        }),
    }
}

/// A missing `dir` must be one this process can make: its nearest existing ancestor is a
/// `writable_directory`.
fn check_makeable(dir: &Path) -> Result<(), ReceiptError> {
    let absolute = std::path::absolute(dir).map_err(|source| ReceiptError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let Some(parent) = absolute.ancestors().skip(1).find(|a| a.exists()) else {
        return Ok(());
    };
    writable_directory(parent).map_err(|source| ReceiptError::NotMakeable {
        path: dir.to_path_buf(),
        parent: parent.to_path_buf(),
        source,
    })
}

/// Whether `dir` is a directory this process may make entries in (not on a read-only mount,
/// not another user's), asked of the kernel (`access`): nothing is created to find out.
pub fn writable_directory(dir: &Path) -> std::io::Result<()> {
    if !std::fs::metadata(dir)?.is_dir() {
        return Err(std::io::ErrorKind::NotADirectory.into());
    }
    rustix::fs::access(
        dir,
        rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
    )?;
    Ok(())
}

/// Refuse a non-empty or non-directory `dir`; create it when missing.
pub fn prepare_dir(dir: &Path) -> Result<(), ReceiptError> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(ReceiptError::NotEmpty {
                    path: dir.to_path_buf(),
                });
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|source| ReceiptError::Write {
                path: dir.to_path_buf(),
                source,
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Err(ReceiptError::NotDir {
            path: dir.to_path_buf(),
        }),
        Err(source) => Err(ReceiptError::Read {
            path: dir.to_path_buf(),
            source,
        }),
    }
}

/// Write `bytes` at `rel` below `dir`, creating parents.
pub fn write_file(dir: &Path, rel: &str, bytes: &[u8]) -> Result<(), ReceiptError> {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ReceiptError::Write {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    std::fs::write(&path, bytes).map_err(|source| ReceiptError::Write { path, source })
}

fn pretty<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("receipt records always serialize");
    bytes.push(b'\n');
    bytes
}

/// What every platform of the run shares.
pub struct SharedInputs<'a> {
    pub matrix: &'a Matrix,
    pub matrix_bytes: &'a [u8],
    pub policy: &'a BoundaryPolicy,
    pub policy_bytes: &'a [u8],
    pub recipe_bytes: &'a [u8],
}

/// What one platform's image was made of.
pub struct PlatformInputsOf<'a> {
    pub platform: Platform,
    pub candidate: &'a Candidate,
    pub runner: &'a [u8],
    pub sentinel: &'a [u8],
    /// (machine, bytes) of every witness binary in the image.
    pub witnesses: &'a [(String, Vec<u8>)],
    pub image: &'a Image,
}

impl PlatformInputsOf<'_> {
    fn record(&self) -> PlatformInputs {
        PlatformInputs {
            candidate_archive: self.candidate.manifest.archive.clone(),
            runtime_manifest_sha256: self.candidate.manifest.runtime_manifest_sha256.clone(),
            runner_sha256: sha256_hex(self.runner),
            sentinel_sha256: sha256_hex(self.sentinel),
            witness_sha256: self
                .witnesses
                .iter()
                .map(|(m, b)| (m.clone(), sha256_hex(b)))
                .collect(),
            image_id: self.image.id.clone(),
            image_config_sha256: sha256_hex(&self.image.config),
            layer_diff_ids: vec![self.image.diff_id.clone()],
        }
    }
}

/// The shared `inputs/` and every platform's `inputs/`, with the blobs: written before any
/// container starts, so even a failed run documents them. Returns the receipt's blob index.
pub fn write_inputs(
    dir: &Path,
    shared: &SharedInputs,
    platforms: &[PlatformInputsOf],
) -> Result<Vec<Blob>, ReceiptError> {
    write_file(dir, MATRIX_FILE, shared.matrix_bytes)?;
    write_file(dir, POLICY_FILE, shared.policy_bytes)?;
    write_file(dir, RECIPE_FILE, shared.recipe_bytes)?;
    let mut blobs: BTreeMap<String, (u64, Vec<BlobUse>)> = BTreeMap::new();
    for p in platforms {
        let pdir = platform_dir(p.platform);
        let mut blob = |bytes: &[u8], role, machine: Option<&str>, name: String| {
            let sha = sha256_hex(bytes);
            let entry = blobs
                .entry(sha.clone())
                .or_insert_with(|| (bytes.len() as u64, Vec::new()));
            entry.1.push(BlobUse {
                role,
                platform: p.platform,
                machine: machine.map(str::to_string),
                name,
            });
            (sha, bytes.to_vec())
        };
        let mut files = vec![
            blob(
                &p.candidate.bytes,
                BlobRole::CandidateArchive,
                None,
                p.candidate.name.clone(),
            ),
            blob(
                p.runner,
                BlobRole::Runner,
                None,
                scopebox_schema::layout::RUNNER_BIN.to_string(),
            ),
            blob(
                p.sentinel,
                BlobRole::Sentinel,
                None,
                scopebox_schema::layout::SENTINEL_BIN.to_string(),
            ),
        ];
        for (machine, bytes) in p.witnesses {
            files.push(blob(
                bytes,
                BlobRole::Witness,
                Some(machine),
                scopebox_schema::layout::witness_bin(machine),
            ));
        }
        for (sha, bytes) in files {
            let path = blob_path(&sha);
            if !dir.join(&path).exists() {
                write_file(dir, &path, &bytes)?;
            }
        }
        write_file(
            dir,
            &format!("{pdir}/{PACK_MANIFEST_FILE}"),
            &crate::pack::manifest_json(&p.candidate.manifest),
        )?;
        write_file(dir, &format!("{pdir}/{IMAGE_CONFIG_FILE}"), &p.image.config)?;
        write_file(
            dir,
            &format!("{pdir}/{LAYER_MANIFEST_FILE}"),
            &pretty(&p.image.layer_manifest),
        )?;
    }
    Ok(blobs
        .into_iter()
        .map(|(sha256, (size, mut uses))| {
            uses.sort();
            Blob { sha256, size, uses }
        })
        .collect())
}

/// `outer/execution.json` from the lifecycle record.
pub fn execution(rec: &Record, deadline_secs: u64, pack_ms: u64, image_ms: u64) -> Execution {
    let oom_killed = rec
        .container_inspect
        .as_deref()
        .and_then(|doc| serde_json::from_slice::<serde_json::Value>(doc).ok())
        .and_then(|doc| doc.pointer("/State/OOMKilled").and_then(|v| v.as_bool()))
        .unwrap_or(false);
    let status = if rec.interrupted {
        "interrupted"
    } else if rec.timed_out {
        "timed-out"
    } else if rec.exit_code.is_some() {
        "exited"
    } else {
        // The container never ran to an exit we saw (create, start or wait failed).
        "failed"
    };
    Execution {
        status: status.to_string(),
        exit_code: rec.exit_code,
        signal: rec.killed.then(|| "SIGKILL".to_string()),
        timed_out: rec.timed_out,
        oom_killed,
        deadline_seconds: deadline_secs,
        durations: Durations {
            pack_ms,
            image_ms,
            run_ms: rec.run_ms,
            export_ms: rec.export_ms,
        },
        events: rec.events.clone(),
    }
}

/// A platform's `outer/`: the inspections exactly as the engine sent them, and the execution
/// status. `dir` is the platform's directory.
pub fn write_outer(dir: &Path, rec: &Record, execution: &Execution) -> Result<(), ReceiptError> {
    if let Some(doc) = &rec.container_inspect {
        write_file(dir, CONTAINER_INSPECT_FILE, doc)?;
    }
    if let Some(doc) = &rec.image_inspect {
        write_file(dir, IMAGE_INSPECT_FILE, doc)?;
    }
    write_file(dir, EXECUTION_FILE, &pretty(execution))
}

/// What the orchestrator concluded, with every reason for failing.
#[derive(Debug, Clone, Default)]
pub struct Conclusion {
    pub passed: usize,
    pub total: usize,
    /// Human-readable reasons the run failed; empty means it passed.
    pub problems: Vec<String>,
}

impl Conclusion {
    pub fn pass(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The times a run started and finished.
pub struct Times {
    pub started: SystemTime,
    pub finished: SystemTime,
}

/// What the engine said about itself, as the receipt records it per platform.
pub struct EngineFacts<'a> {
    pub name: EngineName,
    pub version: &'a str,
    pub architecture: &'a str,
}

/// One container of a platform as the orchestrator saw it: its lifecycle record and the
/// execution derived from it. A platform whose matrix was split has several (shard order).
pub struct ContainerRun<'a> {
    pub rec: &'a Record,
    pub execution: Execution,
}

/// Where container `index` of `platform` keeps its `outer/` and `evidence/` in `bundle`: the
/// platform's directory for the first, `shards/<index>/` below it for every further one.
pub fn container_dir(bundle: &Path, platform: Platform, index: usize) -> PathBuf {
    bundle.join(container_rel(platform, index))
}

/// `container_dir`, relative to the bundle.
fn container_rel(platform: Platform, index: usize) -> String {
    let pdir = platform_dir(platform);
    if index == 0 {
        pdir
    } else {
        shard_dir(&pdir, index)
    }
}

/// Judge one platform's extracted evidence (below `bundle/platforms/<os>-<arch>/`, and
/// `shards/<i>/` below it for every further container) and write each container's
/// `outer/execution.json`; returns its receipt section and the conclusion.
pub fn judge_platform(
    bundle: &Path,
    shared: &SharedInputs,
    inputs: &PlatformInputsOf,
    engine: &EngineFacts,
    containers: Vec<ContainerRun>,
) -> Result<(PlatformRun, Conclusion), ReceiptError> {
    let pdir = platform_dir(inputs.platform);
    let count = containers.len().max(1);
    let mut problems: Vec<String> = Vec::new();
    let mut judged = Vec::new();
    for (index, c) in containers.into_iter().enumerate() {
        let sdir = container_rel(inputs.platform, index);
        let dir = bundle.join(&sdir);
        let (boundary, controls, found) = judge_container(&dir, shared, inputs, engine, &c)?;
        let tag = if count > 1 {
            format!("shard {index}/{count}: ")
        } else {
            String::new()
        };
        problems.extend(found.into_iter().map(|p| format!("{tag}{p}")));
        judged.push(ShardRun {
            index,
            dir: sdir,
            boundary,
            controls,
            execution: c.execution,
            cleanup: c.rec.cleanup.clone(),
        });
    }

    // Cases: the runner's verdict, re-derived from the raw captures; both must pass and agree.
    // Each case's files are where its shard ran it. Judged in contiguous halves on two threads
    // (the cores are free once the containers are done), put back in the matrix's order: the
    // same entries and problems, in the same order, as one thread would give.
    let shard_dirs: Vec<&str> = judged.iter().map(|s| s.dir.as_str()).collect();
    let all: Vec<(usize, &Case)> = shared.matrix.cases.iter().enumerate().collect();
    let judged_cases = map_in_order(&all, CASE_JUDGING_THREADS, |&(position, case)| {
        judge_case(
            bundle,
            shard_dirs[position % shard_dirs.len()],
            shared,
            case,
        )
    });
    let mut cases = Vec::with_capacity(shared.matrix.cases.len());
    let mut passed = 0usize;
    for judged_case in judged_cases {
        passed += usize::from(judged_case.pass());
        problems.extend(judged_case.problem);
        cases.push(judged_case.entry);
    }
    let total = shared.matrix.cases.len();

    let engine_platform = Platform::from_machine(engine.architecture);
    let mut judged = judged.into_iter();
    let first = judged
        .next()
        .expect("a platform ran in at least one container");
    let run = PlatformRun {
        platform: inputs.platform,
        dir: pdir,
        emulated: engine_platform != Some(inputs.platform),
        engine_architecture: engine.architecture.to_string(),
        engine: engine.name,
        engine_version: engine.version.to_string(),
        inputs: inputs.record(),
        boundary: first.boundary,
        controls: first.controls,
        summary: CaseSummary {
            total,
            passed,
            failed: total - passed,
        },
        cases,
        execution: first.execution,
        cleanup: first.cleanup,
        shards: judged.collect(),
    };
    Ok((
        run,
        Conclusion {
            passed,
            total,
            problems,
        },
    ))
}

/// How many threads a platform's cases are judged on.
const CASE_JUDGING_THREADS: usize = 2;

/// `f` applied to every item on `threads` threads (each a contiguous run of the items), the
/// results in the items' order: what one thread would give.
fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let per_thread = items.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(per_thread)
            .map(|chunk| {
                let f = &f;
                scope.spawn(move || chunk.iter().map(f).collect::<Vec<R>>())
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("judging a case never panics"))
            .collect()
    })
}

/// One case judged from its files in its shard's directory: its entry, and the problem to
/// report when it did not pass (a case passes exactly when there is none).
struct JudgedCase {
    entry: CaseEntry,
    problem: Option<String>,
}

impl JudgedCase {
    fn pass(&self) -> bool {
        self.problem.is_none()
    }
}

/// `failures` joined with "; ", as many as `judge::quoted_failures` quotes, then the count of
/// the rest.
fn listed(failures: &[String]) -> String {
    let (shown, more) = scopebox_schema::judge::quoted_failures(failures);
    let shown = shown.iter().map(String::as_str);
    shown.chain(more.as_deref()).collect::<Vec<_>>().join("; ")
}

fn judge_case(bundle: &Path, shard_dir: &str, shared: &SharedInputs, case: &Case) -> JudgedCase {
    let case_dir = bundle
        .join(shard_dir)
        .join(EVIDENCE_DIR)
        .join(CASES_DIR)
        .join(&case.id);
    let stdout = std::fs::read(case_dir.join(STDOUT_FILE)).ok();
    let stderr = std::fs::read(case_dir.join(STDERR_FILE)).ok();
    let record_bytes = std::fs::read(case_dir.join(RECORD_FILE)).ok();
    let record: Option<CaseRecord> = record_bytes
        .as_deref()
        .and_then(|b| serde_json::from_slice(b).ok());
    // The kernel witness's record of the case: without it a case cannot pass.
    let witness: Option<scopebox_schema::witness::WitnessRecord> =
        std::fs::read(case_dir.join(scopebox_schema::witness::WITNESS_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
    let digest = |b: &Option<Vec<u8>>| b.as_deref().map(sha256_hex).unwrap_or_default();
    let problem = match (&stdout, &stderr, &record, &witness) {
        (Some(out), Some(err), Some(record), Some(witness)) => {
            let verdict = scopebox_schema::judge::judge_witnessed(
                shared.matrix,
                case,
                out,
                err,
                record,
                witness,
            );
            if verdict != record.verdict {
                Some(format!(
                    "case {}: re-judged {} ({}), the runner said {} ({})",
                    case.id,
                    pass_fail(verdict.pass),
                    listed(&verdict.failures),
                    pass_fail(record.verdict.pass),
                    listed(&record.verdict.failures),
                ))
            } else if !verdict.pass {
                Some(format!("case {}: {}", case.id, listed(&verdict.failures)))
            } else {
                None
            }
        }
        (Some(_), Some(_), Some(_), None) => Some(format!(
            "case {}: no readable kernel witness record ({})",
            case.id,
            scopebox_schema::witness::WITNESS_FILE
        )),
        _ => Some(format!("case {}: no complete evidence (not run)", case.id)),
    };
    let entry = CaseEntry {
        id: case.id.clone(),
        verdict: pass_fail(problem.is_none()).to_string(),
        record_sha256: digest(&record_bytes),
        stdout_sha256: digest(&stdout),
        stderr_sha256: digest(&stderr),
    };
    JudgedCase { entry, problem }
}

/// One container's boundary (applied and observed) and controls, judged from its directory
/// `dir` (the platform's, or a shard's; `write_outer` wrote its `outer/`), with every problem
/// found.
fn judge_container(
    dir: &Path,
    shared: &SharedInputs,
    inputs: &PlatformInputsOf,
    engine: &EngineFacts,
    c: &ContainerRun,
) -> Result<(BoundaryRecord, Controls, Vec<String>), ReceiptError> {
    let rec = c.rec;
    let evidence = dir.join(EVIDENCE_DIR);
    let mut problems: Vec<String> = rec.errors.clone();
    problems.extend(completion_failures(&c.execution));
    // Boundary: applied (inspection) and observed (inside), judged by the shared rules.
    let observed: Option<InnerBoundary> = read_json(&evidence.join(BOUNDARY_FILE));
    let applied_failures = match rec
        .container_inspect
        .as_deref()
        .map(serde_json::from_slice::<serde_json::Value>)
    {
        Some(Ok(doc)) => check_applied(shared.policy, &doc, engine.name),
        Some(Err(e)) => vec![format!("container-inspect: not JSON ({e})")],
        None => vec!["container-inspect: missing".to_string()],
    };
    let observed_failures = match &observed {
        Some(obs) => check_observed(shared.policy, obs),
        None => vec![format!(
            "inner-boundary: evidence/{BOUNDARY_FILE} missing or unreadable"
        )],
    };
    for f in applied_failures.iter() {
        problems.push(format!("boundary as applied: {f}"));
    }
    for f in observed_failures.iter() {
        problems.push(format!("boundary as observed: {f}"));
    }
    if let Some(obs) = &observed {
        if obs.machine != inputs.platform.machine() {
            problems.push(format!(
                "the runner saw machine {:?}, not {}",
                obs.machine,
                inputs.platform.machine()
            ));
        }
    }

    let controls: Controls = match read_json(&evidence.join(CONTROLS_FILE)) {
        Some(c) => {
            problems.extend(control_record_problems(&evidence, shared.matrix, &c));
            c
        }
        None => {
            problems.push(format!(
                "controls: evidence/{CONTROLS_FILE} missing or unreadable"
            ));
            failed_controls()
        }
    };
    problems.extend(judge::control_failures(&controls));

    if rec.kept {
        problems.push("container and volume kept for inspection (--keep-on-failure)".into());
    } else {
        problems.extend(cleanup_failures(&rec.cleanup));
    }
    Ok((
        BoundaryRecord {
            policy: shared.policy.clone(),
            observed,
            applied_meets_policy: applied_failures.is_empty(),
            observed_meets_policy: observed_failures.is_empty(),
            applied_failures,
            observed_failures,
        },
        controls,
        problems,
    ))
}

/// Write `receipt.json` (last: it lists every other file in the bundle).
#[allow(clippy::too_many_arguments)]
pub fn write_receipt(
    dir: &Path,
    run_id: &str,
    shared: &SharedInputs,
    blobs: Vec<Blob>,
    platforms: Vec<PlatformRun>,
    not_covered: Vec<NotCovered>,
    conclusions: &[Conclusion],
    times: &Times,
    provenance: scopebox_schema::receipt::Provenance,
) -> Result<Receipt, ReceiptError> {
    let receipt = Receipt {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "scopebox".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        run_id: run_id.to_string(),
        started_at: rfc3339(times.started),
        finished_at: rfc3339(times.finished),
        matrix: MatrixRef {
            sha256: sha256_hex(shared.matrix_bytes),
            name: shared.matrix.name.clone(),
            case_count: shared.matrix.cases.len(),
        },
        boundary_policy_sha256: sha256_hex(shared.policy_bytes),
        recipe_sha256: sha256_hex(shared.recipe_bytes),
        blobs,
        summary: OverallSummary {
            platforms: platforms.len(),
            platforms_passed: platforms
                .iter()
                .filter(|p| {
                    p.summary.failed == 0
                        && p.summary.total == p.cases.len()
                        && p.cases.iter().all(|c| c.verdict == "pass")
                })
                .count(),
            cases: conclusions.iter().map(|c| c.total).sum(),
            cases_passed: conclusions.iter().map(|c| c.passed).sum(),
        },
        platforms,
        not_covered,
        files: list_files(dir)?,
        provenance: Some(provenance),
    };
    write_file(dir, RECEIPT_FILE, &pretty(&receipt))?;
    Ok(receipt)
}

fn pass_fail(pass: bool) -> &'static str {
    if pass {
        "pass"
    } else {
        "fail"
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Controls that did not run: every flag says "did not behave".
fn failed_controls() -> Controls {
    Controls {
        positive: PositiveControl {
            marker_present_before: false,
            sentinel_exit_code: None,
            marker_appeared: false,
            marker_removed: false,
        },
        negative: NegativeControl {
            commands_executed: 0,
            marker_appeared: false,
            caught: false,
            marker_removed: false,
        },
        adversarial: Vec::new(),
    }
}

/// Both controls re-derived from the runner's raw records with the shared rules, as the
/// verifier will: a record missing, or a `controls.json` that says otherwise, is a problem.
fn control_record_problems(evidence: &Path, matrix: &Matrix, stated: &Controls) -> Vec<String> {
    let mut problems = Vec::new();
    match read_json::<PositiveControlRecord>(&evidence.join(POSITIVE_CONTROL_RECORD_FILE)) {
        None => problems.push(format!(
            "positive control: evidence/{POSITIVE_CONTROL_RECORD_FILE} missing or unreadable"
        )),
        Some(record) if judge::positive_control(&record) != stated.positive => problems
            .push(format!(
                "positive control: {CONTROLS_FILE} differs from what evidence/{POSITIVE_CONTROL_RECORD_FILE} shows"
            )),
        Some(_) => {}
    }
    let record = read_json::<NegativeControlRecord>(&evidence.join(NEGATIVE_CONTROL_RECORD_FILE));
    let stdout = std::fs::read(evidence.join(NEGATIVE_CONTROL_STDOUT_FILE)).ok();
    let stderr = std::fs::read(evidence.join(NEGATIVE_CONTROL_STDERR_FILE)).ok();
    match (record, stdout, stderr) {
        (Some(record), Some(out), Some(err)) => {
            let (rederived, _) = judge::negative_control(matrix, &record, &out, &err);
            if rederived != stated.negative {
                problems.push(format!(
                    "negative control: {CONTROLS_FILE} differs from evidence/{NEGATIVE_CONTROL_RECORD_FILE} re-judged"
                ));
            }
        }
        _ => problems.push(format!(
            "negative control: evidence/{NEGATIVE_CONTROL_RECORD_FILE} or its output missing or unreadable"
        )),
    }
    problems
}

/// Every file in the bundle except `receipt.json` and the envelopes: relative path → sha256
/// (walked with `walkdir`, never following a link).
pub fn list_files(dir: &Path) -> Result<BTreeMap<String, String>, ReceiptError> {
    let mut files = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).min_depth(1).follow_links(false) {
        let entry = entry.map_err(|e| ReceiptError::Read {
            path: e.path().unwrap_or(dir).to_path_buf(),
            source: e.into(),
        })?;
        if entry.file_type().is_dir() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(dir)
            .expect("walkdir yields paths below its root")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        if rel == RECEIPT_FILE
            || rel == ENVELOPE_FILE
            || rel == scopebox_schema::receipt::PROVENANCE_ENVELOPE_FILE
        {
            continue;
        }
        let digest = sha256_file(entry.path()).map_err(|source| ReceiptError::Read {
            path: entry.path().to_path_buf(),
            source,
        })?;
        files.insert(rel, digest);
    }
    Ok(files)
}

/// RFC 3339 in UTC with second precision: "2026-11-29T18:04:44Z".
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A missing bundle directory is refused up front where it could not be made (procfs
    /// denies creating under /proc/sys even to root), and accepted where it could (nothing is
    /// created by the check).
    #[test]
    fn a_bundle_directory_that_cannot_be_made_is_refused_before_anything() {
        let e = check_dir(Path::new("/proc/sys/scopebox-test/bundle")).unwrap_err();
        assert!(e.is_refusal(), "{e:?}");
        assert!(
            matches!(&e, ReceiptError::NotMakeable { parent, .. } if parent == Path::new("/proc/sys")),
            "{e:?}"
        );
        let dir = tempfile::tempdir().unwrap();
        let deeper = dir.path().join("a/b/bundle");
        assert!(check_dir(&deeper).is_ok());
        assert!(!dir.path().join("a").exists(), "the check creates nothing");
    }

    #[test]
    fn a_problem_quotes_the_first_failures_and_counts_the_rest() {
        use scopebox_schema::judge::FAILURES_QUOTED;
        let failures: Vec<String> = (0..FAILURES_QUOTED + 4).map(|i| format!("f{i}")).collect();
        let text = listed(&failures);
        assert!(text.starts_with("f0; f1; "), "{text}");
        assert!(
            text.contains(&format!("f{}; … and 4 more", FAILURES_QUOTED - 1)),
            "{text}"
        );
        assert!(!text.contains(&format!("f{FAILURES_QUOTED}")), "{text}");
        assert_eq!(listed(&failures[..2]), "f0; f1");
    }
    use std::time::Duration;

    /// Judged on several threads, in the items' order: the same results as one thread gives,
    /// for any count of items against threads (none, fewer, a remainder).
    #[test]
    fn cases_are_judged_on_several_threads_in_the_matrix_order() {
        for (n, threads) in [(0, 2), (1, 2), (2, 2), (7, 2), (364, 2), (5, 3), (4, 1)] {
            let items: Vec<usize> = (0..n).collect();
            let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
            let got = super::map_in_order(&items, threads, |&i| {
                seen.lock()
                    .unwrap()
                    .insert(format!("{:?}", std::thread::current().id()));
                i * 10 + 1
            });
            let want: Vec<usize> = items.iter().map(|i| i * 10 + 1).collect();
            assert_eq!(got, want, "{n} items on {threads} threads");
            assert_eq!(
                seen.lock().unwrap().len(),
                threads.min(n),
                "{n} items on {threads} threads"
            );
        }
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_975_484);
        assert_eq!(rfc3339(t), "2026-11-29T18:04:44Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn a_non_empty_bundle_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        prepare_dir(dir.path()).unwrap();
        std::fs::write(dir.path().join("x"), b"").unwrap();
        let err = prepare_dir(dir.path()).unwrap_err();
        assert!(err.is_refusal(), "{err:?}");
        let fresh = dir.path().join("new/bundle");
        prepare_dir(&fresh).unwrap();
        assert!(fresh.is_dir());
        let err = prepare_dir(&dir.path().join("x")).unwrap_err();
        assert!(err.is_refusal(), "{err:?}");
    }

    #[test]
    fn every_file_but_the_receipt_and_envelope_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        write_file(dir.path(), "inputs/a.json", b"a").unwrap();
        write_file(dir.path(), "evidence/cases/x/stdout", b"").unwrap();
        write_file(dir.path(), RECEIPT_FILE, b"{}").unwrap();
        write_file(dir.path(), ENVELOPE_FILE, b"{}").unwrap();
        let files = list_files(dir.path()).unwrap();
        assert_eq!(
            files.keys().collect::<Vec<_>>(),
            vec!["evidence/cases/x/stdout", "inputs/a.json"]
        );
        assert_eq!(files["inputs/a.json"], sha256_hex(b"a"));
    }

    // That controls which behaved pass is `judge`'s test (`controls_that_behaved_have_no_failures`).
    #[test]
    fn controls_that_did_not_run_fail() {
        let f = judge::control_failures(&failed_controls());
        assert!(f.iter().any(|m| m.starts_with("positive control")));
        assert!(f.iter().any(|m| m.starts_with("negative control")));
    }
}
