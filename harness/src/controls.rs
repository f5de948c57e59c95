//! The two controls that make "the sentinel marker stayed absent" mean something.
//! Positive: the runner executes the sentinel itself and the marker must appear (detection works
//! inside this boundary), then it is removed. Negative: a stand-in reference host that, like
//! `claude mcp list`, executes every configured server command runs over a fixture whose server
//! command is the sentinel; the very invariant check used for cases (`judge::invariants`) must
//! flag it. Both clean up after themselves (marker removed, fixture roots cleared). This module
//! must never run the candidate, and the reference host must never run anything but commands
//! from its own control fixture.

use crate::case::{marker_present, remove_marker, run_captured};
use crate::{fixture, HarnessError, IoContext, Layout};
use scopebox_receipts::digest::sha256_hex;
use scopebox_receipts::evidence::{CaseRecord, NegativeControl, PositiveControl, Verdict};
use scopebox_receipts::judge;
use scopebox_receipts::matrix::{FileContent, FixtureEntry, Matrix};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Where the negative control's project lives (matrix spelling).
pub const NEGATIVE_CONTROL_ROOT: &str = "/work/scopebox-negative-control";
const CONTROL_DEADLINE: Duration = Duration::from_secs(10);

/// Runs the sentinel directly; it must leave its marker, which is then removed.
pub fn positive(layout: &Layout) -> PositiveControl {
    let marker_present_before = marker_present(layout);
    let mut cmd = Command::new(&layout.sentinel_bin);
    cmd.arg("positive-control")
        .env_clear()
        .envs(layout.sentinel_env.iter().map(|(k, v)| (k, v)));
    let sentinel_exit_code = run_captured(cmd, CONTROL_DEADLINE)
        .ok()
        .and_then(|c| c.exit_code);
    let marker_appeared = marker_present(layout);
    let marker_removed = remove_marker(layout);
    PositiveControl {
        marker_present_before,
        sentinel_exit_code,
        marker_appeared,
        marker_removed,
    }
}

/// True when the positive control proves detection works.
pub fn positive_behaved(p: &PositiveControl) -> bool {
    !p.marker_present_before
        && p.sentinel_exit_code == Some(0)
        && p.marker_appeared
        && p.marker_removed
}

/// True when the negative control was caught by the case invariants and cleaned up.
pub fn negative_behaved(n: &NegativeControl) -> bool {
    n.commands_executed > 0 && n.marker_appeared && n.caught && n.marker_removed
}

/// The control fixture: one project `.mcp.json` whose only server's command is the sentinel.
pub fn negative_fixture(layout: &Layout) -> Vec<FixtureEntry> {
    let config = serde_json::json!({
        "mcpServers": {
            "reference-control": {
                "command": layout.sentinel_bin.to_string_lossy(),
                "args": ["negative-control"]
            }
        }
    });
    vec![FixtureEntry::File {
        path: format!("{NEGATIVE_CONTROL_ROOT}/.mcp.json"),
        content: FileContent::Text(config.to_string()),
        mode: None,
    }]
}

/// Lays out the control fixture, runs the reference host over it, judges the run with the case
/// invariants, and cleans up. Harness I/O failures are errors; a control that misbehaves is
/// recorded (and fails the run), not raised.
pub fn negative(layout: &Layout, matrix: &Matrix) -> Result<NegativeControl, HarnessError> {
    fixture::clear(layout)?;
    fixture::lay_out(layout, &negative_fixture(layout))?;
    let before = fixture::walk(layout)?;
    let root = layout.host(NEGATIVE_CONTROL_ROOT);
    let host = reference_host(layout, &root)?;
    let after = fixture::walk(layout)?;
    let marker_appeared = marker_present(layout);
    let record = CaseRecord {
        id: "negative-control".into(),
        argv: vec!["reference-host".into(), NEGATIVE_CONTROL_ROOT.into()],
        cwd: NEGATIVE_CONTROL_ROOT.into(),
        env: Vec::new(),
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        duration_micros: 0,
        stdout_sha256: sha256_hex(&host.stdout),
        stderr_sha256: sha256_hex(&host.stderr),
        fixtures_before: before,
        fixtures_after: after,
        marker_present: marker_appeared,
        verdict: Verdict {
            pass: false,
            failures: Vec::new(),
        },
    };
    let mut failures = Vec::new();
    judge::invariants(matrix, &host.stdout, &host.stderr, &record, &mut failures);
    let caught = failures.contains(&judge::marker_failure());
    let marker_removed = remove_marker(layout);
    fixture::clear(layout)?;
    Ok(NegativeControl {
        commands_executed: host.commands_executed,
        marker_appeared,
        caught,
        marker_removed,
    })
}

