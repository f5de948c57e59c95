//! One evidence run, end to end: vet the candidate (first, before anything else), check the
//! matrix and the bundle directory, reach the engine, build the static binaries, generate and
//! load the image (verifying its ID), sweep stale leftovers, run the container lifecycle
//! (`lifecycle`), extract `/evidence`, and write the receipt bundle. Ctrl-C is raced against
//! every step. It sequences; the steps themselves live in their own modules.

mod lifecycle;

pub use lifecycle::{
    describe, lifecycle, owner_is_live, run_label, sweep_stale, Plan, Record, SweepReport,
    DEFAULT_DEADLINE_SECS, STEP_TIMEOUT,
};

use lifecycle::bounded;

use crate::boundary::{self, Names};
use crate::cli::RunArgs;
use crate::engine::docker::DockerEngine;
use crate::engine::{Engine, EngineErrorKind};
use crate::exit::{CommandError, Outcome};
use crate::image::{self, Contents, IdMatch, Recipe};
use crate::pack::Candidate;
use crate::progress::Progress;
use crate::receipt::{self, RunInputs, Times};
use crate::toolchain::{self, workspace_root};
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::matrix::Matrix;
use scopebox_schema::receipt::EVIDENCE_DIR;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Where bundles go when `--out` is not given, relative to the workspace root.
pub const DEFAULT_RUNS_DIR: &str = "out/runs";

/// Read the matrix files and validate the matrix they make together; returns it with the exact
/// bytes that are run (and carried in the bundle). One file runs byte for byte as written;
/// several are joined into one matrix: cases in order, canaries deduplicated in order.
pub fn load_matrices(paths: &[PathBuf]) -> Result<(Matrix, Vec<u8>), CommandError> {
    if let [single] = paths {
        return load_matrix(single);
    }
    let mut joined: Option<Matrix> = None;
    for path in paths {
        let (part, _) = read_matrix(path)?;
        match joined.as_mut() {
            None => joined = Some(part),
            Some(all) => {
                for canary in part.canaries {
                    if !all.canaries.contains(&canary) {
                        all.canaries.push(canary);
                    }
                }
                all.cases.extend(part.cases);
            }
        }
    }
    let mut matrix = joined.ok_or(CommandError::Usage(
        "at least one --matrix file is needed".to_string(),
    ))?;
    matrix.name = "shipped".to_string();
    let mut bytes = serde_json::to_vec_pretty(&matrix).expect("a matrix always serializes to JSON");
    bytes.push(b'\n');
    let label = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ");
    validate(&matrix, Path::new(&label))?;
    Ok((matrix, bytes))
}

fn read_matrix(path: &Path) -> Result<(Matrix, Vec<u8>), CommandError> {
    let bytes = std::fs::read(path).map_err(|source| CommandError::MatrixRead {
        path: path.to_path_buf(),
        source,
    })?;
    let matrix: Matrix =
        serde_json::from_slice(&bytes).map_err(|source| CommandError::MatrixParse {
            path: path.to_path_buf(),
            source,
        })?;
    Ok((matrix, bytes))
}

fn validate(matrix: &Matrix, path: &Path) -> Result<(), CommandError> {
    scopebox_schema::judge::validate_matrix(matrix).map_err(|problems| {
        CommandError::MatrixInvalid {
            path: path.to_path_buf(),
            problems,
        }
    })
}

/// Read, parse and validate a matrix; returns it with its exact bytes.
pub fn load_matrix(path: &Path) -> Result<(Matrix, Vec<u8>), CommandError> {
    let (matrix, bytes) = read_matrix(path)?;
    validate(&matrix, path)?;
    Ok((matrix, bytes))
}

/// The engine at `DOCKER_HOST` (else the default socket), once it has answered a ping; a
/// failure to reach it is `EngineUnreachable` (exit 3, with the address tried).
pub async fn reach_engine() -> Result<DockerEngine, CommandError> {
    let host = DockerEngine::host_from_env();
    let engine = DockerEngine::connect(&host).map_err(|e| CommandError::from_ping(&host, e))?;
    answers(&engine).await?;
    Ok(engine)
}

/// Ping under `STEP_TIMEOUT`: an engine that accepts the connection but never answers is as
/// unreachable as one that refuses it (exit 3, with the address tried).
async fn answers<E: Engine>(engine: &E) -> Result<(), CommandError> {
    let host = engine.host();
    bounded(format!("reach the Docker engine at {host}"), engine.ping())
        .await
        .map_err(|mut e| {
            e.kind = EngineErrorKind::Unreachable;
            CommandError::from_ping(host, e)
        })
}

