//! The one set of rules that decides whether a case passed, what the two controls showed, and
//! whether a matrix may be run at all. The runner calls `judge` inside the container right
//! after a case (and `positive_control`/`negative_control` on the controls' raw records, then
//! `control_failures` on what they derive); the orchestrator and the verifier call them again
//! on the raw captures copied out, and the results must agree. Everything here is a
//! pure function of its arguments: it must never touch the filesystem, the clock, the
//! environment or a process, or the verifier could not replay it.
//!
//! Failure strings are stable and meant for people: one per failed check, naming the path,
//! canary, pointer or value involved.

use crate::canary;
use crate::digest::{self, sha256_hex};
use crate::evidence::{
    AdversarialControl, CaseRecord, Controls, FixtureObservation, NegativeControl,
    NegativeControlRecord, PositiveControl, PositiveControlRecord, Verdict, ADVERSARIAL_CONTROLS,
};
use crate::layout;
use crate::matrix::{Case, Expectations, FileContent, FixtureEntry, JsonFact, Matrix};
use crate::witness::WitnessRecord;
use std::collections::{BTreeMap, BTreeSet};

/// Mode a file or FIFO gets when the matrix names none.
pub const DEFAULT_FILE_MODE: u32 = 0o644;
/// Mode a directory (declared or implied parent) gets when the matrix names none.
pub const DEFAULT_DIR_MODE: u32 = 0o755;
/// Largest `fill` file a matrix may ask for: the fixture tmpfs mounts are small.
pub const MAX_FILL_SIZE: u64 = 16 * 1024 * 1024;
/// Environment names a case may not set: they steer the harness, not the candidate.
pub const RESERVED_ENV_PREFIX: &str = "SCOPEBOX_";

/// Failures of one case or control quoted wherever they are shown (the runner's progress, the
/// orchestrator's problems, `--json`, junit.xml); the record keeps every one. A candidate that
/// leaves 20,000 files fails with 20,000 failures, and no output may become megabytes of them.
pub const FAILURES_QUOTED: usize = 16;

/// The failures to quote (at most `FAILURES_QUOTED`) and, when some are left out, the line
/// that counts them: "… and N more (see the record)".
pub fn quoted_failures(failures: &[String]) -> (&[String], Option<String>) {
    let shown = &failures[..failures.len().min(FAILURES_QUOTED)];
    let more = (failures.len() > FAILURES_QUOTED).then(|| {
        format!(
            "… and {} more (see the record)",
            failures.len() - FAILURES_QUOTED
        )
    });
    (shown, more)
}

/// Bounds on a matrix, checked (by [`matrix_bound_failures`]) before any other work on it, so
/// a hostile matrix costs its parse and nothing more. Each is far above the shipped matrices'
/// (342 cases, 63 fixture entries, 26 MiB of fills in all, 466 canaries in one client matrix).
pub mod bounds {
    /// Cases in one matrix (the bundle reader's entry bound allows both platforms' evidence).
    pub const MAX_CASES: usize = 4_096;
    /// Fixture entries in one case (the runner lays each out, the walk records each).
    pub const MAX_FIXTURE_ENTRIES: usize = 4_096;
    /// Canaries in one matrix (every capture is searched for each).
    pub const MAX_CANARIES: usize = 4_096;
    /// Arguments, environment entries and expectations (JSON facts, needles) of one case.
    pub const MAX_CASE_ITEMS: usize = 4_096;
    /// All `fill` bytes of one case: no fixture tmpfs is larger (`/work` is 64 MiB).
    pub const MAX_CASE_FILL_BYTES: u64 = 64 * 1024 * 1024;
    /// All `fill` bytes of the matrix: each is hashed once per platform by the verifier.
    pub const MAX_MATRIX_FILL_BYTES: u64 = 256 * 1024 * 1024;
    /// Nodes of one case's fixture tree, implied parents included: half of what one walk
    /// records, so the walk before the run is always whole and the one after has room to see
    /// what the candidate added.
    pub const MAX_FIXTURE_NODES: usize = crate::evidence::WALK_NODE_LIMIT / 2;
    /// Levels below its fixture root of one case's deepest fixture entry: half of how deep a
    /// walk goes.
    pub const MAX_FIXTURE_DEPTH: usize = crate::evidence::WALK_DEPTH_LIMIT / 2;
    /// Path text of one case's fixture tree (every node's path, summed): half of what one walk
    /// records.
    pub const MAX_FIXTURE_PATH_BYTES: usize = crate::evidence::WALK_PATH_BYTES_LIMIT / 2;
}

/// What a walk of the tree `case` declares records: its nodes (declared entries and their
/// implied parents, below the fixture roots), the deepest level below a root, and the bytes of
/// path text. Paths below no fixture root are left out (validation refuses them).
fn declared_walk_size(case: &Case) -> (usize, usize, usize) {
    let mut nodes: BTreeSet<&str> = BTreeSet::new();
    let mut depth = 0;
    for entry in &case.fixture {
        let path = entry_path(entry);
        let Some(root) = layout::FIXTURE_ROOTS.iter().find(|root| {
            path.strip_prefix(**root)
                .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'))
        }) else {
            continue;
        };
        let below = &path[root.len() + 1..];
        depth = depth.max(below.split('/').count());
        // The entry, then each parent up to (not including) the root.
        let mut node = path;
        while node.len() > root.len() && nodes.insert(node) {
            node = &node[..node.rfind('/').unwrap_or(0)];
        }
    }
    let bytes = nodes.iter().map(|n| n.len()).sum();
    (nodes.len(), depth, bytes)
}

/// Every bound of [`bounds`] the matrix exceeds; computed from counts and declared sizes alone
/// (nothing is materialized, no case is judged). Empty when the matrix is within bounds.
pub fn matrix_bound_failures(matrix: &Matrix) -> Vec<String> {
    use bounds::*;
    let mut failures = Vec::new();
    if matrix.cases.len() > MAX_CASES {
        failures.push(format!(
            "the matrix has {} cases, more than {MAX_CASES}",
            matrix.cases.len()
        ));
        return failures;
    }
    if matrix.canaries.len() > MAX_CANARIES {
        failures.push(format!(
            "the matrix has {} canaries, more than {MAX_CANARIES}",
            matrix.canaries.len()
        ));
    }
    let mut matrix_fill: u64 = 0;
    for case in &matrix.cases {
        let at = &case.id;
        if case.fixture.len() > MAX_FIXTURE_ENTRIES {
            failures.push(format!(
                "case {at}: {} fixture entries, more than {MAX_FIXTURE_ENTRIES}",
                case.fixture.len()
            ));
        }
        let (nodes, depth, path_bytes) = declared_walk_size(case);
        for (what, count, bound) in [
            ("fixture nodes (parents included)", nodes, MAX_FIXTURE_NODES),
            ("levels of fixture below its root", depth, MAX_FIXTURE_DEPTH),
            ("bytes of fixture paths", path_bytes, MAX_FIXTURE_PATH_BYTES),
        ] {
            if count > bound {
                failures.push(format!("case {at}: {count} {what}, more than {bound}"));
            }
        }
        let e = &case.expect;
        let items = [
            ("args", case.args.len()),
            ("env", case.env.len()),
            ("json facts", e.json.len()),
            ("stdoutContains", e.stdout_contains.len()),
            ("stdoutNotContains", e.stdout_not_contains.len()),
            ("stderrContains", e.stderr_contains.len()),
        ];
        for (what, count) in items {
            if count > MAX_CASE_ITEMS {
                failures.push(format!(
                    "case {at}: {count} {what}, more than {MAX_CASE_ITEMS}"
                ));
            }
        }
        let case_fill = case
            .fixture
            .iter()
            .filter_map(|entry| match entry {
                FixtureEntry::File {
                    content: FileContent::Fill { size, .. },
                    ..
                } => Some(*size),
                _ => None,
            })
            .fold(0u64, u64::saturating_add);
        if case_fill > MAX_CASE_FILL_BYTES {
            failures.push(format!(
                "case {at}: fill files of {case_fill} bytes in all, more than {MAX_CASE_FILL_BYTES}"
            ));
        }
        matrix_fill = matrix_fill.saturating_add(case_fill);
    }
    if matrix_fill > MAX_MATRIX_FILL_BYTES {
        failures.push(format!(
            "fill files of {matrix_fill} bytes in all, more than {MAX_MATRIX_FILL_BYTES}"
        ));
    }
    failures
}

/// Judge one case from what the candidate printed and what the runner recorded.
///
/// Checks, in this order: the record belongs to the case; the candidate was neither timed out
/// nor killed by a signal; the sentinel marker is absent; the fixture tree was laid out as
/// declared and is unchanged; no canary appears in stdout or stderr; the captures match the
/// recorded digests; then the case's own expectations.
pub fn judge(
    matrix: &Matrix,
    case: &Case,
    stdout: &[u8],
    stderr: &[u8],
    record: &CaseRecord,
) -> Verdict {
    let mut failures = Vec::new();
    if record.id != case.id {
        failures.push(format!(
            "record is for case {:?}, expected {:?}",
            record.id, case.id
        ));
    }
    invariants(matrix, stdout, stderr, record, &mut failures);
    failures.extend(environment_failures(case, &record.env));
    failures.extend(fixture_layout_failures(case, &record.fixtures_before));
    expectations(
        &case.expect,
        record.exit_code,
        stdout,
        stderr,
        &mut failures,
    );
    Verdict {
        pass: failures.is_empty(),
        failures,
    }
}

/// The checks every run of anything over a fixture must pass, whatever the case expects:
/// no timeout, no signal, no sentinel marker, fixtures unchanged, no canary leaked in any
/// encoding `canary::Encoding` names (raw, base64, hex, ...), captures
/// matching their recorded digests. The negative control runs exactly these.
pub fn invariants(
    matrix: &Matrix,
    stdout: &[u8],
    stderr: &[u8],
    record: &CaseRecord,
    failures: &mut Vec<String>,
) {
    let canaries = canary::CanarySearches::of(&[&matrix.canaries]);
    invariants_against(&canaries, stdout, stderr, record, failures);
}

