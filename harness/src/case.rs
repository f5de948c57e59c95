//! One case, end to end: clear the fixture roots, lay out the case's tree, walk it, run the
//! candidate with a cleared environment under the case's deadline while capturing both output
//! streams completely, walk again, capture what it left written, check the sentinel marker,
//! and judge. Also the deadline-bound
//! process capture the controls reuse. A case that fails is recorded, never raised: only the
//! harness's own I/O failures are errors. This module must never decide a verdict itself —
//! `judge::judge` does — and never lets a process it started outlive its deadline.

use crate::watch::{self, KernelWatch, Watch};
use crate::{fixture, written, HarnessError, IoContext, Layout};
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::evidence::{CaseRecord, Verdict};
use scopebox_schema::judge;
use scopebox_schema::matrix::{Case, Matrix, DEFAULT_CASE_DEADLINE_MS};
use scopebox_schema::witness::WitnessRecord;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a process did, as far as a verdict needs to know.
#[derive(Debug, Clone)]
pub struct Captured {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// The deadline passed and the process group was killed.
    pub timed_out: bool,
    /// From spawn to reaping the process.
    pub duration: Duration,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Captured {
    /// A process that never started: no exit, no output, the reason on its stderr, so it is
    /// judged as a failed run rather than raised (`what` names it: "the candidate").
    pub fn not_started(what: &str, error: &std::io::Error) -> Captured {
        Captured {
            exit_code: None,
            signal: None,
            timed_out: false,
            duration: Duration::ZERO,
            stdout: Vec::new(),
            stderr: format!("scopebox-runner: failed to start {what}: {error}\n").into_bytes(),
        }
    }
}

/// Runs `cmd` with stdin null and both streams captured in full, in its own process group.
/// At the deadline the whole group gets SIGKILL; after the process exits, anything it left
/// behind in its group is killed too, so no straggler can fire the sentinel during a later case.
pub fn run_captured(cmd: Command, deadline: Duration) -> std::io::Result<Captured> {
    capture(cmd, deadline, &mut || {})
}

/// `run_captured` inside a kernel-witness window: the window opens before the spawn; once the
/// program exited, every descendant still alive is found, recorded and killed (`watch::sweep`)
/// before the output pipes are read to their end, then the window closes. The child becomes
/// dumpable again just before its exec, so the supervisor can read the exec's path from its
/// memory (the runner itself is not). Returns the capture (or the spawn error) and the record.
pub fn run_watched(
    mut cmd: Command,
    deadline: Duration,
    watch: &mut KernelWatch,
) -> Result<(std::io::Result<Captured>, WitnessRecord), HarnessError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let witness_path = std::path::Path::new("witness");
    watch.begin().at("open a window of", witness_path)?;
    let mut survivors = Vec::new();
    let captured = capture(cmd, deadline, &mut || survivors = watch::sweep());
    if captured.is_err() {
        survivors = watch::sweep();
    }
    let record = watch
        .end(&program, survivors)
        .at("close a window of", witness_path)?;
    Ok((captured, record))
}

fn capture(
    mut cmd: Command,
    deadline: Duration,
    after_exit: &mut dyn FnMut(),
) -> std::io::Result<Captured> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let mut out = child.stdout.take().expect("stdout is piped");
    let mut err = child.stderr.take().expect("stderr is piped");
    // Both pipes are drained concurrently: a child filling one while we block on the other
    // would deadlock.
    let out_reader = std::thread::spawn(move || read_capped(&mut out, pid));
    let err_reader = std::thread::spawn(move || read_capped(&mut err, pid));
    let (done_tx, done_rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = done_tx.send(());
        status
    });
    let timed_out = match done_rx.recv_timeout(deadline) {
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => false,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            kill_group(pid);
            true
        }
    };
    let status = waiter
        .join()
        .map_err(|_| std::io::Error::other("waiter thread panicked"))??;
    let duration = start.elapsed();
    // The sweep first: it records every descendant still alive, in the group or out of it
    // (setsid), and kills it — killing the group first would let a group member die unrecorded.
    // A descendant that left the group may still hold the pipes: it is gone before the readers
    // wait for their end. The group kill stays as the backstop.
    after_exit();
    kill_group(pid);
    let stdout = out_reader
        .join()
        .map_err(|_| std::io::Error::other("stdout reader panicked"))??;
    let stderr = err_reader
        .join()
        .map_err(|_| std::io::Error::other("stderr reader panicked"))??;
    Ok(Captured {
        exit_code: status.code(),
        signal: status.signal(),
        timed_out,
        duration,
        stdout,
        stderr,
    })
}

/// Most bytes kept per stream. A process that prints more is killed (its group gets SIGKILL,
/// so the case fails as "killed by signal 9") instead of exhausting the container's memory;
/// the captured prefix is what gets recorded and judged.
pub const CAPTURE_LIMIT: usize = 64 * 1024 * 1024;

