//! One case, end to end: clear the fixture roots, lay out the case's tree, walk it, run the
//! candidate with a cleared environment under the case's deadline while capturing both output
//! streams completely, walk again, capture what it left written, check the sentinel marker,
//! and judge. Also the deadline-bound
//! process capture the controls reuse. A case that fails is recorded, never raised: only the
//! harness's own I/O failures are errors. This module must never decide a verdict itself —
//! `judge::judge` does — and never lets a process it started outlive its deadline.

use crate::inside::Inside;
use crate::journal::Journal;
use crate::watch::{self, KernelWatch, Watch};
use crate::{fixture, written, HarnessError, IoContext, Layout};
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::evidence::{CaseRecord, Verdict};
use scopebox_schema::judge;
use scopebox_schema::matrix::{Case, Matrix, DEFAULT_CASE_DEADLINE_MS};
use scopebox_schema::witness::WitnessRecord;
use std::borrow::Cow;
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
    /// A process that ran and was reaped with `status`.
    fn exited(
        status: std::process::ExitStatus,
        timed_out: bool,
        duration: Duration,
        stdout: Vec<u8>,
        stderr: Vec<u8>,
    ) -> Captured {
        Captured {
            exit_code: status.code(),
            signal: status.signal(),
            timed_out,
            duration,
            stdout,
            stderr,
        }
    }

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
    cmd: Command,
    deadline: Duration,
    after_exit: &mut dyn FnMut(),
) -> std::io::Result<Captured> {
    capture_by(cmd, deadline, after_exit, Waiting::Pidfd)
}

/// How `capture` learns that the process exited while it drains the pipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// A pidfd in the same `poll` as the pipes (`capture_polled`).
    Pidfd,
    /// A thread per pipe and one blocked in `wait` (`capture_threaded`): what `Pidfd` falls
    /// back to where the kernel has no pidfds (before 5.3); asked for directly only by tests.
    #[cfg_attr(not(test), allow(dead_code))]
    Threads,
}

fn capture_by(
    mut cmd: Command,
    deadline: Duration,
    after_exit: &mut dyn FnMut(),
    waiting: Waiting,
) -> std::io::Result<Captured> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let out = child.stdout.take().expect("stdout is piped");
    let err = child.stderr.take().expect("stderr is piped");
    let pidfd = match waiting {
        Waiting::Pidfd => rustix::process::pidfd_open(
            rustix::process::Pid::from_child(&child),
            rustix::process::PidfdFlags::empty(),
        )
        .ok(),
        Waiting::Threads => None,
    };
    match pidfd {
        Some(exit) => capture_polled(child, out, err, exit, start, deadline, after_exit),
        None => capture_threaded(child, out, err, start, deadline, after_exit),
    }
}

/// The capture on this thread alone: both pipes and the child's pidfd in one `poll` until the
/// child exits or the deadline passes. No thread is started per run: under qemu-user every
/// thread a process ever started stays in the emulator's memory, so a runner starting three
/// per case grew by most of a megabyte per case, and each later fork copied all of it.
fn capture_polled(
    mut child: std::process::Child,
    out: std::process::ChildStdout,
    err: std::process::ChildStderr,
    exit: std::os::fd::OwnedFd,
    start: Instant,
    deadline: Duration,
    after_exit: &mut dyn FnMut(),
) -> std::io::Result<Captured> {
    use std::os::fd::AsRawFd;
    let pid = child.id();
    let mut streams = [Stream::new(out.into()), Stream::new(err.into())];
    let mut timed_out = false;
    loop {
        let remaining = deadline.saturating_sub(start.elapsed());
        if remaining.is_zero() && !timed_out {
            // The child itself too: it may have left its group (setsid), and until it is
            // reaped its pid cannot name anything else.
            kill_child(pid);
            kill_group(pid);
            timed_out = true;
        }
        let mut fds = [
            poll_in(exit.as_raw_fd()),
            poll_in(streams[0].fd()),
            poll_in(streams[1].fd()),
        ];
        let wait_ms = if timed_out {
            -1
        } else {
            remaining.as_millis().clamp(1, i32::MAX as u128) as i32
        };
        // SAFETY: three valid pollfds (a negative fd is skipped).
        if unsafe { libc::poll(fds.as_mut_ptr(), 3, wait_ms) } < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        for (stream, fd) in streams.iter_mut().zip(&fds[1..]) {
            if fd.revents != 0 {
                stream.read_once(pid)?;
            }
        }
        if fds[0].revents != 0 {
            break;
        }
    }
    let status = child.wait()?;
    let duration = start.elapsed();
    // As in `capture_threaded`: the sweep first, then the group, then the pipes to their end.
    after_exit();
    kill_group(pid);
    for stream in &mut streams {
        stream.read_to_end(pid)?;
    }
    let [stdout, stderr] = streams.map(|s| s.buf);
    Ok(Captured::exited(
        status, timed_out, duration, stdout, stderr,
    ))
}

