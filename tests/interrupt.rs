//! Ctrl-C against the real engine: SIGINT to a `scopebox run` whose container is running (the
//! stall fault keeps it running) ends it with exit 130, says so, and leaves no container and no
//! volume of that run behind, nor its reaper. SIGKILL, which leaves scopebox no chance to clean
//! up, leaves it to the reaper: the run's container and volume go, another run's stay. Only states decide: the child's own progress lines and the
//! engine's answers say when it runs; the bounds on waiting only turn a hang into a failure.

use crate::support::{
    assert_no_reaper_remains, labelled, reapers_of, session_of, tempdir, with_engine, workspace,
};
use scopebox::engine::{Engine, Labels, ObjectKind, OWNER_LABEL, RUN_LABEL};
use scopebox_schema::receipt::Execution;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long the run may take to build its static binaries (`.ci/run` builds them first with
/// `scopebox build`, so this is a cache hit there; a cold build on a small machine takes
/// minutes); then, from its image line on, to load and start its container; and, after
/// SIGINT, to kill and clean up. Generous: only a hang should ever reach them, and the clock
/// of each phase starts when the previous one is seen done.
const BUILD_BOUND: Duration = Duration::from_secs(3600);
const START_BOUND: Duration = Duration::from_secs(120);
const END_BOUND: Duration = Duration::from_secs(300);
/// After SIGKILL, how long the run's reaper may take to remove its objects (its own deadline
/// is 60 s): only a reaper that never came, or never acted, reaches it.
const REAP_BOUND: Duration = Duration::from_secs(120);

/// The child's stderr, line by line, as it comes.
struct Lines {
    rx: Receiver<String>,
    seen: Vec<String>,
}

impl Lines {
    fn of(child: &mut Child) -> Lines {
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines {
            rx,
            seen: Vec::new(),
        }
    }

    /// The next line within `bound` of `since`; `None` once the child closed stderr (it
    /// exited).
    fn next(&mut self, since: Instant, bound: Duration) -> Option<String> {
        let left = (since + bound).saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(left) {
            Ok(line) => {
                self.seen.push(line.clone());
                Some(line)
            }
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => panic!(
                "no progress from scopebox within {} s; stderr so far:\n{}",
                bound.as_secs(),
                self.seen.join("\n")
            ),
        }
    }

    fn all(&self) -> String {
        self.seen.join("\n")
    }
}

/// Kills the child if the test fails before it exits, so no run outlives its test. It holds
/// the engine (shared, `support::engine_hold`) while it lives: its run sweeps the leftovers of
/// dead owners, which a sweep test holding the engine alone must not see happen under it.
struct Reap(Child, Option<std::sync::RwLockReadGuard<'static, ()>>);

impl Drop for Reap {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
        // Only once the child is gone.
        drop(self.1.take());
    }
}

/// `scopebox` itself (not a `cargo run` wrapper: SIGINT must reach it) started from the
/// workspace with `configure`'s arguments, stdout and stderr piped, and stderr read as it comes.
fn start_scopebox(configure: impl FnOnce(&mut Command)) -> (Reap, Lines) {
    let hold = crate::support::engine_hold();
    let mut command = Command::new(env!("CARGO_BIN_EXE_scopebox"));
    configure(&mut command);
    let child = command
        .current_dir(workspace())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the scopebox binary starts");
    let mut child = Reap(child, hold);
    let lines = Lines::of(&mut child.0);
    (child, lines)
}

/// The run id from "running N case(s) of M on linux/amd64 in container scopebox-<id>-amd64
/// (deadline …)".
fn run_id_of(line: &str) -> Option<String> {
    let rest = line.split_once(" in container scopebox-")?.1;
    let name = rest.split_once(' ')?.0;
    Some(name.strip_suffix("-amd64").unwrap_or(name).to_string())
}

/// Whether the engine reports the run's container running.
fn container_running(run_id: &str) -> bool {
    let containers: Vec<_> = labelled(&format!("{RUN_LABEL}={run_id}"))
        .into_iter()
        .filter(|o| o.kind == ObjectKind::Container)
        .collect();
    assert_eq!(containers.len(), 1, "one container per run: {containers:?}");
    let doc = with_engine(async |e| e.inspect_container(&containers[0].id).await)
        .expect("the run's container can be inspected");
    let doc: serde_json::Value = serde_json::from_slice(&doc).expect("inspection is JSON");
    doc["State"]["Running"] == true
}

pub fn ctrl_c_while_the_container_runs_exits_130_and_leaves_nothing_behind() {
    interrupted_while_the_container_runs(rustix::process::Signal::INT);
}

/// SIGTERM (`kill`, `timeout`, a cancelled CI job) is taken for Ctrl-C: the same cleanup, the
/// same report, the same exit code — not a death that leaves the containers running.
pub fn sigterm_while_the_container_runs_is_taken_for_ctrl_c() {
    interrupted_while_the_container_runs(rustix::process::Signal::TERM);
}

/// `scopebox run` of the stall fault matrix on one amd64 container, followed until that
/// container runs (the stall keeps it running until the deadline, `deadline` seconds); with
/// its run id.
fn start_a_stalled_run(bundle: &Path, deadline: &str) -> (Reap, Lines, String) {
    let matrix = workspace().join("harness/matrix/faults/stall.json");
    let (child, mut lines) = start_scopebox(|c| {
        c.args(["run", "--json", "--out", bundle.to_str().unwrap()])
            .args(["--matrix", matrix.to_str().unwrap(), "--deadline", deadline])
            // One container, so that the one running is the stall's (with shards, the first
            // shard's container may already have exited).
            .args(["--platform", "linux/amd64", "--shards", "1"]);
    });

    // Built: the image line comes once every static binary is built and the image loaded.
    let since = Instant::now();
    loop {
        let Some(line) = lines.next(since, BUILD_BOUND) else {
            panic!(
                "scopebox exited before its image was built; stderr:\n{}",
                lines.all()
            );
        };
        if line.starts_with("scopebox: image ") {
            break;
        }
    }

    // Running: the run named its container, and the runner inside it reported the first case
    // (the stall comes second, so it is still running).
    let since = Instant::now();
    let mut run_id = None;
    loop {
        let Some(line) = lines.next(since, START_BOUND) else {
            panic!(
                "scopebox exited before its container ran; stderr:\n{}",
                lines.all()
            );
        };
        if run_id.is_none() {
            run_id = run_id_of(&line);
        }
        if line.contains("before-stall") {
            break;
        }
    }
    let run_id = run_id.unwrap_or_else(|| panic!("no run id on stderr:\n{}", lines.all()));
    assert!(
        container_running(&run_id),
        "the engine does not report the container running; stderr:\n{}",
        lines.all()
    );
    (child, lines, run_id)
}

fn interrupted_while_the_container_runs(signal: rustix::process::Signal) {
    let dir = tempdir();
    let bundle = dir.path().join("bundle");
    let _hold = crate::support::engine_hold();
    let (mut child, mut lines, run_id) = start_a_stalled_run(&bundle, "120");

    let pid = rustix::process::Pid::from_child(&child.0);
    rustix::process::kill_process(pid, signal).expect("the signal is sent");

    let since = Instant::now();
    while lines.next(since, END_BOUND).is_some() {}
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.0.stdout.take().unwrap(), &mut stdout).unwrap();
    let status = child.0.wait().expect("scopebox is waited for");
    let stderr = lines.all();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("scopebox: INTERRUPTED:"), "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one object");
    assert_eq!(summary["outcome"], "interrupted", "{summary}");
    assert_eq!(
        summary["platforms"][0]["evidenceExported"], false,
        "{summary}"
    );
    assert_eq!(summary["platforms"][0]["cases"]["passed"], 0, "{summary}");
    assert!(
        stderr.contains("linux/amd64: interrupted: none of its evidence was exported, 0/"),
        "the summary must say what happened: {stderr}"
    );
    assert!(
        stderr.contains("cleanup done"),
        "the summary must say the cleanup finished: {stderr}"
    );
    // An interruption is not a boundary violation or a control failure.
    for wrong in [
        "boundary NOT met",
        "controls FAILED",
        "problem (",
        "Some(",
        "()",
    ] {
        assert!(!stderr.contains(wrong), "{wrong:?} after Ctrl-C: {stderr}");
    }

    // Nothing carries the run's label: no container (running or not), no volume.
    let left = labelled(&format!("{RUN_LABEL}={run_id}"));
    assert!(left.is_empty(), "left behind: {left:?}");
    // It cleaned up itself, and told its reaper so.
    assert_no_reaper_remains(&run_id);

    // The bundle records the same: interrupted, killed, removed, swept — and nothing exported
    // from a run cut short.
    let execution: Execution = serde_json::from_slice(
        &std::fs::read(bundle.join("platforms/linux-amd64/outer/execution.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(execution.status, "interrupted");
    let names: Vec<&str> = execution.events.iter().map(|e| e.event.name()).collect();
    assert_eq!(
        &names[names.len() - 5..],
        [
            "interrupted",
            "killed",
            "container-removed",
            "volume-removed",
            "swept"
        ],
        "{names:?}"
    );
    assert!(!names.contains(&"evidence-exported"), "{names:?}");
}

/// Whether process `pid` is still running (absent or a zombie is not).
fn process_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "pid (comm) S …": the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

pub fn ctrl_c_during_the_static_build_exits_130_stops_cargo_and_writes_nothing() {
    let dir = tempdir();
    let bundle = dir.path().join("bundle");
    let pid_file = dir.path().join("cargo.pid");
    // A `cargo` that never finishes: it says who it is, then sleeps in its own place (exec), so
    // the pid written is the process scopebox must stop.
    let fake_cargo = dir.path().join("cargo");
    std::fs::write(
        &fake_cargo,
        format!(
            "#!/bin/sh\necho $$ > '{}'\nexec sleep 600\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &fake_cargo,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let (mut child, mut lines) = start_scopebox(|c| {
        c.args(["run", "--out", bundle.to_str().unwrap(), "--json"])
            .args(["--platform", "linux/amd64"])
            .env("CARGO", &fake_cargo);
    });

    // Building: the build line was printed, the engine answered (its line comes once the
    // Ctrl-C listener is in place, while the build is still awaited) and the fake cargo runs.
    // Where the binaries built earlier look current (a warm workspace), the run says before the
    // engine's line that it goes ahead on them while cargo checks: the containers run, and the
    // Ctrl-C then lands while the run waits for the check that never comes.
    let since = Instant::now();
    let (mut building, mut answered, mut going_ahead) = (false, false, false);
    while !(building && answered) {
        let Some(line) = lines.next(since, START_BOUND) else {
            panic!("scopebox exited before it built; stderr:\n{}", lines.all());
        };
        building |= line.starts_with("scopebox: building ");
        going_ahead |= line.starts_with("scopebox: going ahead on the binaries built earlier");
        answered |= line.starts_with("scopebox: engine ") && line.ends_with(" answered");
    }
    if going_ahead {
        loop {
            let Some(line) = lines.next(since, END_BOUND) else {
                panic!(
                    "the run never waited for the check; stderr:\n{}",
                    lines.all()
                );
            };
            if line == "scopebox: waiting for cargo's check of the binaries this run used" {
                break;
            }
        }
    }
    let cargo_pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(
            since.elapsed() < START_BOUND,
            "the fake cargo never started; stderr:\n{}",
            lines.all()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(process_running(cargo_pid), "the fake cargo is not running");
    let pid = rustix::process::Pid::from_child(&child.0);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("SIGINT is sent");

    let since = Instant::now();
    while lines.next(since, END_BOUND).is_some() {}
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.0.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let status = child.0.wait().expect("scopebox is waited for");
    let stderr = lines.all();
    assert_eq!(status.code(), Some(130), "{stderr}");
    let said = if going_ahead {
        "interrupted while cargo checked the binaries this run used: no bundle written"
    } else {
        "interrupted before any container was created"
    };
    assert!(stderr.contains(said), "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one object");
    assert_eq!(summary["exitCode"], 130, "{summary}");
    assert_eq!(summary["outcome"], "interrupted", "{summary}");
    assert!(
        !bundle.exists(),
        "a run interrupted while building wrote a bundle"
    );
    // The build was stopped with the run (kill_on_drop), not left sleeping.
    let since = Instant::now();
    while process_running(cargo_pid) {
        assert!(
            since.elapsed() < END_BOUND,
            "the build outlived the interrupted run"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGKILL (the OOM killer, `kill -9`, a CI runner's hard stop) ends scopebox with no cleanup
/// of its own: the reaper it started, in a session of its own, sees its pipe close without the
/// word that the run was done and removes the run's container and volume — and nothing of any
/// other run, not even one as dead whose id begins with this one's.
pub fn sigkill_while_the_container_runs_leaves_the_reaper_to_remove_it_and_nothing_else() {
    // Alone: any other run's start-of-run sweep removes a dead run's leftovers too, which would
    // pass this test without a reaper.
    crate::support::sweeping(sigkill_leaves_the_removal_to_the_reaper)
}

fn sigkill_leaves_the_removal_to_the_reaper() {
    let dir = tempdir();
    let bundle = dir.path().join("bundle");
    let (mut child, lines, run_id) = start_a_stalled_run(&bundle, "600");
    let label = format!("{RUN_LABEL}={run_id}");

    // Another run's volume, its owner as dead as this run will be.
    let other_run = format!("{run_id}-other");
    let other_volume = format!("scopebox-e2e-other-{}", std::process::id());
    let mut labels = Labels::new();
    labels.insert(RUN_LABEL.into(), other_run.clone());
    labels.insert(
        OWNER_LABEL.into(),
        format!("{}/4294967295", scopebox::boundary::hostname()),
    );
    with_engine(async |e| e.create_volume(&other_volume, &labels).await)
        .expect("the other run's volume is created");
    // The reaper, started with the run, as seen before the kill (it exits once it is done).
    let reapers: Vec<(u32, Option<u32>)> = reapers_of(&run_id)
        .into_iter()
        .map(|pid| (pid, session_of(pid)))
        .collect();

    let pid = rustix::process::Pid::from_child(&child.0);
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("SIGKILL is sent");
    let status = child.0.wait().expect("scopebox is waited for");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );

    let since = Instant::now();
    loop {
        let left = labelled(&label);
        if left.is_empty() {
            break;
        }
        assert!(
            since.elapsed() < REAP_BOUND,
            "{} s after SIGKILL the run's objects are still there: {left:?}; reaper(s) seen: \
             {reapers:?}; stderr:\n{}",
            REAP_BOUND.as_secs(),
            lines.all()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // One reaper, in a session it leads (not the test's, which scopebox ran in), gone once done.
    assert_eq!(reapers.len(), 1, "{reapers:?}");
    let (reaper, session) = reapers[0];
    assert_eq!(session, Some(reaper), "{reapers:?}");
    assert_ne!(session, session_of(std::process::id()));
    assert_no_reaper_remains(&run_id);

    let still = labelled(&format!("{RUN_LABEL}={other_run}"));
    assert_eq!(
        still.iter().map(|o| o.id.as_str()).collect::<Vec<_>>(),
        [other_volume.as_str()],
        "another run's volume must stay"
    );
    with_engine(async |e| e.remove_volume(&other_volume).await)
        .expect("the other run's volume is removed");
}
