//! Fixture trees: clearing the fixture roots, laying out a case's declared entries with exact
//! bytes and modes, and walking the roots into `FixtureObservation`s. The walk never follows a
//! symlink and never opens anything but regular files (a FIFO is only `lstat`ed). To read a
//! file or list a directory the candidate is meant to be denied (mode 0000), the walk grants
//! itself the bit for a moment and restores it — so it must only run while no candidate runs.
//! Every call names its path relative to the fixture root it is below, from inside that root
//! (`inside`): nothing here resolves a path from `/`. A walk is bounded (`WALK_NODE_LIMIT`,
//! `WALK_DEPTH_LIMIT`, `WALK_PATH_BYTES_LIMIT`): the walk after a run says where it stopped and
//! why instead of failing (`walk_after`), and clearing removes a tree of any depth through
//! directory descriptors, so a candidate that leaves a tree deeper than any path can name, or a
//! fixture root it locked, fails its own case and never the runner. The scratch tmpfs (`/tmp`)
//! is emptied the same way before each case (`clear_scratch`).
//! This module must never touch a path outside the layout's fixture roots and scratch tmpfs.

use crate::inside::Inside;
use crate::{HarnessError, IoContext, Layout};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::evidence::{
    FixtureObservation, WALK_DEPTH_LIMIT, WALK_NODE_LIMIT, WALK_PATH_BYTES_LIMIT,
};
use scopebox_schema::judge::{self, DEFAULT_DIR_MODE, DEFAULT_FILE_MODE};
use scopebox_schema::matrix::FixtureEntry;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{CStr, CString};
use std::fs;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The owner bits a walk gives itself for a moment to list a directory it may not.
const WALK_UNLOCK: u32 = 0o500;
/// Directories open at once while clearing a tree; a deeper one is first moved up to the
/// fixture root (`clear_below_working_directory`).
const CLEAR_OPEN_LIMIT: usize = 32;
/// What a directory moved up to the fixture root while clearing is named (with a number).
const LIFTED_NAME: &str = ".scopebox-lifted-";

/// Removes everything below each fixture root (the roots themselves are mount points and
/// stay), whatever its depth and modes, and gives each root back the mode it had when the
/// runner first entered it.
pub fn clear(layout: &Layout) -> Result<(), HarnessError> {
    in_each_root(layout, |root, _| {
        clear_below_working_directory().at("clear", root)
    })
}

/// Empties the scratch tmpfs (`Layout::scratch_dir`, the candidate's `/tmp`), whatever was left
/// in it and however deep, so that every case and run starts from the same empty scratch and
/// nothing a candidate left there reaches the next one. It gives the scratch root back the mode
/// it had when first entered, as `clear` does each fixture root.
pub fn clear_scratch(layout: &Layout) -> Result<(), HarnessError> {
    let mut inside = remember_working_directory()?;
    let root = &layout.scratch_dir;
    enter_as_first_found(&mut inside, root)?;
    clear_below_working_directory().at("clear", root)
}

/// Runs `f` with the working directory inside each fixture root in turn (`Inside`), and back
/// where it was at the end. A root whose mode is not the one it had when the runner first
/// entered it (a candidate may `chmod` a root it owns) gets that mode back first, and `f` is
/// told (the change, as the walk after a run records it).
fn in_each_root(
    layout: &Layout,
    mut f: impl FnMut(&Path, Option<HarnessError>) -> Result<(), HarnessError>,
) -> Result<(), HarnessError> {
    let mut inside = remember_working_directory()?;
    for (_, root) in &layout.fixture_roots {
        let changed = enter_as_first_found(&mut inside, root)?;
        f(root, changed)?;
    }
    Ok(())
}

thread_local! {
    /// Each fixture root's mode when this thread first entered it.
    static FIRST_ROOT_MODES: RefCell<Vec<(PathBuf, u32)>> = const { RefCell::new(Vec::new()) };
}