/// `scopebox run`.
pub async fn evidence_run(args: RunArgs) -> Result<Outcome, CommandError> {
    let started_at = SystemTime::now();
    let clock = Instant::now();
    // The candidate's identity is checked before anything else happens.
    let given = args.candidate.load()?;
    let root = workspace_root();
    let matrix_paths = if args.matrix.is_empty() {
        shipped_matrices(&root)
    } else {
        args.matrix.clone()
    };
    let (matrix, matrix_bytes) = load_matrices(&matrix_paths)?;
    let run_id = boundary::new_run_id();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| root.join(DEFAULT_RUNS_DIR).join(&run_id));
    receipt::prepare_dir(&out)?;
    let (policy, policy_bytes) = boundary::load_policy(&root)?;
    let (recipe, recipe_bytes) = Recipe::load(&root)?;

    let engine = reach_engine().await?;

    // One listener for the whole run, from here on: a Ctrl-C that lands between two steps (after
    // `prepare`, before the lifecycle first polls its interrupt) is kept for the next `recv`
    // instead of being lost to a listener that did not exist yet. If it cannot be installed,
    // only the deadline can end the run.
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
    let mut interrupted = async || match sigint.as_mut() {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending::<()>().await,
    };

    let prepare = async {
        // Build what the image needs (the candidate too, unless one was given).
        let pack_clock = Instant::now();
        let packages: &[&str] = if given.is_some() {
            &["scopebox-harness"]
        } else {
            &["mcpscope", "scopebox-harness"]
        };
        eprintln!(
            "scopebox: building {} (static, {})",
            packages.join(", "),
            toolchain::TARGET
        );
        toolchain::build_static(&root, packages).await?;
        let candidate = match given {
            Some(c) => c,
            None => Candidate::from_binary(toolchain::read_bin(&root, "mcpscope")?),
        };
        let runner = toolchain::read_bin(&root, "scopebox-runner")?;
        let sentinel = toolchain::read_bin(&root, "scopebox-sentinel")?;
        let pack_ms = pack_clock.elapsed().as_millis() as u64;

        let image_clock = Instant::now();
        let image = image::build(
            &recipe,
            &recipe_bytes,
            &Contents {
                candidate: &candidate.files,
                runner: &runner,
                sentinel: &sentinel,
                matrix: &matrix_bytes,
            },
        )?;
        let loaded = ensure_image(&engine, &image).await?;
        let image_ms = image_clock.elapsed().as_millis() as u64;
        eprintln!(
            "scopebox: image {} ({}{})",
            image.id,
            image.tag,
            match loaded {
                Loaded::Reused => ", already loaded",
                Loaded::Now(IdMatch::ConfigDigest) => ", loaded",
                Loaded::Now(IdMatch::ManifestDigest) =>
                    ", loaded; the engine names it by manifest digest",
            }
        );
        let swept = sweep_stale(&engine, false, owner_is_live).await?;
        if !swept.removed.is_empty() {
            eprintln!(
                "scopebox: removed {} leftover object(s) of earlier runs",
                swept.removed.len()
            );
        }
        Ok::<_, CommandError>((candidate, runner, sentinel, image, pack_ms, image_ms))
    };
    let (candidate, runner, sentinel, image, pack_ms, image_ms) = tokio::select! {
        done = prepare => done?,
        () = interrupted() => {
            eprintln!("scopebox: interrupted before the container was created");
            return Ok(Outcome::Interrupted);
        }
    };

    let inputs = RunInputs {
        pack_manifest: &candidate.manifest,
        matrix: &matrix,
        matrix_bytes: &matrix_bytes,
        policy: &policy,
        policy_bytes: &policy_bytes,
        image: &image,
        runner_sha256: sha256_hex(&runner),
        sentinel_sha256: sha256_hex(&sentinel),
    };
    receipt::write_inputs(&out, &inputs)?;

    let names = Names::for_run(&run_id);
    let labels = boundary::labels(&run_id, args.keep_on_failure);
    let plan = Plan {
        body: boundary::create_body(&policy, &image.id, &names.volume, &labels),
        names,
        labels,
        image_id: image.id.clone(),
        deadline: Duration::from_secs(args.deadline),
        keep_on_failure: args.keep_on_failure,
        origin: tokio::time::Instant::from_std(clock),
    };
    eprintln!(
        "scopebox: running {} case(s) of {} in container {} (deadline {} s)",
        matrix.cases.len(),
        matrix.name,
        plan.names.container,
        args.deadline
    );
    let mut progress = Progress::new(matrix.cases.len(), std::io::stderr());
    let mut rec = lifecycle(&engine, &plan, interrupted(), &mut progress).await;

    if let Some(tar) = rec.evidence.take() {
        let dest = out.join(EVIDENCE_DIR);
        let extracted = std::fs::create_dir_all(&dest)
            .map_err(|e| e.to_string())
            .and_then(|()| crate::evidence::extract(&tar, &dest).map_err(|e| describe(&e)));
        if let Err(problem) = extracted {
            rec.errors.push(problem);
        }
    }
    let execution = receipt::execution(&rec, args.deadline, pack_ms, image_ms);
    receipt::write_outer(&out, &rec, &execution)?;
    let times = Times {
        started: started_at,
        finished: SystemTime::now(),
    };
    let (receipt, conclusion) = receipt::finish(&out, &run_id, &inputs, &rec, execution, &times)?;

    // The run ends the way an auditor would start: replaying the bundle from its bytes alone.
    let verification = scopebox_receipts::verify::verify_dir(&out, &Default::default());
    let verified = matches!(&verification, Ok(report) if report.verified);
    let outcome = outcome(&rec, conclusion.pass() && verified);
    if rec.kept {
        eprintln!(
            "scopebox: kept container {} and volume {}; remove them with: scopebox sweep",
            plan.names.container, plan.names.volume
        );
    }
    const SHOWN: usize = 12;
    // After Ctrl-C everything downstream is missing by design; say only that.
    let shown = if rec.interrupted { 1 } else { SHOWN };
    for problem in conclusion.problems.iter().take(shown) {
        eprintln!("  problem: {problem}");
    }
    if conclusion.problems.len() > shown && !rec.interrupted {
        eprintln!(
            "  … and {} more (see the receipt)",
            conclusion.problems.len() - shown
        );
    }
    let verdict = match outcome {
        Outcome::Passed => "PASSED",
        Outcome::Failed => "FAILED",
        Outcome::TimedOut => "TIMED OUT",
        Outcome::Interrupted => "INTERRUPTED",
    };
    eprintln!(
        "scopebox: {verdict}: {}/{} cases passed, boundary {}, controls {}, cleanup {} — bundle {} ({:.1} s)",
        conclusion.passed,
        conclusion.total,
        if receipt.boundary.applied_meets_policy && receipt.boundary.observed_meets_policy {
            "met"
        } else {
            "NOT met"
        },
        if scopebox_schema::judge::control_failures(&receipt.controls).is_empty() {
            "ok"
        } else {
            "FAILED"
        },
        if receipt.cleanup.container_removed && receipt.cleanup.volume_removed {
            "done"
        } else {
            "INCOMPLETE"
        },
        out.display(),
        clock.elapsed().as_secs_f64()
    );
    let receipt_path = out.join(scopebox_schema::receipt::RECEIPT_FILE);
    match &verification {
        Ok(report) if report.verified => eprintln!(
            "scopebox: receipt {} — verified: all {} checks of scopebox-verify passed",
            receipt_path.display(),
            report.checks.len()
        ),
        Ok(report) => eprintln!(
            "scopebox: receipt {} — NOT verified: scopebox-verify rejected it ({})",
            receipt_path.display(),
            report.failed_ids().join(", ")
        ),
        Err(e) => eprintln!(
            "scopebox: receipt {} — NOT verified: the bundle could not be read back ({e})",
            receipt_path.display()
        ),
    }
    if args.json {
        let summary = serde_json::json!({
            "outcome": verdict.to_ascii_lowercase().replace(' ', "-"),
            "bundle": out,
            "receipt": receipt_path,
            "verified": verified,
            "runId": run_id,
            "imageId": image.id,
            "candidateSha256": candidate.manifest.archive.sha256,
            "cases": {"total": conclusion.total, "passed": conclusion.passed},
            "problems": conclusion.problems,
            "seconds": clock.elapsed().as_secs_f64(),
        });
        println!("{summary}");
    }
    Ok(outcome)
}

