//! A receipt bundle as one file: a deterministic `.tar.gz` of the bundle directory
//! (`scopebox run --archive FILE`), and reading one back into the same in-memory `Bundle` a
//! directory gives, with the same bounds (file size, total size, entry count, depth) — never
//! extracting anything to disk. Entry order is by path, every header has mtime 0, owner 0:0,
//! mode 0644, and no directory entries; gzip's header carries no name and no time, so the same
//! bundle always gives the same bytes. On reading, anything but a regular file or a directory
//! (symlinks, hard links, devices, FIFOs), an unsafe or non-UTF-8 name and a path given twice
//! are recorded as irregular, so `files.kinds` rejects them as it does on a directory.

use crate::receipt::{ENVELOPE_FILE, PROVENANCE_ENVELOPE_FILE, RECEIPT_FILE};
use crate::verify::bundle::{
    Bundle, BundleError, BundleErrorKind, MAX_DEPTH, MAX_ENTRIES, MAX_FILE_BYTES, MAX_TOTAL_BYTES,
};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;

/// The tar stream may exceed the files' bytes by its headers and padding: at most this many
/// bytes per entry (a 512-byte header, up to 511 bytes of padding, and long-name extensions).
const TAR_OVERHEAD_PER_ENTRY: u64 = 4096;