/// Enters `root`, giving it back its first mode when it has another (by its path when the
/// change keeps its owner out, from inside otherwise): what it had instead, as a problem.
fn enter_as_first_found(
    inside: &mut Inside,
    root: &Path,
) -> Result<Option<HarnessError>, HarnessError> {
    let first = FIRST_ROOT_MODES.with(|m| {
        m.borrow()
            .iter()
            .find(|(r, _)| r == root)
            .map(|(_, mode)| *mode)
    });
    let mut found = None;
    if let Err(e) = inside.enter(root) {
        let Some(first) = first.filter(|_| e.kind() == std::io::ErrorKind::PermissionDenied) else {
            return Err(HarnessError::new("enter", root, e));
        };
        let mode = fs::symlink_metadata(root).at("inspect", root)?.mode() & 0o7777;
        found = Some(mode);
        fs::set_permissions(root, fs::Permissions::from_mode(first)).at("restore mode of", root)?;
        inside.enter(root).at("enter", root)?;
    }
    let here = Path::new(".");
    let mode = match found {
        Some(mode) => mode,
        None => fs::symlink_metadata(here).at("inspect", root)?.mode() & 0o7777,
    };
    let Some(first) = first else {
        FIRST_ROOT_MODES.with(|m| m.borrow_mut().push((root.to_path_buf(), mode)));
        return Ok(None);
    };
    if mode == first {
        return Ok(None);
    }
    if found.is_none() {
        // (A root that kept its owner out was given its mode back above, by its path.)
        fs::set_permissions(here, fs::Permissions::from_mode(first)).at("restore mode of", root)?;
    }
    Ok(Some(HarnessError::new(
        "mode of fixture root",
        root,
        std::io::Error::other(format!(
            "{mode:04o}, not {first:04o} as before (given back)"
        )),
    )))
}

fn remember_working_directory() -> Result<Inside, HarnessError> {
    Inside::new().at("remember the working directory in", Path::new("."))
}

/// Removes everything below the working directory (a fixture root), every call relative to an
/// open directory, so no path grows with the tree: at most `CLEAR_OPEN_LIMIT` directories are
/// open at once, and a directory below that many is first moved up to the root under a fresh
/// name (`LIFTED_NAME`) and removed from there. Each directory is given its owner's `rwx`
/// before it is opened, so a denied tree is removed too. Only while no candidate runs.
fn clear_below_working_directory() -> std::io::Result<()> {
    let root = open_directory(rustix::fs::CWD, c".")?;
    // The open directories below the root, each with its name in the one above it.
    let mut open: Vec<(OwnedFd, CString)> = Vec::new();
    let mut lifted: u64 = 0;
    loop {
        let here = open.last().map_or(root.as_fd(), |(fd, _)| fd.as_fd());
        match unlink_all_but_a_directory(here)? {
            Some(name) => {
                rustix::fs::chmodat(here, &name, Mode::RWXU, AtFlags::empty())?;
                if open.len() < CLEAR_OPEN_LIMIT {
                    let fd = open_directory(here, &name)?;
                    open.push((fd, name));
                    continue;
                }
                loop {
                    let to = format!("{LIFTED_NAME}{lifted}");
                    lifted += 1;
                    match rustix::fs::renameat_with(here, &name, &root, to, RenameFlags::NOREPLACE)
                    {
                        Err(rustix::io::Errno::EXIST) => continue,
                        other => break other?,
                    }
                }
            }
            None => {
                let Some((fd, name)) = open.pop() else {
                    return Ok(());
                };
                drop(fd);
                let parent = open.last().map_or(root.as_fd(), |(fd, _)| fd.as_fd());
                rustix::fs::unlinkat(parent, &name, AtFlags::REMOVEDIR)?;
            }
        }
    }
}

fn open_directory(at: BorrowedFd<'_>, name: &CStr) -> std::io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        at,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Unlinks every entry of `dir` that is not a directory, up to the first directory, whose name
/// it returns; `None` once `dir` is empty.
fn unlink_all_but_a_directory(dir: BorrowedFd<'_>) -> std::io::Result<Option<CString>> {
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        let is_dir = match entry.file_type() {
            rustix::fs::FileType::Directory => true,
            rustix::fs::FileType::Unknown => {
                let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
                rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::Directory
            }
            _ => false,
        };
        if is_dir {
            return Ok(Some(name.to_owned()));
        }
        rustix::fs::unlinkat(dir, name, AtFlags::empty())?;
    }
    Ok(None)
}