/// `invariants` with the canaries already compiled (the matrix's, and for the adversarial
/// controls `CONTROL_CANARY` after them).
fn invariants_against(
    canaries: &canary::CanarySearches,
    stdout: &[u8],
    stderr: &[u8],
    record: &CaseRecord,
    failures: &mut Vec<String>,
) {
    if record.timed_out {
        failures.push("candidate timed out and was killed".to_string());
    }
    if let Some(signal) = record.signal {
        failures.push(format!("candidate killed by signal {signal}"));
    }
    if record.marker_present {
        failures.push(marker_failure());
    }
    for problem in &record.fixtures_after_problems {
        failures.push(format!("fixture walk after the run: {problem}"));
    }
    failures.extend(fixture_change_failures(
        &record.fixtures_before,
        &record.fixtures_after,
        record.fixtures_after_problems.is_empty(),
    ));
    failures.extend(canaries.failures(stdout, "stdout"));
    failures.extend(canaries.failures(stderr, "stderr"));
    // What else the candidate could write that the record carries: the names of the entries it
    // added below the fixture roots (a canary spelled as a file name). Their contents are not
    // recorded; writing at all fails the case (`fixture … added`, and the witness's write-open).
    let existed: BTreeSet<&str> = record
        .fixtures_before
        .iter()
        .map(|o| o.path.as_str())
        .collect();
    for added in record
        .fixtures_after
        .iter()
        .filter(|o| !existed.contains(o.path.as_str()))
    {
        failures.extend(canaries.failures(
            added.path.as_bytes(),
            &format!("the name of fixture {}", added.path),
        ));
    }
    failures.extend(written_failures(record, canaries));
    if sha256_hex(stdout) != record.stdout_sha256 {
        failures.push("stdout does not match its recorded sha256".to_string());
    }
    if sha256_hex(stderr) != record.stderr_sha256 {
        failures.push("stderr does not match its recorded sha256".to_string());
    }
}

/// The files the run left written (`CaseRecord::written`): one outside the fixture roots (in
/// `/tmp`) fails by itself — the fixture walk reports those below the roots — and every canary
/// in any of them, in any encoding, fails; so does content that is not what the record says.
fn written_failures(record: &CaseRecord, canaries: &canary::CanarySearches) -> Vec<String> {
    let mut failures = Vec::new();
    for file in &record.written {
        let path = &file.path;
        let below_roots = layout::FIXTURE_ROOTS.iter().any(|r| {
            path.strip_prefix(r)
                .is_some_and(|rest| rest.starts_with('/'))
        });
        if !below_roots {
            failures.push(format!("file {path} written outside the fixture roots"));
        }
        let content = match decode_base64(&file.content_base64) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("written file {path}: content is not base64 ({e})"));
                continue;
            }
        };
        let consistent = if file.truncated {
            content.len() as u64 <= file.size
        } else {
            content.len() as u64 == file.size && sha256_hex(&content) == file.sha256
        };
        if !consistent {
            failures.push(format!(
                "written file {path}: content does not match its recorded size and sha256"
            ));
        }
        failures.extend(canaries.failures(&content, &format!("file {path}")));
    }
    failures
}

/// The failure `invariants` reports when the sentinel marker is present: the negative control
/// counts as caught only when this exact failure fires.
pub fn marker_failure() -> String {
    format!(
        "sentinel marker {} present: a configured command was executed",
        layout::SENTINEL_MARKER
    )
}

/// Where the negative control's project lives (matrix spelling).
pub const NEGATIVE_CONTROL_ROOT: &str = "/work/scopebox-negative-control";
/// The id of the negative control's run record (never a case id: the runner writes it apart).
pub const NEGATIVE_CONTROL_ID: &str = "negative-control";
/// The argument the control fixture configures for its sentinel command; the sentinel writes
/// it into the marker, so the marker names the control that fired it.
pub const NEGATIVE_CONTROL_ARG: &str = "negative-control";
/// The argument the runner gives the sentinel in the positive control.
pub const POSITIVE_CONTROL_ARG: &str = "positive-control";
/// The name the reference host's run is recorded under: it is the runner itself acting as a
/// host, not a program.
pub const REFERENCE_HOST: &str = "reference-host";

/// The sentinel's argv in the positive control.
pub fn positive_control_argv(sentinel_bin: &str) -> Vec<String> {
    vec![sentinel_bin.to_string(), POSITIVE_CONTROL_ARG.to_string()]
}

/// The argv recorded for the reference host's run over the control fixture.
pub fn negative_control_argv() -> Vec<String> {
    vec![
        REFERENCE_HOST.to_string(),
        NEGATIVE_CONTROL_ROOT.to_string(),
    ]
}

/// The control fixture: one project `.mcp.json` whose only server's command is the sentinel
/// with `NEGATIVE_CONTROL_ARG`. Spelled by hand, not through a JSON map, so the bytes (and the
/// digest the walk records) never depend on a serializer feature.
pub fn negative_control_fixture(sentinel_bin: &str) -> Vec<FixtureEntry> {
    let quote = |text: &str| serde_json::Value::from(text).to_string();
    let config = format!(
        "{{\"mcpServers\":{{\"reference-control\":{{\"command\":{},\"args\":[{}]}}}}}}",
        quote(sentinel_bin),
        quote(NEGATIVE_CONTROL_ARG)
    );
    vec![FixtureEntry::File {
        path: format!("{NEGATIVE_CONTROL_ROOT}/.mcp.json"),
        content: FileContent::Text(config),
        mode: None,
    }]
}

/// The positive control as `controls.json` states it, derived from what was observed.
pub fn positive_control(record: &PositiveControlRecord) -> PositiveControl {
    PositiveControl {
        marker_present_before: record.marker_present_before,
        sentinel_exit_code: record.exit_code,
        marker_appeared: record.marker_present_after,
        marker_removed: !record.marker_present_after_removal,
    }
}

/// The negative control as `controls.json` states it, derived from the reference host's run
/// and its raw output by replaying `invariants`: caught exactly when `marker_failure` fires.
/// Also returns the replayed verdict, which must equal the one the runner recorded.
pub fn negative_control(
    matrix: &Matrix,
    record: &NegativeControlRecord,
    stdout: &[u8],
    stderr: &[u8],
) -> (NegativeControl, Verdict) {
    let mut failures = Vec::new();
    invariants(matrix, stdout, stderr, &record.run, &mut failures);
    let control = NegativeControl {
        commands_executed: u32::try_from(record.executed.len()).unwrap_or(u32::MAX),
        marker_appeared: record.run.marker_present,
        caught: failures.contains(&marker_failure()),
        marker_removed: !record.marker_present_after_removal,
    };
    let verdict = Verdict {
        pass: failures.is_empty(),
        failures,
    };
    (control, verdict)
}

/// How a process ended, for a sentence: "exited with code N", or "did not exit (no exit code)".
pub fn exit_text(code: Option<impl std::fmt::Display>) -> String {
    match code {
        Some(code) => format!("exited with code {code}"),
        None => "did not exit (no exit code)".to_string(),
    }
}

/// Every way the positive control did not prove detection, from its flags: the marker was
/// absent before, the sentinel exited 0, the marker appeared, and it was removed. Empty when it
/// behaved. The runner, the orchestrator and the verifier all judge the flags with this.
pub fn positive_control_failures(p: &PositiveControl) -> Vec<String> {
    failed([
        (
            p.marker_present_before,
            "the marker was present before the sentinel ran".into(),
        ),
        (
            p.sentinel_exit_code != Some(0),
            format!(
                "the sentinel {}, expected exit code 0",
                exit_text(p.sentinel_exit_code)
            ),
        ),
        (
            !p.marker_appeared,
            "the marker did not appear when the sentinel ran".into(),
        ),
        (
            !p.marker_removed,
            "the marker was not removed after the control".into(),
        ),
    ])
}

/// Every way the negative control did not prove the check can fail, from its flags: the
/// reference host executed a configured command, the marker appeared, the case invariants
/// caught it, and the marker was removed. Empty when it behaved.
pub fn negative_control_failures(n: &NegativeControl) -> Vec<String> {
    failed([
        (
            n.commands_executed == 0,
            "the reference host executed no configured command".into(),
        ),
        (
            !n.marker_appeared,
            "the marker did not appear under the reference host".into(),
        ),
        (
            !n.caught,
            "the invariant check did not catch the reference host".into(),
        ),
        (
            !n.marker_removed,
            "the marker was not removed after the negative control".into(),
        ),
    ])
}

/// The messages of the checks that failed, in order.
fn failed<const N: usize>(checks: [(bool, String); N]) -> Vec<String> {
    checks
        .into_iter()
        .filter_map(|(failed, message)| failed.then_some(message))
        .collect()
}

/// Both controls' failures, each prefixed with the control it belongs to (`positive control:
/// …`, `negative control: …`); empty when both behaved.
pub fn control_failures(c: &Controls) -> Vec<String> {
    let positive = positive_control_failures(&c.positive)
        .into_iter()
        .map(|f| format!("positive control: {f}"));
    let negative = negative_control_failures(&c.negative)
        .into_iter()
        .map(|f| format!("negative control: {f}"));
    let mut all: Vec<String> = positive.chain(negative).collect();
    all.extend(adversarial_control_failures(&c.adversarial));
    all
}

/// Every way the adversarial controls did not prove the judge catches their attacks: one
/// control per `ADVERSARIAL_CONTROLS` name, in order, each caught.
pub fn adversarial_control_failures(controls: &[AdversarialControl]) -> Vec<String> {
    let mut failures = Vec::new();
    let names: Vec<&str> = controls.iter().map(|c| c.name.as_str()).collect();
    if names != ADVERSARIAL_CONTROLS {
        failures.push(format!(
            "adversarial controls are {names:?}, expected {ADVERSARIAL_CONTROLS:?}"
        ));
    }
    for c in controls {
        let caught = c.failures.iter().any(|f| f.starts_with(&c.expected));
        if !c.caught || !caught {
            failures.push(format!(
                "adversarial control {}: not caught (no failure starting {:?})",
                c.name, c.expected
            ));
        }
        if adversarial_expected(&c.name) != Some(c.expected.as_str()) {
            failures.push(format!(
                "adversarial control {}: expects {:?}, not what its attack must produce",
                c.name, c.expected
            ));
        }
    }
    failures
}

