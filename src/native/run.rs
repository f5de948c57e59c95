//! `scopebox native run` (also bare `scopebox native [flags]`): the native reference in the box.
//! In order: read the native matrix and the lock, make the lock's files of the platform present
//! and verified in the cache (`fetch`, network only for what is missing), build mcpscope and
//! the harness for the platform, generate the native image (`image::build_with`: the recipe
//! `images/native-recipe.json` plus the client binary, its C runtime files and links from the
//! store, and the native matrix at `NATIVE_MATRIX_IN_IMAGE`; content-addressed, loaded only when
//! the engine lacks its ID), run it once under the candidate's boundary policy with the same
//! container lifecycle (`run::lifecycle`: deadline, Ctrl-C, evidence copied out, container and
//! volume always removed — by the run's reaper, `run::Reaper`, if scopebox is killed with
//! SIGKILL), then write the bundle and judge it.
//!
//! The bundle (`docs/native-matrix.md`, "In the box"): `inputs/native-matrix.json`,
//! `inputs/native.lock.json`, `inputs/image-recipe.json` (the native recipe),
//! `inputs/boundary-policy.json`; per platform `inputs/image-config.json`,
//! `inputs/image-layer.json`, `outer/` (inspections, execution) and `evidence/` (the container's
//! `/evidence`: `boundary.json`, `native/**`); `junit.xml` (one test case per scenario × mode);
//! `native.json` (the receipt's native section, `native_receipt::section`) and `receipt.json`
//! last (`native_receipt::native_only_receipt`: the sha256 of every other file); then the
//! verifier replays the bundle. It never judges a record itself beyond the applied boundary:
//! the verdicts come from the shared judge over the raw records.
//!
//! Exit codes: 0 every run recorded, the judge passed and the verifier accepts the bundle;
//! 1 a run failed, the judge or the verifier failed,
//! or a step failed; 2 refused (bad argument, matrix, lock, a digest mismatch, a non-empty
//! `--out`, a `--junit`/`--archive` destination that cannot be written); 3 engine unreachable; 4 platform unavailable; 124 the container deadline; 130
//! Ctrl-C. With `--json`, one object on stdout on every path.

use super::fetch::{self, Cache, FetchPlan, Role};
use super::lock::Lock;
use super::{cache_dir, lock_path, registry, CacheArgs, NativeError};
use crate::boundary::{self, Names};
use crate::exit::{CommandError, Outcome};
use crate::image::{self, Extra, ExtraPayload, Recipe};
use crate::progress::Progress;
use crate::receipt::{self, write_file};
use crate::run::{self as evidence_run, lifecycle, owner_is_live, sweep_stale, Plan};
use crate::toolchain;
use clap::Args;
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::native::{Failure, NativeMatrix};
use scopebox_schema::native_capture::{
    ClientRecord, NativeIndex, CLIENT_RECORD_FILE, INDEX_FILE, NATIVE_DIR, NATIVE_MATRIX_IN_IMAGE,
};
use scopebox_schema::native_observe::{self, NativeJudgement};
use scopebox_schema::platform::Platform;
use scopebox_schema::policy::{check_applied, check_observed};
use scopebox_schema::receipt::{platform_dir, EVIDENCE_DIR, POLICY_FILE};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The native image's recipe (the candidate's, with the native entrypoint arguments).
pub const NATIVE_RECIPE: &[u8] = include_bytes!("../../images/native-recipe.json");
/// The shipped native matrix of Claude Code, relative to the source root.
pub const DEFAULT_MATRIX: &str = "harness/matrix/native-claude-code.json";

/// The shipped native matrix of `client` (`harness/matrix/native-<client>.json`).
pub fn default_matrix(client: &str) -> String {
    format!("harness/matrix/native-{client}.json")
}
/// Where bundles go when `--out` is not given, relative to the current directory.
pub const DEFAULT_NATIVE_RUNS_DIR: &str = "out/native";
/// The whole container's deadline when none is given: 153 client runs of about a second each
/// and as many inventory runs, with room for a loaded machine.
pub const DEFAULT_NATIVE_DEADLINE_SECS: u64 = 900;

pub const MATRIX_BUNDLE_FILE: &str = "inputs/native-matrix.json";
pub const LOCK_BUNDLE_FILE: &str = "inputs/native.lock.json";
/// The native image's recipe, where every bundle keeps its image recipe.
pub const RECIPE_BUNDLE_FILE: &str = scopebox_schema::receipt::RECIPE_FILE;
/// Containers by default: on this 2-core host two halve the whole run (153 runs: 100 s serial,
/// 49 s in two) without changing any run's own time (medians 0.94–1.00× the host's).
pub const DEFAULT_SHARDS: usize = 2;
/// Container environment naming a shard (`I/N`), read by `scopebox-runner native`.
pub const SHARD_ENV: &str = "SCOPEBOX_NATIVE_SHARD";

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The native client to run (a client of the lock)
    #[arg(long, value_name = "CLIENT", default_value = "claude-code")]
    pub client: String,
    /// The platform to run it on (linux/amd64; linux/arm64 under emulation)
    #[arg(long, value_name = "PLATFORM", default_value = "linux/amd64")]
    pub platform: String,
    /// The native matrix [default: harness/matrix/native-claude-code.json in the source tree]
    #[arg(long, value_name = "FILE")]
    pub matrix: Option<PathBuf>,
    // (Angle brackets in clap's help text, not HTML.)
    #[allow(rustdoc::invalid_html_tags)]
    /// The bundle directory (new or empty) [default: out/native/<run id>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Deadline of the whole container run, in seconds
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_NATIVE_DEADLINE_SECS)]
    pub deadline: u64,
    /// Never touch the network: a lock file missing from the cache is refused
    #[arg(long)]
    pub offline: bool,
    /// Containers to spread the scenarios over (scenario i runs in shard i mod N); the records
    /// of a run never depend on it; the bundle keeps every container's inspections and
    /// boundary observation (shard i ≥ 1's in `shards/<i>/`)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SHARDS)]
    pub shards: usize,
    /// No per-run progress (no bar, no lines); the summary is still printed
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub copies: crate::bundle_file::Copies,
    #[command(flatten)]
    pub common: CacheArgs,
}