/// Levels of `path` (relative, `./a/b`) below the walk's start: `./a` is 1.
fn level(path: &Path) -> usize {
    path.components().count().saturating_sub(1)
}

/// Visits every node below `start` (not `start` itself) with `walkdir`, never following a
/// symlink, down to one level past `WALK_DEPTH_LIMIT` (for `f` to see that the tree goes
/// deeper). The working directory is `root` (`Inside`) and `start` is relative to it; `f` gets
/// each entry (its path relative, for the calls) and the absolute path it names (for records
/// and messages). walkdir lists a directory as it reaches it, so a directory whose owner lacks
/// the `WALK_UNLOCK` bits (a denied fixture directory, or one the candidate made) shows up as a
/// permission error: it is then given those bits, its subtree visited, and its mode restored.
fn visit(
    root: &Path,
    start: &Path,
    f: &mut dyn FnMut(Visited<'_>, &Path) -> Result<(), HarnessError>,
) -> Result<(), HarnessError> {
    let walk = walkdir::WalkDir::new(start)
        .min_depth(1)
        .max_depth((WALK_DEPTH_LIMIT + 1).saturating_sub(level(start)))
        .follow_links(false);
    for entry in walk {
        let denied = match entry {
            Ok(entry) => {
                f(Visited::Node(&entry), &Inside::absolute(root, entry.path()))?;
                continue;
            }
            Err(e) => denied_directory(root, start, e)?,
        };
        let (dir, perm) = denied;
        let named = Inside::absolute(root, &dir);
        fs::set_permissions(&dir, fs::Permissions::from_mode(perm | WALK_UNLOCK))
            .at("unlock", &named)?;
        let result = visit(root, &dir, f);
        match fs::set_permissions(&dir, fs::Permissions::from_mode(perm)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                result?;
                return Err(HarnessError::new("restore mode of", &named, e));
            }
            Err(_) => result?,
            Ok(()) => {
                result?;
                f(Visited::Relocked(&dir), &named)?;
            }
        }
    }
    Ok(())
}

