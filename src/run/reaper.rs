//! The reaper: a watchdog process that removes a run's containers and volumes when scopebox
//! itself is killed too hard to clean up (SIGKILL: the OOM killer, `kill -9`, a CI runner's hard
//! stop). A run starts it (`Reaper::start`) before it creates its first engine object: the same
//! binary (`/proc/self/exe`) as the hidden command `scopebox __reap --run-id ID`, in a session of
//! its own (a terminal's Ctrl-C, and a signal sent to scopebox's process group, never reach it),
//! its stdin a pipe from the run, its stdout and stderr null. It blocks reading that pipe. The run
//! drops its `Reaper` once its own cleanup is over — on every return: passed, failed, refused,
//! deadline, interrupted, and when it keeps its objects on purpose (`--keep-on-failure`) — which
//! writes the byte `DONE` and closes the pipe; the reaper then exits without a single engine call.
//! A pipe that reaches end-of-file without that byte means the run died: the reaper removes every
//! container (forced) and volume carrying exactly `scopebox.run=<ID>` — those marked to keep
//! included, since a run that died never decided to keep anything and never told anyone what it
//! left — and exits, within `REAP_DEADLINE` whatever the engine does. It never removes an object
//! of another run, never writes a file, and never delays the run: starting it is one fork and
//! exec, and nothing waits for it to be ready (a run killed before the reaper reads still closes
//! the pipe, and the reaper sees end-of-file whenever it reads). What it cannot remove (no engine
//! within the deadline) the next run's sweep of dead owners, or `scopebox sweep`, still does.

use super::lifecycle::{bounded, describe, remove_all, run_label, SweepReport, STOP_SIGNALS};
use crate::engine::docker::DockerEngine;
use crate::engine::{Engine, EngineError, RUN_LABEL};
use crate::exit::{CommandError, Outcome};
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Stdio};
use std::time::Duration;

/// The hidden subcommand the reaper runs as.
pub const REAP_COMMAND: &str = "__reap";
/// The one byte a run writes to its reaper when its own cleanup is over.
pub const DONE: u8 = b'D';
/// How long a reaper whose run died may spend removing its objects, engine calls included.
pub const REAP_DEADLINE: Duration = Duration::from_secs(60);
/// Between two rounds of listing and removing: a removal the engine refused is tried again, and
/// what the run's last request created after the first listing is found by the next.
const RETRY_PAUSE: Duration = Duration::from_millis(500);
/// The binary the run is running (even if the file at its path was replaced since it started:
/// the reaper speaks exactly this binary's protocol).
const THIS_BINARY: &str = "/proc/self/exe";

/// `scopebox __reap --run-id ID` (hidden from `--help`: only a run starts it).
#[derive(Debug, clap::Args)]
pub struct ReapArgs {
    /// The run whose objects to remove if its pipe closes without the word that it is done
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    pub run_id: String,
}

/// A run id as `boundary::new_run_id` spells it: what a label filter matches exactly.
fn parse_run_id(text: &str) -> Result<String, String> {
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if (1..=128).contains(&text.len()) && text.chars().all(fits) {
        Ok(text.to_string())
    } else {
        Err(format!(
            "{text:?} is not a run id (1 to 128 letters, digits, '-', '_' or '.')"
        ))
    }
}

/// The run's end of its reaper. Dropping it says the run is done — unless the thread is
/// panicking: a run that panicked may not have cleaned up, so its reaper sees only the pipe
/// close and removes what the run left.
pub struct Reaper {
    /// `None` when the reaper could not be started.
    pipe: Option<ChildStdin>,
    /// Collected on a thread of its own once the run is done (a run retried after cargo
    /// rebuilt the binaries starts a second reaper, and the first must not stay a zombie).
    child: Option<Child>,
}

impl Reaper {
    /// Starts the reaper of run `run_id`. If it cannot be started, says so once on stderr and
    /// returns a `Reaper` that does nothing: the run goes ahead without one.
    pub fn start(run_id: &str) -> Reaper {
        let args = [
            OsStr::new(REAP_COMMAND),
            OsStr::new("--run-id"),
            OsStr::new(run_id),
        ];
        match Reaper::spawn(OsStr::new(THIS_BINARY), &args) {
            Ok(reaper) => reaper,
            Err(e) => {
                say!(
                    "scopebox: could not start the reaper that removes this run's containers if scopebox is killed ({e}); going ahead without it (if it is killed, the next run removes them, or: scopebox sweep)"
                );
                Reaper {
                    pipe: None,
                    child: None,
                }
            }
        }
    }

