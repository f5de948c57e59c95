//! One evidence run, end to end: vet the candidate (first, before anything else), check the
//! matrix and the bundle directory, reach the engine, build the static binaries, generate and
//! load the image (verifying its ID), sweep stale leftovers, run the container lifecycle
//! (`lifecycle`), extract `/evidence`, and write the receipt bundle. Ctrl-C is raced against
//! every step. It sequences; the steps themselves live in their own modules.

mod lifecycle;

pub use lifecycle::{
    describe, lifecycle, owner_is_live, run_label, sweep_stale, Plan, Record, SweepReport,
    DEFAULT_DEADLINE_SECS,
};

use crate::boundary::{self, Names};
use crate::cli::RunArgs;
use crate::engine::docker::DockerEngine;
use crate::engine::Engine;
use crate::exit::{CommandError, Outcome};
use crate::image::{self, Contents, IdMatch, Recipe};
use crate::pack::Candidate;
use crate::progress::Progress;
use crate::receipt::{self, RunInputs, Times};
use crate::toolchain::{self, workspace_root};
use scopebox_receipts::digest::sha256_hex;
use scopebox_receipts::matrix::Matrix;
use scopebox_receipts::receipt::EVIDENCE_DIR;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// The matrix run when `--matrix` is not given, relative to the workspace root.
pub const DEFAULT_MATRIX: &str = "harness/matrix/claude-code.json";

/// Read, parse and validate a matrix; returns it with its exact bytes.
pub fn load_matrix(path: &Path) -> Result<(Matrix, Vec<u8>), CommandError> {
    let bytes = std::fs::read(path).map_err(|source| CommandError::MatrixRead {
        path: path.to_path_buf(),
        source,
    })?;
    let matrix: Matrix =
        serde_json::from_slice(&bytes).map_err(|source| CommandError::MatrixParse {
            path: path.to_path_buf(),
            source,
        })?;
    scopebox_receipts::judge::validate_matrix(&matrix).map_err(|problems| {
        CommandError::MatrixInvalid {
            path: path.to_path_buf(),
            problems,
        }
    })?;
    Ok((matrix, bytes))
}

/// `scopebox run`.
pub async fn evidence_run(args: RunArgs) -> Result<Outcome, CommandError> {
    let started_at = SystemTime::now();
    let clock = Instant::now();
    // The candidate's identity is checked before anything else happens.
    let given = args.candidate.load()?;
    let root = workspace_root();
    let matrix_path = args
        .matrix
        .clone()
        .unwrap_or_else(|| root.join(DEFAULT_MATRIX));
    let (matrix, matrix_bytes) = load_matrix(&matrix_path)?;
    receipt::prepare_dir(&args.out)?;
    let (policy, policy_bytes) = boundary::load_policy(&root)?;
    let (recipe, recipe_bytes) = Recipe::load(&root)?;

    let host = DockerEngine::host_from_env();
    let engine = DockerEngine::connect(&host).map_err(|e| CommandError::from_ping(&host, e))?;
    engine
        .ping()
        .await
        .map_err(|e| CommandError::from_ping(&host, e))?;

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
        _ = tokio::signal::ctrl_c() => {
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
    receipt::write_inputs(&args.out, &inputs)?;

    let run_id = boundary::new_run_id();
    let names = Names::for_run(&run_id);
    let labels = boundary::labels(&run_id, args.keep_on_failure);
    let plan = Plan {
        body: boundary::create_body(&policy, &image.id, &names.volume, &labels),
        names,
        labels,
        image_id: image.id.clone(),
        deadline: Duration::from_secs(args.deadline),
        keep_on_failure: args.keep_on_failure,
    };
    eprintln!(
        "scopebox: running {} case(s) of {} in container {} (deadline {} s)",
        matrix.cases.len(),
        matrix.name,
        plan.names.container,
        args.deadline
    );
    let mut progress = Progress::new(matrix.cases.len(), std::io::stderr());
    let interrupt = async {
        // A failure to install the handler must not end the run: then only the deadline can.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let mut rec = lifecycle(&engine, &plan, interrupt, &mut progress).await;

    if let Some(tar) = rec.evidence.take() {
        let dest = args.out.join(EVIDENCE_DIR);
        let extracted = std::fs::create_dir_all(&dest)
            .map_err(|e| e.to_string())
            .and_then(|()| crate::evidence::extract(&tar, &dest).map_err(|e| describe(&e)));
        if let Err(problem) = extracted {
            rec.errors.push(problem);
        }
    }
    let execution = receipt::execution(&rec, args.deadline, pack_ms, image_ms);
    receipt::write_outer(&args.out, &rec, &execution)?;
    let times = Times {
        started: started_at,
        finished: SystemTime::now(),
    };
    let (receipt, conclusion) =
        receipt::finish(&args.out, &run_id, &inputs, &rec, execution, &times)?;

    let outcome = if rec.interrupted {
        Outcome::Interrupted
    } else if rec.timed_out {
        Outcome::TimedOut
    } else if conclusion.pass() {
        Outcome::Passed
    } else {
        Outcome::Failed
    };
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
        if receipt::control_failures(&receipt.controls).is_empty() {
            "ok"
        } else {
            "FAILED"
        },
        if receipt.cleanup.container_removed && receipt.cleanup.volume_removed {
            "done"
        } else {
            "INCOMPLETE"
        },
        args.out.display(),
        clock.elapsed().as_secs_f64()
    );
    if args.json {
        let summary = serde_json::json!({
            "outcome": verdict.to_ascii_lowercase().replace(' ', "-"),
            "bundle": args.out,
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

enum Loaded {
    Reused,
    Now(IdMatch),
}

/// Load the image unless the engine already has exactly it (the ID is content-addressed, so
/// a hit is the same image); then require the engine's ID to be ours.
async fn ensure_image<E: Engine>(engine: &E, image: &image::Image) -> Result<Loaded, CommandError> {
    if let Some(doc) = engine.inspect_image(&image.id).await? {
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&doc) {
            if image::check_loaded(image, &value).is_ok() {
                return Ok(Loaded::Reused);
            }
        }
    }
    engine.load_image(image::docker_archive(image)).await?;
    let doc = match engine.inspect_image(&image.id).await? {
        Some(doc) => doc,
        // The containerd store names it by manifest digest: find it by our unique tag.
        None => engine.inspect_image(&image.tag).await?.ok_or_else(|| {
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

/// The workspace-relative default matrix, for messages.
pub fn default_matrix(root: &Path) -> PathBuf {
    root.join(DEFAULT_MATRIX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fake::Fake;
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