/// How a run came out: Ctrl-C and then the deadline say so whatever else happened; otherwise it
/// passed only if no lifecycle step failed and the judge and the verifier `accepted` the bundle.
pub fn outcome(rec: &Record, accepted: bool) -> Outcome {
    if rec.interrupted {
        Outcome::Interrupted
    } else if rec.timed_out {
        Outcome::TimedOut
    } else if accepted && rec.errors.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed
    }
}

enum Loaded {
    Reused,
    Now(IdMatch),
}

/// Load the image unless the engine already has exactly it (the ID is content-addressed, so
/// a hit is the same image); then require the engine's ID to be ours.
/// Every call is under `STEP_TIMEOUT`.
async fn ensure_image<E: Engine>(engine: &E, image: &image::Image) -> Result<Loaded, CommandError> {
    let inspect_id = || {
        bounded(
            format!("inspect image {}", image.id),
            engine.inspect_image(&image.id),
        )
    };
    if let Some(doc) = inspect_id().await? {
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&doc) {
            if image::check_loaded(image, &value).is_ok() {
                return Ok(Loaded::Reused);
            }
        }
    }
    bounded(
        format!("load image {}", image.tag),
        engine.load_image(image::docker_archive(image)),
    )
    .await?;
    let doc = match inspect_id().await? {
        Some(doc) => doc,
        // The containerd store names it by manifest digest: find it by our unique tag.
        None => bounded(
            format!("inspect image {}", image.tag),
            engine.inspect_image(&image.tag),
        )
        .await?
        .ok_or_else(|| {
            image::ImageError::Inspect(format!(
                "the engine has neither {} nor {} after loading",
                image.id, image.tag
            ))
        })?,
    };
    let value: serde_json::Value =
        serde_json::from_slice(&doc).map_err(|e| image::ImageError::Inspect(e.to_string()))?;
    Ok(Loaded::Now(image::check_loaded(image, &value)?))
}