/// What `visit` tells its callback of.
enum Visited<'a> {
    /// A node below the start, as walkdir found it.
    Node(&'a walkdir::DirEntry),
    /// A directory the walk unlocked to list it, once its mode is given back (its path as the
    /// calls spell it): its change time is not what the walk found any more.
    Relocked(&'a Path),
}

/// A walk error that is a directory its owner may not list for want of `WALK_UNLOCK` bits: its
/// path and mode. Any other error (or a directory that has the bits and still cannot be
/// listed) is the walk's failure.
fn denied_directory(
    root: &Path,
    start: &Path,
    error: walkdir::Error,
) -> Result<(PathBuf, u32), HarnessError> {
    let unlock = WALK_UNLOCK;
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

/// Every node below every fixture root, sorted by (logical) path, as the case laid them out:
/// the walk before a run, which must be whole (a bound reached or an entry it cannot read is
/// the harness's failure; the matrix's bounds keep a declared tree within half of the walk's).
/// Symlinks are recorded with the digest of their target text and never followed; FIFOs,
/// sockets and devices are only `lstat`ed. Directories and non-files have size 0 (their sizes
/// are filesystem noise).
pub fn walk(layout: &Layout) -> Result<Vec<FixtureObservation>, HarnessError> {
    Ok(walk_before(layout)?.nodes)
}

/// The walk before a run (`walk`), with what the walk after it compares beyond the records.
pub struct WalkBefore {
    pub nodes: Vec<FixtureObservation>,
    inodes: BTreeMap<String, Inode>,
}

/// `walk`, keeping what `walk_after` compares its nodes' times and extended attributes with.
pub fn walk_before(layout: &Layout) -> Result<WalkBefore, HarnessError> {
    let walk = bounded_walk(layout)?;
    match walk.problems.into_iter().next() {
        None => Ok(WalkBefore {
            nodes: walk.nodes,
            inodes: walk.inodes,
        }),
        Some(problem) => Err(problem),
    }
}

/// The walk after a run (`CaseRecord::fixtures_after` and `fixtures_after_problems`).
#[derive(Debug)]
pub struct WalkAfter {
    /// What the walk saw, sorted by path: the whole tree when `problems` is empty.
    pub nodes: Vec<FixtureObservation>,
    /// Where and why it did not see the whole tree as the case laid it out: a bound reached, an
    /// entry it could not read, a fixture root whose mode was changed (and given back).
    pub problems: Vec<String>,
}

/// The walk after a run, which never fails: whatever the candidate left (a tree past the
/// walk's bounds, deeper than a path can name, a root it locked), it records what it saw and
/// why it stopped, and the case fails for it (`judge`), not the runner. A node that looks as it
/// did `before` but whose times or extended attributes the run changed (calls that open
/// nothing: `utimensat`, `setxattr`) is a problem too.
pub fn walk_after(layout: &Layout, before: &WalkBefore) -> WalkAfter {
    let problem =
        |e: &HarnessError| format!("{} {}: {}", e.action, layout.logical(&e.path), e.source);
    let walk = match bounded_walk(layout) {
        Ok(walk) => walk,
        Err(e) => {
            return WalkAfter {
                nodes: Vec::new(),
                problems: vec![problem(&e)],
            }
        }
    };
    let mut problems: Vec<String> = walk.problems.iter().map(problem).collect();
    let looked_before: BTreeMap<&str, &FixtureObservation> =
        before.nodes.iter().map(|n| (n.path.as_str(), n)).collect();
    let looked_after: BTreeSet<&str> = walk.nodes.iter().map(|n| n.path.as_str()).collect();
    // The directories an entry was added to or removed from (their times changed with it).
    let entries_changed: BTreeSet<&str> = looked_before
        .keys()
        .copied()
        .filter(|p| !looked_after.contains(p))
        .chain(
            looked_after
                .iter()
                .copied()
                .filter(|p| !looked_before.contains_key(p)),
        )
        .filter_map(|p| p.rfind('/').map(|at| &p[..at]))
        .collect();
    for node in &walk.nodes {
        let path = node.path.as_str();
        let (Some(was), Some(now)) = (before.inodes.get(path), walk.inodes.get(path)) else {
            continue;
        };
        let changed = was.changes(now, !entries_changed.contains(path));
        if looked_before.get(path) == Some(&node) && !changed.is_empty() {
            problems.push(format!(
                "fixture {path}: its {} changed, though what the walk records of it did not",
                changed.join(" and ")
            ));
        }
    }
    WalkAfter {
        nodes: walk.nodes,
        problems,
    }
}

struct BoundedWalk {
    nodes: Vec<FixtureObservation>,
    /// What the walk noted of each node besides its observation, by logical path.
    inodes: BTreeMap<String, Inode>,
    problems: Vec<HarnessError>,
}

/// What a walk notes of a node that its observation does not record: its timestamps and
/// extended attributes, held in the runner's memory only (they differ from run to run, and
/// records must not). The walk after a run compares them with the walk before, to see what
/// calls that open nothing (`utimensat`, `setxattr`) did to a node that still looks the same.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Inode {
    /// Change time (seconds, nanoseconds) as the walk found the node.
    ctime_found: (i64, i64),
    /// Change time as the walk left the node: after it gave back a mode it had unlocked, which
    /// changes it (the walk after a run compares what it finds with what the walk before left).
    ctime_left: (i64, i64),
    /// Modification time (seconds, nanoseconds).
    mtime: (i64, i64),
    /// sha256 of the extended attributes' names and values, in order; `None` where they cannot
    /// be read (a node whose mode denies it, a kind that has none).
    xattrs: Option<String>,
}

impl Inode {
    fn of(meta: &fs::Metadata, xattrs: Option<String>) -> Inode {
        let ctime = (meta.ctime(), meta.ctime_nsec());
        Inode {
            ctime_found: ctime,
            ctime_left: ctime,
            mtime: (meta.mtime(), meta.mtime_nsec()),
            xattrs,
        }
    }

    /// What differs between `self` (before) and `after`, as the walk after names it. `times`
    /// is false for a directory an entry was added to or removed from: that changes its times,
    /// and the walk reports the entry itself.
    fn changes(&self, after: &Inode, times: bool) -> Vec<&'static str> {
        let mut changed = Vec::new();
        if self.xattrs != after.xattrs {
            changed.push("extended attributes");
        }
        if times {
            if self.mtime != after.mtime {
                changed.push("modification time");
            } else if self.ctime_left != after.ctime_found {
                changed.push("inode change time");
            }
        }
        changed
    }
}

