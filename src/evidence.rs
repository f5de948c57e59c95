//! Copying `/evidence` out of the container into `<bundle>/evidence/`, byte for byte and safely:
//! the engine's archive is read entry by entry, the leading `evidence/` directory is stripped,
//! and anything that could write outside the destination or surprise a reader — absolute paths,
//! `..`, symlinks, hard links, devices, FIFOs, duplicates, oversized files or too many entries —
//! refuses the whole export. The runner's case journal is expanded in place (`extract`). It
//! never interprets the records (that is `receipt`).

use scopebox_schema::evidence::{CASES_DIR, JOURNAL_FILE, JOURNAL_TRAILER_BYTES};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// Bound on the archive the engine sends (checked while downloading).
pub const MAX_ARCHIVE_BYTES: u64 = 256 * 1024 * 1024;
/// Bound on any one file.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
pub const MAX_ENTRIES: usize = 100_000;

#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error("extract the evidence archive: {0}")]
    Unsafe(String),
    #[error("extract the evidence archive: it is not a readable tar")]
    Tar(#[source] std::io::Error),
    #[error("write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What was extracted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extracted {
    pub files: usize,
    pub bytes: u64,
    /// The runner's case journal did not end with exactly its trailer: the runner never
    /// finished its cases (killed at the deadline), or the stream was cut or padded by someone
    /// else; only the complete entries before the first break were extracted.
    pub journal_cut: bool,
}

/// Extract the engine's archive of `/evidence` into `dest` (which must exist and be empty).
/// The runner's case journal (`journal.tar`) is not copied as a file: its entries land where
/// the runner would have written them (`cases/<id>/…`), under the same rules as every other
/// file.
pub fn extract(archive: &[u8], dest: &Path) -> Result<Extracted, EvidenceError> {
    let mut tar = tar::Archive::new(archive);
    let mut out = Output {
        dest,
        done: Extracted::default(),
        seen: std::collections::BTreeSet::new(),
        count: 0,
    };
    // Docker names the entries below the copied directory's own name (`evidence/…`); Podman 4
    // roots them at `/` (`/`, `/cases/…`). The first entry says which — Podman's starts with the
    // directory `/` itself — and every later one must follow the same spelling.
    let mut spelling = None;
    for entry in tar.entries().map_err(EvidenceError::Tar)? {
        out.count()?;
        let mut entry = entry.map_err(EvidenceError::Tar)?;
        let raw = entry.path().map_err(EvidenceError::Tar)?.into_owned();
        let rooted = *spelling
            .get_or_insert_with(|| raw.as_os_str() == "/" && entry.header().entry_type().is_dir());
        let Some(rel) = strip_top(&raw, rooted)? else {
            // The top directory itself.
            continue;
        };
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            out.claim(&rel)?;
            let target = dest.join(&rel);
            std::fs::create_dir_all(&target).map_err(|source| EvidenceError::Write {
                path: target.clone(),
                source,
            })?;
            continue;
        }
        let is_journal = rel.as_os_str() == JOURNAL_FILE;
        let limit = if is_journal {
            MAX_ARCHIVE_BYTES
        } else {
            MAX_FILE_BYTES
        };
        let bytes = read_file(&mut entry, &raw, limit)?;
        if is_journal {
            out.done.journal_cut = !expand_journal(&bytes, &mut out)?;
        } else {
            out.write(&rel, &bytes)?;
        }
    }
    Ok(out.done)
}

/// Where extracted files go, and what was seen so far.
struct Output<'a> {
    dest: &'a Path,
    done: Extracted,
    seen: std::collections::BTreeSet<PathBuf>,
    count: usize,
}

impl Output<'_> {
    /// One more entry, outer or journal: bounded together.
    fn count(&mut self) -> Result<(), EvidenceError> {
        self.count += 1;
        if self.count > MAX_ENTRIES {
            return Err(EvidenceError::Unsafe(format!(
                "more than {MAX_ENTRIES} entries"
            )));
        }
        Ok(())
    }

    fn claim(&mut self, rel: &Path) -> Result<(), EvidenceError> {
        if !self.seen.insert(rel.to_path_buf()) {
            return Err(EvidenceError::Unsafe(format!(
                "{} appears twice",
                rel.display()
            )));
        }
        Ok(())
    }

    fn write(&mut self, rel: &Path, bytes: &[u8]) -> Result<(), EvidenceError> {
        self.claim(rel)?;
        let target = self.dest.join(rel);
        let write_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| EvidenceError::Write { path, source }
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(write_error(parent))?;
        }
        // create_new: never follow or overwrite anything already there.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .and_then(|mut file| file.write_all(bytes))
            .map_err(write_error(&target))?;
        self.done.files += 1;
        self.done.bytes += bytes.len() as u64;
        Ok(())
    }
}

