//! Fixture trees: clearing the fixture roots, laying out a case's declared entries with exact
//! bytes and modes, and walking the roots into `FixtureObservation`s. The walk never follows a
//! symlink and never opens anything but regular files (a FIFO is only `lstat`ed). To read a
//! file or list a directory the candidate is meant to be denied (mode 0000), the walk grants
//! itself the bit for a moment and restores it — so it must only run while no candidate runs.
//! Every call names its path relative to the fixture root it is below, from inside that root
//! (`inside`): nothing here resolves a path from `/`.
//! This module must never touch a path outside the layout's fixture roots.

use crate::inside::Inside;
use crate::{HarnessError, IoContext, Layout};
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::evidence::FixtureObservation;
use scopebox_schema::judge::{self, DEFAULT_DIR_MODE, DEFAULT_FILE_MODE};
use scopebox_schema::matrix::FixtureEntry;
use std::fs;
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Removes everything below each fixture root (the roots themselves are mount points and
/// stay). Directories are made accessible first, so denied trees can be removed.
pub fn clear(layout: &Layout) -> Result<(), HarnessError> {
    in_each_root(layout, |root| {
        // Children before their directory, so each directory is empty when it is removed.
        visit(root, Path::new("."), true, 0o700, &mut |entry, path| {
            if entry.file_type().is_dir() {
                fs::remove_dir(entry.path()).at("remove", path)
            } else {
                fs::remove_file(entry.path()).at("remove", path)
            }
        })
    })
}

/// Runs `f` with the working directory inside each fixture root in turn (`Inside`), and back
/// where it was at the end.
fn in_each_root(
    layout: &Layout,
    mut f: impl FnMut(&Path) -> Result<(), HarnessError>,
) -> Result<(), HarnessError> {
    let mut inside = remember_working_directory()?;
    for (_, root) in &layout.fixture_roots {
        inside.enter(root).at("enter", root)?;
        f(root)?;
    }
    Ok(())
}

fn remember_working_directory() -> Result<Inside, HarnessError> {
    Inside::new().at("remember the working directory in", Path::new("."))
}

/// Visits every node below `start` (not `start` itself) with `walkdir`, never following a
/// symlink; with `contents_first`, a directory's entries come before it. The working directory
/// is `root` (`Inside`) and `start` is relative to it; `f` gets each entry (its path relative,
/// for the calls) and the absolute path it names (for records and messages). walkdir lists a
/// directory as it reaches it, so a directory whose owner lacks the `unlock` bits (a denied
/// fixture directory, or one the candidate made) shows up as a permission error: it is then
/// given those bits, its subtree visited, and its mode restored (unless `f` removed it).
fn visit(
    root: &Path,
    start: &Path,
    contents_first: bool,
    unlock: u32,
    f: &mut dyn FnMut(&walkdir::DirEntry, &Path) -> Result<(), HarnessError>,
) -> Result<(), HarnessError> {
    let walk = walkdir::WalkDir::new(start)
        .min_depth(1)
        .follow_links(false)
        .contents_first(contents_first);
    for entry in walk {
        let denied = match entry {
            Ok(entry) => {
                f(&entry, &Inside::absolute(root, entry.path()))?;
                continue;
            }
            Err(e) => denied_directory(root, start, e, unlock)?,
        };
        let (dir, perm) = denied;
        let named = Inside::absolute(root, &dir);
        fs::set_permissions(&dir, fs::Permissions::from_mode(perm | unlock))
            .at("unlock", &named)?;
        let result = visit(root, &dir, contents_first, unlock, f);
        match fs::set_permissions(&dir, fs::Permissions::from_mode(perm)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                result?;
                return Err(HarnessError::new("restore mode of", &named, e));
            }
            _ => result?,
        }
    }
    Ok(())
}

/// A walk error that is a directory its owner may not list for want of `unlock` bits: its
/// path and mode. Any other error (or a directory that has the bits and still cannot be
/// listed) is the walk's failure.
fn denied_directory(
    root: &Path,
    start: &Path,
    error: walkdir::Error,
    unlock: u32,
) -> Result<(PathBuf, u32), HarnessError> {
    let path = error.path().unwrap_or(start).to_path_buf();
    let named = Inside::absolute(root, &path);
    let denied = error
        .io_error()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied);
    let io = std::io::Error::from(error);
    if !denied {
        return Err(HarnessError::new("list", &named, io));
    }
    let meta = fs::symlink_metadata(&path).at("inspect", &named)?;
    let perm = meta.mode() & 0o7777;
    if !meta.is_dir() || perm & unlock == unlock {
        return Err(HarnessError::new("list", &named, io));
    }
    Ok((path, perm))
}

