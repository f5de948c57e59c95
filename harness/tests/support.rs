//! Helpers shared by the integration tests: temp layouts, the built binaries, the shipped
//! matrices and what every one of them must plant, and a matrix run on this host whose every
//! verdict is then replayed from the evidence files alone, as the verifier does.

use scopebox_harness::run::RunStatus;
use scopebox_harness::Layout;
use scopebox_schema::evidence::{CaseRecord, Shard, SHARD_ENV};
use scopebox_schema::judge;
use scopebox_schema::layout::SENTINEL_BIN;
use scopebox_schema::matrix::{Case, FixtureEntry, Matrix};
use scopebox_schema::witness::WitnessRecord;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn sentinel_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_scopebox-sentinel"))
}

pub fn runner_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_scopebox-runner"))
}

/// The real mcpscope: `$SCOPEBOX_TEST_MCPSCOPE`, else built once with `cargo build -p mcpscope`.
pub fn mcpscope_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("SCOPEBOX_TEST_MCPSCOPE") {
            return PathBuf::from(p);
        }
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "mcpscope", "--bin", "mcpscope"])
            .current_dir(workspace_root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build -p mcpscope failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("target"));
        let bin = target.join("debug/mcpscope");
        assert!(bin.is_file(), "{} was not built", bin.display());
        bin
    })
    .clone()
}

/// A fresh rebased layout for `candidate`, with the real sentinel.
pub fn layout(candidate: &Path) -> (tempfile::TempDir, Layout) {
    let dir = tempfile::tempdir().unwrap();
    let l = Layout::rebased(dir.path(), candidate, &sentinel_bin()).unwrap();
    (dir, l)
}

pub fn shipped(name: &str) -> Matrix {
    let path = workspace_root().join("harness/matrix").join(name);
    let (m, _) = scopebox_harness::run::load_matrix(&path)
        .unwrap_or_else(|e| panic!("{name}: {} {:?}", e.message, e.problems));
    m
}

/// Writes `matrix` as the layout's matrix file.
pub fn install_matrix(layout: &Layout, matrix: &Matrix) {
    std::fs::write(&layout.matrix_path, serde_json::to_vec(matrix).unwrap()).unwrap();
}

/// Every canary of `m` is planted somewhere: in a fixture file's bytes, or in a symlink's
/// path or target.
pub fn assert_every_canary_planted(m: &Matrix) {
    let mut all = Vec::new();
    for e in m.cases.iter().flat_map(|c| &c.fixture) {
        match e {
            FixtureEntry::File { content, .. } => all.extend(judge::file_bytes(content).unwrap()),
            FixtureEntry::Symlink { path, target } => {
                all.extend(path.as_bytes());
                all.extend(target.as_bytes());
            }
            _ => {}
        }
    }
    for canary in &m.canaries {
        assert!(
            judge::contains_bytes(&all, canary.as_bytes()),
            "canary {canary} is never planted"
        );
    }
}

/// The arguments a server declaration lists (a non-string argument as "").
pub fn args_of(server: &Value) -> impl Iterator<Item = &str> {
    server
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|a| a.as_str().unwrap_or_default())
}

/// Whether `cmd`, a server command in one of `c`'s fixture files, runs the sentinel: it is the
/// sentinel, or a symlink to it that the case lays out.
pub fn runs_sentinel(c: &Case, cmd: &str) -> bool {
    cmd == SENTINEL_BIN
        || c.fixture.iter().any(|e| {
            matches!(e, FixtureEntry::Symlink { path, target } if path == cmd && target == SENTINEL_BIN)
        })
}

/// Whether `c` holds on this host exactly as in the container, with no rebasing: no mode-0000
/// entry (tests may run as root), no `~/.claude.json` project keys (spelled as container
/// paths), nothing in `fixed_dirs` (the profile's fixed locations outside the fixture roots
/// the layout rebases), no fact about the root, the instructions (their levels go above the
/// root) or a pointer ending in one of `path_pointers` (their values are container paths), no
/// stdout fact naming a container path, and no `HOME` of its own.
pub fn host_stable(c: &Case, fixed_dirs: &[&str], path_pointers: &[&str]) -> bool {
    let fixture_ok = c.fixture.iter().all(|e| {
        let mode_ok = match e {
            FixtureEntry::File { mode, .. }
            | FixtureEntry::Dir { mode, .. }
            | FixtureEntry::Fifo { mode, .. } => mode.as_deref() != Some("0000"),
            FixtureEntry::Symlink { .. } => true,
        };
        let keys_ok = match e {
            FixtureEntry::File { content, .. } => {
                !judge::contains_bytes(&judge::file_bytes(content).unwrap(), b"\"projects\"")
            }
            _ => true,
        };
        let path = judge::entry_path(e);
        mode_ok && keys_ok && !fixed_dirs.iter().any(|d| path.starts_with(d))
    });
    let facts_ok = c.expect.json.iter().all(|f| {
        !f.pointer.starts_with("/root/")
            && !f.pointer.starts_with("/instructions/")
            && !path_pointers.iter().any(|p| f.pointer.ends_with(p))
    });
    let text_ok = c
        .expect
        .stdout_contains
        .iter()
        .all(|s| !s.contains("/work/") && !s.contains("/home/"));
    fixture_ok && facts_ok && text_ok && !c.env.contains_key("HOME")
}