    /// `program args…` as a reaper: its own session, stdin the pipe, stdout and stderr null.
    fn spawn(program: &OsStr, args: &[&OsStr]) -> std::io::Result<Reaper> {
        let mut command = std::process::Command::new(program);
        command
            .arg0("scopebox")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: one setsid(2) in the child between fork and exec, async-signal-safe; nothing
        // else runs there. A freshly forked child is never a group leader, so it cannot fail;
        // if it did, the reaper would still do its work from scopebox's session.
        unsafe {
            command.pre_exec(|| {
                let _ = rustix::process::setsid();
                Ok(())
            });
        }
        let mut child = command.spawn()?;
        Ok(Reaper {
            pipe: child.stdin.take(),
            child: Some(child),
        })
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        let Some(mut pipe) = self.pipe.take() else {
            return;
        };
        if !std::thread::panicking() {
            // A reaper already gone (killed by hand) cannot hear it: nothing to do then.
            let _ = pipe.write_all(&[DONE]);
        }
        drop(pipe);
        // It exits once it has heard (or removed what the run left): collected without holding
        // up the run. If no thread can be had, it stays a zombie until scopebox exits.
        if let Some(mut child) = self.child.take() {
            let _ = std::thread::Builder::new()
                .name("reaper-wait".into())
                .spawn(move || child.wait());
        }
    }
}

/// How the run ended, as its pipe told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnded {
    /// It wrote `DONE`: it cleaned up (or kept its objects) itself.
    Done,
    /// The pipe closed (or failed) without it: the run died.
    Died,
}

/// Blocks on `pipe` until the run says it is done or the pipe closes without that.
pub fn wait_for_run(pipe: &mut impl Read) -> RunEnded {
    let mut byte = [0u8; 1];
    loop {
        match pipe.read(&mut byte) {
            Ok(0) => return RunEnded::Died,
            Ok(_) if byte[0] == DONE => return RunEnded::Done,
            // Not the word: keep listening.
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return RunEnded::Died,
        }
    }
}

/// What the reaper does once `ended` is known: nothing at all when the run said it was done (not
/// even `connect`); otherwise connects and removes the run's objects.
pub async fn answer<E: Engine>(
    ended: RunEnded,
    connect: impl FnOnce() -> Result<E, EngineError>,
    run_id: &str,
) -> Result<Option<SweepReport>, EngineError> {
    match ended {
        RunEnded::Done => Ok(None),
        RunEnded::Died => Ok(Some(reap(&connect()?, run_id).await)),
    }
}

