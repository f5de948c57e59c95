//! The case journal: every case's evidence (`cases/<id>/{witness.json,stdout,stderr,
//! record.json}`) appended to one tar stream, `/evidence/journal.tar`, with one `write` per
//! case, instead of a directory and four files per case on the evidence volume (creating
//! files there is most of what a case cost the runner: ext4 inode allocation on the volume,
//! and one witness round trip per write-open). The orchestrator expands it into the bundle's
//! `evidence/cases/…` exactly as if the files had been written one by one
//! (`scopebox::evidence`), so the bundle's layout does not depend on it. A run that ends
//! normally closes the stream with the two zero blocks of a tar trailer; a runner killed at
//! the deadline leaves it without one, and whatever complete entries it holds are still
//! evidence. Only the runner writes it, opened once (close-on-exec, append-only); it never
//! interprets what it carries. A candidate runs with the runner's uid and can reach the volume:
//! it cannot append without an open for writing (which the kernel witness reports), but it can
//! empty the journal with `truncate(2)` or move it aside with `rename(2)`, which open nothing. So
//! `finish` checks, before the trailer, that the journal at its path is still the file the
//! runner opened and holds exactly what the runner wrote, and fails the run naming what it found
//! otherwise.

use crate::case::CaseOutcome;
use crate::{HarnessError, IoContext};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The journal's name below the evidence directory, the size of the trailer ending it, and the
/// most it may hold.
pub use scopebox_schema::evidence::{JOURNAL_BUDGET_BYTES, JOURNAL_FILE, JOURNAL_TRAILER_BYTES};

/// An open journal; `finish` writes the trailer.
pub struct Journal {
    file: std::fs::File,
    path: PathBuf,
    /// Bytes the runner wrote to it so far.
    written: u64,
    /// Most bytes of entries it may hold (`JOURNAL_BUDGET_BYTES`, less its trailer).
    budget: u64,
}

impl Journal {
    /// Creates `path` (it must not exist: a journal is never appended to by a second run).
    pub fn create(path: &Path) -> Result<Journal, HarnessError> {
        Journal::with_budget(path, JOURNAL_BUDGET_BYTES)
    }