fn poll_in(fd: std::os::fd::RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// One captured output stream: the pipe until its end, and what it gave.
struct Stream {
    pipe: Option<std::fs::File>,
    buf: Vec<u8>,
    killed: bool,
}

impl Stream {
    fn new(pipe: std::os::fd::OwnedFd) -> Stream {
        Stream {
            pipe: Some(pipe.into()),
            buf: Vec::new(),
            killed: false,
        }
    }

    /// The pipe's fd, or -1 once it ended (poll skips it).
    fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.pipe.as_ref().map_or(-1, |p| p.as_raw_fd())
    }

    /// Reads until the pipe's end.
    fn read_to_end(&mut self, pid: u32) -> std::io::Result<()> {
        while self.pipe.is_some() {
            self.read_once(pid)?;
        }
        Ok(())
    }

    /// One read (it blocks only when nothing is ready: after the sweep, or when poll said so).
    /// Past `CAPTURE_LIMIT` the group is killed once and the rest is read and dropped.
    fn read_once(&mut self, pid: u32) -> std::io::Result<()> {
        let Some(pipe) = &mut self.pipe else {
            return Ok(());
        };
        let mut chunk = [0u8; 64 * 1024];
        let n = match pipe.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(e),
        };
        if n == 0 {
            self.pipe = None;
            return Ok(());
        }
        let room = CAPTURE_LIMIT - self.buf.len();
        self.buf.extend_from_slice(&chunk[..n.min(room)]);
        if n > room && !self.killed {
            kill_group(pid);
            self.killed = true;
        }
        Ok(())
    }
}

fn capture_threaded(
    mut child: std::process::Child,
    out: std::process::ChildStdout,
    err: std::process::ChildStderr,
    start: Instant,
    deadline: Duration,
    after_exit: &mut dyn FnMut(),
) -> std::io::Result<Captured> {
    let pid = child.id();
    // Both pipes are drained concurrently: a child filling one while we block on the other
    // would deadlock.
    let out_reader = std::thread::spawn(move || read_capped(out.into(), pid));
    let err_reader = std::thread::spawn(move || read_capped(err.into(), pid));
    let (done_tx, done_rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = done_tx.send(());
        status
    });
    let timed_out = match done_rx.recv_timeout(deadline) {
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => false,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            kill_child(pid);
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
    Ok(Captured::exited(
        status, timed_out, duration, stdout, stderr,
    ))
}

/// Most bytes kept per stream. A process that prints more is killed (its group gets SIGKILL,
/// so the case fails as "killed by signal 9") instead of exhausting the container's memory;
/// the captured prefix is what gets recorded and judged.
pub const CAPTURE_LIMIT: usize = 64 * 1024 * 1024;

/// A whole stream, on a thread of its own (`capture_threaded`), under the same cap.
fn read_capped(pipe: std::os::fd::OwnedFd, pid: u32) -> std::io::Result<Vec<u8>> {
    let mut stream = Stream::new(pipe);
    stream.read_to_end(pid)?;
    Ok(stream.buf)
}