/// Removes every container (forced, first: a volume in use cannot go) and volume labelled
/// exactly `scopebox.run=<run_id>`, listing again until none is left or `REAP_DEADLINE` passes.
pub async fn reap<E: Engine>(engine: &E, run_id: &str) -> SweepReport {
    let label = run_label(run_id);
    let mut report = SweepReport::default();
    let rounds = async {
        loop {
            match bounded(format!("list what carries {label}"), engine.list(&label)).await {
                Ok(found) => {
                    // The engine filtered by the label; checked again here, so that no engine's
                    // looser match ever hands the reaper another run's object.
                    let ours: Vec<_> = found
                        .into_iter()
                        .filter(|o| o.labels.get(RUN_LABEL).map(String::as_str) == Some(run_id))
                        .collect();
                    if ours.is_empty() {
                        report.errors.clear();
                        return;
                    }
                    let round = remove_all(engine, &ours).await;
                    report.removed.extend(round.removed);
                    report.errors = round.errors;
                }
                Err(e) => report.errors = vec![describe(&e)],
            }
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    };
    if tokio::time::timeout(REAP_DEADLINE, rounds).await.is_err() {
        report.errors.push(format!(
            "failed to remove what carries {label} within {} s",
            REAP_DEADLINE.as_secs()
        ));
    }
    report
}

/// `scopebox __reap --run-id ID`: the reaper's whole life. SIGINT, SIGTERM and SIGHUP are
/// ignored (it must outlive a run that takes them for Ctrl-C and is then killed during its
/// cleanup); its life is bounded by its run's and `REAP_DEADLINE`, and SIGKILL still ends it.
pub async fn reap_command(args: ReapArgs) -> Result<Outcome, CommandError> {
    // Listening is what ignores them: the signals are taken and never acted on.
    let _ignored: Vec<_> = STOP_SIGNALS
        .iter()
        .filter_map(|&kind| tokio::signal::unix::signal(kind).ok())
        .collect();
    let ended = tokio::task::spawn_blocking(|| wait_for_run(&mut std::io::stdin()))
        .await
        .unwrap_or(RunEnded::Died);
    let connect = || DockerEngine::connect(&DockerEngine::host_from_env());
    let Some(report) = answer(ended, connect, &args.run_id).await? else {
        return Ok(Outcome::Passed);
    };
    // Said to whoever started it by hand; a run's reaper writes to null.
    for e in &report.errors {
        say!("scopebox: reaper: {e}");
    }
    say!(
        "scopebox: reaper: run {} died; removed {} object(s)",
        args.run_id,
        report.removed.len()
    );
    Ok(if report.errors.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fake::{Fake, Step};
    use crate::engine::{Labelled, ObjectKind};

    fn object(kind: ObjectKind, id: &str, run: &str, keep: bool) -> Labelled {
        // Owned by a process that no longer exists, as a killed run's objects are.
        crate::engine::fake::run_object(kind, id, run, "host/4294967295", keep)
    }

    /// Run `r1`'s container, volume and a kept container; run `r1-2`'s volume (its id begins
    /// with r1's) and run `r2`'s container, each as dead as `r1`.
    fn engine_with_two_runs() -> Fake {
        let fake = Fake::new();
        fake.add(object(ObjectKind::Volume, "r1-vol", "r1", false));
        fake.add(object(ObjectKind::Container, "r1-ctr", "r1", false));
        fake.add(object(ObjectKind::Container, "r1-kept", "r1", true));
        fake.add(object(ObjectKind::Volume, "r1-2-vol", "r1-2", false));
        fake.add(object(ObjectKind::Container, "r2-ctr", "r2", false));
        fake
    }

    fn ids(fake: &Fake) -> Vec<String> {
        fake.objects().into_iter().map(|o| o.id).collect()
    }

    #[test]
    fn the_done_byte_is_the_only_word_that_ends_the_watch_quietly() {
        let ended = |bytes: &[u8]| wait_for_run(&mut std::io::Cursor::new(bytes.to_vec()));
        assert_eq!(ended(&[DONE]), RunEnded::Done);
        assert_eq!(ended(b"xyD"), RunEnded::Done);
        assert_eq!(ended(b""), RunEnded::Died);
        assert_eq!(ended(b"xyz"), RunEnded::Died);
    }

    #[tokio::test]
    async fn a_run_that_said_it_was_done_leaves_everything_without_even_a_connection() {
        let ended = wait_for_run(&mut std::io::Cursor::new(vec![DONE]));
        let connect =
            || -> Result<Fake, EngineError> { panic!("connected for a run that is done") };
        assert_eq!(answer(ended, connect, "r1").await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_run_that_died_loses_exactly_its_own_objects_kept_ones_included() {
        let fake = engine_with_two_runs();
        let report = reap(&fake, "r1").await;
        // Containers first (a volume in use cannot go), then volumes; listed once more to
        // confirm nothing is left.
        assert_eq!(report.removed, ["r1-ctr", "r1-kept", "r1-vol"]);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert_eq!(ids(&fake), ["r1-2-vol", "r2-ctr"]);
        assert_eq!(
            fake.calls(),
            [
                "list scopebox.run=r1",
                "remove_container r1-ctr",
                "remove_container r1-kept",
                "remove_volume r1-vol",
                "list scopebox.run=r1",
            ]
        );
        // The same, from the pipe's end-of-file on.
        let ended = wait_for_run(&mut std::io::Cursor::new(Vec::new()));
        let connect = || Ok(engine_with_two_runs());
        let report = answer(ended, connect, "r1")
            .await
            .unwrap()
            .expect("it reaped");
        assert_eq!(report.removed, ["r1-ctr", "r1-kept", "r1-vol"]);
    }

    #[tokio::test]
    async fn an_engine_it_cannot_connect_to_is_the_reapers_error() {
        let connect = || -> Result<Fake, EngineError> {
            Err(EngineError::new(
                "connect",
                crate::engine::EngineErrorKind::Unreachable,
            ))
        };
        assert!(answer(RunEnded::Died, connect, "r1").await.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn an_engine_that_never_answers_ends_the_reaper_at_its_deadline() {
        let fake = engine_with_two_runs().hanging(Step::List);
        let started = tokio::time::Instant::now();
        let report = reap(&fake, "r1").await;
        assert_eq!(started.elapsed(), REAP_DEADLINE);
        assert_eq!(
            report.errors,
            ["failed to remove what carries scopebox.run=r1 within 60 s"]
        );
        assert_eq!(ids(&fake).len(), 5, "nothing was removed");
    }

    #[tokio::test(start_paused = true)]
    async fn a_refused_removal_is_tried_again_until_the_deadline_and_named() {
        let fake = engine_with_two_runs().failing(Step::RemoveContainer);
        let report = reap(&fake, "r1").await;
        // The volume went; the containers were tried round after round.
        assert_eq!(report.removed, ["r1-vol"]);
        assert_eq!(
            report.errors.last().map(String::as_str),
            Some("failed to remove what carries scopebox.run=r1 within 60 s")
        );
        assert!(
            report.errors[0].starts_with("failed to remove container r1-ctr"),
            "{:?}",
            report.errors
        );
        let rounds = fake
            .calls()
            .iter()
            .filter(|c| c.as_str() == "list scopebox.run=r1")
            .count();
        assert!(rounds > 2, "{rounds} rounds");
        assert_eq!(ids(&fake), ["r1-ctr", "r1-kept", "r1-2-vol", "r2-ctr"]);
    }

    #[test]
    fn a_run_id_is_refused_unless_a_label_filter_matches_it_exactly() {
        assert_eq!(
            parse_run_id("19c0d2e4a1b-3f2").as_deref(),
            Ok("19c0d2e4a1b-3f2")
        );
        for bad in ["", "a=b", "a b", "a,b", "ünï", &"x".repeat(129)] {
            assert!(parse_run_id(bad).is_err(), "{bad:?}");
        }
    }

    /// A reaper that writes what its stdin brought, and its own pid and session, to `dir`.
    fn recording_reaper(dir: &std::path::Path) -> Reaper {
        let script = format!(
            "set -- $(cat /proc/$$/stat); echo \"$1 $6\" > '{0}/session'; cat > '{0}/heard'",
            dir.display()
        );
        Reaper::spawn(
            OsStr::new("/bin/sh"),
            &[OsStr::new("-c"), OsStr::new(&script)],
        )
        .expect("sh starts")
    }

    #[test]
    fn dropping_the_reaper_says_done_and_closes_the_pipe_and_it_runs_in_its_own_session() {
        let dir = tempfile::tempdir().unwrap();
        let mut reaper = recording_reaper(dir.path());
        let mut child = reaper.child.take().unwrap();
        drop(reaper);
        assert!(child.wait().unwrap().success(), "it saw end-of-file");
        assert_eq!(std::fs::read(dir.path().join("heard")).unwrap(), [DONE]);
        // "<pid> <session>": it leads a session of its own.
        let session = std::fs::read_to_string(dir.path().join("session")).unwrap();
        let (pid, sid) = session.trim().split_once(' ').unwrap();
        assert_eq!(pid, sid, "{session}");
    }

    #[test]
    fn a_run_that_panics_closes_the_pipe_without_saying_done() {
        let dir = tempfile::tempdir().unwrap();
        let mut reaper = recording_reaper(dir.path());
        let mut child = reaper.child.take().unwrap();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _reaper = reaper;
            panic!("a run that panics");
        }));
        assert!(panicked.is_err());
        assert!(child.wait().unwrap().success());
        assert_eq!(std::fs::read(dir.path().join("heard")).unwrap(), b"");
    }

    #[test]
    fn a_dropped_reaper_is_collected_and_does_not_stay_a_zombie() {
        let dir = tempfile::tempdir().unwrap();
        let reaper = recording_reaper(dir.path());
        let pid = reaper.child.as_ref().unwrap().id();
        drop(reaper);
        // Gone from /proc once collected; a zombie keeps its entry (state Z) for as long as
        // nobody waits for it. The wait is bounded only so that a failure ends.
        let stat = format!("/proc/{pid}/stat");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::path::Path::new(&stat).exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "reaper {pid} was never collected: {}",
                std::fs::read_to_string(&stat).unwrap_or_default()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(std::fs::read(dir.path().join("heard")).unwrap(), [DONE]);
    }

    #[test]
    fn a_reaper_that_cannot_start_is_an_error_the_run_goes_ahead_without() {
        let missing = Reaper::spawn(OsStr::new("/nonexistent/scopebox"), &[]);
        assert!(missing.is_err());
        // The inert reaper a run then holds does nothing when dropped.
        drop(Reaper {
            pipe: None,
            child: None,
        });
    }
}