/// Write the bundle `files` (path → bytes, every file of the bundle) as a deterministic
/// `.tar.gz` to `out`.
pub fn write_archive<W: Write>(files: &BTreeMap<String, Vec<u8>>, out: W) -> std::io::Result<W> {
    let gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(out, flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    for (path, bytes) in files {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        tar.append_data(&mut header, path, bytes.as_slice())?;
    }
    tar.into_inner()?.finish()
}

/// Every regular file below `dir` (as the bounded directory reader sees it), receipt and
/// envelope included, ready for [`write_archive`].
pub fn files_of_dir(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, BundleError> {
    let bundle = Bundle::read(dir)?;
    if let Some((path, kind)) = bundle.irregular.iter().next() {
        return Err(BundleError::new(
            dir,
            BundleErrorKind::Io(std::io::Error::other(format!(
                "{path} is a {kind}; a bundle archive holds regular files only"
            ))),
        ));
    }
    let mut files = bundle.files;
    files.insert(RECEIPT_FILE.to_string(), bundle.receipt_bytes);
    if let Some(envelope) = bundle.envelope_bytes {
        files.insert(ENVELOPE_FILE.to_string(), envelope);
    }
    if let Some(envelope) = bundle.provenance_envelope_bytes {
        files.insert(PROVENANCE_ENVELOPE_FILE.to_string(), envelope);
    }
    Ok(files)
}

/// Read a bundle archive at `path` into memory under the directory reader's bounds.
pub fn read_archive(path: &Path) -> Result<Bundle, BundleError> {
    let err = |kind| BundleError::new(path, kind);
    let file = std::fs::File::open(path).map_err(|e| err(e.into()))?;
    read_archive_from(path, file).map_err(err)
}

/// [`read_archive`] over any reader (`label` names it in the bundle's `root`).
pub fn read_archive_from<R: Read>(label: &Path, reader: R) -> Result<Bundle, BundleErrorKind> {
    let limit = MAX_TOTAL_BYTES + TAR_OVERHEAD_PER_ENTRY * MAX_ENTRIES as u64;
    let mut stream = flate2::read::GzDecoder::new(reader).take(limit + 1);
    let mut archive = tar::Archive::new(&mut stream);
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut irregular: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut total = 0u64;
    let mut count = 0usize;
    for entry in archive.entries()? {
        let mut entry = entry?;
        count += 1;
        if count > MAX_ENTRIES {
            return Err(BundleErrorKind::TooManyEntries);
        }
        let raw = entry.path_bytes().into_owned();
        let Ok(name) = String::from_utf8(raw.clone()) else {
            irregular.insert(String::from_utf8_lossy(&raw).into_owned(), "non-utf8-name");
            continue;
        };
        let name = name.trim_end_matches('/').to_string();
        let safe = !name.is_empty()
            && !name.starts_with('/')
            && name
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..");
        if !safe {
            irregular.insert(name, "unsafe-name");
            continue;
        }
        if name.split('/').count() > MAX_DEPTH + 1 {
            return Err(BundleErrorKind::TooDeep);
        }
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        if !kind.is_file() {
            let what = if kind.is_symlink() {
                "symlink"
            } else if kind.is_hard_link() {
                "hard-link"
            } else if kind.is_fifo() {
                "fifo"
            } else {
                "device"
            };
            irregular.insert(name, what);
            continue;
        }
        if entry.size() > MAX_FILE_BYTES {
            return Err(BundleErrorKind::FileTooLarge);
        }
        let mut bytes = Vec::new();
        (&mut entry)
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(BundleErrorKind::FileTooLarge);
        }
        total += bytes.len() as u64;
        if total > MAX_TOTAL_BYTES {
            return Err(BundleErrorKind::TooLarge);
        }
        if files.contains_key(&name) || irregular.contains_key(&name) {
            // Two entries for one path: which one an extractor keeps is its choice; refuse.
            files.remove(&name);
            irregular.insert(name, "duplicate-entry");
            continue;
        }
        files.insert(name, bytes);
    }
    if stream.limit() == 0 {
        return Err(BundleErrorKind::TooLarge);
    }
    if irregular.contains_key(RECEIPT_FILE) {
        return Err(BundleErrorKind::ReceiptNotAFile);
    }
    let receipt_bytes = files
        .remove(RECEIPT_FILE)
        .ok_or(BundleErrorKind::NoReceipt)?;
    let envelope_bytes = files.remove(ENVELOPE_FILE);
    let provenance_envelope_bytes = files.remove(PROVENANCE_ENVELOPE_FILE);
    Ok(Bundle {
        root: label.to_path_buf(),
        receipt_bytes,
        envelope_bytes,
        provenance_envelope_bytes,
        files,
        irregular,
    })
}

/// A bundle directory, or a bundle archive when `path` is a file.
pub fn read_any(path: &Path) -> Result<Bundle, BundleError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => read_archive(path),
        _ => Bundle::read(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BTreeMap<String, Vec<u8>> {
        let mut files = BTreeMap::new();
        files.insert(RECEIPT_FILE.to_string(), b"{}".to_vec());
        files.insert("inputs/matrix.json".to_string(), b"[1]".to_vec());
        files.insert("platforms/linux-amd64/outer/x".to_string(), vec![7; 1000]);
        files
    }

    #[test]
    fn the_archive_is_deterministic_and_reads_back_to_the_same_files() {
        let a = write_archive(&sample(), Vec::new()).unwrap();
        let b = write_archive(&sample(), Vec::new()).unwrap();
        assert_eq!(a, b);
        let bundle = read_archive_from(Path::new("x.tar.gz"), a.as_slice()).unwrap();
        assert_eq!(bundle.receipt_bytes, b"{}");
        let mut expected = sample();
        expected.remove(RECEIPT_FILE);
        assert_eq!(bundle.files, expected);
        assert!(bundle.irregular.is_empty());
    }

    fn raw_tar(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        for (name, kind, bytes) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(*kind);
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            // Written raw: the tar crate's own path check would refuse some of these names.
            let field = &mut header.as_old_mut().name;
            field[..name.len()].copy_from_slice(name.as_bytes());
            header.set_cksum();
            tar.append(&header, *bytes).unwrap();
        }
        let tar = tar.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn links_odd_names_and_duplicates_are_irregular_never_files() {
        use tar::EntryType::*;
        let gz = raw_tar(&[
            ("receipt.json", Regular, b"{}"),
            ("inputs/link", Symlink, b""),
            ("inputs/hard", Link, b""),
            ("inputs/fifo", Fifo, b""),
            ("../escape", Regular, b"x"),
            ("/abs", Regular, b"x"),
            ("a/./b", Regular, b"x"),
            ("twice", Regular, b"1"),
            ("twice", Regular, b"2"),
        ]);
        let bundle = read_archive_from(Path::new("t"), gz.as_slice()).unwrap();
        assert!(bundle.files.is_empty(), "{:?}", bundle.files.keys());
        let kinds: Vec<(&str, &str)> = bundle
            .irregular
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(
            kinds,
            [
                ("../escape", "unsafe-name"),
                ("/abs", "unsafe-name"),
                ("a/./b", "unsafe-name"),
                ("inputs/fifo", "fifo"),
                ("inputs/hard", "hard-link"),
                ("inputs/link", "symlink"),
                ("twice", "duplicate-entry"),
            ]
        );
    }

    #[test]
    fn an_archive_without_a_receipt_or_with_a_huge_member_is_refused() {
        let gz = raw_tar(&[("inputs/matrix.json", tar::EntryType::Regular, b"{}")]);
        assert!(matches!(
            read_archive_from(Path::new("t"), gz.as_slice()),
            Err(BundleErrorKind::NoReceipt)
        ));
        // A header claiming more than the per-file bound is refused before any byte is read.
        let mut header = tar::Header::new_gnu();
        header.set_path("big").unwrap();
        header.set_size(MAX_FILE_BYTES + 1);
        header.set_cksum();
        let mut tar = header.as_bytes().to_vec();
        tar.extend_from_slice(&[0; 1024]);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        let gz = gz.finish().unwrap();
        assert!(matches!(
            read_archive_from(Path::new("t"), gz.as_slice()),
            Err(BundleErrorKind::FileTooLarge)
        ));
        // Not gzip at all.
        assert!(read_archive_from(Path::new("t"), &b"not an archive"[..]).is_err());
    }
}
