//! The two controls that make "the sentinel marker stayed absent" mean something.
//! Positive: the runner executes the sentinel itself and the marker must appear (detection works
//! inside this boundary), then it is removed. Negative: a stand-in reference host that, like
//! `claude mcp list`, executes every configured server command runs over a fixture whose server
//! command is the sentinel; the very invariant check used for cases (`judge::invariants`) must
//! flag it. Both clean up after themselves (marker removed, fixture roots cleared). Each returns
//! what it observed as a raw record (`controls/{positive,negative}/record.json`, plus the
//! reference host's output), and the control flags are derived from those records with
//! `judge::positive_control` / `judge::negative_control` — the functions the verifier replays.
//! The records name no command but the sentinel and its control argument. This module must
//! never run the candidate, and the reference host must never run anything but commands from
//! its own control fixture.

use crate::case::{marker_present, remove_marker, run_under, CaseOutcome};
use crate::watch::Watch;
use crate::{fixture, written, HarnessError, IoContext, Layout};
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::evidence::AdversarialControl;
use scopebox_schema::evidence::{
    CaseRecord, ExecutedCommand, NegativeControl, NegativeControlRecord, PositiveControlRecord,
    Verdict, ADVERSARIAL_CONTROLS, MARKER_TEXT_LIMIT,
};
use scopebox_schema::judge;
use scopebox_schema::matrix::{FixtureEntry, Matrix};
use scopebox_schema::witness::WitnessRecord;
use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Where the negative control's project lives (matrix spelling).
pub const NEGATIVE_CONTROL_ROOT: &str = judge::NEGATIVE_CONTROL_ROOT;
const CONTROL_DEADLINE: Duration = Duration::from_secs(10);

/// Runs the sentinel directly; it must leave its marker, which is then removed. Returns what
/// was observed; `judge::positive_control` derives the control from it.
/// Also returns the window's witness record (the sentinel's exec and its socket report).
pub fn positive(
    layout: &Layout,
    watch: &mut Watch,
) -> Result<(PositiveControlRecord, Option<WitnessRecord>), HarnessError> {
    let marker_present_before = marker_present(layout);
    let argv = judge::positive_control_argv(&layout.sentinel_bin.to_string_lossy());
    let mut cmd = Command::new(&layout.sentinel_bin);
    cmd.args(&argv[1..]).env_clear();
    let (captured, witness) = run_under(watch, cmd, CONTROL_DEADLINE)?;
    let captured = captured.ok();
    let marker_present_after = marker_present(layout);
    let marker_text = marker_text(layout);
    let removed = remove_marker(layout);
    let record = PositiveControlRecord {
        argv,
        marker_present_before,
        exit_code: captured.as_ref().and_then(|c| c.exit_code),
        signal: captured.as_ref().and_then(|c| c.signal),
        timed_out: captured.as_ref().is_some_and(|c| c.timed_out),
        marker_present_after,
        marker_text,
        marker_present_after_removal: !removed,
    };
    Ok((record, witness))
}

/// The control fixture: one project `.mcp.json` whose only server's command is the sentinel
/// (`judge::negative_control_fixture`, which the verifier rebuilds to check the walk).
pub fn negative_fixture(layout: &Layout) -> Vec<FixtureEntry> {
    judge::negative_control_fixture(&layout.sentinel_bin.to_string_lossy())
}

/// The negative control as it ran: the record to write, the reference host's raw output
/// beside it, and the control `judge::negative_control` derives from them.
#[derive(Debug, Clone)]
pub struct NegativeOutcome {
    pub record: NegativeControlRecord,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub control: NegativeControl,
    /// The witness record of the reference host's (first) command.
    pub witness: Option<WitnessRecord>,
}

