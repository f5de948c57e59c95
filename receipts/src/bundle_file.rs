//! A receipt bundle as one file: a deterministic `.tar.gz` of the bundle directory
//! (`scopebox run --archive FILE`), and reading one back into the same in-memory `Bundle` a
//! directory gives, with the same bounds (file size, total size, entry count, depth) — never
//! extracting anything to disk. Entry order is by path, every header has mtime 0, owner 0:0,
//! mode 0644, and no directory entries; gzip's header carries no name and no time, so the same
//! bundle always gives the same bytes. On reading, anything but a regular file or a directory
//! (symlinks, hard links, devices, FIFOs), an unsafe or non-UTF-8 name and a path given twice
//! are recorded as irregular, so `files.kinds` rejects them as it does on a directory. The
//! framing is strict: one gzip member and nothing after it, one tar stream ending with its
//! end-of-archive marker and nothing after that but a record's zero padding — so no extractor
//! sees an entry the reader did not.

use crate::receipt::{ENVELOPE_FILE, PROVENANCE_ENVELOPE_FILE, RECEIPT_FILE};
use crate::verify::bundle::{
    Bundle, BundleError, BundleErrorKind, MAX_DEPTH, MAX_ENTRIES, MAX_FILE_BYTES, MAX_TOTAL_BYTES,
};
use std::collections::BTreeMap;
use std::io::{BufRead, Read, Take, Write};
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
///
/// The archive must be exactly what [`write_archive`] writes, as far as its framing goes: one
/// gzip member (its CRC and length checked) and nothing after it; inside, one tar stream whose
/// last entry is followed by the end-of-archive marker (two zero blocks) and at most one
/// record of zero padding (tar's default record, [`TAR_RECORD`]), in whole blocks. Anything
/// else — a second gzip member, bytes after the gzip stream, a tar stream cut before its
/// marker, an entry or any other byte after the marker — is refused as malformed: an extractor
/// (`tar xzf` reads every member) could see files the verifier did not.
pub fn read_archive_from<R: Read>(label: &Path, reader: R) -> Result<Bundle, BundleErrorKind> {
    let limit = MAX_TOTAL_BYTES + TAR_OVERHEAD_PER_ENTRY * MAX_ENTRIES as u64;
    let mut gz = flate2::bufread::GzDecoder::new(std::io::BufReader::new(reader));
    let (found, padding, length) = {
        let mut stream = Counted {
            inner: (&mut gz).take(limit + 1),
            count: 0,
        };
        let found = read_entries(&mut stream);
        // Past the bound the stream was cut: whatever the tar reader made of the cut, the
        // archive is too large.
        if stream.inner.limit() == 0 {
            return Err(BundleErrorKind::TooLarge);
        }
        let found = found?;
        let padding = padding(&mut stream)?;
        (found, padding, stream.count)
    };
    // The gzip member ended (its trailer checked): nothing may follow it.
    let mut rest = gz.into_inner();
    if !rest.fill_buf()?.is_empty() {
        return Err(BundleErrorKind::Archive(
            "bytes follow the gzip stream (another gzip member or trailing data); a bundle \
             archive is one gzip member and nothing after it"
                .to_string(),
        ));
    }
    end_marker(padding, length)?;
    let Found {
        mut files,
        irregular,
        receipt_is_dir,
    } = found;
    match irregular.get(RECEIPT_FILE) {
        Some(&"duplicate-entry") => return Err(BundleErrorKind::ReceiptTwice),
        Some(kind) => return Err(BundleErrorKind::ReceiptNotAFile(kind)),
        None => {}
    }
    let Some(receipt_bytes) = files.remove(RECEIPT_FILE) else {
        return Err(if receipt_is_dir {
            BundleErrorKind::ReceiptIsADirectory
        } else {
            BundleErrorKind::NoReceipt
        });
    };
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

/// A tar block; headers, data and the end-of-archive marker come in whole blocks.
const TAR_BLOCK: u64 = 512;
/// Tar's default record (20 blocks): an archiver may pad the stream after its end-of-archive
/// marker up to the end of one ([`write_archive`] pads none).
pub const TAR_RECORD: u64 = 20 * TAR_BLOCK;

/// The entries of an archive, as read.
#[derive(Default)]
struct Found {
    files: BTreeMap<String, Vec<u8>>,
    irregular: BTreeMap<String, &'static str>,
    /// An entry names `receipt.json` as a directory (or something below it).
    receipt_is_dir: bool,
}

/// A reader that counts the bytes it gave.
struct Counted<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// Every entry of the tar stream, under the directory reader's bounds; the tar reader stops at
/// the first zero block (which it consumes) or at the end of the stream.
fn read_entries<R: Read>(stream: &mut Counted<R>) -> Result<Found, BundleErrorKind> {
    let mut archive = tar::Archive::new(stream);
    let mut found = Found::default();
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
            let name = String::from_utf8_lossy(&raw).into_owned();
            found.irregular.insert(name, "non-utf8-name");
            continue;
        };
        let name = name.trim_end_matches('/').to_string();
        let safe = !name.is_empty()
            && !name.starts_with('/')
            && name
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..");
        if !safe {
            found.irregular.insert(name, "unsafe-name");
            continue;
        }
        if name.split('/').count() > MAX_DEPTH + 1 {
            return Err(BundleErrorKind::TooDeep);
        }
        let kind = entry.header().entry_type();
        if (name == RECEIPT_FILE && kind.is_dir()) || name.starts_with("receipt.json/") {
            found.receipt_is_dir = true;
        }
        if kind.is_dir() {
            continue;
        }
        if found.files.contains_key(&name) || found.irregular.contains_key(&name) {
            // Two entries for one path: which one an extractor keeps is its choice; refuse.
            found.files.remove(&name);
            found.irregular.insert(name, "duplicate-entry");
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
            found.irregular.insert(name, what);
            continue;
        }
        let too_large = |name: String| BundleErrorKind::FileTooLarge {
            path: name,
            limit: MAX_FILE_BYTES,
        };
        let size = entry.size();
        if size > MAX_FILE_BYTES {
            return Err(too_large(name));
        }
        let mut bytes = Vec::new();
        (&mut entry)
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)?;
        if bytes.len() as u64 != size {
            return Err(BundleErrorKind::Archive(format!(
                "the tar stream ends inside {name} ({} of its {size} bytes)",
                bytes.len()
            )));
        }
        total += size;
        if total > MAX_TOTAL_BYTES {
            return Err(BundleErrorKind::TooLarge);
        }
        found.files.insert(name, bytes);
    }
    Ok(found)
}

