//! The container lifecycle of one evidence run, and the label sweeps around it. In order:
//! create the labelled volume, create and start the container, follow its logs while waiting
//! under the deadline (`tokio::time::timeout`), and on expiry kill it FIRST; then copy
//! `/evidence` out (only once the engine confirmed it stopped) and write it into the bundle on
//! a blocking thread while the engine inspects container and image, and finally — on every path: success, failure, deadline, Ctrl-C — remove the container and
//! the volume and sweep by `scopebox.run=<id>`; the lifecycle returns only once the bundle's
//! copy is written (or refused). Every other engine call is under its own
//! `STEP_TIMEOUT`.
//! Every step's failure is recorded, never thrown past the cleanup; every step the engine
//! confirmed is logged in order with its offset from the run's start (`Record::events`, written
//! to `outer/execution.json`), so the verifier can check the order rather than trust it. It
//! never judges the evidence and never writes the bundle (that is `receipt`).

use crate::boundary::Names;
use crate::engine::short;
use crate::engine::{
    Engine, EngineError, EngineErrorKind, Labelled, Labels, ObjectKind, KEEP_LABEL, OWNER_LABEL,
    RUN_LABEL,
};
use crate::evidence::MAX_ARCHIVE_BYTES;
use crate::progress::Progress;
use crate::sandbox::Sandbox;
use futures_util::StreamExt;
use scopebox_schema::layout;
use scopebox_schema::receipt::{Cleanup, EventKind, LifecycleEvent};
use std::future::Future;
use std::io::Write;
use std::time::{Duration, Instant};

/// The deadline when none is given.
pub const DEFAULT_DEADLINE_SECS: u64 = 180;
/// After a kill, how long to wait for the engine to report the container stopped.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// After a normal exit, how long the remaining log lines may take to arrive.
const LOG_DRAIN: Duration = Duration::from_secs(2);
/// Bound on any single engine call other than the container wait (which the deadline bounds,
/// and `STOP_GRACE` after a kill) and the log stream (read only during that wait): a hung engine
/// must not hang the run, and cleanup must still be attempted. Every other call — ping, image
/// load and inspect, the sweeps — goes through `bounded`.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(120);

/// An engine call under `STEP_TIMEOUT`; `what` fits "failed to {what}" and names the call, so
/// the error says which step the engine never answered ("failed to start container c1: the
/// engine did not answer within 120 s").
pub(crate) async fn bounded<T>(
    what: impl Into<String>,
    call: impl Future<Output = Result<T, EngineError>>,
) -> Result<T, EngineError> {
    match tokio::time::timeout(STEP_TIMEOUT, call).await {
        Ok(result) => result,
        Err(_) => Err(EngineError::new(what, EngineErrorKind::Other).with_source(
            std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "the engine did not answer within {} s",
                    STEP_TIMEOUT.as_secs()
                ),
            ),
        )),
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The OCI platform the container is created for ("linux/arm64").
    pub platform: String,
    pub names: Names,
    pub labels: Labels,
    pub sandbox: Sandbox,
    pub image_id: String,
    pub deadline: Duration,
    pub keep_on_failure: bool,
    /// When the run started (`startedAt`): lifecycle offsets count from here. tokio's clock, so
    /// tests with a paused clock see the deadline's offset exactly.
    pub origin: tokio::time::Instant,
    /// Where the exported evidence is extracted at once, before the container and its volume
    /// are removed (`None`: kept in `Record::evidence` for the caller). Extracting there
    /// overlaps the other containers' runs, and allocates the bundle's files before the
    /// volume's are deleted: right after a mass deletion ext4 allocates inodes several times
    /// slower.
    pub evidence_dest: Option<std::path::PathBuf>,
}

/// What happened, step by step.
#[derive(Debug)]
pub struct Record {
    pub volume_created: bool,
    pub container_id: Option<String>,
    pub started: bool,
    /// The container's exit code, as the engine reported it.
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    pub interrupted: bool,
    /// We killed the container (deadline, wait failure or Ctrl-C).
    pub killed: bool,
    /// `/evidence` was copied out of the container (and, with `Plan::evidence_dest`,
    /// extracted there: a failed extraction is in `errors`).
    pub exported: bool,
    /// The engine's tar of `/evidence`, when the plan names no destination to extract it to.
    pub evidence: Option<Vec<u8>>,
    pub container_inspect: Option<Vec<u8>>,
    pub image_inspect: Option<Vec<u8>>,
    /// Every failed step, as "failed to …" text.
    pub errors: Vec<String>,
    pub cleanup: Cleanup,
    /// Container and volume were kept (`--keep-on-failure`).
    pub kept: bool,
    pub run_ms: u64,
    pub export_ms: u64,
    /// Every step the engine confirmed, in order, with its offset from `Plan::origin`.
    pub events: Vec<LifecycleEvent>,
}

impl Default for Record {
    fn default() -> Record {
        Record {
            volume_created: false,
            container_id: None,
            started: false,
            exit_code: None,
            timed_out: false,
            interrupted: false,
            killed: false,
            exported: false,
            evidence: None,
            container_inspect: None,
            image_inspect: None,
            errors: Vec::new(),
            cleanup: Cleanup {
                container_removed: false,
                volume_removed: false,
                leftovers: 0,
            },
            kept: false,
            run_ms: 0,
            export_ms: 0,
            events: Vec::new(),
        }
    }
}

impl Record {
    fn fail(&mut self, e: EngineError) {
        self.errors.push(describe(&e));
    }

    /// Log that `event` just completed.
    fn log(&mut self, plan: &Plan, event: EventKind) {
        let at_ms = plan.origin.elapsed().as_millis();
        self.events.push(LifecycleEvent {
            event,
            at_ms: u64::try_from(at_ms).unwrap_or(u64::MAX),
        });
    }

    /// What this lifecycle made and never saw removed: its container (once created) and its
    /// volume (once created), each until the engine confirmed its removal.
    pub fn not_seen_removed(&self) -> (bool, bool) {
        let saw = |kind| self.events.iter().any(|e| e.event == kind);
        (
            self.container_id.is_some() && !saw(EventKind::ContainerRemoved),
            self.volume_created && !saw(EventKind::VolumeRemoved),
        )
    }

