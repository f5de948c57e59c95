//! Helpers shared by the end-to-end tests: run the binary and capture everything, make
//! per-test directories, declare what a test needs (the engine: a failure under `CI=true`, an
//! ignored test elsewhere), ask the engine what carries a label, and keep the tests that plant
//! leftovers for `scopebox sweep` apart from every run (whose start-of-run sweep would take
//! them first).

use scopebox::engine::docker::DockerEngine;
use scopebox::engine::{Engine, Labelled};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one invocation of the binary did.
#[derive(Debug)]
pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Held shared by every invocation that reaches the engine, exclusively by a test that plants
/// leftovers of a dead run and sweeps them (`sweeping`): a concurrent run's start-of-run sweep
/// would otherwise remove them under the test's feet.
static ENGINE_SWEEPS: std::sync::RwLock<()> = std::sync::RwLock::new(());

thread_local! {
    /// Set while this thread holds `ENGINE_SWEEPS` exclusively (its own invocations then take
    /// no shared hold: that would deadlock).
    static SWEEPING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `test` with no other test's invocation of the binary in flight, nor starting.
pub fn sweeping<T>(test: impl FnOnce() -> T) -> T {
    let _alone = ENGINE_SWEEPS.write().unwrap_or_else(|e| e.into_inner());
    SWEEPING.set(true);
    let reset = Reset;
    let out = test();
    drop(reset);
    out
}

struct Reset;

impl Drop for Reset {
    fn drop(&mut self) {
        SWEEPING.set(false);
    }
}

/// The shared hold an invocation of the binary takes (none inside `sweeping`).
pub fn engine_hold() -> Option<std::sync::RwLockReadGuard<'static, ()>> {
    (!SWEEPING.get()).then(|| ENGINE_SWEEPS.read().unwrap_or_else(|e| e.into_inner()))
}

pub fn scopebox(args: &[&str], envs: &[(&str, &str)]) -> Outcome {
    let _hold = engine_hold();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_scopebox"));
    cmd.args(args).current_dir(workspace());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the scopebox binary runs");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("scopebox-e2e-")
        .tempdir()
        .expect("a temporary directory")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Whether the engine at `DOCKER_HOST` (else the default socket) answers a ping.
pub fn engine_answers() -> bool {
    let host = DockerEngine::host_from_env();
    DockerEngine::connect(&host)
        .ok()
        .is_some_and(|engine| runtime().block_on(engine.ping()).is_ok())
}

/// Whether the run is CI's (`CI=true`), where a missing engine fails instead of skipping.
pub fn under_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// What a test needs from the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Nothing but the binary (the engine address may even point nowhere).
    Nothing,
    /// The Docker engine: without one the test is reported as ignored (skipped), never as
    /// passed; under `CI=true` it runs and fails.
    Engine,
    /// The engine and the fetched native client: runs only with `SCOPEBOX_NATIVE_SUITE=1`
    /// (`.ci/run` fetches the client, then sets it), ignored otherwise, CI or not.
    NativeReference,
}

/// Whether the native suite was asked for (`SCOPEBOX_NATIVE_SUITE=1`).
pub fn native_suite() -> bool {
    std::env::var("SCOPEBOX_NATIVE_SUITE").as_deref() == Ok("1")
}

/// One test of the binary, named `module::function` as libtest would name it.
pub fn trial(name: &str, needs: Needs, test: fn(), engine: bool) -> libtest_mimic::Trial {
    let skipped = match needs {
        Needs::Nothing => false,
        Needs::Engine => !engine && !under_ci(),
        Needs::NativeReference => !native_suite(),
    };
    let run = move || {
        if needs != Needs::Nothing && !engine {
            return Err(format!(
                "the Docker engine at {} is required (CI=true makes its absence a failure)",
                DockerEngine::host_from_env()
            )
            .into());
        }
        test();
        Ok(())
    };
    let trial = libtest_mimic::Trial::test(name, run).with_ignored_flag(skipped);
    match needs {
        Needs::Nothing => trial,
        Needs::Engine => trial.with_kind("engine"),
        Needs::NativeReference => trial.with_kind("native"),
    }
}

/// Containers and volumes carrying `label` right now.
pub fn labelled(label: &str) -> Vec<Labelled> {
    let engine = DockerEngine::connect(&DockerEngine::host_from_env()).expect("engine client");
    runtime()
        .block_on(engine.list(label))
        .expect("listing by label")
}

/// Run an async engine operation to completion.
pub fn with_engine<T>(f: impl AsyncFnOnce(&DockerEngine) -> T) -> T {
    let engine = DockerEngine::connect(&DockerEngine::host_from_env()).expect("engine client");
    runtime().block_on(f(&engine))
}

/// `scopebox run --out BUNDLE --matrix MATRIX --json EXTRA…` against the engine from the
/// environment.
pub fn run_matrix(bundle: &Path, matrix: &Path, extra: &[&str]) -> Outcome {
    let mut args = vec![
        "run",
        "--out",
        bundle.to_str().expect("a UTF-8 bundle path"),
        "--matrix",
        matrix.to_str().expect("a UTF-8 matrix path"),
        "--json",
    ];
    args.extend_from_slice(extra);
    scopebox(&args, &[])
}

/// The first `n` cases of the Claude Code matrix, written to `dir/small.json`.
pub fn small_matrix(dir: &Path, n: usize) -> PathBuf {
    let path = workspace().join("harness/matrix/claude-code.json");
    let mut matrix: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("the claude-code matrix")).unwrap();
    let cases = matrix["cases"].as_array_mut().unwrap();
    assert!(cases.len() >= n, "the matrix has fewer than {n} cases");
    cases.truncate(n);
    matrix["name"] = "e2e-small".into();
    let out = dir.join("small.json");
    std::fs::write(&out, serde_json::to_vec_pretty(&matrix).unwrap()).unwrap();
    out
}

/// `runId` from a `--json` summary on stdout.
pub fn run_id(stdout: &str) -> String {
    let summary: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is one JSON summary ({e}): {stdout:?}"));
    summary["runId"].as_str().expect("runId").to_string()
}

/// How long a reaper whose run ended by itself may take to exit: it does so on the run's word,
/// at once; only a reaper that never heard it (or never exits) reaches this bound.
const REAPER_EXIT_BOUND: std::time::Duration = std::time::Duration::from_secs(30);

/// The pids of the reapers of run `run_id` (`scopebox __reap --run-id <id>`) running now. A
/// zombie, whose command line is gone, is not one.
pub fn reapers_of(run_id: &str) -> Vec<u32> {
    let wanted = [
        scopebox::run::REAP_COMMAND.as_bytes(),
        b"--run-id",
        run_id.as_bytes(),
    ];
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        if args.windows(3).any(|w| w == wanted) {
            pids.push(pid);
        }
    }
    pids
}

/// The session of process `pid` (the sixth field of `/proc/<pid>/stat`).
pub fn session_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid pgrp session …": the comm may hold spaces, not a ')'-free tail.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(3)?.parse().ok()
}

/// Waits until no reaper of run `run_id` runs: a run that ended by itself (passed, failed,
/// interrupted, or kept its objects) told its reaper so, and the reaper exits on that word.
pub fn assert_no_reaper_remains(run_id: &str) {
    let since = std::time::Instant::now();
    loop {
        let left = reapers_of(run_id);
        if left.is_empty() {
            return;
        }
        assert!(
            since.elapsed() < REAPER_EXIT_BOUND,
            "the reaper of run {run_id} outlived it by {} s: pid(s) {left:?}",
            REAPER_EXIT_BOUND.as_secs()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
