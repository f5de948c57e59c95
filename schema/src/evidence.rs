//! The records the runner writes under `/evidence` inside the container, copied out byte for
//! byte into `<bundle>/evidence/`. Layout:
//!
//! ```text
//! evidence/
//!   boundary.json            InnerBoundary: what the runner observed about its own confinement
//!   controls.json            Controls: sentinel positive control, executing negative control
//!   controls/positive/record.json   PositiveControlRecord: the sentinel run and the marker around it
//!   controls/negative/record.json   NegativeControlRecord: the reference host's run, re-judgeable
//!   controls/negative/stdout        raw output of the commands the reference host executed
//!   controls/negative/stderr
//!   controls/{positive,negative}/witness.json   WitnessRecord of each control's window
//!   controls/<adversarial>/record.json, stdout, stderr, witness.json
//!                            each hostile stand-in (`ADVERSARIAL_CONTROLS`) as it ran
//!   cases/<id>/stdout        raw candidate stdout
//!   cases/<id>/stderr        raw candidate stderr
//!   cases/<id>/record.json   CaseRecord
//!   cases/<id>/witness.json  WitnessRecord (`crate::witness`): what the kernel reported
//!   summary.json             RunSummary (written last; its absence means the runner did not finish)
//!   error.json               RunError, only when the runner refused to start (bad matrix, ...)
//! ```
//! `controls.json` is the runner's conclusion; the records under `controls/` are what it
//! observed, and `judge::positive_control` / `judge::negative_control` derive the conclusion
//! from them, so the verifier recomputes both controls instead of trusting the flags.
//! This module only describes the records; the runner fills them, the verifier re-checks them.

use serde::{Deserialize, Serialize};

pub const BOUNDARY_FILE: &str = "boundary.json";
pub const CONTROLS_FILE: &str = "controls.json";
pub const SUMMARY_FILE: &str = "summary.json";
pub const CASES_DIR: &str = "cases";
/// Inside the container only: the tar stream the runner appends every case's files to
/// (`CASES_DIR/<id>/…`); the orchestrator expands it into the bundle, which never holds it.
pub const JOURNAL_FILE: &str = "journal.tar";
/// The two zero blocks that end the journal once the runner finished its cases.
pub const JOURNAL_TRAILER_BYTES: usize = 1024;
/// Most bytes the runner writes to its case journal. The orchestrator takes at most 256 MiB of a
/// container's evidence; a candidate that makes each case's evidence large (thousands of files
/// left, thousands of opens witnessed) would pass that, and the whole export would be refused.
/// The runner stops before a case's evidence would take the journal past this, keeping every
/// case before it (a harness failure naming the case; the rest are not run).
pub const JOURNAL_BUDGET_BYTES: u64 = 192 * 1024 * 1024;
pub const STDOUT_FILE: &str = "stdout";
pub const STDERR_FILE: &str = "stderr";
pub const RECORD_FILE: &str = "record.json";
/// The raw control records, relative to the evidence directory.
pub const POSITIVE_CONTROL_RECORD_FILE: &str = "controls/positive/record.json";
pub const NEGATIVE_CONTROL_RECORD_FILE: &str = "controls/negative/record.json";
pub const NEGATIVE_CONTROL_STDOUT_FILE: &str = "controls/negative/stdout";
pub const NEGATIVE_CONTROL_STDERR_FILE: &str = "controls/negative/stderr";
/// The kernel witness's records of the two sentinel controls.
pub const POSITIVE_CONTROL_WITNESS_FILE: &str = "controls/positive/witness.json";
pub const NEGATIVE_CONTROL_WITNESS_FILE: &str = "controls/negative/witness.json";
/// The directory of every control, relative to the evidence directory.
pub const CONTROLS_DIR: &str = "controls";
/// The hostile stand-ins every run includes, in the order they run; each has
/// `controls/<name>/{record.json,stdout,stderr,witness.json}` and must be caught by the judge.
pub const ADVERSARIAL_CONTROLS: [&str; 6] = [
    "exec-delete-marker",
    "exec-redirected-marker",
    "double-fork-daemon",
    "memfd-exec",
    "base64-canary",
    "tmp-file-canary",
];
/// Most bytes of the sentinel marker kept in a control record.
pub const MARKER_TEXT_LIMIT: usize = 4096;
/// Written instead of the run when the runner could not run the matrix at all.
pub const ERROR_FILE: &str = "error.json";