    /// `create` with another budget (the whole journal, trailer included).
    pub fn with_budget(path: &Path, budget: u64) -> Result<Journal, HarnessError> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path)
            .at("create", path)?;
        Ok(Journal {
            file,
            path: path.to_path_buf(),
            written: 0,
            budget: budget.saturating_sub(JOURNAL_TRAILER_BYTES as u64),
        })
    }

    /// Appends a case's evidence files (`case::outcome_files`) below `dir` (a path relative to
    /// the evidence directory, `cases/<id>`), in one write.
    pub fn append_outcome(&mut self, dir: &str, outcome: &CaseOutcome) -> Result<(), HarnessError> {
        let mut chunk = tar::Builder::new(Vec::new());
        for (name, bytes) in crate::case::outcome_files(outcome) {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Regular);
            header.set_mode(0o644);
            header.set_mtime(0);
            header.set_size(bytes.len() as u64);
            chunk
                .append_data(&mut header, format!("{dir}/{name}"), &*bytes)
                .at("append to", &self.path)?;
        }
        // The entries only: the trailer `Builder` would add on drop goes to the empty buffer.
        let bytes = std::mem::take(chunk.get_mut());
        let after = self.written + bytes.len() as u64;
        if after > self.budget {
            return Err(HarnessError::new(
                "append to",
                &self.path,
                std::io::Error::other(format!(
                    "{dir}'s evidence ({} bytes) would take the case journal past its budget of {} bytes: the cases before it are kept, it and the rest are not",
                    bytes.len(),
                    self.budget + JOURNAL_TRAILER_BYTES as u64
                )),
            ));
        }
        self.file.write_all(&bytes).at("append to", &self.path)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Ends the stream with the tar trailer (two zero blocks), once it is clear that the
    /// journal at its path is the file the runner opened, holding exactly what it wrote.
    pub fn finish(mut self) -> Result<(), HarnessError> {
        self.check_untouched()?;
        self.file
            .write_all(&[0u8; JOURNAL_TRAILER_BYTES])
            .at("finish", &self.path)
    }

    /// Whether anything but the runner changed the journal: its size, or what its path names.
    fn check_untouched(&self) -> Result<(), HarnessError> {
        use std::os::unix::fs::MetadataExt;
        let tampered = |what: String| {
            HarnessError::new(
                "finish",
                &self.path,
                std::io::Error::other(format!(
                    "{what}: something else than the runner changed the case journal while cases ran (a candidate can reach the evidence volume)"
                )),
            )
        };
        let open = self.file.metadata().at("inspect", &self.path)?;
        if open.len() != self.written {
            return Err(tampered(format!(
                "it holds {} bytes where the runner wrote {}",
                open.len(),
                self.written
            )));
        }
        let named = match std::fs::symlink_metadata(&self.path) {
            Ok(meta) => (meta.dev(), meta.ino()),
            Err(e) => return Err(tampered(format!("its path names nothing ({e})"))),
        };
        if named != (open.dev(), open.ino()) {
            return Err(tampered("its path names another file".to_string()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scopebox_schema::evidence::{CaseRecord, Verdict};

    fn outcome(id: &str, stdout: &[u8]) -> CaseOutcome {
        CaseOutcome {
            record: CaseRecord {
                id: id.into(),
                argv: vec!["/scopebox/bin/mcpscope".into()],
                cwd: "/work".into(),
                env: vec![],
                exit_code: Some(0),
                signal: None,
                timed_out: false,
                duration_micros: 1,
                stdout_sha256: String::new(),
                stderr_sha256: String::new(),
                fixtures_before: vec![],
                fixtures_after: vec![],
                fixtures_after_problems: vec![],
                marker_present: false,
                verdict: Verdict {
                    pass: true,
                    failures: vec![],
                },
                written: Default::default(),
            },
            stdout: stdout.to_vec(),
            stderr: b"err".to_vec(),
            witness: None,
        }
    }

    fn entries(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for e in tar::Archive::new(bytes).entries().unwrap() {
            let mut e = e.unwrap();
            let path = e.path().unwrap().to_string_lossy().into_owned();
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut e, &mut data).unwrap();
            out.push((path, data));
        }
        out
    }

    #[test]
    fn cases_land_in_order_as_the_files_write_run_would_write() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join(JOURNAL_FILE);
        let mut j = Journal::create(&path).unwrap();
        let a = outcome("a", b"out-a");
        // A long id: GNU long names, never a truncated path.
        let long = "l".repeat(150);
        let b = outcome(&long, b"");
        j.append_outcome("cases/a", &a).unwrap();
        j.append_outcome(&format!("cases/{long}"), &b).unwrap();
        j.finish().unwrap();
        let got = entries(&std::fs::read(&path).unwrap());
        let names: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        let b_dir = format!("cases/{long}");
        assert_eq!(
            names,
            [
                "cases/a/stdout".to_string(),
                "cases/a/stderr".into(),
                "cases/a/record.json".into(),
                format!("{b_dir}/stdout"),
                format!("{b_dir}/stderr"),
                format!("{b_dir}/record.json"),
            ]
        );
        assert_eq!(got[0].1, b"out-a");
        assert_eq!(got[1].1, b"err");
        assert_eq!(got[2].1, crate::case::pretty_json(&a.record));
        assert!(got[3].1.is_empty());
    }

    /// What a candidate can do to the journal without opening it (`truncate(2)`, `rename(2)`,
    /// both): each is found when the journal is finished, and no trailer is written.
    #[test]
    fn a_journal_emptied_or_moved_behind_the_runner_is_refused_at_its_end() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join(JOURNAL_FILE);
        let moved = t.path().join("moved");
        type Attack = fn(&Path, &Path);
        let attacks: [(&str, Attack, &str); 4] = [
            (
                "emptied",
                |p, _| {
                    std::fs::File::options()
                        .write(true)
                        .open(p)
                        .unwrap()
                        .set_len(0)
                        .unwrap()
                },
                "it holds 0 bytes where the runner wrote",
            ),
            (
                "moved",
                |p, m| std::fs::rename(p, m).unwrap(),
                "its path names nothing",
            ),
            (
                "replaced by a copy",
                |p, m| {
                    std::fs::copy(p, m).unwrap();
                    std::fs::rename(m, p).unwrap();
                },
                "its path names another file",
            ),
            (
                "grown",
                |p, _| {
                    let mut f = std::fs::File::options().append(true).open(p).unwrap();
                    f.write_all(b"forged").unwrap();
                },
                "bytes where the runner wrote",
            ),
        ];
        for (what, attack, expected) in attacks {
            let _ = std::fs::remove_file(&path);
            let mut j = Journal::create(&path).unwrap();
            j.append_outcome("cases/a", &outcome("a", b"out-a"))
                .unwrap();
            attack(&path, &moved);
            let err = j.finish().unwrap_err().source.to_string();
            assert!(err.contains(expected), "{what}: {err}");
            assert!(
                err.contains("something else than the runner changed"),
                "{what}"
            );
        }
        // Untouched, it finishes as always.
        let _ = std::fs::remove_file(&path);
        let mut j = Journal::create(&path).unwrap();
        j.append_outcome("cases/a", &outcome("a", b"out-a"))
            .unwrap();
        j.finish().unwrap();
    }

    #[test]
    fn a_case_that_would_pass_the_budget_is_refused_and_the_journal_keeps_the_cases_before() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join(JOURNAL_FILE);
        // Room for one small case (3 entries: 3 headers and 3 data blocks) and the trailer.
        let mut j = Journal::with_budget(&path, 6 * 512 + JOURNAL_TRAILER_BYTES as u64).unwrap();
        j.append_outcome("cases/a", &outcome("a", b"out-a"))
            .unwrap();
        let kept = std::fs::read(&path).unwrap();
        let err = j
            .append_outcome("cases/b", &outcome("b", b"out-b"))
            .unwrap_err();
        assert_eq!(err.action, "append to");
        let text = err.source.to_string();
        assert!(
            text.starts_with("cases/b's evidence (3072 bytes) would take the case journal past its budget of 4096 bytes"),
            "{text}"
        );
        // Nothing of b was written: the journal is a's entries, whole.
        assert_eq!(std::fs::read(&path).unwrap(), kept);
        assert_eq!(entries(&kept).len(), 3);
    }

    #[test]
    fn a_journal_is_never_reopened_by_a_second_run() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join(JOURNAL_FILE);
        Journal::create(&path).unwrap().finish().unwrap();
        assert!(Journal::create(&path).is_err());
        assert_eq!(
            std::fs::read(&path).unwrap(),
            vec![0u8; JOURNAL_TRAILER_BYTES]
        );
    }
}