/// Lays out the control fixture, runs the reference host over it, records the run like a case
/// and judges it with the case invariants, and cleans up. Harness I/O failures are errors; a
/// control that misbehaves is recorded (and fails the run), not raised.
pub fn negative(
    layout: &Layout,
    matrix: &Matrix,
    watch: &mut Watch,
) -> Result<NegativeOutcome, HarnessError> {
    fixture::clear(layout)?;
    fixture::lay_out(layout, &negative_fixture(layout))?;
    let before = fixture::walk(layout)?;
    let root = layout.host(NEGATIVE_CONTROL_ROOT);
    let started = std::time::Instant::now();
    let host = reference_host(&root, watch)?;
    let duration_micros = started.elapsed().as_micros() as u64;
    let after = fixture::walk(layout)?;
    let marker_appeared = marker_present(layout);
    let marker_text = marker_text(layout);
    let run = CaseRecord {
        id: judge::NEGATIVE_CONTROL_ID.into(),
        argv: judge::negative_control_argv(),
        cwd: NEGATIVE_CONTROL_ROOT.into(),
        env: Vec::new(),
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        duration_micros,
        stdout_sha256: sha256_hex(&host.stdout),
        stderr_sha256: sha256_hex(&host.stderr),
        fixtures_before: before,
        fixtures_after: after,
        fixtures_after_problems: Vec::new(),
        marker_present: marker_appeared,
        verdict: Verdict {
            pass: false,
            failures: Vec::new(),
        },
        written: Vec::new(),
    };
    let removed = remove_marker(layout);
    fixture::clear(layout)?;
    let mut record = NegativeControlRecord {
        run,
        executed: host.executed,
        marker_text,
        marker_present_after_removal: !removed,
    };
    let (control, verdict) = judge::negative_control(matrix, &record, &host.stdout, &host.stderr);
    record.run.verdict = verdict;
    Ok(NegativeOutcome {
        record,
        stdout: host.stdout,
        stderr: host.stderr,
        control,
        witness: host.witnesses.into_iter().next(),
    })
}

/// One adversarial control as it ran: its raw run (record, output, witness) and what
/// `judge::adversarial_control` derives from it.
#[derive(Debug, Clone)]
pub struct AdversarialOutcome {
    pub run: CaseOutcome,
    pub control: AdversarialControl,
}

/// Runs every hostile stand-in (`evidence::ADVERSARIAL_CONTROLS`, the runner re-executed as
/// `hostile <name> <sentinel>`) like a case over empty fixture roots, under the same witness,
/// and judges each with `judge::adversarial_control`. Cleans up the marker after each.
pub fn adversarial(
    layout: &Layout,
    matrix: &Matrix,
    watch: &mut Watch,
) -> Result<Vec<AdversarialOutcome>, HarnessError> {
    let mut outcomes = Vec::new();
    for name in ADVERSARIAL_CONTROLS {
        fixture::clear(layout)?;
        fixture::clear_scratch(layout)?;
        let before = fixture::walk_before(layout)?;
        let sentinel = layout.sentinel_bin.to_string_lossy().into_owned();
        let argv = vec![
            layout.runner_bin.to_string_lossy().into_owned(),
            "hostile".to_string(),
            name.to_string(),
            sentinel,
        ];
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .current_dir(layout.host("/work"))
            .env_clear();
        let scratch_before = written::scratch_listing(layout);
        let (captured, witness) = run_under(watch, cmd, CONTROL_DEADLINE)?;
        let captured =
            captured.unwrap_or_else(|e| crate::case::Captured::not_started("the stand-in", &e));
        let after = fixture::walk_after(layout, &before);
        let written = written::capture(layout, &before.nodes, &after.nodes, &scratch_before);
        let marker = marker_present(layout);
        remove_marker(layout);
        let record = CaseRecord {
            id: name.to_string(),
            argv,
            cwd: "/work".into(),
            env: Vec::new(),
            exit_code: captured.exit_code,
            signal: captured.signal,
            timed_out: captured.timed_out,
            duration_micros: captured.duration.as_micros() as u64,
            stdout_sha256: sha256_hex(&captured.stdout),
            stderr_sha256: sha256_hex(&captured.stderr),
            fixtures_before: before.nodes,
            fixtures_after: after.nodes,
            fixtures_after_problems: after.problems,
            marker_present: marker,
            verdict: Verdict {
                pass: false,
                failures: Vec::new(),
            },
            written,
        };
        let mut run = CaseOutcome {
            record,
            stdout: captured.stdout,
            stderr: captured.stderr,
            witness,
        };
        let control = match &run.witness {
            Some(w) => {
                judge::adversarial_control(name, matrix, &run.record, &run.stdout, &run.stderr, w)
            }
            // Unwatched: nothing can catch it, and the control says so.
            None => AdversarialControl {
                name: name.to_string(),
                expected: judge::adversarial_expected(name)
                    .unwrap_or_default()
                    .to_string(),
                caught: false,
                failures: vec!["no kernel witness watched this control".to_string()],
            },
        };
        run.record.verdict = Verdict {
            pass: control.failures.is_empty(),
            failures: control.failures.clone(),
        };
        outcomes.push(AdversarialOutcome { run, control });
    }
    fixture::clear(layout)?;
    Ok(outcomes)
}