/// Runs `matrix` in `l`'s base with the runner binary (`run-rebased`: under the kernel witness,
/// with every control) and requires it to pass; then re-judges every case from its evidence
/// files alone, as the verifier does, witness record included: the verdict must equal the
/// recorded one, pass, and see no sentinel marker. Returns the runner's progress text.
pub fn run_and_replay(l: &Layout, matrix: &Matrix) -> String {
    run_and_replay_shard(l, matrix, Shard::WHOLE)
}

/// `run_and_replay` of one shard's cases (`SHARD_ENV` set as the orchestrator sets it); only
/// that shard's cases are re-judged.
pub fn run_and_replay_shard(l: &Layout, matrix: &Matrix, shard: Shard) -> String {
    install_matrix(l, matrix);
    let base = l.evidence_dir.parent().unwrap();
    let mut cmd = Command::new(runner_bin());
    if !shard.is_whole() {
        cmd.env(SHARD_ENV, shard.text());
    }
    let out = cmd
        .arg("run-rebased")
        .arg(base)
        .arg(&l.matrix_path)
        .arg(&l.candidate_bin)
        .arg(&l.sentinel_bin)
        .output()
        .unwrap();
    let progress = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        out.status.code(),
        Some(RunStatus::Passed.exit_code().into()),
        "{progress}"
    );
    let journal = JournalFiles::read(&l.evidence_dir);
    for (position, c) in matrix.cases.iter().enumerate() {
        if !shard.runs(position) {
            assert!(!journal.recorded(&c.id), "{} is not this shard's", c.id);
            continue;
        }
        let record: CaseRecord =
            serde_json::from_slice(journal.file(&c.id, "record.json")).unwrap();
        let stdout = journal.file(&c.id, "stdout");
        let stderr = journal.file(&c.id, "stderr");
        let witness: WitnessRecord =
            serde_json::from_slice(journal.file(&c.id, "witness.json")).unwrap();
        let again = judge::judge_witnessed(matrix, c, stdout, stderr, &record, &witness);
        assert_eq!(again, record.verdict, "{}", c.id);
        assert!(
            record.verdict.pass,
            "{}: {:?}",
            c.id, record.verdict.failures
        );
        assert!(!record.marker_present, "{}", c.id);
    }
    progress
}

/// The case files the runner appended to an evidence directory's journal (`cases/<id>/<name>`
/// → bytes), complete entries only, whether or not the runner lived to write the trailer —
/// what the orchestrator lands in the bundle. Read once per run, then looked up.
pub struct JournalFiles(BTreeMap<String, Vec<u8>>);

impl JournalFiles {
    pub fn read(evidence_dir: &Path) -> JournalFiles {
        let mut files = BTreeMap::new();
        let path = evidence_dir.join(scopebox_harness::journal::JOURNAL_FILE);
        if let Ok(bytes) = std::fs::read(path) {
            let mut archive = tar::Archive::new(bytes.as_slice());
            for entry in archive.entries().unwrap() {
                let Ok(mut entry) = entry else { break };
                let path = entry.path().unwrap().to_string_lossy().into_owned();
                let mut data = Vec::new();
                entry.read_to_end(&mut data).unwrap();
                assert!(files.insert(path.clone(), data).is_none(), "{path} twice");
            }
        }
        JournalFiles(files)
    }

    /// One case file (`name`: `record.json`, `stdout`, `stderr`, `witness.json`).
    pub fn file(&self, id: &str, name: &str) -> &[u8] {
        let path = format!("cases/{id}/{name}");
        self.0
            .get(&path)
            .unwrap_or_else(|| panic!("{path} is not in the journal"))
    }

    /// Whether the journal holds any file of case `id`.
    pub fn recorded(&self, id: &str) -> bool {
        let prefix = format!("cases/{id}/");
        self.0.keys().any(|k| k.starts_with(&prefix))
    }
}

/// An executable shell script (the fake candidates of `detection`).
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}