    /// Anything short of a clean exit 0 with every step done.
    pub fn failed(&self) -> bool {
        !self.errors.is_empty()
            || self.timed_out
            || self.interrupted
            || self.exit_code != Some(0)
            || !self.exported
    }
}

/// Ctrl-C, listened for from the moment a command starts: a SIGINT that lands between two
/// steps is kept instead of being lost to a listener that did not exist yet. SIGTERM (what
/// `kill`, `timeout`, CI cancellations and `docker stop` send) and SIGHUP (the terminal went
/// away) are taken for Ctrl-C too, so the containers and volumes are removed on those paths
/// as well. If no listener can be installed, `hit` never completes (only the deadline can end
/// the run).
pub struct CtrlC {
    rx: tokio::sync::watch::Receiver<bool>,
}

/// The signals taken for Ctrl-C (and ignored by the reaper).
pub(super) const STOP_SIGNALS: [tokio::signal::unix::SignalKind; 3] = [
    tokio::signal::unix::SignalKind::interrupt(),
    tokio::signal::unix::SignalKind::terminate(),
    tokio::signal::unix::SignalKind::hangup(),
];

impl CtrlC {
    pub fn listen() -> CtrlC {
        let (tx, rx) = tokio::sync::watch::channel(false);
        for kind in STOP_SIGNALS {
            let Ok(mut signal) = tokio::signal::unix::signal(kind) else {
                continue;
            };
            let tx = tx.clone();
            tokio::spawn(async move {
                signal.recv().await;
                let _ = tx.send(true);
            });
        }
        // With no listener installed every sender is gone, and `hit` then waits for ever.
        drop(tx);
        CtrlC { rx }
    }

    /// Whether Ctrl-C was pressed by now.
    pub fn was_hit(&self) -> bool {
        *self.rx.borrow()
    }

