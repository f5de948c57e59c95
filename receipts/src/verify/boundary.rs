//! The boundary, three ways: the policy carried in the bundle is the reference policy (and the
//! one the receipt names), once per bundle; per platform, the raw container inspection meets it
//! (`policy::check_applied`), the runner's inner observations meet it (`policy::check_observed`)
//! and name the platform's machine, the emulation record agrees with the engine's architecture
//! and the container's environment, and the receipt's own boundary record agrees with what was
//! recomputed. It never trusts the recorded agreement flags.

use super::{Checks, Context, PlatformContext};
use crate::evidence::{InnerBoundary, BOUNDARY_FILE};
use crate::evidence::{Shard, SHARD_ENV};
use crate::layout;
use crate::platform::Platform;
use crate::policy::{check_applied, check_observed, BoundaryPolicy};
use crate::receipt::{CONTAINER_INSPECT_FILE, EVIDENCE_DIR, POLICY_FILE};

pub(crate) fn observed_path() -> String {
    format!("{EVIDENCE_DIR}/{BOUNDARY_FILE}")
}

/// `boundary.policy`, once per bundle.
pub(crate) fn check_policy(ctx: &Context, checks: &mut Checks) {
    let receipt = ctx.receipt;
    let mut policy_failures = Vec::new();
    match ctx.digest(POLICY_FILE) {
        Some(d) if d != receipt.boundary_policy_sha256 => policy_failures.push(format!(
            "{POLICY_FILE} has sha256 {d}, boundaryPolicySha256 says {}",
            receipt.boundary_policy_sha256
        )),
        _ => {}
    }
    match ctx.parse::<BoundaryPolicy>(POLICY_FILE) {
        Err(e) => policy_failures.push(e),
        Ok(bundled) => {
            if bundled != *ctx.policy {
                policy_failures.push(format!(
                    "{POLICY_FILE} differs from the reference boundary policy: {}",
                    policy_difference(&bundled, ctx.policy)
                ));
            }
            for run in &receipt.platforms {
                let records =
                    std::iter::once(&run.boundary).chain(run.shards.iter().map(|s| &s.boundary));
                for (index, record) in records.enumerate() {
                    if bundled != record.policy {
                        policy_failures.push(format!(
                            "the {} boundary.policy (shard {index}) differs from {POLICY_FILE}",
                            run.platform
                        ));
                    }
                }
            }
        }
    }
    checks.record(
        "boundary.policy",
        "the bundled policy is the reference boundary policy",
        policy_failures,
    );
}

/// Applied, observed, machine and record, for one platform.
pub(crate) fn check(p: &PlatformContext, checks: &mut Checks) {
    let ctx = p.ctx;
    let record = p.boundary();
    let inspect = p.parse::<serde_json::Value>(CONTAINER_INSPECT_FILE);

    // Applied: the raw inspection against the reference policy.
    let applied = match &inspect {
        Ok(doc) => Some(check_applied(ctx.policy, doc, p.run.engine)),
        Err(e) => {
            checks.record(
                "boundary.applied",
                "the container inspection meets the policy",
                vec![e.clone()],
            );
            None
        }
    };
    if let Some(failures) = &applied {
        checks.record(
            "boundary.applied",
            "the container inspection meets the policy",
            failures.clone(),
        );
    }

    // Observed: the runner's own view from inside.
    let observed = p.parse::<InnerBoundary>(&observed_path());
    let observed_failures = match &observed {
        Ok(o) => Some(check_observed(ctx.policy, o)),
        Err(_) => None,
    };
    checks.record(
        "boundary.observed",
        "what the runner observed inside meets the policy",
        match (&observed, &observed_failures) {
            (Err(e), _) => vec![e.clone()],
            (_, Some(f)) => f.clone(),
            _ => Vec::new(),
        },
    );

    // The machine: the runner saw the platform's, and the emulation record is the engine's.
    checks.record(
        "boundary.machine",
        "the runner saw the platform's machine; emulated exactly when the engine's architecture differs",
        machine_failures(p, observed.as_ref().ok(), inspect.as_ref().ok()),
    );

    // The receipt's record of all this must be what was recomputed.
    let mut record_failures = Vec::new();
    match &observed {
        Ok(o) if record.observed.as_ref() != Some(o) => record_failures.push(format!(
            "receipt boundary.observed differs from {}",
            observed_path()
        )),
        _ => {}
    }
    if let Some(failures) = &applied {
        if record.applied_failures != *failures
            || record.applied_meets_policy != failures.is_empty()
        {
            record_failures.push(format!(
                "receipt says applied meets policy: {} ({} failures), recomputed: {} ({})",
                record.applied_meets_policy,
                record.applied_failures.len(),
                failures.is_empty(),
                failures.len()
            ));
        }
    }
    if let Some(failures) = &observed_failures {
        if record.observed_failures != *failures
            || record.observed_meets_policy != failures.is_empty()
        {
            record_failures.push(format!(
                "receipt says observed meets policy: {} ({} failures), recomputed: {} ({})",
                record.observed_meets_policy,
                record.observed_failures.len(),
                failures.is_empty(),
                failures.len()
            ));
        }
    }
    checks.record(
        "boundary.record",
        "the receipt's boundary record agrees with the recomputed checks",
        record_failures,
    );
}

