//! The native reference (`native.json`, `native_receipt`), when the bundle has one: the section
//! names the bundled native matrix and lock by digest; each platform's pin is exactly the lock's
//! entry; each judgement is recomputed with `native_observe::judge_evidence` from the platform's
//! own raw captures, the bundled matrix and the bundled lock and must equal the recorded one;
//! every recomputed run passes; the summary is the sum. Nothing of the section is trusted: a
//! removed sentinel line, an edited `system/init`, a changed exit code or a reordered index
//! changes the recomputed judgement (and the file's digest) and is named. Failure lines carry
//! bundle strings; the report escapes them for the terminal.

use super::{Checks, Context};
use crate::platform::Platform;
use scopebox_schema::native::NativeMatrix;
use scopebox_schema::native_observe::{judge_evidence, matrix_problems, NativeJudgement};
use scopebox_schema::native_receipt::{
    pinned_client, run_dir_of, summary_of, NativePlatformRun, NativeSection, MAX_NATIVE_PLATFORMS,
    NATIVE_EVIDENCE_DIR, NATIVE_LOCK_FILE, NATIVE_MATRIX_FILE, NATIVE_SECTION_FILE,
};

/// The parsed section and native matrix, once per bundle (`None`: the bundle has no section).
pub(crate) struct NativeInputs {
    pub section: Result<NativeSection, String>,
    pub matrix: Result<NativeMatrix, String>,
}

/// Read `native.json` and the native matrix when the bundle holds the section.
pub(crate) fn read(files: &std::collections::BTreeMap<String, Vec<u8>>) -> Option<NativeInputs> {
    let section = files.get(NATIVE_SECTION_FILE)?;
    let parse = |path: &str| -> Result<Vec<u8>, String> {
        files
            .get(path)
            .cloned()
            .ok_or_else(|| format!("{path} is missing"))
    };
    Some(NativeInputs {
        section: scopebox_schema::strict_json::from_slice(section)
            .map_err(|e| format!("{NATIVE_SECTION_FILE} does not parse: {e}")),
        matrix: parse(NATIVE_MATRIX_FILE).and_then(|b| {
            scopebox_schema::strict_json::from_slice(&b)
                .map_err(|e| format!("{NATIVE_MATRIX_FILE} does not parse: {e}"))
        }),
    })
}

/// `bundle.bounds` for the native part: platforms, the matrix's own bounds, the judgement sizes.
pub(crate) fn bound_failures(native: &NativeInputs) -> Vec<String> {
    let mut failures = Vec::new();
    if let Ok(section) = &native.section {
        if section.platforms.len() > MAX_NATIVE_PLATFORMS {
            failures.push(format!(
                "native platforms: {}, more than {MAX_NATIVE_PLATFORMS}",
                section.platforms.len()
            ));
        }
        for run in &section.platforms {
            if !(1..=MAX_NATIVE_CONTAINERS).contains(&run.containers) {
                failures.push(format!(
                    "native containers of {}: {}, not 1 to {MAX_NATIVE_CONTAINERS}",
                    run.dir, run.containers
                ));
            }
        }
    }
    if let Ok(m) = &native.matrix {
        let over: Vec<String> = matrix_problems(m)
            .into_iter()
            .filter(|p| p.contains("more than"))
            .map(|p| format!("native matrix: {p}"))
            .collect();
        failures.extend(over);
    }
    failures
}

/// The id prefix of a native platform's checks: `native-claude-code-linux-amd64/`.
pub(crate) fn scope(run: &NativePlatformRun) -> String {
    format!("native-{}-{}", run.client, run.platform.dir_name())
}

