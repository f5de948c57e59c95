//! How the run ended and what was left behind: the receipt header is a version 2 receipt from
//! scopebox; per platform: the container exited on its own (no timeout, no OOM kill, no signal, exit 0) as
//! both `outer/execution.json` and the engine's inspection say; the runner finished (its
//! summary exists, no error record); the lifecycle log shows the steps in a safe order (stopped
//! before the export — killed first when the deadline passed —, inspected before removal,
//! container and volume removed, then the final sweep) and agrees with the recorded status,
//! signal, timeout and cleanup; and the container and volume were removed.

use super::{Checks, Context, PlatformContext};
use crate::evidence::{RunError, ERROR_FILE};
use crate::receipt::{
    Cleanup, EventKind, Execution, CONTAINER_INSPECT_FILE, EVIDENCE_DIR, EXECUTION_FILE,
};
use serde_json::Value;

pub(crate) fn check_header(ctx: &Context, checks: &mut Checks) {
    let r = ctx.receipt;
    let mut failures = Vec::new();
    if r.schema_version != crate::receipt::SCHEMA_VERSION {
        failures.push(format!(
            "schemaVersion {}, expected {}",
            r.schema_version,
            crate::receipt::SCHEMA_VERSION
        ));
    }
    if r.tool.name != "scopebox" || r.tool.version.is_empty() {
        failures.push(format!(
            "tool {} {:?}, expected scopebox with a version",
            r.tool.name, r.tool.version
        ));
    }
    if r.run_id.is_empty() {
        failures.push("the run id is empty".into());
    }
    if !is_rfc3339_utc(&r.started_at) || !is_rfc3339_utc(&r.finished_at) {
        failures.push(format!(
            "times {:?} / {:?} are not RFC 3339 UTC",
            r.started_at, r.finished_at
        ));
    } else if r.finished_at < r.started_at {
        failures.push("the run finished before it started".into());
    }
    checks.record(
        "receipt.header",
        "receipt.json is a version 2 scopebox receipt",
        failures,
    );
}

/// `YYYY-MM-DDTHH:MM:SS[.frac]Z`: comparable as text.
fn is_rfc3339_utc(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() < 20 || !text.ends_with('Z') {
        return false;
    }
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && (b.len() == 20 || (b[19] == b'.' && b.len() > 21 && digits(20..b.len() - 1)))
}

pub(crate) fn check(p: &PlatformContext, checks: &mut Checks) {
    let execution = p.parse::<Execution>(EXECUTION_FILE);

    let mut recorded = Vec::new();
    match &execution {
        Err(e) => recorded.push(e.clone()),
        Ok(e) if e != p.execution() => recorded.push(format!(
            "receipt execution differs from {}",
            p.path(EXECUTION_FILE)
        )),
        Ok(_) => {}
    }
    checks.record(
        "execution.record",
        "the receipt's execution is outer/execution.json",
        recorded,
    );

    let e = execution.as_ref().unwrap_or(p.execution());
    let mut completed = completion_failures(e);
    let summary = super::cases::summary_path();
    if !p.has(&summary) {
        completed.push(format!(
            "{} is missing: the runner did not finish",
            p.path(&summary)
        ));
    }
    let error_path = format!("{EVIDENCE_DIR}/{ERROR_FILE}");
    if p.has(&error_path) {
        // A harness failure stops a run under way; every other kind refuses it before a case.
        let line = match p.parse::<RunError>(&error_path) {
            Ok(err) if err.kind == "harness" => {
                format!("the runner stopped: {}: {}", err.kind, err.message)
            }
            Ok(err) => format!("the runner refused to run: {}: {}", err.kind, err.message),
            Err(e) => format!("the runner refused to run: {e}"),
        };
        completed.push(line);
    }
    match p.parse::<Value>(CONTAINER_INSPECT_FILE) {
        Err(err) => completed.push(err),
        Ok(doc) => {
            let doc = match &doc {
                Value::Array(items) if items.len() == 1 => &items[0],
                other => other,
            };
            let state = doc.get("State");
            let get = |k: &str| state.and_then(|s| s.get(k));
            if get("OOMKilled") != Some(&Value::Bool(false)) {
                completed.push(format!(
                    "the inspection's State.OOMKilled is {}",
                    get("OOMKilled").map_or("absent".to_string(), Value::to_string)
                ));
            }
            if get("Running") != Some(&Value::Bool(false)) {
                completed.push("the inspection does not show a stopped container".into());
            }
            let code = get("ExitCode").and_then(Value::as_i64);
            if code != e.exit_code {
                completed.push(format!(
                    "the inspection's State.ExitCode {code:?} differs from the recorded {:?}",
                    e.exit_code
                ));
            }
        }
    }
    checks.record(
        "execution.completed",
        "the container exited 0 on its own: no timeout, OOM kill or signal; the runner finished",
        completed,
    );

    checks.record(
        "execution.lifecycle",
        "the lifecycle log shows the container stopped (killed first on a deadline) before the export, inspected before removal, then removed with its volume",
        lifecycle_failures(e, p.cleanup()),
    );

    checks.record(
        "execution.cleanup",
        "the container and the volume were removed",
        cleanup_failures(p.cleanup()),
    );
}

