//! Writing the evidence directory's files: each one created new, never written through
//! whatever is at its path already. A candidate runs with the runner's uid and can reach the
//! evidence volume with calls that open nothing and so give the kernel witness nothing to report
//! (`mkdir`, `mknod`, `symlink`): had it planted a FIFO where the runner writes next, a plain
//! write would block until the deadline; a symlink would take the record elsewhere. Creating
//! with `O_CREAT|O_EXCL` follows no symlink and opens no FIFO: a planted path is refused, and
//! the run stops naming it.
//! This module must never truncate, replace or append to a file that exists.

use crate::{HarnessError, IoContext};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` as the new file `path` (its parents made as needed); an existing entry at
/// `path`, of any kind, is refused.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), HarnessError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).at("create", parent)?;
    }
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(HarnessError::new(
                "write",
                path,
                std::io::Error::other(
                    "something is at its path already: something else than the runner made it (a candidate can reach the evidence volume)",
                ),
            ))
        }
        Err(e) => return Err(HarnessError::new("write", path, e)),
    };
    file.write_all(bytes).at("write", path)
}

/// `value` as pretty JSON ending in a newline, written as the new file `path` (`write`).
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), HarnessError> {
    let mut json = serde_json::to_vec_pretty(value).expect("evidence records serialize");
    json.push(b'\n');
    write(path, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_written_with_its_parents() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("controls/x/record.json");
        write_json(&path, &serde_json::json!({"a": 1})).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\n  \"a\": 1\n}\n");
    }

    /// What a candidate can plant without opening anything: each is refused at once (a FIFO
    /// would block a plain write for ever), and nothing is written through a link.
    #[test]
    fn whatever_is_planted_at_the_path_is_refused_never_written_through() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("elsewhere");
        type Plant = fn(&Path, &Path);
        let plants: [(&str, Plant); 4] = [
            ("fifo", |p, _| {
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    p,
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o600),
                    0,
                )
                .unwrap()
            }),
            ("symlink", |p, t| std::os::unix::fs::symlink(t, p).unwrap()),
            ("dangling symlink", |p, _| {
                std::os::unix::fs::symlink("/nonexistent/x", p).unwrap()
            }),
            ("directory", |p, _| std::fs::create_dir(p).unwrap()),
        ];
        for (i, (what, plant)) in plants.into_iter().enumerate() {
            let path = t.path().join(format!("summary-{i}.json"));
            plant(&path, &target);
            let err = write(&path, b"{}").unwrap_err();
            assert_eq!(err.path, path, "{what}");
            assert!(
                err.source
                    .to_string()
                    .contains("something else than the runner made it"),
                "{what}: {}",
                err.source
            );
            assert!(!target.exists(), "{what}: written through");
        }
    }
}
