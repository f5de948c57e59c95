//! The platforms a bundle covers, once per bundle: each ran once, in the fixed order, in its own
//! directory, on one engine; the platforms of the default set that did not run are named with a
//! reason and are not also claimed to have run; the overall summary is recomputed from the
//! platforms; and the auditor's expectations (`--expect-candidate`, `--expect-image`) name a
//! candidate archive and an image of this bundle.

use super::{Checks, Context, VerifyOptions};
use crate::evidence::MAX_SHARDS;
use crate::platform::Platform;
use crate::receipt::{platform_dir, shard_dir};
use std::collections::BTreeSet;

pub(crate) fn check(ctx: &Context, options: &VerifyOptions, checks: &mut Checks) {
    let receipt = ctx.receipt;
    let mut failures = Vec::new();
    // A native-only bundle (`native.json`, no candidate run) has no candidate platform.
    if receipt.platforms.is_empty() && ctx.native.is_none() {
        failures.push("no platform ran".into());
    }
    let order: Vec<Platform> = receipt.platforms.iter().map(|p| p.platform).collect();
    let mut sorted = order.clone();
    sorted.sort();
    sorted.dedup();
    if order != sorted {
        failures.push(format!(
            "the platforms {order:?} are not each listed once in the fixed order"
        ));
    }
    for run in &receipt.platforms {
        if run.dir != platform_dir(run.platform) {
            failures.push(format!(
                "{} lives in {:?}, expected {}",
                run.platform,
                run.dir,
                platform_dir(run.platform)
            ));
        }
        // Further containers of a split matrix: shards 1, 2, … in order, each in its directory.
        if run.shard_count() > MAX_SHARDS {
            failures.push(format!(
                "{} ran in {} containers, more than {MAX_SHARDS}",
                run.platform,
                run.shard_count()
            ));
        }
        for (i, shard) in run.shards.iter().enumerate() {
            let want = shard_dir(&platform_dir(run.platform), i + 1);
            if shard.index != i + 1 || shard.dir != want {
                failures.push(format!(
                    "{} lists shard {} in {:?} at place {}, expected shard {} in {want}",
                    run.platform,
                    shard.index,
                    shard.dir,
                    i + 1,
                    i + 1
                ));
            }
        }
    }
    let engines: BTreeSet<(&str, &str, &str)> = receipt
        .platforms
        .iter()
        .map(|p| {
            (
                p.engine_architecture.as_str(),
                p.engine.as_str(),
                p.engine_version.as_str(),
            )
        })
        .collect();
    if engines.len() > 1 {
        failures.push(format!("the platforms ran on engines of {engines:?}"));
    }
    let ran: BTreeSet<Platform> = order.iter().copied().collect();
    let mut missing = BTreeSet::new();
    for n in &receipt.not_covered {
        if ran.contains(&n.platform) {
            failures.push(format!(
                "{} is listed as run and as not covered",
                n.platform
            ));
        }
        if !missing.insert(n.platform) {
            failures.push(format!("{} is listed twice as not covered", n.platform));
        }
        if n.reason.trim().is_empty() {
            failures.push(format!(
                "{} is not covered, with no reason given",
                n.platform
            ));
        }
    }
    checks.record(
        "platforms.list",
        "each platform ran once in its own directory; those not covered are named with a reason",
        failures,
    );

    let s = &receipt.summary;
    // Summed without overflow: the counts are the bundle's word (a hostile one may give
    // usize::MAX); a sum that does not fit disagrees with any summary.
    let sum = |count: fn(&crate::receipt::PlatformRun) -> usize| {
        receipt
            .platforms
            .iter()
            .try_fold(0usize, |total, p| total.checked_add(count(p)))
    };
    let sums = (sum(|p| p.summary.total), sum(|p| p.summary.passed));
    let passed = receipt
        .platforms
        .iter()
        .filter(|p| {
            p.summary.failed == 0
                && p.summary.total == p.cases.len()
                && p.cases.iter().all(|c| c.verdict == "pass")
        })
        .count();
    let mut summary = Vec::new();
    match sums {
        (Some(cases), Some(cases_passed)) => {
            if (s.platforms, s.platforms_passed, s.cases, s.cases_passed)
                != (receipt.platforms.len(), passed, cases, cases_passed)
            {
                summary.push(format!(
                    "the summary says {}/{} platforms and {}/{} cases passed, the platforms give {passed}/{} and {cases_passed}/{cases}",
                    s.platforms_passed,
                    s.platforms,
                    s.cases_passed,
                    s.cases,
                    receipt.platforms.len()
                ));
            }
        }
        _ => summary
            .push("the platforms' case counts add up to more than any summary can hold".into()),
    }
    checks.record(
        "platforms.summary",
        "the overall summary is the sum of the platforms'",
        summary,
    );

    if !options.expect_candidates.is_empty() {
        let have: BTreeSet<&str> = receipt
            .platforms
            .iter()
            .map(|p| p.inputs.candidate_archive.sha256.as_str())
            .collect();
        let failures = options
            .expect_candidates
            .iter()
            .map(|e| normalize(e, "sha256:"))
            .filter(|e| !have.contains(e.as_str()))
            .map(|e| format!("no platform tested candidate archive {e} (it tested {have:?})"))
            .collect();
        checks.record(
            "expect.candidate",
            "every --expect-candidate is a candidate archive this bundle tested",
            failures,
        );
    }
    if !options.expect_images.is_empty() {
        let have: BTreeSet<&str> = receipt
            .platforms
            .iter()
            .map(|p| p.inputs.image_id.as_str())
            .collect();
        let failures = options
            .expect_images
            .iter()
            .map(|e| format!("sha256:{}", normalize(e, "sha256:")))
            .filter(|e| !have.contains(e.as_str()))
            .map(|e| format!("no platform ran image {e} (it ran {have:?})"))
            .collect();
        checks.record(
            "expect.image",
            "every --expect-image is an image this bundle ran",
            failures,
        );
    }
}

/// Lowercase, without `prefix`, trimmed.
fn normalize(given: &str, prefix: &str) -> String {
    let t = given.trim();
    t.strip_prefix(prefix).unwrap_or(t).to_ascii_lowercase()
}
