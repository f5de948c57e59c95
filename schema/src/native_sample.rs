//! A native evidence directory for tests (feature `native-sample`): the records the in-box
//! runner writes (`native_capture`), built around what the real client printed and fired when
//! observed on this project's host (`schema/testdata/native-probe.json`: Claude Code 2.1.327
//! run by `harness/native/observe.py probe` over seven scenarios of the real matrix, with
//! mcpscope's real inventory of each tree) — its stdout and stderr bytes, exit codes, sentinel
//! marker lines and listener requests verbatim; the witness records, client records and
//! inventory records synthesized around them exactly as the runner's formats say. Shared by the
//! schema's unit tests and the verifier's tests and self-test, so both read the same evidence.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::digest::sha256_hex;
use crate::evidence::{CaseRecord, FixtureObservation};
use crate::native::{NativeMatrix, Run, Scenario};
use crate::native_capture::{
    CapturedOutput, ClientRecord, HttpLog, HttpRequest, ListenerLog, NativeIndex, NativeRunEntry,
    CLIENT_RECORD_FILE, CLIENT_STDERR_FILE, CLIENT_STDOUT_FILE, CLIENT_WITNESS_FILE, HTTP_LOG_FILE,
    INDEX_FILE, NATIVE_DIR, SENTINEL_FILE,
};
use crate::native_observe::{
    client_argv, client_cwd, client_env, inventory_case, judge_inventory, run_dir, LockView,
};
use crate::witness::{
    WitnessEvent, WitnessLevel, WitnessRecord, WitnessSyscall, MECHANISM_SECCOMP_USER_NOTIFY,
};

/// The sub-matrix the probe ran (seven scenarios of `harness/matrix/native-claude-code.json`).
pub const MATRIX: &[u8] = include_bytes!("../testdata/native-matrix.json");
/// A copy of `images/native.lock.json`.
pub const LOCK: &[u8] = include_bytes!("../testdata/native.lock.json");
/// What the real client did in each run (observe.py's raw records, trimmed).
const PROBE: &str = include_str!("../testdata/native-probe.json");

/// The runner's pid in every synthesized witness record.
pub const RUNNER_PID: i32 = 7;

/// A whole evidence directory: path below it → bytes.
#[derive(Debug, Clone)]
pub struct Sample {
    pub matrix: Vec<u8>,
    pub lock: Vec<u8>,
    pub files: BTreeMap<String, Vec<u8>>,
}