    /// Completes once Ctrl-C was pressed (at once if it already was).
    pub fn hit(&self) -> impl Future<Output = ()> + 'static {
        let mut rx = self.rx.clone();
        async move {
            if rx.wait_for(|hit| *hit).await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// "failed to X: cause: cause".
pub fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = format!("failed to {e}");
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// Run the container once. `interrupt` resolving (Ctrl-C) stops whatever step is in flight;
/// cleanup runs afterwards regardless.
pub async fn lifecycle<E: Engine, W: Write>(
    engine: &E,
    plan: &Plan,
    interrupt: impl Future<Output = ()>,
    progress: &mut Progress<W>,
) -> Record {
    let mut rec = Record::default();
    let mut extraction = None;
    let interrupted = {
        let steps = steps(engine, plan, &mut rec, &mut extraction, progress);
        tokio::pin!(steps);
        tokio::pin!(interrupt);
        tokio::select! {
            () = &mut steps => false,
            () = &mut interrupt => true,
        }
    };
    if interrupted {
        rec.interrupted = true;
        rec.log(plan, EventKind::Interrupted);
        if let Some(id) = rec.container_id.clone() {
            if !rec.killed {
                let _ = kill(engine, plan, &mut rec, &id).await;
            }
        }
    }
    // Whether to keep the container for a look depends on whether its evidence was sound.
    if plan.keep_on_failure {
        settle(extraction.take(), &mut rec).await;
    }
    cleanup(engine, plan, &mut rec).await;
    settle(extraction, &mut rec).await;
    rec
}

/// The evidence being written into the bundle on a blocking thread (file creation is the slow
/// part of an export on some filesystems) while the engine inspects and removes the container;
/// it yields the extraction's outcome and whether the container had been killed by then.
type Extraction = tokio::task::JoinHandle<(Result<crate::evidence::Extracted, String>, bool)>;

/// Waits for `extraction`, if one was started, and records its outcome: always awaited before
/// the lifecycle returns, so no write into the bundle outlives it (not even after Ctrl-C).
async fn settle(extraction: Option<Extraction>, rec: &mut Record) {
    let Some(extraction) = extraction else {
        return;
    };
    let id = rec.container_id.as_deref().map(short).unwrap_or_default();
    match extraction.await {
        // Killed mid-case, the runner never got to end its journal: the cases before the cut
        // are the evidence, and the run already failed.
        Ok((Ok(done), killed)) if done.journal_cut && !killed => rec.errors.push(format!(
            "read the case journal of container {id}: it does not end with exactly its \
             trailer, so the runner never finished its cases or something else cut or padded it"
        )),
        Ok((Ok(_), _)) => {}
        Ok((Err(problem), _)) => rec.errors.push(problem),
        Err(e) => rec.errors.push(format!(
            "failed to extract the evidence of container {id}: the extraction stopped: {e}"
        )),
    }
}

async fn steps<E: Engine, W: Write>(
    engine: &E,
    plan: &Plan,
    rec: &mut Record,
    extraction: &mut Option<Extraction>,
    progress: &mut Progress<W>,
) {
    if let Err(e) = bounded(
        format!("create volume {}", plan.names.volume),
        engine.create_volume(&plan.names.volume, &plan.labels),
    )
    .await
    {
        return rec.fail(e);
    }
    rec.volume_created = true;
    rec.log(plan, EventKind::VolumeCreated);
    let id = match bounded(
        format!("create container {}", plan.names.container),
        engine.create_container(&plan.names.container, &plan.sandbox),
    )
    .await
    {
        Ok(id) => id,
        Err(e) => return rec.fail(e),
    };
    rec.container_id = Some(id.clone());
    rec.log(plan, EventKind::ContainerCreated);
    if let Err(e) = bounded(
        format!("start container {}", short(&id)),
        engine.start_container(&id),
    )
    .await
    {
        return rec.fail(e);
    }
    rec.started = true;
    rec.log(plan, EventKind::Started);
    let started = Instant::now();

    let mut logs = engine.logs(&id);
    let mut logs_open = true;
    let waited = {
        let wait = tokio::time::timeout(plan.deadline, engine.wait_container(&id));
        tokio::pin!(wait);
        loop {
            tokio::select! {
                waited = &mut wait => break waited,
                chunk = logs.next(), if logs_open => match chunk {
                    Some(Ok(bytes)) => progress.feed(&bytes),
                    Some(Err(e)) => {
                        // Progress only: the evidence volume, not the log, is the record.
                        rec.errors.push(describe(&e));
                        logs_open = false;
                    }
                    None => logs_open = false,
                },
            }
        }
    };
    // Whether the engine confirmed the container stopped: it exited, or our kill landed.
    let stopped = match waited {
        Ok(Ok(code)) => {
            rec.exit_code = Some(code);
            rec.log(plan, EventKind::Exited);
            if logs_open {
                let drain = async {
                    while let Some(Ok(bytes)) = logs.next().await {
                        progress.feed(&bytes);
                    }
                };
                let _ = tokio::time::timeout(LOG_DRAIN, drain).await;
            }
            true
        }
        Ok(Err(e)) => {
            rec.fail(e);
            rec.log(plan, EventKind::WaitFailed);
            kill(engine, plan, rec, &id).await
        }
        Err(_elapsed) => {
            rec.timed_out = true;
            rec.log(plan, EventKind::DeadlinePassed);
            // Kill first: nothing may run while the evidence is copied out.
            let killed = kill(engine, plan, rec, &id).await;
            match tokio::time::timeout(STOP_GRACE, engine.wait_container(&id)).await {
                Ok(Ok(code)) => {
                    rec.exit_code = Some(code);
                    rec.log(plan, EventKind::Exited);
                    true
                }
                _ => killed,
            }
        }
    };
    drop(logs);
    progress.finish();
    rec.run_ms = started.elapsed().as_millis() as u64;

    let exporting = Instant::now();
    // A container the engine never confirmed stopped (the kill went unanswered) may still be
    // writing to `/evidence`: copying it out would record whatever the candidate left there
    // mid-run. Inspecting is still worth it: it shows the state the engine reports.
    let exported = if stopped {
        bounded(
            format!(
                "copy {} out of container {}",
                layout::EVIDENCE_DIR,
                short(&id)
            ),
            engine.download(&id, layout::EVIDENCE_DIR, MAX_ARCHIVE_BYTES),
        )
        .await
    } else {
        Err(EngineError::new(
            format!(
                "copy {} out of container {}: it was never confirmed stopped, so it may still be writing there",
                layout::EVIDENCE_DIR,
                short(&id)
            ),
            EngineErrorKind::Other,
        ))
    };
    match exported {
        Ok(tar) => {
            rec.exported = true;
            rec.log(plan, EventKind::EvidenceExported);
            match &plan.evidence_dest {
                Some(dest) => {
                    let (dest, killed) = (dest.clone(), rec.killed);
                    *extraction = Some(tokio::task::spawn_blocking(move || {
                        let extracted = std::fs::create_dir_all(&dest)
                            .map_err(|e| format!("create {}: {e}", dest.display()))
                            .and_then(|()| {
                                crate::evidence::extract(&tar, &dest).map_err(|e| describe(&e))
                            });
                        (extracted, killed)
                    }));
                }
                None => rec.evidence = Some(tar),
            }
        }
        Err(e) => rec.fail(e),
    }
    rec.export_ms = exporting.elapsed().as_millis() as u64;
    match bounded(
        format!("inspect container {}", short(&id)),
        engine.inspect_container(&id),
    )
    .await
    {
        Ok(doc) => {
            rec.container_inspect = Some(doc);
            rec.log(plan, EventKind::ContainerInspected);
        }
        Err(e) => rec.fail(e),
    }
    match bounded(
        format!("inspect image {}", plan.image_id),
        engine.inspect_image(&plan.image_id),
    )
    .await
    {
        Ok(Some(doc)) => {
            rec.image_inspect = Some(doc);
            rec.log(plan, EventKind::ImageInspected);
        }
        Ok(None) => rec.errors.push(format!(
            "failed to inspect image {}: the engine no longer has it",
            plan.image_id
        )),
        Err(e) => rec.fail(e),
    }
}

/// Kill the container; true when it is confirmed stopped (killed, or no longer running).
async fn kill<E: Engine>(engine: &E, plan: &Plan, rec: &mut Record, id: &str) -> bool {
    match bounded(
        format!("kill container {}", short(id)),
        engine.kill_container(id),
    )
    .await
    {
        Ok(()) => {
            rec.killed = true;
            rec.log(plan, EventKind::Killed);
            true
        }
        // Not running any more: nothing left to kill.
        Err(e)
            if matches!(
                e.kind,
                EngineErrorKind::Conflict | EngineErrorKind::NotFound
            ) =>
        {
            true
        }
        Err(e) => {
            rec.fail(e);
            false
        }
    }
}

async fn cleanup<E: Engine>(engine: &E, plan: &Plan, rec: &mut Record) {
    if plan.keep_on_failure && rec.failed() && !rec.interrupted {
        rec.kept = true;
        rec.log(plan, EventKind::Kept);
        rec.cleanup = Cleanup {
            container_removed: rec.container_id.is_none(),
            volume_removed: !rec.volume_created,
            leftovers: 0,
        };
        if let Ok(found) = bounded(
            format!("list what carries {}", plan.names.sweep_label),
            engine.list(&plan.names.sweep_label),
        )
        .await
        {
            rec.cleanup.leftovers = found.len() as u32;
        }
        return;
    }
    if let Some(id) = rec.container_id.clone() {
        match bounded(
            format!("remove container {}", short(&id)),
            engine.remove_container(&id),
        )
        .await
        {
            Ok(()) => rec.log(plan, EventKind::ContainerRemoved),
            Err(e) if e.kind == EngineErrorKind::NotFound => {
                rec.log(plan, EventKind::ContainerRemoved)
            }
            Err(e) => rec.fail(e),
        }
    }
    // The sweep by label removes the volume, and whatever a dropped request created without
    // telling us (Ctrl-C mid-create): containers first, since a volume in use cannot go.
    let label = plan.names.sweep_label.clone();
    let mut swept_volume = false;
    match bounded(format!("list what carries {label}"), engine.list(&label)).await {
        Ok(found) => {
            swept_volume = found
                .iter()
                .any(|o| o.kind == ObjectKind::Volume && o.id == plan.names.volume);
            // Containers first (a volume in use cannot go), each logged as it goes; a
            // container found only by label is the run's own whose create never answered.
            for kind in [ObjectKind::Container, ObjectKind::Volume] {
                for o in found.iter().filter(|o| o.kind == kind) {
                    match remove_object(engine, o).await {
                        Ok(()) => {}
                        Err(e) if e.kind == EngineErrorKind::NotFound => {}
                        Err(e) => {
                            rec.fail(e);
                            continue;
                        }
                    }
                    rec.log(
                        plan,
                        match kind {
                            ObjectKind::Container => EventKind::ContainerRemoved,
                            ObjectKind::Volume => EventKind::VolumeRemoved,
                        },
                    );
                }
            }
        }
        Err(e) => rec.fail(e),
    }
    if rec.volume_created && !swept_volume {
        match bounded(
            format!("remove volume {}", plan.names.volume),
            engine.remove_volume(&plan.names.volume),
        )
        .await
        {
            Ok(()) => rec.log(plan, EventKind::VolumeRemoved),
            Err(e) if e.kind == EngineErrorKind::NotFound => {
                rec.log(plan, EventKind::VolumeRemoved)
            }
            Err(e) => rec.fail(e),
        }
    }
    rec.cleanup = match bounded(format!("list what carries {label}"), engine.list(&label)).await {
        Ok(found) => {
            rec.log(plan, EventKind::Swept);
            Cleanup {
                container_removed: !found.iter().any(|o| o.kind == ObjectKind::Container),
                volume_removed: !found.iter().any(|o| o.kind == ObjectKind::Volume),
                leftovers: found.len() as u32,
            }
        }
        Err(e) => {
            rec.fail(e);
            // Nothing proves a removal without the listing; what is known left is counted.
            let (container, volume) = rec.not_seen_removed();
            Cleanup {
                container_removed: false,
                volume_removed: false,
                leftovers: u32::from(container) + u32::from(volume),
            }
        }
    };
}

/// `scopebox.run=<id>`.
pub fn run_label(run_id: &str) -> String {
    format!("{RUN_LABEL}={run_id}")
}

/// What a sweep did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SweepReport {
    pub removed: Vec<String>,
    /// Objects left alone: kept by `--keep-on-failure`, or owned by a live run.
    pub skipped: Vec<String>,
    pub errors: Vec<String>,
}

/// Remove leftovers of earlier runs: every object labelled `scopebox.run` whose owner process is
/// gone (`is_live` says whether an owner label names a live process). Kept objects are removed
/// only with `include_kept` (`scopebox sweep`).
pub async fn sweep_stale<E: Engine>(
    engine: &E,
    include_kept: bool,
    is_live: impl Fn(&str) -> bool,
) -> Result<SweepReport, EngineError> {
    let found = bounded(
        format!("list what carries {RUN_LABEL}"),
        engine.list(RUN_LABEL),
    )
    .await?;
    let (stale, alive): (Vec<Labelled>, Vec<Labelled>) = found.into_iter().partition(|o| {
        let kept = o.labels.contains_key(KEEP_LABEL);
        let live = o
            .labels
            .get(OWNER_LABEL)
            .is_some_and(|owner| is_live(owner));
        !live && (include_kept || !kept)
    });
    let mut report = remove_all(engine, &stale).await;
    report.skipped = alive.into_iter().map(|o| o.id).collect();
    Ok(report)
}

/// Containers first (a volume in use cannot be removed), then volumes.
pub(super) async fn remove_all<E: Engine>(engine: &E, objects: &[Labelled]) -> SweepReport {
    let mut report = SweepReport::default();
    for kind in [ObjectKind::Container, ObjectKind::Volume] {
        for o in objects.iter().filter(|o| o.kind == kind) {
            match remove_object(engine, o).await {
                Ok(()) => report.removed.push(o.id.clone()),
                Err(e) if e.kind == EngineErrorKind::NotFound => {}
                Err(e) => report.errors.push(describe(&e)),
            }
        }
    }
    report
}

async fn remove_object<E: Engine>(engine: &E, o: &Labelled) -> Result<(), EngineError> {
    match o.kind {
        ObjectKind::Container => {
            bounded(
                format!("remove container {}", short(&o.id)),
                engine.remove_container(&o.id),
            )
            .await
        }
        ObjectKind::Volume => {
            bounded(
                format!("remove volume {}", o.id),
                engine.remove_volume(&o.id),
            )
            .await
        }
    }
}

/// Whether `<hostname>/<pid>` names a live process on this host. Another host's owner counts
/// as live: we cannot tell, so we leave its objects alone.
pub fn owner_is_live(owner: &str) -> bool {
    let Some((host, pid)) = owner.rsplit_once('/') else {
        return false;
    };
    if host != crate::boundary::hostname() {
        return true;
    }
    match pid.parse::<u32>() {
        Ok(pid) => std::path::Path::new(&format!("/proc/{pid}")).exists(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fake::{Fake, Step, WaitBehaviour};
    use crate::evidence::tests::evidence_tar;

    fn plan(keep: bool) -> Plan {
        let names = Names::for_run("t1");
        let labels = crate::boundary::labels("t1", keep);
        let (policy, _) =
            crate::boundary::load_policy(&crate::toolchain::workspace_root()).unwrap();
        Plan {
            platform: "linux/amd64".into(),
            sandbox: crate::boundary::sandbox(
                &policy,
                "sha256:img",
                scopebox_schema::platform::Platform::LinuxAmd64,
                &names.volume,
                &labels,
                None,
            ),
            names,
            labels,
            image_id: "sha256:img".into(),
            deadline: Duration::from_secs(180),
            keep_on_failure: keep,
            origin: tokio::time::Instant::now(),
            evidence_dest: None,
        }
    }

    /// The engine calls that copy out the evidence and inspect what ran, in order.
    const READ_OUT: [&str; 3] = [
        "download c1 /evidence",
        "inspect_container c1",
        "inspect_image sha256:img",
    ];
    /// The engine calls every path ends with once the container exists: remove it, sweep,
    /// remove the volume, recount.
    const CLEAN_UP: [&str; 4] = [
        "remove_container c1",
        "list scopebox.run=t1",
        "remove_volume scopebox-t1-evidence",
        "list scopebox.run=t1",
    ];

    fn never() -> std::future::Pending<()> {
        std::future::pending()
    }

    async fn go(fake: &Fake, plan: &Plan) -> Record {
        let mut progress = Progress::new(2, Vec::new());
        lifecycle(fake, plan, never(), &mut progress).await
    }

    /// The lifecycle log as (name, offset in ms).
    fn logged(rec: &Record) -> Vec<(&'static str, u64)> {
        rec.events
            .iter()
            .map(|e| (e.event.name(), e.at_ms))
            .collect()
    }

    /// What the verifier's `execution.lifecycle` check says about this record.
    fn lifecycle_check(rec: &Record, plan: &Plan) -> Vec<String> {
        let execution = crate::receipt::execution(rec, plan.deadline.as_secs(), 0, 0);
        scopebox_receipts::verify::lifecycle_failures(&execution, &rec.cleanup)
    }

    /// The tail every path must end with: remove container, remove volume, sweep, recount.
    fn removed_everything(fake: &Fake, rec: &Record) {
        assert!(rec.cleanup.container_removed, "{rec:?}");
        assert!(rec.cleanup.volume_removed, "{rec:?}");
        assert_eq!(rec.cleanup.leftovers, 0);
        assert!(
            fake.objects().is_empty(),
            "left behind: {:?}",
            fake.objects()
        );
    }

    #[tokio::test]
    async fn a_clean_run_exports_inspects_and_removes_everything() {
        let fake = Fake::new()
            .with_logs(&[b"case a pass 10\ncase b pa", b"ss 20\n"])
            .with_evidence(evidence_tar(&[("summary.json", b"{}")]));
        let p = plan(false);
        let rec = go(&fake, &p).await;
        assert_eq!(rec.exit_code, Some(0));
        assert!(rec.errors.is_empty(), "{:?}", rec.errors);
        assert!(!rec.failed());
        assert!(rec.evidence.is_some() && rec.container_inspect.is_some());
        let started = [
            "create_volume scopebox-t1-evidence",
            "create_container scopebox-t1",
            "start c1",
            "logs c1",
            "wait c1",
        ];
        assert_eq!(fake.calls(), [&started[..], &READ_OUT, &CLEAN_UP].concat());
        removed_everything(&fake, &rec);
        // The log says the same, in the same order, and passes the verifier's order check.
        let names: Vec<&str> = logged(&rec).into_iter().map(|(name, _)| name).collect();
        assert_eq!(
            names,
            [
                "volume-created",
                "container-created",
                "started",
                "exited",
                "evidence-exported",
                "container-inspected",
                "image-inspected",
                "container-removed",
                "volume-removed",
                "swept",
            ]
        );
        assert!(rec.events.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
        assert_eq!(lifecycle_check(&rec, &p), Vec::<String>::new());
    }

    #[tokio::test]
    async fn with_a_destination_the_evidence_is_extracted_there_by_the_end_of_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("platforms/linux-amd64/evidence");
        let fake = Fake::new().with_evidence(evidence_tar(&[
            ("summary.json", b"{}"),
            ("cases/a/stdout", b"out"),
        ]));
        // With --keep-on-failure: a clean run is no failure, so nothing is kept.
        let mut p = plan(true);
        p.evidence_dest = Some(dest.clone());
        let rec = go(&fake, &p).await;
        assert!(rec.errors.is_empty(), "{:?}", rec.errors);
        assert!(rec.evidence.is_none(), "extracted, not kept");
        assert!(rec.exported && !rec.failed() && !rec.kept, "{rec:?}");
        assert_eq!(std::fs::read(dest.join("summary.json")).unwrap(), b"{}");
        assert_eq!(std::fs::read(dest.join("cases/a/stdout")).unwrap(), b"out");
        removed_everything(&fake, &rec);
        assert_eq!(lifecycle_check(&rec, &p), Vec::<String>::new());
    }

    /// A run whose evidence archive carries a symlink, extracted into a temporary bundle.
    async fn run_with_an_unsafe_archive(keep: bool) -> (Fake, Record, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        tar.append_link(&mut h, "evidence/summary.json", "/etc/passwd")
            .unwrap();
        let fake = Fake::new().with_evidence(tar.into_inner().unwrap());
        let mut p = plan(keep);
        p.evidence_dest = Some(dir.path().join("evidence"));
        let rec = go(&fake, &p).await;
        assert!(
            rec.errors
                .iter()
                .any(|e| e.contains("only files and directories are accepted")),
            "{:?}",
            rec.errors
        );
        assert!(!dir.path().join("evidence/summary.json").exists());
        (fake, rec, dir)
    }

    #[tokio::test]
    async fn an_unsafe_archive_is_an_error_and_everything_is_still_removed() {
        // The extraction runs beside the removal; its failure is still recorded.
        let (fake, rec, _dir) = run_with_an_unsafe_archive(false).await;
        removed_everything(&fake, &rec);
    }

    #[tokio::test]
    async fn with_keep_on_failure_an_unsafe_archive_keeps_the_container() {
        // The keep decision waits for the extraction: its failure is the run's failure.
        let (fake, rec, _dir) = run_with_an_unsafe_archive(true).await;
        assert!(rec.kept, "{rec:?}");
        assert!(!fake.calls().iter().any(|c| c.starts_with("remove")));
    }

    #[tokio::test]
    async fn create_failing_still_removes_the_volume() {
        let fake = Fake::new().failing(Step::CreateContainer);
        let rec = go(&fake, &plan(false)).await;
        assert!(rec.failed());
        assert!(rec.errors[0].starts_with("failed to create container scopebox-t1"));
        // No container to remove: the sweep, the volume and the recount.
        let created = [
            "create_volume scopebox-t1-evidence",
            "create_container scopebox-t1",
        ];
        assert_eq!(fake.calls(), [&created[..], &CLEAN_UP[1..]].concat());
        removed_everything(&fake, &rec);
    }

    #[tokio::test]
    async fn start_failing_removes_container_and_volume_without_exporting() {
        let fake = Fake::new().failing(Step::Start);
        let rec = go(&fake, &plan(false)).await;
        assert!(rec.failed() && !rec.started);
        let calls = fake.calls();
        assert!(
            !calls.iter().any(|c| c.starts_with("download")),
            "{calls:?}"
        );
        assert_eq!(&calls[2..], [&["start c1"][..], &CLEAN_UP].concat());
        removed_everything(&fake, &rec);
    }

    #[tokio::test]
    async fn a_wait_error_kills_then_still_exports_and_cleans_up() {
        let fake = Fake::new()
            .with_wait(WaitBehaviour::Error)
            .with_evidence(evidence_tar(&[]));
        let rec = go(&fake, &plan(false)).await;
        assert!(rec.failed());
        assert!(rec.killed);
        assert!(rec
            .errors
            .iter()
            .any(|e| e.starts_with("failed to wait for container")));
        let calls = fake.calls();
        let pos = |name: &str| calls.iter().position(|c| c.starts_with(name)).unwrap();
        assert!(pos("kill") < pos("download"), "{calls:?}");
        assert!(pos("download") < pos("remove_container"), "{calls:?}");
        removed_everything(&fake, &rec);
    }

    #[tokio::test]
    async fn a_non_zero_exit_is_an_exit_code_not_an_engine_failure() {
        let fake = Fake::new()
            .with_wait(WaitBehaviour::Exit(1))
            .with_evidence(evidence_tar(&[]));
        let rec = go(&fake, &plan(false)).await;
        assert_eq!(rec.exit_code, Some(1));
        assert!(rec.errors.is_empty(), "{:?}", rec.errors);
        assert!(!rec.killed);
        assert!(rec.failed());
        removed_everything(&fake, &rec);
    }

    #[tokio::test]
    async fn export_failing_still_inspects_and_removes_everything() {
        let fake = Fake::new().failing(Step::Download);
        let rec = go(&fake, &plan(false)).await;
        assert!(rec.evidence.is_none() && rec.failed());
        assert!(rec
            .errors
            .iter()
            .any(|e| e.starts_with("failed to copy /evidence")));
        assert!(rec.container_inspect.is_some());
        removed_everything(&fake, &rec);
    }

    /// The engine calls of a run whose container exits by itself, up to the wait.
    const RAN: [&str; 5] = [
        "create_volume scopebox-t1-evidence",
        "create_container scopebox-t1",
        "start c1",
        "logs c1",
        "wait c1",
    ];

    /// What `scopebox run` would exit with for this record, even if the judge and the verifier
    /// accepted everything else.
    fn exit_code(rec: &Record) -> u8 {
        crate::exit::code(&Ok(crate::run::outcome(rec, true)))
    }

    /// "failed to {what}: the engine did not answer within 120 s".
    fn unanswered(what: &str) -> String {
        format!("failed to {what}: the engine did not answer within 120 s")
    }

    /// A call that never answers after the container exited: that call alone fails, after
    /// exactly one `STEP_TIMEOUT`, and every later step and the whole cleanup still run.
    async fn hang_after_the_exit(step: Step, what: &str) -> Record {
        let fake = Fake::new().hanging(step);
        let rec = go(&fake, &plan(false)).await;
        assert_eq!(rec.errors, [unanswered(what)]);
        assert_eq!(fake.calls(), [&RAN[..], &READ_OUT, &CLEAN_UP].concat());
        assert_eq!(exit_code(&rec), crate::exit::FAILURE);
        removed_everything(&fake, &rec);
        assert_eq!(rec.events.last().map(|e| e.at_ms), Some(120_000));
        rec
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_export_times_out_and_cleanup_still_runs() {
        let rec = hang_after_the_exit(Step::Download, "copy /evidence out of container c1").await;
        assert!(rec.evidence.is_none() && rec.container_inspect.is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_container_inspection_times_out_and_cleanup_still_runs() {
        let rec = hang_after_the_exit(Step::InspectContainer, "inspect container c1").await;
        assert!(rec.evidence.is_some() && rec.container_inspect.is_none());
        assert!(rec.image_inspect.is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_image_inspection_times_out_and_cleanup_still_runs() {
        let rec = hang_after_the_exit(Step::InspectImage, "inspect image sha256:img").await;
        assert!(rec.container_inspect.is_some() && rec.image_inspect.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_volume_create_fails_the_run_and_still_sweeps() {
        let fake = Fake::new().hanging(Step::CreateVolume);
        let rec = go(&fake, &plan(false)).await;
        assert_eq!(
            rec.errors,
            [unanswered("create volume scopebox-t1-evidence")]
        );
        assert!(!rec.volume_created && rec.container_id.is_none());
        // Nothing to remove by name: the sweep and the recount still ask the engine.
        assert_eq!(
            fake.calls(),
            [
                "create_volume scopebox-t1-evidence",
                "list scopebox.run=t1",
                "list scopebox.run=t1",
            ]
        );
        assert_eq!(logged(&rec), [("swept", 120_000)]);
        assert_eq!(exit_code(&rec), crate::exit::FAILURE);
        removed_everything(&fake, &rec);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_container_create_is_found_by_label_and_removed() {
        // The engine made the container but its answer never came: only the label finds it.
        let fake = Fake::new().hanging(Step::CreateContainer);
        let rec = go(&fake, &plan(false)).await;
        assert_eq!(rec.errors, [unanswered("create container scopebox-t1")]);
        assert!(rec.container_id.is_none() && !rec.interrupted);
        assert_eq!(
            fake.calls(),
            [
                "create_volume scopebox-t1-evidence",
                "create_container scopebox-t1",
                "list scopebox.run=t1",
                "remove_container c1",
                "remove_volume scopebox-t1-evidence",
                "list scopebox.run=t1",
            ]
        );
        assert_eq!(exit_code(&rec), crate::exit::FAILURE);
        removed_everything(&fake, &rec);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_start_fails_without_waiting_and_removes_everything() {
        let fake = Fake::new().hanging(Step::Start);
        let rec = go(&fake, &plan(false)).await;
        assert_eq!(rec.errors, [unanswered("start container c1")]);
        assert!(!rec.started && rec.exit_code.is_none() && rec.evidence.is_none());
        // No wait, no export from a container that may or may not be running: straight to
        // the forced removal, which stops it if it did start.
        assert_eq!(fake.calls(), [&RAN[..3], &CLEAN_UP].concat());
        assert_eq!(exit_code(&rec), crate::exit::FAILURE);
        removed_everything(&fake, &rec);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_kill_at_the_deadline_exports_nothing_and_removes_everything() {
        // The deadline passes, the kill never answers and the container never reports a stop:
        // it may still be writing to /evidence, so nothing is copied out of it.
        let fake = Fake::new()
            .with_wait(WaitBehaviour::Hang)
            .hanging(Step::Kill);
        let mut p = plan(false);
        p.deadline = Duration::from_secs(5);
        let rec = go(&fake, &p).await;
        assert!(rec.timed_out && !rec.killed && rec.exit_code.is_none());
        assert_eq!(
            rec.errors,
            [
                unanswered("kill container c1"),
                "failed to copy /evidence out of container c1: it was never confirmed stopped, \
                 so it may still be writing there"
                    .to_string(),
            ]
        );
        assert!(rec.evidence.is_none());
        let after_kill = ["kill c1", "wait c1"];
        assert_eq!(
            fake.calls(),
            [&RAN[..], &after_kill, &READ_OUT[1..], &CLEAN_UP].concat()
        );
        assert_eq!(exit_code(&rec), crate::exit::DEADLINE);
        removed_everything(&fake, &rec);
        // The deadline at 5 s, the kill's limit to 125 s, the stop grace to 135 s.
        assert_eq!(
            &logged(&rec)[3..5],
            [("deadline-passed", 5_000), ("container-inspected", 135_000)]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_container_removal_ends_the_run_and_reports_the_leftover() {
        let fake = Fake::new().hanging(Step::RemoveContainer);
        let rec = go(&fake, &plan(false)).await;
        // Removed by id, then again as found by label: both unanswered; the volume goes.
        assert_eq!(
            rec.errors,
            [
                unanswered("remove container c1"),
                unanswered("remove container c1")
            ]
        );
        let cleanup = [
            "remove_container c1",
            "list scopebox.run=t1",
            "remove_container c1",
            "remove_volume scopebox-t1-evidence",
            "list scopebox.run=t1",
        ];
        assert_eq!(fake.calls(), [&RAN[..], &READ_OUT, &cleanup].concat());
        assert!(!rec.cleanup.container_removed && rec.cleanup.volume_removed);
        assert_eq!(rec.cleanup.leftovers, 1);
        assert_eq!(fake.objects().len(), 1, "the container is still there");
        assert_eq!(exit_code(&rec), crate::exit::FAILURE);
        let names: Vec<&str> = logged(&rec).into_iter().map(|(name, _)| name).collect();
        assert_eq!(&names[names.len() - 2..], ["volume-removed", "swept"]);
        // The record says so, and the verifier refuses it for exactly that.
        let failures = scopebox_receipts::verify::cleanup_failures(&rec.cleanup);
        assert_eq!(
            failures,
            [
                "the container was not removed",
                "1 labelled objects were left behind"
            ]
        );
    }

    /// An engine that fails every listing (it went away during the cleanup): nothing proves a
    /// removal, so both flags stay false, and the leftovers are what the run made and never saw
    /// removed — none when both removals were confirmed, the container when its removal failed.
    #[tokio::test(start_paused = true)]
    async fn without_a_listing_the_leftovers_are_what_was_never_seen_removed() {
        let fake = Fake::new().failing(Step::List);
        let rec = go(&fake, &plan(false)).await;
        assert!(!rec.cleanup.container_removed && !rec.cleanup.volume_removed);
        assert_eq!(rec.cleanup.leftovers, 0);
        assert_eq!(rec.not_seen_removed(), (false, false));

        let fake = Fake::new()
            .failing(Step::List)
            .failing(Step::RemoveContainer);
        let rec = go(&fake, &plan(false)).await;
        assert_eq!(rec.not_seen_removed(), (true, false));
        assert_eq!(rec.cleanup.leftovers, 1);
        assert_eq!(exit_code(&rec), crate::exit::FAILURE);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_volume_removal_ends_the_run_and_reports_the_leftover() {
        let fake = Fake::new().hanging(Step::RemoveVolume);
        let rec = go(&fake, &plan(false)).await;
        assert_eq!(
            rec.errors,
            [unanswered("remove volume scopebox-t1-evidence")]
        );
        // The sweep tried the volume; it is not tried a second time by name.
        assert_eq!(fake.calls(), [&RAN[..], &READ_OUT, &CLEAN_UP].concat());
        assert!(rec.cleanup.container_removed && !rec.cleanup.volume_removed);
        assert_eq!(rec.cleanup.leftovers, 1);
        assert_eq!(exit_code(&rec), crate::exit::FAILURE);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_listing_still_removes_by_name_and_claims_nothing() {
        let fake = Fake::new().hanging(Step::List);
        let rec = go(&fake, &plan(false)).await;
        assert_eq!(
            rec.errors,
            [
                unanswered("list what carries scopebox.run=t1"),
                unanswered("list what carries scopebox.run=t1")
            ]
        );
        // Without the sweep's answer the volume is removed by name.
        assert_eq!(fake.calls(), [&RAN[..], &READ_OUT, &CLEAN_UP].concat());
        assert!(fake.objects().is_empty());
        // Without the recount nothing is claimed removed, and no sweep is logged.
        assert!(!rec.cleanup.container_removed && !rec.cleanup.volume_removed);
        assert!(!rec.events.iter().any(|e| e.event == EventKind::Swept));
        assert_eq!(exit_code(&rec), crate::exit::FAILURE);
    }

    #[tokio::test(start_paused = true)]
    async fn ctrl_c_with_a_hung_removal_still_ends_interrupted_with_the_leftover() {
        let fake = Fake::new()
            .with_wait(WaitBehaviour::Hang)
            .hanging(Step::RemoveContainer);
        let p = plan(false);
        let mut progress = Progress::new(2, Vec::new());
        let interrupt = tokio::time::sleep(Duration::from_secs(1));
        let rec = lifecycle(&fake, &p, interrupt, &mut progress).await;
        assert!(rec.interrupted && rec.killed);
        assert_eq!(
            fake.calls(),
            [
                &RAN[..],
                &[
                    "kill c1",
                    "remove_container c1",
                    "list scopebox.run=t1",
                    "remove_container c1",
                    "remove_volume scopebox-t1-evidence",
                    "list scopebox.run=t1",
                ]
            ]
            .concat()
        );
        assert_eq!(rec.cleanup.leftovers, 1);
        assert!(!rec.cleanup.container_removed);
        assert_eq!(exit_code(&rec), crate::exit::INTERRUPTED);
        assert_eq!(rec.events.last().map(|e| e.at_ms), Some(241_000));
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_kills_before_exporting() {
        let fake = Fake::new()
            .with_wait(WaitBehaviour::Hang)
            .with_evidence(evidence_tar(&[("boundary.json", b"{}")]));
        let mut p = plan(false);
        p.deadline = Duration::from_secs(5);
        let rec = go(&fake, &p).await;
        assert!(rec.timed_out && rec.killed && rec.failed());
        assert_eq!(
            rec.exit_code,
            Some(137),
            "the wait after the kill reports it"
        );
        assert!(rec.evidence.is_some());
        let calls = fake.calls();
        let killed = ["logs c1", "wait c1", "kill c1", "wait c1"];
        assert_eq!(&calls[3..], [&killed[..], &READ_OUT, &CLEAN_UP].concat());
        removed_everything(&fake, &rec);
        // The record proves it too: killed, at the deadline, before the export. The clock is
        // paused, so every offset is exact.
        assert_eq!(
            logged(&rec),
            [
                ("volume-created", 0),
                ("container-created", 0),
                ("started", 0),
                ("deadline-passed", 5_000),
                ("killed", 5_000),
                ("exited", 5_000),
                ("evidence-exported", 5_000),
                ("container-inspected", 5_000),
                ("image-inspected", 5_000),
                ("container-removed", 5_000),
                ("volume-removed", 5_000),
                ("swept", 5_000),
            ]
        );
        assert_eq!(lifecycle_check(&rec, &p), Vec::<String>::new());
        // And the verifier would catch the export moved ahead of the kill.
        let mut execution = crate::receipt::execution(&rec, 5, 0, 0);
        execution.events.swap(4, 6);
        let failures = scopebox_receipts::verify::lifecycle_failures(&execution, &rec.cleanup);
        assert!(
            failures
                .iter()
                .any(|f| f.starts_with("evidence-exported is recorded before killed")),
            "{failures:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn ctrl_c_kills_removes_and_sweeps() {
        let fake = Fake::new().with_wait(WaitBehaviour::Hang);
        let p = plan(false);
        let mut progress = Progress::new(2, Vec::new());
        let interrupt = async {
            tokio::time::sleep(Duration::from_secs(1)).await;
        };
        let rec = lifecycle(&fake, &p, interrupt, &mut progress).await;
        assert!(rec.interrupted && rec.killed && !rec.timed_out);
        assert!(rec.evidence.is_none());
        assert_eq!(
            &fake.calls()[4..],
            [&["wait c1", "kill c1"][..], &CLEAN_UP].concat()
        );
        removed_everything(&fake, &rec);
        assert_eq!(
            &logged(&rec)[3..],
            [
                ("interrupted", 1_000),
                ("killed", 1_000),
                ("container-removed", 1_000),
                ("volume-removed", 1_000),
                ("swept", 1_000),
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn ctrl_c_during_a_create_still_finds_the_container_by_label() {
        // The engine created the container but the interrupted request never returned its id.
        let fake = Fake::new().hanging(Step::CreateContainer);
        let p = plan(false);
        let mut progress = Progress::new(2, Vec::new());
        let interrupt = tokio::time::sleep(Duration::from_secs(1));
        let rec = lifecycle(&fake, &p, interrupt, &mut progress).await;
        assert!(rec.interrupted && rec.container_id.is_none());
        assert!(
            fake.calls().contains(&"remove_container c1".to_string()),
            "{:?}",
            fake.calls()
        );
        removed_everything(&fake, &rec);
        // The container the sweep found by label is logged as removed, before the volume.
        let names: Vec<&str> = logged(&rec).into_iter().map(|(name, _)| name).collect();
        assert_eq!(
            names,
            [
                "volume-created",
                "interrupted",
                "container-removed",
                "volume-removed",
                "swept"
            ]
        );
    }

    #[tokio::test]
    async fn keep_on_failure_keeps_a_failed_run() {
        let fake = Fake::new()
            .with_wait(WaitBehaviour::Exit(1))
            .with_evidence(evidence_tar(&[]));
        let rec = go(&fake, &plan(true)).await;
        assert!(rec.kept);
        assert!(!rec.cleanup.container_removed && !rec.cleanup.volume_removed);
        assert_eq!(rec.cleanup.leftovers, 2);
        assert!(!fake.calls().iter().any(|c| c.starts_with("remove")));
        // A passing run with the flag is removed as usual.
        let fake = Fake::new().with_evidence(evidence_tar(&[]));
        let rec = go(&fake, &plan(true)).await;
        assert!(!rec.kept);
        removed_everything(&fake, &rec);
    }

    #[tokio::test]
    async fn the_sweep_removes_only_stale_unkept_objects() {
        let fake = Fake::new();
        let obj = |kind, id: &str, owner: &str, keep: bool| {
            crate::engine::fake::run_object(kind, id, "old", owner, keep)
        };
        fake.add(obj(ObjectKind::Volume, "dead-vol", "h/1", false));
        fake.add(obj(ObjectKind::Container, "dead-ctr", "h/1", false));
        fake.add(obj(ObjectKind::Container, "live-ctr", "h/2", false));
        fake.add(obj(ObjectKind::Container, "kept-ctr", "h/1", true));
        let live = |owner: &str| owner == "h/2";
        let report = sweep_stale(&fake, false, live).await.unwrap();
        // Containers before volumes.
        assert_eq!(report.removed, vec!["dead-ctr", "dead-vol"]);
        assert_eq!(report.skipped.len(), 2);
        let report = sweep_stale(&fake, true, live).await.unwrap();
        assert_eq!(report.removed, vec!["kept-ctr"]);
        assert_eq!(fake.objects().len(), 1, "the live run's container stays");
    }

    #[test]
    fn owners_on_this_host_are_live_only_while_their_process_is() {
        let host = crate::boundary::hostname();
        assert!(owner_is_live(&format!("{host}/{}", std::process::id())));
        assert!(!owner_is_live(&format!("{host}/4294967295")));
        assert!(!owner_is_live("garbage"));
        assert!(owner_is_live("some-other-host/1"));
    }
}
