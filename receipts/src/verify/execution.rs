//! How the run ended and what was left behind: the receipt header is a version 1 receipt from
//! scopebox; the container exited on its own (no timeout, no OOM kill, no signal, exit 0) as
//! both `outer/execution.json` and the engine's inspection say; the runner finished (its
//! summary exists, no error record); and the container and volume were removed.

use super::{Checks, Context};
use crate::evidence::{RunError, ERROR_FILE};
use crate::receipt::{Execution, CONTAINER_INSPECT_FILE, EVIDENCE_DIR, EXECUTION_FILE};
use serde_json::Value;

pub(crate) fn check_header(ctx: &Context, checks: &mut Checks) {
    let r = ctx.receipt;
    let mut failures = Vec::new();
    if r.schema_version != 1 {
        failures.push(format!("schemaVersion {}, expected 1", r.schema_version));
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
        "receipt.json is a version 1 scopebox receipt",
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

pub(crate) fn check(ctx: &Context, checks: &mut Checks) {
    let receipt = ctx.receipt;
    let execution = ctx.parse::<Execution>(EXECUTION_FILE);

    let mut recorded = Vec::new();
    match &execution {
        Err(e) => recorded.push(e.clone()),
        Ok(e) if *e != receipt.execution => {
            recorded.push(format!("receipt execution differs from {EXECUTION_FILE}"))
        }
        Ok(_) => {}
    }
    checks.record(
        "execution.record",
        "the receipt's execution is outer/execution.json",
        recorded,
    );

    let mut completed = Vec::new();
    let e = execution.as_ref().unwrap_or(&receipt.execution);
    if e.status != "exited" {
        completed.push(format!("status {}, expected exited", e.status));
    }
    if e.timed_out {
        completed.push(format!(
            "the run timed out (deadline {} s)",
            e.deadline_seconds
        ));
    }
    if e.oom_killed {
        completed.push("the container was OOM-killed".into());
    }
    if let Some(signal) = &e.signal {
        completed.push(format!("the container was killed by {signal}"));
    }
    if e.exit_code != Some(0) {
        completed.push(format!(
            "the runner exited {:?}, expected Some(0)",
            e.exit_code
        ));
    }
    if e.deadline_seconds == 0 {
        completed.push("no deadline was set".into());
    } else if !e.timed_out && e.durations.run_ms > e.deadline_seconds.saturating_mul(1000) {
        completed.push(format!(
            "the run took {} ms, past its {} s deadline, yet is not marked timed out",
            e.durations.run_ms, e.deadline_seconds
        ));
    }
    let summary = super::cases::summary_path();
    if !ctx.bundle.files.contains_key(&summary) {
        completed.push(format!("{summary} is missing: the runner did not finish"));
    }
    let error_path = format!("{EVIDENCE_DIR}/{ERROR_FILE}");
    if ctx.bundle.files.contains_key(&error_path) {
        let detail = ctx
            .parse::<RunError>(&error_path)
            .map(|err| format!("{}: {}", err.kind, err.message))
            .unwrap_or_else(|e| e);
        completed.push(format!("the runner refused to run: {detail}"));
    }
    match ctx.parse::<Value>(CONTAINER_INSPECT_FILE) {
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

    let c = &receipt.cleanup;
    let mut cleanup = Vec::new();
    if !c.container_removed {
        cleanup.push("the container was not removed".into());
    }
    if !c.volume_removed {
        cleanup.push("the evidence volume was not removed".into());
    }
    if c.leftovers != 0 {
        cleanup.push(format!("{} labelled objects were left behind", c.leftovers));
    }
    checks.record(
        "execution.cleanup",
        "the container and the volume were removed",
        cleanup,
    );
}

#[cfg(test)]
mod tests {
    use super::is_rfc3339_utc;

    #[test]
    fn utc_timestamps_are_recognised() {
        assert!(is_rfc3339_utc("2026-11-29T18:02:26Z"));
        assert!(is_rfc3339_utc("2026-11-29T18:02:26.081702527Z"));
        assert!(!is_rfc3339_utc("2026-11-29T18:02:26+01:00"));
        assert!(!is_rfc3339_utc("2026-11-29T18:02:26.Z"));
        assert!(!is_rfc3339_utc("yesterday"));
    }
}
