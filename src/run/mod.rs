//! One evidence run, end to end, over every platform asked for: vet the candidates (first,
//! before anything else), check the matrix and the bundle directory, reach the engine and ask
//! its architecture, probe every platform it would have to emulate (before any image is made
//! or any case runs: a required platform it cannot run is refused, one of the default set is
//! recorded as not covered) while every platform's static binaries are built (one cargo
//! invocation, the one pack makes: pack = run; stopped when the run is refused), generate and
//! load each platform's image (verifying its ID), sweep stale leftovers, run the platforms'
//! container lifecycles concurrently (`lifecycle`,
//! which extracts each `/evidence` as soon as it is exported), judge every platform side by
//! side, and write the one receipt bundle. Ctrl-C is raced against every
//! step; a SIGKILL is answered by the run's reaper (`reaper`), started before the engine is
//! asked. It sequences; the steps themselves live in their own modules.

mod closing;
mod lifecycle;
mod reaper;

pub use lifecycle::{
    describe, lifecycle, owner_is_live, run_label, sweep_stale, CtrlC, Plan, Record, SweepReport,
    DEFAULT_DEADLINE_SECS, STEP_TIMEOUT,
};
pub use reaper::{reap_command, ReapArgs, Reaper, REAP_COMMAND};

use lifecycle::bounded;

use crate::boundary::{self, Names};
use crate::cli::RunArgs;
use crate::engine::docker::DockerEngine;
use crate::engine::{Engine, EngineErrorKind};
use crate::exit::{CommandError, Outcome};
use crate::image::{self, IdMatch};
use crate::pack::Candidate;
use crate::progress::Progress;
use crate::receipt::{self, Conclusion, Times};
use crate::toolchain;
use futures_util::StreamExt;
use scopebox_receipts::image::Recipe;
use scopebox_schema::evidence::{Shard, MAX_SHARDS, SHARD_ENV};
use scopebox_schema::matrix::Matrix;
use scopebox_schema::platform::Platform;
use scopebox_schema::policy::BoundaryPolicy;
use scopebox_schema::receipt::{Execution, NotCovered, EVIDENCE_DIR};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Where bundles go when `--out` is not given, relative to the current directory.
pub const DEFAULT_RUNS_DIR: &str = "out/runs";

/// Read the matrix files and validate the matrix they make together; returns it with the exact
/// bytes that are run (and carried in the bundle). One file runs byte for byte as written;
/// several are joined into one matrix: cases in order, canaries deduplicated in order.
pub fn load_matrices(paths: &[PathBuf]) -> Result<(Matrix, Vec<u8>), CommandError> {
    let mut parts = Vec::new();
    for path in paths {
        let bytes = std::fs::read(path).map_err(|source| CommandError::MatrixRead {
            path: path.to_path_buf(),
            source,
        })?;
        parts.push((path.clone(), bytes));
    }
    join_matrices(parts)
}

/// The shipped matrix, built into the binary (`crate::shipped`), joined as `shipped`.
pub fn load_shipped_matrix() -> Result<(Matrix, Vec<u8>), CommandError> {
    join_matrices(crate::shipped::matrices())
}