/// What `--json` and the receipt say about one recorded run.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunLine {
    pub scenario: String,
    pub mode: String,
    pub dir: String,
    pub completed: bool,
    pub pass: bool,
    pub failures: Vec<String>,
    pub duration_micros: Option<u64>,
}

fn usage(text: impl Into<String>) -> CommandError {
    CommandError::Usage(text.into())
}

/// The inputs the image is made of, read and checked before anything is built.
struct Inputs {
    /// The native recipe for this client (`recipe_for`), exactly as bundled.
    recipe_bytes: Vec<u8>,
    matrix: NativeMatrix,
    matrix_bytes: Vec<u8>,
    lock_bytes: Vec<u8>,
    client_path: String,
    platform: Platform,
}

fn read_inputs(args: &RunArgs, root: &Path) -> Result<Inputs, CommandError> {
    let platform = Platform::parse(&args.platform).ok_or_else(|| {
        usage(format!(
            "--platform {:?}: expected linux/amd64 or linux/arm64",
            args.platform
        ))
    })?;
    let matrix_path = args
        .matrix
        .clone()
        .unwrap_or_else(|| root.join(default_matrix(&args.client)));
    let matrix_bytes = std::fs::read(&matrix_path).map_err(|source| CommandError::MatrixRead {
        path: matrix_path.clone(),
        source,
    })?;
    let matrix: NativeMatrix =
        serde_json::from_slice(&matrix_bytes).map_err(|source| CommandError::MatrixParse {
            path: matrix_path.clone(),
            source,
        })?;
    let problems = scopebox_harness_native_problems(&matrix);
    if !problems.is_empty() {
        return Err(CommandError::MatrixInvalid {
            path: matrix_path,
            problems,
        });
    }
    if matrix.client.id != args.client {
        return Err(usage(format!(
            "the native matrix is for client {:?}, not --client {:?}",
            matrix.client.id, args.client
        )));
    }
    let lock_file = lock_path(args.common.lock.as_deref());
    let lock_bytes = std::fs::read(&lock_file).map_err(|source| {
        NativeError::Lock(super::lock::LockError::Read {
            path: lock_file.clone(),
            source,
        })
    })?;
    let lock = Lock::parse(&lock_file, &lock_bytes).map_err(NativeError::from)?;
    let client = lock
        .clients
        .iter()
        .find(|c| c.client == args.client)
        .ok_or_else(|| {
            usage(format!(
                "the native lock {} has no client {:?}",
                lock_file.display(),
                args.client
            ))
        })?;
    if !client
        .platforms
        .iter()
        .any(|p| p.platform == platform.name())
    {
        return Err(usage(format!(
            "the native lock pins {} for no platform {platform}",
            args.client
        )));
    }
    if client.version != matrix.client.version {
        return Err(usage(format!(
            "the native matrix records {} {}, the lock pins {}",
            args.client, matrix.client.version, client.version
        )));
    }
    let recipe_bytes = recipe_for(&client.image_path)?;
    Ok(Inputs {
        recipe_bytes,
        matrix,
        matrix_bytes,
        lock_bytes,
        client_path: client.image_path.clone(),
        platform,
    })
}

/// The native recipe for a client whose binary is at `client_path`: `images/native-recipe.json`
/// (written for Claude Code) with its command's client argument set to `client_path`, as
/// two-space JSON — so each client's image is content-addressed by its own recipe bytes, which
/// the bundle carries. The command must otherwise be `native NATIVE_MATRIX_IN_IMAGE CLIENT`.
pub fn recipe_for(client_path: &str) -> Result<Vec<u8>, CommandError> {
    let recipe = Recipe::parse(NATIVE_RECIPE).map_err(image::ImageError::from)?;
    if recipe.cmd.len() != 3 || recipe.cmd[0] != "native" || recipe.cmd[1] != NATIVE_MATRIX_IN_IMAGE
    {
        return Err(usage(format!(
            "images/native-recipe.json runs {:?}; it must run `native {NATIVE_MATRIX_IN_IMAGE} CLIENT`",
            recipe.cmd
        )));
    }
    if recipe.cmd[2] == client_path {
        return Ok(NATIVE_RECIPE.to_vec());
    }
    let mut doc: serde_json::Value =
        serde_json::from_slice(NATIVE_RECIPE).expect("the recipe parsed above");
    doc["cmd"][2] = client_path.into();
    let mut bytes = serde_json::to_vec_pretty(&doc).expect("serializes");
    bytes.push(b'\n');
    Recipe::parse(&bytes).map_err(image::ImageError::from)?;
    Ok(bytes)
}

/// The checks the runner applies to a native matrix (`scopebox_harness::native::problems`,
/// restated: the orchestrator does not link the harness), so a bad matrix is refused before
/// anything is built.
fn scopebox_harness_native_problems(m: &NativeMatrix) -> Vec<String> {
    use scopebox_schema::native::Mode;
    let mut out = Vec::new();
    if m.schema_version != 1 {
        out.push(format!("schemaVersion is {}, expected 1", m.schema_version));
    }
    if m.kind != scopebox_schema::native::KIND {
        out.push(format!("kind is {:?}, expected \"native\"", m.kind));
    }
    if m.scenarios.is_empty() {
        out.push("the matrix has no scenarios".into());
    }
    let mut seen = std::collections::BTreeSet::new();
    for s in &m.scenarios {
        if s.id.is_empty()
            || !s
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            out.push(format!("scenario id {:?} is not [a-z0-9-]+", s.id));
        }
        if !seen.insert(s.id.as_str()) {
            out.push(format!("scenario id {:?} appears twice", s.id));
        }
        let modes: Vec<Mode> = s.runs.iter().map(|r| r.mode).collect();
        if modes != [Mode::List, Mode::Get, Mode::Headless] {
            out.push(format!(
                "scenario {}: runs must be list, get, headless in that order",
                s.id
            ));
        }
    }
    out
}

/// A symlink of the native image: (path, target as written in the package).
pub type Link = (String, String);

/// One file of the native image taken from the fetch store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreFile {
    pub image_path: String,
    pub mode: u32,
    pub bytes: Vec<u8>,
}

