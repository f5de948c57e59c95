//! The native reference in the box (`scopebox-runner native MATRIX CLIENT`): for every scenario
//! of a native matrix (`scopebox_schema::native`) and each of its runs (`list`, `get NAME`,
//! `headless`), in matrix order: lay out the fixture and run mcpscope on it as an ordinary
//! witnessed candidate case (`case::run_case`, all the candidate's rules, recorded under
//! `inventory/`); lay the fixture out afresh (the client rewrites `~/.claude.json`, so each
//! program sees the declared bytes); then run the real client with exactly the matrix's
//! environment, cwd and argv, under the kernel witness and the per-run deadline, with the
//! loopback listeners (`listen`) logging what it asked for, and record its exit, output (capped
//! at `CLIENT_OUTPUT_LIMIT`), witness window, sentinel marker and listener log. The formats are
//! `scopebox_schema::native_capture`'s; `native/index.json` is written last.
//!
//! The client is expected to execute the sentinels: nothing here applies the candidate's
//! judge to it, or judges it at all — the orchestrator and the verifier derive each run's
//! observation and the differential verdict from these raw records. A run the runner could not
//! complete is recorded as such (`completed: false` and why), never skipped. It must never
//! write outside the evidence directory, the fixture roots and the scratch directory.

use crate::listen::Listeners;
use crate::watch::Watch;
use crate::{boundary, case, evidence_file, fixture, HarnessError, IoContext, Layout};
use scopebox_schema::digest::{sha256_file, sha256_hex};
use scopebox_schema::evidence::{RunError, BOUNDARY_FILE, ERROR_FILE};
use scopebox_schema::matrix::Matrix;
use scopebox_schema::native::{Mode, NativeMatrix, Run, Scenario, KIND};
use scopebox_schema::native_capture::{
    CapturedOutput, ClientRecord, NativeIndex, NativeRunEntry, CLIENT_OUTPUT_LIMIT,
    CLIENT_RECORD_FILE, CLIENT_STDERR_FILE, CLIENT_STDOUT_FILE, CLIENT_WITNESS_FILE, HTTP_LOG_FILE,
    INDEX_FILE, INVENTORY_DIR, NATIVE_DIR, SENTINEL_FILE,
};
use scopebox_schema::native_observe;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::run::RunStatus;

/// Most bytes of the sentinel marker kept per run (each firing is one short line).
pub const MARKER_LIMIT: usize = 256 * 1024;

/// Which runs this container does: scenario `i` (0-based, matrix order) when `i % count ==
/// index`. The records of a run never depend on it; only which container makes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// `I/N` with `I < N`.
    pub fn parse(text: &str) -> Option<Shard> {
        let (i, n) = text.split_once('/')?;
        let (index, count) = (i.parse().ok()?, n.parse().ok()?);
        (count > 0 && index < count).then_some(Shard { index, count })
    }

    fn takes(&self, i: usize) -> bool {
        i % self.count == self.index
    }
}

/// Reads, parses and checks a native matrix; on failure the `RunError` to record.
pub fn load_matrix(path: &Path) -> Result<(NativeMatrix, String), RunError> {
    crate::run::load_checked(path, problems)
}