/// The marker's text (lossy UTF-8, at most `MARKER_TEXT_LIMIT` bytes), if it can be read.
fn marker_text(layout: &Layout) -> Option<String> {
    let file = std::fs::File::open(&layout.sentinel_marker).ok()?;
    let mut bytes = Vec::new();
    file.take(MARKER_TEXT_LIMIT as u64)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// What the reference host did.
#[derive(Debug, Default)]
pub struct ReferenceRun {
    /// Each configured command it executed, in order, as configured.
    pub executed: Vec<ExecutedCommand>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The witness record of each command's window.
    pub witnesses: Vec<WitnessRecord>,
}

/// The stand-in for a real host's `mcp list`: reads `<root>/.mcp.json`, and for each server in
/// `mcpServers` with a string `command`, executes it with its string `args` (cwd = root,
/// environment cleared), under the control deadline and the witness. This is the behaviour
/// the candidate must never have.
pub fn reference_host(root: &Path, watch: &mut Watch) -> Result<ReferenceRun, HarnessError> {
    let path = root.join(".mcp.json");
    let bytes = std::fs::read(&path).at("read", &path)?;
    let config: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        HarnessError::new(
            "parse",
            &path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })?;
    let mut run = ReferenceRun::default();
    let Some(servers) = config.get("mcpServers").and_then(|s| s.as_object()) else {
        return Ok(run);
    };
    for server in servers.values() {
        let Some(command) = server.get("command").and_then(|c| c.as_str()) else {
            continue;
        };
        let args: Vec<String> = server
            .get("args")
            .and_then(|a| a.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let mut cmd = Command::new(command);
        cmd.args(&args).current_dir(root).env_clear();
        let (captured, witness) = run_under(watch, cmd, CONTROL_DEADLINE)?;
        run.witnesses.extend(witness);
        if let Ok(captured) = captured {
            run.executed.push(ExecutedCommand {
                program: command.to_string(),
                args,
                exit_code: captured.exit_code,
                signal: captured.signal,
                timed_out: captured.timed_out,
            });
            run.stdout.extend(captured.stdout);
            run.stderr.extend(captured.stderr);
        }
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use scopebox_schema::evidence::PositiveControl;

    fn matrix() -> Matrix {
        Matrix {
            schema_version: 1,
            name: "t".into(),
            canaries: vec!["CANARY-X".into()],
            cases: vec![],
        }
    }

    /// A layout whose "sentinel" is a shell script that writes the marker like the real one.
    fn layout_with_fake_sentinel(body: &str) -> (tempfile::TempDir, Layout) {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let sentinel = bin.join("fake-sentinel");
        let marker = d.path().join("tmp/scopebox-sentinel/fired");
        let body = body.replace("{marker}", &marker.to_string_lossy());
        std::fs::write(&sentinel, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&sentinel, std::fs::Permissions::from_mode(0o755)).unwrap();
        let l = Layout::rebased(d.path(), Path::new("/nonexistent"), &sentinel).unwrap();
        assert_eq!(l.sentinel_marker, marker);
        (d, l)
    }

    /// `{marker}` stands for the rebased layout's marker path.
    const FIRING: &str = "mkdir -p \"$(dirname {marker})\" && echo \"$@\" > {marker}";

    #[test]
    fn the_positive_control_sees_a_firing_sentinel() {
        let (_d, l) = layout_with_fake_sentinel(FIRING);
        let r = positive(&l, &mut Watch::Unwatched).unwrap().0;
        assert_eq!(r.argv[1], judge::POSITIVE_CONTROL_ARG);
        assert_eq!(r.marker_text.as_deref(), Some("positive-control\n"));
        assert!(r.marker_present_after && !r.marker_present_after_removal);
        let p = judge::positive_control(&r);
        assert_eq!(
            p,
            PositiveControl {
                marker_present_before: false,
                sentinel_exit_code: Some(0),
                marker_appeared: true,
                marker_removed: true,
            }
        );
        assert!(judge::positive_control_failures(&p).is_empty());
        assert!(!marker_present(&l));
    }

    #[test]
    fn the_positive_control_fails_with_a_silent_sentinel_or_a_stale_marker() {
        let (_d, l) = layout_with_fake_sentinel("exit 0");
        let r = positive(&l, &mut Watch::Unwatched).unwrap().0;
        assert!(!r.marker_present_after);
        assert_eq!(r.marker_text, None);
        assert!(!judge::positive_control_failures(&judge::positive_control(&r)).is_empty());

        let (_d, l) = layout_with_fake_sentinel(FIRING);
        std::fs::create_dir_all(l.sentinel_marker.parent().unwrap()).unwrap();
        std::fs::write(&l.sentinel_marker, "stale").unwrap();
        let r = positive(&l, &mut Watch::Unwatched).unwrap().0;
        assert!(r.marker_present_before);
        assert!(!judge::positive_control_failures(&judge::positive_control(&r)).is_empty());
    }

    #[test]
    fn the_negative_control_is_caught_and_cleaned_up() {
        let (_d, l) = layout_with_fake_sentinel(FIRING);
        let n = negative(&l, &matrix(), &mut Watch::Unwatched).unwrap();
        assert_eq!(
            n.control,
            NegativeControl {
                commands_executed: 1,
                marker_appeared: true,
                caught: true,
                marker_removed: true,
            }
        );
        assert!(judge::negative_control_failures(&n.control).is_empty());
        assert_eq!(fixture::walk(&l).unwrap(), vec![], "fixture roots cleared");
        assert!(!marker_present(&l));

        // The record is raw enough to re-judge: the walks show the control fixture, the marker
        // names the control's argument, and the invariants replayed on it give the same answer.
        let r = &n.record;
        let fixture = negative_fixture(&l);
        assert_eq!(
            judge::layout_failures(&fixture, &r.run.fixtures_before),
            Vec::<String>::new()
        );
        assert_eq!(r.run.fixtures_before, r.run.fixtures_after);
        assert_eq!(r.marker_text.as_deref(), Some("negative-control\n"));
        assert_eq!(
            r.executed,
            [ExecutedCommand {
                program: l.sentinel_bin.to_string_lossy().into_owned(),
                args: vec![judge::NEGATIVE_CONTROL_ARG.into()],
                exit_code: Some(0),
                signal: None,
                timed_out: false,
            }]
        );
        assert_eq!(r.run.verdict.failures, [judge::marker_failure()]);
        let (again, verdict) = judge::negative_control(&matrix(), r, &n.stdout, &n.stderr);
        assert_eq!(again, n.control);
        assert_eq!(verdict, r.run.verdict);
        // Output that does not match its digest cannot stand in for the host's.
        let (_, verdict) = judge::negative_control(&matrix(), r, b"other", &n.stderr);
        assert!(verdict.failures.len() > 1, "{verdict:?}");
    }

    #[test]
    fn a_reference_host_that_executes_nothing_is_not_caught() {
        // The command runs but never fires: the invariant check has nothing to catch, and the
        // control must say so rather than pretend.
        let (_d, l) = layout_with_fake_sentinel("exit 0");
        let n = negative(&l, &matrix(), &mut Watch::Unwatched).unwrap();
        assert_eq!(n.control.commands_executed, 1);
        assert!(!n.control.marker_appeared);
        assert!(!n.control.caught);
        assert!(!judge::negative_control_failures(&n.control).is_empty());
        assert!(n.record.run.verdict.pass, "{:?}", n.record.run.verdict);
    }

    #[test]
    fn the_reference_host_passes_configured_args() {
        let (_d, l) = layout_with_fake_sentinel(FIRING);
        fixture::clear(&l).unwrap();
        fixture::lay_out(&l, &negative_fixture(&l)).unwrap();
        let run = reference_host(&l.host(NEGATIVE_CONTROL_ROOT), &mut Watch::Unwatched).unwrap();
        assert_eq!(run.executed.len(), 1);
        assert_eq!(
            std::fs::read_to_string(&l.sentinel_marker).unwrap(),
            "negative-control\n"
        );
    }
}