/// sha256 of the extended attributes of `path` (not following a symlink): names and values,
/// in the order listed; `None` when they cannot be read.
fn xattr_digest(path: &Path) -> Option<String> {
    let listed = rustix::fs::llistxattr_query(path).ok()?;
    if listed == 0 {
        // None at all (every fixture node, unless something tagged it): one call.
        return Some(sha256_hex(b""));
    }
    let mut names = vec![0u8; listed];
    let len = rustix::fs::llistxattr(path, &mut names[..]).ok()?;
    names.truncate(len);
    let mut all = Vec::new();
    for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = CString::new(name).ok()?;
        let mut value = vec![0u8; rustix::fs::lgetxattr_query(path, &name).ok()?];
        let len = rustix::fs::lgetxattr(path, &name, &mut value[..]).ok()?;
        value.truncate(len);
        for part in [name.as_bytes(), &value[..]] {
            all.extend_from_slice(&(part.len() as u64).to_le_bytes());
            all.extend_from_slice(part);
        }
    }
    Some(sha256_hex(&all))
}

/// Walks each fixture root within the walk's bounds. A root whose walk stops (a bound, an entry
/// it cannot read) adds its problem and the walk goes on with the next root, unless the
/// node or path-text budget, which all roots share, is spent. Err only when a root cannot be
/// entered at all.
fn bounded_walk(layout: &Layout) -> Result<BoundedWalk, HarnessError> {
    let mut nodes = Vec::new();
    let mut inodes: BTreeMap<String, Inode> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut path_bytes = 0usize;
    let mut spent = false;
    in_each_root(layout, |root, changed| {
        problems.extend(changed);
        if spent {
            return Ok(());
        }
        let walked = visit(root, Path::new("."), &mut |visited, named| {
            let entry = match visited {
                Visited::Node(entry) => entry,
                Visited::Relocked(dir) => {
                    let now = fs::symlink_metadata(dir).at("inspect", named)?;
                    if let Some(inode) = inodes.get_mut(&layout.logical(named)) {
                        inode.ctime_left = (now.ctime(), now.ctime_nsec());
                    }
                    return Ok(());
                }
            };
            let bound = |what: String| {
                Err(HarnessError::new(
                    "walk",
                    named,
                    std::io::Error::other(what),
                ))
            };
            if level(entry.path()) > WALK_DEPTH_LIMIT {
                return bound(format!(
                    "deeper than {WALK_DEPTH_LIMIT} levels below its fixture root"
                ));
            }
            if nodes.len() == WALK_NODE_LIMIT {
                spent = true;
                return bound(format!(
                    "more than {WALK_NODE_LIMIT} nodes below the fixture roots"
                ));
            }
            let (node, inode) = observe(layout, entry.path(), named)?;
            path_bytes += node.path.len();
            if path_bytes > WALK_PATH_BYTES_LIMIT {
                spent = true;
                return bound(format!(
                    "more than {WALK_PATH_BYTES_LIMIT} bytes of paths below the fixture roots"
                ));
            }
            inodes.insert(node.path.clone(), inode);
            nodes.push(node);
            Ok(())
        });
        problems.extend(walked.err());
        Ok(())
    })?;
    nodes.sort();
    Ok(BoundedWalk {
        nodes,
        inodes,
        problems,
    })
}