pub(crate) fn check(ctx: &Context, checks: &mut Checks) {
    let Some(native) = &ctx.native else {
        return;
    };
    let section = match &native.section {
        Ok(s) => s,
        Err(e) => {
            checks.record("native.section", SECTION_TITLE, vec![e.clone()]);
            return;
        }
    };
    let mut failures = Vec::new();
    let matrix_bytes = ctx.bytes(NATIVE_MATRIX_FILE);
    let lock_bytes = ctx.bytes(NATIVE_LOCK_FILE);
    match (ctx.digest(NATIVE_MATRIX_FILE), &native.matrix) {
        (None, _) => failures.push(format!("{NATIVE_MATRIX_FILE} is missing")),
        (Some(d), m) => {
            if d != section.matrix.sha256 {
                failures.push(format!(
                    "{NATIVE_MATRIX_FILE} has sha256 {d}, the section says {}",
                    section.matrix.sha256
                ));
            }
            match m {
                Err(e) => failures.push(e.clone()),
                Ok(m) => {
                    failures.extend(matrix_problems(m));
                    let runs: usize = m.scenarios.iter().map(|s| s.runs.len()).sum();
                    if m.name != section.matrix.name || runs != section.matrix.run_count {
                        failures.push(format!(
                            "the native matrix is {:?} with {runs} runs, the section names {:?} with {}",
                            m.name, section.matrix.name, section.matrix.run_count
                        ));
                    }
                    for run in &section.platforms {
                        if run.client != m.client.id {
                            failures.push(format!(
                                "a platform run is of client {:?}, the matrix's is {:?}",
                                run.client, m.client.id
                            ));
                        }
                    }
                }
            }
        }
    }
    match ctx.digest(NATIVE_LOCK_FILE) {
        None => failures.push(format!("{NATIVE_LOCK_FILE} is missing")),
        Some(d) if d != section.lock_sha256 => failures.push(format!(
            "{NATIVE_LOCK_FILE} has sha256 {d}, the section says {}",
            section.lock_sha256
        )),
        Some(_) => {}
    }
    if section.platforms.is_empty() {
        failures.push("the native section has no platform run".to_string());
    }
    let order: Vec<(&str, Platform)> = section
        .platforms
        .iter()
        .map(|p| (p.client.as_str(), p.platform))
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    sorted.dedup();
    if order != sorted {
        failures.push(format!(
            "the native platform runs {order:?} are not each listed once, in order"
        ));
    }
    let native_only = ctx.receipt.platforms.is_empty();
    for run in &section.platforms {
        let want = run_dir_of(&run.client, run.platform, native_only);
        if run.dir != want {
            failures.push(format!(
                "the {} run of {} lives in {:?}, expected {want}",
                run.platform, run.client, run.dir
            ));
        }
    }
    let summary = summary_of(&section.platforms);
    if summary != section.summary {
        failures.push(format!(
            "the native summary says {:?}, the platform runs give {summary:?}",
            section.summary
        ));
    }
    if ctx.receipt.platforms.is_empty() {
        // Native-only: the receipt's matrix is the native one.
        let m = &ctx.receipt.matrix;
        if m.sha256 != section.matrix.sha256
            || m.name != section.matrix.name
            || m.case_count != section.matrix.run_count
        {
            failures.push(format!(
                "a native-only receipt's matrix must name the native matrix ({} {:?}, {} runs); it names {} {:?}, {} cases",
                section.matrix.sha256, section.matrix.name, section.matrix.run_count,
                m.sha256, m.name, m.case_count
            ));
        }
    }
    checks.record("native.section", SECTION_TITLE, failures);

    for run in &section.platforms {
        let prefix = scope(run);
        // The pin: exactly the bundled lock's entry for the client on the platform.
        let mut pinned = Vec::new();
        match &lock_bytes {
            Err(e) => pinned.push(e.clone()),
            Ok(lock) => match pinned_client(lock, &run.client, run.platform) {
                Err(e) => pinned.push(e),
                Ok(p) if p != run.pinned => pinned.push(format!(
                    "the recorded pin is not the lock's entry for {} on {} (lock: {} {} wheel {} binary {})",
                    run.client, run.platform, p.package.name, p.package.version, p.wheel.sha256, p.binary_sha256
                )),
                Ok(_) => {}
            },
        }
        if run.judgement.client_sha256.as_deref() != Some(run.pinned.binary_sha256.as_str()) {
            pinned.push(format!(
                "the client that ran has sha256 {}, the pinned binary is {}",
                run.judgement
                    .client_sha256
                    .as_deref()
                    .unwrap_or("(none recorded)"),
                run.pinned.binary_sha256
            ));
        }
        if run.judgement.platform.as_deref() != Some(run.platform.name()) {
            pinned.push(format!(
                "the runner saw machine {:?}, not {}'s {}",
                run.judgement.machine.as_deref().unwrap_or(""),
                run.platform,
                run.platform.machine()
            ));
        }
        // Emulated exactly when the engine's machine is not the platform's.
        let engine = ctx
            .receipt
            .provenance
            .as_ref()
            .map(|p| p.engine.architecture.as_str())
            .or_else(|| {
                ctx.receipt
                    .platforms
                    .first()
                    .map(|p| p.engine_architecture.as_str())
            });
        if let Some(arch) = engine {
            if (arch != run.platform.machine()) != run.emulated {
                pinned.push(format!(
                    "the run is recorded {}emulated, but the engine is {arch} and the platform {}",
                    if run.emulated { "" } else { "not " },
                    run.platform
                ));
            }
        }
        checks.record(
            &format!("{prefix}/native.pinned"),
            "the native client that ran is the lock's pinned binary for this platform",
            pinned,
        );

        // A native-only bundle's container: its inspection and the runner's observation
        // against the reference boundary policy, as for a candidate container.
        if native_only {
            checks.record(
                &format!("{prefix}/native.boundary"),
                "the native container's inspection and what the runner observed inside meet the boundary policy",
                boundary_failures(ctx, run),
            );
        }

        // The judgement, recomputed from this platform's raw captures.
        let recomputed = match (&matrix_bytes, &lock_bytes) {
            (Ok(m), Ok(l)) => {
                let base = format!("{}/{NATIVE_EVIDENCE_DIR}/", run.dir);
                let read = |p: &str| ctx.bundle.files.get(&format!("{base}{p}")).cloned();
                Some(judge_evidence(m, l, &read))
            }
            _ => None,
        };
        let differences = match &recomputed {
            None => vec!["the native matrix or lock is missing: nothing to recompute".to_string()],
            Some(j) => differences(&run.judgement, j),
        };
        checks.record(
            &format!("{prefix}/native.judgement"),
            "the differential judgement recomputed from the raw native captures equals the recorded one",
            differences,
        );
        let pass = match &recomputed {
            None => vec!["no recomputed judgement".to_string()],
            Some(j) => failures_of(j),
        };
        checks.record(
            &format!("{prefix}/native.pass"),
            "every native run passes the differential judge (no miss, predictions hold, no client drift)",
            pass,
        );
    }
}

