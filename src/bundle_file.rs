//! The copies of a finished bundle a CI job asks `scopebox run` and `scopebox native` for:
//! `--junit FILE` (its junit.xml) and `--archive FILE.tar.gz` (the bundle directory written once
//! more as a single deterministic file, in the format `scopebox_receipts::bundle_file` defines,
//! which `scopebox-verify` reads back in memory). Both destinations are checked before the run
//! starts; the archive is created exclusively, never overwriting anything.

use crate::exit::CommandError;
use crate::receipt::ReceiptError;
use std::path::{Path, PathBuf};

/// `--junit` and `--archive`, the same flags on every command that writes a bundle.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Copies {
    /// Also write the bundle's JUnit report (junit.xml) to FILE, for CI
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write the whole bundle as one deterministic .tar.gz FILE (scopebox-verify reads it
    /// directly); never overwrites
    #[arg(long, value_name = "FILE.tar.gz")]
    pub archive: Option<PathBuf>,
}

impl Copies {
    /// Refuses, before anything runs, a destination the run could not write at its end.
    pub fn check(&self) -> Result<(), CommandError> {
        if let Some(archive) = &self.archive {
            check_free(archive)?;
            check_destination("--archive", archive)?;
        }
        if let Some(junit) = &self.junit {
            check_destination("--junit", junit)?;
        }
        Ok(())
    }

    /// Writes the JUnit report's copy, when one was asked for.
    pub fn write_junit(&self, junit: &[u8]) -> Result<(), CommandError> {
        if let Some(file) = &self.junit {
            std::fs::write(file, junit).map_err(|source| ReceiptError::Write {
                path: file.clone(),
                source,
            })?;
        }
        Ok(())
    }

    /// Writes the finished bundle at `dir` as one file, when one was asked for.
    pub fn write_archive(&self, dir: &Path) -> Result<(), CommandError> {
        match &self.archive {
            Some(file) => write(dir, file),
            None => Ok(()),
        }
    }

    /// The verifier's replay of the bundle from its bytes alone — from the one file when one
    /// was written: it is what an auditor would be handed.
    pub fn verify(
        &self,
        dir: &Path,
    ) -> Result<scopebox_receipts::verify::Report, scopebox_receipts::verify::BundleError> {
        match &self.archive {
            Some(file) => scopebox_receipts::bundle_file::read_archive(file).and_then(|bundle| {
                scopebox_receipts::verify::verify_loaded(&bundle, &Default::default())
            }),
            None => scopebox_receipts::verify::verify_dir(dir, &Default::default()),
        }
    }
}

/// Refuse an archive path that already exists (checked before anything is run).
fn check_free(file: &Path) -> Result<(), CommandError> {
    if std::fs::symlink_metadata(file).is_ok() {
        return Err(CommandError::Usage(format!(
            "--archive {} already exists; bundles are never overwritten: pass a new file name",
            file.display()
        )));
    }
    Ok(())
}

/// Refuse a file the run would write at its end (`--archive`, `--junit`) into a directory
/// that does not exist or may not be written, or where a directory stands: checked before
/// anything is run, so a run is not spent to fail on its last step.
fn check_destination(flag: &str, file: &Path) -> Result<(), CommandError> {
    let refuse = |why: String| {
        Err(CommandError::Usage(format!(
            "{flag} {}: {why}",
            file.display()
        )))
    };
    if std::fs::metadata(file).is_ok_and(|m| m.is_dir()) {
        return refuse("it is a directory; pass a file name".into());
    }
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    crate::receipt::writable_directory(parent).or_else(|e| {
        refuse(format!(
            "its directory {} cannot be used ({e})",
            parent.display()
        ))
    })
}

/// Write the bundle at `dir` to `file` (created new, never replacing anything).
fn write(dir: &Path, file: &Path) -> Result<(), CommandError> {
    let files =
        scopebox_receipts::bundle_file::files_of_dir(dir).map_err(|e| ReceiptError::Read {
            path: dir.to_path_buf(),
            source: std::io::Error::other(e.kind.to_string()),
        })?;
    let write_err = |source| ReceiptError::Write {
        path: file.to_path_buf(),
        source,
    };
    let out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(file)
        .map_err(write_err)?;
    let out = scopebox_receipts::bundle_file::write_archive(&files, std::io::BufWriter::new(out))
        .map_err(write_err)?;
    out.into_inner()
        .map_err(|e| write_err(e.into_error()))?
        .sync_all()
        .map_err(write_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_destination_in_a_missing_directory_or_on_a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("a.tar.gz");
        assert!(check_destination("--archive", &ok).is_ok());
        assert!(check_destination("--junit", Path::new("j.xml")).is_ok());
        let missing = dir.path().join("no/such/dir/j.xml");
        let e = check_destination("--junit", &missing).unwrap_err();
        assert_eq!(e.code(), crate::exit::USAGE);
        assert!(e.to_string().contains("its directory"), "{e}");
        let e = check_destination("--junit", dir.path()).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("it is a directory; pass a file name"),
            "{e}"
        );
    }
}