/// The extra nodes of the native image: every store file at its image path with its mode, the
/// runtime's links, and the native matrix. Sorted by path (the layer sorts them anyway).
pub fn native_extras<'a>(
    files: &'a [StoreFile],
    symlinks: &'a [Link],
    matrix_bytes: &'a [u8],
) -> Vec<Extra<'a>> {
    let mut extras: Vec<Extra> = files
        .iter()
        .map(|f| Extra {
            path: &f.image_path,
            mode: f.mode,
            payload: ExtraPayload::File(&f.bytes),
        })
        .chain(symlinks.iter().map(|(path, target)| Extra {
            path,
            mode: 0o777,
            payload: ExtraPayload::Symlink(target),
        }))
        .collect();
    extras.push(Extra {
        path: NATIVE_MATRIX_IN_IMAGE,
        mode: 0o644,
        payload: ExtraPayload::File(matrix_bytes),
    });
    extras.sort_by(|a, b| a.path.cmp(b.path));
    extras
}

/// Reads the fetched files that go into the image (the binary and runtime files), checking
/// each against its digest once more: the store is outside the repository.
fn store_files(
    fetched: &fetch::FetchedPlatform,
    client_path: &str,
) -> Result<(Vec<StoreFile>, Vec<Link>), CommandError> {
    let mut files = Vec::new();
    for f in &fetched.files {
        let wanted = match f.role {
            Role::Binary => f.image_path.as_deref() == Some(client_path),
            Role::RuntimeFile => true,
            Role::Wheel | Role::Deb => false,
        };
        let Some(image_path) = f.image_path.clone().filter(|_| wanted) else {
            continue;
        };
        let bytes = std::fs::read(&f.path).map_err(|source| {
            usage(format!(
                "read the cached {} {}: {source}",
                f.name,
                f.path.display()
            ))
        })?;
        if sha256_hex(&bytes) != f.sha256 {
            return Err(usage(format!(
                "the cached {} at {} changed after it was verified",
                f.name,
                f.path.display()
            )));
        }
        let mode = match (f.role, f.mode.as_deref()) {
            (Role::Binary, _) => 0o555,
            (_, Some(m)) => u32::from_str_radix(m, 8).unwrap_or(0o644),
            (_, None) => 0o644,
        };
        files.push(StoreFile {
            image_path,
            mode,
            bytes,
        });
    }
    if !files.iter().any(|f| f.image_path == client_path) {
        return Err(usage(format!(
            "the fetch store has no client binary for {client_path}"
        )));
    }
    let symlinks = fetched
        .symlinks
        .iter()
        .map(|s| (s.image_path.clone(), s.target.clone()))
        .collect();
    Ok((files, symlinks))
}

