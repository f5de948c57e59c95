//! What a run left written where the candidate can write: the regular files added below the
//! fixture roots (from the two walks) and every entry new or changed in the scratch tmpfs
//! (`/tmp`, listed before and after the run: files with their bytes, and directories, symlinks
//! with their targets, FIFOs and sockets, which calls that open nothing make), each with its bytes, so that the judge can search them for
//! canaries (`CaseRecord::written`). A fixture file that was changed is not captured: it held
//! the matrix's own canaries before the run, and the walk already fails it as changed. The sentinel's marker is not among them: its
//! presence is the marker check's, and its text the controls'. A file written and deleted again
//! before the run ended is not here; the kernel witness reports the open for writing.
//! This module only reads; it must never change or remove what it finds.

use crate::inside::Inside;
use crate::Layout;
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::evidence::{
    FixtureObservation, WrittenFile, WRITTEN_CONTENT_LIMIT, WRITTEN_FILE_LIMIT, WRITTEN_TOTAL_LIMIT,
};
use scopebox_schema::judge::encode_base64;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The matrix spelling of the scratch tmpfs.
const SCRATCH: &str = "/tmp";

/// Every entry below the scratch tmpfs, by matrix path (`/tmp/x`): its kind (as the fixture walk
/// names kinds, `fixture::kind_name`) and, for a regular file, the sha256 of its bytes (`None`
/// when unreadable), for a symlink that of its target text.
pub type ScratchListing = BTreeMap<String, (&'static str, Option<String>)>;

/// Lists the scratch tmpfs (without following symlinks), leaving out the sentinel's marker:
/// from inside it (`Inside`), so no path is resolved from `/`; by absolute paths where it
/// cannot be entered (then the walk finds nothing either).
pub fn scratch_listing(layout: &Layout) -> ScratchListing {
    let mut out = BTreeMap::new();
    let root = &layout.scratch_dir;
    let Ok(mut inside) = Inside::new() else {
        list(layout, root, root, &mut out);
        return out;
    };
    match inside.enter(root) {
        Ok(()) => list(layout, root, Path::new("."), &mut out),
        Err(_) => list(layout, root, root, &mut out),
    }
    out
}

/// Walks `start` (the scratch root as the calls spell it: `.` from inside it, or its path),
/// naming each file by its place below `root`.
fn list(layout: &Layout, root: &Path, start: &Path, out: &mut ScratchListing) {
    let walk = walkdir::WalkDir::new(start)
        .min_depth(1)
        .follow_links(false);
    // Unreadable parts are left out: the kernel witness reports every open for writing.
    for entry in walk.into_iter().flatten() {
        let path = entry.path();
        let Ok(relative) = path.strip_prefix(start) else {
            continue;
        };
        // The marker is the marker check's (the directory it is in is not: only a sentinel that
        // fired, or a candidate, makes it).
        if root.join(relative) == layout.sentinel_marker {
            continue;
        }
        let kind = crate::fixture::kind_name(entry.file_type());
        let digest = match kind {
            "file" => std::fs::read(path).ok().map(|b| sha256_hex(&b)),
            "symlink" => std::fs::read_link(path)
                .ok()
                .map(|t| sha256_hex(t.as_os_str().as_encoded_bytes())),
            _ => None,
        };
        let name = format!("{SCRATCH}/{}", relative.to_string_lossy());
        out.insert(name, (kind, digest));
    }
}

/// Every file the run left written, in path order: files of `after` that `before` did not have,
/// then scratch files `scratch_before` did not have with those bytes. At most
/// `WRITTEN_FILE_LIMIT` (the walk's own `fixture … added` failures name any beyond, and only
/// those kept are read), with at most `WRITTEN_TOTAL_LIMIT` bytes of content in all.
pub fn capture(
    layout: &Layout,
    before: &[FixtureObservation],
    after: &[FixtureObservation],
    scratch_before: &ScratchListing,
) -> Vec<WrittenFile> {
    let had: BTreeSet<&str> = before.iter().map(|o| o.path.as_str()).collect();
    let added = after
        .iter()
        .filter(|o| o.kind == "file" && !had.contains(o.path.as_str()))
        .map(|o| (o.path.clone(), layout.host(&o.path)));
    let added = added.map(|(path, host)| (path, host, "file"));
    let scratch = scratch_listing(layout)
        .into_iter()
        .filter(|(path, entry)| scratch_before.get(path) != Some(entry))
        .map(|(path, (kind, _))| {
            let host = layout
                .scratch_dir
                .join(path.trim_start_matches(SCRATCH).trim_start_matches('/'));
            (path, host, kind)
        });
    let mut budget = WRITTEN_TOTAL_LIMIT;
    added
        .chain(scratch)
        .take(WRITTEN_FILE_LIMIT)
        .map(|(path, host, kind)| {
            let (file, kept) = match kind {
                "file" => read_written(&path, &host, budget),
                _ => (other_entry(&path, &host, kind), 0),
            };
            budget -= kept;
            file
        })
        .collect()
}

/// An entry of the scratch tmpfs that is not a regular file: a symlink with its target text as
/// content (a canary spelled as a link target is searched like file content), anything else
/// with none.
fn other_entry(logical: &str, host: &Path, kind: &str) -> WrittenFile {
    let content = match kind {
        "symlink" => std::fs::read_link(host)
            .map(|t| t.into_os_string().into_encoded_bytes())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    WrittenFile {
        path: logical.to_string(),
        kind: Some(kind.to_string()),
        size: content.len() as u64,
        sha256: sha256_hex(&content),
        content_base64: encode_base64(&content),
        truncated: false,
    }
}

/// The file at `host`, recorded as `logical`, with at most `WRITTEN_CONTENT_LIMIT` and at most
/// `budget` bytes of its content; and how many bytes of content it kept.
fn read_written(logical: &str, host: &Path, budget: usize) -> (WrittenFile, usize) {
    match std::fs::read(host) {
        Ok(bytes) => {
            let keep = bytes.len().min(WRITTEN_CONTENT_LIMIT).min(budget);
            let kept = &bytes[..keep];
            let file = WrittenFile {
                path: logical.to_string(),
                kind: None,
                size: bytes.len() as u64,
                sha256: sha256_hex(&bytes),
                content_base64: encode_base64(kept),
                truncated: kept.len() < bytes.len(),
            };
            (file, keep)
        }
        // Unreadable (a mode the candidate chose, or gone meanwhile): named, without content.
        Err(_) => {
            let file = WrittenFile {
                path: logical.to_string(),
                kind: None,
                size: std::fs::symlink_metadata(host).map_or(0, |m| m.len()),
                sha256: String::new(),
                content_base64: String::new(),
                truncated: true,
            };
            (file, 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;
    use scopebox_schema::judge::decode_base64;

    fn layout() -> (tempfile::TempDir, Layout) {
        crate::scratch_layout()
    }

    #[test]
    fn added_fixture_files_and_new_scratch_files_are_captured_with_their_bytes() {
        let (_d, l) = layout();
        std::fs::create_dir_all(l.host("/work/p")).unwrap();
        std::fs::write(l.host("/work/p/keep"), b"same").unwrap();
        std::fs::write(l.host("/work/p/edit"), b"before").unwrap();
        std::fs::write(l.scratch_dir.join("old"), b"there before").unwrap();
        std::fs::create_dir_all(l.sentinel_marker.parent().unwrap()).unwrap();
        let before = fixture::walk(&l).unwrap();
        let scratch = scratch_listing(&l);

        std::fs::write(l.host("/work/p/edit"), b"after").unwrap();
        std::fs::write(l.host("/work/p/new"), b"CANARY").unwrap();
        std::fs::create_dir_all(l.scratch_dir.join("d")).unwrap();
        std::fs::write(l.scratch_dir.join("d/leak"), b"leaked").unwrap();
        std::fs::write(&l.sentinel_marker, b"pid=1").unwrap();
        let after = fixture::walk(&l).unwrap();

        let written = capture(&l, &before, &after, &scratch);
        let paths: Vec<&str> = written.iter().map(|w| w.path.as_str()).collect();
        // Not the changed fixture file (the walk fails it), the unchanged ones or the marker;
        // the new directory in /tmp too.
        assert_eq!(paths, ["/work/p/new", "/tmp/d", "/tmp/d/leak"]);
        assert_eq!(written[1].kind.as_deref(), Some("dir"));
        let leak = &written[2];
        assert_eq!(leak.kind, None);
        assert_eq!(decode_base64(&leak.content_base64).unwrap(), b"leaked");
        assert_eq!(leak.size, 6);
        assert_eq!(leak.sha256, sha256_hex(b"leaked"));
        assert!(!leak.truncated);
    }

    #[test]
    fn only_the_first_files_are_read_and_their_content_shares_one_budget() {
        let (_d, l) = layout();
        let scratch = scratch_listing(&l);
        // Seven files of the most content one file may keep: the budget holds four.
        let files = 7;
        for i in 0..files {
            std::fs::write(
                l.scratch_dir.join(format!("f{i}")),
                vec![b'a' + i as u8; WRITTEN_CONTENT_LIMIT],
            )
            .unwrap();
        }
        let written = capture(&l, &[], &[], &scratch);
        assert_eq!(written.len(), files);
        let kept: Vec<usize> = written
            .iter()
            .map(|w| decode_base64(&w.content_base64).unwrap().len())
            .collect();
        assert_eq!(kept.iter().sum::<usize>(), WRITTEN_TOTAL_LIMIT);
        assert_eq!(kept[..4], [WRITTEN_CONTENT_LIMIT; 4]);
        assert_eq!(kept[4..], [0; 3]);
        for (i, w) in written.iter().enumerate() {
            // Every file keeps its size and its whole digest, and says when it was cut short.
            assert_eq!(w.size, WRITTEN_CONTENT_LIMIT as u64);
            assert_eq!(
                w.sha256,
                sha256_hex(&vec![b'a' + i as u8; WRITTEN_CONTENT_LIMIT])
            );
            assert_eq!(w.truncated, i >= 4, "file {i}");
        }
        // More files than a record keeps: the first WRITTEN_FILE_LIMIT by path.
        for i in 0..WRITTEN_FILE_LIMIT {
            std::fs::write(l.scratch_dir.join(format!("g{i:03}")), b"x").unwrap();
        }
        let written = capture(&l, &[], &[], &scratch);
        assert_eq!(written.len(), WRITTEN_FILE_LIMIT);
        assert_eq!(written.last().unwrap().path, "/tmp/g056");
    }

    /// What a candidate can leave in /tmp without opening anything (mkdir, symlink, mknod):
    /// each is captured with its kind, a symlink with its target.
    #[test]
    fn entries_of_every_kind_left_in_the_scratch_are_captured() {
        let (_d, l) = layout();
        let scratch = scratch_listing(&l);
        let tmp = &l.scratch_dir;
        std::fs::create_dir(tmp.join("d")).unwrap();
        std::os::unix::fs::symlink("/evidence/journal.tar", tmp.join("l")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            tmp.join("p"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        // The sentinel's marker is the marker check's; the directory it is in is not.
        std::fs::create_dir_all(l.sentinel_marker.parent().unwrap()).unwrap();
        std::fs::write(&l.sentinel_marker, b"pid=1").unwrap();
        let written = capture(&l, &[], &[], &scratch);
        let got: Vec<(&str, Option<&str>)> = written
            .iter()
            .map(|w| (w.path.as_str(), w.kind.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("/tmp/d", Some("dir")),
                ("/tmp/l", Some("symlink")),
                ("/tmp/p", Some("fifo")),
                ("/tmp/scopebox-sentinel", Some("dir")),
            ]
        );
        assert_eq!(
            decode_base64(&written[1].content_base64).unwrap(),
            b"/evidence/journal.tar"
        );
        assert_eq!(written[0].sha256, sha256_hex(b""));
        // Listed again unchanged, nothing is new.
        let now = scratch_listing(&l);
        assert!(capture(&l, &[], &[], &now).is_empty());
    }

    #[test]
    fn a_large_file_is_kept_up_to_the_limit_and_marked_truncated() {
        let (_d, l) = layout();
        let scratch = scratch_listing(&l);
        let big = vec![b'x'; WRITTEN_CONTENT_LIMIT + 10];
        std::fs::write(l.scratch_dir.join("big"), &big).unwrap();
        let written = capture(&l, &[], &[], &scratch);
        assert_eq!(written.len(), 1);
        assert!(written[0].truncated);
        assert_eq!(written[0].size, big.len() as u64);
        assert_eq!(
            decode_base64(&written[0].content_base64).unwrap().len(),
            WRITTEN_CONTENT_LIMIT
        );
    }
}