/// Every way the execution record says the container did not exit 0 on its own within a set
/// deadline: another status, a timeout, an OOM kill, a signal, another exit code, no deadline,
/// or a run longer than its deadline not marked timed out. The orchestrator judges the run it
/// just recorded with this before the verifier judges the bundle.
pub fn completion_failures(e: &Execution) -> Vec<String> {
    let mut failures = Vec::new();
    if e.status != "exited" {
        failures.push(format!("status {}, expected exited", e.status));
    }
    if e.timed_out {
        failures.push(format!(
            "the run timed out (deadline {} s)",
            e.deadline_seconds
        ));
    }
    if e.oom_killed {
        failures.push("the container was OOM-killed".into());
    }
    if let Some(signal) = &e.signal {
        failures.push(format!("the container was killed by {signal}"));
    }
    if e.exit_code != Some(0) {
        failures.push(format!(
            "the runner {}, expected exit code 0",
            scopebox_schema::judge::exit_text(e.exit_code)
        ));
    }
    if e.deadline_seconds == 0 {
        failures.push("no deadline was set".into());
    } else if !e.timed_out && e.durations.run_ms > e.deadline_seconds.saturating_mul(1000) {
        failures.push(format!(
            "the run took {} ms, past its {} s deadline, yet is not marked timed out",
            e.durations.run_ms, e.deadline_seconds
        ));
    }
    failures
}

/// Every object of the run the cleanup record says is still there.
pub fn cleanup_failures(c: &Cleanup) -> Vec<String> {
    let mut failures = Vec::new();
    if !c.container_removed {
        failures.push("the container was not removed".into());
    }
    if !c.volume_removed {
        failures.push("the evidence volume was not removed".into());
    }
    if c.leftovers != 0 {
        failures.push(format!("{} labelled objects were left behind", c.leftovers));
    }
    failures
}