/// `scopebox native run`.
pub async fn run(args: RunArgs) -> Result<Outcome, CommandError> {
    let clock = Instant::now();
    let started_at = std::time::SystemTime::now();
    // Ctrl-C is kept from the start, as in `scopebox run`: a run interrupted before its
    // container exists writes nothing.
    let ctrl_c = crate::run::CtrlC::listen();
    let interrupted = || ctrl_c.hit();

    let root = crate::shipped::source_root()?;
    let inputs = read_inputs(&args, &root)?;
    let platform = inputs.platform;
    let run_id = boundary::new_run_id();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new(DEFAULT_NATIVE_RUNS_DIR).join(&run_id));
    receipt::check_dir(&out)?;
    args.copies.check()?;
    let (policy, policy_bytes) = crate::shipped::policy()?;
    let recipe_bytes = inputs.recipe_bytes.clone();
    let recipe = Recipe::parse(&recipe_bytes).map_err(image::ImageError::from)?;

    // The pinned files, present and verified (a blocking job: hashing ~400 MB).
    let fetch_args = args.clone();
    let fetching = tokio::task::spawn_blocking(move || {
        let lock_file = lock_path(fetch_args.common.lock.as_deref());
        let lock = Lock::load(&lock_file)?;
        let cache_root = cache_dir(fetch_args.common.cache.as_deref());
        let cache = Cache::open(&cache_root)?;
        let mut registry = registry::Subprocess::new(&cache_root);
        let platforms = [fetch_args.platform.clone()];
        let clients = [fetch_args.client.clone()];
        let plan = FetchPlan {
            lock: &lock,
            platforms: &platforms,
            clients: &clients,
            offline: fetch_args.offline,
        };
        let mut note = |line: String| say!("scopebox: native: {line}");
        Ok::<_, NativeError>(fetch::fetch(&plan, &cache, &mut registry, &mut note)?)
    });
    let fetched = tokio::select! {
        done = fetching => done.map_err(|e| usage(format!("the fetch ({e})")))??,
        () = interrupted() => {
            say!("scopebox: interrupted during the fetch: no bundle written");
            return Ok(Outcome::Interrupted);
        }
    };
    let fetched_platform = fetched
        .platforms
        .into_iter()
        .find(|p| p.platform == platform.name())
        .ok_or_else(|| usage(format!("the fetch brought nothing for {platform}")))?;
    say!(
        "scopebox: native: {platform} verified ({} file(s), {} download(s))",
        fetched_platform.files.len(),
        fetched.downloads
    );

    // Before the run's first engine object (the probe, or the volume): the reaper removes what
    // it made if scopebox is killed too hard to clean up; dropped on every return from here,
    // each one after the run's own cleanup.
    let _reaper = evidence_run::Reaper::start(&run_id);
    let engine = evidence_run::reach_engine().await?;
    let info = evidence_run::engine_info(&engine).await?;
    let engine_platform = Platform::from_machine(&info.architecture);
    if engine_platform != Some(platform) {
        match evidence_run::probe(&engine, platform, &run_id, false).await? {
            evidence_run::Probe::Runs => {}
            evidence_run::Probe::Cannot(detail) => {
                return Err(CommandError::PlatformUnavailable {
                    platform,
                    reason: evidence_run::cannot_run_reason(platform, &info.architecture, &detail),
                })
            }
        }
    }

    let prepare = async {
        let pack_clock = Instant::now();
        say!("scopebox: native: {}", toolchain::building());
        toolchain::build_shipped(&root, crate::toolchain::Priority::Normal).await?;
        let candidate = crate::pack::built_candidate(&root, platform)?;
        let runner = toolchain::read_bin(&root, platform, toolchain::RUNNER_BIN)?;
        let sentinel = toolchain::read_bin(&root, platform, toolchain::SENTINEL_BIN)?;
        let mut witnesses = Vec::new();
        if let Some(bin) = toolchain::WITNESS_BIN {
            for p in Platform::ALL {
                witnesses.push((p.machine().to_string(), toolchain::read_bin(&root, p, bin)?));
            }
        }
        let pack_ms = pack_clock.elapsed().as_millis() as u64;
        let image_clock = Instant::now();
        let (files, symlinks) = store_files(&fetched_platform, &inputs.client_path)?;
        let extras = native_extras(&files, &symlinks, &inputs.matrix_bytes);
        let witness_refs: Vec<image::WitnessBinary> = witnesses
            .iter()
            .map(|(machine, bytes)| image::WitnessBinary { machine, bytes })
            .collect();
        let built = image::build_with(
            &recipe,
            &recipe_bytes,
            &image::Contents {
                platform,
                candidate: &candidate.files,
                runner: &runner,
                sentinel: &sentinel,
                matrix: &inputs.matrix_bytes,
                witnesses: &witness_refs,
            },
            &extras,
        )
        .map_err(image::ImageError::from)?;
        drop(extras);
        drop(files);
        let loaded = evidence_run::ensure_loaded(&engine, &built).await?;
        say!(
            "scopebox: native: image {} ({}{})",
            built.id,
            built.tag,
            if loaded {
                ", loaded"
            } else {
                ", already loaded"
            }
        );
        let image_ms = image_clock.elapsed().as_millis() as u64;
        let swept = sweep_stale(&engine, false, owner_is_live).await?;
        if !swept.removed.is_empty() {
            say!(
                "scopebox: removed {} leftover object(s) of earlier runs",
                swept.removed.len()
            );
        }
        Ok::<_, CommandError>((built, pack_ms, image_ms))
    };
    let (built, pack_ms, image_ms) = tokio::select! {
        done = prepare => done?,
        () = interrupted() => {
            say!("scopebox: interrupted before any container was created: no bundle written");
            return Ok(Outcome::Interrupted);
        }
    };

    receipt::prepare_dir(&out)?;
    write_file(&out, MATRIX_BUNDLE_FILE, &inputs.matrix_bytes)?;
    write_file(&out, LOCK_BUNDLE_FILE, &inputs.lock_bytes)?;
    write_file(&out, RECIPE_BUNDLE_FILE, &recipe_bytes)?;
    write_file(&out, POLICY_FILE, &policy_bytes)?;
    let pdir = platform_dir(platform);
    write_file(
        &out,
        &format!("{pdir}/{}", scopebox_schema::receipt::IMAGE_CONFIG_FILE),
        &built.config,
    )?;
    let mut layer = serde_json::to_vec_pretty(&built.layer_manifest).expect("serializes");
    layer.push(b'\n');
    write_file(
        &out,
        &format!("{pdir}/{}", scopebox_schema::receipt::LAYER_MANIFEST_FILE),
        &layer,
    )?;
    let image_id = built.id.clone();
    drop(built);

    let engine_machine = engine_platform
        .map(|p| p.machine())
        .unwrap_or(&info.architecture);
    let shards = args.shards.clamp(1, inputs.matrix.scenarios.len().max(1));
    // Where each container's /evidence and outer records go. One shard: the container's
    // /evidence is the bundle's; several: each shard's is extracted outside the bundle and
    // merged below; the first shard's outer records are the platform's, the others' are checked
    // here (the receipt layout has one container per platform) and not kept.
    let platform_out = out.join(&pdir);
    let evidence_dir = platform_out.join(EVIDENCE_DIR);
    let shard_tmp = tempfile::tempdir().map_err(CommandError::Runtime)?;
    let places: Vec<(PathBuf, PathBuf)> = (0..shards)
        .map(|i| {
            if shards == 1 {
                return (platform_out.clone(), evidence_dir.clone());
            }
            // Every container's own records stay in the bundle (the verifier checks each
            // one's boundary): shard 0's in the platform directory, shard i's in `shards/<i>/`.
            let d = shard_tmp.path().join(i.to_string());
            let outer = if i == 0 {
                platform_out.clone()
            } else {
                platform_out
                    .join(scopebox_schema::receipt::SHARDS_DIR)
                    .join(i.to_string())
            };
            (outer, d.join(EVIDENCE_DIR))
        })
        .collect();
    let plans: Vec<Plan> = (0..shards)
        .map(|i| {
            let mut names = Names::for_platform(&run_id, platform);
            let mut labels = boundary::platform_labels(&run_id, platform, false);
            if shards > 1 {
                // Each shard its own lane, so one shard's final sweep never removes another's
                // container while it still runs.
                let lane = format!("{}-s{i}", boundary::lane(&run_id, platform));
                names.container = format!("{}-s{i}", names.container);
                names.volume = format!("scopebox-{lane}-evidence");
                names.sweep_label = format!("{}={lane}", crate::engine::LANE_LABEL);
                labels.insert(crate::engine::LANE_LABEL.to_string(), lane);
            }
            let mut sandbox = boundary::sandbox(
                &policy,
                &image_id,
                platform,
                &names.volume,
                &labels,
                Some(engine_machine),
            );
            if shards > 1 {
                sandbox
                    .env
                    .push((SHARD_ENV.to_string(), format!("{i}/{shards}")));
            }
            Plan {
                platform: platform.name().to_string(),
                sandbox,
                names,
                labels,
                image_id: image_id.clone(),
                deadline: Duration::from_secs(args.deadline),
                keep_on_failure: false,
                origin: tokio::time::Instant::from_std(clock),
                evidence_dest: Some(places[i].1.clone()),
            }
        })
        .collect();
    let total_runs = inputs.matrix.scenarios.len() * 3;
    say!(
        "scopebox: native: running {} scenario(s) × 3 modes of {} on {platform} in {} (deadline {} s)",
        inputs.matrix.scenarios.len(),
        inputs.matrix.name,
        plans
            .iter()
            .map(|p| p.names.container.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        args.deadline
    );
    let (display, colour) = crate::progress::for_stderr(args.quiet);
    let bars = indicatif::MultiProgress::new();
    let container_clock = Instant::now();
    let lifecycles = plans.iter().enumerate().map(|(i, plan)| {
        let engine = &engine;
        let interrupt = interrupted();
        let runs = (0..inputs.matrix.scenarios.len())
            .filter(|s| s % shards == i)
            .count()
            * 3;
        let label = if shards > 1 {
            format!("{} shard {i}", plan.platform)
        } else {
            plan.platform.clone()
        };
        let bar = (display == crate::progress::Display::Bars)
            .then(|| crate::progress::bar(&bars, &label, runs));
        async move {
            let prefix = if shards > 1 {
                format!("[shard {i}] ")
            } else {
                String::new()
            };
            let mut progress = Progress::shown(
                runs,
                evidence_run::Prefixed::new(prefix, std::io::stderr()),
                display,
                bar,
                colour,
            );
            lifecycle(engine, plan, interrupt, &mut progress).await
        }
    });
    let mut records = futures_util::future::join_all(lifecycles).await;
    let container_ms = container_clock.elapsed().as_millis() as u64;
    if display == crate::progress::Display::Bars {
        say!();
    }

    let mut problems: Vec<String> = Vec::new();
    let mut shard_evidence = Vec::new();
    for ((i, rec), (outer_dir, dest)) in records.iter_mut().enumerate().zip(places) {
        // The lifecycle extracted the container's /evidence into `dest` (a problem is in its
        // errors).
        let execution = receipt::execution(rec, args.deadline, pack_ms, image_ms);
        receipt::write_outer(&outer_dir, rec, &execution)?;
        let name = if shards == 1 {
            String::new()
        } else {
            format!("shard {i}: ")
        };
        problems.extend(rec.errors.iter().map(|e| format!("{name}{e}")));
        // The applied and observed boundary, by the candidate's rules.
        let applied = match rec
            .container_inspect
            .as_deref()
            .map(serde_json::from_slice::<serde_json::Value>)
        {
            Some(Ok(doc)) => check_applied(&policy, &doc, info.name),
            Some(Err(e)) => vec![format!("container-inspect: not JSON ({e})")],
            None => vec!["container-inspect: missing".to_string()],
        };
        let observed = std::fs::read(dest.join(scopebox_schema::evidence::BOUNDARY_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let observed_failures = match &observed {
            Some(obs) => check_observed(&policy, obs),
            None => vec!["inner-boundary: evidence/boundary.json missing or unreadable".into()],
        };
        problems.extend(
            applied
                .iter()
                .map(|f| format!("{name}boundary as applied: {f}")),
        );
        problems.extend(
            observed_failures
                .iter()
                .map(|f| format!("{name}boundary as observed: {f}")),
        );
        if !rec.cleanup.container_removed || !rec.cleanup.volume_removed {
            problems.push(format!(
                "{name}cleanup: the container or its volume was not removed"
            ));
        }
        if shards > 1 && i > 0 {
            // Its boundary observation beside its records (the merged tree keeps shard 0's).
            if let Err(e) = keep_shard_boundary(&dest, &outer_dir) {
                problems.push(format!("{name}{e}"));
            }
        }
        shard_evidence.push(dest);
    }
    if shards > 1 {
        if let Err(e) = merge_shards(&shard_evidence, &evidence_dir, &inputs.matrix) {
            problems.push(format!("merge the shards' evidence: {e}"));
        }
    }
    let interrupted_any = records.iter().any(|r| r.interrupted);
    let timed_out_any = records.iter().any(|r| r.timed_out);
    let cleanup_done = records
        .iter()
        .all(|r| r.cleanup.container_removed && r.cleanup.volume_removed);

    let (judgement, lines) = judge_records(&inputs, &evidence_dir, &mut problems);
    let junit = junit_report(&run_id, platform, &lines, &problems, container_ms);
    write_file(&out, crate::junit::JUNIT_FILE, &junit)?;

    let runs_passed = lines.iter().filter(|l| l.pass).count();
    let all_pass = problems.is_empty()
        && judgement.passed
        && runs_passed == total_runs
        && lines.len() == total_runs;
    let outcome = if interrupted_any {
        Outcome::Interrupted
    } else if timed_out_any {
        Outcome::TimedOut
    } else if all_pass {
        Outcome::Passed
    } else {
        Outcome::Failed
    };
    let durations: Vec<u64> = lines.iter().filter_map(|l| l.duration_micros).collect();
    let summary: serde_json::Value = serde_json::json!({
        "ok": outcome == Outcome::Passed,
        "exitCode": crate::exit::code(&Ok(outcome)),
        "outcome": crate::exit::outcome_name(outcome),
        "runId": run_id,
        "bundle": out,
        "client": args.client,
        "clientVersion": inputs.matrix.client.version,
        "platform": platform.name(),
        "emulated": engine_platform != Some(platform),
        "imageId": image_id,
        "lockSha256": sha256_hex(&inputs.lock_bytes),
        "matrixSha256": sha256_hex(&inputs.matrix_bytes),
        "runs": {"total": total_runs, "recorded": lines.len(), "passed": runs_passed},
        "totals": judgement.totals,
        "judgePassed": judgement.passed,
        "problems": problems,
        "shards": shards,
        "cleanup": {"done": cleanup_done},
        "seconds": {
            "total": clock.elapsed().as_secs_f64(),
            "container": container_ms as f64 / 1000.0,
            "clientRunsSum": durations.iter().sum::<u64>() as f64 / 1e6,
        },
    });
    write_receipt(
        &out,
        &inputs,
        (platform, engine_platform != Some(platform), info.name),
        (judgement, shards),
        &run_id,
        (started_at, std::time::SystemTime::now()),
        (&policy_bytes, &recipe_bytes),
    )?;
    args.copies.write_junit(&junit)?;
    args.copies.write_archive(&out)?;
    // The verifier's replay, from the bundle's bytes alone: (verified, the failed checks' ids).
    let verified = match args.copies.verify(&out) {
        Ok(report) => (
            report.verified,
            report
                .failed_ids()
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>(),
        ),
        Err(e) => (false, vec![format!("unreadable: {e}")]),
    };
    let mut summary = summary;
    summary["verified"] = verified.0.into();
    if !verified.1.is_empty() {
        summary["verifyFailed"] = verified.1.clone().into();
    }
    let outcome = if outcome == Outcome::Passed && !verified.0 {
        Outcome::Failed
    } else {
        outcome
    };
    summary["ok"] = (outcome == Outcome::Passed).into();
    summary["exitCode"] = crate::exit::code(&Ok(outcome)).into();
    summary["outcome"] = crate::exit::outcome_name(outcome).into();
    summary["receipt"] = out
        .join(scopebox_schema::receipt::RECEIPT_FILE)
        .display()
        .to_string()
        .into();
    summary["junit"] = out
        .join(crate::junit::JUNIT_FILE)
        .display()
        .to_string()
        .into();
    summary["archive"] = args
        .copies
        .archive
        .as_ref()
        .map(|a| a.display().to_string())
        .into();

    const SHOWN: usize = 12;
    for p in problems.iter().take(SHOWN) {
        say!("  problem: {}", scopebox_terminal::escape_lines(p));
    }
    for l in lines.iter().filter(|l| !l.pass).take(SHOWN) {
        say!(
            "  {}/{} FAILED: {}",
            l.scenario,
            l.mode,
            scopebox_terminal::escape_lines(&l.failures.join("; "))
        );
    }
    say!(
        "scopebox: native: receipt {} — {}",
        out.join(scopebox_schema::receipt::RECEIPT_FILE).display(),
        if verified.0 {
            "verified: scopebox-verify accepts the bundle".to_string()
        } else {
            format!(
                "NOT verified: scopebox-verify rejected it ({})",
                verified.1.join(", ")
            )
        }
    );
    say!(
        "scopebox: native: {}: {runs_passed}/{total_runs} runs passed on {platform} — bundle {} ({:.1} s)",
        match outcome {
            Outcome::Passed => "PASSED",
            Outcome::Failed => "FAILED",
            Outcome::TimedOut => "TIMED OUT",
            Outcome::Interrupted => "INTERRUPTED",
        },
        out.display(),
        clock.elapsed().as_secs_f64()
    );
    if args.common.json {
        crate::exit::print_summary(&summary);
    }
    Ok(outcome)
}

/// `native.json` (the receipt's native section: the judgement with the lock's pinned entry) and
/// `receipt.json` (a native-only receipt listing every file).
#[allow(clippy::too_many_arguments)]
fn write_receipt(
    out: &Path,
    inputs: &Inputs,
    (platform, emulated, engine): (Platform, bool, scopebox_schema::engine::EngineName),
    (judgement, containers): (NativeJudgement, usize),
    run_id: &str,
    (started, finished): (std::time::SystemTime, std::time::SystemTime),
    (policy_bytes, recipe_bytes): (&[u8], &[u8]),
) -> Result<(), CommandError> {
    use scopebox_schema::native_receipt::{
        native_only_receipt, platform_run, section, NativeOnlyRun, NATIVE_SECTION_FILE,
    };
    let bundle_error = |e: String| {
        CommandError::Runtime(std::io::Error::other(format!(
            "write the native receipt: {e}"
        )))
    };
    let mut run = platform_run(&inputs.lock_bytes, platform, emulated, judgement, true)
        .map_err(bundle_error)?;
    run.engine = Some(engine);
    run.containers = containers;
    let native =
        section(&inputs.matrix_bytes, &inputs.lock_bytes, vec![run]).map_err(bundle_error)?;
    let mut bytes = serde_json::to_vec_pretty(&native).expect("serializes");
    bytes.push(b'\n');
    write_file(out, NATIVE_SECTION_FILE, &bytes)?;
    let files = receipt::list_files(out)?;
    let receipt_doc = native_only_receipt(
        NativeOnlyRun {
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            run_id: run_id.to_string(),
            started_at: receipt::rfc3339(started),
            finished_at: receipt::rfc3339(finished),
            boundary_policy_sha256: sha256_hex(policy_bytes),
            recipe_sha256: sha256_hex(recipe_bytes),
            files,
            provenance: None,
        },
        &inputs.matrix_bytes,
    )
    .map_err(bundle_error)?;
    let mut bytes = serde_json::to_vec_pretty(&receipt_doc).expect("serializes");
    bytes.push(b'\n');
    write_file(out, scopebox_schema::receipt::RECEIPT_FILE, &bytes)?;
    Ok(())
}

/// Copies a further shard's `boundary.json` from its evidence `dest` to
/// `<shard dir>/evidence/boundary.json`, where the verifier reads it.
fn keep_shard_boundary(dest: &Path, shard_dir: &Path) -> Result<(), String> {
    let boundary = scopebox_schema::evidence::BOUNDARY_FILE;
    let to = shard_dir.join(EVIDENCE_DIR);
    std::fs::create_dir_all(&to)
        .and_then(|()| std::fs::copy(dest.join(boundary), to.join(boundary)))
        .map(|_| ())
        .map_err(|e| format!("keep {boundary}: {e}"))
}

/// The evidence of several shards as one: each scenario's directory moved into `dest/native/`,
/// `dest/native/index.json` with every shard's runs in matrix order (the other fields must
/// agree), `dest/boundary.json` the first shard's (every shard's was checked against the policy).
fn merge_shards(shards: &[PathBuf], dest: &Path, matrix: &NativeMatrix) -> Result<(), String> {
    let native = dest.join(NATIVE_DIR);
    std::fs::create_dir_all(&native).map_err(|e| format!("create {}: {e}", native.display()))?;
    let mut merged: Option<NativeIndex> = None;
    let mut runs = Vec::new();
    for shard in shards {
        let index_path = shard.join(INDEX_FILE);
        let index: NativeIndex = std::fs::read(&index_path)
            .map_err(|e| format!("read {}: {e}", index_path.display()))
            .and_then(|b| {
                serde_json::from_slice(&b)
                    .map_err(|e| format!("parse {}: {e}", index_path.display()))
            })?;
        for entry in std::fs::read_dir(shard.join(NATIVE_DIR))
            .map_err(|e| format!("read {}: {e}", shard.display()))?
            .flatten()
        {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let to = native.join(entry.file_name());
                std::fs::rename(entry.path(), &to)
                    .map_err(|e| format!("move {}: {e}", entry.path().display()))?;
            }
        }
        runs.extend(index.runs.iter().cloned());
        match &merged {
            None => {
                merged = Some(NativeIndex {
                    runs: Vec::new(),
                    ..index
                })
            }
            Some(m) => {
                let same = m.matrix_sha256 == index.matrix_sha256
                    && m.client_sha256 == index.client_sha256
                    && m.machine == index.machine
                    && m.client_path == index.client_path;
                if !same {
                    return Err(format!(
                        "{} disagrees with the first shard's index (matrix, client or machine)",
                        index_path.display()
                    ));
                }
            }
        }
    }
    let order: BTreeMap<&str, usize> = matrix
        .scenarios
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    runs.sort_by_key(|r| {
        (
            order
                .get(r.scenario.as_str())
                .copied()
                .unwrap_or(usize::MAX),
            match r.mode.as_str() {
                "list" => 0,
                "get" => 1,
                _ => 2,
            },
        )
    });
    let mut index = merged.ok_or("no shard")?;
    index.runs = runs;
    let mut bytes = serde_json::to_vec_pretty(&index).expect("serializes");
    bytes.push(b'\n');
    std::fs::write(dest.join(INDEX_FILE), bytes).map_err(|e| format!("write index: {e}"))?;
    let boundary = scopebox_schema::evidence::BOUNDARY_FILE;
    std::fs::copy(shards[0].join(boundary), dest.join(boundary))
        .map_err(|e| format!("copy {boundary}: {e}"))?;
    Ok(())
}

/// The differential judgement of the evidence (`native_observe::judge_evidence`, the function
/// the verifier replays) and each run of it as a line. `read` only ever reads below `evidence`:
/// a path with an absolute, `..` or empty component reads as absent.
fn judge_records(
    inputs: &Inputs,
    evidence: &Path,
    problems: &mut Vec<String>,
) -> (NativeJudgement, Vec<RunLine>) {
    let read = |rel: &str| -> Option<Vec<u8>> {
        let safe = !rel.is_empty()
            && rel
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        if !safe {
            return None;
        }
        std::fs::read(evidence.join(rel)).ok()
    };
    let judgement = native_observe::judge_evidence(&inputs.matrix_bytes, &inputs.lock_bytes, &read);
    problems.extend(judgement.failures.iter().cloned());
    let lines = judgement
        .runs
        .iter()
        .map(|r| {
            let record: Option<ClientRecord> =
                read(&format!("{NATIVE_DIR}/{}/{CLIENT_RECORD_FILE}", r.dir))
                    .and_then(|b| serde_json::from_slice(&b).ok());
            let mut failures: Vec<String> = r.capture_failures.clone();
            failures.extend(
                r.inventory_failures
                    .iter()
                    .map(|f| format!("inventory: {f}")),
            );
            failures.extend(r.failures.iter().map(describe_failure));
            RunLine {
                scenario: r.scenario.clone(),
                mode: r.mode.as_str().to_string(),
                dir: r.dir.clone(),
                completed: r.observation.is_some(),
                pass: r.passed,
                failures,
                duration_micros: record.map(|c| c.duration_micros),
            }
        })
        .collect();
    (judgement, lines)
}

/// One line for a judge failure.
fn describe_failure(f: &Failure) -> String {
    match f {
        Failure::ClientDrift { what } => format!("client drift (the reference changed): {what}"),
        Failure::UndeclaredLaunch { tag } => format!("undeclared launch: {tag}"),
        Failure::Missed { tag } => format!("MISSED by mcpscope: {tag}"),
        Failure::Prediction {
            tag,
            predicted,
            launched,
        } => format!(
            "prediction: {tag} predicted {predicted}, {}",
            if *launched {
                "launched"
            } else {
                "not launched"
            }
        ),
        Failure::NoPrediction { tag } => format!("no prediction: {tag}"),
        Failure::StaleDivergence { tag, kind } => {
            format!("stale divergence: {tag} ({kind:?}) no longer diverges")
        }
    }
}

fn junit_report(
    run_id: &str,
    platform: Platform,
    lines: &[RunLine],
    problems: &[String],
    container_ms: u64,
) -> Vec<u8> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let failure = |message: String, description: String| {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(message);
        s.set_description(description);
        s
    };
    let mut report = Report::new(format!("scopebox native {run_id}"));
    let mut suite = TestSuite::new(format!("native {}", platform.name()));
    suite.set_time(Duration::from_millis(container_ms));
    let whole = if problems.is_empty() {
        TestCaseStatus::success()
    } else {
        failure(
            format!("{} problem(s)", problems.len()),
            problems.join("\n"),
        )
    };
    let mut case = TestCase::new(format!("native run {}", platform.name()), whole);
    case.set_classname(platform.name());
    suite.add_test_case(case);
    for l in lines {
        let status = if l.pass {
            TestCaseStatus::success()
        } else {
            failure(
                format!("{} failure(s)", l.failures.len()),
                l.failures.join("\n"),
            )
        };
        let mut case = TestCase::new(format!("{} {}", l.scenario, l.mode), status);
        case.set_classname(format!("native.{}", l.scenario));
        if let Some(us) = l.duration_micros {
            case.set_time(Duration::from_micros(us));
        }
        suite.add_test_case(case);
    }
    report.add_test_suite(suite);
    report
        .to_string()
        .map(String::into_bytes)
        .unwrap_or_default()
}