/// What the runner observed about the boundary from inside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InnerBoundary {
    pub uid: u32,
    pub gid: u32,
    /// `CapEff` from /proc/self/status, as hex text.
    pub cap_eff: String,
    /// `NoNewPrivs` from /proc/self/status.
    pub no_new_privs: u8,
    /// `Seccomp` mode from /proc/self/status (2 = filter).
    pub seccomp: u8,
    /// Interface names under /sys/class/net, sorted.
    pub net_interfaces: Vec<String>,
    /// errno of creating a file at the root (30 = EROFS expected).
    pub root_write_errno: Option<i32>,
    /// errno of executing a copy of the sentinel placed on the /tmp tmpfs (13 = EACCES expected).
    pub tmpfs_exec_errno: Option<i32>,
    /// cgroup pids limit as text ("256").
    pub pids_max: Option<String>,
    /// cgroup memory limit in bytes.
    pub memory_limit_bytes: Option<u64>,
    /// cgroup memory+swap limit in bytes (v1 memsw; v2: memory.max + memory.swap.max).
    pub memory_swap_limit_bytes: Option<u64>,
    /// /proc/1/cmdline split on NUL: the init process.
    pub pid1_cmdline: Vec<String>,
    /// Writable check of each fixture root and /evidence: mount options seen in /proc/self/mountinfo.
    pub mounts: Vec<MountObservation>,
    /// `uname` machine as the runner saw it (`x86_64`, `aarch64` — under emulation too): it
    /// must be the machine of the platform whose image ran.
    pub machine: String,
}

/// One mount point as /proc/self/mountinfo shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MountObservation {
    pub mount_point: String,
    pub fs_type: String,
    /// Per-mount and super options, comma-joined as shown.
    pub options: String,
}

/// Both controls; each must behave for the run to count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Controls {
    pub positive: PositiveControl,
    pub negative: NegativeControl,
    /// One per `ADVERSARIAL_CONTROLS` name, in that order.
    pub adversarial: Vec<AdversarialControl>,
}

/// A hostile stand-in (the runner re-executed as `scopebox-runner hostile <name> ...`) run like
/// a case: `judge::adversarial_control` derives this from its raw record, output and witness
/// record. It behaved when the judge failed it with the failure its attack must produce.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AdversarialControl {
    pub name: String,
    /// The failure prefix that must be among `failures` (e.g. `witness: executed`).
    pub expected: String,
    /// True when some failure starts with `expected`.
    pub caught: bool,
    /// Everything the judge (invariants and witness) reported.
    pub failures: Vec<String>,
}

/// The runner executes the sentinel itself: the marker must appear, then is removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PositiveControl {
    pub marker_present_before: bool,
    pub sentinel_exit_code: Option<i32>,
    pub marker_appeared: bool,
    pub marker_removed: bool,
}

/// A stand-in reference host that executes configured commands (as `claude mcp list` does)
/// runs over a fixture whose server command is the sentinel: the same marker check must fire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NegativeControl {
    /// Number of configured commands the reference host executed.
    pub commands_executed: u32,
    pub marker_appeared: bool,
    /// True when the per-case invariant check flagged the reference host (what must happen).
    pub caught: bool,
    pub marker_removed: bool,
}

/// `controls/positive/record.json`: the runner executing the sentinel itself, and the marker
/// observed before, after, and after removing it. `judge::positive_control` turns it into the
/// `PositiveControl` of `controls.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PositiveControlRecord {
    /// The sentinel's argv as executed, program first (`judge::positive_control_argv`).
    pub argv: Vec<String>,
    /// Whether the marker existed before the sentinel ran.
    pub marker_present_before: bool,
    /// `None` when the sentinel could not be started or was killed.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// The control deadline passed and the sentinel was killed.
    pub timed_out: bool,
    /// Whether the marker existed after the sentinel exited.
    pub marker_present_after: bool,
    /// The marker's text then (the sentinel writes its pid and argv), lossy UTF-8, at most
    /// `MARKER_TEXT_LIMIT` bytes; `None` when absent or unreadable.
    pub marker_text: Option<String>,
    /// Whether the marker still existed after the runner removed it.
    pub marker_present_after_removal: bool,
}

/// `controls/negative/record.json`: the stand-in reference host run over the control fixture
/// (`judge::negative_control_fixture`, whose one server command is the sentinel), recorded like
/// a case so that `judge::invariants` — the check every case passes — can be replayed on it.
/// `judge::negative_control` turns it (with the raw `stdout`/`stderr` beside it) into the
/// `NegativeControl` of `controls.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NegativeControlRecord {
    /// The reference host's run in case form: id `negative-control`, argv `reference-host
    /// <root>`, both walks of the fixture roots, the digests of the captured output, whether
    /// the marker existed afterwards, and as `verdict` what `judge::invariants` reported —
    /// which must include `judge::marker_failure()` for the control to count as caught.
    pub run: CaseRecord,
    /// Every configured command the reference host executed, in order.
    pub executed: Vec<ExecutedCommand>,
    /// The marker's text after the host ran (see `PositiveControlRecord::marker_text`).
    pub marker_text: Option<String>,
    /// Whether the marker still existed after the runner removed it.
    pub marker_present_after_removal: bool,
}