/// Parse and validate matrix files given as (label, bytes) and join them (see
/// [`load_matrices`]).
pub fn join_matrices(parts: Vec<(PathBuf, Vec<u8>)>) -> Result<(Matrix, Vec<u8>), CommandError> {
    if let [(label, bytes)] = parts.as_slice() {
        let matrix = parse_matrix(label, bytes)?;
        validate(&matrix, label)?;
        return Ok((matrix, bytes.clone()));
    }
    let mut joined: Option<Matrix> = None;
    for (label, bytes) in &parts {
        let part = parse_matrix(label, bytes)?;
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
    let bytes = matrix.to_pretty_json();
    let label = parts
        .iter()
        .map(|(p, _)| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ");
    validate(&matrix, Path::new(&label))?;
    Ok((matrix, bytes))
}

fn parse_matrix(label: &Path, bytes: &[u8]) -> Result<Matrix, CommandError> {
    Matrix::from_json(bytes).map_err(|source| CommandError::MatrixParse {
        path: label.to_path_buf(),
        source,
    })
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
    load_matrices(std::slice::from_ref(&path.to_path_buf()))
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

/// Environment variable for tests only: a comma-separated list of platforms whose probe uses an
/// ELF no kernel or emulator knows, so the engine answers exactly as it does for a platform it
/// has no binfmt handler for (exec format error). It never changes what a run records.
pub const UNRUNNABLE_FOR_TESTS_ENV: &str = "SCOPEBOX_TEST_UNRUNNABLE_PLATFORMS";

/// The platforms of a run: which, and whether they were asked for by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub platforms: Vec<Platform>,
    /// Named with `--platform` (or implied by `--candidate`): each must run, or the run is
    /// refused. Otherwise they are the default set, run where the engine can.
    pub required: bool,
}

/// Which platforms to run: `--platform` if given, else the given candidates' platforms, else
/// every platform. Candidates and `--platform` must agree: one candidate per platform named.
pub fn select_platforms(
    requested: &[Platform],
    given: &[Candidate],
) -> Result<Selection, CommandError> {
    let mut from_candidates: Vec<Platform> = given.iter().map(|c| c.platform).collect();
    from_candidates.sort();
    if from_candidates.windows(2).any(|w| w[0] == w[1]) {
        return Err(CommandError::Usage(
            "two --candidate archives are for the same platform; give one per platform".into(),
        ));
    }
    let mut named: Vec<Platform> = requested.to_vec();
    named.sort();
    named.dedup();
    if !given.is_empty() {
        if !named.is_empty() && named != from_candidates {
            return Err(CommandError::Usage(format!(
                "--platform names {} but the --candidate archives are for {}; give one candidate per platform named",
                list(&named),
                list(&from_candidates)
            )));
        }
        return Ok(Selection {
            platforms: from_candidates,
            required: true,
        });
    }
    if named.is_empty() {
        Ok(Selection {
            platforms: Platform::ALL.to_vec(),
            required: false,
        })
    } else {
        Ok(Selection {
            platforms: named,
            required: true,
        })
    }
}

fn list(platforms: &[Platform]) -> String {
    platforms
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the probe found out about one platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    Runs,
    /// The engine cannot run it; the reason, one line.
    Cannot(String),
}

/// Whether the engine can run `platform`: its probe image (a static ELF that exits 0) is loaded
/// and run once in a labelled container, which is removed on every path; a probe image that
/// cannot run is removed too. Exec format error (no binfmt handler), a failed start or any exit
/// but 0 means it cannot.
pub async fn probe<E: Engine>(
    engine: &E,
    platform: Platform,
    run_id: &str,
    unrunnable: bool,
) -> Result<Probe, CommandError> {
    let image = image::probe_image(platform, unrunnable);
    ensure_image(engine, &image).await?;
    let mut labels = boundary::platform_labels(run_id, platform, false);
    labels.insert(
        crate::engine::LANE_LABEL.to_string(),
        format!("{}-probe", boundary::lane(run_id, platform)),
    );
    let name = format!("scopebox-{run_id}-{}-probe", platform.oci_architecture());
    let sandbox = boundary::probe_sandbox(&image.id, platform, &labels);
    let created = bounded(
        format!("create probe container {name}"),
        engine.create_container(&name, &sandbox),
    )
    .await;
    let outcome = match created {
        Err(e) => Probe::Cannot(describe(&e)),
        Ok(id) => {
            let outcome = match bounded(
                format!("start probe container {name}"),
                engine.start_container(&id),
            )
            .await
            {
                Err(e) => Probe::Cannot(describe(&e)),
                Ok(()) => match bounded(
                    format!("wait for probe container {name}"),
                    engine.wait_container(&id),
                )
                .await
                {
                    Ok(code) if code == i64::from(crate::image::PROBE_EXIT_CODE) => Probe::Runs,
                    // The engine reports an exec format error on the container's own output
                    // (runc's "exec /probe: exec format error"), with exit code 1. Any other
                    // code, 0 included, means the probe's own exit never came back.
                    Ok(code) => {
                        let said = probe_output(engine, &id).await;
                        Probe::Cannot(if said.is_empty() {
                            format!("its probe exited {code}")
                        } else {
                            format!("its probe exited {code}: {said}")
                        })
                    }
                    Err(e) => Probe::Cannot(describe(&e)),
                },
            };
            let _ = bounded(
                format!("remove probe container {name}"),
                engine.remove_container(&id),
            )
            .await;
            outcome
        }
    };
    // Whatever a dropped request left behind under this probe's label.
    let label = format!(
        "{}={}-probe",
        crate::engine::LANE_LABEL,
        boundary::lane(run_id, platform)
    );
    if let Ok(found) = bounded(format!("list {label}"), engine.list(&label)).await {
        for o in found {
            let _ = bounded(
                format!("remove probe container {}", o.id),
                engine.remove_container(&o.id),
            )
            .await;
        }
    }
    if outcome != Probe::Runs {
        let _ = bounded(
            format!("remove probe image {}", image.tag),
            engine.remove_image(&image.id),
        )
        .await;
    }
    Ok(outcome)
}

/// A build started before the engine was asked: finished while it was, or still running (to
/// be awaited where a Ctrl-C can be caught).
enum Building<F: std::future::Future> {
    Done(F::Output),
    Running(std::pin::Pin<Box<F>>),
}

impl<F: std::future::Future> Building<F> {
    /// Its output if it is already there (one poll, no wait), or itself, still running.
    fn try_finish(self) -> Result<F::Output, Self> {
        use futures_util::FutureExt;
        match self {
            Building::Done(output) => Ok(output),
            Building::Running(mut build) => {
                (&mut build).now_or_never().ok_or(Building::Running(build))
            }
        }
    }

    async fn finish(self) -> F::Output {
        match self {
            Building::Done(output) => output,
            Building::Running(build) => build.await,
        }
    }
}

/// The first binary a run used that is no longer what the build left on disk (`linux/arm64
/// scopebox-runner`), if any: the candidate (when packed from the workspace), runner, sentinel
/// and every machine's witness. One that cannot be read counts as changed.
fn rebuilt_since(root: &Path, built: &[Built]) -> Option<String> {
    let differs = |platform: Platform, name: &str, used: &[u8]| {
        toolchain::read_bin(root, platform, name).map_or(true, |now| now != used)
    };
    let mut used: Vec<(Platform, &str, &[u8])> = Vec::new();
    for b in built {
        used.push((b.platform, toolchain::RUNNER_BIN, &b.runner));
        used.push((b.platform, toolchain::SENTINEL_BIN, &b.sentinel));
        if b.candidate_from_source {
            let candidate = b
                .candidate
                .files
                .iter()
                .find(|f| f.path == scopebox_receipts::archive::ARCHIVE_BIN);
            used.push((
                b.platform,
                toolchain::CANDIDATE_PACKAGE,
                candidate.map_or(&[][..], |f| &f.bytes),
            ));
        }
    }
    // Every platform's image carries the same witnesses: they are compared once.
    if let (Some(witness), Some(first)) = (toolchain::WITNESS_BIN, built.first()) {
        for (machine, bytes) in &first.witnesses {
            match Platform::from_machine(machine) {
                Some(p) => used.push((p, witness, bytes)),
                None => return Some(format!("the witness of {machine}")),
            }
        }
    }
    used.into_iter()
        .find(|(platform, name, bytes)| differs(*platform, name, bytes))
        .map(|(platform, name, _)| format!("{platform} {name}"))
}

/// Removes what a discarded attempt wrote into the bundle directory (empty or missing when the
/// run began: everything in it is the attempt's), and the directory itself if the run made it.
fn discard_bundle(out: &Path, was_there: bool) {
    if !was_there {
        let _ = std::fs::remove_dir_all(out);
        return;
    }
    for entry in std::fs::read_dir(out).into_iter().flatten().flatten() {
        let path = entry.path();
        let _ = match entry.file_type() {
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
    }
}

/// Runs `engine` and `build` together until `engine` answers, `engine`'s error first: when it
/// fails, `build` is dropped at once (whatever it was doing); a failed `build` is returned (by
/// `Building::finish`) only after `engine` succeeded. A build still running is handed back.
async fn engine_first<A, F>(
    engine: impl std::future::Future<Output = Result<A, CommandError>>,
    build: F,
) -> Result<(A, Building<F>), CommandError>
where
    F: std::future::Future,
{
    let mut engine = std::pin::pin!(engine);
    let mut build = Box::pin(build);
    let first = tokio::select! {
        answered = &mut engine => Ok(answered),
        done = &mut build => Err(done),
    };
    match first {
        Ok(answered) => Ok((answered?, Building::Running(build))),
        Err(done) => Ok((engine.await?, Building::Done(done))),
    }
}

/// The first line the probe container printed (at most 512 bytes, 5 s in all), for the reason.
/// An engine may answer `wait` before the container's output reaches its log (Podman's conmon
/// under load): an empty log is read again, a few times, before it is taken as silence.
async fn probe_output<E: Engine>(engine: &E, id: &str) -> String {
    const ATTEMPTS: u32 = 5;
    let give_up = Instant::now() + Duration::from_secs(5);
    let mut out = Vec::new();
    let mut said = String::new();
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let mut logs = engine.logs(id);
        let read = async {
            while let Some(Ok(chunk)) = logs.next().await {
                out.extend_from_slice(&chunk);
                if out.len() > 512 {
                    break;
                }
            }
        };
        let left = give_up.saturating_duration_since(Instant::now());
        let _ = tokio::time::timeout(left, read).await;
        drop(logs);
        said = first_line(&out);
        if !said.is_empty() || Instant::now() >= give_up {
            break;
        }
        out.clear();
    }
    said
}

/// The first non-blank line of at most 512 bytes of output, without control characters.
fn first_line(out: &[u8]) -> String {
    let text = String::from_utf8_lossy(&out[..out.len().min(512)]).into_owned();
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .trim()
        .to_string()
}

/// The line a person reads about a platform the engine cannot run.
pub fn cannot_run_reason(platform: Platform, engine_arch: &str, detail: &str) -> String {
    // Go's runtimes say "exec format error", C ones (crun) strerror's "Exec format error".
    let detail = if detail.to_ascii_lowercase().contains("exec format error") {
        "exec format error: no binfmt_misc handler for it".to_string()
    } else {
        detail.to_string()
    };
    format!(
        "the engine ({engine_arch}) cannot run {platform} images ({detail}); install qemu-user-static and register {} with binfmt_misc's F flag (.ci/setup-emulation does both)",
        platform.machine()
    )
}

/// Everything one platform runs: its candidate, harness, witnesses and image.
struct Built {
    platform: Platform,
    candidate: Candidate,
    /// Packed from the workspace's build (not given with `--candidate`).
    candidate_from_source: bool,
    runner: Vec<u8>,
    sentinel: Vec<u8>,
    witnesses: Witnesses,
    image: image::Image,
}

/// `scopebox run`. A warm run goes ahead on the binaries already built while cargo checks
/// them (`toolchain::looks_built`), and is kept only if cargo left every binary it used as it
/// was; otherwise its bundle is discarded and the run starts again on what cargo built.
pub async fn evidence_run(args: RunArgs) -> Result<Outcome, CommandError> {
    let mut ahead = GoAhead::WhenLooksBuilt;
    loop {
        match evidence_attempt(&args, ahead).await? {
            Attempt::Finished(outcome) => return Ok(outcome),
            Attempt::Rebuilt(changed) => {
                say!(
                    "scopebox: cargo rebuilt {changed} while the run went ahead on the earlier binaries: that run is discarded; running again"
                );
                ahead = GoAhead::Never;
            }
        }
    }
}

/// Whether a run may start its containers before cargo's check of the binaries finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GoAhead {
    WhenLooksBuilt,
    Never,
}

/// How one attempt at a run ended.
enum Attempt {
    Finished(Outcome),
    /// It went ahead and cargo then changed this binary: nothing of it was kept.
    Rebuilt(String),
}

async fn evidence_attempt(args: &RunArgs, ahead: GoAhead) -> Result<Attempt, CommandError> {
    let started_at = SystemTime::now();
    let clock = Instant::now();
    let mut phases = Phases::new(clock);
    // The candidates' identities are checked before anything else happens.
    let given = args.candidate.load()?;
    let selection = select_platforms(&args.platform, &given)?;
    let (matrix, matrix_bytes) = if args.matrix.is_empty() {
        load_shipped_matrix()?
    } else {
        load_matrices(&args.matrix)?
    };
    let run_id = boundary::new_run_id();
    // Relative to the current directory, like every other default path.
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new(DEFAULT_RUNS_DIR).join(&run_id));
    receipt::check_dir(&out)?;
    args.copies.check()?;
    let (policy, policy_bytes) = crate::shipped::policy()?;
    let (recipe, recipe_bytes) = crate::shipped::recipe()?;
    let root = crate::shipped::source_root()?;
    // The checkout's and the toolchain's part of the provenance, read beside everything else.
    // A platform's candidate is built from the checkout unless one was given for it.
    let wants_source = selection.platforms.iter().any(|&p| built_here(&given, p));
    let checkout = {
        let root = root.clone();
        tokio::task::spawn_blocking(move || crate::provenance::Checkout::read(&root, wants_source))
    };

    // The static build (a freshness check when warm, 0.15–0.3 s of cargo) runs while the engine
    // is asked and every emulated platform probed: nothing waits on it until the images are
    // made — or, when the binaries there look built, until the containers are done (the run
    // goes ahead on them, and cargo runs at the lowest priority beside the containers).
    // The engine's answer comes first: a run the engine refuses (unreachable, a required
    // platform it cannot run) is refused for that reason, and the build is dropped, which
    // kills cargo (`kill_on_drop`); a failed build is reported only once the engine agreed.
    let going_ahead = ahead == GoAhead::WhenLooksBuilt && toolchain::looks_built(&root);
    let build = async {
        let clock = Instant::now();
        say!("scopebox: {}", toolchain::building());
        let priority = if going_ahead {
            toolchain::Priority::Background
        } else {
            toolchain::Priority::Normal
        };
        toolchain::build_shipped(&root, priority).await?;
        Ok::<_, CommandError>(clock.elapsed())
    };
    // Started before the engine is asked (its probes are the run's first objects): if scopebox
    // is killed too hard to clean up (SIGKILL), the reaper removes what the run made. Dropped on
    // every return from here, each one after the run's own cleanup, which tells it so.
    let _reaper = Reaper::start(&run_id);
    let ask_engine = ask_engine(&selection, &run_id, &given, checkout);
    let (
        EngineAnswer {
            engine,
            info,
            covered,
            not_covered,
            provenance,
        },
        building,
    ) = engine_first(ask_engine, build).await?;
    let engine_platform = Platform::from_machine(&info.architecture);
    phases.lap("engine");

    // One listener for the whole run, from here on, shared by every platform: a Ctrl-C that
    // lands between two steps is kept instead of being lost to a listener that did not exist
    // yet. If it cannot be installed, only the deadline can end the run.
    let ctrl_c = crate::run::CtrlC::listen();
    let interrupted = || ctrl_c.hit();
    // Ahead of cargo's check when it would likely find nothing to do (the binaries there are
    // newer than every input): its answer is awaited once the containers are done (or taken at
    // once, below, if it already came). Said before the engine's line, so that whoever reads
    // that line knows which way the run went.
    if going_ahead {
        say!("scopebox: going ahead on the binaries built earlier while cargo checks them");
    }
    // Said once the listener is in place: from this line on, Ctrl-C is answered with exit 130
    // (before it, during the engine's first answers, it ends the process as any Ctrl-C does).
    say!(
        "scopebox: engine {} {} ({}) answered",
        info.name.as_str(),
        scopebox_terminal::escape(&info.server_version),
        scopebox_terminal::escape(&info.architecture)
    );

    let (check_now, check_later) = if going_ahead {
        (None, Some(building))
    } else {
        (Some(building), None)
    };
    let prepare = async {
        let build_time = match check_now {
            Some(check) => check.finish().await?,
            None => Duration::ZERO,
        };
        let pack_clock = Instant::now();
        let (packed, witnesses) = pack_platforms(&root, &covered, given)?;
        let pack_ms = (build_time + pack_clock.elapsed()).as_millis() as u64;
        let image_clock = Instant::now();
        let images = load_images(
            &engine,
            &recipe,
            &recipe_bytes,
            &matrix_bytes,
            packed,
            &witnesses,
        )
        .await?;
        let image_ms = image_clock.elapsed().as_millis() as u64;
        let sweep_clock = Instant::now();
        let swept = sweep_stale(&engine, false, owner_is_live).await?;
        let sweep_ms = sweep_clock.elapsed().as_millis() as u64;
        if !swept.removed.is_empty() {
            say!(
                "scopebox: removed {} leftover object(s) of earlier runs",
                swept.removed.len()
            );
        }
        Ok::<_, CommandError>((images, pack_ms, image_ms, sweep_ms))
    };
    let (built, pack_ms, image_ms, sweep_ms) = tokio::select! {
        done = prepare => done?,
        () = interrupted() => {
            say!("scopebox: interrupted before any container was created: evidence not exported, no bundle written");
            return Ok(Attempt::Finished(Outcome::Interrupted));
        }
    };
    phases.add("build", pack_ms);
    phases.add("image", image_ms);
    phases.add("sweep", sweep_ms);
    phases.lap("prepare");
    // A check that already answered is taken now, before anything is written.
    let mut check_later = check_later;
    if let Some(check) = check_later.take() {
        match check.try_finish() {
            Ok(Err(e)) => return Err(e),
            Ok(Ok(_)) => {
                if let Some(changed) = rebuilt_since(&root, &built) {
                    return Ok(Attempt::Rebuilt(changed));
                }
            }
            Err(running) => check_later = Some(running),
        }
    }
    // The bundle directory exists from the moment it has something to hold.
    let out_was_there = out.symlink_metadata().is_ok();
    receipt::prepare_dir(&out)?;

    let shared = receipt::SharedInputs {
        matrix: &matrix,
        matrix_bytes: &matrix_bytes,
        policy: &policy,
        policy_bytes: &policy_bytes,
        recipe_bytes: &recipe_bytes,
    };
    let inputs: Vec<receipt::PlatformInputsOf> = built
        .iter()
        .map(|b| receipt::PlatformInputsOf {
            platform: b.platform,
            candidate: &b.candidate,
            runner: &b.runner,
            sentinel: &b.sentinel,
            witnesses: &b.witnesses,
            image: &b.image,
        })
        .collect();
    let blobs = receipt::write_inputs(&out, &shared, &inputs)?;
    phases.lap("inputs");

    let engine_machine = engine_platform
        .map(|p| p.machine())
        .unwrap_or(&info.architecture);
    // Each platform's matrix split across containers of its image (cases by position modulo
    // their count), all of them run concurrently.
    let any_emulated = built.iter().any(|b| engine_platform != Some(b.platform));
    let shards_per_platform: Vec<usize> = built
        .iter()
        .map(|b| {
            shard_count(
                args.shards.map(|n| n as usize),
                &policy,
                matrix.cases.len(),
                any_emulated && engine_platform == Some(b.platform),
            )
        })
        .collect();
    let (plans, plan_shards) = plan_containers(
        args,
        &policy,
        &run_id,
        &out,
        &built,
        &shards_per_platform,
        engine_machine,
        clock,
    );
    for (plan, shard) in plans.iter().zip(&plan_shards) {
        say!(
            "scopebox: running {} case(s) of {} on {} in container {} (deadline {} s)",
            shard_cases(matrix.cases.len(), *shard),
            matrix.name,
            plan.platform,
            plan.names.container,
            args.deadline
        );
    }
    let several = plans.len() > 1;
    let (display, colour) = crate::progress::for_stderr(args.quiet);
    let bars = indicatif::MultiProgress::new();
    let runs = plans.iter().zip(&plan_shards).map(|(plan, shard)| {
        let engine = &engine;
        let interrupt = interrupted();
        let cases = shard_cases(matrix.cases.len(), *shard);
        let label = if shard.is_whole() {
            plan.platform.clone()
        } else {
            format!("{} {}/{}", plan.platform, shard.index + 1, shard.of)
        };
        let bar = (display == crate::progress::Display::Bars)
            .then(|| crate::progress::bar(&bars, &label, cases));
        async move {
            let prefix = if several {
                format!("[{label}] ")
            } else {
                String::new()
            };
            let mut progress = Progress::shown(
                cases,
                Prefixed::new(prefix, std::io::stderr()),
                display,
                bar,
                colour,
            );
            lifecycle(engine, plan, interrupt, &mut progress).await
        }
    });
    // The canary search every platform's judging and the verification use, compiled while the
    // containers run (at the lowest priority: they come first) instead of after them, when
    // everything waits for it. The judging takes it from the process's cache, or waits there
    // for this compile to finish: it is never compiled twice.
    let canaries = matrix.canaries.clone();
    std::thread::spawn(move || {
        // On Linux a niceness set this way is the calling thread's alone.
        let _ = rustix::process::setpriority_process(None, 19);
        scopebox_schema::canary::search_for(&canaries);
    });
    let records: Vec<Record> = futures_util::future::join_all(runs).await;
    phases.lap("containers");
    if display == crate::progress::Display::Bars {
        // The finished bars stay; what follows starts on a line of its own.
        say!();
    }
    // A run that went ahead is kept only if cargo's check left every binary it used as it was.
    // An interrupted run (which never passes) is not checked: the check is dropped, and cargo
    // with it.
    if let Some(check) = check_later.filter(|_| !records.iter().any(|r| r.interrupted)) {
        // (Its own duration is not a phase: it ran beside the containers; the wait is.)
        let checked = match check.try_finish() {
            Ok(answer) => answer,
            Err(check) => {
                say!("scopebox: waiting for cargo's check of the binaries this run used");
                tokio::select! {
                    answer = check.finish() => answer,
                    () = interrupted() => {
                        discard_bundle(&out, out_was_there);
                        say!("scopebox: interrupted while cargo checked the binaries this run used: no bundle written");
                        return Ok(Attempt::Finished(Outcome::Interrupted));
                    }
                }
            }
        };
        let rebuilt = match checked {
            Ok(_) => rebuilt_since(&root, &built),
            Err(e) => {
                discard_bundle(&out, out_was_there);
                return Err(e);
            }
        };
        if let Some(changed) = rebuilt {
            discard_bundle(&out, out_was_there);
            return Ok(Attempt::Rebuilt(changed));
        }
        phases.lap("build-check");
    }

    // Each platform's containers: evidence extracted, outer records written, judged — every
    // platform at once, one thread each (the work is the same size per platform).
    let engine_facts = receipt::EngineFacts {
        name: info.name,
        version: &info.server_version,
        architecture: &info.architecture,
    };
    let mut records = records.into_iter();
    let per_platform: Vec<Vec<Record>> = shards_per_platform
        .iter()
        .map(|&shards| records.by_ref().take(shards).collect())
        .collect();
    let finished: Vec<Result<Finished, receipt::ReceiptError>> = std::thread::scope(|scope| {
        let workers: Vec<_> = inputs
            .iter()
            .zip(per_platform)
            .map(|(inputs, recs)| {
                let (out, shared, engine_facts) = (&out, &shared, &engine_facts);
                let timing = (args.deadline, pack_ms, image_ms);
                scope
                    .spawn(move || finish_platform(out, shared, inputs, engine_facts, recs, timing))
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("judging a platform never panics"))
            .collect()
    });
    let mut platform_runs = Vec::new();
    let mut conclusions = Vec::new();
    let mut any_interrupted = false;
    let mut any_timed_out = false;
    let mut any_errors = false;
    let mut plans_in_order = plans.iter();
    for done in finished {
        let done = done?;
        for rec in &done.records {
            let plan = plans_in_order.next().expect("one plan per record");
            if rec.kept {
                say!(
                    "scopebox: kept container {} and volume {}; remove them with: scopebox sweep",
                    plan.names.container,
                    plan.names.volume
                );
            } else if let Some(left) = left_behind(rec, &plan.names) {
                say!("{left}");
            }
            any_interrupted |= rec.interrupted;
            any_timed_out |= rec.timed_out;
            any_errors |= !rec.errors.is_empty();
        }
        platform_runs.push(done.run);
        conclusions.push(done.conclusion);
    }
    phases.lap("evidence");
    let junit = crate::junit::report(&run_id, &platform_runs, &conclusions, &not_covered);
    receipt::write_file(&out, crate::junit::JUNIT_FILE, &junit)?;
    let times = Times {
        started: started_at,
        finished: SystemTime::now(),
    };
    let receipt = receipt::write_receipt(
        &out,
        &run_id,
        &shared,
        blobs,
        platform_runs,
        not_covered,
        &conclusions,
        &times,
        provenance,
    )?;

    args.copies.write_junit(&junit)?;
    phases.lap("write");
    args.copies.write_archive(&out)?;
    phases.lap("archive");

    // The run ends the way an auditor would start: replaying the bundle from its bytes alone.
    let verification = args.copies.verify(&out);
    let verified = matches!(&verification, Ok(report) if report.verified);
    phases.lap("verify");
    let all_pass = conclusions.iter().all(Conclusion::pass);
    let outcome = if any_interrupted {
        Outcome::Interrupted
    } else if any_timed_out {
        Outcome::TimedOut
    } else if all_pass && verified && !any_errors {
        Outcome::Passed
    } else {
        Outcome::Failed
    };
    let late_ctrl_c = ctrl_c.was_hit() && !any_interrupted;
    let closing = closing::Closing {
        late_ctrl_c,
        ..closing::Closing::of_receipt(
            outcome,
            any_interrupted,
            &receipt,
            &conclusions,
            &out,
            clock.elapsed().as_secs_f64(),
            &verification,
        )
    };
    for line in closing.lines() {
        say!("{line}");
    }
    if args.json {
        let summary = json_summary(JsonSummary {
            outcome,
            receipt: &receipt,
            conclusions: &conclusions,
            out: &out,
            archive: args.copies.archive.as_deref(),
            verified,
            engine_architecture: &info.architecture,
            seconds: clock.elapsed().as_secs_f64(),
            phases: phases.to_json(),
            interrupted: any_interrupted,
            late_ctrl_c,
        });
        crate::exit::print_summary(&summary);
    }
    Ok(Attempt::Finished(outcome))
}

/// What a container's lifecycle made and could not remove (the engine failed or went away
/// meanwhile; the receipt's cleanup says the same), and how to remove it: the next run sweeps
/// the leftovers of runs that are over, and so does `scopebox sweep`.
fn left_behind(rec: &Record, names: &Names) -> Option<String> {
    let (container, volume) = rec.not_seen_removed();
    let mut left = Vec::new();
    if container && !rec.cleanup.container_removed {
        left.push(format!("container {}", names.container));
    }
    if volume && !rec.cleanup.volume_removed {
        left.push(format!("volume {}", names.volume));
    }
    let them = if left.len() == 1 { "it" } else { "them" };
    (!left.is_empty()).then(|| {
        format!(
            "scopebox: could not remove {}; the next run removes {them}, or now: scopebox sweep (once the engine answers)",
            left.join(" and ")
        )
    })
}

/// Whether `platform`'s candidate is built from the checkout: none was given for it.
fn built_here(given: &[Candidate], platform: Platform) -> bool {
    !given.iter().any(|c| c.platform == platform)
}

/// What the engine answered before anything was made for a run.
struct EngineAnswer {
    engine: DockerEngine,
    info: crate::engine::EngineInfo,
    /// The selected platforms it can run, in order.
    covered: Vec<Platform>,
    /// The selected platforms it cannot run, each with why (only when none was required).
    not_covered: Vec<NotCovered>,
    provenance: scopebox_schema::receipt::Provenance,
}

/// Reaches the engine, asks it about itself and probes every selected platform it would have
/// to emulate, before any image is made: a required platform it cannot run refuses the run, as
/// does a selection of which it can run none. Then the provenance, from the checkout (read
/// meanwhile) and which covered platforms' candidates are built here (none was `given`).
async fn ask_engine(
    selection: &Selection,
    run_id: &str,
    given: &[Candidate],
    checkout: tokio::task::JoinHandle<crate::provenance::Checkout>,
) -> Result<EngineAnswer, CommandError> {
    let engine = reach_engine().await?;
    let info = bounded("ask the Docker engine about itself", engine.info()).await?;
    let engine_platform = Platform::from_machine(&info.architecture);

    // Probe every platform the engine would have to emulate, before any image is made.
    let unrunnable: Vec<Platform> = std::env::var(UNRUNNABLE_FOR_TESTS_ENV)
        .unwrap_or_default()
        .split(',')
        .filter_map(Platform::parse)
        .collect();
    let mut covered = Vec::new();
    let mut not_covered = Vec::new();
    for &platform in &selection.platforms {
        let forced = unrunnable.contains(&platform);
        if engine_platform == Some(platform) && !forced {
            covered.push(platform);
            continue;
        }
        match probe(&engine, platform, run_id, forced).await? {
            Probe::Runs => covered.push(platform),
            Probe::Cannot(detail) => {
                let reason = cannot_run_reason(platform, &info.architecture, &detail);
                if selection.required {
                    return Err(CommandError::PlatformUnavailable { platform, reason });
                }
                say!("scopebox: NOT COVERED {platform}: {reason}");
                not_covered.push(NotCovered { platform, reason });
            }
        }
    }
    if covered.is_empty() {
        let n = not_covered.remove(0);
        return Err(CommandError::PlatformUnavailable {
            platform: n.platform,
            reason: n.reason,
        });
    }
    // What the candidates are built from: the source revision, read while cargo checks or
    // builds it (cargo writes only under target/, which the revision's status ignores).
    let origins: Vec<(Platform, bool)> =
        covered.iter().map(|&p| (p, built_here(given, p))).collect();
    let checkout = checkout.await.expect("reading the checkout never panics");
    let provenance = crate::provenance::gather(checkout, &info, &origins);
    Ok(EngineAnswer {
        engine,
        info,
        covered,
        not_covered,
        provenance,
    })
}

/// The witness binary of every machine, by machine name (`x86_64`, `aarch64`).
type Witnesses = Vec<(String, Vec<u8>)>;

/// One platform's candidate and harness binaries, read (and the candidate packed) from the
/// workspace's build unless the candidate was given.
struct Packed {
    platform: Platform,
    candidate: Candidate,
    candidate_from_source: bool,
    runner: Vec<u8>,
    sentinel: Vec<u8>,
}

/// Every covered platform's `Packed`, each packed (compressed) on a thread of its own, in the
/// order of `covered`; and the witness of every machine (by machine name), which every image
/// carries.
fn pack_platforms(
    root: &Path,
    covered: &[Platform],
    mut given: Vec<Candidate>,
) -> Result<(Vec<Packed>, Witnesses), CommandError> {
    let given_per_platform: Vec<Option<Candidate>> = covered
        .iter()
        .map(|&p| {
            given
                .iter()
                .position(|c| c.platform == p)
                .map(|i| given.swap_remove(i))
        })
        .collect();
    let packed = std::thread::scope(|scope| {
        let workers: Vec<_> = covered
            .iter()
            .zip(given_per_platform)
            .map(|(&platform, candidate)| {
                scope.spawn(move || {
                    let candidate_from_source = candidate.is_none();
                    let candidate = match candidate {
                        Some(c) => c,
                        None => crate::pack::built_candidate(root, platform)?,
                    };
                    Ok::<_, CommandError>(Packed {
                        platform,
                        candidate,
                        candidate_from_source,
                        runner: toolchain::read_bin(root, platform, toolchain::RUNNER_BIN)?,
                        sentinel: toolchain::read_bin(root, platform, toolchain::SENTINEL_BIN)?,
                    })
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("packing never panics"))
            .collect::<Result<Vec<_>, _>>()
    })?;
    let mut witnesses = Vec::new();
    if let Some(bin) = toolchain::WITNESS_BIN {
        for platform in Platform::ALL {
            witnesses.push((
                platform.machine().to_string(),
                toolchain::read_bin(root, platform, bin)?,
            ));
        }
    }
    Ok((packed, witnesses))
}

/// Each platform's image built from its `Packed` binaries, the matrix and the witnesses, and
/// loaded into the engine unless it is there already (said on stderr, one line each).
async fn load_images<E: Engine>(
    engine: &E,
    recipe: &Recipe,
    recipe_bytes: &[u8],
    matrix_bytes: &[u8],
    packed: Vec<Packed>,
    witnesses: &[(String, Vec<u8>)],
) -> Result<Vec<Built>, CommandError> {
    let witness_refs: Vec<image::WitnessBinary> = witnesses
        .iter()
        .map(|(machine, bytes)| image::WitnessBinary { machine, bytes })
        .collect();
    let mut images = Vec::new();
    for p in packed {
        let platform = p.platform;
        let image = image::build(
            recipe,
            recipe_bytes,
            &image::Contents {
                platform,
                candidate: &p.candidate.files,
                runner: &p.runner,
                sentinel: &p.sentinel,
                matrix: matrix_bytes,
                witnesses: &witness_refs,
            },
        )
        .map_err(image::ImageError::from)?;
        let loaded = ensure_image(engine, &image).await?;
        say!(
            "scopebox: image {} for {platform} ({}{})",
            image.id,
            image.tag,
            match loaded {
                Loaded::Reused => ", already loaded",
                Loaded::Now(IdMatch::ConfigDigest) => ", loaded",
                Loaded::Now(IdMatch::ManifestDigest) =>
                    ", loaded; the engine names it by manifest digest",
            }
        );
        images.push(Built {
            platform,
            candidate: p.candidate,
            candidate_from_source: p.candidate_from_source,
            runner: p.runner,
            sentinel: p.sentinel,
            witnesses: witnesses.to_vec(),
            image,
        });
    }
    Ok(images)
}

/// Every container of the run: each platform's matrix split across `shards_per_platform`
/// containers of its image (cases by position modulo their count), with its names, labels,
/// sandbox and where its evidence lands in the bundle `out`; and each one's shard.
#[allow(clippy::too_many_arguments)]
fn plan_containers(
    args: &RunArgs,
    policy: &BoundaryPolicy,
    run_id: &str,
    out: &Path,
    built: &[Built],
    shards_per_platform: &[usize],
    engine_machine: &str,
    clock: Instant,
) -> (Vec<Plan>, Vec<Shard>) {
    let mut plans: Vec<Plan> = Vec::new();
    let mut plan_shards: Vec<Shard> = Vec::new();
    for (b, &shards) in built.iter().zip(shards_per_platform) {
        for index in 0..shards {
            let shard = Shard { index, of: shards };
            let names = Names::for_shard(run_id, b.platform, index);
            let labels = boundary::shard_labels(run_id, b.platform, index, args.keep_on_failure);
            let mut sandbox = boundary::sandbox(
                policy,
                &b.image.id,
                b.platform,
                &names.volume,
                &labels,
                Some(engine_machine),
            );
            if !shard.is_whole() {
                sandbox.env.push((SHARD_ENV.to_string(), shard.text()));
            }
            plans.push(Plan {
                platform: b.platform.name().to_string(),
                sandbox,
                names,
                labels,
                image_id: b.image.id.clone(),
                deadline: Duration::from_secs(args.deadline),
                keep_on_failure: args.keep_on_failure,
                origin: tokio::time::Instant::from_std(clock),
                evidence_dest: Some(
                    receipt::container_dir(out, b.platform, index).join(EVIDENCE_DIR),
                ),
            });
            plan_shards.push(shard);
        }
    }
    (plans, plan_shards)
}

/// What the `--json` summary of a finished run is made from.
struct JsonSummary<'a> {
    outcome: Outcome,
    receipt: &'a scopebox_schema::receipt::Receipt,
    conclusions: &'a [Conclusion],
    out: &'a Path,
    archive: Option<&'a Path>,
    verified: bool,
    engine_architecture: &'a str,
    seconds: f64,
    phases: serde_json::Value,
    interrupted: bool,
    late_ctrl_c: bool,
}

/// The `--json` summary of a finished run: where its bundle, receipt, junit and archive are,
/// whether it verified, and per platform its image, candidate and cases.
fn json_summary(s: JsonSummary<'_>) -> serde_json::Value {
    let platforms: Vec<serde_json::Value> = s
        .receipt
        .platforms
        .iter()
        .zip(s.conclusions)
        .map(|(run, c)| {
            serde_json::json!({
                "platform": run.platform,
                "emulated": run.emulated,
                "imageId": run.inputs.image_id,
                "candidateSha256": run.inputs.candidate_archive.sha256,
                "candidateArchive": run.inputs.candidate_archive.name,
                "cases": {"total": c.total, "passed": c.passed},
                "problems": c.problems,
                "evidenceExported": closing::exported_containers(run) == run.shard_count(),
            })
        })
        .collect();
    let mut summary = serde_json::json!({
        "ok": s.outcome == Outcome::Passed,
        "exitCode": crate::exit::code(&Ok(s.outcome)),
        "outcome": crate::exit::outcome_name(s.outcome),
        "bundle": s.out,
        "receipt": s.out.join(scopebox_schema::receipt::RECEIPT_FILE),
        "junit": s.out.join(crate::junit::JUNIT_FILE),
        "archive": s.archive,
        "verified": s.verified,
        "runId": s.receipt.run_id,
        "engineArchitecture": s.engine_architecture,
        "platforms": platforms,
        "notCovered": s.receipt.not_covered,
        "cases": {"total": s.receipt.summary.cases, "passed": s.receipt.summary.cases_passed},
        "seconds": s.seconds,
        "phasesMs": s.phases,
    });
    if s.interrupted {
        summary["message"] =
            "interrupted: the evidence of the platforms still running was not exported".into();
    } else if s.late_ctrl_c {
        summary["message"] = closing::LATE_CTRL_C.trim_start_matches("scopebox: ").into();
    }
    summary
}

/// One platform's judged containers: their lifecycle records (with any extraction problem
/// added), the platform's receipt section and its conclusion.
struct Finished {
    records: Vec<Record>,
    run: scopebox_schema::receipt::PlatformRun,
    conclusion: Conclusion,
}

/// Extracts each of a platform's containers' evidence (the first container's into the platform
/// directory, shard `i`'s into `shards/<i>/`), writes its outer records, and judges the
/// platform. `timing` is the deadline (s) and the build and image times (ms).
fn finish_platform(
    out: &Path,
    shared: &receipt::SharedInputs,
    inputs: &receipt::PlatformInputsOf,
    engine: &receipt::EngineFacts,
    records: Vec<Record>,
    (deadline, pack_ms, image_ms): (u64, u64, u64),
) -> Result<Finished, receipt::ReceiptError> {
    let mut containers: Vec<(Record, Execution)> = Vec::new();
    for (index, rec) in records.into_iter().enumerate() {
        // The lifecycle extracted its /evidence into the bundle (`Plan::evidence_dest`).
        let dir = receipt::container_dir(out, inputs.platform, index);
        let execution = receipt::execution(&rec, deadline, pack_ms, image_ms);
        receipt::write_outer(&dir, &rec, &execution)?;
        containers.push((rec, execution));
    }
    let (run, conclusion) = receipt::judge_platform(
        out,
        shared,
        inputs,
        engine,
        containers
            .iter()
            .map(|(rec, execution)| receipt::ContainerRun {
                rec,
                execution: execution.clone(),
            })
            .collect(),
    )?;
    Ok(Finished {
        records: containers.into_iter().map(|(rec, _)| rec).collect(),
        run,
        conclusion,
    })
}

/// How many containers one platform's matrix is split across: `--shards`, else the
/// container's CPU limit (the policy's) capped by this host's parallelism — but one for a
/// native platform running `beside_emulation`: its cases take a fraction of the emulated
/// platform's time, the emulation keeps every core busy meanwhile, and a second container
/// would only add its fixed cost (create, start, boundary, controls, export) to those cores.
/// Never more than the cases or `MAX_SHARDS`, never fewer than one.
fn shard_count(
    asked: Option<usize>,
    policy: &scopebox_schema::policy::BoundaryPolicy,
    cases: usize,
    beside_emulation: bool,
) -> usize {
    let count = asked.unwrap_or_else(|| {
        if beside_emulation {
            return 1;
        }
        let cpus = usize::try_from(policy.nano_cpus / 1_000_000_000).unwrap_or(1);
        let host = std::thread::available_parallelism().map_or(1, |n| n.get());
        cpus.min(host)
    });
    count.min(cases).clamp(1, MAX_SHARDS)
}

/// How many of `cases` cases `shard` runs (positions ≡ index modulo the count).
fn shard_cases(cases: usize, shard: Shard) -> usize {
    (0..cases).filter(|&p| shard.runs(p)).count()
}

/// Where a run's wall time went, for `--json` (`phasesMs`) and `bench/platforms.sh`: each lap
/// is the time since the previous one; `add` records a part measured inside a lap (the
/// `prepare` lap holds `build`, `image` and `sweep`; `evidence` is every platform's extraction
/// and judging, run side by side). Figures, never evidence.
struct Phases {
    last: Instant,
    laps: Vec<(&'static str, u64)>,
}

impl Phases {
    fn new(start: Instant) -> Phases {
        Phases {
            last: start,
            laps: Vec::new(),
        }
    }

    fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        self.add(name, now.duration_since(self.last).as_millis() as u64);
        self.last = now;
    }

    /// Adds to `name`'s total (a phase may come once per platform).
    fn add(&mut self, name: &'static str, ms: u64) {
        match self.laps.iter_mut().find(|(n, _)| *n == name) {
            Some((_, total)) => *total += ms,
            None => self.laps.push((name, ms)),
        }
    }

    fn to_json(&self) -> serde_json::Value {
        self.laps
            .iter()
            .map(|(name, ms)| (name.to_string(), serde_json::Value::from(*ms)))
            .collect::<serde_json::Map<_, _>>()
            .into()
    }
}

/// A writer that starts every line with `prefix` (one platform's progress among several).
pub struct Prefixed<W: std::io::Write> {
    prefix: String,
    out: W,
    at_line_start: bool,
}

impl<W: std::io::Write> Prefixed<W> {
    pub fn new(prefix: String, out: W) -> Self {
        Prefixed {
            prefix,
            out,
            at_line_start: true,
        }
    }
}

impl<W: std::io::Write> std::io::Write for Prefixed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut text = Vec::with_capacity(buf.len() + self.prefix.len());
        for &b in buf {
            if self.at_line_start {
                text.extend_from_slice(self.prefix.as_bytes());
                self.at_line_start = false;
            }
            text.push(b);
            if b == b'\n' {
                self.at_line_start = true;
            }
        }
        self.out.write_all(&text)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
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

/// `ensure_image` for other commands (`scopebox native run`): true when it was loaded now.
pub(crate) async fn ensure_loaded<E: Engine>(
    engine: &E,
    image: &image::Image,
) -> Result<bool, CommandError> {
    Ok(matches!(ensure_image(engine, image).await?, Loaded::Now(_)))
}

/// The engine's facts, under `STEP_TIMEOUT`.
pub(crate) async fn engine_info<E: Engine>(
    engine: &E,
) -> Result<crate::engine::EngineInfo, CommandError> {
    Ok(bounded("ask the Docker engine about itself", engine.info()).await?)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fake::{Fake, Step, WaitBehaviour};
    use scopebox_receipts::archive::ArchiveFile;

    /// What an engine that went away mid-run left is named, with how to remove it; what was
    /// removed, or never made, is not.
    #[test]
    fn objects_the_engine_did_not_remove_are_named_with_the_way_to_remove_them() {
        let names = Names {
            run_id: "r".into(),
            container: "scopebox-r-amd64".into(),
            volume: "scopebox-r-amd64-evidence".into(),
            sweep_label: "scopebox.run=r".into(),
        };
        let mut rec = Record {
            volume_created: true,
            container_id: Some("c0ffee".into()),
            ..Record::default()
        };
        assert_eq!(
            left_behind(&rec, &names).as_deref(),
            Some("scopebox: could not remove container scopebox-r-amd64 and volume scopebox-r-amd64-evidence; the next run removes them, or now: scopebox sweep (once the engine answers)")
        );
        // The engine confirmed the container's removal, then went away before the final
        // listing (which alone sets the cleanup flags): only the volume is named.
        rec.events.push(scopebox_schema::receipt::LifecycleEvent {
            event: scopebox_schema::receipt::EventKind::ContainerRemoved,
            at_ms: 1,
        });
        assert!(left_behind(&rec, &names).unwrap().starts_with(
            "scopebox: could not remove volume scopebox-r-amd64-evidence; the next run removes it,"
        ));
        rec.cleanup.volume_removed = true;
        assert_eq!(left_behind(&rec, &names), None);
        // Nothing made, nothing left (the engine refused the volume).
        assert_eq!(left_behind(&Record::default(), &names), None);
    }

    #[test]
    fn a_native_platform_beside_an_emulated_one_runs_in_one_container_unless_told() {
        let (policy, _) = crate::shipped::policy().unwrap();
        let cpus = usize::try_from(policy.nano_cpus / 1_000_000_000).unwrap();
        let host = std::thread::available_parallelism().map_or(1, |n| n.get());
        let alone = cpus.min(host).clamp(1, MAX_SHARDS);
        assert_eq!(shard_count(None, &policy, 364, false), alone);
        assert_eq!(shard_count(None, &policy, 364, true), 1);
        // `--shards` is taken as asked, for every platform, and never exceeds the cases.
        assert_eq!(shard_count(Some(3), &policy, 364, true), 3);
        assert_eq!(shard_count(Some(3), &policy, 2, false), 2);
        assert_eq!(shard_count(None, &policy, 0, false), 1);
    }

    fn image() -> image::Image {
        let root = crate::toolchain::workspace_root();
        let (recipe, bytes) = image::load_recipe(&root).unwrap();
        let candidate = [ArchiveFile {
            path: "bin/mcpscope".into(),
            mode: 0o755,
            bytes: b"c".to_vec(),
        }];
        image::build(
            &recipe,
            &bytes,
            &image::Contents {
                platform: Platform::LinuxAmd64,
                candidate: &candidate,
                runner: b"r",
                sentinel: b"s",
                matrix: b"{}",
                witnesses: &[],
            },
        )
        .unwrap()
    }

    fn candidate(platform: Platform) -> Candidate {
        Candidate::from_binary(platform, image::probe_elf(platform, false))
    }

    /// A workspace root whose every shipped binary is its own name's bytes, and what a run
    /// packed from it used (amd64; the witnesses of both machines).
    fn built_from_disk() -> (tempfile::TempDir, Built) {
        let dir = tempfile::tempdir().unwrap();
        for (platform, name) in toolchain::shipped_bins() {
            let bin = toolchain::static_bin(dir.path(), platform, name);
            std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
            std::fs::write(&bin, format!("{platform} {name}")).unwrap();
        }
        let read = |p: Platform, name: &str| toolchain::read_bin(dir.path(), p, name).unwrap();
        let amd64 = Platform::LinuxAmd64;
        let witness = toolchain::WITNESS_BIN.unwrap();
        let built = Built {
            platform: amd64,
            candidate: Candidate::from_binary(amd64, read(amd64, toolchain::CANDIDATE_PACKAGE)),
            candidate_from_source: true,
            runner: read(amd64, "scopebox-runner"),
            sentinel: read(amd64, "scopebox-sentinel"),
            witnesses: Platform::ALL
                .iter()
                .map(|&p| (p.machine().to_string(), read(p, witness)))
                .collect(),
            image: image(),
        };
        (dir, built)
    }

    #[test]
    fn a_run_that_went_ahead_names_the_first_binary_the_build_then_changed() {
        let (dir, built) = built_from_disk();
        let root = dir.path();
        assert_eq!(rebuilt_since(root, std::slice::from_ref(&built)), None);
        let witness = toolchain::WITNESS_BIN.unwrap();
        for (platform, name) in [
            (Platform::LinuxAmd64, toolchain::CANDIDATE_PACKAGE),
            (Platform::LinuxAmd64, "scopebox-runner"),
            (Platform::LinuxAmd64, "scopebox-sentinel"),
            (Platform::LinuxArm64, witness),
        ] {
            let (dir, built) = built_from_disk();
            let bin = toolchain::static_bin(dir.path(), platform, name);
            std::fs::write(&bin, b"rebuilt").unwrap();
            assert_eq!(
                rebuilt_since(dir.path(), std::slice::from_ref(&built)),
                Some(format!("{platform} {name}"))
            );
            // Gone counts as changed too.
            std::fs::remove_file(&bin).unwrap();
            assert!(rebuilt_since(dir.path(), std::slice::from_ref(&built)).is_some());
        }
        // Other platforms' binaries the run did not use, and a candidate given with
        // --candidate, are not its concern.
        let (dir, mut built) = built_from_disk();
        let arm_runner = toolchain::static_bin(dir.path(), Platform::LinuxArm64, "scopebox-runner");
        std::fs::write(arm_runner, b"rebuilt").unwrap();
        built.candidate_from_source = false;
        let candidate = toolchain::static_bin(dir.path(), Platform::LinuxAmd64, "mcpscope");
        std::fs::write(candidate, b"rebuilt").unwrap();
        assert_eq!(
            rebuilt_since(dir.path(), std::slice::from_ref(&built)),
            None
        );
    }

    #[test]
    fn a_discarded_bundle_leaves_the_directory_as_the_run_found_it() {
        let dir = tempfile::tempdir().unwrap();
        let fill = |out: &Path| {
            std::fs::create_dir_all(out.join("platforms/linux-amd64/evidence")).unwrap();
            std::fs::write(out.join("platforms/linux-amd64/evidence/x"), b"x").unwrap();
            std::fs::write(out.join("receipt.json"), b"{}").unwrap();
        };
        // Made by the run: removed.
        let made = dir.path().join("made");
        fill(&made);
        discard_bundle(&made, false);
        assert!(!made.exists());
        // There (empty) before the run: emptied, kept.
        let there = dir.path().join("there");
        fill(&there);
        discard_bundle(&there, true);
        assert!(there.is_dir());
        assert_eq!(std::fs::read_dir(&there).unwrap().count(), 0);
    }

    #[test]
    fn the_default_set_is_every_platform_and_named_ones_are_required() {
        let all = select_platforms(&[], &[]).unwrap();
        assert_eq!(all.platforms, Platform::ALL);
        assert!(!all.required);
        let arm = select_platforms(&[Platform::LinuxArm64, Platform::LinuxArm64], &[]).unwrap();
        assert_eq!(arm.platforms, [Platform::LinuxArm64]);
        assert!(arm.required);
        // Given candidates decide the platforms, and must agree with --platform.
        let given = [candidate(Platform::LinuxArm64)];
        let from = select_platforms(&[], &given).unwrap();
        assert_eq!(from.platforms, [Platform::LinuxArm64]);
        assert!(from.required);
        assert!(select_platforms(&[Platform::LinuxAmd64], &given).is_err());
        let twice = [
            candidate(Platform::LinuxAmd64),
            candidate(Platform::LinuxAmd64),
        ];
        assert!(select_platforms(&[], &twice).is_err());
    }

    #[tokio::test]
    async fn a_probe_that_cannot_start_reports_why_and_removes_its_container_and_image() {
        let fake = Fake::new().without_image().failing(Step::Start);
        let got = probe(&fake, Platform::LinuxArm64, "t1", false)
            .await
            .unwrap();
        assert!(matches!(got, Probe::Cannot(_)), "{got:?}");
        let calls = fake.calls();
        assert!(
            calls.contains(&"remove_container c1".to_string()),
            "{calls:?}"
        );
        assert!(
            calls.iter().any(|c| c.starts_with("remove_image")),
            "{calls:?}"
        );
        // One that runs keeps its (content-addressed) image for the next run.
        let fake = Fake::new()
            .without_image()
            .with_wait(WaitBehaviour::Exit(i64::from(
                crate::image::PROBE_EXIT_CODE,
            )));
        let got = probe(&fake, Platform::LinuxArm64, "t1", false)
            .await
            .unwrap();
        assert_eq!(got, Probe::Runs);
        assert!(!fake.calls().iter().any(|c| c.starts_with("remove_image")));
        assert!(fake.objects().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_probe_reported_as_exiting_zero_never_ran_its_program() {
        // The probe exits 42 where it runs; an engine's 0 is not its answer (Podman once
        // reported 0 for a container whose ELF no handler knew).
        let fake = Fake::new()
            .without_image()
            .with_wait(WaitBehaviour::Exit(0));
        let got = probe(&fake, Platform::LinuxArm64, "t1", true)
            .await
            .unwrap();
        assert_eq!(got, Probe::Cannot("its probe exited 0".into()));
        assert!(fake.calls().iter().any(|c| c.starts_with("remove_image")));
        assert!(fake.objects().is_empty(), "{:?}", fake.objects());
    }

    /// Sets its flag when dropped: whether a future was abandoned.
    struct DropFlag(std::sync::Arc<std::sync::atomic::AtomicBool>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_engines_refusal_wins_and_drops_a_build_still_running() {
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = DropFlag(dropped.clone());
        let build = async move {
            let _flag = flag;
            std::future::pending::<()>().await;
            Ok::<_, CommandError>(())
        };
        let engine = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Err::<(), _>(CommandError::Usage("engine said no".into()))
        };
        let err = engine_first(engine, build).await.err().expect("refused");
        assert_eq!(err.to_string(), "engine said no");
        assert!(
            dropped.load(std::sync::atomic::Ordering::SeqCst),
            "build not dropped"
        );
    }

    #[test]
    fn a_build_is_taken_only_once_it_answered() {
        let done: Building<std::future::Ready<u8>> =
            Building::Running(Box::pin(std::future::ready(5)));
        assert!(matches!(done.try_finish(), Ok(5)));
        let pending: Building<std::future::Pending<u8>> =
            Building::Running(Box::pin(std::future::pending()));
        let Err(still) = pending.try_finish() else {
            panic!("a pending build answered");
        };
        assert!(matches!(still, Building::Running(_)));
        assert!(matches!(
            Building::<std::future::Pending<u8>>::Done(7).try_finish(),
            Ok(7)
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_build_is_reported_only_once_the_engine_agreed() {
        let build = async { Err::<(), _>(CommandError::Usage("build failed".into())) };
        // The engine answers after the build failed: its refusal is the one reported.
        let refusing = async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Err::<(), _>(CommandError::Usage("engine said no".into()))
        };
        let err = engine_first(refusing, build).await.err().expect("refused");
        assert_eq!(err.to_string(), "engine said no");
        let build = async { Err::<(), _>(CommandError::Usage("build failed".into())) };
        let agreeing = async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok::<_, CommandError>(7)
        };
        let (answered, building) = engine_first(agreeing, build).await.expect("agreed");
        assert_eq!(answered, 7);
        let err = building.finish().await.expect_err("build");
        assert_eq!(err.to_string(), "build failed");
        // Both succeed, in either order of finishing.
        let slow_build = async {
            tokio::time::sleep(Duration::from_secs(2)).await;
            Ok::<_, CommandError>("built")
        };
        let (answered, building) = engine_first(async { Ok::<_, CommandError>(1) }, slow_build)
            .await
            .unwrap();
        assert_eq!(answered, 1);
        assert!(
            matches!(building, Building::Running(_)),
            "handed back running"
        );
        assert_eq!(building.finish().await.unwrap(), "built");
    }

    #[tokio::test(start_paused = true)]
    async fn a_probe_log_that_lags_the_exit_is_read_again_until_it_says_why() {
        let said = b"exec /probe: exec format error\n";
        let fake = Fake::new()
            .with_wait(WaitBehaviour::Exit(1))
            .with_logs(&[said])
            .with_logs_late_by(2);
        let got = probe(&fake, Platform::LinuxArm64, "t1", true)
            .await
            .unwrap();
        assert_eq!(
            got,
            Probe::Cannot("its probe exited 1: exec /probe: exec format error".into())
        );
        let reads = fake
            .calls()
            .iter()
            .filter(|c| c.starts_with("logs"))
            .count();
        assert_eq!(reads, 3, "two empty reads, then the line");
        // A probe that truly printed nothing is reported as silent, after a bounded wait.
        let silent = Fake::new()
            .with_wait(WaitBehaviour::Exit(1))
            .with_logs_late_by(100);
        let got = probe(&silent, Platform::LinuxArm64, "t2", true)
            .await
            .unwrap();
        assert_eq!(got, Probe::Cannot("its probe exited 1".into()));
        assert!(silent.objects().is_empty(), "{:?}", silent.objects());
    }

    #[test]
    fn the_reason_a_platform_cannot_run_says_what_to_install() {
        let r = cannot_run_reason(
            Platform::LinuxArm64,
            "x86_64",
            "failed to start: exec format error",
        );
        assert!(r.contains("exec format error"), "{r}");
        assert!(r.contains("qemu-user-static"), "{r}");
        assert!(r.contains("aarch64"), "{r}");
        // crun (C) says it with strerror's capital.
        let r = cannot_run_reason(
            Platform::LinuxArm64,
            "x86_64",
            "crun: exec container process `/probe`: Exec format error",
        );
        assert!(
            r.contains("exec format error: no binfmt_misc handler"),
            "{r}"
        );
    }

    #[test]
    fn every_line_of_a_prefixed_writer_carries_the_platform() {
        use std::io::Write;
        let mut w = Prefixed::new("[linux/arm64] ".into(), Vec::new());
        w.write_all(b"a\nb").unwrap();
        w.write_all(b"c\n").unwrap();
        assert_eq!(w.out, b"[linux/arm64] a\n[linux/arm64] bc\n");
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
             caused by: the engine did not answer within 120 s\n\
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
                    "error: failed to {what}\n  caused by: the engine did not answer within 120 s"
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