/// A regular file's bytes, at most `limit`; anything else (link, device, FIFO…) is refused.
fn read_file<R: Read>(
    entry: &mut tar::Entry<R>,
    raw: &Path,
    limit: u64,
) -> Result<Vec<u8>, EvidenceError> {
    let kind = entry.header().entry_type();
    if !(kind.is_file() || kind == tar::EntryType::Continuous) {
        return Err(EvidenceError::Unsafe(format!(
            "{} is a {}, only files and directories are accepted",
            raw.display(),
            describe(kind)
        )));
    }
    let size = entry.header().size().map_err(EvidenceError::Tar)?;
    if size > limit {
        return Err(EvidenceError::Unsafe(format!(
            "{} is {size} bytes, more than {limit}",
            raw.display()
        )));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    entry
        .by_ref()
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(EvidenceError::Tar)?;
    Ok(bytes)
}

/// Writes the journal's complete entries; true when it ended with its trailer and nothing else. Its names are
/// relative to the evidence directory and must lie below `cases/`; only regular files.
fn expand_journal(journal: &[u8], out: &mut Output) -> Result<bool, EvidenceError> {
    let mut tar = tar::Archive::new(journal);
    let mut end = 0u64;
    let Ok(entries) = tar.entries() else {
        return Ok(false);
    };
    for entry in entries {
        // A header cut short or unreadable: the stream ends here.
        let Ok(mut entry) = entry else {
            return Ok(false);
        };
        out.count()?;
        let raw = entry.path().map_err(EvidenceError::Tar)?.into_owned();
        let rel = journal_path(&raw)?;
        let size = entry.header().size().map_err(EvidenceError::Tar)?;
        let data_at = entry.raw_file_position();
        let bytes = read_file(&mut entry, &raw, MAX_FILE_BYTES)?;
        if (bytes.len() as u64) < size {
            // Its data cut short: not evidence.
            return Ok(false);
        }
        out.write(&rel, &bytes)?;
        end = data_at + size.div_ceil(512) * 512;
    }
    // Exactly the trailer the runner writes, and nothing after it: zeros planted mid-stream
    // (truncate(2) can extend a file it cannot open) end a tar reader early.
    let rest = journal.get(end as usize..).unwrap_or_default();
    Ok(rest.len() == JOURNAL_TRAILER_BYTES && rest.iter().all(|&b| b == 0))
}

/// A journal name: `cases/…`, plain components only.
fn journal_path(raw: &Path) -> Result<PathBuf, EvidenceError> {
    let mut components = raw.components();
    let below_cases = components.next() == Some(Component::Normal(CASES_DIR.as_ref()));
    let rest: Vec<_> = components.collect();
    if !below_cases || rest.is_empty() || !rest.iter().all(|c| matches!(c, Component::Normal(_))) {
        return Err(EvidenceError::Unsafe(format!(
            "the case journal names {}, which is not below {CASES_DIR}/",
            raw.display()
        )));
    }
    Ok(raw.to_path_buf())
}

/// `evidence/a/b` → `a/b`; `evidence` or `evidence/` → None; anything not below one top
/// directory, absolute, or with `..` is refused. With `rooted` (Podman's spelling): `/a/b` →
/// `a/b`, `/` → None, and a path that is not absolute is refused.
fn strip_top(path: &Path, rooted: bool) -> Result<Option<PathBuf>, EvidenceError> {
    let unsafe_path = || EvidenceError::Unsafe(format!("unsafe path {}", path.display()));
    let mut parts = Vec::new();
    let mut components = path.components().peekable();
    if rooted {
        if components.next() != Some(Component::RootDir) {
            return Err(unsafe_path());
        }
        // The copied directory itself has no name of its own in this spelling.
        parts.push(std::ffi::OsString::from("evidence"));
    }
    for component in components {
        match component {
            Component::Normal(p) => parts.push(p.to_os_string()),
            Component::CurDir => {}
            _ => return Err(unsafe_path()),
        }
    }
    if parts.is_empty() {
        return Err(unsafe_path());
    }
    if parts.len() == 1 {
        return Ok(None);
    }
    Ok(Some(parts[1..].iter().collect()))
}

fn describe(kind: tar::EntryType) -> &'static str {
    match kind {
        tar::EntryType::Symlink => "symlink",
        tar::EntryType::Link => "hard link",
        tar::EntryType::Char | tar::EntryType::Block => "device",
        tar::EntryType::Fifo => "FIFO",
        _ => "special entry",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A tar like the engine's: top directory `evidence/`, then the given files.
    pub(crate) fn evidence_tar(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Directory);
        h.set_mode(0o755);
        h.set_size(0);
        tar.append_data(&mut h, "evidence/", std::io::empty())
            .unwrap();
        for (path, bytes) in files {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Regular);
            h.set_mode(0o644);
            h.set_size(bytes.len() as u64);
            tar.append_data(&mut h, format!("evidence/{path}"), *bytes)
                .unwrap();
        }
        tar.into_inner().unwrap()
    }

    #[test]
    fn files_land_below_the_destination_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let tar = evidence_tar(&[
            ("summary.json", b"{}"),
            ("cases/a/stdout", b"\x00\xffbytes"),
        ]);
        let done = extract(&tar, dir.path()).unwrap();
        assert_eq!(done.files, 2);
        assert_eq!(
            std::fs::read(dir.path().join("cases/a/stdout")).unwrap(),
            b"\x00\xffbytes"
        );
        assert_eq!(
            std::fs::read(dir.path().join("summary.json")).unwrap(),
            b"{}"
        );
    }

    fn with_entry(kind: tar::EntryType, path: &str, link: Option<&str>) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_mode(0o644);
        h.set_size(0);
        match link {
            Some(target) => tar.append_link(&mut h, path, target).unwrap(),
            None => {
                // Write the raw name so `..` survives (the builder refuses it).
                let name = path.as_bytes();
                h.as_old_mut().name[..name.len()].copy_from_slice(name);
                h.set_cksum();
                tar.append(&h, std::io::empty()).unwrap();
            }
        }
        tar.into_inner().unwrap()
    }

    #[test]
    fn escapes_and_links_refuse_the_export() {
        let dir = tempfile::tempdir().unwrap();
        for tar in [
            with_entry(tar::EntryType::Regular, "evidence/../../etc/x", None),
            with_entry(tar::EntryType::Regular, "/etc/passwd", None),
            with_entry(tar::EntryType::Symlink, "evidence/l", Some("/etc/passwd")),
            with_entry(tar::EntryType::Link, "evidence/h", Some("evidence/x")),
            with_entry(tar::EntryType::Fifo, "evidence/f", None),
        ] {
            let err = extract(&tar, dir.path()).unwrap_err();
            assert!(matches!(err, EvidenceError::Unsafe(_)), "{err:?}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// Podman 4's spelling of the same export: the copied directory is `/`, its files `/…`.
    fn rooted_tar(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut raw = |kind: tar::EntryType, name: &str, bytes: &[u8]| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(kind);
            h.set_mode(0o755);
            h.set_size(bytes.len() as u64);
            h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            h.set_cksum();
            tar.append(&h, bytes).unwrap();
        };
        raw(tar::EntryType::Directory, "/", b"");
        for (path, bytes) in files {
            raw(tar::EntryType::Regular, path, bytes);
        }
        tar.into_inner().unwrap()
    }

    #[test]
    fn podmans_rooted_spelling_lands_the_same_files() {
        let dir = tempfile::tempdir().unwrap();
        let tar = rooted_tar(&[("/summary.json", b"{}"), ("/cases/a/stdout", b"out")]);
        let done = extract(&tar, dir.path()).unwrap();
        assert_eq!(done.files, 2);
        assert_eq!(
            std::fs::read(dir.path().join("cases/a/stdout")).unwrap(),
            b"out"
        );
        // Within the rooted spelling, a relative or escaping name is refused.
        for bad in ["evidence/x", "/../x", "/cases/../../x"] {
            let dir = tempfile::tempdir().unwrap();
            let err = extract(&rooted_tar(&[(bad, b"x")]), dir.path()).unwrap_err();
            assert!(matches!(err, EvidenceError::Unsafe(_)), "{bad}: {err:?}");
        }
    }

    /// A journal as the runner writes it: entries, and the trailer when `finished`.
    fn journal(files: &[(&str, &[u8])], finished: bool) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        for (path, bytes) in files {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Regular);
            h.set_mode(0o644);
            h.set_size(bytes.len() as u64);
            tar.append_data(&mut h, path, *bytes).unwrap();
        }
        if finished {
            tar.into_inner().unwrap()
        } else {
            std::mem::take(tar.get_mut())
        }
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = walkdir::WalkDir::new(dir)
            .min_depth(1)
            .into_iter()
            .map(|e| {
                let e = e.unwrap();
                e.path().strip_prefix(dir).unwrap().display().to_string()
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn the_journal_lands_as_the_files_it_carries_and_never_as_itself() {
        let long = format!("cases/{}/record.json", "i".repeat(140));
        let j = journal(
            &[
                ("cases/a/stdout", b"\x00out"),
                ("cases/a/record.json", b"{}"),
                (&long, b"{\"long\":1}"),
            ],
            true,
        );
        let dir = tempfile::tempdir().unwrap();
        let tar = evidence_tar(&[("summary.json", b"{}"), (JOURNAL_FILE, &j)]);
        let done = extract(&tar, dir.path()).unwrap();
        assert_eq!((done.files, done.journal_cut), (4, false));
        assert_eq!(
            std::fs::read(dir.path().join("cases/a/stdout")).unwrap(),
            b"\x00out"
        );
        assert_eq!(
            std::fs::read(dir.path().join(&long)).unwrap(),
            b"{\"long\":1}"
        );
        assert!(!listing(dir.path()).iter().any(|p| p.contains("journal")));
    }

    #[test]
    fn a_journal_cut_short_keeps_its_complete_entries_and_says_it_was_cut() {
        let files: &[(&str, &[u8])] = &[("cases/a/stdout", b"a"), ("cases/b/stdout", &[7u8; 700])];
        let whole = journal(files, false);
        // No trailer (killed between cases); then cut inside b's data; then inside b's header.
        for (cut, expect) in [
            (
                whole.len(),
                vec![
                    "cases",
                    "cases/a",
                    "cases/a/stdout",
                    "cases/b",
                    "cases/b/stdout",
                ],
            ),
            (1024 + 512 + 300, vec!["cases", "cases/a", "cases/a/stdout"]),
            (1024 + 100, vec!["cases", "cases/a", "cases/a/stdout"]),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let tar = evidence_tar(&[(JOURNAL_FILE, &whole[..cut])]);
            let done = extract(&tar, dir.path()).unwrap();
            assert!(done.journal_cut, "cut at {cut}");
            assert_eq!(listing(dir.path()), expect, "cut at {cut}");
        }
    }

    #[test]
    fn zeros_planted_before_later_cases_do_not_pass_for_the_trailer() {
        // A candidate that cannot open the journal for writing can still extend it with zeros
        // (truncate(2)): the runner's later appends land after them, where a tar reader stops.
        let mut j = journal(&[("cases/a/stdout", b"a")], false);
        j.extend_from_slice(&[0u8; 1024]);
        j.extend_from_slice(&journal(&[("cases/b/stdout", b"b")], true));
        let dir = tempfile::tempdir().unwrap();
        let done = extract(&evidence_tar(&[(JOURNAL_FILE, &j)]), dir.path()).unwrap();
        assert!(
            done.journal_cut,
            "entries after the first zero blocks were not noticed"
        );
        // A journal with nothing after its trailer is complete; extra zero padding is not.
        for (extra, cut) in [(0, false), (512, true)] {
            let mut j = journal(&[("cases/a/stdout", b"a")], true);
            j.extend(std::iter::repeat_n(0u8, extra));
            let dir = tempfile::tempdir().unwrap();
            let done = extract(&evidence_tar(&[(JOURNAL_FILE, &j)]), dir.path()).unwrap();
            assert_eq!(done.journal_cut, cut, "{extra} bytes after the trailer");
        }
    }

    #[test]
    fn a_journal_naming_anything_but_case_files_refuses_the_export() {
        for name in ["summary.json", "cases", "controls/positive/record.json"] {
            let dir = tempfile::tempdir().unwrap();
            let tar = evidence_tar(&[(JOURNAL_FILE, &journal(&[(name, b"x")], true))]);
            let err = extract(&tar, dir.path()).unwrap_err();
            assert!(
                err.to_string().contains("not below cases/"),
                "{name}: {err}"
            );
        }
        // `..` and links, written raw (the builder refuses `..`).
        for (kind, name, link) in [
            (tar::EntryType::Regular, "cases/../../etc/x", None),
            (
                tar::EntryType::Symlink,
                "cases/a/stdout",
                Some("/etc/passwd"),
            ),
            (tar::EntryType::Fifo, "cases/a/stdout", None),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let mut j = with_entry(kind, name, link);
            j.truncate(j.len() - 1024);
            let err = extract(&evidence_tar(&[(JOURNAL_FILE, &j)]), dir.path()).unwrap_err();
            assert!(matches!(err, EvidenceError::Unsafe(_)), "{name}: {err:?}");
            assert!(!dir.path().join("cases/a/stdout").exists());
        }
        // A file both on the volume and in the journal.
        let dir = tempfile::tempdir().unwrap();
        let j = journal(&[("cases/a/stdout", b"journal")], true);
        let tar = evidence_tar(&[("cases/a/stdout", b"volume"), (JOURNAL_FILE, &j)]);
        let err = extract(&tar, dir.path()).unwrap_err();
        assert!(err.to_string().contains("appears twice"), "{err}");
    }

    #[test]
    fn oversized_files_refuse_the_export() {
        let dir = tempfile::tempdir().unwrap();
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_mode(0o644);
        h.set_size(MAX_FILE_BYTES + 1);
        tar.append_data(
            &mut h,
            "evidence/big",
            std::io::repeat(0).take(MAX_FILE_BYTES + 1),
        )
        .unwrap();
        let err = extract(&tar.into_inner().unwrap(), dir.path()).unwrap_err();
        assert!(err.to_string().contains("more than"), "{err}");
    }
}
