//! `scopebox run --archive FILE.tar.gz`: the finished bundle directory written once more as a
//! single deterministic file, in the format `scopebox_receipts::bundle_file` defines (and
//! `scopebox-verify` reads back in memory). The file is created exclusively: an existing one
//! is refused before the run starts, and never overwritten.

use crate::exit::CommandError;
use crate::receipt::ReceiptError;
use std::path::Path;

/// Refuse an archive path that already exists (checked before anything is run).
pub fn check_free(file: &Path) -> Result<(), CommandError> {
    if std::fs::symlink_metadata(file).is_ok() {
        return Err(CommandError::Usage(format!(
            "--archive {} already exists; bundles are never overwritten: pass a new file name",
            file.display()
        )));
    }
    Ok(())
}

/// Write the bundle at `dir` to `file` (created new, never replacing anything).
pub fn write(dir: &Path, file: &Path) -> Result<(), CommandError> {
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