/// Creates every entry in order (parents as 0755 directories), then applies the declared
/// modes deepest path first, so a denied directory never blocks writing or chmod below it.
/// The matrix must have been validated (`judge::validate_matrix`).
pub fn lay_out(layout: &Layout, entries: &[FixtureEntry]) -> Result<(), HarnessError> {
    let mut inside = remember_working_directory()?;
    let mut modes: Vec<(&str, u32)> = Vec::new();
    for entry in entries {
        let logical = judge::entry_path(entry);
        let named = layout.host(logical);
        let path = &within(layout, &mut inside, &named)?;
        if let Some(parent) = path.parent() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(DEFAULT_DIR_MODE)
                .create(parent)
                .at("create parent of", &named)?;
        }
        let invalid = |e: String| {
            HarnessError::new(
                "lay out",
                &named,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
            )
        };
        match entry {
            FixtureEntry::File { content, mode, .. } => {
                let bytes = judge::file_bytes(content).map_err(invalid)?;
                fs::write(path, &bytes).at("write", &named)?;
                modes.push((logical, mode_of(mode, DEFAULT_FILE_MODE).map_err(invalid)?));
            }
            FixtureEntry::Dir { mode, .. } => {
                match fs::create_dir(path) {
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => {}
                    other => other.at("create", &named)?,
                }
                modes.push((logical, mode_of(mode, DEFAULT_DIR_MODE).map_err(invalid)?));
            }
            FixtureEntry::Symlink { target, .. } => {
                let target = layout.arg(target);
                std::os::unix::fs::symlink(&target, path).at("symlink", &named)?;
            }
            FixtureEntry::Fifo { mode, .. } => {
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    path,
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o600),
                    0,
                )
                .map_err(std::io::Error::from)
                .at("mkfifo", &named)?;
                modes.push((logical, mode_of(mode, DEFAULT_FILE_MODE).map_err(invalid)?));
            }
        }
    }
    // Deepest first: chmod needs search permission on every parent.
    modes.sort_by_key(|(p, _)| std::cmp::Reverse(p.matches('/').count()));
    for (logical, mode) in modes {
        let named = layout.host(logical);
        let path = within(layout, &mut inside, &named)?;
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).at("chmod", &named)?;
    }
    Ok(())
}

/// `path` as the calls should spell it: relative, with the working directory moved into the
/// fixture root it is below; unchanged when it is below none.
fn within(layout: &Layout, inside: &mut Inside, path: &Path) -> Result<PathBuf, HarnessError> {
    for (_, root) in &layout.fixture_roots {
        if let Some(rel) = Inside::relative(root, path) {
            inside.enter(root).at("enter", root)?;
            return Ok(rel);
        }
    }
    Ok(path.to_path_buf())
}

fn mode_of(mode: &Option<String>, default: u32) -> Result<u32, String> {
    match mode {
        Some(m) => judge::parse_mode(m),
        None => Ok(default),
    }
}

/// Every node below every fixture root, sorted by (logical) path. Symlinks are recorded with
/// the digest of their target text and never followed; FIFOs, sockets and devices are only
/// `lstat`ed. Directories and non-files have size 0 (their sizes are filesystem noise).
pub fn walk(layout: &Layout) -> Result<Vec<FixtureObservation>, HarnessError> {
    let mut out = Vec::new();
    in_each_root(layout, |root| {
        visit(root, Path::new("."), false, 0o500, &mut |entry, named| {
            out.push(observe(layout, entry.path(), named)?);
            Ok(())
        })
    })?;
    out.sort();
    Ok(out)
}