/// One configured command the reference host executed, spelled as the control fixture
/// configures it (the sentinel's path and its argument: nothing else is ever executed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExecutedCommand {
    pub program: String,
    pub args: Vec<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
}

/// One case as it actually ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaseRecord {
    pub id: String,
    /// Full argv, program first.
    pub argv: Vec<String>,
    pub cwd: String,
    /// The complete environment the candidate got, sorted `NAME=value`.
    pub env: Vec<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// The per-case deadline passed and the candidate was killed.
    pub timed_out: bool,
    pub duration_micros: u64,
    pub stdout_sha256: String,
    pub stderr_sha256: String,
    /// Full walk (no symlink following) of every fixture root before the run, sorted by path.
    pub fixtures_before: Vec<FixtureObservation>,
    /// The same walk after the run, within the walk's bounds (`WALK_NODE_LIMIT`,
    /// `WALK_DEPTH_LIMIT`, `WALK_PATH_BYTES_LIMIT`): as far as it got when
    /// `fixtures_after_problems` is not empty.
    pub fixtures_after: Vec<FixtureObservation>,
    /// Why the walk after the run is not the whole tree as the case laid it out: a bound it
    /// reached, an entry it could not read, a fixture root whose mode the run changed. Each
    /// fails the case. Absent (empty) when the walk was whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixtures_after_problems: Vec<String>,
    /// Whether the sentinel marker existed after the run.
    pub marker_present: bool,
    /// The runner's verdict; the verifier re-derives it and must agree.
    pub verdict: Verdict,
    /// Every regular file the run left written where the candidate can write: added below the
    /// fixture roots, or new or changed in the scratch tmpfs (`/tmp`), with its bytes,
    /// so the judge can search them for canaries. Absent (empty) when nothing was written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub written: Vec<WrittenFile>,
}

/// Most nodes one walk of the fixture roots records; a walk after the run that finds more
/// stops there and says so (`CaseRecord::fixtures_after_problems`). A case's declared fixture
/// may use at most half (`judge::bounds::MAX_FIXTURE_NODES`).
pub const WALK_NODE_LIMIT: usize = 8_192;
/// Deepest level below a fixture root one walk enters (a fixture root's own entries are level
/// 1); a case's declared fixture may use at most half (`judge::bounds::MAX_FIXTURE_DEPTH`).
pub const WALK_DEPTH_LIMIT: usize = 128;
/// Most bytes of path text (the recorded paths, summed) one walk records; a case's declared
/// fixture may use at most half (`judge::bounds::MAX_FIXTURE_PATH_BYTES`).
pub const WALK_PATH_BYTES_LIMIT: usize = 2 * 1024 * 1024;
/// Most bytes of one written file kept in a record.
pub const WRITTEN_CONTENT_LIMIT: usize = 1024 * 1024;
/// Most written files kept in a record; more are only counted by the walk's own changes.
pub const WRITTEN_FILE_LIMIT: usize = 64;
/// Most bytes of written content kept in one record, all its files together: a file past it is
/// kept with its size and digest, its content cut short and marked `truncated`. (Each written
/// file fails the case by itself; its content is kept for the canary search.)
pub const WRITTEN_TOTAL_LIMIT: usize = 4 * 1024 * 1024;

/// One file the run left written (`CaseRecord::written`), or another entry it left in the
/// scratch tmpfs (`kind`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WrittenFile {
    /// Matrix spelling (`/work/p/x`, `/tmp/x`).
    pub path: String,
    /// What it is when it is not a regular file: `dir`, `symlink`, `fifo`, `socket` or `other`
    /// (the fixture walk's names). A symlink's content is its target text; the others have none
    /// (size 0, the digest of nothing). Absent for a regular file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub size: u64,
    /// Digest of the whole file.
    pub sha256: String,
    /// The first `WRITTEN_CONTENT_LIMIT` bytes, standard base64 (padded); empty when unreadable.
    pub content_base64: String,
    /// True when the content kept is not the whole file (too large, or unreadable).
    pub truncated: bool,
}

/// One node found walking a fixture root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FixtureObservation {
    pub path: String,
    /// `file`, `dir`, `symlink`, `fifo`, `socket`, `other`.
    pub kind: String,
    /// Permission bits, octal text ("0644").
    pub mode: String,
    pub size: u64,
    /// Files: digest of the bytes; symlinks: digest of the target text; others: none.
    pub sha256: Option<String>,
}

/// A case's verdict with every failed check named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Verdict {
    pub pass: bool,
    /// Stable, human-readable reasons, e.g. "exit code 1, expected 0",
    /// "canary CANARY-ARG-1 in stdout", "fixture /work/p/.mcp.json changed".
    pub failures: Vec<String>,
}