fn read_capped(pipe: &mut impl Read, pid: u32) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut killed = false;
    loop {
        let n = match pipe.read(&mut chunk) {
            Ok(0) => return Ok(buf),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let room = CAPTURE_LIMIT - buf.len();
        buf.extend_from_slice(&chunk[..n.min(room)]);
        if n > room && !killed {
            kill_group(pid);
            killed = true;
        }
    }
}

fn kill_group(pid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        // ESRCH (nothing left in the group) is the normal case after a clean exit.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// A case as it ran: the record (with its verdict) and the raw captures it was judged from.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    pub record: CaseRecord,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// What the kernel witness saw (`None` only in unwatched in-process tests).
    pub witness: Option<WitnessRecord>,
}

/// The environment every candidate gets: exactly `judge::expected_env` (the base plus the
/// case's own variables, sorted by name), with `HOME` moved where the layout keeps it.
pub fn candidate_env(layout: &Layout, case: &Case) -> Vec<(String, String)> {
    judge::expected_env(case)
        .into_iter()
        .map(|(k, v)| {
            // Only the base values move; the case's own are passed as the matrix spells them.
            let v = match (k.as_str(), v.as_str()) {
                ("HOME", scopebox_schema::layout::HOME) => {
                    layout.host(&v).to_string_lossy().into_owned()
                }
                ("PATH", "/scopebox/bin") => layout.candidate_path_env.clone(),
                _ => v,
            };
            (k, v)
        })
        .collect()
}

/// Whether the sentinel's marker exists (as anything, even a dangling symlink).
pub fn marker_present(layout: &Layout) -> bool {
    std::fs::symlink_metadata(&layout.sentinel_marker).is_ok()
}

/// Removes the marker if present; true when it is gone afterwards.
pub fn remove_marker(layout: &Layout) -> bool {
    match std::fs::remove_file(&layout.sentinel_marker) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => return false,
    }
    !marker_present(layout)
}

/// Runs one case (not its `fault`: the caller handles that) and judges it. A marker left by
/// this case is recorded and then removed so it cannot be blamed on the next case.
pub fn run_case(
    layout: &Layout,
    matrix: &Matrix,
    case: &Case,
    watch: &mut Watch,
) -> Result<CaseOutcome, HarnessError> {
    fixture::clear(layout)?;
    fixture::lay_out(layout, &case.fixture)?;
    let fixtures_before = fixture::walk(layout)?;

    let cwd_logical = case.cwd.clone().unwrap_or_else(|| "/work".to_string());
    let cwd = layout.host(&cwd_logical);
    let args: Vec<String> = case.args.iter().map(|a| layout.arg(a)).collect();
    let env = candidate_env(layout, case);
    let mut cmd = Command::new(&layout.candidate_bin);
    cmd.args(&args)
        .current_dir(&cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)));
    let deadline = Duration::from_millis(case.deadline_ms.unwrap_or(DEFAULT_CASE_DEADLINE_MS));
    let scratch_before = written::scratch_listing(layout);
    let (captured, witness) = run_under(watch, cmd, deadline)?;
    let captured = match captured {
        Ok(c) => c,
        // A candidate that cannot even start (missing binary, bad cwd) is a failed case with
        // the reason on its stderr, not a harness failure: the other cases still run.
        Err(e) => Captured::not_started("the candidate", &e),
    };

    // The candidate may have made the tree unwalkable; that fails this case (every fixture
    // then shows as removed), it does not stop the run.
    let fixtures_after = fixture::walk(layout).unwrap_or_default();
    let written = written::capture(layout, &fixtures_before, &fixtures_after, &scratch_before);
    let marker = marker_present(layout);
    if marker {
        remove_marker(layout);
    }
    let mut argv = vec![layout.candidate_bin.to_string_lossy().into_owned()];
    argv.extend(args);
    let mut record = CaseRecord {
        id: case.id.clone(),
        argv,
        cwd: cwd_logical,
        // As the matrix spells it (the layout may have moved HOME on a host run).
        env: judge::expected_env(case)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
        exit_code: captured.exit_code,
        signal: captured.signal,
        timed_out: captured.timed_out,
        duration_micros: captured.duration.as_micros() as u64,
        stdout_sha256: sha256_hex(&captured.stdout),
        stderr_sha256: sha256_hex(&captured.stderr),
        fixtures_before,
        fixtures_after,
        marker_present: marker,
        verdict: Verdict {
            pass: false,
            failures: Vec::new(),
        },
        written,
    };
    record.verdict = match &witness {
        Some(w) => {
            judge::judge_witnessed(matrix, case, &captured.stdout, &captured.stderr, &record, w)
        }
        None => judge::judge(matrix, case, &captured.stdout, &captured.stderr, &record),
    };
    Ok(CaseOutcome {
        record,
        stdout: captured.stdout,
        stderr: captured.stderr,
        witness,
    })
}

