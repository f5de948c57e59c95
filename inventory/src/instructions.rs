//! Instruction-file candidates: metadata only. A candidate is probed with
//! `lstat` + `access` through [`crate::read::probe_file`] (same no-follow
//! walk as configuration reads), giving its state and size.
//!
//! This module must never open an instruction file for reading: contents and
//! imports are never read, and applicability is always `unknown`.

use std::path::Path;

use crate::model::{FileState, Instruction, Reason};
use crate::read::probe_file;

/// Probe one candidate `base/name`, where `name` may contain `/`
/// (e.g. `.claude/CLAUDE.md`); every component below `base` is no-follow.
pub fn probe(scope: &'static str, base: &Path, name: &'static str) -> Instruction {
    let rel: Vec<&str> = name.split('/').collect();
    let (state, reason, bytes) = match probe_file(base, &rel) {
        Ok(size) => (FileState::Present, None, Some(size)),
        Err(u) => (u.state, u.reason, None),
    };
    Instruction {
        client: None,
        scope,
        path: base.join(name).to_string_lossy().into_owned(),
        name,
        state,
        reason,
        bytes,
        applicability: "unknown",
    }
}

/// A candidate that cannot be probed because HOME is unknown.
pub fn home_unknown(scope: &'static str, name: &'static str) -> Instruction {
    Instruction {
        client: None,
        scope,
        path: format!("~/{name}"),
        name,
        state: FileState::Unreadable,
        reason: Some(Reason::HomeNotSet),
        bytes: None,
        applicability: "unknown",
    }
}

/// The root (`project`) and each of its ancestors through `/` (`ancestor`),
/// nearest first. `root` should be canonical, so no level is a symlink.
pub fn levels(root: &Path) -> impl Iterator<Item = (&'static str, &Path)> {
    root.ancestors()
        .enumerate()
        .map(|(i, dir)| (if i == 0 { "project" } else { "ancestor" }, dir))
}

/// Probe every `names` candidate at every level, levels nearest first and
/// names in the given order.
pub fn probe_levels(root: &Path, names: &[&'static str]) -> Vec<Instruction> {
    levels(root)
        .flat_map(|(scope, dir)| names.iter().map(move |n| probe(scope, dir, n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_walk_to_the_filesystem_root() {
        let l: Vec<_> = levels(Path::new("/a/b")).collect();
        assert_eq!(
            l,
            vec![
                ("project", Path::new("/a/b")),
                ("ancestor", Path::new("/a")),
                ("ancestor", Path::new("/"))
            ]
        );
        assert_eq!(levels(Path::new("/")).count(), 1);
    }

    #[test]
    fn probing_reports_size_and_never_needs_read_access() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join(".claude")).unwrap();
        std::fs::write(t.path().join(".claude/CLAUDE.md"), b"hello").unwrap();
        let i = probe("project", t.path(), ".claude/CLAUDE.md");
        assert_eq!(
            (i.state, i.bytes, i.reason),
            (FileState::Present, Some(5), None)
        );
        assert_eq!(i.path, t.path().join(".claude/CLAUDE.md").to_string_lossy());
        let m = probe("project", t.path(), "AGENTS.md");
        assert_eq!((m.state, m.bytes), (FileState::Missing, None));
    }
}