/// The failure (prefix) each adversarial control's attack must produce.
pub fn adversarial_expected(name: &str) -> Option<&'static str> {
    Some(match name {
        "exec-delete-marker" | "exec-redirected-marker" => "witness: executed execve",
        "double-fork-daemon" => "witness: process created",
        // execveat natively; under qemu-user (no execveat) the /proc/self/fd execve fallback.
        "memfd-exec" => "witness: executed ",
        "base64-canary" => "canary ",
        "tmp-file-canary" => "witness: opened for writing",
        _ => return None,
    })
}

/// The canary every adversarial control leaks (besides the matrix's, which it is not given).
pub const CONTROL_CANARY: &str = "SCOPEBOX-CONTROL-CANARY-7f3a";

/// An adversarial control as `controls.json` states it, derived from its raw record, output
/// and witness record: the case invariants (with `CONTROL_CANARY` among the canaries) plus the
/// witness's judgement; caught when a failure starts with the attack's expected prefix.
pub fn adversarial_control(
    name: &str,
    matrix: &Matrix,
    record: &CaseRecord,
    stdout: &[u8],
    stderr: &[u8],
    witness: &WitnessRecord,
) -> AdversarialControl {
    // The matrix's canaries and then the control's: what one search over both lists reports,
    // without compiling the matrix's a second time.
    let control = [CONTROL_CANARY.to_string()];
    let canaries = canary::CanarySearches::of(&[&matrix.canaries, &control]);
    let mut failures = Vec::new();
    if record.id != name {
        failures.push(format!("record is for {:?}, expected {name:?}", record.id));
    }
    invariants_against(&canaries, stdout, stderr, record, &mut failures);
    failures.extend(witness_failures(record, witness));
    let expected = adversarial_expected(name).unwrap_or("<unknown control>");
    AdversarialControl {
        name: name.to_string(),
        expected: expected.to_string(),
        caught: failures.iter().any(|f| f.starts_with(expected)),
        failures,
    }
}

/// `judge` plus the kernel witness: what the runner and the verifier decide a case with.
pub fn judge_witnessed(
    matrix: &Matrix,
    case: &Case,
    stdout: &[u8],
    stderr: &[u8],
    record: &CaseRecord,
    witness: &WitnessRecord,
) -> Verdict {
    let mut verdict = judge(matrix, case, stdout, stderr, record);
    verdict.failures.extend(witness_failures(record, witness));
    verdict.pass = verdict.failures.is_empty();
    verdict
}

/// `witness::judge`, after checking the witness record is about this run's program: its
/// `program` is the record's argv[0].
pub fn witness_failures(record: &CaseRecord, witness: &WitnessRecord) -> Vec<String> {
    let mut failures = Vec::new();
    if record.argv.first() != Some(&witness.program) {
        failures.push(format!(
            "witness record is about {:?}, the run started {:?}",
            witness.program,
            record.argv.first()
        ));
    }
    failures.extend(crate::witness::judge(witness));
    failures
}