impl Sample {
    /// The `read` closure `judge_evidence` takes.
    pub fn reader(&self) -> impl Fn(&str) -> Option<Vec<u8>> + '_ {
        move |p: &str| self.files.get(p).cloned()
    }

    /// `native/<dir>/<file>`.
    pub fn path(dir: &str, file: &str) -> String {
        format!("{NATIVE_DIR}/{dir}/{file}")
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProbeRun {
    scenario: String,
    mode: String,
    exit_code: i32,
    seconds: f64,
    stdout: String,
    stderr: String,
    sentinel: Vec<String>,
    http: Vec<ProbeRequest>,
    inventory: ProbeInventory,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProbeRequest {
    role: String,
    port: u16,
    method: String,
    path: String,
    body_bytes: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProbeInventory {
    exit_code: i32,
    stdout: String,
    stderr: String,
}

fn json(v: &impl serde::Serialize) -> Vec<u8> {
    serde_json::to_vec_pretty(v).expect("records serialize")
}

/// The evidence directory of the probe's runs on linux/amd64.
pub fn sample() -> Sample {
    let matrix: NativeMatrix = serde_json::from_slice(MATRIX).expect("sample matrix");
    let lock = LockView::parse(LOCK).expect("sample lock");
    let (client, platform) = lock
        .entry(&matrix.client.id, "linux/amd64")
        .expect("lock entry");
    let client_path = client.image_path.clone();
    let probe: Vec<ProbeRun> = serde_json::from_str(PROBE).expect("sample probe");
    let mut files = BTreeMap::new();
    let mut entries = Vec::new();
    for scenario in &matrix.scenarios {
        for run in &scenario.runs {
            let p = probe
                .iter()
                .find(|p| p.scenario == scenario.id && p.mode == run.mode.as_str())
                .expect("a probe record for every run");
            let dir = run_dir(scenario, run);
            write_run(&matrix, scenario, run, &client_path, p, &mut files);
            entries.push(NativeRunEntry {
                scenario: scenario.id.clone(),
                mode: run.mode.as_str().to_string(),
                name: run.name.clone(),
                dir,
                completed: true,
                error: None,
            });
        }
    }
    let index = NativeIndex {
        matrix: matrix.name.clone(),
        matrix_sha256: sha256_hex(MATRIX),
        client: matrix.client.id.clone(),
        client_version: matrix.client.version.clone(),
        client_path,
        client_sha256: platform.binary.sha256.clone(),
        machine: "x86_64".to_string(),
        runs: entries,
    };
    files.insert(INDEX_FILE.to_string(), json(&index));
    Sample {
        matrix: MATRIX.to_vec(),
        lock: LOCK.to_vec(),
        files,
    }
}

fn exec(seq: u64, pid: i32, ppid: i32, path: &str, argc: u32) -> WitnessEvent {
    WitnessEvent {
        seq,
        syscall: WitnessSyscall::Execve,
        pid,
        ppid: Some(ppid),
        path: Some(path.to_string()),
        path_error: None,
        dirfd: None,
        dirfd_target: None,
        argc: Some(argc),
        flags: None,
    }
}

fn clone_event(seq: u64, pid: i32, ppid: i32) -> WitnessEvent {
    WitnessEvent {
        seq,
        syscall: WitnessSyscall::Clone,
        pid,
        ppid: Some(ppid),
        path: None,
        path_error: None,
        dirfd: None,
        dirfd_target: None,
        argc: None,
        flags: Some(0x1200011),
    }
}

fn witness_record(program: &str, events: Vec<WitnessEvent>) -> WitnessRecord {
    WitnessRecord {
        mechanism: MECHANISM_SECCOMP_USER_NOTIFY.to_string(),
        level: WitnessLevel::Native,
        witness_machine: "x86_64".to_string(),
        runner_pid: RUNNER_PID,
        program: program.to_string(),
        events,
        events_dropped: 0,
        survivors: Vec::new(),
        sentinel_reports: Vec::new(),
        reports_dropped: 0,
    }
}

fn write_run(
    matrix: &NativeMatrix,
    scenario: &Scenario,
    run: &Run,
    client_path: &str,
    p: &ProbeRun,
    files: &mut BTreeMap<String, Vec<u8>>,
) {
    let dir = run_dir(scenario, run);
    let put = |files: &mut BTreeMap<String, Vec<u8>>, name: &str, bytes: Vec<u8>| {
        files.insert(Sample::path(&dir, name), bytes);
    };
    let stdout = p.stdout.as_bytes().to_vec();
    let stderr = p.stderr.as_bytes().to_vec();
    let captured = |file: &str, bytes: &[u8]| CapturedOutput {
        file: file.to_string(),
        sha256: sha256_hex(bytes),
        total_bytes: bytes.len() as u64,
        truncated: false,
    };
    let client = ClientRecord {
        scenario: scenario.id.clone(),
        mode: run.mode.as_str().to_string(),
        argv: client_argv(matrix, run, client_path),
        cwd: client_cwd(matrix, scenario).to_string(),
        env: client_env(matrix, scenario),
        exit_code: Some(p.exit_code),
        signal: None,
        timed_out: false,
        duration_micros: (p.seconds * 1e6) as u64,
        stdout: captured(CLIENT_STDOUT_FILE, &stdout),
        stderr: captured(CLIENT_STDERR_FILE, &stderr),
    };
    put(files, CLIENT_RECORD_FILE, json(&client));
    put(files, CLIENT_STDOUT_FILE, stdout);
    put(files, CLIENT_STDERR_FILE, stderr);

    // The marker as the sentinels wrote it; the witness saw each of them exec'd by the client.
    let mut marker = String::new();
    let mut events = vec![
        clone_event(1, RUNNER_PID, 1),
        exec(2, 20, RUNNER_PID, client_path, client.argv.len() as u32),
    ];
    let mut seq = 3;
    for line in &p.sentinel {
        marker.push_str(line);
        marker.push('\n');
        let pid: i32 = line
            .strip_prefix("pid=")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("a probe marker line has a pid");
        events.push(clone_event(seq, 20, RUNNER_PID));
        events.push(exec(seq + 1, pid, 20, &matrix.sentinel, 2));
        seq += 2;
    }
    put(files, SENTINEL_FILE, marker.into_bytes());
    put(
        files,
        CLIENT_WITNESS_FILE,
        json(&witness_record(client_path, events)),
    );

    let mut model = ListenerLog {
        port: matrix.model_api.port,
        requests: Vec::new(),
        requests_dropped: 0,
    };
    let mut listeners: BTreeMap<String, ListenerLog> = matrix
        .listeners
        .iter()
        .map(|port| {
            (
                port.to_string(),
                ListenerLog {
                    port: *port,
                    requests: Vec::new(),
                    requests_dropped: 0,
                },
            )
        })
        .collect();
    for (order, r) in p.http.iter().enumerate() {
        let request = HttpRequest {
            order: order as u32,
            method: r.method.clone(),
            path: r.path.clone(),
            body_bytes: r.body_bytes,
        };
        if r.role == "model-api" {
            model.requests.push(request);
        } else if let Some(log) = listeners.get_mut(&r.port.to_string()) {
            log.requests.push(request);
        }
    }
    put(
        files,
        HTTP_LOG_FILE,
        json(&HttpLog {
            model_api: model,
            listeners,
        }),
    );

    // mcpscope over the same tree.
    let case = inventory_case(matrix, scenario, run);
    let inv_out = p.inventory.stdout.as_bytes().to_vec();
    let inv_err = p.inventory.stderr.as_bytes().to_vec();
    let tree = laid_out(&case.fixture);
    let mut record = CaseRecord {
        id: case.id.clone(),
        argv: std::iter::once(crate::layout::CANDIDATE_BIN.to_string())
            .chain(case.args.iter().cloned())
            .collect(),
        cwd: case.cwd.clone().unwrap_or_default(),
        env: crate::judge::expected_env(&case)
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
        exit_code: Some(p.inventory.exit_code),
        signal: None,
        timed_out: false,
        duration_micros: 4000,
        stdout_sha256: sha256_hex(&inv_out),
        stderr_sha256: sha256_hex(&inv_err),
        fixtures_before: tree.clone(),
        fixtures_after: tree,
        fixtures_after_problems: vec![],
        marker_present: false,
        verdict: crate::evidence::Verdict {
            pass: true,
            failures: Vec::new(),
        },
        written: Vec::new(),
    };
    let inv_witness = witness_record(
        crate::layout::CANDIDATE_BIN,
        vec![
            clone_event(1, RUNNER_PID, 1),
            exec(2, 30, RUNNER_PID, crate::layout::CANDIDATE_BIN, 3),
        ],
    );
    record.verdict = judge_inventory(
        matrix,
        scenario,
        run,
        &inv_out,
        &inv_err,
        &record,
        &inv_witness,
    );
    put(files, "inventory/record.json", json(&record));
    put(files, "inventory/stdout", inv_out);
    put(files, "inventory/stderr", inv_err);
    put(files, "inventory/witness.json", json(&inv_witness));
}

/// The walk of a freshly laid-out fixture: each entry as declared and its implied parents.
fn laid_out(fixture: &[crate::matrix::FixtureEntry]) -> Vec<FixtureObservation> {
    let mut out: BTreeMap<String, FixtureObservation> = BTreeMap::new();
    for entry in fixture {
        let obs = crate::judge::expected_observation(entry).expect("sample fixture");
        let mut parent = std::path::Path::new(&obs.path).parent();
        while let Some(p) = parent.and_then(|p| p.to_str()) {
            if crate::layout::FIXTURE_ROOTS.contains(&p) || p == "/" || p.is_empty() {
                break;
            }
            out.entry(p.to_string()).or_insert(FixtureObservation {
                path: p.to_string(),
                kind: "dir".into(),
                mode: "0755".into(),
                size: 0,
                sha256: None,
            });
            parent = std::path::Path::new(p).parent();
        }
        out.insert(obs.path.clone(), obs);
    }
    out.into_values().collect()
}
