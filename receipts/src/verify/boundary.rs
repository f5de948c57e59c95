//! The boundary, three ways: the policy carried in the bundle is the reference policy (and the
//! one the receipt names); the raw container inspection meets it (`policy::check_applied`); the
//! runner's inner observations meet it (`policy::check_observed`); and the receipt's own
//! boundary record agrees with what was recomputed. It never trusts the recorded agreement flags.

use super::{Checks, Context};
use crate::evidence::{InnerBoundary, BOUNDARY_FILE};
use crate::policy::{check_applied, check_observed, BoundaryPolicy};
use crate::receipt::{CONTAINER_INSPECT_FILE, EVIDENCE_DIR, POLICY_FILE};

pub(crate) fn observed_path() -> String {
    format!("{EVIDENCE_DIR}/{BOUNDARY_FILE}")
}

pub(crate) fn check(ctx: &Context, checks: &mut Checks) {
    let receipt = ctx.receipt;
    let record = &receipt.boundary;

    let mut policy_failures = Vec::new();
    match ctx.digest(POLICY_FILE) {
        Some(d) if d != receipt.inputs.boundary_policy_sha256 => policy_failures.push(format!(
            "{POLICY_FILE} has sha256 {d}, inputs.boundaryPolicySha256 says {}",
            receipt.inputs.boundary_policy_sha256
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
            if bundled != record.policy {
                policy_failures.push(format!(
                    "receipt boundary.policy differs from {POLICY_FILE}"
                ));
            }
        }
    }
    checks.record(
        "boundary.policy",
        "the bundled policy is the reference boundary policy",
        policy_failures,
    );

    // Applied: the raw inspection against the reference policy.
    let applied = match ctx.parse::<serde_json::Value>(CONTAINER_INSPECT_FILE) {
        Ok(doc) => Some(check_applied(ctx.policy, &doc)),
        Err(e) => {
            checks.record(
                "boundary.applied",
                "the container inspection meets the policy",
                vec![e],
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
    let observed = ctx.parse::<InnerBoundary>(&observed_path());
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