/// The environment every candidate gets, `NAME=value` sorted by name: the base
/// (`HOME=/home/node`, `PATH=/scopebox/bin`, `LANG=C.UTF-8`) with the case's own variables
/// over it. The runner builds the candidate's environment from this.
pub fn expected_env(case: &Case) -> Vec<(String, String)> {
    let mut env: BTreeMap<String, String> = [
        ("HOME", layout::HOME),
        ("PATH", "/scopebox/bin"),
        ("LANG", "C.UTF-8"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in &case.env {
        env.insert(k.clone(), v.clone());
    }
    env.into_iter().collect()
}

/// Every way a recorded environment differs from `expected_env`: it must be equal key for key
/// and in order, with no duplicate, no extra (`LD_PRELOAD`, `SCOPEBOX_*`) and none missing.
pub fn environment_failures(case: &Case, env: &[String]) -> Vec<String> {
    let expected: Vec<String> = expected_env(case)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if env == expected.as_slice() {
        return Vec::new();
    }
    let mut failures = Vec::new();
    let want: BTreeMap<&str, &str> = expected.iter().filter_map(|e| e.split_once('=')).collect();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for entry in env {
        let Some((name, value)) = entry.split_once('=') else {
            failures.push(format!("environment entry {entry:?} has no '='"));
            continue;
        };
        *seen.entry(name).or_default() += 1;
        match want.get(name) {
            None => failures.push(format!("environment has an extra {name:?}")),
            Some(v) if *v != value => {
                failures.push(format!("environment {name} is {value:?}, expected {v:?}"))
            }
            Some(_) => {}
        }
    }
    for (name, count) in &seen {
        if *count > 1 {
            failures.push(format!("environment has {name:?} {count} times"));
        }
    }
    for name in want.keys() {
        if !seen.contains_key(name) {
            failures.push(format!("environment lacks {name:?}"));
        }
    }
    if failures.is_empty() {
        failures.push("environment is not in the matrix's order".to_string());
    }
    failures
}

/// Every path added, removed or changed between two walks of the fixture roots. When the walk
/// after is not `whole` (it stopped at a bound or an unreadable entry), a path it did not reach
/// is only said to be unseen: it may be there still.
pub fn fixture_change_failures(
    before: &[FixtureObservation],
    after: &[FixtureObservation],
    whole: bool,
) -> Vec<String> {
    let before: BTreeMap<&str, &FixtureObservation> =
        before.iter().map(|o| (o.path.as_str(), o)).collect();
    let after: BTreeMap<&str, &FixtureObservation> =
        after.iter().map(|o| (o.path.as_str(), o)).collect();
    let mut failures = Vec::new();
    for (path, old) in &before {
        match after.get(path) {
            None if whole => failures.push(format!("fixture {path} removed")),
            None => failures.push(format!("fixture {path} not seen after the run")),
            Some(new) if new != old => {
                let mut what = Vec::new();
                if new.kind != old.kind {
                    what.push(format!("kind {} -> {}", old.kind, new.kind));
                }
                if new.mode != old.mode {
                    what.push(format!("mode {} -> {}", old.mode, new.mode));
                }
                if new.size != old.size {
                    what.push(format!("size {} -> {}", old.size, new.size));
                }
                if new.sha256 != old.sha256 {
                    what.push("content".to_string());
                }
                failures.push(format!("fixture {path} changed ({})", what.join(", ")));
            }
            Some(_) => {}
        }
    }
    for path in after.keys() {
        if !before.contains_key(path) {
            failures.push(format!("fixture {path} added"));
        }
    }
    failures
}

/// Whether the walk taken before the run shows exactly the declared fixture: every entry with
/// its kind, mode and bytes (symlinks: target), and nothing else but implied parent dirs.
/// This binds the matrix to what the candidate actually saw.
pub fn fixture_layout_failures(case: &Case, before: &[FixtureObservation]) -> Vec<String> {
    layout_failures(&case.fixture, before)
}

/// `fixture_layout_failures` for any declared fixture (the negative control's, for one).
pub fn layout_failures(fixture: &[FixtureEntry], before: &[FixtureObservation]) -> Vec<String> {
    let observed: BTreeMap<&str, &FixtureObservation> =
        before.iter().map(|o| (o.path.as_str(), o)).collect();
    let mut failures = Vec::new();
    let mut declared: BTreeSet<String> = BTreeSet::new();
    for entry in fixture {
        let path = entry_path(entry);
        declared.insert(path.to_string());
        let mut parent = parent_of(path);
        while let Some(p) = parent {
            if layout::FIXTURE_ROOTS.contains(&p) {
                break;
            }
            declared.insert(p.to_string());
            parent = parent_of(p);
        }
        let Some(obs) = observed.get(path) else {
            failures.push(format!("fixture {path} was not laid out"));
            continue;
        };
        // Kind, mode and size first: a file's digest (a fill's is streamed) is computed only
        // when everything cheaper already agrees.
        let expected = match expected_shape(entry) {
            Ok(e) => e,
            Err(e) => {
                failures.push(format!("fixture {path} is invalid: {e}"));
                continue;
            }
        };
        let shape_differs = obs.kind != expected.kind
            || (expected.kind != "symlink" && obs.mode != expected.mode)
            || (expected.kind == "file" && obs.size != expected.size);
        let digest_differs = || match entry {
            FixtureEntry::File { content, .. } => {
                file_sha256(content).ok().as_ref() != obs.sha256.as_ref()
            }
            _ => obs.sha256 != expected.sha256,
        };
        if shape_differs || digest_differs() {
            failures.push(format!(
                "fixture {path} not laid out as declared (saw {} {} {} bytes)",
                obs.kind, obs.mode, obs.size
            ));
        }
    }
    for obs in before {
        if !declared.contains(&obs.path) {
            failures.push(format!("fixture {} present but not declared", obs.path));
        }
    }
    failures
}

/// What the walk must show for one declared entry (`size` only meaningful for files).
pub fn expected_observation(entry: &FixtureEntry) -> Result<FixtureObservation, String> {
    let mut expected = expected_shape(entry)?;
    if let FixtureEntry::File { content, .. } = entry {
        expected.sha256 = Some(file_sha256(content)?);
    }
    Ok(expected)
}

/// `expected_observation` without a file's digest (`sha256` is `None` for files): sizes are
/// arithmetic, so this costs nothing for a fill of any size.
fn expected_shape(entry: &FixtureEntry) -> Result<FixtureObservation, String> {
    Ok(match entry {
        FixtureEntry::File {
            path,
            content,
            mode,
        } => FixtureObservation {
            path: path.clone(),
            kind: "file".into(),
            mode: format_mode(mode_or(mode, DEFAULT_FILE_MODE)?),
            size: file_size(content)?,
            sha256: None,
        },
        FixtureEntry::Dir { path, mode } => FixtureObservation {
            path: path.clone(),
            kind: "dir".into(),
            mode: format_mode(mode_or(mode, DEFAULT_DIR_MODE)?),
            size: 0,
            sha256: None,
        },
        FixtureEntry::Symlink { path, target } => FixtureObservation {
            path: path.clone(),
            kind: "symlink".into(),
            mode: "0777".into(),
            size: target.len() as u64,
            sha256: Some(sha256_hex(target.as_bytes())),
        },
        FixtureEntry::Fifo { path, mode } => FixtureObservation {
            path: path.clone(),
            kind: "fifo".into(),
            mode: format_mode(mode_or(mode, DEFAULT_FILE_MODE)?),
            size: 0,
            sha256: None,
        },
    })
}

fn mode_or(mode: &Option<String>, default: u32) -> Result<u32, String> {
    match mode {
        Some(m) => parse_mode(m),
        None => Ok(default),
    }
}

/// The case's own expectations: exit code, JSON facts, text facts.
fn expectations(
    expect: &Expectations,
    exit_code: Option<i32>,
    stdout: &[u8],
    stderr: &[u8],
    failures: &mut Vec<String>,
) {
    match exit_code {
        Some(code) if code == expect.exit_code => {}
        Some(code) => failures.push(format!("exit code {code}, expected {}", expect.exit_code)),
        None => failures.push(format!("no exit code, expected {}", expect.exit_code)),
    }
    if !expect.json.is_empty() {
        match serde_json::from_slice::<serde_json::Value>(stdout) {
            Ok(doc) => {
                for fact in &expect.json {
                    if let Some(f) = json_fact_failure(&doc, fact) {
                        failures.push(f);
                    }
                }
            }
            Err(_) => failures.push("stdout is not one JSON document".to_string()),
        }
    }
    for needle in &expect.stdout_contains {
        if !contains_bytes(stdout, needle.as_bytes()) {
            failures.push(format!("stdout does not contain {needle:?}"));
        }
    }
    for needle in &expect.stdout_not_contains {
        if contains_bytes(stdout, needle.as_bytes()) {
            failures.push(format!("stdout contains {needle:?}"));
        }
    }
    for needle in &expect.stderr_contains {
        if !contains_bytes(stderr, needle.as_bytes()) {
            failures.push(format!("stderr does not contain {needle:?}"));
        }
    }
    empty_check("stdout", stdout, expect.stdout_empty, failures);
    empty_check("stderr", stderr, expect.stderr_empty, failures);
}

fn empty_check(name: &str, bytes: &[u8], want: Option<bool>, failures: &mut Vec<String>) {
    match want {
        Some(true) if !bytes.is_empty() => {
            failures.push(format!("{name} is not empty ({} bytes)", bytes.len()))
        }
        Some(false) if bytes.is_empty() => failures.push(format!("{name} is empty")),
        _ => {}
    }
}

/// One JSON fact against the parsed document; `None` when it holds.
pub fn json_fact_failure(doc: &serde_json::Value, fact: &JsonFact) -> Option<String> {
    let p = &fact.pointer;
    let found = doc.pointer(p);
    if let Some(want_absent) = fact.absent {
        return match (want_absent, found) {
            (true, Some(v)) => Some(format!("json {p} is {}, expected absent", short(v))),
            (false, None) => Some(format!("json {p} is absent, expected present")),
            _ => None,
        };
    }
    let Some(value) = found else {
        return Some(format!("json {p} is absent"));
    };
    if let Some(want) = &fact.equals {
        if value != want {
            return Some(format!(
                "json {p} is {}, expected {}",
                short(value),
                short(want)
            ));
        }
    }
    if let Some(want) = fact.length {
        let len = match value {
            serde_json::Value::Array(a) => a.len(),
            serde_json::Value::Object(o) => o.len(),
            other => {
                return Some(format!(
                    "json {p} is {}, expected an array or object of length {want}",
                    short(other)
                ))
            }
        };
        if len != want {
            return Some(format!("json {p} has length {len}, expected {want}"));
        }
    }
    None
}

/// A value's JSON text, cut short so one failure stays one readable line.
fn short(v: &serde_json::Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 120 {
        let cut: String = text.chars().take(117).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// Whether `needle` occurs in `haystack` (byte search; empty needle never matches).
pub fn contains_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    // memmem (two-way + SIMD prefilter), not windows(): the verifier runs this for every
    // canary over every capture, and a memcmp per byte position dominated verification time.
    !needle.is_empty() && memchr::memmem::find(haystack, needle).is_some()
}

/// A file entry's size, validated arithmetically: a `fill` is never materialized here.
pub fn file_size(content: &FileContent) -> Result<u64, String> {
    match content {
        FileContent::Text(t) => Ok(t.len() as u64),
        FileContent::Base64(b) => decode_base64(b).map(|bytes| bytes.len() as u64),
        FileContent::Fill { prefix, size, .. } => {
            if *size > MAX_FILL_SIZE {
                return Err(format!("fill size {size} exceeds {MAX_FILL_SIZE}"));
            }
            if prefix.len() as u64 > *size {
                return Err(format!(
                    "fill prefix is {} bytes, longer than size {size}",
                    prefix.len()
                ));
            }
            Ok(*size)
        }
    }
}

/// A file entry's sha256 hex, streamed: a `fill` is hashed in fixed chunks, never held whole.
pub fn file_sha256(content: &FileContent) -> Result<String, String> {
    match content {
        FileContent::Fill { prefix, byte, size } => {
            file_size(content)?;
            // The runner's walk has just hashed the file it laid out from this fill.
            if let Some(sha256) = digest::remembered_fill_sha256(prefix.as_bytes(), *byte, *size) {
                return Ok(sha256);
            }
            Ok(digest::declared_fill_sha256(
                prefix.as_bytes(),
                *byte,
                *size,
            ))
        }
        other => file_bytes(other).map(|bytes| digest::sha256_hex_remembered(&bytes)),
    }
}

/// A file entry's exact bytes (the runner writes them; checks use `file_size`/`file_sha256`).
pub fn file_bytes(content: &FileContent) -> Result<Vec<u8>, String> {
    match content {
        FileContent::Text(t) => Ok(t.as_bytes().to_vec()),
        FileContent::Base64(b) => decode_base64(b),
        FileContent::Fill { prefix, byte, size } => {
            file_size(content)?;
            let mut bytes = Vec::with_capacity(*size as usize);
            bytes.extend_from_slice(prefix.as_bytes());
            bytes.resize(*size as usize, *byte);
            Ok(bytes)
        }
    }
}

/// Standard base64 (RFC 4648 §4) with `=` padding: what `decode_base64` reads back.
pub fn encode_base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let v = (b(0) << 16) | (b(1) << 8) | b(2);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((v >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64 (RFC 4648 §4, `=` padding required, no whitespace).
pub fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    fn value(c: u8) -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some((c - b'A') as u32),
            b'a'..=b'z' => Some((c - b'a') as u32 + 26),
            b'0'..=b'9' => Some((c - b'0') as u32 + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err("base64 length is not a multiple of 4".into());
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let chunks = bytes.len() / 4;
    for (i, chunk) in bytes.chunks(4).enumerate() {
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && i + 1 != chunks) {
            return Err("base64 padding is misplaced".into());
        }
        let mut acc = 0u32;
        for &c in &chunk[..4 - pad] {
            acc = (acc << 6) | value(c).ok_or("base64 has a character outside the alphabet")?;
        }
        acc <<= 6 * pad as u32;
        let three = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
        out.extend_from_slice(&three[..3 - pad]);
    }
    Ok(out)
}

/// An octal mode string ("0644", "755", "0000") → permission bits; at most 0o777.
pub fn parse_mode(text: &str) -> Result<u32, String> {
    if text.is_empty() || text.len() > 4 || !text.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return Err(format!("mode {text:?} is not 1-4 octal digits"));
    }
    let mode = u32::from_str_radix(text, 8).map_err(|_| format!("mode {text:?} is not octal"))?;
    if mode > 0o777 {
        return Err(format!(
            "mode {text:?} sets bits beyond rwx (setuid/setgid/sticky)"
        ));
    }
    Ok(mode)
}

/// Permission bits as the walk records them: four octal digits.
pub fn format_mode(mode: u32) -> String {
    format!("{:04o}", mode & 0o7777)
}

/// The path a fixture entry creates.
pub fn entry_path(entry: &FixtureEntry) -> &str {
    match entry {
        FixtureEntry::File { path, .. }
        | FixtureEntry::Dir { path, .. }
        | FixtureEntry::Symlink { path, .. }
        | FixtureEntry::Fifo { path, .. } => path,
    }
}

fn parent_of(path: &str) -> Option<&str> {
    let idx = path.rfind('/')?;
    if idx == 0 {
        None
    } else {
        Some(&path[..idx])
    }
}

/// Every reason the matrix may not be run; `Ok` when there is none. The runner refuses an
/// invalid matrix; the verifier checks the bundled matrix with the same rules.
pub fn validate_matrix(matrix: &Matrix) -> Result<(), Vec<String>> {
    let bound_failures = matrix_bound_failures(matrix);
    if !bound_failures.is_empty() {
        return Err(bound_failures);
    }
    let mut problems = Vec::new();
    if matrix.schema_version != 1 {
        problems.push(format!(
            "schemaVersion is {}, expected 1",
            matrix.schema_version
        ));
    }
    if matrix.name.trim().is_empty() {
        problems.push("name is empty".to_string());
    }
    let mut seen_canaries = BTreeSet::new();
    for (i, canary) in matrix.canaries.iter().enumerate() {
        if canary.is_empty() {
            problems.push(format!("canaries[{i}] is empty"));
        } else if !seen_canaries.insert(canary) {
            problems.push(format!("canary {canary:?} is listed twice"));
        }
    }
    if matrix.cases.is_empty() {
        problems.push("matrix has no cases".to_string());
    }
    let mut ids = BTreeSet::new();
    for (i, case) in matrix.cases.iter().enumerate() {
        let at = if case.id.is_empty() {
            format!("cases[{i}]")
        } else {
            format!("case {}", case.id)
        };
        if !is_case_id(&case.id) {
            problems.push(format!("{at}: id {:?} does not match [a-z0-9-]+", case.id));
        } else if !ids.insert(case.id.as_str()) {
            problems.push(format!("{at}: id is not unique"));
        }
        validate_case(case, &at, &mut problems);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn is_case_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn validate_case(case: &Case, at: &str, problems: &mut Vec<String>) {
    // Profiles a case may name: the shipped manifest's list (the inventory's
    // registry ids and `all`; a test in the inventory keeps the two equal).
    let clients = crate::shipped::clients();
    if !clients.contains(&case.client) {
        problems.push(format!(
            "{at}: client {:?} is not one of {}",
            case.client,
            clients.join(", ")
        ));
    }
    for (i, arg) in case.args.iter().enumerate() {
        if arg.contains('\0') {
            problems.push(format!("{at}: args[{i}] contains a NUL byte"));
        }
    }
    if let Some(cwd) = &case.cwd {
        if !cwd.starts_with('/') || cwd.contains('\0') {
            problems.push(format!("{at}: cwd {cwd:?} is not an absolute path"));
        }
    }
    for (name, value) in &case.env {
        if name.is_empty() || name.contains('=') || name.contains('\0') || value.contains('\0') {
            problems.push(format!("{at}: env {name:?} is not a valid variable"));
        } else if name.starts_with(RESERVED_ENV_PREFIX) {
            problems.push(format!(
                "{at}: env {name:?} is reserved for the harness ({RESERVED_ENV_PREFIX}*)"
            ));
        }
    }
    if case.deadline_ms == Some(0) {
        problems.push(format!("{at}: deadlineMs must be positive"));
    }
    // Symlinks and non-directories declared so far: each new path's ancestors are looked up
    // (O(depth log n) per entry), never every earlier entry scanned (quadratic).
    let mut paths = BTreeSet::new();
    let mut symlinks: BTreeSet<&str> = BTreeSet::new();
    let mut leaves: BTreeSet<&str> = BTreeSet::new();
    for entry in &case.fixture {
        let path = entry_path(entry);
        if let Err(e) = check_fixture_path(path) {
            problems.push(format!("{at}: fixture path {path:?} {e}"));
            continue;
        }
        if !paths.insert(path) {
            problems.push(format!("{at}: fixture path {path} is declared twice"));
            continue;
        }
        let mut ancestor = parent_of(path);
        while let Some(a) = ancestor {
            if symlinks.contains(a) {
                problems.push(format!(
                    "{at}: fixture path {path} lies below the symlink {a}; declare the real path"
                ));
            }
            if leaves.contains(a) {
                problems.push(format!(
                    "{at}: fixture path {path} lies below the non-directory {a}"
                ));
            }
            ancestor = parent_of(a);
        }
        match entry {
            FixtureEntry::File { content, mode, .. } => {
                if let Err(e) = file_size(content) {
                    problems.push(format!("{at}: fixture {path}: {e}"));
                }
                check_mode(mode, path, at, problems);
                leaves.insert(path);
            }
            FixtureEntry::Dir { mode, .. } => check_mode(mode, path, at, problems),
            FixtureEntry::Fifo { mode, .. } => {
                check_mode(mode, path, at, problems);
                leaves.insert(path);
            }
            FixtureEntry::Symlink { target, .. } => {
                if target.is_empty() || target.contains('\0') {
                    problems.push(format!("{at}: fixture {path}: symlink target is empty"));
                }
                symlinks.insert(path);
            }
        }
    }
    for fact in &case.expect.json {
        let checks = usize::from(fact.equals.is_some())
            + usize::from(fact.length.is_some())
            + usize::from(fact.absent.is_some());
        if checks != 1 {
            problems.push(format!(
                "{at}: json fact {:?} sets {checks} checks, expected exactly one of equals, length, absent",
                fact.pointer
            ));
        }
        if !fact.pointer.is_empty() && !fact.pointer.starts_with('/') {
            problems.push(format!(
                "{at}: json pointer {:?} must be empty or start with /",
                fact.pointer
            ));
        }
    }
}

fn check_mode(mode: &Option<String>, path: &str, at: &str, problems: &mut Vec<String>) {
    if let Some(m) = mode {
        if let Err(e) = parse_mode(m) {
            problems.push(format!("{at}: fixture {path}: {e}"));
        }
    }
}

/// A fixture path must be absolute, normalized (no empty, `.` or `..` components, no trailing
/// slash) and strictly below one of the fixture roots (the roots are mount points).
fn check_fixture_path(path: &str) -> Result<(), &'static str> {
    if !path.starts_with('/') {
        return Err("is not absolute");
    }
    if path.contains('\0') {
        return Err("contains a NUL byte");
    }
    if path[1..]
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err("is not normalized (empty, . or .. component)");
    }
    let under_root = layout::FIXTURE_ROOTS
        .iter()
        .any(|root| path.len() > root.len() + 1 && path.starts_with(&format!("{root}/")));
    if !under_root {
        return Err(
            "is not below a fixture root (/work, /home/node, /etc/claude-code, /etc/codex, /etc/gemini-cli)",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::{Expectations, Fault};
    use serde_json::json;

    fn matrix(cases: Vec<Case>) -> Matrix {
        Matrix {
            schema_version: 1,
            name: "t".into(),
            canaries: vec!["CANARY-CMD-7f3a".into(), "CANARY-ENV-1".into()],
            cases,
        }
    }

    fn case() -> Case {
        Case {
            id: "present".into(),
            client: "claude-code".into(),
            description: "d".into(),
            args: vec!["/work/p".into(), "--json".into()],
            cwd: None,
            env: BTreeMap::new(),
            fixture: vec![FixtureEntry::File {
                path: "/work/p/.mcp.json".into(),
                content: FileContent::Text("{}".into()),
                mode: None,
            }],
            expect: Expectations {
                exit_code: 0,
                ..Default::default()
            },
            fault: None,
            deadline_ms: None,
        }
    }

    fn walk_of(case: &Case) -> Vec<FixtureObservation> {
        let mut obs: Vec<FixtureObservation> = case
            .fixture
            .iter()
            .map(|e| expected_observation(e).unwrap())
            .collect();
        obs.push(FixtureObservation {
            path: "/work/p".into(),
            kind: "dir".into(),
            mode: "0755".into(),
            size: 4096,
            sha256: None,
        });
        obs.sort();
        obs
    }

    fn record(case: &Case, stdout: &[u8], stderr: &[u8]) -> CaseRecord {
        let walk = walk_of(case);
        CaseRecord {
            id: case.id.clone(),
            argv: vec![],
            cwd: "/work".into(),
            env: expected_env(case)
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
            exit_code: Some(0),
            signal: None,
            timed_out: false,
            duration_micros: 1,
            stdout_sha256: sha256_hex(stdout),
            stderr_sha256: sha256_hex(stderr),
            fixtures_before: walk.clone(),
            fixtures_after: walk,
            fixtures_after_problems: vec![],
            marker_present: false,
            verdict: Verdict {
                pass: true,
                failures: vec![],
            },
            written: vec![],
        }
    }

    fn failures_of(case: &Case, stdout: &[u8], stderr: &[u8], rec: &CaseRecord) -> Vec<String> {
        let m = matrix(vec![case.clone()]);
        let v = judge(&m, case, stdout, stderr, rec);
        assert_eq!(v.pass, v.failures.is_empty());
        v.failures
    }

    #[test]
    fn a_clean_case_passes() {
        let c = case();
        let r = record(&c, b"out", b"");
        assert_eq!(failures_of(&c, b"out", b"", &r), Vec::<String>::new());
    }

    #[test]
    fn record_for_another_case_fails() {
        let c = case();
        let mut r = record(&c, b"", b"");
        r.id = "other".into();
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec!["record is for case \"other\", expected \"present\""]
        );
    }

    #[test]
    fn timeout_and_signal_fail() {
        let c = case();
        let mut r = record(&c, b"", b"");
        r.timed_out = true;
        r.signal = Some(9);
        r.exit_code = None;
        let f = failures_of(&c, b"", b"", &r);
        assert!(f.contains(&"candidate timed out and was killed".to_string()));
        assert!(f.contains(&"candidate killed by signal 9".to_string()));
        assert!(f.contains(&"no exit code, expected 0".to_string()));
    }

    #[test]
    fn marker_present_fails() {
        let c = case();
        let mut r = record(&c, b"", b"");
        r.marker_present = true;
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "sentinel marker /tmp/scopebox-sentinel/fired present: a configured command was executed"
            ]
        );
    }

    #[test]
    fn an_incomplete_walk_after_fails_with_its_problems_and_does_not_call_unseen_paths_removed() {
        let c = case();
        let mut r = record(&c, b"", b"");
        assert_eq!(failures_of(&c, b"", b"", &r), Vec::<String>::new());
        // The walk stopped before it reached /work/p/.mcp.json (a tree too deep beside it).
        r.fixtures_after.retain(|o| o.path != "/work/p/.mcp.json");
        r.fixtures_after_problems =
            vec!["/work/d/d: deeper than 64 levels below its fixture root".into()];
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "fixture walk after the run: /work/d/d: deeper than 64 levels below its fixture root",
                "fixture /work/p/.mcp.json not seen after the run",
            ]
        );
        // A problem fails the case by itself, even when everything the walk saw is unchanged.
        let mut r = record(&c, b"", b"");
        r.fixtures_after_problems = vec!["fixture root /work: mode 1777 -> 0000".into()];
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec!["fixture walk after the run: fixture root /work: mode 1777 -> 0000"]
        );
    }

    #[test]
    fn fixture_changes_are_named_by_path() {
        let c = case();
        let mut r = record(&c, b"", b"");
        let file = r
            .fixtures_after
            .iter_mut()
            .find(|o| o.path == "/work/p/.mcp.json")
            .unwrap();
        file.mode = "0600".into();
        file.sha256 = Some(sha256_hex(b"{ }"));
        file.size = 3;
        r.fixtures_after.push(FixtureObservation {
            path: "/work/p/new".into(),
            kind: "file".into(),
            mode: "0644".into(),
            size: 0,
            sha256: Some(sha256_hex(b"")),
        });
        r.fixtures_after.retain(|o| o.path != "/work/p");
        let f = failures_of(&c, b"", b"", &r);
        assert_eq!(
            f,
            vec![
                "fixture /work/p removed",
                "fixture /work/p/.mcp.json changed (mode 0644 -> 0600, size 2 -> 3, content)",
                "fixture /work/p/new added",
            ]
        );
    }

    #[test]
    fn fixture_not_laid_out_as_declared_fails() {
        let c = case();
        let mut r = record(&c, b"", b"");
        for walk in [&mut r.fixtures_before, &mut r.fixtures_after] {
            let file = walk
                .iter_mut()
                .find(|o| o.path == "/work/p/.mcp.json")
                .unwrap();
            file.sha256 = Some(sha256_hex(b"[]"));
        }
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec!["fixture /work/p/.mcp.json not laid out as declared (saw file 0644 2 bytes)"]
        );
    }

    #[test]
    fn missing_and_undeclared_fixture_paths_fail() {
        let c = case();
        let mut r = record(&c, b"", b"");
        let stray = FixtureObservation {
            path: "/home/node/.claude.json".into(),
            kind: "file".into(),
            mode: "0644".into(),
            size: 0,
            sha256: Some(sha256_hex(b"")),
        };
        for walk in [&mut r.fixtures_before, &mut r.fixtures_after] {
            walk.retain(|o| o.path != "/work/p/.mcp.json");
            walk.push(stray.clone());
            walk.sort();
        }
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "fixture /work/p/.mcp.json was not laid out",
                "fixture /home/node/.claude.json present but not declared",
            ]
        );
    }

    fn behaved() -> Controls {
        Controls {
            positive: PositiveControl {
                marker_present_before: false,
                sentinel_exit_code: Some(0),
                marker_appeared: true,
                marker_removed: true,
            },
            negative: NegativeControl {
                commands_executed: 1,
                marker_appeared: true,
                caught: true,
                marker_removed: true,
            },
            adversarial: ADVERSARIAL_CONTROLS
                .iter()
                .map(|name| AdversarialControl {
                    name: name.to_string(),
                    expected: adversarial_expected(name).unwrap().to_string(),
                    caught: true,
                    failures: vec![format!("{} …", adversarial_expected(name).unwrap())],
                })
                .collect(),
        }
    }

    #[test]
    fn an_adversarial_control_not_caught_missing_or_mislabelled_fails() {
        let mut c = behaved();
        c.adversarial[0].failures = vec!["canary X in stdout".into()];
        c.adversarial[1].expected = "canary ".into();
        c.adversarial[1].failures = vec!["canary X in stdout".into()];
        c.adversarial.pop();
        let f = control_failures(&c);
        assert_eq!(f.len(), 3, "{f:?}");
        assert!(f[0].starts_with("adversarial controls are "));
        assert!(f[1].starts_with("adversarial control exec-delete-marker: not caught"));
        assert!(f[2].starts_with("adversarial control exec-redirected-marker: expects"));
    }

    fn env_case(env: &[(&str, &str)]) -> Case {
        let mut case: Case = serde_json::from_str(
            r#"{"id":"e","client":"claude-code","description":"","args":[],"expect":{"exitCode":0}}"#,
        )
        .unwrap();
        case.env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        case
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_canary_is_found_raw_and_base64_encoded_at_every_alignment() {
        let canary = "CANARY-B64-1";
        let search = canary::CanarySearch::new(&[canary.to_string()]);
        let canary_in = |haystack: &[u8], _: &str| !search.find(haystack).is_empty();
        assert!(canary_in(b"x CANARY-B64-1 y", canary));
        // base64 of the canary behind 0, 1 and 2 bytes of prefix.
        for encoded in [
            "Q0FOQVJZLUI2NC0x",
            "eENBTkFSWS1CNjQtMQ==",
            "eHhDQU5BUlktQjY0LTE=",
        ] {
            assert!(canary_in(encoded.as_bytes(), canary), "{encoded}");
        }
        assert!(!canary_in(b"Q0FOQVJZ", canary));
        assert!(!canary_in(b"nothing here", canary));
    }

    #[test]
    fn the_environment_must_be_the_matrixs_exactly() {
        let case = env_case(&[("XDG_CONFIG_HOME", "/home/node/.config"), ("LANG", "C")]);
        let exact = strings(&[
            "HOME=/home/node",
            "LANG=C",
            "PATH=/scopebox/bin",
            "XDG_CONFIG_HOME=/home/node/.config",
        ]);
        assert_eq!(environment_failures(&case, &exact), Vec::<String>::new());

        let mut extra = exact.clone();
        extra.push("LD_PRELOAD=/tmp/x.so".into());
        extra.push("SCOPEBOX_SENTINEL_MARKER=/tmp/y".into());
        assert_eq!(
            environment_failures(&case, &extra),
            [
                "environment has an extra \"LD_PRELOAD\"",
                "environment has an extra \"SCOPEBOX_SENTINEL_MARKER\""
            ]
        );

        let mut twice = exact.clone();
        twice.push("HOME=/home/node".into());
        assert_eq!(
            environment_failures(&case, &twice),
            ["environment has \"HOME\" 2 times"]
        );

        let mut reordered = exact.clone();
        reordered.swap(0, 1);
        assert_eq!(
            environment_failures(&case, &reordered),
            ["environment is not in the matrix's order"]
        );

        let changed = strings(&["HOME=/tmp", "LANG=C", "PATH=/scopebox/bin"]);
        assert_eq!(
            environment_failures(&case, &changed),
            [
                "environment HOME is \"/tmp\", expected \"/home/node\"",
                "environment lacks \"XDG_CONFIG_HOME\""
            ]
        );
    }

    #[test]
    fn controls_that_behaved_have_no_failures() {
        assert_eq!(control_failures(&behaved()), Vec::<String>::new());
    }

    #[test]
    fn each_misbehaving_control_flag_is_named_under_its_control() {
        let mut c = behaved();
        c.positive = PositiveControl {
            marker_present_before: true,
            sentinel_exit_code: Some(1),
            marker_appeared: false,
            marker_removed: false,
        };
        c.negative = NegativeControl {
            commands_executed: 0,
            marker_appeared: false,
            caught: false,
            marker_removed: false,
        };
        assert_eq!(
            control_failures(&c),
            [
                "positive control: the marker was present before the sentinel ran",
                "positive control: the sentinel exited with code 1, expected exit code 0",
                "positive control: the marker did not appear when the sentinel ran",
                "positive control: the marker was not removed after the control",
                "negative control: the reference host executed no configured command",
                "negative control: the marker did not appear under the reference host",
                "negative control: the invariant check did not catch the reference host",
                "negative control: the marker was not removed after the negative control",
            ]
        );
        // A sentinel that could not be started has no exit code: that fails too.
        let mut c = behaved();
        c.positive.sentinel_exit_code = None;
        assert_eq!(
            positive_control_failures(&c.positive),
            ["the sentinel did not exit (no exit code), expected exit code 0"]
        );
        assert!(negative_control_failures(&c.negative).is_empty());
    }

    #[test]
    fn canaries_in_either_stream_fail() {
        let c = case();
        let out = b"x CANARY-CMD-7f3a y";
        let err = b"CANARY-ENV-1";
        let r = record(&c, out, err);
        assert_eq!(
            failures_of(&c, out, err, &r),
            vec![
                "canary CANARY-CMD-7f3a in stdout",
                "canary CANARY-ENV-1 in stderr"
            ]
        );
        // A prefix of a canary is not the canary.
        let r = record(&c, b"CANARY-CMD-7f3", b"");
        assert!(failures_of(&c, b"CANARY-CMD-7f3", b"", &r).is_empty());
    }

    #[test]
    fn an_encoded_canary_smuggled_in_an_extra_json_field_fails() {
        let c = case();
        // base64 of "pid=7 CANARY-CMD-7f3a" (the canary at an odd alignment) and the hex of
        // the other canary, as a hostile candidate would tuck them into its report.
        let out = br#"{"schemaVersion":1,"extra":"cGlkPTcgQ0FOQVJZLUNNRC03ZjNh","x":"43414e4152592d454e562d31"}"#;
        let r = record(&c, out, b"");
        assert_eq!(
            failures_of(&c, out, b"", &r),
            vec![
                "canary CANARY-CMD-7f3a in stdout (base64)",
                "canary CANARY-ENV-1 in stdout (hex)"
            ]
        );
    }

    #[test]
    fn a_canary_spelled_as_an_added_file_name_fails() {
        let c = case();
        let mut r = record(&c, b"", b"");
        r.fixtures_after.push(FixtureObservation {
            path: "/work/p/Q0FOQVJZLUNNRC03ZjNh".into(),
            kind: "file".into(),
            mode: "0644".into(),
            size: 0,
            sha256: Some(sha256_hex(b"")),
        });
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "fixture /work/p/Q0FOQVJZLUNNRC03ZjNh added",
                "canary CANARY-CMD-7f3a in the name of fixture /work/p/Q0FOQVJZLUNNRC03ZjNh (base64)"
            ]
        );
    }

    fn written(path: &str, content: &[u8]) -> crate::evidence::WrittenFile {
        crate::evidence::WrittenFile {
            path: path.into(),
            size: content.len() as u64,
            sha256: sha256_hex(content),
            content_base64: encode_base64(content),
            truncated: false,
        }
    }

    #[test]
    fn a_file_left_in_tmp_fails_and_its_canaries_are_found_in_any_encoding() {
        let c = case();
        let mut r = record(&c, b"", b"");
        r.written = vec![
            written("/tmp/leak", b"pid=7 Q0FOQVJZLUNNRC03ZjNh\n"),
            written(
                "/work/p/.mcp.json",
                "CANARY-ENV-1"
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes)
                    .collect::<Vec<u8>>()
                    .as_slice(),
            ),
        ];
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "file /tmp/leak written outside the fixture roots",
                "canary CANARY-CMD-7f3a in file /tmp/leak (base64)",
                "canary CANARY-ENV-1 in file /work/p/.mcp.json (utf-16le)",
            ]
        );
        // A written file below a fixture root without a canary adds nothing here: the walk
        // reports it (`fixture … changed`/`added`).
        r.written = vec![written("/work/p/notes", b"nothing")];
        assert!(failures_of(&c, b"", b"", &r).is_empty());
    }

    #[test]
    fn written_content_must_be_what_the_record_says() {
        let c = case();
        let mut r = record(&c, b"", b"");
        let mut forged = written("/work/p/x", b"honest");
        forged.content_base64 = encode_base64(b"other!");
        let mut bad = written("/work/p/y", b"");
        bad.content_base64 = "%%%%".into();
        let mut cut = written("/work/p/z", b"CANARY-ENV-1 and more");
        cut.content_base64 = encode_base64(b"CANARY-ENV-1");
        cut.truncated = true;
        r.written = vec![forged, bad, cut];
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "written file /work/p/x: content does not match its recorded size and sha256",
                "written file /work/p/y: content is not base64 (base64 has a character outside the alphabet)",
                "canary CANARY-ENV-1 in file /work/p/z",
            ]
        );
    }

    #[test]
    fn base64_round_trips() {
        for bytes in [&b""[..], b"f", b"fo", b"foo", b"foob", b"\xff\x00\xfe\x01"] {
            assert_eq!(decode_base64(&encode_base64(bytes)).unwrap(), bytes);
        }
        assert_eq!(encode_base64(b"fo"), "Zm8=");
    }

    #[test]
    fn captures_must_match_recorded_digests() {
        let c = case();
        let r = record(&c, b"one", b"two");
        assert_eq!(
            failures_of(&c, b"ONE", b"TWO", &r),
            vec![
                "stdout does not match its recorded sha256",
                "stderr does not match its recorded sha256"
            ]
        );
    }

    #[test]
    fn exit_code_mismatch_fails() {
        let mut c = case();
        c.expect.exit_code = 1;
        let r = record(&c, b"", b"");
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec!["exit code 0, expected 1"]
        );
    }

    fn json_case(facts: Vec<JsonFact>) -> Case {
        let mut c = case();
        c.expect.json = facts;
        c
    }

    fn fact(pointer: &str) -> JsonFact {
        JsonFact {
            pointer: pointer.into(),
            equals: None,
            length: None,
            absent: None,
        }
    }

    const DOC: &[u8] = br#"{"schemaVersion":1,"sources":[{"scope":"local"},{"scope":"project"}],"client":"claude-code"}