/// The inner `uname` machine is the platform's; `emulated` is true exactly when the engine's
/// architecture is another platform's; the container was told the engine's machine (the
/// witness it must run) in its environment, and nothing else that names it.
fn machine_failures(
    p: &PlatformContext,
    observed: Option<&InnerBoundary>,
    inspect: Option<&serde_json::Value>,
) -> Vec<String> {
    let run = p.run;
    let want = run.platform.machine();
    let mut failures = Vec::new();
    if let Some(o) = observed {
        if o.machine != want {
            failures.push(format!(
                "the runner saw machine {:?} inside the {} container, expected {want}",
                o.machine, run.platform
            ));
        }
    }
    match Platform::from_machine(&run.engine_architecture) {
        None => failures.push(format!(
            "the engine architecture {:?} is not one scopebox knows",
            run.engine_architecture
        )),
        Some(engine) => {
            let emulated = engine != run.platform;
            if run.emulated != emulated {
                failures.push(format!(
                    "emulated is {}, but the engine is {} and the platform {}",
                    run.emulated, run.engine_architecture, run.platform
                ));
            }
        }
    }
    if let Some(doc) = inspect {
        let doc = match doc {
            serde_json::Value::Array(items) if items.len() == 1 => &items[0],
            other => other,
        };
        let told = env_values(doc, layout::ENGINE_MACHINE_ENV);
        let engine_machine = Platform::from_machine(&run.engine_architecture)
            .map(|p| p.machine())
            .unwrap_or(run.engine_architecture.as_str());
        if told != [engine_machine] {
            failures.push(format!(
                "the container's environment gives {} {told:?}, expected exactly [{engine_machine:?}] (the engine's machine)",
                layout::ENGINE_MACHINE_ENV
            ));
        }
        // Which share of the matrix it was told to run: none when one container ran it all.
        let told = env_values(doc, SHARD_ENV);
        let want = Shard {
            index: p.shard,
            of: run.shard_count(),
        };
        let want: Vec<String> = if want.is_whole() {
            Vec::new()
        } else {
            vec![want.text()]
        };
        if told != want {
            failures.push(format!(
                "the container's environment gives {SHARD_ENV} {told:?}, expected {want:?}"
            ));
        }
    }
    failures
}

/// Name the fields that differ, for the failure line.
fn policy_difference(a: &BoundaryPolicy, b: &BoundaryPolicy) -> String {
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) =
        (serde_json::to_value(a), serde_json::to_value(b))
    else {
        return "unreadable".into();
    };
    let fields: Vec<&str> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .map(|(k, _)| k.as_str())
        .collect();
    format!("{} differ", fields.join(", "))
}

/// The values the container inspection's `Config.Env` gives `name` (every `name=` entry).
fn env_values<'a>(inspect: &'a serde_json::Value, name: &str) -> Vec<&'a str> {
    let prefix = format!("{name}=");
    inspect
        .pointer("/Config/Env")
        .and_then(|v| v.as_array())
        .map(|env| {
            env.iter()
                .filter_map(|e| e.as_str())
                .filter_map(|e| e.strip_prefix(prefix.as_str()))
                .collect()
        })
        .unwrap_or_default()
}