/// One node as the walk records it (its mode as found, before any unlocking): `path` is what
/// the calls use, `named` the absolute path it is recorded (and reported) as.
fn observe(layout: &Layout, path: &Path, named: &Path) -> Result<FixtureObservation, HarnessError> {
    let meta = fs::symlink_metadata(path).at("inspect", named)?;
    let ft = meta.file_type();
    let perm = meta.mode() & 0o7777;
    let (kind, size, sha256) = if ft.is_symlink() {
        let target = fs::read_link(path).at("read link", named)?;
        let text = layout.logical_target(&target);
        (
            "symlink",
            text.len() as u64,
            Some(sha256_hex(text.as_bytes())),
        )
    } else if ft.is_file() {
        let bytes = with_mode_at_least(path, named, perm, 0o400, || read_file(path, named))?;
        // Remembered: the walk after the candidate and the judge find it again by comparing.
        let sha256 = scopebox_schema::digest::sha256_hex_remembered(&bytes);
        ("file", bytes.len() as u64, Some(sha256))
    } else if ft.is_dir() {
        ("dir", 0, None)
    } else if ft.is_fifo() {
        ("fifo", 0, None)
    } else if ft.is_socket() {
        ("socket", 0, None)
    } else {
        ("other", 0, None)
    };
    Ok(FixtureObservation {
        path: layout.logical(named),
        kind: kind.to_string(),
        mode: judge::format_mode(perm),
        size,
        sha256,
    })
}

fn read_file(path: &Path, named: &Path) -> Result<Vec<u8>, HarnessError> {
    let mut bytes = Vec::new();
    fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .at("read", named)?;
    Ok(bytes)
}