/// `run_watched` under the kernel watch, `run_captured` (and no record) when unwatched.
pub fn run_under(
    watch: &mut Watch,
    cmd: Command,
    deadline: Duration,
) -> Result<(std::io::Result<Captured>, Option<WitnessRecord>), HarnessError> {
    Ok(match watch {
        Watch::Kernel(k) => {
            let (captured, record) = run_watched(cmd, deadline, k)?;
            (captured, Some(record))
        }
        Watch::Unwatched => (run_captured(cmd, deadline), None),
    })
}

/// Writes `cases/<id>/{stdout,stderr,record.json,witness.json}` below the evidence directory.
pub fn write_outcome(layout: &Layout, outcome: &CaseOutcome) -> Result<(), HarnessError> {
    use scopebox_schema::evidence::CASES_DIR;
    let dir = layout.evidence_dir.join(CASES_DIR).join(&outcome.record.id);
    write_run(&dir, outcome)
}

/// Writes `stdout`, `stderr`, `record.json` and `witness.json` of a run into `dir`.
pub fn write_run(dir: &Path, outcome: &CaseOutcome) -> Result<(), HarnessError> {
    use scopebox_schema::evidence::{RECORD_FILE, STDERR_FILE, STDOUT_FILE};
    use scopebox_schema::witness::WITNESS_FILE;
    std::fs::create_dir_all(dir).at("create", dir)?;
    if let Some(w) = &outcome.witness {
        let mut json = serde_json::to_vec_pretty(w).expect("records serialize");
        json.push(b'\n');
        let p = dir.join(WITNESS_FILE);
        std::fs::write(&p, json).at("write", &p)?;
    }
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).at("write", &p)
    };
    write(STDOUT_FILE, &outcome.stdout)?;
    write(STDERR_FILE, &outcome.stderr)?;
    let mut json = serde_json::to_vec_pretty(&outcome.record).expect("records serialize");
    json.push(b'\n');
    write(RECORD_FILE, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn both_streams_are_captured_in_full() {
        // More than a pipe buffer on each stream, interleaved: a sequential reader deadlocks.
        let c = run_captured(
            sh("i=0; while [ $i -lt 3000 ]; do echo out-line-$i; echo err-line-$i >&2; i=$((i+1)); done; exit 3"),
            Duration::from_secs(60),
        )
        .unwrap();
        assert_eq!(c.exit_code, Some(3));
        assert_eq!(c.signal, None);
        assert!(!c.timed_out);
        assert_eq!(c.stdout.iter().filter(|&&b| b == b'\n').count(), 3000);
        assert_eq!(c.stderr.iter().filter(|&&b| b == b'\n').count(), 3000);
        assert!(c.stdout.ends_with(b"out-line-2999\n"));
        assert!(c.stderr.starts_with(b"err-line-0\n"));
    }

    #[test]
    fn the_deadline_kills_the_process_group() {
        // The child sleeps; a grandchild holds stdout open. Both must die at the deadline,
        // or reading stdout to its end would never return.
        let c = run_captured(
            sh("sleep 30 & sleep 30; echo never"),
            Duration::from_millis(200),
        )
        .unwrap();
        assert!(c.timed_out);
        assert_eq!(c.exit_code, None);
        assert_eq!(c.signal, Some(9));
        assert!(c.stdout.is_empty());
    }

    #[test]
    fn endless_output_is_cut_at_the_capture_limit_by_killing_the_writer() {
        let c = run_captured(sh("exec cat /dev/zero"), Duration::from_secs(600)).unwrap();
        assert_eq!(c.stdout.len(), CAPTURE_LIMIT);
        assert_eq!(c.signal, Some(9));
        assert!(!c.timed_out);
    }

    #[test]
    fn a_process_that_finishes_is_not_timed_out() {
        let c = run_captured(sh("printf hi"), Duration::from_secs(60)).unwrap();
        assert!(!c.timed_out);
        assert_eq!(c.exit_code, Some(0));
        assert_eq!(c.stdout, b"hi");
    }

    #[test]
    fn stdin_is_null() {
        let c = run_captured(sh("cat; echo done"), Duration::from_secs(60)).unwrap();
        assert!(!c.timed_out);
        assert_eq!(c.stdout, b"done\n");
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let err =
            run_captured(Command::new("/nonexistent/prog"), Duration::from_secs(1)).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn the_candidate_environment_is_the_base_plus_the_case() {
        let l = Layout::container();
        let mut case: Case = serde_json::from_str(
            r#"{"id":"e","client":"claude-code","description":"","args":[],"expect":{"exitCode":0},
                "env":{"LANG":"C","XDG_CONFIG_HOME":"/home/node/.config"}}"#,
        )
        .unwrap();
        let env = candidate_env(&l, &case);
        let names: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(
            names,
            [
                "HOME=/home/node",
                "LANG=C",
                "PATH=/scopebox/bin",
                "XDG_CONFIG_HOME=/home/node/.config"
            ]
        );
        case.env.clear();
        assert_eq!(candidate_env(&l, &case).len(), 3);
    }
}