/// What the runner needs to hold for the records to be safe to write and meaningful.
pub fn problems(m: &NativeMatrix) -> Vec<String> {
    let mut out = Vec::new();
    if m.schema_version != 1 {
        out.push(format!("schemaVersion is {}, expected 1", m.schema_version));
    }
    if m.kind != KIND {
        out.push(format!("kind is {:?}, expected {KIND:?}", m.kind));
    }
    if m.scenarios.is_empty() {
        out.push("the matrix has no scenarios".into());
    }
    if m.defaults.deadline_s == 0 {
        out.push("defaults.deadlineS is 0".into());
    }
    let mut seen = std::collections::BTreeSet::new();
    for s in &m.scenarios {
        let safe = !s.id.is_empty()
            && s.id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !safe {
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
        for r in &s.runs {
            if (r.mode == Mode::Get) != r.name.is_some() {
                out.push(format!(
                    "scenario {}: a get run needs a name and only a get run has one",
                    s.id
                ));
            }
        }
    }
    out
}

/// `modes[mode]` with `{name}` replaced by the run's name.
pub fn client_args(matrix: &NativeMatrix, run: &Run) -> Vec<String> {
    let template = match run.mode {
        Mode::List => &matrix.modes.list,
        Mode::Get => &matrix.modes.get,
        Mode::Headless => &matrix.modes.headless,
    };
    template
        .iter()
        .map(|a| a.replace("{name}", run.name.as_deref().unwrap_or("")))
        .collect()
}

/// The client's whole environment: the matrix's plus the scenario's, sorted by name.
pub fn client_env(matrix: &NativeMatrix, scenario: &Scenario) -> Vec<(String, String)> {
    let mut env = matrix.environment.clone();
    if let Some(extra) = &scenario.env {
        env.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    env.into_iter().collect()
}

/// The kept prefix of a stream and its description (`file` named, sha256 of the kept bytes).
pub fn cap_output(file: &str, bytes: &[u8]) -> (Vec<u8>, CapturedOutput) {
    let kept = &bytes[..bytes.len().min(CLIENT_OUTPUT_LIMIT)];
    (
        kept.to_vec(),
        CapturedOutput {
            file: file.to_string(),
            sha256: sha256_hex(kept),
            total_bytes: bytes.len() as u64,
            truncated: bytes.len() > CLIENT_OUTPUT_LIMIT,
        },
    )
}

/// The whole native run. Never panics on bad input; every outcome is a `RunStatus`:
/// `Passed` when every run was completed and recorded (the records are judged elsewhere),
/// `Failed` when one was not, `MatrixRefused`, `HarnessFailed` (error.json says why).
pub fn run(
    layout: &Layout,
    client: &Path,
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
    match run_matrix(
        layout,
        client,
        shard,
        &matrix,
        &matrix_sha256,
        watch,
        progress,
    ) {
        Ok(status) => status,
        Err(e) => {
            let message = format!("failed to {e}: {}", e.source);
            let _ = writeln!(progress, "error: {message}");
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
    client: &Path,
    shard: Shard,
    matrix: &NativeMatrix,
    matrix_sha256: &str,
    watch: &mut Watch,
    progress: &mut dyn Write,
) -> Result<RunStatus, HarnessError> {
    let native_dir = layout.evidence_dir.join(NATIVE_DIR);
    std::fs::create_dir_all(&native_dir).at("create", &native_dir)?;
    let inner = boundary::observe(layout, watch);
    evidence_file::write_json(&layout.evidence_dir.join(BOUNDARY_FILE), &inner)?;
    let _ = writeln!(
        progress,
        "boundary uid={} gid={} capEff={} noNewPrivs={} seccomp={} net={}",
        inner.uid,
        inner.gid,
        inner.cap_eff,
        inner.no_new_privs,
        inner.seccomp,
        inner.net_interfaces.join(","),
    );
    let client_sha256 = sha256_file(client).at("hash", client)?;
    let machine = rustix::system::uname()
        .machine()
        .to_string_lossy()
        .into_owned();
    let _ = writeln!(
        progress,
        "native client {} sha256 {client_sha256} on {machine}",
        client.display()
    );
    let listeners = Listeners::start(
        matrix.model_api.port,
        matrix.model_api.status,
        &matrix.listeners,
    )
    .at("listen on", Path::new("127.0.0.1"))?;
    // The candidate judge's matrix for the inventory runs: no canaries (the native fixtures
    // plant none), no cases of its own.
    let inventory_matrix = Matrix {
        schema_version: 1,
        name: format!("{}-inventory", matrix.name),
        canaries: vec![],
        cases: vec![],
    };

    let mut runs = Vec::new();
    let mut all_completed = true;
    for (i, scenario) in matrix.scenarios.iter().enumerate() {
        if !shard.takes(i) {
            continue;
        }
        for r in &scenario.runs {
            let dir_name = format!("{}/{}", scenario.id, r.mode.as_str());
            let dir = native_dir.join(&scenario.id).join(r.mode.as_str());
            std::fs::create_dir_all(&dir).at("create", &dir)?;
            let done = one_run(
                layout,
                client,
                matrix,
                &inventory_matrix,
                scenario,
                r,
                &dir,
                &listeners,
                watch,
            )?;
            let micros = done.as_ref().map(|d| d.duration_micros).unwrap_or(0);
            let error = done.err();
            let _ = writeln!(
                progress,
                "case {dir_name} {} {micros}",
                if error.is_none() { "pass" } else { "fail" }
            );
            if let Some(e) = &error {
                let _ = writeln!(progress, "  {e}");
            }
            all_completed &= error.is_none();
            runs.push(NativeRunEntry {
                scenario: scenario.id.clone(),
                mode: r.mode.as_str().to_string(),
                name: r.name.clone(),
                dir: dir_name,
                completed: error.is_none(),
                error,
            });
        }
    }
    fixture::clear(layout)?;
    let index = NativeIndex {
        matrix: matrix.name.clone(),
        matrix_sha256: matrix_sha256.to_string(),
        client: matrix.client.id.clone(),
        client_version: matrix.client.version.clone(),
        client_path: client.to_string_lossy().into_owned(),
        client_sha256,
        machine,
        runs,
    };
    evidence_file::write_json(&layout.evidence_dir.join(INDEX_FILE), &index)?;
    let _ = writeln!(
        progress,
        "summary {} run(s) recorded{}",
        index.runs.len(),
        if all_completed {
            ""
        } else {
            ", some NOT completed"
        }
    );
    Ok(if all_completed {
        RunStatus::Passed
    } else {
        RunStatus::Failed
    })
}

/// What a completed client run took.
struct Done {
    duration_micros: u64,
}

/// One scenario × mode: the inventory, then the client. `Err(text)` is a run the runner could
/// not complete (recorded as such); only the harness's own I/O failures are raised.
#[allow(clippy::too_many_arguments)]
fn one_run(
    layout: &Layout,
    client: &Path,
    matrix: &NativeMatrix,
    inventory_matrix: &Matrix,
    scenario: &Scenario,
    r: &Run,
    dir: &Path,
    listeners: &Listeners,
    watch: &mut Watch,
) -> Result<Result<Done, String>, HarnessError> {
    let cwd_logical = native_observe::client_cwd(matrix, scenario).to_string();

    // The inventory, as a candidate case (it clears and lays out the tree itself), judged by
    // the shared rules the orchestrator and the verifier recompute (`judge_inventory`: every
    // candidate invariant, exit 0 or 1 — 1 is mcpscope's "incomplete" for a malformed file).
    let case = native_observe::inventory_case(matrix, scenario, r);
    let mut outcome = case::run_case(layout, inventory_matrix, &case, watch)?;
    if let Some(w) = &outcome.witness {
        outcome.record.verdict = native_observe::judge_inventory(
            matrix,
            scenario,
            r,
            &outcome.stdout,
            &outcome.stderr,
            &outcome.record,
            w,
        );
    }
    case::write_run(&dir.join(INVENTORY_DIR), &outcome)?;

    // The declared bytes again, for the client.
    fixture::clear(layout)?;
    fixture::lay_out(layout, &scenario.fixture)?;
    let mut problems = Vec::new();
    if !case::remove_marker(layout) {
        problems.push("the sentinel marker of an earlier run could not be removed".to_string());
    }
    // The client's TMPDIR starts empty every run, as on the host (a private tmpfs per run):
    // nothing an earlier client left there can change what this one does.
    if let Err(e) = fixture::clear_scratch(layout) {
        problems.push(format!("failed to {e}: {}", e.source));
    }
    // Anything a stray connection logged belongs to no run.
    let _ = listeners.take();

    let args = client_args(matrix, r);
    let env = client_env(matrix, scenario);
    let cwd = layout.host(&cwd_logical);
    let mut cmd = Command::new(client);
    cmd.args(&args)
        .current_dir(&cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)));
    let deadline = Duration::from_secs(u64::from(matrix.defaults.deadline_s));
    let (captured, witness) = case::run_under(watch, cmd, deadline)?;
    let captured = match captured {
        Ok(c) => c,
        Err(e) => {
            problems.push(format!("failed to start the client: {e}"));
            case::Captured::not_started("the client", &e)
        }
    };
    let http = listeners.take();
    let marker = read_marker(&layout.sentinel_marker);
    if !case::remove_marker(layout) {
        problems.push("the sentinel marker could not be removed after the run".to_string());
    }

    let (stdout, stdout_info) = cap_output(CLIENT_STDOUT_FILE, &captured.stdout);
    let (stderr, stderr_info) = cap_output(CLIENT_STDERR_FILE, &captured.stderr);
    let mut argv = vec![client.to_string_lossy().into_owned()];
    argv.extend(args);
    let record = ClientRecord {
        scenario: scenario.id.clone(),
        mode: r.mode.as_str().to_string(),
        argv,
        cwd: cwd_logical,
        env: env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        exit_code: captured.exit_code,
        signal: captured.signal,
        timed_out: captured.timed_out,
        duration_micros: captured.duration.as_micros() as u64,
        stdout: stdout_info,
        stderr: stderr_info,
    };
    evidence_file::write(&dir.join(CLIENT_STDOUT_FILE), &stdout)?;
    evidence_file::write(&dir.join(CLIENT_STDERR_FILE), &stderr)?;
    evidence_file::write(&dir.join(SENTINEL_FILE), &marker)?;
    evidence_file::write_json(&dir.join(HTTP_LOG_FILE), &http)?;
    match &witness {
        Some(w) => {
            if w.events_dropped > 0 {
                problems.push(format!(
                    "the kernel witness dropped {} event(s) beyond its limit: sentinel executions may be missing from witness.json",
                    w.events_dropped
                ));
            }
            evidence_file::write_json(&dir.join(CLIENT_WITNESS_FILE), w)?;
        }
        None => problems.push("the client ran without the kernel witness".to_string()),
    }
    evidence_file::write_json(&dir.join(CLIENT_RECORD_FILE), &record)?;
    if problems.is_empty() {
        Ok(Ok(Done {
            duration_micros: record.duration_micros,
        }))
    } else {
        Ok(Err(problems.join("; ")))
    }
}

/// Removes everything inside `dir` (not `dir` itself).
/// The marker's bytes (at most `MARKER_LIMIT`), empty when the sentinel never fired.
fn read_marker(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut bytes = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(MARKER_LIMIT as u64).read_to_end(&mut bytes);
    }
    bytes
}

/// For the host tests: where a rebased run's records are.
pub fn run_dir(layout: &Layout, scenario: &str, mode: Mode) -> PathBuf {
    layout
        .evidence_dir
        .join(NATIVE_DIR)
        .join(scenario)
        .join(mode.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    /// A one-scenario native matrix for `client`-like programs; `deadline_s` per run.
    fn matrix(deadline_s: u32, model: u16, mcp: u16) -> String {
        let m = serde_json::json!({
            "schemaVersion": 1, "kind": "native", "name": "t",
            "client": {"id": "claude-code", "version": "0", "lock": "x"},
            "environment": {"HOME": "/home/node", "PATH": "/usr/bin:/bin", "A": "1"},
            "modelApi": {"port": model, "status": 400},
            "listeners": [mcp],
            "sentinel": "/scopebox/bin/scopebox-sentinel",
            "tagArgPrefix": "--scopebox-tag=",
            "modes": {"list": ["list"], "get": ["get", "{name}"], "headless": ["headless"]},
            "defaults": {"cwd": "/work/proj", "root": "/work/proj", "deadlineS": deadline_s},
            "scenarios": [{
                "id": "s-1", "description": "", "behaviours": [],
                "env": {"B": "2"},
                "fixture": [{"kind": "file", "path": "/work/proj/.mcp.json", "text": "{}"}],
                "declarations": [],
                "runs": [
                    {"mode": "list", "expect": {"exitCode": 0, "launched": [], "listed": []}},
                    {"mode": "get", "name": "p1", "expect": {"exitCode": 0, "launched": [], "listed": []}},
                    {"mode": "headless", "expect": {"exitCode": 0, "launched": [], "listed": []}}
                ]
            }]
        });
        serde_json::to_string(&m).unwrap()
    }

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn output_beyond_the_limit_is_counted_not_kept() {
        let big = vec![b'x'; CLIENT_OUTPUT_LIMIT + 10];
        let (kept, info) = cap_output("client.stdout", &big);
        assert_eq!(kept.len(), CLIENT_OUTPUT_LIMIT);
        assert!(info.truncated);
        assert_eq!(info.total_bytes, (CLIENT_OUTPUT_LIMIT + 10) as u64);
        assert_eq!(info.sha256, sha256_hex(&kept));
        let (kept, info) = cap_output("client.stderr", b"hi");
        assert_eq!(kept, b"hi");
        assert!(!info.truncated);
        assert_eq!(info.file, "client.stderr");
    }

    #[test]
    fn shards_split_scenarios_and_parse_strictly() {
        assert_eq!(Shard::parse("1/2"), Some(Shard { index: 1, count: 2 }));
        assert_eq!(Shard::parse("2/2"), None);
        assert_eq!(Shard::parse("0/0"), None);
        assert_eq!(Shard::parse("x"), None);
        let s = Shard::parse("1/2").unwrap();
        assert!(!s.takes(0) && s.takes(1) && !s.takes(2) && s.takes(3));
        assert!((0..5).all(|i| Shard::ALL.takes(i)));
    }

    #[test]
    fn every_run_records_the_client_exactly_as_started_and_the_requests_it_made() {
        let (_d, mut l) = crate::scratch_layout();
        let base = l.scratch_dir.parent().unwrap().to_path_buf();
        let (model, mcp) = (free_port(), free_port());
        std::fs::write(&l.matrix_path, matrix(30, model, mcp)).unwrap();
        // The "inventory" prints nothing and exits 0; the "client" reports its argv, env
        // and cwd, asks the MCP listener for a path, and fires the (fake) marker.
        l.candidate_bin = script(&base, "inv", "exit 0");
        let marker = l.sentinel_marker.display().to_string();
        let client = script(
            &base,
            "client",
            &format!(
                "echo \"argv=$*\"; env | sort; pwd >&2\n\
                 mkdir -p $(dirname {marker}); echo fired-$1 >> {marker}\n\
                 exit 7"
            ),
        );
        let mut progress = Vec::new();
        let status = run(
            &l,
            &client,
            Shard::ALL,
            &mut Watch::Unwatched,
            &mut progress,
        );
        let progress = String::from_utf8(progress).unwrap();
        // Unwatched (no kernel witness in a unit test): recorded, but not completed.
        assert_eq!(status, RunStatus::Failed, "{progress}");
        let index: NativeIndex =
            serde_json::from_slice(&std::fs::read(l.evidence_dir.join(INDEX_FILE)).unwrap())
                .unwrap();
        assert_eq!(index.runs.len(), 3);
        assert_eq!(index.runs[1].name.as_deref(), Some("p1"));
        assert_eq!(index.runs[1].dir, "s-1/get");
        assert!(!index.runs[0].completed);
        assert!(index.runs[0]
            .error
            .as_deref()
            .unwrap()
            .contains("without the kernel witness"));
        assert_eq!(index.client_sha256, sha256_file(&client).unwrap());
        let dir = run_dir(&l, "s-1", Mode::Get);
        let rec: ClientRecord =
            serde_json::from_slice(&std::fs::read(dir.join(CLIENT_RECORD_FILE)).unwrap()).unwrap();
        assert_eq!(rec.exit_code, Some(7));
        assert_eq!(rec.argv[1..], ["get", "p1"]);
        assert_eq!(
            rec.env,
            ["A=1", "B=2", "HOME=/home/node", "PATH=/usr/bin:/bin"]
        );
        assert_eq!(rec.cwd, "/work/proj");
        let stdout = std::fs::read_to_string(dir.join(CLIENT_STDOUT_FILE)).unwrap();
        assert!(stdout.starts_with("argv=get p1\n"), "{stdout}");
        assert_eq!(rec.stdout.sha256, sha256_hex(stdout.as_bytes()));
        // Exactly the environment given (sh adds PWD, SHLVL and _ itself).
        let names: Vec<&str> = stdout
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once('=').map(|(k, _)| k))
            .filter(|k| !["PWD", "SHLVL", "_", "OLDPWD"].contains(k))
            .collect();
        assert_eq!(names, ["A", "B", "HOME", "PATH"], "{stdout}");
        let stderr = std::fs::read_to_string(dir.join(CLIENT_STDERR_FILE)).unwrap();
        assert_eq!(stderr.trim(), l.host("/work/proj").display().to_string());
        // The marker of this run only, then removed.
        assert_eq!(
            std::fs::read(dir.join(SENTINEL_FILE)).unwrap(),
            b"fired-get\n"
        );
        assert!(!l.sentinel_marker.exists());
        // The inventory ran as a candidate case on the same tree.
        let inv = dir.join(INVENTORY_DIR).join("record.json");
        let inv: scopebox_schema::evidence::CaseRecord =
            serde_json::from_slice(&std::fs::read(inv).unwrap()).unwrap();
        assert_eq!(inv.argv[1..], [l.arg("/work/proj"), "--json".to_string()]);
        assert_eq!(inv.exit_code, Some(0));
        assert!(dir.join(HTTP_LOG_FILE).is_file());
    }

    #[test]
    fn every_client_run_starts_with_an_empty_tmpdir() {
        let (_d, mut l) = crate::scratch_layout();
        let base = l.scratch_dir.parent().unwrap().to_path_buf();
        std::fs::write(&l.matrix_path, matrix(30, free_port(), free_port())).unwrap();
        l.candidate_bin = script(&base, "inv", "exit 0");
        let tmp = l.scratch_dir.display().to_string();
        // Prints what it finds in TMPDIR, then leaves a file and a directory there.
        let client = script(
            &base,
            "client",
            &format!("ls -A {tmp}; touch {tmp}/left-$1; mkdir -p {tmp}/d-$1/x"),
        );
        let mut progress = Vec::new();
        run(
            &l,
            &client,
            Shard::ALL,
            &mut Watch::Unwatched,
            &mut progress,
        );
        for mode in [Mode::List, Mode::Get, Mode::Headless] {
            let out =
                std::fs::read_to_string(run_dir(&l, "s-1", mode).join(CLIENT_STDOUT_FILE)).unwrap();
            assert_eq!(out, "", "{mode:?} saw {out:?}");
        }
    }

    #[test]
    fn the_deadline_kills_a_client_that_hangs_and_says_so() {
        let (_d, mut l) = crate::scratch_layout();
        let base = l.scratch_dir.parent().unwrap().to_path_buf();
        std::fs::write(&l.matrix_path, matrix(1, free_port(), free_port())).unwrap();
        l.candidate_bin = script(&base, "inv", "exit 1");
        let client = script(&base, "client", "sleep 60 & sleep 60");
        let mut progress = Vec::new();
        run(
            &l,
            &client,
            Shard::ALL,
            &mut Watch::Unwatched,
            &mut progress,
        );
        let dir = run_dir(&l, "s-1", Mode::List);
        let rec: ClientRecord =
            serde_json::from_slice(&std::fs::read(dir.join(CLIENT_RECORD_FILE)).unwrap()).unwrap();
        assert!(rec.timed_out);
        assert_eq!(rec.signal, Some(9));
        assert_eq!(rec.exit_code, None);
        // The inventory still ran and was recorded first.
        let inv: scopebox_schema::evidence::CaseRecord = serde_json::from_slice(
            &std::fs::read(dir.join(INVENTORY_DIR).join("record.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(inv.exit_code, Some(1));
    }

    #[test]
    fn a_matrix_with_unsafe_ids_or_runs_out_of_order_is_refused() {
        let mut m: NativeMatrix = serde_json::from_str(&matrix(30, 1, 2)).unwrap();
        assert!(problems(&m).is_empty());
        m.scenarios[0].id = "../x".into();
        m.scenarios[0].runs.swap(0, 2);
        let p = problems(&m);
        assert_eq!(p.len(), 2, "{p:?}");
        let (_d, l) = crate::scratch_layout();
        std::fs::write(&l.matrix_path, serde_json::to_vec(&m).unwrap()).unwrap();
        let mut progress = Vec::new();
        let status = run(
            &l,
            Path::new("/bin/true"),
            Shard::ALL,
            &mut Watch::Unwatched,
            &mut progress,
        );
        assert_eq!(status, RunStatus::MatrixRefused);
        assert!(l.evidence_dir.join(ERROR_FILE).is_file());
    }
}