const SECTION_TITLE: &str =
    "the native section names the bundled native matrix and lock, each platform once, and sums up";

/// Most characters of one recorded or recomputed value quoted in a difference.
const QUOTE_LIMIT: usize = 240;

/// Most containers one native platform run may name (`bundle.bounds`).
pub(crate) const MAX_NATIVE_CONTAINERS: usize = 64;

/// For every container of the run: `policy::check_applied` of `outer/container-inspect.json`
/// (in the run's engine's dialect) and `policy::check_observed` of `evidence/boundary.json`,
/// below the container's directory (`NativePlatformRun::shard_dir`); container i ≥ 1's failures
/// name it.
fn boundary_failures(ctx: &Context, run: &NativePlatformRun) -> Vec<String> {
    let mut failures = Vec::new();
    for index in 0..run.containers.min(MAX_NATIVE_CONTAINERS) {
        let name = if index == 0 {
            String::new()
        } else {
            format!("container {index}: ")
        };
        failures.extend(
            container_boundary_failures(ctx, run, &run.shard_dir(index))
                .into_iter()
                .map(|f| format!("{name}{f}")),
        );
    }
    failures
}

fn container_boundary_failures(ctx: &Context, run: &NativePlatformRun, dir: &str) -> Vec<String> {
    use scopebox_schema::evidence::{InnerBoundary, BOUNDARY_FILE};
    use scopebox_schema::policy::{check_applied, check_observed};
    use scopebox_schema::receipt::CONTAINER_INSPECT_FILE;
    let mut failures = Vec::new();
    let read = |rel: &str| -> Result<&Vec<u8>, String> {
        let path = format!("{dir}/{rel}");
        ctx.bundle
            .files
            .get(&path)
            .ok_or_else(|| format!("{path} is missing"))
    };
    match (run.engine, read(CONTAINER_INSPECT_FILE)) {
        (None, _) => failures.push("the native run names no engine".to_string()),
        (_, Err(e)) => failures.push(e),
        (Some(engine), Ok(bytes)) => {
            match scopebox_schema::strict_json::from_slice::<serde_json::Value>(bytes) {
                Ok(doc) => failures.extend(
                    check_applied(ctx.policy, &doc, engine)
                        .into_iter()
                        .map(|f| format!("applied: {f}")),
                ),
                Err(e) => failures.push(format!("{CONTAINER_INSPECT_FILE}: {e}")),
            }
        }
    }
    let observed_rel = format!("evidence/{BOUNDARY_FILE}");
    match read(&observed_rel) {
        Err(e) => failures.push(e),
        Ok(bytes) => match scopebox_schema::strict_json::from_slice::<InnerBoundary>(bytes) {
            Ok(o) => failures.extend(
                check_observed(ctx.policy, &o)
                    .into_iter()
                    .map(|f| format!("observed: {f}")),
            ),
            Err(e) => failures.push(format!("{observed_rel}: {e}")),
        },
    }
    failures
}