/// Counts of a layer manifest by kind, for the tests and the report.
pub fn layer_kinds(manifest: &scopebox_schema::receipt::LayerManifest) -> BTreeMap<String, usize> {
    let mut kinds = BTreeMap::new();
    for e in &manifest.entries {
        *kinds.entry(e.kind.clone()).or_insert(0) += 1;
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;
    use scopebox_receipts::archive::ArchiveFile;

    #[test]
    fn the_native_recipe_runs_the_native_matrix_against_the_locked_client() {
        let recipe = Recipe::parse(NATIVE_RECIPE).unwrap();
        let lock =
            Lock::load(&crate::toolchain::workspace_root().join(super::super::lock::DEFAULT_LOCK))
                .unwrap();
        assert_eq!(recipe.cmd[0], "native");
        assert_eq!(recipe.cmd[1], NATIVE_MATRIX_IN_IMAGE);
        assert_eq!(recipe.cmd[2], lock.clients[0].image_path);
    }

    /// The image made of a fake store: every file at its path with its mode and digest, the
    /// links as links, the matrix in place, nothing from a base image.
    #[test]
    fn the_native_image_holds_exactly_the_store_files_links_and_matrix() {
        let recipe = Recipe::parse(NATIVE_RECIPE).unwrap();
        let files = vec![
            StoreFile {
                image_path: "/scopebox/native/claude-code/claude".into(),
                mode: 0o555,
                bytes: b"\x7fELF fake client".to_vec(),
            },
            StoreFile {
                image_path: "/lib/x86_64-linux-gnu/libc.so.6".into(),
                mode: 0o755,
                bytes: b"libc".to_vec(),
            },
            StoreFile {
                image_path: "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2".into(),
                mode: 0o755,
                bytes: b"ld".to_vec(),
            },
        ];
        let links = vec![(
            "/lib64/ld-linux-x86-64.so.2".to_string(),
            "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2".to_string(),
        )];
        let matrix = b"{\"kind\":\"native\"}".to_vec();
        let candidate = [ArchiveFile {
            path: "bin/mcpscope".into(),
            mode: 0o755,
            bytes: b"c".to_vec(),
        }];
        let build = |files: &[StoreFile]| {
            image::build_with(
                &recipe,
                NATIVE_RECIPE,
                &image::Contents {
                    platform: Platform::LinuxAmd64,
                    candidate: &candidate,
                    runner: b"r",
                    sentinel: b"s",
                    matrix: &matrix,
                    witnesses: &[],
                },
                &native_extras(files, &links, &matrix),
            )
            .unwrap()
        };
        let img = build(&files);
        let entry = |p: &str| {
            img.layer_manifest
                .entries
                .iter()
                .find(|e| e.path == p)
                .unwrap_or_else(|| panic!("{p} not in the layer"))
                .clone()
        };
        for f in &files {
            let e = entry(&f.image_path);
            assert_eq!(e.kind, "file");
            assert_eq!(e.mode, format!("{:04o}", f.mode));
            assert_eq!(e.sha256.as_deref(), Some(sha256_hex(&f.bytes).as_str()));
            assert_eq!((e.uid, e.gid), (0, 0));
        }
        let link = entry("/lib64/ld-linux-x86-64.so.2");
        assert_eq!(link.kind, "symlink");
        assert_eq!(
            link.sha256.as_deref(),
            Some(sha256_hex(b"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2").as_str())
        );
        assert_eq!(
            entry(NATIVE_MATRIX_IN_IMAGE).sha256,
            Some(sha256_hex(&matrix))
        );
        assert_eq!(entry("/lib64").kind, "dir");
        assert_eq!(entry("/scopebox/native/claude-code").kind, "dir");
        // The layer really holds the link (tar symlink entry with its target).
        let mut archive = tar::Archive::new(img.layer.as_slice());
        let found = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap())
            .find(|e| e.path().unwrap().to_string_lossy() == "lib64/ld-linux-x86-64.so.2")
            .unwrap();
        assert_eq!(found.header().entry_type(), tar::EntryType::Symlink);
        assert_eq!(
            found.link_name().unwrap().unwrap().to_string_lossy(),
            "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
        );
        let kinds = layer_kinds(&img.layer_manifest);
        assert_eq!(kinds["symlink"], 1);
        // Content-addressed: the same inputs give the same image, another byte another one.
        assert_eq!(build(&files).id, img.id);
        let mut changed = files.clone();
        changed[1].bytes.push(b'!');
        assert_ne!(build(&changed).id, img.id);
        // Only recipe, harness, candidate and store paths: no base image.
        for e in &img.layer_manifest.entries {
            let known = recipe.directories.iter().any(|d| d.path == e.path)
                || e.path.starts_with("/scopebox/")
                || e.path.starts_with("/lib")
                || e.path == "/lib64";
            assert!(known, "{} is in the layer", e.path);
        }
    }

    #[test]
    fn each_client_gets_its_own_recipe_naming_its_binary() {
        assert_eq!(
            recipe_for("/scopebox/native/claude-code/claude").unwrap(),
            NATIVE_RECIPE
        );
        let codex = recipe_for("/scopebox/native/codex/codex").unwrap();
        let r = Recipe::parse(&codex).unwrap();
        assert_eq!(r.cmd[2], "/scopebox/native/codex/codex");
        assert_eq!(r.cmd[1], NATIVE_MATRIX_IN_IMAGE);
        assert_eq!(default_matrix("codex"), "harness/matrix/native-codex.json");
        assert!(crate::toolchain::workspace_root()
            .join(default_matrix("codex"))
            .is_file());
    }

    #[test]
    fn an_unnormalized_extra_path_is_refused() {
        let recipe = Recipe::parse(NATIVE_RECIPE).unwrap();
        let bad = [Extra {
            path: "/lib/../etc/passwd",
            mode: 0o644,
            payload: ExtraPayload::File(b"x"),
        }];
        let err = image::build_with(
            &recipe,
            NATIVE_RECIPE,
            &image::Contents {
                platform: Platform::LinuxAmd64,
                candidate: &[],
                runner: b"r",
                sentinel: b"s",
                matrix: b"{}",
                witnesses: &[],
            },
            &bad,
        )
        .unwrap_err();
        assert!(err.to_string().contains("normalized"), "{err}");
    }

    #[test]
    fn the_shipped_native_matrix_passes_the_runners_checks() {
        let bytes = std::fs::read(crate::toolchain::workspace_root().join(DEFAULT_MATRIX)).unwrap();
        let m: NativeMatrix = serde_json::from_slice(&bytes).unwrap();
        assert!(scopebox_harness_native_problems(&m).is_empty());
        assert!(m.scenarios.len() >= 24);
        let mut broken = m.clone();
        broken.scenarios[1].id = broken.scenarios[0].id.clone();
        assert_eq!(scopebox_harness_native_problems(&broken).len(), 1);
    }
}