fn kill_child(pid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
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

/// Whether the sentinel's marker exists (as anything, even a dangling symlink): looked up from
/// inside the scratch root when the marker is below it (as in the container), so the lookup
/// resolves nothing from `/`.
pub fn marker_present(layout: &Layout) -> bool {
    if let Some(rel) = Inside::relative(&layout.scratch_dir, &layout.sentinel_marker) {
        if let Ok(mut inside) = Inside::new() {
            if inside.enter(&layout.scratch_dir).is_ok() {
                return std::fs::symlink_metadata(rel).is_ok();
            }
        }
    }
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
    fixture::clear_scratch(layout)?;
    fixture::lay_out(layout, &case.fixture)?;
    let before = fixture::walk_before(layout)?;

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

    // The candidate may have left a tree the walk cannot see whole; that fails this case (the
    // record says where the walk stopped and why), it does not stop the run.
    let after = fixture::walk_after(layout, &before);
    let written = written::capture(layout, &before.nodes, &after.nodes, &scratch_before);
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
        fixtures_before: before.nodes,
        fixtures_after: after.nodes,
        fixtures_after_problems: after.problems,
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
    // The case's large fixture files were remembered for its walks and its judge only.
    scopebox_schema::digest::forget_remembered();
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

/// Appends `cases/<id>/{witness.json,stdout,stderr,record.json}` to the case journal.
pub fn write_outcome(journal: &mut Journal, outcome: &CaseOutcome) -> Result<(), HarnessError> {
    use scopebox_schema::evidence::CASES_DIR;
    journal.append_outcome(&format!("{CASES_DIR}/{}", outcome.record.id), outcome)
}

/// A record as every evidence file spells it: pretty JSON ending in a newline.
pub fn pretty_json<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut json = serde_json::to_vec_pretty(value).expect("records serialize");
    json.push(b'\n');
    json
}

/// A run's evidence files, in the order they are written: `witness.json` (when watched),
/// `stdout`, `stderr`, `record.json`.
pub fn outcome_files(outcome: &CaseOutcome) -> Vec<(&'static str, Cow<'_, [u8]>)> {
    use scopebox_schema::evidence::{RECORD_FILE, STDERR_FILE, STDOUT_FILE};
    use scopebox_schema::witness::WITNESS_FILE;
    let mut files = Vec::with_capacity(4);
    if let Some(w) = &outcome.witness {
        files.push((WITNESS_FILE, Cow::Owned(pretty_json(w))));
    }
    files.push((STDOUT_FILE, Cow::Borrowed(outcome.stdout.as_slice())));
    files.push((STDERR_FILE, Cow::Borrowed(outcome.stderr.as_slice())));
    files.push((RECORD_FILE, Cow::Owned(pretty_json(&outcome.record))));
    files
}

/// Writes a run's evidence files (`outcome_files`) into `dir`.
pub fn write_run(dir: &Path, outcome: &CaseOutcome) -> Result<(), HarnessError> {
    std::fs::create_dir_all(dir).at("create", dir)?;
    for (name, bytes) in outcome_files(outcome) {
        crate::evidence_file::write(&dir.join(name), &bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    /// `make`'s command captured both ways, each result with the way it was waited for.
    fn both_ways(
        make: impl Fn() -> Command,
        deadline: Duration,
    ) -> Vec<(Waiting, std::io::Result<Captured>)> {
        [Waiting::Pidfd, Waiting::Threads]
            .into_iter()
            .map(|w| (w, capture_by(make(), deadline, &mut || {}, w)))
            .collect()
    }

    #[test]
    fn both_streams_are_captured_in_full() {
        // More than a pipe buffer on each stream, interleaved: a sequential reader deadlocks.
        let script = "i=0; while [ $i -lt 3000 ]; do echo out-line-$i; echo err-line-$i >&2; i=$((i+1)); done; exit 3";
        for (w, c) in both_ways(|| sh(script), Duration::from_secs(60)) {
            let c = c.unwrap();
            assert_eq!(c.exit_code, Some(3), "{w:?}");
            assert_eq!(c.signal, None, "{w:?}");
            assert!(!c.timed_out, "{w:?}");
            assert_eq!(
                c.stdout.iter().filter(|&&b| b == b'\n').count(),
                3000,
                "{w:?}"
            );
            assert_eq!(
                c.stderr.iter().filter(|&&b| b == b'\n').count(),
                3000,
                "{w:?}"
            );
            assert!(c.stdout.ends_with(b"out-line-2999\n"), "{w:?}");
            assert!(c.stderr.starts_with(b"err-line-0\n"), "{w:?}");
        }
    }

    #[test]
    fn the_deadline_kills_the_process_group() {
        // The child sleeps; a grandchild holds stdout open. Both must die at the deadline,
        // or reading stdout to its end would never return.
        let script = "sleep 30 & sleep 30; echo never";
        for (w, c) in both_ways(|| sh(script), Duration::from_millis(200)) {
            let c = c.unwrap();
            assert!(c.timed_out, "{w:?}");
            assert_eq!(c.exit_code, None, "{w:?}");
            assert_eq!(c.signal, Some(9), "{w:?}");
            assert!(c.stdout.is_empty(), "{w:?}");
        }
    }

    #[test]
    fn a_process_that_left_its_group_still_dies_at_the_deadline() {
        // It moves itself into the test's own group, out of the one the group kill names; only
        // the kill by pid reaches it (without it: exit 0 after 30 s, no signal).
        let script = "import os, time\nos.setpgid(0, os.getpgid(os.getppid()))\ntime.sleep(30)";
        let python = || {
            let mut c = Command::new("python3");
            c.arg("-c").arg(script);
            c
        };
        for (w, c) in both_ways(python, Duration::from_millis(300)) {
            let c = c.unwrap();
            assert!(c.timed_out, "{w:?}");
            assert_eq!(
                c.signal,
                Some(9),
                "{w:?}: {:?}",
                String::from_utf8_lossy(&c.stderr)
            );
        }
    }

    #[test]
    fn endless_output_is_cut_at_the_capture_limit_by_killing_the_writer() {
        for (w, c) in both_ways(|| sh("exec cat /dev/zero"), Duration::from_secs(600)) {
            let c = c.unwrap();
            assert_eq!(c.stdout.len(), CAPTURE_LIMIT, "{w:?}");
            assert_eq!(c.signal, Some(9), "{w:?}");
            assert!(!c.timed_out, "{w:?}");
        }
    }

    #[test]
    fn a_process_that_finishes_is_not_timed_out() {
        for (w, c) in both_ways(|| sh("printf hi"), Duration::from_secs(60)) {
            let c = c.unwrap();
            assert!(!c.timed_out, "{w:?}");
            assert_eq!(c.exit_code, Some(0), "{w:?}");
            assert_eq!(c.stdout, b"hi", "{w:?}");
        }
    }

    #[test]
    fn stdin_is_null() {
        for (w, c) in both_ways(|| sh("cat; echo done"), Duration::from_secs(60)) {
            let c = c.unwrap();
            assert!(!c.timed_out, "{w:?}");
            assert_eq!(c.stdout, b"done\n", "{w:?}");
        }
    }

    #[test]
    fn a_missing_program_is_an_error() {
        for (w, c) in both_ways(|| Command::new("/nonexistent/prog"), Duration::from_secs(1)) {
            assert_eq!(c.unwrap_err().kind(), std::io::ErrorKind::NotFound, "{w:?}");
        }
    }

    /// Live threads of this process named like the calling one: a thread inherits the name of
    /// the thread that started it, and the test harness names each test's thread after the
    /// test, so other tests' threads are not counted.
    fn threads_like_this_one() -> usize {
        let me = std::fs::read_to_string("/proc/thread-self/comm").unwrap();
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter(|t| std::fs::read_to_string(t.path().join("comm")).ok().as_ref() == Some(&me))
            .count()
    }

    /// `threads_like_this_one` once it reads `expected`, or its last reading after ~5 s. A
    /// thread that was just joined can still be listed for a moment (the kernel wakes the
    /// joiner on the way out, before the thread is released), so one reading may count it;
    /// a thread that is still running (a pipe reader blocked on a straggler) never leaves.
    fn threads_like_this_one_settled(expected: usize) -> usize {
        let mut seen = threads_like_this_one();
        for _ in 0..500 {
            if seen == expected {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            seen = threads_like_this_one();
        }
        seen
    }

    #[test]
    fn no_thread_is_started_per_capture_where_pidfds_exist() {
        let counted = |waiting, expected| {
            let mut during = 0;
            let mut count = || during = threads_like_this_one_settled(expected);
            // A straggler holds stdout open past the exit (the group kill ends it after), so
            // any pipe reader is still blocked while the threads are counted.
            let script = "(sleep 30; echo late) & printf x";
            let c = capture_by(sh(script), Duration::from_secs(60), &mut count, waiting);
            assert_eq!(c.unwrap().stdout, b"x");
            during
        };
        // Once the process exited: this thread alone, or it and the two blocked pipe readers
        // (the waiter was joined before).
        assert_eq!(counted(Waiting::Pidfd, 1), 1);
        assert_eq!(counted(Waiting::Threads, 3), 3);
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
