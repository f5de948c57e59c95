//! Selecting the project root: the one place that follows symlinks on
//! purpose. The argument is refused when empty, missing or not a directory;
//! otherwise it is kept in three spellings (as given, absolute-lexical,
//! canonical).
//!
//! It must never read a file and never print OS error text: failures are
//! [`RootError`] values with fixed messages.

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use crate::model::Root;

/// A validated root directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedRoot {
    pub requested: OsString,
    /// `cwd` joined and `.`/`..` removed lexically; symlinks not resolved.
    pub explicit: PathBuf,
    /// `realpath` of the root: a directory.
    pub canonical: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootError {
    Empty,
    CwdUnavailable,
    NotFound,
    NotDirectory,
    PermissionDenied,
    Io,
}

impl RootError {
    /// The closed code `--json` gives it (`refusal::Refused::reason`).
    pub fn code(self) -> &'static str {
        match self {
            RootError::Empty => "empty",
            RootError::CwdUnavailable => "cwd-unavailable",
            RootError::NotFound => "not-found",
            RootError::NotDirectory => "not-directory",
            RootError::PermissionDenied => "permission-denied",
            RootError::Io => "io-error",
        }
    }

    /// A lowercase message; `shown` is the already-sanitized argument.
    pub fn message(self, shown: &str) -> String {
        match self {
            RootError::Empty => {
                "the root argument is empty\nhint: use . to select the current directory".into()
            }
            RootError::CwdUnavailable => {
                "the current directory cannot be determined\nhint: give an absolute root".into()
            }
            RootError::NotFound => format!("root does not exist: {shown}"),
            RootError::NotDirectory => format!("root is not a directory: {shown}"),
            RootError::PermissionDenied => {
                format!("root cannot be accessed (permission-denied): {shown}")
            }
            RootError::Io => format!("root cannot be accessed (io-error): {shown}"),
        }
    }
}

/// Validate `arg` (relative to `cwd`) as a project root.
pub fn select(arg: &OsStr, cwd: Option<&Path>) -> Result<SelectedRoot, RootError> {
    if arg.is_empty() {
        return Err(RootError::Empty);
    }
    let given = Path::new(arg);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        cwd.ok_or(RootError::CwdUnavailable)?.join(given)
    };
    // The kernel resolves the path as given (`a/..` after following `a`);
    // the explicit spelling is only lexical.
    let canonical = std::fs::canonicalize(&joined).map_err(io_error)?;
    let meta = std::fs::metadata(&canonical).map_err(io_error)?;
    if !meta.is_dir() {
        return Err(RootError::NotDirectory);
    }
    Ok(SelectedRoot {
        requested: arg.to_os_string(),
        explicit: lexical_normalize(&joined),
        canonical,
    })
}

fn io_error(e: std::io::Error) -> RootError {
    match e.kind() {
        std::io::ErrorKind::NotFound => RootError::NotFound,
        std::io::ErrorKind::PermissionDenied => RootError::PermissionDenied,
        _ if e.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error()) => {
            RootError::NotFound
        }
        _ => RootError::Io,
    }
}

/// Remove `.` and resolve `..` against the preceding component, without
/// touching the filesystem (`/..` stays `/`).
pub fn lexical_normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

impl SelectedRoot {
    pub fn to_model(&self) -> Root {
        Root {
            requested: self.requested.to_string_lossy().into_owned(),
            explicit: self.explicit.to_string_lossy().into_owned(),
            canonical: self.canonical.to_string_lossy().into_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_normalization() {
        let n = |s: &str| {
            lexical_normalize(Path::new(s))
                .to_string_lossy()
                .into_owned()
        };
        assert_eq!(n("/a/./b/../c/"), "/a/c");
        assert_eq!(n("/.."), "/");
        assert_eq!(n("/a/b/.."), "/a");
        assert_eq!(n("/"), "/");
    }

    #[test]
    fn refusals() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("file");
        std::fs::write(&f, b"").unwrap();
        assert_eq!(
            select(OsStr::new(""), Some(t.path())),
            Err(RootError::Empty)
        );
        assert_eq!(
            select(OsStr::new("nope"), Some(t.path())),
            Err(RootError::NotFound)
        );
        assert_eq!(select(f.as_os_str(), None), Err(RootError::NotDirectory));
        assert_eq!(
            select(OsStr::new("file/x"), Some(t.path())),
            Err(RootError::NotFound)
        );
        assert_eq!(
            select(OsStr::new("."), None),
            Err(RootError::CwdUnavailable)
        );
    }

    #[test]
    fn a_symlinked_root_keeps_its_explicit_spelling() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, t.path().join("link")).unwrap();
        let r = select(OsStr::new("./link/"), Some(t.path())).unwrap();
        assert_eq!(r.explicit, t.path().join("link"));
        assert_eq!(r.canonical, std::fs::canonicalize(&real).unwrap());
        assert_eq!(r.requested, OsString::from("./link/"));
    }
}