/// Every way the lifecycle log (`execution.events`) is out of order, incomplete, or at odds
/// with the rest of the execution record and the cleanup. Empty for a run whose container was
/// created, started, stopped (exited, or killed after the deadline, a failed wait or Ctrl-C),
/// exported, inspected and removed with its volume, in that order, then swept.
pub fn lifecycle_failures(e: &Execution, cleanup: &Cleanup) -> Vec<String> {
    use EventKind::*;
    let events = &e.events;
    if events.is_empty() {
        return vec![
            "no lifecycle events are recorded: kill, export, inspection and removal cannot be put in order"
                .into(),
        ];
    }
    let mut failures = Vec::new();
    for pair in events.windows(2) {
        if pair[1].at_ms < pair[0].at_ms {
            failures.push(format!(
                "{} at {} ms is recorded after {} at {} ms: the offsets go backwards",
                pair[1].event, pair[1].at_ms, pair[0].event, pair[0].at_ms
            ));
        }
    }
    let count = |kind: EventKind| events.iter().filter(|ev| ev.event == kind).count();
    let first = |kind: EventKind| events.iter().position(|ev| ev.event == kind);
    let at = |kind: EventKind| events.iter().find(|ev| ev.event == kind).map(|ev| ev.at_ms);
    // A removal can be logged twice (the direct removal, then the label sweep that finds the
    // object again); every other step happens at most once.
    for kind in EventKind::ALL
        .into_iter()
        .filter(|k| !matches!(k, ContainerRemoved | VolumeRemoved))
    {
        if count(kind) > 1 {
            failures.push(format!("{kind} is recorded {} times", count(kind)));
        }
    }
    for kind in [
        VolumeCreated,
        ContainerCreated,
        Started,
        EvidenceExported,
        ContainerInspected,
        ContainerRemoved,
        VolumeRemoved,
        Swept,
    ] {
        if count(kind) == 0 {
            failures.push(format!("no {kind} is recorded"));
        }
    }
    // `a` must come before `b` whenever both are recorded (absence is reported above).
    let mut before = |a: EventKind, b: EventKind, why: &str| {
        if let (Some(i), Some(j)) = (first(a), first(b)) {
            if i > j {
                failures.push(format!("{b} is recorded before {a}: {why}"));
            }
        }
    };
    before(
        VolumeCreated,
        ContainerCreated,
        "the container mounts the volume",
    );
    before(ContainerCreated, Started, "only a created container starts");
    before(
        ContainerInspected,
        ContainerRemoved,
        "the inspection must describe the container that ran",
    );
    before(
        EvidenceExported,
        ContainerRemoved,
        "the evidence must come from the container that ran",
    );
    if let Some(last) = events.last() {
        if count(Swept) == 1 && last.event != Swept {
            failures.push(format!(
                "{} is recorded after swept: the final sweep must come last",
                last.event
            ));
        }
    }

    // Stopped before anything was read from it: the export and the inspection follow the first
    // exited or killed.
    let stopped = [first(Exited), first(Killed)].into_iter().flatten().min();
    for read in [EvidenceExported, ContainerInspected] {
        if let Some(i) = first(read) {
            match stopped {
                None => failures.push(format!(
                    "{read} is recorded but the container is never recorded exited or killed"
                )),
                Some(s) if s > i => failures.push(format!(
                    "{read} is recorded before the container exited or was killed: it was still running"
                )),
                Some(_) => {}
            }
        }
    }

    // The deadline: marked timed out exactly when it passed, and then killed FIRST.
    let deadline_passed = count(DeadlinePassed) > 0;
    if e.timed_out != deadline_passed {
        failures.push(if e.timed_out {
            "the run is marked timed out but no deadline-passed is recorded".to_string()
        } else {
            "deadline-passed is recorded but the run is not marked timed out".to_string()
        });
    }
    if deadline_passed {
        match (
            first(DeadlinePassed),
            first(Killed),
            first(EvidenceExported),
        ) {
            (_, None, _) => {
                failures.push("the deadline passed but killed is not recorded".to_string())
            }
            (Some(d), Some(k), export) => {
                if k < d {
                    failures.push(
                        "killed is recorded before deadline-passed, though the deadline is why it was killed"
                            .to_string(),
                    );
                }
                if export.is_some_and(|x| x < k) {
                    failures.push(
                        "evidence-exported is recorded before killed: the evidence was copied while the timed-out container could still run"
                            .to_string(),
                    );
                }
            }
            (None, Some(_), _) => {}
        }
        if let (Some(start), Some(passed)) = (at(Started), at(DeadlinePassed)) {
            let deadline_ms = e.deadline_seconds.saturating_mul(1000);
            if passed.saturating_sub(start) < deadline_ms {
                failures.push(format!(
                    "deadline-passed at {passed} ms is only {} ms after started at {start} ms, less than the {} s deadline",
                    passed.saturating_sub(start),
                    e.deadline_seconds
                ));
            }
        }
    }

    // The rest of the record says the same.
    let killed = count(Killed) > 0;
    let signalled = e.signal.as_deref() == Some("SIGKILL");
    if killed != signalled {
        failures.push(format!(
            "signal {:?} does not match the log, which {} killed",
            e.signal,
            if killed { "records" } else { "does not record" }
        ));
    }
    match e.status.as_str() {
        "exited" => {
            if count(Exited) == 0 {
                failures.push("the status is exited but exited is not recorded".to_string());
            }
            for kind in [DeadlinePassed, Interrupted, WaitFailed] {
                if count(kind) > 0 {
                    failures.push(format!("the status is exited but {kind} is recorded"));
                }
            }
        }
        "timed-out" if !deadline_passed => {
            failures.push("the status is timed-out but deadline-passed is not recorded".to_string())
        }
        "interrupted" if count(Interrupted) == 0 => {
            failures.push("the status is interrupted but interrupted is not recorded".to_string())
        }
        _ => {}
    }
    if e.status != "interrupted" && count(Interrupted) > 0 {
        failures.push(format!(
            "interrupted is recorded but the status is {}",
            e.status
        ));
    }
    if cleanup.container_removed && count(ContainerRemoved) == 0 {
        failures.push(
            "the cleanup says the container was removed, but no container-removed is recorded"
                .to_string(),
        );
    }
    if cleanup.volume_removed && count(VolumeRemoved) == 0 {
        failures.push(
            "the cleanup says the volume was removed, but no volume-removed is recorded"
                .to_string(),
        );
    }
    if count(Kept) > 0 && (count(ContainerRemoved) > 0 || count(VolumeRemoved) > 0) {
        failures.push("kept is recorded, yet so is a removal".to_string());
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::is_rfc3339_utc;

    use super::lifecycle_failures;
    use crate::receipt::{Cleanup, Durations, EventKind, EventKind::*, Execution, LifecycleEvent};

    fn execution(status: &str, events: &[(EventKind, u64)]) -> Execution {
        let timed_out = status == "timed-out";
        let killed = events.iter().any(|(k, _)| *k == Killed);
        Execution {
            status: status.into(),
            exit_code: Some(if killed { 137 } else { 0 }),
            signal: killed.then(|| "SIGKILL".to_string()),
            timed_out,
            oom_killed: false,
            deadline_seconds: 5,
            durations: Durations {
                pack_ms: 0,
                image_ms: 0,
                run_ms: 0,
                export_ms: 0,
            },
            events: events
                .iter()
                .map(|&(event, at_ms)| LifecycleEvent { event, at_ms })
                .collect(),
        }
    }

    fn removed() -> Cleanup {
        Cleanup {
            container_removed: true,
            volume_removed: true,
            leftovers: 0,
        }
    }

    fn clean() -> Vec<(EventKind, u64)> {
        vec![
            (VolumeCreated, 10),
            (ContainerCreated, 20),
            (Started, 30),
            (Exited, 180),
            (EvidenceExported, 200),
            (ContainerInspected, 210),
            (ImageInspected, 211),
            (ContainerRemoved, 230),
            (VolumeRemoved, 240),
            (Swept, 241),
        ]
    }

    fn timed_out() -> Vec<(EventKind, u64)> {
        vec![
            (VolumeCreated, 10),
            (ContainerCreated, 20),
            (Started, 30),
            (DeadlinePassed, 5_030),
            (Killed, 5_031),
            (Exited, 5_040),
            (EvidenceExported, 5_060),
            (ContainerInspected, 5_070),
            (ImageInspected, 5_071),
            (ContainerRemoved, 5_090),
            (VolumeRemoved, 5_100),
            (Swept, 5_101),
        ]
    }

    #[test]
    fn a_clean_exit_and_a_deadline_kill_in_order_pass() {
        assert_eq!(
            lifecycle_failures(&execution("exited", &clean()), &removed()),
            Vec::<String>::new()
        );
        assert_eq!(
            lifecycle_failures(&execution("timed-out", &timed_out()), &removed()),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_export_before_the_kill_is_refused() {
        let mut events = timed_out();
        // Export moved ahead of the kill, offsets kept increasing.
        events.swap(4, 6);
        events[4].1 = 5_031;
        events[6].1 = 5_060;
        let failures = lifecycle_failures(&execution("timed-out", &events), &removed());
        assert!(
            failures
                .iter()
                .any(|f| f.starts_with("evidence-exported is recorded before killed")),
            "{failures:?}"
        );
    }

    #[test]
    fn an_export_while_running_is_refused() {
        let mut events = clean();
        events.swap(3, 4);
        events[3].1 = 180;
        events[4].1 = 200;
        let failures = lifecycle_failures(&execution("exited", &events), &removed());
        assert_eq!(
            failures,
            ["evidence-exported is recorded before the container exited or was killed: it was still running"]
        );
    }

    #[test]
    fn an_inspection_after_removal_is_refused() {
        let mut events = clean();
        let inspected = events.remove(5);
        events.insert(7, inspected);
        for (i, e) in events.iter_mut().enumerate() {
            e.1 = i as u64 * 10;
        }
        let failures = lifecycle_failures(&execution("exited", &events), &removed());
        assert_eq!(
            failures,
            ["container-removed is recorded before container-inspected: the inspection must describe the container that ran"]
        );
    }

    #[test]
    fn missing_removals_offsets_going_back_and_a_log_at_odds_with_the_record_are_refused() {
        let events: Vec<_> = clean()
            .into_iter()
            .filter(|(k, _)| *k != VolumeRemoved)
            .collect();
        let failures = lifecycle_failures(&execution("exited", &events), &removed());
        assert!(failures.contains(&"no volume-removed is recorded".to_string()));
        assert!(failures
            .iter()
            .any(|f| f.starts_with("the cleanup says the volume was removed")));

        let mut events = clean();
        events[4].1 = 5;
        let failures = lifecycle_failures(&execution("exited", &events), &removed());
        assert!(
            failures[0].contains("the offsets go backwards"),
            "{failures:?}"
        );

        // Timed out per the record, but the log shows a clean exit.
        let failures = lifecycle_failures(&execution("timed-out", &clean()), &removed());
        assert!(failures
            .iter()
            .any(|f| f.contains("marked timed out but no deadline-passed")));

        // A deadline recorded as passing before the deadline.
        let mut events = timed_out();
        events[3].1 = 1_000;
        let failures = lifecycle_failures(&execution("timed-out", &events), &removed());
        assert!(
            failures
                .iter()
                .any(|f| f.contains("less than the 5 s deadline")),
            "{failures:?}"
        );

        // A kill recorded without the signal, and no log at all.
        let mut e = execution("timed-out", &timed_out());
        e.signal = None;
        assert!(lifecycle_failures(&e, &removed())[0].starts_with("signal None"));
        e.events.clear();
        assert!(lifecycle_failures(&e, &removed())[0].starts_with("no lifecycle events"));
    }

    #[test]
    fn utc_timestamps_are_recognised() {
        assert!(is_rfc3339_utc("2026-11-29T18:02:26Z"));
        assert!(is_rfc3339_utc("2026-11-29T18:02:26.081702527Z"));
        assert!(!is_rfc3339_utc("2026-11-29T18:02:26+01:00"));
        assert!(!is_rfc3339_utc("2026-11-29T18:02:26.Z"));
        assert!(!is_rfc3339_utc("yesterday"));
    }
}