/// What the reference host did.
#[derive(Debug, Default)]
pub struct ReferenceRun {
    pub commands_executed: u32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// The stand-in for a real host's `mcp list`: reads `<root>/.mcp.json`, and for each server in
/// `mcpServers` with a string `command`, executes it with its string `args` (cwd = root,
/// environment cleared but for the sentinel's), under the control deadline. This is the
/// behaviour the candidate must never have.
pub fn reference_host(layout: &Layout, root: &Path) -> Result<ReferenceRun, HarnessError> {
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
        let args: Vec<&str> = server
            .get("args")
            .and_then(|a| a.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let mut cmd = Command::new(command);
        cmd.args(&args)
            .current_dir(root)
            .env_clear()
            .envs(layout.sentinel_env.iter().map(|(k, v)| (k, v)));
        if let Ok(captured) = run_captured(cmd, CONTROL_DEADLINE) {
            run.commands_executed += 1;
            run.stdout.extend(captured.stdout);
            run.stderr.extend(captured.stderr);
        }
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        std::fs::write(&sentinel, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&sentinel, std::fs::Permissions::from_mode(0o755)).unwrap();
        let l = Layout::rebased(d.path(), Path::new("/nonexistent"), &sentinel).unwrap();
        (d, l)
    }

    const FIRING: &str =
        "mkdir -p \"$(dirname \"$SCOPEBOX_SENTINEL_MARKER\")\" && echo \"$@\" > \"$SCOPEBOX_SENTINEL_MARKER\"";

    #[test]
    fn the_positive_control_sees_a_firing_sentinel() {
        let (_d, l) = layout_with_fake_sentinel(FIRING);
        let p = positive(&l);
        assert_eq!(
            p,
            PositiveControl {
                marker_present_before: false,
                sentinel_exit_code: Some(0),
                marker_appeared: true,
                marker_removed: true,
            }
        );
        assert!(positive_behaved(&p));
        assert!(!marker_present(&l));
    }

    #[test]
    fn the_positive_control_fails_with_a_silent_sentinel_or_a_stale_marker() {
        let (_d, l) = layout_with_fake_sentinel("exit 0");
        let p = positive(&l);
        assert!(!p.marker_appeared);
        assert!(!positive_behaved(&p));

        let (_d, l) = layout_with_fake_sentinel(FIRING);
        std::fs::create_dir_all(l.sentinel_marker.parent().unwrap()).unwrap();
        std::fs::write(&l.sentinel_marker, "stale").unwrap();
        let p = positive(&l);
        assert!(p.marker_present_before);
        assert!(!positive_behaved(&p));
    }

    #[test]
    fn the_negative_control_is_caught_and_cleaned_up() {
        let (_d, l) = layout_with_fake_sentinel(FIRING);
        let n = negative(&l, &matrix()).unwrap();
        assert_eq!(
            n,
            NegativeControl {
                commands_executed: 1,
                marker_appeared: true,
                caught: true,
                marker_removed: true,
            }
        );
        assert!(negative_behaved(&n));
        assert_eq!(fixture::walk(&l).unwrap(), vec![], "fixture roots cleared");
        // The host really ran the configured args.
        assert!(!marker_present(&l));
    }

    #[test]
    fn a_reference_host_that_executes_nothing_is_not_caught() {
        // The command runs but never fires: the invariant check has nothing to catch, and the
        // control must say so rather than pretend.
        let (_d, l) = layout_with_fake_sentinel("exit 0");
        let n = negative(&l, &matrix()).unwrap();
        assert_eq!(n.commands_executed, 1);
        assert!(!n.marker_appeared);
        assert!(!n.caught);
        assert!(!negative_behaved(&n));
    }

    #[test]
    fn the_reference_host_passes_configured_args() {
        let (_d, l) = layout_with_fake_sentinel(FIRING);
        fixture::clear(&l).unwrap();
        fixture::lay_out(&l, &negative_fixture(&l)).unwrap();
        let run = reference_host(&l, &l.host(NEGATIVE_CONTROL_ROOT)).unwrap();
        assert_eq!(run.commands_executed, 1);
        assert_eq!(
            std::fs::read_to_string(&l.sentinel_marker).unwrap(),
            "negative-control\n"
        );
    }
}