/// Written last by the runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunSummary {
    pub matrix_sha256: String,
    /// Counts over the cases this runner ran (its shard's).
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    /// Case ids in matrix order (its shard's).
    pub case_ids: Vec<String>,
    pub median_case_micros: u64,
    /// Which share of the matrix this container ran; absent when it ran every case.
    #[serde(default, skip_serializing_if = "Shard::is_whole")]
    pub shard: Shard,
}

/// The environment variable that tells a container's runner its shard, `<index>/<of>`
/// (absent: the whole matrix). Set by the orchestrator at create time, like the engine machine.
pub const SHARD_ENV: &str = "SCOPEBOX_SHARD";
/// The most containers one platform's matrix is split across.
pub const MAX_SHARDS: usize = 16;

/// One of `of` containers that share a platform's matrix: it runs the cases whose position in
/// the matrix is `index` modulo `of` (every shard of a platform runs the same image, observes
/// its own boundary and runs every control). A pure function of the matrix: the verifier
/// recomputes which case ran where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Shard {
    pub index: usize,
    pub of: usize,
}

impl Default for Shard {
    fn default() -> Shard {
        Shard::WHOLE
    }
}

impl Shard {
    /// The whole matrix in one container.
    pub const WHOLE: Shard = Shard { index: 0, of: 1 };

    pub fn is_whole(&self) -> bool {
        *self == Shard::WHOLE
    }

    /// Whether the case at `position` (0-based, matrix order) is this shard's.
    pub fn runs(&self, position: usize) -> bool {
        position % self.of == self.index
    }

    /// The shard of the case at `position` among `of` shards.
    pub fn of_position(position: usize, of: usize) -> Shard {
        Shard {
            index: position % of,
            of,
        }
    }

    /// `<index>/<of>`, as `SHARD_ENV` spells it.
    pub fn text(&self) -> String {
        format!("{}/{}", self.index, self.of)
    }

    /// Parses `<index>/<of>` with `index < of <= MAX_SHARDS`, decimal digits only.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let number = |s: &str| {
            (!s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<usize>().ok())
                .flatten()
        };
        let parsed = text
            .split_once('/')
            .and_then(|(i, k)| Some((number(i)?, number(k)?)));
        match parsed {
            Some((index, of)) if (1..=MAX_SHARDS).contains(&of) && index < of => {
                Ok(Shard { index, of })
            }
            _ => Err(format!(
                "{SHARD_ENV} is {text:?}, expected <index>/<count> with index < count <= {MAX_SHARDS}"
            )),
        }
    }
}

/// Why the runner did not run the matrix (`error.json`). Exit code 2 goes with `matrix-*` kinds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunError {
    /// `matrix-unreadable`, `matrix-malformed`, `matrix-invalid` or `harness`.
    pub kind: String,
    /// One line, lowercase, fits "failed to …" style ("failed to read /scopebox/matrix.json: …").
    pub message: String,
    /// Each validation problem (`judge::validate_matrix`), when the matrix is invalid.
    #[serde(default)]
    pub problems: Vec<String>,
    /// sha256 of the matrix bytes, when they could be read.
    #[serde(default)]
    pub matrix_sha256: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_parses_from_its_text_and_refuses_anything_else() {
        assert_eq!(Shard::parse("0/1"), Ok(Shard::WHOLE));
        let s = Shard::parse("1/3").unwrap();
        assert_eq!((s.index, s.of), (1, 3));
        assert_eq!(s.text(), "1/3");
        for bad in [
            "", "1", "1/1", "3/2", "0/0", "0/17", "-1/2", "+1/2", "1/2/3", " 1/2", "01/002",
        ] {
            assert!(Shard::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_shards_of_a_matrix_are_disjoint_and_cover_it() {
        for of in 1..=MAX_SHARDS {
            for position in 0..50 {
                let owners: Vec<usize> = (0..of)
                    .filter(|&index| Shard { index, of }.runs(position))
                    .collect();
                assert_eq!(owners, [Shard::of_position(position, of).index]);
            }
        }
    }

    #[test]
    fn a_summary_of_the_whole_matrix_names_no_shard() {
        let summary = RunSummary {
            matrix_sha256: "m".into(),
            total: 0,
            passed: 0,
            failed: 0,
            case_ids: vec![],
            median_case_micros: 0,
            shard: Shard::WHOLE,
        };
        let json = serde_json::to_string(&summary).unwrap();
        assert!(!json.contains("shard"), "{json}");
        let split = RunSummary {
            shard: Shard { index: 1, of: 2 },
            ..summary
        };
        let json = serde_json::to_string(&split).unwrap();
        assert!(json.contains(r#""shard":{"index":1,"of":2}"#), "{json}");
        assert_eq!(serde_json::from_str::<RunSummary>(&json).unwrap(), split);
    }
}
