//! Small files a person names on the command line — a public or private key PEM, a boundary
//! policy — read whole, bounded, and only when they are regular files. Shared by
//! `scopebox-verify` (`--key`, `--policy`) and `scopebox sign --key`.
//!
//! The file is opened with `O_NONBLOCK` (a FIFO never blocks the open), its type is taken from
//! `fstat` on the opened descriptor (no race with a name swapped after a check), anything but a
//! regular file is refused before a byte is read (`/dev/zero`, a FIFO, a directory), and at
//! most `limit + 1` bytes are ever read, so a file beyond the limit is refused, never held. The
//! path is the one the person gave: a symbolic link to a regular file is followed, as any tool
//! reading an argument would. It never writes.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The most a key file may hold: an ed25519 PEM is under 200 bytes; this leaves room for
/// comments and other PEM blocks a person keeps beside it.
pub const KEY_LIMIT: u64 = 64 * 1024;

/// The most a boundary policy file may hold (the project's is under 1 KiB).
pub const POLICY_LIMIT: u64 = 1024 * 1024;

/// A file named on the command line that could not be read. Fits "failed to {error}":
/// "read the key release.pub.pem: it is a FIFO, not a regular file".
#[derive(Debug, thiserror::Error)]
#[error("read {what} {}: {kind}", path.display())]
pub struct InputFileError {
    /// What the file is for ("the key", "the policy").
    pub what: &'static str,
    pub path: PathBuf,
    pub kind: InputFileErrorKind,
}

#[derive(Debug, thiserror::Error)]
pub enum InputFileErrorKind {
    #[error("{0}")]
    Io(#[source] std::io::Error),
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    #[error("it is larger than {limit} bytes, the most {what} may hold")]
    TooLarge { limit: u64, what: &'static str },
    #[error("it is not UTF-8 text")]
    NotUtf8,
}

/// The bytes of the regular file at `path`, at most `limit` of them.
pub fn read_bounded(
    path: &Path,
    what: &'static str,
    limit: u64,
) -> Result<Vec<u8>, InputFileError> {
    let fail = |kind| InputFileError {
        what,
        path: path.to_path_buf(),
        kind,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options
        .open(path)
        .map_err(|e| fail(InputFileErrorKind::Io(e)))?;
    let file_type = file
        .metadata()
        .map_err(|e| fail(InputFileErrorKind::Io(e)))?
        .file_type();
    if !file_type.is_file() {
        return Err(fail(InputFileErrorKind::NotRegular(type_name(&file_type))));
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| fail(InputFileErrorKind::Io(e)))?;
    if bytes.len() as u64 > limit {
        return Err(fail(InputFileErrorKind::TooLarge { limit, what }));
    }
    Ok(bytes)
}

/// The same, as UTF-8 text (a PEM).
pub fn read_text(path: &Path, what: &'static str, limit: u64) -> Result<String, InputFileError> {
    let bytes = read_bounded(path, what, limit)?;
    String::from_utf8(bytes).map_err(|_| InputFileError {
        what,
        path: path.to_path_buf(),
        kind: InputFileErrorKind::NotUtf8,
    })
}

fn type_name(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.pem");
        std::fs::write(&path, "pem").unwrap();
        assert_eq!(read_text(&path, "the key", 3).unwrap(), "pem");
        let link = dir.path().join("link.pem");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(read_text(&link, "the key", 3).unwrap(), "pem");
    }

    #[test]
    fn one_byte_over_the_limit_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.pem");
        std::fs::write(&path, "pemx").unwrap();
        let error = read_text(&path, "the key", 3).unwrap_err();
        assert!(matches!(
            error.kind,
            InputFileErrorKind::TooLarge { limit: 3, .. }
        ));
        assert_eq!(
            error.to_string(),
            format!(
                "read the key {}: it is larger than 3 bytes, the most the key may hold",
                path.display()
            )
        );
    }

    #[test]
    fn devices_fifos_and_directories_are_refused_without_reading_or_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        for (path, kind) in [
            (Path::new("/dev/zero"), "a character device"),
            (fifo.as_path(), "a FIFO"),
            (dir.path(), "a directory"),
        ] {
            let error = read_bounded(path, "the policy", POLICY_LIMIT).unwrap_err();
            assert!(
                matches!(error.kind, InputFileErrorKind::NotRegular(k) if k == kind),
                "{error}"
            );
            assert!(error
                .to_string()
                .ends_with(&format!("{kind}, not a regular file")));
        }
    }

    #[test]
    fn a_missing_file_and_non_utf8_text_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let error = read_text(&dir.path().join("absent"), "the key", KEY_LIMIT).unwrap_err();
        assert!(matches!(error.kind, InputFileErrorKind::Io(_)));
        let path = dir.path().join("bin.pem");
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        let error = read_text(&path, "the key", KEY_LIMIT).unwrap_err();
        assert!(matches!(error.kind, InputFileErrorKind::NotUtf8));
    }
}