/// Runs `f` with `need` added to the owner bits of `path` (reported as `named`) when they are
/// missing, restoring the original mode afterwards whatever `f` returned.
fn with_mode_at_least<T>(
    path: &Path,
    named: &Path,
    perm: u32,
    need: u32,
    f: impl FnOnce() -> Result<T, HarnessError>,
) -> Result<T, HarnessError> {
    if perm & need == need {
        return f();
    }
    fs::set_permissions(path, fs::Permissions::from_mode(perm | need)).at("unlock", named)?;
    let result = f();
    fs::set_permissions(path, fs::Permissions::from_mode(perm)).at("restore mode of", named)?;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use scopebox_schema::matrix::FileContent;
    use std::os::unix::process::CommandExt;

    fn layout() -> (tempfile::TempDir, Layout) {
        crate::scratch_layout()
    }

    fn file(path: &str, content: FileContent, mode: Option<&str>) -> FixtureEntry {
        FixtureEntry::File {
            path: path.into(),
            content,
            mode: mode.map(String::from),
        }
    }

    fn find<'a>(walk: &'a [FixtureObservation], path: &str) -> &'a FixtureObservation {
        walk.iter()
            .find(|o| o.path == path)
            .unwrap_or_else(|| panic!("{path} not in walk: {walk:#?}"))
    }

    fn every_kind() -> Vec<FixtureEntry> {
        vec![
            file("/work/p/.mcp.json", FileContent::Text("{}".into()), None),
            file(
                "/work/p/bom.json",
                FileContent::Base64("77u/e30=".into()),
                Some("0600"),
            ),
            file(
                "/home/node/big.json",
                FileContent::Fill {
                    prefix: "{\"a\":\"".into(),
                    byte: b'x',
                    size: 1_048_577,
                },
                None,
            ),
            file(
                "/work/p/denied/.mcp.json",
                FileContent::Text("{}".into()),
                Some("0000"),
            ),
            FixtureEntry::Dir {
                path: "/work/p/denied".into(),
                mode: Some("0000".into()),
            },
            FixtureEntry::Dir {
                path: "/work/empty".into(),
                mode: None,
            },
            FixtureEntry::Symlink {
                path: "/work/link".into(),
                target: "/work/p".into(),
            },
            FixtureEntry::Symlink {
                path: "/work/dangling".into(),
                target: "nowhere".into(),
            },
            FixtureEntry::Fifo {
                path: "/etc/claude-code/managed-mcp.json".into(),
                mode: None,
            },
        ]
    }

    #[test]
    fn a_large_file_rewritten_between_walks_is_seen_with_its_new_digest() {
        // The hostile candidate's move against the remembered digests: keep the size, change
        // one byte at the end (then one in the middle) of a megabyte fixture between the walks.
        let (_d, l) = layout();
        let size = 1024 * 1024 + 1;
        let entry = file(
            "/work/proj/.mcp.json",
            FileContent::Fill {
                prefix: "{\"mcpServers\":{}}".into(),
                byte: b' ',
                size,
            },
            None,
        );
        lay_out(&l, std::slice::from_ref(&entry)).unwrap();
        let before = walk(&l).unwrap();
        let laid_out = judge::expected_observation(&entry).unwrap();
        assert_eq!(
            find(&before, "/work/proj/.mcp.json").sha256,
            laid_out.sha256
        );
        let host = l.host("/work/proj/.mcp.json");
        let mut bytes = fs::read(&host).unwrap();
        for at in [size as usize - 1, size as usize / 2] {
            bytes[at] = b'}';
            fs::write(&host, &bytes).unwrap();
            let after = walk(&l).unwrap();
            let seen = find(&after, "/work/proj/.mcp.json");
            assert_eq!(seen.size, size);
            assert_eq!(seen.sha256, Some(sha256_hex(&bytes)), "byte {at} changed");
            assert_ne!(seen.sha256, laid_out.sha256, "byte {at} changed");
            // And the judge, asked about the declared fill, still says it was not this.
            assert_eq!(
                judge::layout_failures(std::slice::from_ref(&entry), &after).len(),
                1,
                "byte {at} changed"
            );
        }
    }

    #[test]
    fn every_kind_is_laid_out_with_exact_bytes_and_modes() {
        let (_d, l) = layout();
        let entries = every_kind();
        lay_out(&l, &entries).unwrap();
        let w = walk(&l).unwrap();
        // Each declared entry is observed exactly as the judge expects it.
        for e in &entries {
            let want = judge::expected_observation(e).unwrap();
            let got = find(&w, &want.path);
            assert_eq!(got.kind, want.kind, "{}", want.path);
            assert_eq!(got.sha256, want.sha256, "{}", want.path);
            if want.kind != "symlink" {
                assert_eq!(got.mode, want.mode, "{}", want.path);
            }
            if want.kind == "file" {
                assert_eq!(got.size, want.size, "{}", want.path);
            }
        }
        assert_eq!(find(&w, "/home/node/big.json").size, 1_048_577);
        assert_eq!(find(&w, "/work/p/bom.json").size, 5);
        assert_eq!(find(&w, "/work/p").mode, "0755");
        assert_eq!(find(&w, "/work/p/denied").mode, "0000");
        assert_eq!(find(&w, "/work/p/denied/.mcp.json").mode, "0000");
        // The judge agrees the walk is exactly the declared fixture.
        let case = scopebox_schema::matrix::Case {
            id: "k".into(),
            client: "claude-code".into(),
            description: String::new(),
            args: vec![],
            cwd: None,
            env: Default::default(),
            fixture: entries,
            expect: Default::default(),
            fault: None,
            deadline_ms: None,
        };
        assert_eq!(
            judge::fixture_layout_failures(&case, &w),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_walk_restores_modes_and_is_repeatable() {
        let (_d, l) = layout();
        lay_out(&l, &every_kind()).unwrap();
        let first = walk(&l).unwrap();
        let second = walk(&l).unwrap();
        assert_eq!(first, second);
        let denied = l.host("/work/p/denied");
        assert_eq!(fs::symlink_metadata(&denied).unwrap().mode() & 0o7777, 0);
    }

    #[test]
    fn the_walk_does_not_follow_symlinks_or_open_fifos() {
        let (d, l) = layout();
        // A link out of the fixture roots to a directory with a file in it.
        let outside = d.path().join("outside");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("secret"), "x").unwrap();
        lay_out(
            &l,
            &[
                FixtureEntry::Symlink {
                    path: "/work/out".into(),
                    target: outside.to_string_lossy().into_owned(),
                },
                FixtureEntry::Fifo {
                    path: "/work/pipe".into(),
                    mode: Some("0644".into()),
                },
            ],
        )
        .unwrap();
        // Opening a FIFO with no writer would block this test forever.
        let w = walk(&l).unwrap();
        let paths: Vec<&str> = w.iter().map(|o| o.path.as_str()).collect();
        assert_eq!(paths, ["/work/out", "/work/pipe"]);
        assert_eq!(find(&w, "/work/out").kind, "symlink");
        assert_eq!(
            find(&w, "/work/out").sha256,
            Some(sha256_hex(outside.to_string_lossy().as_bytes()))
        );
        assert_eq!(find(&w, "/work/pipe").kind, "fifo");
    }

    #[test]
    fn absolute_symlink_targets_are_recorded_in_matrix_spelling() {
        let (_d, l) = layout();
        lay_out(
            &l,
            &[FixtureEntry::Symlink {
                path: "/work/l".into(),
                target: "/work/real".into(),
            }],
        )
        .unwrap();
        // On disk the target is rebased; the walk maps it back.
        assert_eq!(
            fs::read_link(l.host("/work/l")).unwrap(),
            l.host("/work/real")
        );
        let w = walk(&l).unwrap();
        assert_eq!(find(&w, "/work/l").sha256, Some(sha256_hex(b"/work/real")));
    }

    #[test]
    fn clear_removes_denied_trees_but_keeps_the_roots() {
        let (_d, l) = layout();
        lay_out(&l, &every_kind()).unwrap();
        clear(&l).unwrap();
        assert_eq!(walk(&l).unwrap(), vec![]);
        for (_, root) in &l.fixture_roots {
            assert!(root.is_dir());
        }
    }

    /// Set to a directory: `nested_denied_directories_...` runs its body there (it is then the
    /// test binary re-run as uid 1000 by the same test running as root).
    const AS_OWNER_DIR: &str = "SCOPEBOX_TEST_DENIED_WALK_DIR";

    /// A denied directory inside a denied directory (as a candidate could leave behind, with
    /// modes the matrix never declared): every level is recorded with its own mode, given
    /// back its mode afterwards, and removed by `clear`. Root reads through any mode, so as
    /// root the test re-runs itself as uid 1000 (the container's user), for whom the modes
    /// really deny and the walk must unlock.
    #[test]
    fn nested_denied_directories_are_walked_restored_and_cleared() {
        if let Some(dir) = std::env::var_os(AS_OWNER_DIR) {
            let layout = Layout::rebased(
                Path::new(&dir),
                Path::new("/nonexistent"),
                Path::new("/nonexistent"),
            )
            .unwrap();
            return denied_walk(&layout);
        }
        if !rustix::process::geteuid().is_root() {
            let (_d, l) = layout();
            return denied_walk(&l);
        }
        let dir = tempfile::tempdir().unwrap();
        let owner = tempfile::tempdir().unwrap();
        std::os::unix::fs::chown(dir.path(), Some(1000), Some(1000)).unwrap();
        fs::set_permissions(owner.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "fixture::tests::nested_denied_directories_are_walked_restored_and_cleared",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(AS_OWNER_DIR, dir.path())
            .current_dir(owner.path())
            .uid(1000)
            .gid(1000)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("1 passed"),
            "as uid 1000: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn denied_walk(l: &Layout) {
        let outer = l.host("/work/p/outer");
        let inner = outer.join("inner");
        fs::create_dir_all(&inner).unwrap();
        fs::write(inner.join("x.json"), "{}").unwrap();
        for (path, mode) in [(inner.join("x.json"), 0o000), (inner.clone(), 0o100)] {
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        }
        fs::set_permissions(&outer, fs::Permissions::from_mode(0o300)).unwrap();
        if !rustix::process::geteuid().is_root() {
            assert!(fs::read_dir(&outer).is_err(), "the mode really denies");
        }
        let w = walk(l).unwrap();
        assert_eq!(find(&w, "/work/p/outer").mode, "0300");
        assert_eq!(find(&w, "/work/p/outer/inner").mode, "0100");
        let file = find(&w, "/work/p/outer/inner/x.json");
        assert_eq!((file.mode.as_str(), file.size), ("0000", 2));
        assert_eq!(fs::symlink_metadata(&outer).unwrap().mode() & 0o7777, 0o300);
        fs::set_permissions(&outer, fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(fs::symlink_metadata(&inner).unwrap().mode() & 0o7777, 0o100);
        fs::set_permissions(&outer, fs::Permissions::from_mode(0o000)).unwrap();
        clear(l).unwrap();
        assert_eq!(walk(l).unwrap(), vec![]);
    }

    #[test]
    fn a_second_lay_out_over_leftovers_fails_loudly() {
        let (_d, l) = layout();
        let entries = [file("/work/a", FileContent::Text("x".into()), None)];
        lay_out(&l, &entries).unwrap();
        let err = lay_out(
            &l,
            &[FixtureEntry::Symlink {
                path: "/work/a".into(),
                target: "x".into(),
            }],
        )
        .unwrap_err();
        assert_eq!(err.action, "symlink");
        assert_eq!(err.path, l.host("/work/a"));
    }
}