fn quote(v: &impl serde::Serialize) -> String {
    let text = serde_json::to_string(v).unwrap_or_default();
    if text.chars().count() <= QUOTE_LIMIT {
        return text;
    }
    let cut: String = text.chars().take(QUOTE_LIMIT).collect();
    format!("{cut}…")
}

/// Where the recorded judgement departs from the recomputed one, field by field and run by run.
fn differences(recorded: &NativeJudgement, recomputed: &NativeJudgement) -> Vec<String> {
    if recorded == recomputed {
        return Vec::new();
    }
    let mut out = Vec::new();
    if recorded.runs.len() != recomputed.runs.len() {
        out.push(format!(
            "runs: {} recorded, {} recomputed",
            recorded.runs.len(),
            recomputed.runs.len()
        ));
    }
    for (a, b) in recorded.runs.iter().zip(&recomputed.runs) {
        if a == b {
            continue;
        }
        let at = format!("{}/{}", b.scenario, b.mode.as_str());
        let mut fields = Vec::new();
        if (a.scenario.as_str(), a.mode) != (b.scenario.as_str(), b.mode) {
            fields.push(format!("recorded as {}/{}", a.scenario, a.mode.as_str()));
        }
        for (path, digest) in &b.digests {
            match a.digests.get(path) {
                Some(d) if d == digest => {}
                Some(d) => fields.push(format!("{path} has sha256 {digest}, recorded {d}")),
                None => fields.push(format!("{path} was not recorded")),
            }
        }
        for path in a.digests.keys().filter(|p| !b.digests.contains_key(*p)) {
            fields.push(format!("{path} is recorded but absent"));
        }
        if a.observation != b.observation {
            fields.push(format!(
                "observation recorded {}, recomputed {}",
                quote(&a.observation),
                quote(&b.observation)
            ));
        }
        if a.failures != b.failures || a.capture_failures != b.capture_failures {
            fields.push(format!(
                "failures recorded {}, recomputed {}",
                quote(&(&a.capture_failures, &a.failures)),
                quote(&(&b.capture_failures, &b.failures))
            ));
        }
        if fields.is_empty() {
            fields.push("the run's record differs".to_string());
        }
        out.push(format!("{at}: {}", fields.join("; ")));
    }
    let top = |name: &str, a: String, b: String, out: &mut Vec<String>| {
        if a != b {
            out.push(format!("{name}: recorded {a}, recomputed {b}"));
        }
    };
    top(
        "matrixSha256",
        quote(&recorded.matrix_sha256),
        quote(&recomputed.matrix_sha256),
        &mut out,
    );
    top(
        "lockSha256",
        quote(&recorded.lock_sha256),
        quote(&recomputed.lock_sha256),
        &mut out,
    );
    top(
        "indexSha256",
        quote(&recorded.index_sha256),
        quote(&recomputed.index_sha256),
        &mut out,
    );
    top(
        "clientSha256",
        quote(&recorded.client_sha256),
        quote(&recomputed.client_sha256),
        &mut out,
    );
    top(
        "machine",
        quote(&recorded.machine),
        quote(&recomputed.machine),
        &mut out,
    );
    top(
        "failures",
        quote(&recorded.failures),
        quote(&recomputed.failures),
        &mut out,
    );
    top(
        "totals",
        quote(&recorded.totals),
        quote(&recomputed.totals),
        &mut out,
    );
    top(
        "passed",
        quote(&recorded.passed),
        quote(&recomputed.passed),
        &mut out,
    );
    if out.is_empty() {
        out.push("the recorded judgement differs from the recomputed one".to_string());
    }
    out
}

/// Every failure of a recomputed judgement, one line per failed run.
fn failures_of(j: &NativeJudgement) -> Vec<String> {
    let mut out: Vec<String> = j.failures.clone();
    for r in j.runs.iter().filter(|r| !r.passed) {
        let mut parts: Vec<String> = r.capture_failures.clone();
        parts.extend(
            r.inventory_failures
                .iter()
                .map(|f| format!("inventory: {f}")),
        );
        parts.extend(r.failures.iter().map(|f| f.describe()));
        out.push(format!(
            "{}/{}: {}",
            r.scenario,
            r.mode.as_str(),
            parts.join("; ")
        ));
    }
    if j.runs.is_empty() && out.is_empty() {
        out.push("no native run was judged".to_string());
    }
    out
}