/// The shipped matrix files (run when `--matrix` is not given, joined as one matrix named
/// `shipped`), as paths below the workspace root: the list in `harness/matrix/shipped.json`.
pub fn shipped_matrices(root: &Path) -> Vec<PathBuf> {
    use scopebox_schema::shipped;
    let dir = root.join(shipped::MATRIX_DIR);
    shipped::manifest()
        .matrices
        .iter()
        .map(|f| dir.join(f))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fake::{Fake, Step};
    use crate::pack::ArchiveFile;

    fn image() -> image::Image {
        let root = workspace_root();
        let (recipe, bytes) = Recipe::load(&root).unwrap();
        let candidate = [ArchiveFile {
            path: "bin/mcpscope".into(),
            mode: 0o755,
            bytes: b"c".to_vec(),
        }];
        image::build(
            &recipe,
            &bytes,
            &Contents {
                candidate: &candidate,
                runner: b"r",
                sentinel: b"s",
                matrix: b"{}",
            },
        )
        .unwrap()
    }

    #[tokio::test]
    async fn an_image_the_engine_lacks_is_loaded_then_checked() {
        let img = image();
        let fake = Fake::new().without_image();
        let loaded = ensure_image(&fake, &img).await.unwrap();
        assert!(matches!(loaded, Loaded::Now(IdMatch::ConfigDigest)));
        assert_eq!(
            fake.calls(),
            [
                format!("inspect_image {}", img.id),
                "load_image".to_string(),
                format!("inspect_image {}", img.id),
            ]
        );
    }

    #[tokio::test]
    async fn an_image_already_loaded_is_reused_without_loading() {
        let img = image();
        let fake = Fake::new();
        assert!(matches!(
            ensure_image(&fake, &img).await.unwrap(),
            Loaded::Reused
        ));
        assert!(!fake.calls().contains(&"load_image".to_string()));
    }

    #[tokio::test(start_paused = true)]
    async fn an_engine_that_never_answers_the_ping_is_unreachable() {
        let fake = Fake::new().hanging(Step::Ping);
        let err = answers(&fake).await.expect_err("no answer");
        assert_eq!(err.code(), crate::exit::ENGINE_UNREACHABLE);
        let text = crate::exit::render(&err);
        assert_eq!(
            text,
            "error: failed to reach the Docker engine at fake://\n  \
             caused by: the Docker engine did not answer within 120 s\n\
             hint: is the Docker engine running? tried fake:// (set DOCKER_HOST to use another address)"
        );
        assert_eq!(fake.calls(), ["ping"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_image_inspection_or_load_fails_the_run() {
        let img = image();
        for (fake, calls, what) in [
            (
                Fake::new().hanging(Step::InspectImage),
                vec![format!("inspect_image {}", img.id)],
                format!("inspect image {}", img.id),
            ),
            (
                Fake::new().without_image().hanging(Step::LoadImage),
                vec![format!("inspect_image {}", img.id), "load_image".into()],
                format!("load image {}", img.tag),
            ),
        ] {
            let err = ensure_image(&fake, &img).await.err().expect("no answer");
            assert_eq!(fake.calls(), calls);
            assert_eq!(err.code(), crate::exit::FAILURE);
            assert_eq!(
                crate::exit::render(&err),
                format!(
                    "error: failed to {what}\n  caused by: the Docker engine did not answer within 120 s"
                )
            );
        }
    }

    #[tokio::test]
    async fn an_engine_reporting_another_id_is_refused() {
        let img = image();
        let other = format!("sha256:{}", "e".repeat(64));
        let fake = Fake::new().without_image().reporting_image_id(&other);
        let err = ensure_image(&fake, &img).await.err().expect("refused");
        assert!(
            matches!(
                err,
                CommandError::Image(image::ImageError::IdMismatch { .. })
            ),
            "{err:?}"
        );
    }
}