/// One node as the walk records it (its mode as found, before any unlocking), and what it
/// notes of it besides (`Inode`: its times as found, and its change time as the walk left it):
/// `path` is what the calls use, `named` the absolute
/// path it is recorded (and reported) as.
fn observe(
    layout: &Layout,
    path: &Path,
    named: &Path,
) -> Result<(FixtureObservation, Inode), HarnessError> {
    let meta = fs::symlink_metadata(path).at("inspect", named)?;
    let ft = meta.file_type();
    let perm = meta.mode() & 0o7777;
    let mut inode = Inode::of(&meta, None);
    let (kind, size, sha256) = if ft.is_symlink() {
        let target = fs::read_link(path).at("read link", named)?;
        let text = layout.logical_target(&target);
        (
            "symlink",
            text.len() as u64,
            Some(sha256_hex(text.as_bytes())),
        )
    } else if ft.is_file() {
        let (bytes, xattrs) = with_mode_at_least(path, named, perm, 0o400, || {
            Ok((read_file(path, named)?, xattr_digest(path)))
        })?;
        inode.xattrs = xattrs;
        if perm & 0o400 == 0 {
            // Unlocking and relocking changed it: the change time to compare is the one now.
            let now = fs::symlink_metadata(path).at("inspect", named)?;
            inode.ctime_left = (now.ctime(), now.ctime_nsec());
        }
        // Remembered: the walk after the candidate and the judge find it again by comparing.
        let sha256 = scopebox_schema::digest::sha256_hex_remembered(&bytes);
        ("file", bytes.len() as u64, Some(sha256))
    } else {
        if ft.is_dir() {
            inode.xattrs = xattr_digest(path);
        }
        // Directories and the rest have size 0 (their sizes are filesystem noise).
        (kind_name(ft), 0, None)
    };
    let node = FixtureObservation {
        path: layout.logical(named),
        kind: kind.to_string(),
        mode: judge::format_mode(perm),
        size,
        sha256,
    };
    Ok((node, inode))
}