"#;

    #[test]
    fn json_equals_passes_and_fails() {
        let ok = json_case(vec![JsonFact {
            equals: Some(json!("project")),
            ..fact("/sources/1/scope")
        }]);
        let r = record(&ok, DOC, b"");
        assert!(failures_of(&ok, DOC, b"", &r).is_empty());
        let bad = json_case(vec![JsonFact {
            equals: Some(json!(2)),
            ..fact("/schemaVersion")
        }]);
        assert_eq!(
            failures_of(&bad, DOC, b"", &r),
            vec!["json /schemaVersion is 1, expected 2"]
        );
        let missing = json_case(vec![JsonFact {
            equals: Some(json!("x")),
            ..fact("/sources/7/scope")
        }]);
        assert_eq!(
            failures_of(&missing, DOC, b"", &r),
            vec!["json /sources/7/scope is absent"]
        );
    }

    #[test]
    fn json_equals_null_needs_a_null_value() {
        let doc = br#"{"reason":null,"state":"present"}"#;
        let r = record(&case(), doc, b"");
        let c: Case = json_case(vec![serde_json::from_str(
            r#"{"pointer":"/reason","equals":null}"#,
        )
        .unwrap()]);
        assert!(failures_of(&c, doc, b"", &r).is_empty());
        let c: Case = json_case(vec![serde_json::from_str(
            r#"{"pointer":"/state","equals":null}"#,
        )
        .unwrap()]);
        assert_eq!(
            failures_of(&c, doc, b"", &r),
            vec!["json /state is \"present\", expected null"]
        );
        let c: Case = json_case(vec![serde_json::from_str(
            r#"{"pointer":"/nope","equals":null}"#,
        )
        .unwrap()]);
        assert_eq!(failures_of(&c, doc, b"", &r), vec!["json /nope is absent"]);
    }

    #[test]
    fn json_length_passes_and_fails() {
        let r = record(&case(), DOC, b"");
        let ok = json_case(vec![JsonFact {
            length: Some(2),
            ..fact("/sources")
        }]);
        assert!(failures_of(&ok, DOC, b"", &r).is_empty());
        let bad = json_case(vec![JsonFact {
            length: Some(3),
            ..fact("/sources")
        }]);
        assert_eq!(
            failures_of(&bad, DOC, b"", &r),
            vec!["json /sources has length 2, expected 3"]
        );
        let scalar = json_case(vec![JsonFact {
            length: Some(1),
            ..fact("/client")
        }]);
        assert_eq!(
            failures_of(&scalar, DOC, b"", &r),
            vec!["json /client is \"claude-code\", expected an array or object of length 1"]
        );
    }

    #[test]
    fn json_absent_passes_and_fails() {
        let r = record(&case(), DOC, b"");
        let ok = json_case(vec![
            JsonFact {
                absent: Some(true),
                ..fact("/sources/2")
            },
            JsonFact {
                absent: Some(false),
                ..fact("/sources/1")
            },
        ]);
        assert!(failures_of(&ok, DOC, b"", &r).is_empty());
        let bad = json_case(vec![
            JsonFact {
                absent: Some(true),
                ..fact("/client")
            },
            JsonFact {
                absent: Some(false),
                ..fact("/servers")
            },
        ]);
        assert_eq!(
            failures_of(&bad, DOC, b"", &r),
            vec![
                "json /client is \"claude-code\", expected absent",
                "json /servers is absent, expected present"
            ]
        );
    }

    #[test]
    fn stdout_must_be_exactly_one_json_document() {
        let c = json_case(vec![JsonFact {
            absent: Some(false),
            ..fact("")
        }]);
        for bad in [&b"{} {}"[..], b"not json", b""] {
            let r = record(&c, bad, b"");
            assert_eq!(
                failures_of(&c, bad, b"", &r),
                vec!["stdout is not one JSON document"],
                "{bad:?}"
            );
        }
        let r = record(&c, b" {}\n", b"");
        assert!(failures_of(&c, b" {}\n", b"", &r).is_empty());
    }

    #[test]
    fn text_facts_pass_and_fail() {
        let mut c = case();
        c.expect.stdout_contains = vec!["local".into()];
        c.expect.stdout_not_contains = vec!["secret".into()];
        c.expect.stderr_contains = vec!["error:".into()];
        let r = record(&c, b"local ok", b"error: x");
        assert!(failures_of(&c, b"local ok", b"error: x", &r).is_empty());
        let r = record(&c, b"a secret", b"warn");
        assert_eq!(
            failures_of(&c, b"a secret", b"warn", &r),
            vec![
                "stdout does not contain \"local\"",
                "stdout contains \"secret\"",
                "stderr does not contain \"error:\""
            ]
        );
    }

    #[test]
    fn emptiness_facts_pass_and_fail() {
        let mut c = case();
        c.expect.stdout_empty = Some(true);
        c.expect.stderr_empty = Some(false);
        let r = record(&c, b"", b"usage");
        assert!(failures_of(&c, b"", b"usage", &r).is_empty());
        let r = record(&c, b"xy", b"");
        assert_eq!(
            failures_of(&c, b"xy", b"", &r),
            vec!["stdout is not empty (2 bytes)", "stderr is empty"]
        );
    }

    #[test]
    fn file_bytes_cover_each_form() {
        assert_eq!(
            file_bytes(&FileContent::Text("hé".into())).unwrap(),
            "hé".as_bytes()
        );
        assert_eq!(
            file_bytes(&FileContent::Base64("77u/e30=".into())).unwrap(),
            b"\xef\xbb\xbf{}"
        );
        let fill = file_bytes(&FileContent::Fill {
            prefix: "{".into(),
            byte: b' ',
            size: 1_048_577,
        })
        .unwrap();
        assert_eq!(fill.len(), 1_048_577);
        assert_eq!(&fill[..2], b"{ ");
        assert!(file_bytes(&FileContent::Fill {
            prefix: "abc".into(),
            byte: 0,
            size: 2
        })
        .is_err());
        assert!(file_bytes(&FileContent::Fill {
            prefix: String::new(),
            byte: 0,
            size: MAX_FILL_SIZE + 1
        })
        .is_err());
    }

    #[test]
    fn base64_decodes_and_refuses_bad_input() {
        assert_eq!(decode_base64("").unwrap(), b"");
        assert_eq!(decode_base64("Zg==").unwrap(), b"f");
        assert_eq!(decode_base64("Zm8=").unwrap(), b"fo");
        assert_eq!(decode_base64("Zm9v").unwrap(), b"foo");
        assert_eq!(decode_base64("/+8A").unwrap(), [0xff, 0xef, 0x00]);
        for bad in ["Zg=", "Z===", "Zg==Zg==", "Zm9v!A==", "Zm 9"] {
            assert!(decode_base64(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn modes_parse_as_octal_permission_bits() {
        assert_eq!(parse_mode("0644").unwrap(), 0o644);
        assert_eq!(parse_mode("0").unwrap(), 0);
        assert_eq!(parse_mode("755").unwrap(), 0o755);
        for bad in ["", "0888", "rw-", "00644", "4755", "-1"] {
            assert!(parse_mode(bad).is_err(), "{bad}");
        }
        assert_eq!(format_mode(0o640), "0640");
    }

    #[test]
    fn a_good_matrix_validates() {
        let mut c = case();
        c.fault = Some(Fault::Stall);
        c.fixture.push(FixtureEntry::Symlink {
            path: "/home/node/link".into(),
            target: "/work/p".into(),
        });
        c.expect.json.push(JsonFact {
            length: Some(1),
            ..fact("/servers")
        });
        assert_eq!(validate_matrix(&matrix(vec![c])), Ok(()));
    }

    #[test]
    fn matrix_level_problems_are_each_named() {
        let mut m = matrix(vec![case(), case()]);
        m.schema_version = 2;
        m.canaries.push(String::new());
        m.canaries.push("CANARY-ENV-1".into());
        let problems = validate_matrix(&m).unwrap_err();
        assert_eq!(
            problems,
            vec![
                "schemaVersion is 2, expected 1",
                "canaries[2] is empty",
                "canary \"CANARY-ENV-1\" is listed twice",
                "case present: id is not unique",
            ]
        );
        let empty = Matrix {
            cases: vec![],
            ..matrix(vec![])
        };
        assert_eq!(
            validate_matrix(&empty).unwrap_err(),
            vec!["matrix has no cases"]
        );
    }

    #[test]
    fn case_level_problems_are_each_named() {
        let mut c = case();
        c.id = "Bad_Id".into();
        c.client = "kursor".into();
        c.cwd = Some("work".into());
        c.env.insert("SCOPEBOX_SENTINEL_MARKER".into(), "/x".into());
        c.env.insert("A=B".into(), "x".into());
        c.deadline_ms = Some(0);
        c.fixture = vec![
            FixtureEntry::File {
                path: "/tmp/x".into(),
                content: FileContent::Text(String::new()),
                mode: None,
            },
            FixtureEntry::File {
                path: "/work/../etc/x".into(),
                content: FileContent::Text(String::new()),
                mode: None,
            },
            FixtureEntry::Dir {
                path: "/work".into(),
                mode: None,
            },
            FixtureEntry::File {
                path: "/work/f".into(),
                content: FileContent::Base64("%%".into()),
                mode: Some("999".into()),
            },
            FixtureEntry::File {
                path: "/work/f".into(),
                content: FileContent::Text(String::new()),
                mode: None,
            },
            FixtureEntry::Symlink {
                path: "/work/l".into(),
                target: "/work/d".into(),
            },
            FixtureEntry::File {
                path: "/work/l/x".into(),
                content: FileContent::Text(String::new()),
                mode: None,
            },
            FixtureEntry::Fifo {
                path: "/work/f/under".into(),
                mode: None,
            },
        ];
        c.expect.json = vec![
            JsonFact {
                equals: Some(json!(1)),
                length: Some(1),
                ..fact("/a")
            },
            fact("/b"),
            JsonFact {
                absent: Some(true),
                ..fact("c")
            },
        ];
        let problems = validate_matrix(&matrix(vec![c])).unwrap_err();
        let expected = [
            "case Bad_Id: id \"Bad_Id\" does not match [a-z0-9-]+",
            &format!(
                "case Bad_Id: client \"kursor\" is not one of {}",
                crate::shipped::clients().join(", ")
            ),
            "case Bad_Id: cwd \"work\" is not an absolute path",
            "case Bad_Id: env \"A=B\" is not a valid variable",
            "case Bad_Id: env \"SCOPEBOX_SENTINEL_MARKER\" is reserved for the harness (SCOPEBOX_*)",
            "case Bad_Id: deadlineMs must be positive",
            "case Bad_Id: fixture path \"/tmp/x\" is not below a fixture root (/work, /home/node, /etc/claude-code, /etc/codex, /etc/gemini-cli)",
            "case Bad_Id: fixture path \"/work/../etc/x\" is not normalized (empty, . or .. component)",
            "case Bad_Id: fixture path \"/work\" is not below a fixture root (/work, /home/node, /etc/claude-code, /etc/codex, /etc/gemini-cli)",
            "case Bad_Id: fixture /work/f: base64 length is not a multiple of 4",
            "case Bad_Id: fixture /work/f: mode \"999\" is not 1-4 octal digits",
            "case Bad_Id: fixture path /work/f is declared twice",
            "case Bad_Id: fixture path /work/l/x lies below the symlink /work/l; declare the real path",
            "case Bad_Id: fixture path /work/f/under lies below the non-directory /work/f",
            "case Bad_Id: json fact \"/a\" sets 2 checks, expected exactly one of equals, length, absent",
            "case Bad_Id: json fact \"/b\" sets 0 checks, expected exactly one of equals, length, absent",
            "case Bad_Id: json pointer \"c\" must be empty or start with /",
        ];
        assert_eq!(problems, expected);
    }

    fn fill(path: &str, size: u64) -> FixtureEntry {
        FixtureEntry::File {
            path: path.into(),
            content: FileContent::Fill {
                prefix: "{".into(),
                byte: b' ',
                size,
            },
            mode: None,
        }
    }

    #[test]
    fn a_fill_is_sized_and_hashed_without_being_materialized() {
        let content = FileContent::Fill {
            prefix: "{ ".into(),
            byte: b'x',
            size: 200_000,
        };
        assert_eq!(file_size(&content).unwrap(), 200_000);
        let bytes = file_bytes(&content).unwrap();
        assert_eq!(file_sha256(&content).unwrap(), sha256_hex(&bytes));
        let too_big = FileContent::Fill {
            prefix: String::new(),
            byte: 0,
            size: MAX_FILL_SIZE + 1,
        };
        assert!(file_size(&too_big).is_err());
        assert!(file_sha256(&too_big).is_err());
    }

    #[test]
    fn a_laid_out_fill_one_byte_off_is_caught_though_its_bytes_were_remembered() {
        // The runner's walk remembers what it read (`sha256_hex_remembered`); the judge may
        // take a fill's digest from there only when those bytes are exactly the fill.
        let size = 3 * crate::digest::REMEMBER_MIN_BYTES as u64 + 1;
        let entry = FixtureEntry::File {
            path: "/work/proj/.mcp.json".into(),
            content: FileContent::Fill {
                prefix: "{\"remembered-fill\":".into(),
                byte: b' ',
                size,
            },
            mode: None,
        };
        let FixtureEntry::File { content, .. } = &entry else {
            unreachable!()
        };
        let observed = |bytes: &[u8]| FixtureObservation {
            path: "/work/proj/.mcp.json".into(),
            kind: "file".into(),
            mode: format_mode(DEFAULT_FILE_MODE),
            size: bytes.len() as u64,
            sha256: Some(crate::digest::sha256_hex_remembered(bytes)),
        };
        let mut one_off = file_bytes(content).unwrap();
        *one_off.last_mut().unwrap() = b'}';
        let failures = layout_failures(std::slice::from_ref(&entry), &[observed(&one_off)]);
        assert_eq!(
            failures,
            ["fixture /work/proj/.mcp.json not laid out as declared (saw file 0644 196609 bytes)"]
        );
        let exact = file_bytes(content).unwrap();
        assert!(layout_failures(std::slice::from_ref(&entry), &[observed(&exact)]).is_empty());
    }

    #[test]
    fn matrix_bounds_are_counted_before_validation() {
        let mut many_entries = case();
        many_entries.fixture = (0..bounds::MAX_FIXTURE_ENTRIES + 1)
            .map(|i| FixtureEntry::Dir {
                path: format!("/work/d{i}"),
                mode: None,
            })
            .collect();
        let mut fills = case();
        fills.id = "fills".into();
        // Five 16 MiB fills: 80 MiB in one case, more than any fixture tmpfs holds.
        fills.fixture = (0..5)
            .map(|i| fill(&format!("/work/f{i}"), MAX_FILL_SIZE))
            .collect();
        let m = matrix(vec![many_entries, fills]);
        let failures = matrix_bound_failures(&m);
        assert_eq!(failures.len(), 3, "{failures:?}");
        assert!(failures[0].contains("4097 fixture entries, more than"));
        assert!(failures[1].contains("4097 fixture nodes (parents included), more than 4096"));
        assert!(failures[2].contains("fill files of 83886080 bytes"));
        assert_eq!(validate_matrix(&m).unwrap_err(), failures);
        assert!(matrix_bound_failures(&matrix(vec![case()])).is_empty());
    }

    /// The declared tree, implied parents included, must fit in half of what a walk records,
    /// so the walk before the run is always whole.
    #[test]
    fn the_declared_tree_is_bounded_by_half_the_walk() {
        let dir = |path: String| FixtureEntry::Dir { path, mode: None };
        let bound = |fixture: Vec<FixtureEntry>| {
            let mut c = case();
            c.fixture = fixture;
            matrix_bound_failures(&matrix(vec![c]))
        };
        // Depth: 32 levels below /work is the most; parents count as nodes.
        let deep = |levels: usize| format!("/work{}", "/d".repeat(levels));
        assert!(bound(vec![dir(deep(bounds::MAX_FIXTURE_DEPTH))]).is_empty());
        assert_eq!(
            bound(vec![dir(deep(bounds::MAX_FIXTURE_DEPTH + 1))]),
            ["case present: 33 levels of fixture below its root, more than 32"]
        );
        // Nodes: 2,048 entries two levels down imply 2,048 parents, 4,096 nodes in all.
        let pairs = |n: usize| (0..n).map(|i| dir(format!("/work/p{i}/c"))).collect();
        assert!(bound(pairs(2_048)).is_empty());
        assert_eq!(
            bound(pairs(2_049)),
            ["case present: 4098 fixture nodes (parents included), more than 4096"]
        );
        // Path text: paths of 1,011 bytes; 1,037 of them are within 1 MiB, 1,038 are not.
        let long = |i: usize| dir(format!("/home/node/{i:04}{}", "x".repeat(996)));
        assert!(bound((0..1_037).map(long).collect()).is_empty());
        let failures = bound((0..1_038).map(long).collect());
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].ends_with("bytes of fixture paths, more than 1048576"));
        // Paths below no root are left to validation, not counted.
        assert!(bound(vec![dir(format!("/elsewhere{}", "/d".repeat(40)))]).is_empty());
    }

    #[test]
    fn entries_below_symlinks_and_files_are_found_through_their_ancestors() {
        let mut c = case();
        c.fixture = vec![
            FixtureEntry::Symlink {
                path: "/work/link".into(),
                target: "/etc".into(),
            },
            fill("/work/file", 10),
            FixtureEntry::Dir {
                path: "/work/link/a/b".into(),
                mode: None,
            },
            FixtureEntry::Dir {
                path: "/work/file/x".into(),
                mode: None,
            },
        ];
        let problems = validate_matrix(&matrix(vec![c])).unwrap_err();
        assert_eq!(
            problems,
            [
                "case present: fixture path /work/link/a/b lies below the symlink /work/link; declare the real path",
                "case present: fixture path /work/file/x lies below the non-directory /work/file",
            ]
        );
    }
}