/// What follows the entries, to the end of the gzip member (whose trailer the decoder checks
/// there): only zeros, at most the marker's second block and a record of padding. The number
/// of zero bytes read; the tar reader has consumed the first zero block, if any.
fn padding<R: Read>(stream: &mut Counted<Take<R>>) -> Result<u64, BundleErrorKind> {
    let mut rest = 0u64;
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        if buf[..n].iter().any(|&b| b != 0) {
            return Err(BundleErrorKind::Archive(
                "data follows the tar end-of-archive marker (another archive or a hidden \
                 entry); nothing but zero padding may follow it"
                    .to_string(),
            ));
        }
        rest += n as u64;
        if TAR_BLOCK + rest > 2 * TAR_BLOCK + TAR_RECORD {
            return Err(BundleErrorKind::Archive(format!(
                "more than {TAR_RECORD} bytes of zeros pad the tar stream after its \
                 end-of-archive marker"
            )));
        }
    }
    if stream.inner.limit() == 0 {
        return Err(BundleErrorKind::TooLarge);
    }
    Ok(rest)
}

/// The tar reader stopped at a zero block (consumed) or at the end of the stream (then
/// nothing followed): with `padding` zero bytes after where it stopped and `length` bytes in
/// all, the stream ends with the end-of-archive marker (two zero blocks) in whole blocks.
fn end_marker(padding: u64, length: u64) -> Result<(), BundleErrorKind> {
    if padding < TAR_BLOCK {
        return Err(BundleErrorKind::Archive(
            "the tar stream does not end with its end-of-archive marker (two zero blocks): \
             it was cut short"
                .to_string(),
        ));
    }
    if !length.is_multiple_of(TAR_BLOCK) {
        return Err(BundleErrorKind::Archive(format!(
            "the tar stream is {length} bytes long, not a whole number of {TAR_BLOCK}-byte blocks"
        )));
    }
    Ok(())
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
        gzip(&plain_tar(entries))
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    /// The tar stream of `entries`, with its end-of-archive marker (two zero blocks).
    fn plain_tar(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
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
        tar.into_inner().unwrap()
    }

    fn malformed(gz: &[u8]) -> String {
        match read_archive_from(Path::new("t"), gz) {
            Err(BundleErrorKind::Archive(what)) => what,
            other => panic!("not refused as malformed: {other:?}"),
        }
    }

    #[test]
    fn a_second_gzip_member_or_any_byte_after_the_gzip_stream_is_refused() {
        let good = write_archive(&sample(), Vec::new()).unwrap();
        // What `tar xzf` would extract over the first member's file.
        let replacement = raw_tar(&[("inputs/matrix.json", tar::EntryType::Regular, b"[2]")]);
        for tail in [replacement.as_slice(), b"garbage", b"\0"] {
            let mut archive = good.clone();
            archive.extend_from_slice(tail);
            assert!(
                malformed(&archive).starts_with("bytes follow the gzip stream"),
                "{tail:?}"
            );
        }
    }

    #[test]
    fn a_tar_stream_cut_before_its_marker_or_continued_after_it_is_refused() {
        let entry: &[(&str, tar::EntryType, &[u8])] =
            &[("receipt.json", tar::EntryType::Regular, b"{}")];
        let with_marker = plain_tar(entry);
        let body = &with_marker[..with_marker.len() - 1024];
        let tar_with = |tail: &[u8]| gzip(&[body, tail].concat());
        // The writer's form, and tar's own record padding after the marker, are accepted.
        for zeros in [1024, 10240] {
            let bundle = read_archive_from(Path::new("t"), tar_with(&vec![0; zeros]).as_slice());
            assert_eq!(bundle.unwrap().receipt_bytes, b"{}", "{zeros}");
        }
        // No marker, or half of one.
        for zeros in [0, 512] {
            assert!(
                malformed(&tar_with(&vec![0; zeros]))
                    .starts_with("the tar stream does not end with its end-of-archive marker"),
                "{zeros}"
            );
        }
        // Another entry after the marker (a second archive), or after one zero block.
        let second = plain_tar(&[("inputs/matrix.json", tar::EntryType::Regular, b"[2]")]);
        for zeros in [1024, 512] {
            let tail = [vec![0; zeros], second.clone()].concat();
            assert!(
                malformed(&tar_with(&tail)).starts_with("data follows the tar end-of-archive"),
                "{zeros}"
            );
        }
        // Zeros, but more than a record of them, or not in whole blocks.
        assert!(malformed(&tar_with(&vec![0; 1024 + 10240 + 512])).starts_with("more than 10240"));
        assert!(malformed(&tar_with(&vec![0; 1024 + 100])).contains("not a whole number of 512"));
        // An entry cut short inside its data.
        let cut = gzip(&with_marker[..512 + 1]);
        assert_eq!(
            malformed(&cut),
            "the tar stream ends inside receipt.json (1 of its 2 bytes)"
        );
    }

    #[test]
    fn a_gzip_member_whose_checksum_does_not_match_is_refused() {
        let mut archive = write_archive(&sample(), Vec::new()).unwrap();
        let crc = archive.len() - 8;
        archive[crc] ^= 1;
        let error = read_archive_from(Path::new("t"), archive.as_slice()).unwrap_err();
        assert!(matches!(error, BundleErrorKind::Io(_)), "{error}");
    }

    #[test]
    fn a_receipt_given_twice_as_a_directory_or_as_a_link_is_named_as_such() {
        use tar::EntryType::*;
        let twice = raw_tar(&[
            ("receipt.json", Regular, b"{}"),
            ("receipt.json", Regular, b"{}"),
        ]);
        let error = read_archive_from(Path::new("t"), twice.as_slice()).unwrap_err();
        assert!(matches!(error, BundleErrorKind::ReceiptTwice), "{error}");
        assert!(error
            .to_string()
            .starts_with("receipt.json appears twice in the archive"));
        for dir in [
            raw_tar(&[("receipt.json/", Directory, b"")]),
            raw_tar(&[("receipt.json/x", Regular, b"{}")]),
        ] {
            let error = read_archive_from(Path::new("t"), dir.as_slice()).unwrap_err();
            assert!(
                matches!(error, BundleErrorKind::ReceiptIsADirectory),
                "{error}"
            );
        }
        let link = raw_tar(&[("receipt.json", Symlink, b"")]);
        let error = read_archive_from(Path::new("t"), link.as_slice()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "receipt.json is a symlink, not a regular file"
        );
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
        let error = read_archive_from(Path::new("t"), gz.as_slice()).unwrap_err();
        assert_eq!(error.to_string(), "big is larger than 67108864 bytes");
        // Not gzip at all.
        assert!(read_archive_from(Path::new("t"), &b"not an archive"[..]).is_err());
    }
}