/// The name a walk records a node's kind by: `file`, `dir`, `symlink`, `fifo`, `socket` or
/// `other` (the scratch listing and `WrittenFile::kind` use the same names).
pub fn kind_name(ft: fs::FileType) -> &'static str {
    if ft.is_file() {
        "file"
    } else if ft.is_dir() {
        "dir"
    } else if ft.is_symlink() {
        "symlink"
    } else if ft.is_fifo() {
        "fifo"
    } else if ft.is_socket() {
        "socket"
    } else {
        "other"
    }
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
        // A fixture root locked, as a candidate that owns it may: the walk after says so, gives
        // it back its mode (the mode it had when first entered, above) and sees it whole.
        let work = l.host("/work");
        let first = fs::symlink_metadata(&work).unwrap().mode() & 0o7777;
        let before = walk_before(l).unwrap();
        fs::set_permissions(&work, fs::Permissions::from_mode(0o000)).unwrap();
        if !rustix::process::geteuid().is_root() {
            assert!(fs::read_dir(&work).is_err(), "the mode really denies");
        }
        let after = walk_after(l, &before);
        assert_eq!(
            after.problems,
            [format!(
                "mode of fixture root /work: 0000, not {first:04o} as before (given back)"
            )]
        );
        assert_eq!(after.nodes.len(), 4);
        assert_eq!(after.nodes, walk(l).unwrap());
        assert_eq!(fs::symlink_metadata(&work).unwrap().mode() & 0o7777, first);
        // And clearing gives it back too.
        fs::set_permissions(&work, fs::Permissions::from_mode(0o500)).unwrap();
        clear(l).unwrap();
        assert_eq!(fs::symlink_metadata(&work).unwrap().mode() & 0o7777, first);
        assert_eq!(walk(l).unwrap(), vec![]);
    }

    /// `levels` directories named `name`, each inside the one before, below `dir`: made
    /// through directory fds, so no path grows past PATH_MAX while they are made.
    fn nest(dir: &Path, name: &str, levels: usize) {
        let mut at = open_directory(
            rustix::fs::CWD,
            &CString::new(dir.as_os_str().as_encoded_bytes()).unwrap(),
        )
        .unwrap();
        for _ in 0..levels {
            rustix::fs::mkdirat(&at, name, Mode::RWXU).unwrap();
            at = open_directory(at.as_fd(), &CString::new(name).unwrap()).unwrap();
        }
    }

    #[test]
    fn a_tree_deeper_than_a_path_can_name_is_reported_by_the_walk_after_and_cleared() {
        let (_d, l) = layout();
        lay_out(&l, &every_kind()).unwrap();
        let walked = walk_before(&l).unwrap();
        let before = walked.nodes.clone();
        // 3,000 levels: 6,000 bytes of path below /work, past PATH_MAX (4,096).
        nest(&l.host("/work"), "d", 3_000);
        let after = walk_after(&l, &walked);
        let deepest = format!("/work{}", "/d".repeat(WALK_DEPTH_LIMIT + 1));
        assert_eq!(
            after.problems,
            [format!(
                "walk {deepest}: deeper than {WALK_DEPTH_LIMIT} levels below its fixture root"
            )]
        );
        // Everything else is still seen: the walk went on with the other entries and roots.
        for node in &before {
            assert!(after.nodes.contains(node), "{} not seen", node.path);
        }
        let added: Vec<&str> = after
            .nodes
            .iter()
            .filter(|n| !before.contains(n))
            .map(|n| n.path.as_str())
            .collect();
        assert_eq!(added.len(), WALK_DEPTH_LIMIT);
        assert!(walk(&l).is_err(), "the walk before a run must be whole");
        clear(&l).unwrap();
        assert_eq!(walk(&l).unwrap(), vec![]);
        assert_eq!(fs::read_dir(l.host("/work")).unwrap().count(), 0);
    }

    #[test]
    fn clearing_lifts_deep_directories_without_clobbering_a_name_the_candidate_chose() {
        let (_d, l) = layout();
        let work = l.host("/work");
        // A tree four times as deep as clearing keeps open, with files at every level, and a
        // directory already named like the first one clearing lifts.
        nest(&work, "x", CLEAR_OPEN_LIMIT * 4);
        // (Not empty: renaming onto it would fail, where onto an empty one it would replace it.)
        fs::create_dir(work.join(format!("{LIFTED_NAME}0"))).unwrap();
        fs::write(work.join(format!("{LIFTED_NAME}0/mine")), b"").unwrap();
        let mut dir = work.clone();
        for level in 0..CLEAR_OPEN_LIMIT * 4 {
            dir.push("x");
            fs::write(dir.join("f"), level.to_string()).unwrap();
        }
        fs::set_permissions(work.join("x/x"), fs::Permissions::from_mode(0o000)).unwrap();
        clear(&l).unwrap();
        assert_eq!(fs::read_dir(&work).unwrap().count(), 0);
    }

    #[test]
    fn the_scratch_is_emptied_of_every_kind_and_the_fixtures_are_left_alone() {
        let (_d, l) = layout();
        lay_out(&l, &every_kind()).unwrap();
        let fixtures = walk(&l).unwrap();
        let tmp = &l.scratch_dir;
        fs::create_dir_all(tmp.join("scopebox-sentinel")).unwrap();
        fs::write(tmp.join("scopebox-sentinel/fired"), b"pid=1").unwrap();
        std::os::unix::fs::symlink("/evidence/journal.tar", tmp.join("link")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            tmp.join("fifo"),
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        nest(tmp, "deep", CLEAR_OPEN_LIMIT * 2);
        fs::set_permissions(
            tmp.join("scopebox-sentinel"),
            fs::Permissions::from_mode(0o500),
        )
        .unwrap();
        clear_scratch(&l).unwrap();
        assert_eq!(fs::read_dir(tmp).unwrap().count(), 0);
        assert_eq!(walk(&l).unwrap(), fixtures);
    }

    /// What calls that open nothing can change on a node that still looks the same: its times
    /// (`utimensat`, even back to the same values) and its extended attributes. The walk's own
    /// unlocking of denied nodes changes nothing it compares.
    #[test]
    fn times_and_extended_attributes_changed_behind_an_unchanged_node_are_problems() {
        let (_d, l) = layout();
        lay_out(&l, &every_kind()).unwrap();
        let untouched = walk_before(&l).unwrap();
        assert_eq!(walk_after(&l, &untouched).problems, Vec::<String>::new());

        let before = walk_before(&l).unwrap();
        let config = l.host("/work/p/.mcp.json");
        let old = rustix::fs::Timestamps {
            last_access: rustix::fs::Timespec {
                tv_sec: 1,
                tv_nsec: 0,
            },
            last_modification: rustix::fs::Timespec {
                tv_sec: 1,
                tv_nsec: 0,
            },
        };
        rustix::fs::utimensat(rustix::fs::CWD, &config, &old, AtFlags::empty()).unwrap();
        let bom = l.host("/work/p/bom.json");
        let meta = fs::symlink_metadata(&bom).unwrap();
        let same = rustix::fs::Timestamps {
            last_access: rustix::fs::Timespec {
                tv_sec: meta.atime(),
                tv_nsec: meta.atime_nsec(),
            },
            last_modification: rustix::fs::Timespec {
                tv_sec: meta.mtime(),
                tv_nsec: meta.mtime_nsec(),
            },
        };
        rustix::fs::utimensat(rustix::fs::CWD, &bom, &same, AtFlags::empty()).unwrap();
        let tagged = l.host("/work/empty");
        let xattrs = rustix::fs::lsetxattr(
            &tagged,
            "user.scopebox",
            b"x",
            rustix::fs::XattrFlags::empty(),
        );
        let after = walk_after(&l, &before);
        let mut expected = vec![
            "fixture /work/p/.mcp.json: its modification time changed, though what the walk records of it did not".to_string(),
            "fixture /work/p/bom.json: its inode change time changed, though what the walk records of it did not".to_string(),
        ];
        // (A filesystem without user extended attributes refuses the tag: nothing to see then.)
        if xattrs.is_ok() {
            expected.push("fixture /work/empty: its extended attributes and inode change time changed, though what the walk records of it did not".to_string());
            expected.sort();
        }
        let mut got = after.problems.clone();
        got.sort();
        assert_eq!(got, expected);
        assert_eq!(after.nodes, before.nodes);

        // A directory made and removed again inside a fixture directory (`mkdir`, `rmdir`: no
        // open) leaves the directory's times changed; an entry added is the walk's to report.
        let before = walk_before(&l).unwrap();
        fs::create_dir(l.host("/work/p/tmp")).unwrap();
        fs::remove_dir(l.host("/work/p/tmp")).unwrap();
        fs::write(l.host("/work/empty/new"), b"").unwrap();
        let after = walk_after(&l, &before);
        assert_eq!(
            after.problems,
            ["fixture /work/p: its modification time changed, though what the walk records of it did not"]
        );
    }

    #[test]
    fn the_walk_after_stops_at_its_node_bound_and_says_so() {
        let (_d, l) = layout();
        let before = walk_before(&l).unwrap();
        for i in 0..WALK_NODE_LIMIT + 10 {
            fs::write(l.host(&format!("/work/f{i:05}")), b"").unwrap();
        }
        fs::write(l.host("/home/node/later"), b"").unwrap();
        let after = walk_after(&l, &before);
        assert_eq!(after.nodes.len(), WALK_NODE_LIMIT);
        assert_eq!(after.problems.len(), 1, "{:?}", after.problems);
        assert!(after.problems[0].ends_with(&format!(
            ": more than {WALK_NODE_LIMIT} nodes below the fixture roots"
        )));
        // The budget is shared: the next root is not walked once it is spent.
        assert!(!after.nodes.iter().any(|n| n.path == "/home/node/later"));
        clear(&l).unwrap();
        assert_eq!(walk(&l).unwrap(), vec![]);
    }

    #[test]
    fn the_walk_after_stops_at_its_path_text_bound_and_says_so() {
        let (_d, l) = layout();
        let before = walk_before(&l).unwrap();
        // Paths of ~3,800 bytes (15 directories of 250-byte names): 600 of them pass 2 MiB.
        let mut dir = l.host("/work");
        for i in 0..15 {
            dir.push(format!("{i:02}{}", "n".repeat(248)));
        }
        fs::create_dir_all(&dir).unwrap();
        for i in 0..600 {
            fs::write(dir.join(format!("f{i:03}")), b"").unwrap();
        }
        let after = walk_after(&l, &before);
        assert_eq!(after.problems.len(), 1, "{:?}", after.problems);
        assert!(after.problems[0].ends_with(&format!(
            ": more than {WALK_PATH_BYTES_LIMIT} bytes of paths below the fixture roots"
        )));
        let bytes: usize = after.nodes.iter().map(|n| n.path.len()).sum();
        assert!(bytes <= WALK_PATH_BYTES_LIMIT && bytes > WALK_PATH_BYTES_LIMIT - 4096);
        clear(&l).unwrap();
        assert_eq!(walk(&l).unwrap(), vec![]);
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
